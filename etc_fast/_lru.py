"""A small thread-safe least-recently-used map, for the process-wide memos of results that are
functions of their keys (the symbolic search's results, the sandbox's completed jobs)."""

from __future__ import annotations

import collections
import threading
from collections.abc import Hashable
from typing import Generic, TypeVar

__all__ = ["LRU"]

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class LRU(Generic[K, V]):
    """At most ``size`` entries: :meth:`get` refreshes the entry it finds, :meth:`put` drops the
    least recently used ones beyond ``size``. ``None`` is not a value it can hold."""

    def __init__(self, size: int) -> None:
        if not (isinstance(size, int) and size >= 1):
            raise ValueError(f"LRU: size must be a positive integer, got {size!r}")
        self.size = size
        self._entries: collections.OrderedDict[K, V] = collections.OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        """The value kept for ``key`` (now the most recently used), else ``None``."""
        with self._lock:
            value = self._entries.get(key)
            if value is not None:
                self._entries.move_to_end(key)
            return value

    def put(self, key: K, value: V) -> None:
        """Keep ``value`` for ``key`` as the most recently used entry."""
        with self._lock:
            self._entries[key] = value
            self._entries.move_to_end(key)
            while len(self._entries) > self.size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)
