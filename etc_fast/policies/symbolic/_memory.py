"""A memory bound for the symbolic search: past it the trial fails, the worker and the machine live.

While a search runs, the process's address-space limit (``RLIMIT_AS``, soft) is lowered to what
the process holds when the search starts plus the bound: the bound is what a search may add, so
address space reserved before it (an interpreter with Ray, many threads' stacks and arenas) never
counts against it; an allocation past it fails at once with ``MemoryError`` (NumPy and the compiled kernels
alike), which :func:`memory_bound` turns into :class:`SearchMemoryLimit`, an infrastructure
failure of kind ``memory_limit``: the protocol stops the trial and the runner stores it as failed,
to be run again by the next run of the same command. The previous limit is restored afterwards,
and a lower limit already in force is never raised. Where the platform has no ``resource`` module
the bound is not applied (a ``MemoryError`` is still reported with this kind). OpenBLAS, which
ends the process when it cannot allocate its work buffers, is made to allocate them first.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from typing import Any

from etc_fast.errors import InfrastructureError

__all__ = ["SearchMemoryLimit", "memory_bound"]

#: Smallest bound (MiB) a search runs under; a smaller one fails at once with kind ``memory_limit``.
#: LLVM compiling a kernel inside the search (a cold cache) ends the process, rather than raising,
#: when it cannot allocate, so a bound too small for a compilation is refused before anything runs.
HEADROOM_MB = 256

_LOCK = threading.Lock()


class _State:
    """The process's bound in force: how many searches hold it (``depth``), the limits to restore
    when the last one ends (``saved``), and whether OpenBLAS has allocated its buffers (``blas_warm``)."""

    depth = 0
    saved: tuple[int, int] | None = None
    blas_warm = False


class SearchMemoryLimit(InfrastructureError):
    """A search needed more memory than its bound: the trial fails (error kind ``memory_limit``)."""

    def __init__(self, limit_mb: int, detail: str) -> None:
        super().__init__(f"the symbolic search needed more memory than its bound of {limit_mb} MiB ({detail}); "
                         "raise symbolic.memory_limit_mb or give the worker more memory", kind="memory_limit")


def _warm_blas() -> None:
    """Have OpenBLAS allocate its work buffers (once per process) before the bound is lowered: an
    allocation failure inside OpenBLAS ends the process instead of raising ``MemoryError``."""
    if not _State.blas_warm:
        import numpy as np

        a = np.ones((512, 512))
        np.linalg.lstsq(a @ a + np.eye(512), a[:, 0], rcond=None)
        _State.blas_warm = True


def _address_space_mb() -> int | None:
    """This process's address space in MiB (``VmSize``), or ``None`` where it cannot be read."""
    try:
        with open("/proc/self/status") as fh:
            for line in fh:
                if line.startswith("VmSize:"):
                    return int(line.split()[1]) // 1024
    except OSError:
        return None
    return None


@contextlib.contextmanager
def memory_bound(limit_mb: int | None) -> Iterator[None]:
    """Run the body with the process's address space bounded to what it holds now plus ``limit_mb``
    MiB (``None``: no bound).

    Raises:
        SearchMemoryLimit: An allocation in the body failed for lack of memory.
    """
    resource: Any = None
    if limit_mb is not None:
        try:
            import resource as posix_resource
            resource = posix_resource
        except ImportError:  # pragma: no cover - not a POSIX system
            resource = None
    if resource is not None:
        assert limit_mb is not None  # resource is only set when a limit is given
        with _LOCK:  # threads of one process share the limit: the first sets it, the last restores it
            if _State.depth == 0:
                _warm_blas()
                used = _address_space_mb()
                if int(limit_mb) < HEADROOM_MB:
                    raise SearchMemoryLimit(int(limit_mb), f"a search needs at least {HEADROOM_MB} MiB to start")
                soft, hard = resource.getrlimit(resource.RLIMIT_AS)
                _State.saved = (soft, hard)
                want = ((used or 0) + int(limit_mb)) * 1024 * 1024
                if hard != resource.RLIM_INFINITY:
                    want = min(want, hard)
                if soft == resource.RLIM_INFINITY or want < soft:
                    resource.setrlimit(resource.RLIMIT_AS, (want, hard))
            _State.depth += 1
    try:
        yield
    except MemoryError as exc:
        raise SearchMemoryLimit(int(limit_mb or 0), str(exc) or "MemoryError") from None
    finally:
        if resource is not None:
            with _LOCK:
                _State.depth -= 1
                if _State.depth == 0 and _State.saved is not None:
                    resource.setrlimit(resource.RLIMIT_AS, _State.saved)
                    _State.saved = None
