"""Calls paid before an interrupt are in the report: ``python -m etc_fast.run`` is stopped with
SIGINT after the stand-in server has answered some calls, then resumed; the report's paid calls
must equal the server's own count of answered calls over both invocations."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from etc_fast.llm import read_ledger_file, read_paid
from tests.llm._server import ChatServer, dropped, model_like
from tests.llm.test_run_llm import write_config

REPO = Path(__file__).resolve().parents[2]


class Gate:
    """Answers the first ``open_for`` requests as the stand-in model does; holds every later one
    (never answering it) until :meth:`release`, after which held ones are dropped and new ones answered."""

    def __init__(self, open_for: int) -> None:
        self.model = model_like(2)
        self.open_for = open_for
        self.released = threading.Event()
        self.lock = threading.Lock()
        self.held = 0

    def __call__(self, body: dict, index: int):
        if index < self.open_for or self.released.is_set():
            return self.model(body, index)
        with self.lock:
            self.held += 1
        self.released.wait(120)
        return dropped()

    def release(self) -> None:
        self.released.set()


def _until(what, seconds: float, proc: subprocess.Popen | None = None) -> bool:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        if what():
            return True
        if proc is not None and proc.poll() is not None:
            return bool(what())
        time.sleep(0.05)
    return bool(what())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="signals")
def test_calls_paid_before_sigint_are_counted_after_the_resume(tmp_path):
    executor = "threads"
    workers, answered_first = 2, 4
    gate = Gate(answered_first)
    with ChatServer(gate, models=["test-model"], max_requests=10_000, lifetime_s=600) as srv:
        cfg = write_config(tmp_path, srv.base_url, rollouts=4, workers=workers, timeout_s=60,
                           prices={"test-model": {"prompt": 1.0, "completion": 4.0}})
        out = tmp_path / "out"
        cmd = [sys.executable, "-m", "etc_fast.run", str(cfg), "--out", str(out), "--executor", executor]
        env = {**os.environ, "PYTHONPATH": str(REPO)}
        proc = subprocess.Popen(cmd + ["--no-report"], cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        try:
            # Every worker waits on a held request: each answered reply is stored (a trial asks its next
            # question only after the last reply is in the cache).
            assert _until(lambda: gate.held >= workers, 240, proc), (
                f"the run never reached the gate: answered {srv.n_answered}, held {gate.held}; "
                + proc.stderr.read().decode()[-2000:] if proc.poll() is not None else "")
            proc.send_signal(signal.SIGINT)
            _, err = proc.communicate(timeout=60)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        assert proc.returncode == 130, err.decode()[-2000:]
        gate.release()
        first = srv.n_answered
        assert first == answered_first
        # Durable: the interrupted invocation's payments are on the ledger before anything resumes.
        named = read_ledger_file(out)
        assert named is not None and named["caches"] == [str(tmp_path / "cache.db")]
        assert sum(t.calls for t in read_paid(tmp_path / "cache.db", named["run"])) == first
        stored = (out / "trials.jsonl").read_text().splitlines() if (out / "trials.jsonl").exists() else []

        resumed = subprocess.run(cmd, cwd=REPO, env=env, capture_output=True, timeout=300)
        assert resumed.returncode == 0, resumed.stderr.decode()[-3000:]
        total = srv.n_answered
    log = resumed.stderr.decode()
    report = (out / "report" / "report.md").read_text()
    got = re.search(r"LLM calls: (\d+) = paid (\d+) \+ reused (\d+) \(source: ledger\)", report)
    assert got, report[:3000]
    calls, paid, reused = map(int, got.groups())
    assert paid == total, f"report says paid {paid}, the server answered {total}"
    assert calls == paid + reused
    rows = [json.loads(x)["summary"] for x in (out / "trials.jsonl").read_text().splitlines()]
    cached = sum(r["calls_cached"] + r["judge_calls_cached"] for r in rows[len(stored):])
    assert reused == cached >= 1, "the resumed run reused the interrupted attempt's replies from the cache"
    # Without the ledger the report could only see the resumed invocation's payments.
    assert sum(r["calls_paid"] for r in rows[len(stored):]) < paid
    # The estimate table (trials the resumed run played) counts every attempt too.
    before = sum(r["calls_paid"] for r in rows[:len(stored)])  # trials the first invocation finished
    est_row = next(x for x in report.splitlines() if x.startswith(f"| test-model | {4 - len(stored)} ("))
    assert f"/ {paid - before + reused} / {paid - before} |" in est_row, est_row
    # The progress line showed the calls as the run went, paid ones of the first attempt included.
    last = [x for x in log.splitlines() if x.startswith("[")][-1]
    assert f"calls {calls} (paid {paid}, reused {reused})" in last and "$" in last, log[-2000:]


def test_worker_processes_record_each_trials_calls_under_the_run(tmp_path):
    """The ledger id travels with the worker to a process pool; each trial's paid calls carry its id."""
    with ChatServer(model_like(2), models=["test-model"], max_requests=10_000, lifetime_s=600) as srv:
        cfg = write_config(tmp_path, srv.base_url, rollouts=3, workers=2, timeout_s=60)
        out = tmp_path / "out"
        done = subprocess.run([sys.executable, "-m", "etc_fast.run", str(cfg), "--out", str(out), "--executor", "processes",
                               "--no-report"], cwd=REPO, env={**os.environ, "PYTHONPATH": str(REPO)}, capture_output=True,
                              timeout=300)
        assert done.returncode == 0, done.stderr.decode()[-3000:]
        answered = srv.n_answered
    named = read_ledger_file(out)
    per_trial = {t.trial: t.calls for t in read_paid(named["caches"][0], named["run"], by_trial=True)}
    rows = [json.loads(x)["summary"] for x in (out / "trials.jsonl").read_text().splitlines()]
    assert per_trial == {r["trial_id"]: r["calls_paid"] for r in rows} and sum(per_trial.values()) == answered == 9


