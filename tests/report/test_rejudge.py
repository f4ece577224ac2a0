"""``python -m etc_fast.report RUN_DIR --rejudge JUDGE``: stored submissions judged again, tables rewritten."""

import json

import polars as pl
import pytest

from etc_fast.report.__main__ import main
from etc_fast.runner import check_manifest, write_manifest


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    from etc_fast.runner import load_config, run_config

    out = tmp_path_factory.mktemp("run") / "smoke"
    import dataclasses

    cfg = dataclasses.replace(load_config("configs/smoke.yaml"), out=str(out), workers=1)
    run_config(cfg)
    return out


def _summaries(root):
    return [json.loads(line)["summary"] for line in (root / "trials.jsonl").read_text().splitlines()]


def test_rejudge_rewrites_verdicts_and_names_the_judge(run_dir, capsys):
    before = _summaries(run_dir)
    assert any(s["credited"] for s in before)
    # damage the stored verdicts: re-judging restores them from the stored sources
    lines = []
    for line in (run_dir / "trials.jsonl").read_text().splitlines():
        e = json.loads(line)
        e["summary"]["credited"] = not e["summary"]["credited"]
        lines.append(json.dumps(e, sort_keys=True))
    (run_dir / "trials.jsonl").write_text("\n".join(lines) + "\n")
    # edited by hand, the results no longer match their manifest: nothing is re-judged
    assert main([str(run_dir), "--rejudge", "structural", "--draws", "50"]) == 2
    assert "no longer matches its manifest" in capsys.readouterr().err
    assert [s["credited"] for s in _summaries(run_dir)] == [not s["credited"] for s in before]
    # stored that way by a run (as an older judge would have): re-judging restores the verdicts
    write_manifest(run_dir)
    assert main([str(run_dir), "--rejudge", "structural", "--draws", "50"]) == 0
    err = capsys.readouterr().err
    assert f"{len(before)} verdicts changed" in err
    after = _summaries(run_dir)
    assert [s["credited"] for s in after] == [s["credited"] for s in before]
    assert all(s["judge"] == "structural" and s["judge_reason"] for s in after)
    info = json.loads((run_dir / "judge.json").read_text())
    from etc_fast.evaluate._structural import JUDGE_VERSION

    assert info["judge"] == "structural" and info["version"] == JUDGE_VERSION and info["n_changed"] == len(before)
    pq = pl.read_parquet(run_dir / "trials.parquet")
    assert pq.get_column("credited").to_list() == [s["credited"] for s in before]
    md = (run_dir / "report" / "report.md").read_text()
    label = f"structural v{JUDGE_VERSION}"
    assert f"Judge: **{label}**" in md
    n_tables = len(list((run_dir / "report").glob("*.parquet")))
    assert n_tables >= 13  # the paper's ten, the budget curve, the paired comparisons and the power table
    assert md.count(f"Credit and SA: judge {label}.") == n_tables  # one per table (NewtonBench aggregation included)
    assert check_manifest(run_dir) == []


def test_rejudge_unknown_judge(run_dir, capsys):
    assert main([str(run_dir), "--rejudge", "oracle"]) == 2
    assert "unknown judge" in capsys.readouterr().err


