"""Sandbox for untrusted Python: submitted laws and model-written analysis code.

Each call starts a fresh ``python -I`` process in a temporary working directory with a clean
environment, wall-clock, CPU, memory and output limits, no child processes, no network, no signals to
other processes and no file access outside the working directory (reads of the Python installation
excepted). Results travel over a dedicated pipe framed with a per-run random token; see
``etc_fast/sandbox/_runner.py`` for exactly what is refused.
"""

from etc_fast.sandbox._code import CODE_IMPORTS, CodeRun, run_code
from etc_fast.sandbox._isolate import LAYERS
from etc_fast.sandbox._law import LAW_IMPORTS, LawCall, call_law, check_signature, prepare_source
from etc_fast.sandbox._limits import SandboxLimits

__all__ = [
    "SandboxLimits",
    "LawCall",
    "CodeRun",
    "call_law",
    "run_code",
    "check_signature",
    "prepare_source",
    "LAW_IMPORTS",
    "CODE_IMPORTS",
    "LAYERS",
]
