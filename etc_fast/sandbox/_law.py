"""``call_law``: evaluate a submitted ``discovered_law`` pointwise, NewtonBench style, in the sandbox."""

from __future__ import annotations

import base64
import dataclasses
import re
from collections.abc import Sequence

import numpy as np

from etc_fast.sandbox._imports import LAW_IMPORTS
from etc_fast.sandbox._limits import SandboxLimits
from etc_fast.sandbox._supervisor import ERROR_CHARS, clean_text, encode_data, run_job

__all__ = ["LAW_IMPORTS", "LawCall", "call_law", "check_signature", "prepare_source", "signature_pattern"]

_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
_MATH_USE = ("math.pow", "math.exp", "math.sqrt", "math.log", "math.sin", "math.cos", "math.tan")


@dataclasses.dataclass(frozen=True)
class LawCall:
    """Outcome of calling a submission on every row of an input array.

    Attributes:
        ok: Every call returned a real number.
        error: Why not (signature, exception with point index, non-numeric value, limit), else ``None``.
        values: float64[n] predictions when ``ok``, else ``None``.
        stdout: What the submission printed (capped).
        wall_s: Seconds the sandboxed run took.
        layers: Isolation layers that were active (see :data:`etc_fast.sandbox.LAYERS`).
    """

    ok: bool
    error: str | None
    values: np.ndarray | None
    stdout: str = ""
    wall_s: float = 0.0
    layers: dict = dataclasses.field(default_factory=dict)


def signature_pattern(arg_names: Sequence[str]) -> re.Pattern:
    """Regex for the exact ``def discovered_law(<args>):`` line (whitespace after commas and inside the parentheses)."""
    args = r"\s*,\s*".join(re.escape(a) for a in arg_names)
    return re.compile(r"def discovered_law\(\s*" + args + r"\s*\):")


def check_signature(source: str, arg_names: Sequence[str]) -> str | None:
    """NewtonBench's pre-check: the exact signature and a ``return`` must appear; returns the error or ``None``."""
    if not signature_pattern(arg_names).search(source) or not re.search(r"\breturn\b[ \t(]*[^\s#]", source):
        return (
            "Invalid function signature: expected a function defined exactly as "
            f"'def discovered_law({', '.join(arg_names)}):' with a return statement"
        )
    return None


def prepare_source(source: str, arg_names: Sequence[str]) -> str:
    """Insert ``import math`` / ``import numpy as np`` before the ``def`` line as NewtonBench does."""
    lines = []
    if any(s in source for s in _MATH_USE):
        lines.append("import math")
    if "np." in source or "numpy." in source:
        lines.append("import numpy as np")
    if not lines:
        return source
    m = signature_pattern(arg_names).search(source)
    assert m is not None
    line_start = source.rfind("\n", 0, m.start()) + 1
    return source[:line_start] + "\n".join(lines) + "\n" + source[line_start:]


def call_law(source: str, X, *, arg_names: Sequence[str], limits: SandboxLimits | None = None,
             reuse: bool = False) -> LawCall:
    """Run ``discovered_law`` from ``source`` on every row of ``X`` inside the sandbox.

    The source passes NewtonBench's signature pre-check, gets its ``import`` lines, and is exec'd with
    ``math`` and ``np`` in its globals and a fresh locals dict (so top-level helpers are not visible
    inside the function, exactly as in NewtonBench). Imports inside the submission are limited to
    :data:`LAW_IMPORTS`. Each row is passed as NumPy float64 scalars in signature order; each return
    value must convert with ``float()`` (strings, complex numbers and arrays of size != 1 are refused).

    Args:
        source: The submitted code.
        X: float64[n, d] inputs, columns in signature order.
        arg_names: The task's variable names (signature order).
        limits: Sandbox limits (defaults to :class:`SandboxLimits()`).
        reuse: A call of the same source on the same inputs and limits that already returned
            values in this process returns them again without running (``run_job``'s ``reuse``).

    Returns:
        :class:`LawCall`; never raises because of the submission.

    Raises:
        TypeError / ValueError: when ``source``, ``X`` or ``arg_names`` themselves are malformed.
    """
    if not isinstance(source, str):
        raise TypeError(f"call_law: source must be a string, got {type(source).__name__}")
    names = list(arg_names)
    if not names or not all(isinstance(a, str) and _IDENT.match(a) for a in names):
        raise ValueError(f"call_law: arg_names must be non-empty identifiers, got {names!r}")
    Xa = np.ascontiguousarray(np.asarray(X, dtype=np.float64))
    if Xa.ndim != 2 or Xa.shape[1] != len(names):
        raise ValueError(f"call_law: X must have shape (n, {len(names)}) for {', '.join(names)}, got {Xa.shape}")
    limits = limits or SandboxLimits()
    err = check_signature(source, names)
    if err:
        return LawCall(False, err, None)
    job = {
        "kind": "law",
        "source": prepare_source(source, names),
        "arg_names": names,
        "X": encode_data(Xa),
        "allowed_imports": list(LAW_IMPORTS),
        "read_packages": list(LAW_IMPORTS),
    }
    run = run_job(job, limits, reuse=reuse)

    def failed(error: str) -> LawCall:
        return LawCall(False, clean_text(error, ERROR_CHARS), None, run.stdout, run.wall_s, run.layers)

    if not run.ok:
        return failed(run.error)
    reply = run.reply
    if not reply.get("ok"):
        return failed(str(reply.get("error") or "failed without a reason"))
    try:
        values = np.frombuffer(base64.b64decode(reply["values"], validate=True), dtype=np.float64).copy()
    except (KeyError, TypeError, ValueError):
        return failed("the sandbox returned malformed values")
    if values.shape != (Xa.shape[0],):
        return failed(f"the sandbox returned {values.size} values for {Xa.shape[0]} points")
    return LawCall(True, None, values, run.stdout, run.wall_s, run.layers)