def test_a_submission_the_judge_reaches_no_verdict_on_is_no_result(run_dir, monkeypatch, capsys):
    from etc_fast.evaluate import _judge_client, _structural
    from etc_fast.evaluate._judge import Verdict
    from etc_fast.report import load_trials

    before = _summaries(run_dir)
    judged = sum(1 for s in before if s["status"] != "failed")
    monkeypatch.setattr(_structural, "_VERDICTS", {})  # nothing remembered from the run
    monkeypatch.setattr(_judge_client, "verdict_in_worker", lambda *a, **k: (
        Verdict("structural", False, "structural judge stopped: no verdict within 60 s"), _judge_client.TIME_LIMIT))
    assert main([str(run_dir), "--rejudge", "structural", "--draws", "50"]) == 0
    assert f"warning: {judged} submission(s) got no verdict" in capsys.readouterr().err
    after = _summaries(run_dir)
    assert all(s["judge_status"] == "error" and not s["credited"] and "no verdict within 60 s" in s["judge_reason"]
               for s in after if s["status"] != "failed")
    frame = load_trials(run_dir)  # the report's reading: no verdict, no result
    assert frame.get_column("status").to_list() == ["failed"] * len(before)
    assert all("no verdict within 60 s" in e for e in frame.get_column("error").to_list())
    assert f"{len(before)} failed" in (run_dir / "report" / "report.md").read_text()
    monkeypatch.undo()  # the judge reaches its verdicts again: the trials are results again
    assert main([str(run_dir), "--rejudge", "structural", "--draws", "50"]) == 0
    again = _summaries(run_dir)
    assert [s["credited"] for s in again] == [s["credited"] for s in before]
    assert all(s.get("judge_status", "ok") == "ok" for s in again)
    assert "failed" not in load_trials(run_dir).get_column("status").to_list()


def test_a_deadline_an_older_judge_stored_as_not_credited_is_judged_again_on_resume(run_dir):
    import dataclasses

    from etc_fast.report import load_trials
    from etc_fast.runner import load_config, read_trials, run_config
    from etc_fast.store import STOPPED_REASON

    lines = (run_dir / "trials.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    want = dict(first["summary"])
    first["summary"].update(credited=False, judge_reason=f"{STOPPED_REASON} 60 s", judge_status="ok")
    lines[0] = json.dumps(first, sort_keys=True)
    (run_dir / "trials.jsonl").write_text("\n".join(lines) + "\n")
    write_manifest(run_dir)  # stored that way by a run, as the older judge did
    assert load_trials(run_dir).get_column("status").to_list()[0] == "failed"  # no result in the report
    result = run_config(dataclasses.replace(load_config("configs/smoke.yaml"), out=str(run_dir), workers=1))
    assert result.rejudged == 1 and result.ran == 0
    entry = {e["trial_id"]: e for e in read_trials(run_dir / "trials.jsonl")}[first["trial_id"]]
    assert (entry["summary"]["credited"], entry["summary"]["judge_reason"]) == (want["credited"], want["judge_reason"])


def test_a_submission_that_fails_the_pre_check_is_not_sent_to_the_judge(run_dir, monkeypatch):
    from etc_fast.evaluate._structural import StructuralJudge
    from etc_fast.report._rejudge import rejudge_run

    entries = [json.loads(line) for line in (run_dir / "trials.jsonl").read_text().splitlines()]
    judged = [e for e in entries if e["summary"]["status"] != "failed"]
    path = run_dir / judged[0]["transcript"]
    stored = path.read_text()
    record = json.loads(stored)
    record["final_source"] = "def discovered_law(*args):\n    return 1.0\n"  # not the task's signature
    path.write_text(json.dumps(record))
    calls = []
    real = StructuralJudge.judge
    monkeypatch.setattr(StructuralJudge, "judge", lambda self, source, task: calls.append(source) or real(self, source, task))
    try:
        info = rejudge_run(run_dir, "structural")
        sources = [json.loads((run_dir / e["transcript"]).read_text()).get("final_source") or "" for e in judged]
        assert record["final_source"] not in calls and calls  # as a run judges it
        assert len(calls) == sum(s.startswith("def discovered_law(") and s != record["final_source"] for s in sources)
        summary = {e["trial_id"]: e for e in map(json.loads, (run_dir / "trials.jsonl").read_text().splitlines())}[
            judged[0]["trial_id"]]["summary"]
        assert not summary["credited"] and summary["judge_reason"].startswith("not judged:")
        assert summary.get("judge_status", "ok") == "ok" and info["n_judged"] >= len(calls) + 1
    finally:
        path.write_text(stored)
        monkeypatch.undo()
        rejudge_run(run_dir, "structural")
        write_manifest(run_dir)
