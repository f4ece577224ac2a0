"""The LLM estimate of ``--dry-run``, the prices field, and the report's estimate-and-actual table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from etc_fast.run import main
from etc_fast.runner import read_trials
from etc_fast.runner._estimate import text_tokens
from tests.llm._server import ChatServer, model_like


def config(tmp_path: Path, base_url: str = "http://127.0.0.1:9/v1", *, configurations=("baseline_n",), rollouts=2,
           out: str | None = None, **llm) -> Path:
    cfg = {
        "name": "estimate", "workers": 2, "judge": "structural",
        "llm": {"base_url": base_url, "timeout_s": 10, "max_retries": 1, "max_tokens": 100,
                "cache": {"path": str(tmp_path / "cache.db"), "mode": "use"}, **llm},
        "grids": [{"model": "test-model", "configurations": list(configurations), "tasks": ["m0_gravity"],
                   "rollouts": rollouts}],
    }
    if out:
        cfg["out"] = out
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize("prices, key, why", [
    ("cheap", "llm.prices", "expected a mapping"),
    ({"test-model": {"prompt": 0.4}}, "llm.prices.test-model.completion", "missing"),
    ({"test-model": {"prompt": -1, "completion": 1}}, "llm.prices.test-model.prompt", ">= 0"),
    ({"test-model": {"prompt": "1$", "completion": 1}}, "llm.prices.test-model.prompt", "not a number"),
    ({"test-model": {"prompt": 1, "completion": 1, "cached": 0.1}}, "llm.prices.test-model", "cached"),
])
def test_bad_prices_exit_2_naming_file_and_key(tmp_path, capsys, prices, key, why):
    path = config(tmp_path, prices=prices)
    assert main([str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and key in err and why in err, err


def test_dry_run_estimates_calls_tokens_and_money_and_writes_nothing(tmp_path, capsys):
    path = config(tmp_path, configurations=("baseline_n", "variance_c"), out=str(tmp_path / "out"),
                  prices={"test-model": {"prompt": 2.0, "completion": 8.0}})
    assert main([str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    line = next(x for x in out.splitlines() if x.strip().startswith("test-model (test-model)"))
    # baseline: 10 rounds + the forced final call; variance_c: 8 exploration turns + 3 synthesis turns
    assert "4 trials, " in line and "-44 calls" in line, line
    assert "replies of 100 tokens" in out and "chars/4" in out
    assert "~$" in line and "no file yet" in out
    assert not (tmp_path / "cache.db").exists() and not (tmp_path / "out").exists()


def test_the_estimate_bounds_a_run_and_the_report_sets_actual_beside_it(tmp_path, capsys):
    with ChatServer(model_like(2), models=["test-model"]) as srv:
        path = config(tmp_path, srv.base_url, configurations=("baseline_n", "variance_n"),
                      prices={"test-model": {"prompt": 1.0, "completion": 1.0}})
        assert main([str(path), "--out", str(tmp_path / "out")]) == 0
    est = json.loads((tmp_path / "out" / "estimate.json").read_text())
    [m] = est["models"]
    rows = [e["summary"] for e in read_trials(tmp_path / "out" / "trials.jsonl")]
    calls = sum(r["llm_calls"] for r in rows)
    assert m["trials"] == len(rows) == 4 and m["calls_min"] <= calls <= m["calls"]
    assert sorted(est["trial_ids"]) == sorted(r["trial_id"] for r in rows)
    # The first call of each trial is its exact prompt, counted as stated (the stand-in server's own
    # counts are scripted, so the text sent is the reference).
    entry = read_trials(tmp_path / "out" / "trials.jsonl")[0]
    record = json.loads((tmp_path / "out" / entry["transcript"]).read_text())
    sent = [c for c in record["chat"] if "role" in c][:2]
    assert [c["role"] for c in sent] == ["system", "user"]
    assert est["shapes"][est["trial_shapes"][entry["trial_id"]]][0] == sum(text_tokens(c["content"]) for c in sent)
    report = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "## LLM calls: estimate and actual" in report
    assert f"| test-model | 4 (4) | {m['calls']} / {calls} / {calls} |" in report
    capsys.readouterr()
    # Once recorded, a fresh run directory replays: the estimate says every first call is cached.
    assert main([str(path), "--dry-run", "--out", str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    assert "first call already cached for 4 trial(s), so <= 0 calls to pay" in out, out
    assert "stored replies" in out
    # And the finished run directory has nothing left to pay.
    assert main([str(path), "--dry-run", "--out", str(tmp_path / "out")]) == 0
    assert "0 pending trial(s) (4 already finished" in capsys.readouterr().out
