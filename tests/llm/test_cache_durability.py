"""The reply cache under stress: a reply a call returned is in the cache for every later run.

The bug these pin (issue #33): several trials starting at once on a *new* cache database each open a
connection and set it to WAL; SQLite answers "database is locked" to one of them at once, without
waiting on the busy timeout. The connection error surfaced inside the policy as a ``ValueError``,
which the protocol turned into an invalid turn: the trial went on without its first call, was stored
as completed, and the next run's replay of that first call missed. Now opening retries the lock, and
a cache that cannot be opened, read or written fails the trial (``cache_error``).
"""

from __future__ import annotations

import multiprocessing as mp
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import yaml

from etc_fast.llm import CachedReply, CacheError, LLMClient, ResponseCache
from etc_fast.run import main
from etc_fast.runner import read_trials
from tests.llm._server import ChatServer, model_like, ok
from tests.llm.conftest import fast_settings


def test_opening_a_new_cache_waits_for_a_connection_that_is_setting_it_up(tmp_path):
    """What a second trial meets while the first one's connection writes the new file's header."""
    path = tmp_path / "c.db"
    other = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
    other.execute("BEGIN IMMEDIATE")  # a fresh (rollback-journal) database with a writer inside it
    other.execute("CREATE TABLE IF NOT EXISTS t (x)")
    release = threading.Timer(0.3, lambda: other.execute("COMMIT"))
    release.start()
    t0 = time.monotonic()
    try:
        with ResponseCache(path, busy_timeout_s=10) as cache:
            cache.put("k", {"model": "m"}, CachedReply("x", None, 1, 1))
            assert cache.get("k") is not None
    finally:
        release.join()
        other.close()
    assert time.monotonic() - t0 >= 0.25, "it waited for the lock instead of failing at once"


def test_a_cache_that_stays_locked_is_an_infrastructure_error(tmp_path):
    path = tmp_path / "c.db"
    other = sqlite3.connect(path, isolation_level=None)
    other.execute("BEGIN IMMEDIATE")
    other.execute("CREATE TABLE IF NOT EXISTS t (x)")
    try:
        with pytest.raises(CacheError, match="stayed locked") as info:
            ResponseCache(path, busy_timeout_s=0.3)
    finally:
        other.close()
    assert info.value.kind == "cache_error"


def _opener(path: str, worker: int, n: int, start: float, acked) -> None:
    while time.time() < start:  # all workers open the new database at the same moment
        pass
    with ResponseCache(path) as cache:
        for i in range(n):
            cache.put(f"w{worker}-{i}", {"model": "m"}, CachedReply(f"reply {worker}.{i}", None, 10, 2))
            acked(f"w{worker}-{i}")


def _process_opener(path: str, worker: int, n: int, start: float, ack_dir: str) -> None:
    with open(os.path.join(ack_dir, f"w{worker}"), "a") as fh:
        def ack(key: str) -> None:
            fh.write(key + "\n")
            fh.flush()

        _opener(path, worker, n, start, ack)


