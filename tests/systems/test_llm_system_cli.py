"""``python -m etc_fast.run configs/systems.yaml --model gpt-4.1-mini``: without a key it says what is
missing (exit 2); against the stand-in server a narrowed copy of the config runs planners and
baselines on both systems."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from etc_fast.run import main
from etc_fast.runner import read_trials
from tests.llm._server import ChatServer, model_like

ROOT = Path(__file__).resolve().parents[2]


def test_without_a_key_the_cli_names_what_is_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    code = main([str(ROOT / "configs" / "systems.yaml"), "--model", "gpt-4.1-mini", "--out", str(tmp_path / "out"), "--no-report"])
    assert code == 2
    err = capsys.readouterr().err
    assert "no API key for model 'gpt-4.1-mini'" in err and "OPENAI_API_KEY" in err and "base_url" in err
    assert not (tmp_path / "out" / "trials.jsonl").exists()


def test_a_narrowed_systems_config_runs_against_the_stand_in(tmp_path, capsys):
    cfg = yaml.safe_load((ROOT / "configs" / "systems.yaml").read_text())
    grid = cfg["grids"][0]
    grid.update(configurations=["baseline_n", "variance_c"], tasks=["m0_gravity"], difficulties=["easy"], rollouts=1)
    with ChatServer(model_like(2), max_requests=100, models=["test-model"]) as srv:
        cfg["llm"] = {"base_url": srv.base_url, "timeout_s": 5, "max_retries": 2, "cache": {"mode": "off"}}
        path = tmp_path / "narrow.yaml"
        path.write_text(yaml.safe_dump(cfg))
        code = main([str(path), "--model", "gpt-4.1-mini", "--out", str(tmp_path / "out"), "--no-report"])
        bodies = list(srv.requests)
    assert code == 0
    progress = capsys.readouterr().err
    assert " m0_gravity simple_system easy variance_c r0 ok " in progress and " m0_gravity complex_system easy baseline_n r0 ok " in progress
    entries = read_trials(tmp_path / "out" / "trials.jsonl")
    rows = sorted((e["summary"]["system"], e["spec"]["config"]["name"], e["summary"]["status"]) for e in entries)
    assert rows == [(s, c, "completed") for s in ("complex_system", "simple_system") for c in ("baseline_n", "variance_c")]
    assert all(b["model"] == "gpt-4.1-mini" for b in bodies)
    firsts = [b["messages"][1]["content"] for b in bodies if len(b["messages"]) == 2]
    assert sum("Experiments so far (" in t and "Derived law values:" in t for t in firsts) == 2  # the planners
    assert sum("Experimental apparatus" in t and "xperiments so far" not in t and "All experiments (" not in t for t in firsts) == 2  # baselines
    assert sum(t.count("All experiments (") == 1 for t in firsts) == 2  # the planners' syntheses
    assert sum("Experimental apparatus: A 2-D plane" in t for t in firsts) == 3  # complex: baseline, explore, synthesis
    for e in entries:  # the stored transcript holds the prompts as sent
        record = json.loads((tmp_path / "out" / "transcripts" / f"{e['trial_id']}.json").read_text())
        sent = [m["content"] for m in record["chat"] if m.get("role") in ("system", "user")]
        assert all(any(s == m["content"] for b in bodies for m in b["messages"]) for s in sent)
