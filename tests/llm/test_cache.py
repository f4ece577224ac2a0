"""The SQLite reply cache: modes, keys, token storage and sharing between connections/processes."""

from __future__ import annotations

import multiprocessing as mp
import sqlite3
import threading

import pytest

from etc_fast.llm import CachedReply, CacheError, CacheMiss, LLMClient, ResponseCache, cache_key, canonical_request
from tests.llm._server import ok
from tests.llm.conftest import fast_settings

CALLS = [[{"role": "user", "content": f"question {i}"}] for i in range(4)]


def _client(srv, path, mode, **kw):
    return LLMClient(fast_settings(srv.base_url, cache_path=str(path), cache_mode=mode, **kw), sleep=lambda s: None, environ={})


def _echo(body, index):
    return ok(f"reply to {body['messages'][-1]['content']} #{index}", prompt_tokens=100 + index, completion_tokens=10 + index)


def test_second_run_makes_zero_requests_and_keeps_tokens(serve, tmp_path):
    srv = serve(_echo)
    path = tmp_path / "cache.db"
    with _client(srv, path, "use") as first:
        replies1 = [first.complete(m) for m in CALLS]
    assert srv.n_requests == 4 and not any(r.cached for r in replies1)
    with _client(srv, path, "use") as second:
        replies2 = [second.complete(m) for m in CALLS]
    assert srv.n_requests == 4, "a repeated run must not call the server"
    assert all(r.cached and r.attempts == 0 for r in replies2)
    assert [r.content for r in replies2] == [r.content for r in replies1]
    assert [(r.prompt_tokens, r.completion_tokens) for r in replies2] == [(r.prompt_tokens, r.completion_tokens) for r in replies1]


def test_replay_mode_raises_on_a_miss_naming_the_key(serve, tmp_path):
    srv = serve(_echo)
    path = tmp_path / "cache.db"
    with _client(srv, path, "use") as c:
        c.complete(CALLS[0])
    with _client(srv, path, "replay") as r:
        assert r.complete(CALLS[0]).cached
        with pytest.raises(CacheMiss) as miss:
            r.complete(CALLS[1])
        assert miss.value.key == cache_key(r.request_for(CALLS[1]))
        assert miss.value.key in str(miss.value) and "replay" in str(miss.value)
    assert srv.n_requests == 1


def test_refresh_mode_always_calls_and_overwrites(serve, tmp_path):
    srv = serve(_echo)
    path = tmp_path / "cache.db"
    with _client(srv, path, "use") as c:
        old = c.complete(CALLS[0]).content
    with _client(srv, path, "refresh") as c:
        new = c.complete(CALLS[0])
    assert srv.n_requests == 2 and not new.cached and new.content != old
    with _client(srv, path, "use") as c:
        again = c.complete(CALLS[0])
    assert again.cached and again.content == new.content and srv.n_requests == 2


def test_off_mode_never_touches_the_file(serve, tmp_path):
    srv = serve(_echo)
    path = tmp_path / "cache.db"
    with _client(srv, path, "off") as c:
        c.complete(CALLS[0])
        c.complete(CALLS[0])
    assert srv.n_requests == 2 and not path.exists()


def test_key_ignores_timeouts_and_retries_but_not_what_changes_the_reply(serve, tmp_path):
    srv = serve(_echo)
    path = tmp_path / "cache.db"
    with _client(srv, path, "use", timeout_s=1.0, max_retries=1) as c:
        c.complete(CALLS[0])
    with _client(srv, path, "use", timeout_s=5.0, max_retries=6, backoff_base_s=0.5, max_concurrency=1) as c:
        assert c.complete(CALLS[0]).cached
    assert srv.n_requests == 1
    for change in (dict(temperature=0.9), dict(seed=3), dict(model="other-model")):
        with _client(srv, path, "use", **change) as c:
            assert not c.complete(CALLS[0]).cached, change
    with _client(srv, path, "use") as c:
        assert not c.complete(CALLS[0], sample=1).cached
        assert c.complete(CALLS[0], sample=1).cached


