"""SQLite response cache for chat completions.

A reply is stored under the SHA-256 of a canonical JSON of everything that can change it (resolved
model id, messages, temperature, seed, base URL) and never of retry or timeout settings, so a
repeated run pays nothing for calls it already made. The database runs in WAL mode with a busy
timeout and one short transaction per read or write, so several processes of one study can share it.

Durability: a write is committed (and, with ``synchronous=FULL``, on disk) when :meth:`ResponseCache.put`
returns, and a caller stores the trial that used a reply only after that, so a completed trial's
replies are there for every later run. SQLite answers "database is locked" without waiting on its
busy timeout in one case that a study hits: several connections setting up a *new* database at once
(its first ``PRAGMA journal_mode=WAL``). Opening, reading and writing therefore retry "locked" and
"busy" for up to the busy timeout; a cache that still cannot be opened, read or written raises
:class:`CacheError`, an infrastructure failure that fails the trial (never a silent miss, never a turn).

Ledger: a reply the server has just answered is stored together with a row of the ``ledger`` table
(run, trial, role, model, tokens, attempts) in one transaction, so every paid call is on record
exactly once, however the run ends afterwards (:mod:`etc_fast.llm._ledger`). A reply read back from
the cache adds no row. A cache written before the ledger existed gains the empty table when opened.

Modes:
    ``use``: read first; on a miss call the API and store the reply.
    ``refresh``: always call the API and overwrite the stored reply.
    ``off``: no caching.
    ``replay``: read only; a miss raises :class:`CacheMiss` (no network at all).
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import json
import os
import random
import sqlite3
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from etc_fast._urls import normalise_base_url
from etc_fast.errors import InfrastructureError
from etc_fast.llm._ledger import LEDGER_INDEX, LEDGER_SCHEMA, PaidCall

CacheMode = Literal["use", "refresh", "off", "replay"]
CACHE_MODES: tuple[str, ...] = ("use", "refresh", "off", "replay")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    request TEXT NOT NULL,
    content TEXT NOT NULL,
    reasoning TEXT,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    created REAL NOT NULL,
    finish_reason TEXT
)
"""


_T = TypeVar("_T")


class CacheError(InfrastructureError):
    """The reply cache could not be opened, read or written (kind ``cache_error``)."""

    def __init__(self, message: str) -> None:
        super().__init__(message, kind="cache_error")


def _transient(exc: sqlite3.Error) -> bool:
    """SQLite's "another connection holds the lock" answers, which a retry outlasts."""
    text = str(exc).lower()
    return isinstance(exc, sqlite3.OperationalError) and ("locked" in text or "busy" in text)


