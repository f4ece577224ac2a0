"""``python -m etc_fast.run`` against a local model server that fails in each way a real one does.

What must hold whatever the server does: no call without a reply is stored as a result; the run
exits non-zero and says why; the next run of the same command does exactly the unfinished trials
again; a server that rejects the key sees at most a couple of requests; no transport text reaches a
prompt; a retried request is byte-identical; tokens paid plus cached add up to what the server
reported.
"""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from etc_fast.run import main
from etc_fast.runner import read_trials
from tests.llm._server import ChatServer, Reply, error, fault_at, model_like

TRANSPORT = ("HTTP", "status 5", "status 4", "127.0.0.1", "localhost", "LLMCallError", "CacheMiss", "scripted",
             "timed out", "Connection", "could not be used", "failed")


def write_config(tmp_path: Path, base_url: str, *, rollouts: int = 3, workers: int = 3, judge: str = "structural",
                 cache_mode: str = "use", **llm) -> Path:
    cfg = {
        "name": "llm-faults",
        "workers": workers,
        "judge": judge,
        "llm": {"base_url": base_url, "timeout_s": 2, "max_retries": 3, "retry_budget_s": 60,
                "cache": {"path": str(tmp_path / "cache.db"), "mode": cache_mode}, **llm},
        "grids": [{"model": "test-model", "configurations": ["baseline_n"], "tasks": ["m0_gravity"], "rollouts": rollouts}],
    }
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def run(config: Path, out: Path, *extra: str) -> int:
    return main([str(config), "--out", str(out), "--no-report", *extra])


def summaries(out: Path) -> list[dict]:
    return [e["summary"] for e in read_trials(out / "trials.jsonl")]


def lines(out: Path) -> int:
    path = out / "trials.jsonl"
    return len(path.read_text().splitlines()) if path.exists() else 0


@pytest.mark.parametrize("status, kind", [(401, "auth"), (403, "permission"), (404, "not_found")])
def test_a_rejecting_server_stops_the_run_before_any_trial(tmp_path, capsys, status, kind):
    with ChatServer([], reject=status) as srv:
        code = run(write_config(tmp_path, srv.base_url), tmp_path / "out")
        assert code == 3
        assert srv.n_all <= 2, "a rejecting endpoint sees at most a couple of requests per run"
    err = capsys.readouterr().err
    assert f"({kind})" in err and f"HTTP {status}" in err and err.strip().count("\n") == 0
    assert lines(tmp_path / "out") == 0


def test_an_unknown_model_is_named_before_any_trial(tmp_path, capsys):
    with ChatServer([error(404)] * 3, models=["other-model"]) as srv:
        assert run(write_config(tmp_path, srv.base_url), tmp_path / "out") == 3
        assert srv.n_all <= 2
    assert "not_found" in capsys.readouterr().err


def test_a_dead_url_stops_the_run_before_any_trial(tmp_path, capsys):
    with ChatServer([]) as srv:
        url = srv.base_url
    assert run(write_config(tmp_path, url), tmp_path / "out") == 3
    err = capsys.readouterr().err
    assert "(unreachable)" in err and "base_url" in err
    assert lines(tmp_path / "out") == 0


def test_transient_faults_are_retried_invisibly(tmp_path):
    faults, seed = 0.3, 7
    with ChatServer(model_like(2, faults=faults, seed=seed), models=["test-model"]) as srv:
        code = run(write_config(tmp_path, srv.base_url, rollouts=4, max_retries=6, cache_mode="off"), tmp_path / "out")
        bodies, raws = list(srv.requests), list(srv.raw_requests)
    assert code == 0
    rows = summaries(tmp_path / "out")
    assert len(rows) == 4 and all(r["status"] == "completed" and r["error_kind"] is None for r in rows)
    faulted = [i for i in range(len(raws)) if fault_at(i, faults, seed) is not None]
    assert faulted, "the seed must produce some faults"
    answered = {raws[i] for i in range(len(raws)) if fault_at(i, faults, seed) is None}
    assert all(raws[i] in answered for i in faulted), "every retried request is byte-identical to one that got answered"
    for body in bodies:
        for m in body["messages"]:
            assert not any(t in m["content"] for t in TRANSPORT), m["content"][:200]
    # Tokens paid add up to what the server reported for the answered requests.
    reported = sum(model_like(2)(bodies[i], 0).prompt_tokens for i in range(len(bodies)) if fault_at(i, faults, seed) is None)
    assert sum(r["prompt_tokens_paid"] for r in rows) == reported
    n_answered = len(raws) - len(faulted)
    assert sum(r["calls_paid"] for r in rows) == n_answered and sum(r["calls_cached"] for r in rows) == 0
    frame = pl.read_parquet(tmp_path / "out" / "trials.parquet")
    assert frame["calls_paid"].sum() == n_answered


