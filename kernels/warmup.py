"""Compile, in a background process, the kernel specializations a run is going to need.

On a cold cache a run's trials compile each kernel when they first call it, and with the compile
lock (:mod:`kernels._once`) one process compiles while the others that need the same kernel wait,
leaving their cores idle. :func:`start` fills those cores: when some kernel of the list
:data:`kernels._specializations.SPECIALIZATIONS` has nothing in the cache, it starts
``python -m kernels.warmup`` at a lower priority (``nice`` +10, so it takes only the CPU the run
leaves), which goes through the list from its end, the kernels a study needs last, towards the
ones its first trials compile themselves. Each specialization is compiled only when no other
process holds its lock (:func:`kernels._once.compile_if_free`); one that a trial is compiling is
left to the trial. Everything it compiles lands in the shared on-disk cache, where the trials load
it. A list entry that no longer matches a kernel (renamed, retyped) is skipped.

The list is the order in which a study's trials first compiled each kernel specialization; it is
written by ``python -m bench.first_run CONFIG --specializations kernels/_specializations.py``.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import re
import signal
import subprocess
import sys
from collections.abc import Iterable, Sequence
from typing import Any

__all__ = ["parse_signature", "resolve", "missing", "warm", "start", "main"]

_LITERAL = re.compile(r"Literal\[\w+\]\(")


def parse_signature(text: str) -> tuple[Any, ...]:
    """The Numba argument types a signature string names, as ``repr`` writes a tuple of them, e.g.
    ``"(Array(float64, 1, 'C', False, aligned=True), int64)"``.

    Raises:
        ValueError: The text names something other than Numba types.
    """
    from numba.core import types

    names: dict[str, Any] = {k: v for k, v in vars(types).items() if not k.startswith("_")}
    names.update(bool=types.boolean, literal=types.literal)
    try:
        value = eval(_LITERAL.sub("literal(", text), {"__builtins__": {}}, names)  # noqa: S307 - Numba type names only
    except Exception as exc:  # noqa: BLE001 - any failure means the text is not a signature
        raise ValueError(f"not a Numba signature: {text!r} ({type(exc).__name__}: {exc})") from None
    if not isinstance(value, tuple) or not all(isinstance(t, types.Type) for t in value):
        raise ValueError(f"not a tuple of Numba types: {text!r}")
    return value


def resolve(function: str) -> Any:
    """The dispatcher named ``kernels.<module>.<name>``, or None when there is none."""
    module, _, name = function.rpartition(".")
    if not module.startswith("kernels."):
        return None
    try:
        value = getattr(importlib.import_module(module), name)
    except (ImportError, AttributeError):
        return None
    return value if hasattr(value, "py_func") and hasattr(value, "compile") else None


def _entries() -> Sequence[tuple[str, str]]:
    from kernels._specializations import SPECIALIZATIONS

    return SPECIALIZATIONS


def missing(entries: Iterable[tuple[str, str]] | None = None) -> list[str]:
    """The functions of ``entries`` (default: the shipped list) with no cache index on disk: those
    a run would compile (a stat per function; no kernel is loaded)."""
    out = []
    for function in dict.fromkeys(f for f, _ in (_entries() if entries is None else entries)):
        disp = resolve(function)
        index = getattr(getattr(getattr(disp, "_cache", None), "_cache_file", None), "_index_path", None)
        if isinstance(index, str) and not os.path.exists(index):
            out.append(function)
    return out


_STOP = False


def warm(entries: Sequence[tuple[str, str]], stop: Any = None) -> dict[str, int]:
    """Compile (or load) each entry from the last to the first, skipping one whose lock another
    process holds; ``stop()`` true ends the loop early. Returns the counts ``done``, ``busy``
    (left to another process) and ``skipped`` (no such kernel or signature)."""
    from kernels._once import compile_if_free

    counts = {"done": 0, "busy": 0, "skipped": 0}
    for function, text in reversed(entries):
        if stop is not None and stop():
            break
        disp = resolve(function)
        try:
            args = parse_signature(text)
        except ValueError:
            disp = None
        if disp is None:
            counts["skipped"] += 1
            continue
        try:
            counts["done" if compile_if_free(disp, args) else "busy"] += 1
        except Exception:  # noqa: BLE001 - a stale entry that no longer types: the trials compile what they need
            counts["skipped"] += 1
    return counts


def start() -> subprocess.Popen[bytes] | None:
    """Start the background warm-up when some listed kernel is missing from the cache; the process,
    or None when there is nothing to compile (or it cannot be started). Stop it with
    ``terminate()``: it finishes the specialization in hand and exits."""
    try:
        if not missing():
            return None
        root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join([root] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
        return subprocess.Popen(
            [sys.executable, "-m", "kernels.warmup"], env=env, stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True,
        )
    except Exception:  # noqa: BLE001 - the warm-up only saves time; the run compiles what it needs anyway
        return None


def _die_with_parent() -> None:
    """Ask the kernel for SIGTERM when the process that started this one dies (Linux)."""
    if sys.platform.startswith("linux"):
        with contextlib.suppress(Exception):
            import ctypes

            ctypes.CDLL(None).prctl(1, int(signal.SIGTERM), 0, 0, 0)  # PR_SET_PDEATHSIG


def main() -> int:
    """The warm-up process: low priority, stops at SIGTERM between specializations."""

    def _stop(signum: int, frame: Any) -> None:
        global _STOP
        _STOP = True

    signal.signal(signal.SIGTERM, _stop)
    _die_with_parent()
    with contextlib.suppress(OSError):
        os.nice(10)
    import kernels  # noqa: F401 - guards every kernel with its compile lock

    warm(_entries(), stop=lambda: _STOP)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