def _retrying(what: Callable[[], _T], timeout_s: float) -> _T:
    """``what()``, again after a short jittered pause while SQLite reports a lock, for up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    pause = 0.005
    while True:
        try:
            return what()
        except sqlite3.Error as exc:
            if not _transient(exc) or time.monotonic() >= deadline:
                raise
        time.sleep(min(pause * (0.5 + random.random()), max(0.0, deadline - time.monotonic())))
        pause = min(pause * 2, 0.25)


class CacheMiss(InfrastructureError, LookupError):
    """A replay-mode lookup found no stored reply.

    Attributes:
        key: The cache key that was missing.
        model: The resolved model id of the request.
    """

    def __init__(self, key: str, model: str = "") -> None:
        self.key = key
        self.model = model
        super().__init__(
            f"no cached reply for key {key}" + (f" (model {model})" if model else "")
            + " and cache_mode is 'replay'; run once with cache_mode 'use' to record it",
            kind="cache_miss",
        )


def canonical_request(
    model: str,
    messages: Sequence[Mapping[str, Any]],
    temperature: float | None,
    seed: int | None,
    base_url: str | None,
    sample: int | None = None,
    *,
    max_tokens: int | None = None,
) -> dict[str, Any]:
    """The part of a request that determines the reply (the cache key is hashed from this).

    ``sample`` tells apart independent draws of the same request (two rollouts of one trial, a
    judge's retry); it enters the key only when set, and is not sent to the server. ``max_tokens``
    enters only when set. ``base_url`` is normalised (``127.0.0.1`` and ``localhost``, a trailing
    slash or not, are one server).
    """
    request = {
        "base_url": normalise_base_url(base_url) if base_url else None,
        "messages": [{"role": str(m["role"]), "content": str(m["content"])} for m in messages],
        "model": model,
        "seed": seed,
        "temperature": None if temperature is None else float(temperature),
    }
    if sample is not None:
        request["sample"] = int(sample)
    if max_tokens is not None:
        request["max_tokens"] = int(max_tokens)
    return request


def cache_key(request: Mapping[str, Any]) -> str:
    """SHA-256 hex digest of the canonical JSON of ``request`` (sorted keys, no spaces)."""
    blob = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclasses.dataclass(frozen=True)
class CachedReply:
    """A stored reply."""

    content: str
    reasoning: str | None
    prompt_tokens: int
    completion_tokens: int
    finish_reason: str | None = None


class ResponseCache:
    """A SQLite-backed reply store shared safely between threads and processes.

    Args:
        path: Database file (created with its folder if missing).
        busy_timeout_s: How long a writer waits for another process's lock.
    """

    def __init__(self, path: str | os.PathLike[str], *, busy_timeout_s: float = 30.0) -> None:
        self.path = os.fspath(path)
        folder = os.path.dirname(os.path.abspath(self.path))
        try:
            os.makedirs(folder, exist_ok=True)
        except OSError as exc:
            raise CacheError(f"response cache {self.path!r}: cannot create its folder: {exc}") from exc
        self._timeout_s = float(busy_timeout_s)
        self._busy_ms = int(busy_timeout_s * 1000)
        self._lock = threading.Lock()
        try:
            self._conn = _retrying(self._open, self._timeout_s)
        except sqlite3.Error as exc:
            if _transient(exc):
                raise CacheError(f"response cache {self.path!r} stayed locked for {busy_timeout_s:g} s: {exc}") from exc
            raise CacheError(f"response cache {self.path!r} is not a usable SQLite database: {exc}") from exc

    def _open(self) -> sqlite3.Connection:
        conn = sqlite3.connect(self.path, timeout=self._timeout_s, isolation_level=None, check_same_thread=False)
        try:
            conn.execute(f"PRAGMA busy_timeout={self._busy_ms}")
            conn.execute("PRAGMA journal_mode=WAL")
            conn.execute("PRAGMA synchronous=FULL")  # a commit is on disk before put returns
            conn.execute(_SCHEMA)
            conn.execute(LEDGER_SCHEMA)  # also added to a cache written before the ledger existed
            conn.execute(LEDGER_INDEX)
            columns = {row[1] for row in conn.execute("PRAGMA table_info(completions)")}
            if "finish_reason" not in columns:  # a cache written before finish reasons were kept
                with contextlib.suppress(sqlite3.OperationalError):  # another connection may add it first
                    conn.execute("ALTER TABLE completions ADD COLUMN finish_reason TEXT")
                columns = {row[1] for row in conn.execute("PRAGMA table_info(completions)")}
                if "finish_reason" not in columns:
                    raise sqlite3.OperationalError("database is locked (adding column finish_reason)")
        except BaseException:
            conn.close()
            raise
        return conn

    def _do(self, what: str, key: str, step: Callable[[], _T]) -> _T:
        try:
            with self._lock:
                return _retrying(step, self._timeout_s)
        except sqlite3.Error as exc:
            raise CacheError(f"response cache {self.path!r}: could not {what} reply {key}: {type(exc).__name__}: {exc}") from exc

    def get(self, key: str) -> CachedReply | None:
        """The stored reply for ``key``, or ``None``.

        Raises:
            CacheError: the database could not be read.
        """
        row = self._do("read", key, lambda: self._conn.execute(
            "SELECT content, reasoning, prompt_tokens, completion_tokens, finish_reason FROM completions WHERE key = ?",
            (key,),
        ).fetchone())
        if row is None:
            return None
        return CachedReply(
            content=row[0], reasoning=row[1], prompt_tokens=int(row[2]), completion_tokens=int(row[3]), finish_reason=row[4]
        )

    def put(self, key: str, request: Mapping[str, Any], reply: CachedReply, *, paid: PaidCall | None = None) -> None:
        """Store (or overwrite) the reply for ``key`` in one short transaction, committed on return.

        With ``paid`` (the call was answered by the server just now), its ledger row is written in
        the same transaction: the reply is stored exactly when its payment is on record.

        Raises:
            CacheError: the reply could not be stored (the caller must not record a result that used it).
        """
        blob = json.dumps(request, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        now = time.time()
        row = (
            key, str(request.get("model", "")), blob, reply.content, reply.reasoning, int(reply.prompt_tokens),
            int(reply.completion_tokens), now, reply.finish_reason,
        )

        def store() -> None:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                conn.execute(
                    "INSERT OR REPLACE INTO completions "
                    "(key, model, request, content, reasoning, prompt_tokens, completion_tokens, created, finish_reason) "
                    "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    row,
                )
                if paid is not None:
                    conn.execute(
                        "INSERT INTO ledger (run, trial, role, name, model, key, prompt_tokens, completion_tokens, "
                        "attempts, created) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                        paid.row(key, now),
                    )
                conn.execute("COMMIT")
            except BaseException:
                with contextlib.suppress(sqlite3.Error):
                    conn.execute("ROLLBACK")
                raise

        self._do("store", key, store)

    def paid_rows(self, run: str | None = None) -> list[dict[str, Any]]:
        """The ledger's rows (all, or those of ``run``), oldest first, as dicts."""
        sql = ("SELECT id, run, trial, role, name, model, key, prompt_tokens, completion_tokens, attempts, created "
               "FROM ledger" + ("" if run is None else " WHERE run = ?") + " ORDER BY id")
        with self._lock:
            cur = self._conn.execute(sql, () if run is None else (run,))
            names = [d[0] for d in cur.description]
            return [dict(zip(names, r, strict=True)) for r in cur.fetchall()]

    def __len__(self) -> int:
        with self._lock:
            return int(self._conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> ResponseCache:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


__all__ = ["CACHE_MODES", "CacheError", "CacheMiss", "CachedReply", "ResponseCache", "cache_key", "canonical_request"]
