"""Sandbox for untrusted Python: submitted laws and model-written analysis code.

Each call runs in a fresh fork of this process's zygote (a ``python -I`` process exec'd once with an
empty environment plus a fixed minimal set, NumPy/SciPy imported), in a temporary working
directory. The kernel is the boundary (``_isolate.py``), set up in the fork: an unprivileged
identity (or a user namespace), private mount/network/IPC namespaces, a size-limited tmpfs as the
working directory, a Landlock domain (read the Python installation and the allowed packages, write
only the working directory, no TCP, no signals out), ``PR_SET_NO_NEW_PRIVS`` and a seccomp filter.
An audit hook is a second layer. Which layers were active is recorded with every call; see
``docs/guide/sandbox.md``. Replies travel over a pipe of their own; exit statuses come from the zygote.
"""

from etc_fast.sandbox._code import CODE_IMPORTS, CodeRun, run_code
from etc_fast.sandbox._isolate import LAYERS
from etc_fast.sandbox._law import LAW_IMPORTS, LawCall, call_law, check_signature, prepare_source, signature_pattern
from etc_fast.sandbox._limits import SandboxLimits
from etc_fast.sandbox._probe import IsolationError, probe_layers, require_isolation
from etc_fast.sandbox._supervisor import clean_text
from etc_fast.sandbox._zygote import LEAN_PRELOAD, popen_child, reap_child, zygote, zygote_versions

__all__ = [
    "popen_child",
    "reap_child",
    "clean_text",
    "signature_pattern",
    "zygote",
    "LEAN_PRELOAD",
    "zygote_versions",
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
