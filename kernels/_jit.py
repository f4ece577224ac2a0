"""JIT options, held in one place for every kernel.

``FASTMATH`` leaves out ``nnan`` and ``ninf``: kernels branch on finiteness, and those flags would let
LLVM assume NaN/inf never occur.
"""

from typing import Literal, TypedDict


class JitOptions(TypedDict, total=False):
    """The keyword options the kernels pass to ``numba.njit`` (typed so ``@njit(**JIT)`` type-checks)."""

    cache: bool
    nogil: bool
    parallel: bool
    fastmath: set[str]
    error_model: Literal["python", "numpy"]
    inline: Literal["never", "always"]


FASTMATH = {"nsz", "arcp", "contract", "afn", "reassoc"}
JIT: JitOptions = {"cache": True, "nogil": True, "fastmath": FASTMATH}


def _drop_stale_cache() -> None:
    """Drop Numba's on-disk cache when any kernel source changed.

    Numba validates a cached kernel against the source file that defines it only, so an edit to a
    helper module inlined into it (``_vecmath``, ``_mathlib``) would leave stale machine code. A
    stamp of every ``kernels/*.py`` file's content guards the whole package instead.
    """
    import hashlib
    import pathlib

    here = pathlib.Path(__file__).resolve().parent
    digest = hashlib.sha256()
    for path in sorted(here.glob("*.py")):
        digest.update(path.name.encode())
        digest.update(path.read_bytes())
    cache = here / "__pycache__"
    stamp = cache / "kernels-sources.sha256"
    try:
        if stamp.is_file() and stamp.read_text() == digest.hexdigest():
            return
        cache.mkdir(exist_ok=True)
        for stale in list(cache.glob("*.nbi")) + list(cache.glob("*.nbc")):
            stale.unlink(missing_ok=True)
        stamp.write_text(digest.hexdigest())
    except OSError:  # read-only install: Numba then falls back to its own cache checks
        pass


_drop_stale_cache()