@pytest.mark.parametrize("how", ["threads", "processes"])
def test_many_workers_opening_one_new_cache_lose_no_reply(tmp_path, how):
    """Eight workers open one new database at the same instant and store replies, many rounds over."""
    rounds, workers, per_worker = (40, 8, 3) if how == "threads" else (8, 8, 3)
    ctx = mp.get_context("fork")  # a worker process that starts in milliseconds, so they really race
    for r in range(rounds):
        path = str(tmp_path / f"round{r}.db")
        start = time.time() + (0.05 if how == "threads" else 0.3)
        acked: list[str] = []
        if how == "threads":
            errors: list[BaseException] = []

            def run(w: int, path: str = path, start: float = start, acked: list = acked, errors: list = errors) -> None:
                try:
                    _opener(path, w, per_worker, start, acked.append)
                except BaseException as exc:  # noqa: BLE001 - collected and asserted below
                    errors.append(exc)

            threads = [threading.Thread(target=run, args=(w,)) for w in range(workers)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(60)
            assert not errors, f"round {r}: {errors[0]!r}"
        else:
            ack_dir = tmp_path / f"acks{r}"
            ack_dir.mkdir()
            procs = [ctx.Process(target=_process_opener, args=(path, w, per_worker, start, str(ack_dir)))
                     for w in range(workers)]
            for p in procs:
                p.start()
            for p in procs:
                p.join(60)
            assert [p.exitcode for p in procs] == [0] * workers, f"round {r}"
            acked = [k for f in sorted(ack_dir.iterdir()) for k in f.read_text().split()]
        assert len(acked) == workers * per_worker
        with ResponseCache(path) as cache:
            assert [k for k in acked if cache.get(k) is None] == [], f"round {r}: acknowledged replies missing"


_KILLED_WRITER = """
import sys
from etc_fast.llm import CachedReply, ResponseCache
cache = ResponseCache(sys.argv[1])
i = 0
while True:
    cache.put(f"k{i}", {"model": "m"}, CachedReply("x" * 2000 + str(i), None, 100, i))
    print(f"k{i}", flush=True)
    i += 1
"""


def test_a_writer_killed_mid_write_keeps_every_reply_it_acknowledged(tmp_path):
    path = str(tmp_path / "c.db")
    ResponseCache(path).close()
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[2]))
    writers = [subprocess.Popen([sys.executable, "-c", _KILLED_WRITER, path], stdout=subprocess.PIPE, text=True, env=env)
               for _ in range(3)]
    acked: list[str] = []
    try:
        for w in writers:  # each writer has stored some replies and is in the middle of more
            acked += [w.stdout.readline().strip() for _ in range(30)]
    finally:
        for w in writers:
            w.send_signal(signal.SIGKILL)
        for w in writers:
            w.wait(30)
            w.stdout.close()
    with ResponseCache(path) as cache:
        assert cache._conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        assert [k for k in acked if cache.get(k) is None] == []
        cache.put("after", {"model": "m"}, CachedReply("y", None, 1, 1))
        assert cache.get("after") is not None


def test_replay_after_concurrent_clients_finds_every_reply(tmp_path):
    """Clients of many trials filling one new cache at once, then each call replayed with no server."""
    path = str(tmp_path / "c.db")
    with ChatServer(lambda body, i: ok(f"answer to {body['messages'][-1]['content']}")) as srv:
        clients = [LLMClient(fast_settings(srv.base_url, cache_path=path, cache_mode="use"), environ={}) for _ in range(8)]
        errors: list[BaseException] = []

        def trial(j: int) -> None:
            try:
                for turn in range(3):
                    clients[j].complete([{"role": "user", "content": f"trial {j} turn {turn}"}], sample=j)
            except BaseException as exc:  # noqa: BLE001
                errors.append(exc)

        threads = [threading.Thread(target=trial, args=(j,)) for j in range(8)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(60)
        for c in clients:
            c.close()
        assert not errors, repr(errors[0])
        paid = srv.n_requests
    with LLMClient(fast_settings(srv.base_url, cache_path=path, cache_mode="replay"), environ={}) as replay:
        for j in range(8):
            for turn in range(3):
                assert replay.complete([{"role": "user", "content": f"trial {j} turn {turn}"}], sample=j).cached
    assert paid == 24


def test_a_trial_whose_cache_cannot_be_used_fails_instead_of_completing(tmp_path):
    """Before: the policy's ValueError became an invalid turn and the trial was stored as a result."""
    junk = tmp_path / "cache.db"
    junk.write_bytes(b"not a database " * 100)
    cfg = {
        "name": "cache-broken", "workers": 1, "judge": "structural",
        "llm": {"base_url": "", "timeout_s": 5, "max_retries": 0, "cache": {"path": str(junk), "mode": "use"}},
        "grids": [{"model": "test-model", "configurations": ["baseline_n"], "tasks": ["m0_gravity"], "rollouts": 1}],
    }
    with ChatServer(model_like(2), models=["test-model"]) as srv:
        cfg["llm"]["base_url"] = srv.base_url
        (tmp_path / "run.yaml").write_text(yaml.safe_dump(cfg))
        code = main([str(tmp_path / "run.yaml"), "--out", str(tmp_path / "out"), "--no-report"])
        assert srv.n_requests == 0, "no call is paid for when its reply could not be kept"
    [entry] = read_trials(tmp_path / "out" / "trials.jsonl")
    assert entry["summary"]["status"] == "failed" and entry["summary"]["error_kind"] == "cache_error", entry["summary"]
    assert code == 4