def test_a_run_directory_from_before_the_ledger_keeps_its_paid_calls(tmp_path, capsys):
    """Trials stored by a version without the ledger keep their own paid counts; later ones come
    from the ledger; together they are the server's answered calls."""
    from etc_fast.run import main

    with ChatServer(model_like(2), models=["test-model"], max_requests=10_000, lifetime_s=600) as srv:
        cfg = write_config(tmp_path, srv.base_url, rollouts=4, workers=2, timeout_s=60)
        out = tmp_path / "out"
        assert main([str(cfg), "--out", str(out), "--no-report", "--limit", "2"]) == 0  # 2 of 4 trials stored
        # What an earlier version left: no ledger.json, a cache without the ledger table.
        import sqlite3

        from etc_fast.store import write_manifest

        (out / "ledger.json").unlink()
        write_manifest(out)

        with sqlite3.connect(tmp_path / "cache.db") as conn:
            conn.execute("DROP TABLE ledger")
        assert main([str(cfg), "--out", str(out)]) == 0
        answered = srv.n_answered
    last = [x for x in capsys.readouterr().err.splitlines() if x.startswith("[")][-1]
    assert "calls 12 (paid 12, reused 0)" in last, last
    named = read_ledger_file(out)
    assert len(named["before"]) == 2
    report = (out / "report" / "report.md").read_text()
    got = re.search(r"LLM calls: (\d+) = paid (\d+) \+ reused (\d+) \(source: ledger\)", report)
    assert got and int(got.group(2)) == answered == 12, report[:3000]
    assert "2 trial(s) were stored before the run's ledger began" in report
    assert sum(t.calls for t in read_paid(tmp_path / "cache.db", named["run"])) == 6  # the ledger holds the new ones


def test_an_unreadable_ledger_file_stops_the_run_with_exit_2_and_says_where(tmp_path, capsys):
    from etc_fast.run import main

    with ChatServer(model_like(2), models=["test-model"], max_requests=10_000, lifetime_s=600) as srv:
        cfg = write_config(tmp_path, srv.base_url, rollouts=1, workers=1, timeout_s=60)
        out = tmp_path / "out"
        out.mkdir()
        (out / "ledger.json").write_text('{"run": ""}')
        assert main([str(cfg), "--out", str(out), "--no-report"]) == 2
        assert srv.n_requests == 0
    err = capsys.readouterr().err
    assert str(out / "ledger.json") in err and "remove the file" in err, err
    assert (out / "ledger.json").read_text() == '{"run": ""}'  # nothing lost
