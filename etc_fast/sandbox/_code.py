"""``run_code``: the analysis interpreter, with observations preloaded, in the sandbox."""

from __future__ import annotations

import dataclasses
import keyword
from collections.abc import Mapping

from etc_fast.sandbox._imports import CODE_IMPORTS, CODE_READ
from etc_fast.sandbox._limits import SandboxLimits
from etc_fast.sandbox._supervisor import ERROR_CHARS, clean_text, encode_data, run_job
from etc_fast.sandbox._zygote import names_scipy

__all__ = ["CODE_IMPORTS", "PRELOAD", "CodeRun", "run_code"]

#: Modules imported before the code runs (and before the sandbox closes) when the code's text names
#: SciPy, so the code finds them loaded. The zygote has them imported already (``_zygote.PRELOAD``),
#: so this costs nothing there; it keeps a SciPy module the zygote could not import loaded before
#: the sandbox closes.
PRELOAD: tuple[str, ...] = (
    "scipy", "scipy.optimize", "scipy.stats", "scipy.special", "scipy.integrate", "scipy.linalg",
    "scipy.interpolate",
)


@dataclasses.dataclass(frozen=True)
class CodeRun:
    """Outcome of one interpreter call.

    Attributes:
        ok: The code ran to the end.
        error: Exception type and message, or the limit that stopped it, else ``None``.
        stdout: Captured stdout (at most ``output_bytes`` bytes); stderr follows it when the run failed.
        truncated: Output was cut at the cap.
        wall_s: Seconds the sandboxed run took.
        layers: Isolation layers that were active (see :data:`etc_fast.sandbox.LAYERS`).
    """

    ok: bool
    error: str | None
    stdout: str
    truncated: bool
    wall_s: float = 0.0
    layers: dict = dataclasses.field(default_factory=dict)


def run_code(code: str, data: Mapping[str, object] | None = None, *, limits: SandboxLimits | None = None,
             reuse: bool = False) -> CodeRun:
    """Execute model-written Python in the sandbox with ``data`` preloaded as variables.

    ``np``/``numpy`` and ``math`` are predefined; imports are limited to :data:`CODE_IMPORTS`
    (when the code names SciPy, ``scipy.optimize``, ``scipy.stats`` and a few other SciPy modules are loaded
    before the code runs).

    Args:
        code: Python source.
        data: Variable name -> numbers, strings, (nested) lists/dicts or numeric NumPy arrays.
        limits: Sandbox limits (defaults to :class:`SandboxLimits()`).
        reuse: The same code on the same data and limits that already ran to the end in this
            process returns that run again without running (``run_job``'s ``reuse``).

    Raises:
        TypeError / ValueError: when ``code`` or ``data`` themselves are malformed.
    """
    if not isinstance(code, str):
        raise TypeError(f"run_code: code must be a string, got {type(code).__name__}")
    data = dict(data or {})
    for name in data:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"run_code: data key {name!r} is not a valid Python variable name")
    limits = limits or SandboxLimits()
    job = {
        "kind": "code",
        "code": code,
        "data": encode_data(data),
        "allowed_imports": list(CODE_IMPORTS),
        "preload": list(PRELOAD) if names_scipy(code) else [],
        "read_packages": list(CODE_READ),
    }
    run = run_job(job, limits, reuse=reuse)
    if run.ok and run.reply.get("ok"):
        return CodeRun(True, None, run.stdout, run.truncated, run.wall_s, run.layers)
    error = run.error if not run.ok else str(run.reply.get("error") or "failed without a reason")
    out = run.stdout + (("\n" + run.stderr) if run.stderr else "")
    return CodeRun(False, clean_text(error, ERROR_CHARS), out, run.truncated, run.wall_s, run.layers)
