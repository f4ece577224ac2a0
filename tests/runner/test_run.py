import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import yaml

from etc_fast.run import main
from etc_fast.runner import _replay, check_manifest, expand_grid, read_trials, replay_run, run_config
from tests.runner._fakes import FakeWorker, fake_evaluation

REPO = Path(__file__).resolve().parents[2]


def _records(out):
    recs = {}
    for e in read_trials(Path(out) / "trials.jsonl"):
        rec = json.loads((Path(out) / e["transcript"]).read_text())
        rec.pop("wall_s")
        recs[e["trial_id"]] = rec
    return recs


def test_run_resume_limit_and_report(small_config, capsys):
    res = run_config(small_config, worker=FakeWorker(), limit=5, tty=False)
    assert (res.total, res.ran, res.skipped) == (24, 5, 0)
    err = capsys.readouterr().err
    assert "[5/24] " in err and " r0 " in err and "(ETA " in err
    res = run_config(small_config, worker=FakeWorker(), tty=False)
    assert (res.ran, res.skipped) == (19, 5)
    res = run_config(small_config, worker=FakeWorker(), tty=False)
    assert (res.ran, res.skipped) == (0, 24)
    out = Path(small_config.out)
    ids = [e["trial_id"] for e in read_trials(out / "trials.jsonl")]
    assert sorted(ids) == sorted(s.trial_id for s in expand_grid(small_config))
    assert pl.read_parquet(out / "trials.parquet").height == 24
    assert res.report == out / "report" / "report.md" and res.report_error is None
    assert check_manifest(out) == []


def test_tty_progress_bar(small_config, capsys):
    run_config(small_config, worker=FakeWorker(), limit=3, tty=True, report=False)
    err = capsys.readouterr().err
    assert err.count("\r[") == 3 and "3/24 failed 0" in err and "ETA" in err


_KILL_SCRIPT = """
import sys
from etc_fast.runner import parse_config, run_config
from tests.runner._fakes import FakeWorker
from tests.runner.conftest import SMALL
cfg = parse_config({**SMALL, "out": sys.argv[1], "workers": 2})
run_config(cfg, worker=FakeWorker(sleep_s=0.25), report=False)
"""


def test_sigkill_then_resume_runs_every_trial_exactly_once(tmp_path, small_config):
    out = tmp_path / "killed"
    proc = subprocess.Popen(
        [sys.executable, "-c", _KILL_SCRIPT, str(out)], cwd=REPO, start_new_session=True,
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )
    jl = out / "trials.jsonl"
    deadline = time.monotonic() + 45
    while time.monotonic() < deadline:
        if jl.exists() and jl.read_bytes().count(b"\n") >= 4:
            break
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    done = len(read_trials(jl))
    assert 4 <= done < 24, done

    cfg = small_config.with_overrides(out=str(out))
    res = run_config(cfg, worker=FakeWorker(), tty=False, report=False)
    assert res.skipped == done and res.ran == 24 - done
    lines = [json.loads(x) for x in jl.read_text().splitlines()]
    assert len(lines) == 24 and len({x["trial_id"] for x in lines}) == 24

    ref = run_config(small_config, worker=FakeWorker(), tty=False, report=False)
    assert ref.ran == 24
    assert _records(out) == _records(small_config.out)


def test_preflight_error_exits_2_before_anything_runs(tmp_path, capsys):
    cfg = {
        "name": "needs_key", "out": str(tmp_path / "out"), "judge": "none",
        "llm": {"api_key_env": "ETC_FAST_TEST_NO_SUCH_KEY"},
        "grids": [{"model": "gpt41mini", "configurations": ["baseline_n"], "tasks": ["m0_gravity"]}],
    }
    p = tmp_path / "c.yaml"
    p.write_text(yaml.safe_dump(cfg))
    assert main([str(p)]) == 2
    err = capsys.readouterr().err
    assert "cannot start the run" in err and "ETC_FAST_TEST_NO_SUCH_KEY" in err
    assert not (tmp_path / "out").exists()


def test_run_dir_of_other_config_exits_2(small_config, tmp_path, capsys):
    run_config(small_config, worker=FakeWorker(), limit=1, report=False, tty=False)
    p = tmp_path / "smoke.yaml"
    p.write_text((REPO / "configs" / "smoke.yaml").read_text())
    assert main([str(p), "--out", small_config.out]) == 2
    assert "new --out" in capsys.readouterr().err


def test_replay_with_recomputed_metrics(small_config, monkeypatch):
    run_config(small_config, worker=FakeWorker(), tty=False)
    monkeypatch.setattr(_replay, "_load_task", lambda spec: spec.task)
    monkeypatch.setattr(_replay, "_evaluate", lambda source, task, limits: fake_evaluation(source))
    out = Path(small_config.out)
    rep = replay_run(out)
    assert rep.ok and rep.n_replayed == 24 and rep.unchanged and not rep.manifest_problems, rep.to_text()
    assert "stored data unchanged" in rep.to_text()

    # tamper with one stored metric in the results file
    lines = (out / "trials.jsonl").read_text().splitlines()
    entry = json.loads(lines[3])
    old = entry["summary"]["n_finite_pred"]
    entry["summary"]["n_finite_pred"] = old + 1
    lines[3] = json.dumps(entry, sort_keys=True)
    (out / "trials.jsonl").write_text("\n".join(lines) + "\n")
    rep = replay_run(out)
    assert not rep.ok and rep.unchanged
    assert [(d.trial_id, d.where, d.field, d.stored, d.replayed) for d in rep.differences] == [
        (entry["trial_id"], "trials.jsonl", "n_finite_pred", old + 1, old)
    ]
    assert rep.manifest_problems == ("trials.jsonl: SHA-256 differs from the manifest",)


def test_edited_results_stop_the_next_run_and_the_report(small_config, capsys, monkeypatch):
    from etc_fast.report.__main__ import main as report_main

    run_config(small_config, worker=FakeWorker(), limit=3, tty=False)
    out = Path(small_config.out)
    assert check_manifest(out) == []
    text = (out / "trials.jsonl").read_text()
    (out / "trials.jsonl").write_text(text.replace('"credited": false', '"credited": true', 1).replace('"credited":false', '"credited":true', 1))
    capsys.readouterr()
    monkeypatch.setattr("etc_fast.runner.TrialWorker.from_config", classmethod(lambda cls, cfg: FakeWorker()))
    cfg_file = out.parent / "small.yaml"
    cfg_file.write_text(yaml.safe_dump(small_config.to_dict()))
    assert main([str(cfg_file)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no longer matches its manifest" in err and "trials.jsonl" in err
    assert report_main([str(out)]) == 2
    err = capsys.readouterr().err
    assert "no longer matches its manifest" in err and "Traceback" not in err