def test_key_is_canonical():
    msgs = [{"role": "user", "content": "x", "name": "ignored"}]
    a = canonical_request("m", msgs, 0.4, None, "http://h/v1/")
    b = canonical_request("m", [{"content": "x", "role": "user"}], 0.40, None, "http://h/v1")
    assert cache_key(a) == cache_key(b)
    assert cache_key(a) != cache_key(canonical_request("m", msgs, 0.4, None, "http://other/v1"))
    assert cache_key(a) != cache_key(canonical_request("m", msgs, 0.4, None, "http://h/v1", sample=0))
    assert len(cache_key(a)) == 64


def test_cache_is_wal_and_stores_tokens(tmp_path):
    path = tmp_path / "sub" / "c.db"
    with ResponseCache(path) as cache:
        cache.put("k", {"model": "m"}, CachedReply("text", "why", 12, 34))
        assert cache.get("k") == CachedReply("text", "why", 12, 34)
        assert cache.get("missing") is None and len(cache) == 1
    conn = sqlite3.connect(path)
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert conn.execute("SELECT prompt_tokens, completion_tokens FROM completions").fetchone() == (12, 34)
    conn.close()


def test_not_a_database_is_a_clear_error(tmp_path):
    path = tmp_path / "junk.db"
    path.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(CacheError, match="not a usable SQLite database") as info:
        ResponseCache(path)
    assert info.value.kind == "cache_error"


def test_many_connections_write_concurrently(tmp_path):
    path = tmp_path / "c.db"
    caches = [ResponseCache(path) for _ in range(4)]

    def writer(j: int) -> None:
        for i in range(50):
            caches[j].put(f"{j}-{i}", {"model": "m"}, CachedReply(f"v{j}{i}", None, i, j))

    threads = [threading.Thread(target=writer, args=(j,)) for j in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert len(caches[0]) == 200
    assert caches[3].get("2-17") == CachedReply("v217", None, 17, 2)
    for c in caches:
        c.close()


def _process_writer(path: str, j: int) -> None:
    with ResponseCache(path) as cache:
        for i in range(40):
            cache.put(f"p{j}-{i}", {"model": "m"}, CachedReply("x", None, i, j))
            cache.get(f"p{(j + 1) % 3}-{i}")


def test_processes_share_one_cache(tmp_path):
    path = str(tmp_path / "c.db")
    ResponseCache(path).close()
    ctx = mp.get_context("fork") if "fork" in mp.get_all_start_methods() else mp.get_context()
    procs = [ctx.Process(target=_process_writer, args=(path, j)) for j in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(30)
    assert [p.exitcode for p in procs] == [0, 0, 0]
    with ResponseCache(path) as cache:
        assert len(cache) == 120


def test_a_failed_cache_write_fails_the_call(serve, tmp_path, monkeypatch):
    """A reply that could not be stored is not used: a trial built on it could not be replayed."""
    srv = serve(_echo)
    with _client(srv, tmp_path / "c.db", "use") as c:
        def broken_put(*args, **kwargs):
            raise sqlite3.OperationalError("database or disk is full")

        monkeypatch.setattr(c.cache, "_conn", _Broken(c.cache._conn, broken_put))
        with pytest.raises(CacheError, match="could not store reply .*disk is full") as info:
            c.complete(CALLS[0])
    assert info.value.kind == "cache_error" and srv.n_requests == 1


class _Broken:
    """A connection whose writes fail the way a full disk makes them fail."""

    def __init__(self, conn, fail):
        self._conn, self._fail = conn, fail

    def execute(self, sql, *args):
        if sql.lstrip().upper().startswith("INSERT"):
            self._fail()
        return self._conn.execute(sql, *args)

    def close(self):
        self._conn.close()
