"""Sandbox for untrusted Python: submitted laws and model-written analysis code.

Each call starts a fresh ``python -I`` process in a temporary working directory with an empty
environment (plus a fixed minimal set). The kernel is the boundary (``_isolate.py``): an unprivileged
identity (or a user namespace), private mount/network/IPC namespaces, a size-limited tmpfs as the
working directory, a Landlock domain (read the Python installation and the allowed packages, write
only the working directory, no TCP, no signals out), ``PR_SET_NO_NEW_PRIVS`` and a seccomp filter.
An audit hook is a second layer. Which layers were active is recorded with every call; see
``docs/sandbox.md``. Results travel over a dedicated pipe framed with a per-run random token.
"""

from etc_fast.sandbox._code import CODE_IMPORTS, CodeRun, run_code
from etc_fast.sandbox._isolate import LAYERS
from etc_fast.sandbox._law import LAW_IMPORTS, LawCall, call_law, check_signature, prepare_source
from etc_fast.sandbox._limits import SandboxLimits
from etc_fast.sandbox._probe import IsolationError, probe_layers, require_isolation

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
    "IsolationError",
    "probe_layers",
    "require_isolation",
]
