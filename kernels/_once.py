"""Compile each cached kernel once, whichever of several processes needs it first.

Numba's on-disk cache is per process: two processes that miss it at the same time both compile the
same specialization, and a run's pool workers start together and need the same kernels, so on a
cold cache every kernel was compiled once per worker. Saving is not safe either when they race:
Numba numbers a function's data files by the index it has just read, so two processes adding
different specializations of one function can both write ``<name>.1.nbc`` and one index entry is
lost or points at the other's code.

:func:`guard_package` wraps the ``compile`` method of every cached dispatcher of the package so that
it runs under an exclusive ``flock`` on a lock file beside the function's cache index (one per
function): the first process to need a specialization compiles and saves it while holding the
lock; a second one blocks on the lock and, once it gets it, finds the specialization in the cache
and loads it instead of compiling. A specialization the cache index lists already is loaded
without the lock, so on a warm cache no process waits for another's loading. Inside one process the wrapper takes Numba's global compiler
lock first, so threads never hold two file locks in different orders; across processes a caller's
lock is always taken before its callees' (a kernel compiles the kernels it calls while compiling
itself) and the call graph has no cycles, so the waits cannot deadlock (a kernel that calls itself
takes its own lock once). Where no lock file can be opened (a read-only cache) compilation goes on
unguarded, as Numba alone does it.

:func:`compile_if_free` is the variant for a background warm-up (``kernels/warmup.py``): it compiles
a specialization only when no other process holds the function's lock, and otherwise leaves it to
that process instead of waiting.

While a process blocks on another's compilation it triggers the event :data:`WAIT_EVENT` (a Numba
event kind, ``numba.core.event``), so a trial clock that stops during compilation can stop during
the wait as well.
"""

from __future__ import annotations

import contextlib
import fcntl
import importlib
import os
import pkgutil
from collections.abc import Iterator
from typing import Any

__all__ = ["WAIT_EVENT", "compile_if_free", "guard_dispatcher", "guard_package", "lock_path"]

#: The Numba event kind triggered around a wait for another process's compilation.
WAIT_EVENT = "kernels:compile_wait"

_GUARDED = "_kernels_compile_once"  # attribute marking a dispatcher already guarded
_UNLOCKED = "_kernels_compile_unlocked"  # attribute holding a guarded dispatcher's own compile method
_HELD: set[str] = set()  # lock files this process holds (only under Numba's global compiler lock)


def lock_path(dispatcher: Any) -> str | None:
    """The lock file of a cached dispatcher: its cache index's path with ``.lock`` for ``.nbi``
    (``None`` when the dispatcher has no disk cache)."""
    cache = getattr(dispatcher, "_cache", None)
    cache_file = getattr(cache, "_cache_file", None)
    index = getattr(cache_file, "_index_path", None)
    if not isinstance(index, str):
        return None
    return index[: -len(".nbi")] + ".lock" if index.endswith(".nbi") else index + ".lock"


@contextlib.contextmanager
def _exclusive(path: str, wait: bool = True) -> Iterator[bool]:
    """Hold an exclusive ``flock`` on ``path`` (created if missing) for the block, and yield True.

    When the file cannot be opened, or this process holds it already (a kernel calling itself),
    the block runs without taking it (True). When another process holds it: with ``wait``, block
    until it is free (reported as :data:`WAIT_EVENT`); without, yield False at once.
    """
    if path in _HELD:
        yield True
        return
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o666)
    except OSError:
        yield True
        return
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            if not wait:
                yield False
                return
            from numba.core import event

            with event.trigger_event(WAIT_EVENT, data={"lock": path}):
                fcntl.flock(fd, fcntl.LOCK_EX)
        _HELD.add(path)
        try:
            yield True
        finally:
            _HELD.discard(path)
    finally:
        os.close(fd)  # closing the descriptor releases the lock


def _cached(dispatcher: Any, sig: Any) -> bool:
    """Whether the dispatcher's cache index lists ``sig`` already (False when it cannot be read).

    Numba saves the index before the data file, so a listed entry may still be on its way; loading
    it then fails softly and Numba compiles it, as it would without the lock.
    """
    try:
        cache = dispatcher._cache
        key = cache._index_key(sig, dispatcher.targetctx.codegen())
        return key in cache._cache_file._load_index()
    except Exception:  # noqa: BLE001 - another Numba's cache layout: take the lock
        return False


def guard_dispatcher(dispatcher: Any) -> bool:
    """Make ``dispatcher.compile`` compile under its lock file (see the module docstring).

    Returns whether the dispatcher is guarded (it is left alone when it has no disk cache).
    Guarding twice is a no-op.
    """
    if getattr(dispatcher, _GUARDED, False):
        return True
    path = lock_path(dispatcher)
    if path is None:
        return False
    compile_unlocked = dispatcher.compile  # the bound method of Numba's class
    overloads = dispatcher.overloads

    def compile(sig: Any) -> Any:
        from numba.core import sigutils
        from numba.core.compiler_lock import global_compiler_lock

        args, _ = sigutils.normalize_signature(sig)
        existing = overloads.get(tuple(args))
        if existing is not None:  # compiled or loaded in this process already: no file lock needed
            return existing.entry_point
        with global_compiler_lock:
            if _cached(dispatcher, sig):  # a warm cache: load it, without waiting for others' loads
                return compile_unlocked(sig)
            with _exclusive(path):
                return compile_unlocked(sig)  # loads from the cache when another process saved it meanwhile

    dispatcher.compile = compile
    setattr(dispatcher, _UNLOCKED, compile_unlocked)
    setattr(dispatcher, _GUARDED, True)
    return True


def compile_if_free(dispatcher: Any, sig: Any) -> bool:
    """Compile (or load from the cache) one specialization of a guarded dispatcher unless another
    process holds its lock; returns False, having done nothing, when one does.

    The kernels it calls are compiled through their own guarded ``compile``, which waits for their
    locks as usual.
    """
    from numba.core.compiler_lock import global_compiler_lock

    path = lock_path(dispatcher)
    unlocked = getattr(dispatcher, _UNLOCKED, None)
    if path is None or unlocked is None:
        dispatcher.compile(sig)
        return True
    with global_compiler_lock, _exclusive(path, wait=False) as acquired:
        if acquired:
            unlocked(sig)
        return acquired


def guard_package(package: str = "kernels") -> int:
    """Import every module of ``package`` and guard each cached dispatcher defined in it.

    Importing every module here means a kernel module the package's ``__init__`` does not import
    (one ``etc_fast`` imports later) is guarded too. Returns how many dispatchers were guarded.
    """
    from numba.core.dispatcher import Dispatcher

    pkg = importlib.import_module(package)
    count = 0
    for info in pkgutil.iter_modules(pkg.__path__):
        module = importlib.import_module(f"{package}.{info.name}")
        for value in list(vars(module).values()):
            if (
                isinstance(value, Dispatcher)
                and getattr(value.py_func, "__module__", None) == module.__name__
                and guard_dispatcher(value)
            ):
                count += 1
    return count