def test_replay_misses_fail_and_the_next_run_does_exactly_those(tmp_path, capsys):
    out = tmp_path / "out"
    with ChatServer(model_like(2), models=["test-model"]) as srv:
        assert run(write_config(tmp_path, srv.base_url, rollouts=2), out) == 0
        paid = srv.n_requests
        # Two more rollouts in replay mode: their replies are not cached.
        assert run(write_config(tmp_path, srv.base_url, rollouts=4, cache_mode="replay"), tmp_path / "replayed") == 4
        assert srv.n_requests == paid, "replay mode makes no request"
        rows = summaries(tmp_path / "replayed")
        failed = sorted(r["trial_id"] for r in rows if r["status"] == "failed")
        why = [(r["rollout"], r["status"], r["error_kind"], r["llm_calls"], r["calls_cached"]) for r in rows]
        assert len(failed) == 2 and all(r["error_kind"] == "cache_miss" for r in rows if r["status"] == "failed"), why
        assert all(r["calls_cached"] == r["llm_calls"] == 3 and r["calls_paid"] == 0 for r in rows if r["status"] != "failed")
        err = capsys.readouterr().err
        assert "cache_miss: 2" in err and "again" in err
        # The same directory with the cache filling again: only the two failed trials run.
        before = lines(tmp_path / "replayed")
        assert run(write_config(tmp_path, srv.base_url, rollouts=4, cache_mode="use"), tmp_path / "replayed") == 0
        assert lines(tmp_path / "replayed") == before + 2
        assert srv.n_requests == paid + 2 * 3
    rows = summaries(tmp_path / "replayed")
    assert len(rows) == 4 and all(r["status"] == "completed" for r in rows)
    redone = [e for e in read_trials(tmp_path / "replayed" / "trials.jsonl") if e["trial_id"] in failed]
    assert all(e["summary"]["calls_paid"] == 3 for e in redone)
    from etc_fast.runner import replay_run

    assert replay_run(tmp_path / "replayed").ok


def test_breaker_stops_a_run_whose_calls_keep_failing(tmp_path, capsys):
    with ChatServer([error(503)] * 100, models=["test-model"]) as srv:
        cfg = write_config(tmp_path, srv.base_url, rollouts=8, workers=1, max_retries=0, max_consecutive_failures=3)
        assert run(cfg, tmp_path / "out") == 3
        # The breaker trips on the third failure; the one worker may have started the next trial by then.
        assert 3 <= srv.n_requests <= 4
    rows = summaries(tmp_path / "out")
    assert len(rows) == 3 and all(r["status"] == "failed" and r["error_kind"] == "server_error" for r in rows)
    assert "3 trials in a row" in capsys.readouterr().err
    from etc_fast.runner import replay_run

    report = replay_run(tmp_path / "out")
    assert report.ok and report.n_replayed == 0, "failed trials hold nothing to re-score"


def test_an_unreachable_judge_is_asked_again_on_resume(tmp_path, capsys):
    judge_up = {"up": False}
    inner = model_like(1)

    def script(body, index):
        judge_call = len(body["messages"]) == 1
        if judge_call and not judge_up["up"]:
            return error(503)
        return inner(body, index)

    with ChatServer(script, models=["test-model", "gpt41"]) as srv:
        cfg = write_config(tmp_path, srv.base_url, rollouts=2, judge="llm", max_retries=0)
        assert run(cfg, tmp_path / "out") == 4
        rows = summaries(tmp_path / "out")
        assert all(r["status"] == "completed" and r["judge_status"] == "error" and not r["credited"] for r in rows)
        assert "judge: 2" in capsys.readouterr().err
        policy_calls = sum(1 for b in srv.requests if len(b["messages"]) > 1)
        judge_up["up"] = True
        assert run(cfg, tmp_path / "out") == 0
        assert sum(1 for b in srv.requests if len(b["messages"]) > 1) == policy_calls, "the trials were not played again"
    rows = summaries(tmp_path / "out")
    # The two trials submitted the same law: the second verdict comes from the cache.
    assert [(r["judge_status"], r["credited"], r["judge_calls_paid"] + r["judge_calls_cached"]) for r in rows] == [("ok", True, 1)] * 2
    assert sum(r["judge_calls_paid"] for r in rows) == 1
    rec = json.loads((tmp_path / "out" / read_trials(tmp_path / "out" / "trials.jsonl")[0]["transcript"]).read_text())
    assert [m["role"] for m in rec["chat"] if "role" in m] == ["system", "user", "assistant", "user", "assistant"]


def test_a_cut_reply_is_a_turn_and_max_tokens_is_sent(tmp_path):
    def script(body, index):
        turn = sum(1 for m in body["messages"] if m["role"] == "assistant")
        if turn == 0:
            return Reply(content="<run_experiment>[{\"mass1\": 1,", finish_reason="length", completion_tokens=16)
        return model_like(0)(body, index)

    with ChatServer(script, models=["test-model"]) as srv:
        assert run(write_config(tmp_path, srv.base_url, rollouts=1, max_tokens=16), tmp_path / "out") == 0
        assert all(b.get("max_tokens") == 16 for b in srv.requests)
    rec = json.loads((tmp_path / "out" / read_trials(tmp_path / "out" / "trials.jsonl")[0]["transcript"]).read_text())
    first = [e for e in rec["events"] if "action" in e][0]
    assert first["action"]["kind"] == "invalid" and "finish_reason: length" in first["action"]["error"]
