import dataclasses
import json
import math

import polars as pl
import pytest

from etc_fast.protocol import SUMMARY_COLUMNS, TrialRecord
from etc_fast.runner import (
    TRIALS_SCHEMA,
    RunDirError,
    RunStore,
    check_manifest,
    expand_grid,
    read_trials,
    write_manifest,
)
from tests.runner._fakes import FakeWorker


def _records(cfg, n):
    w = FakeWorker()
    return [w.run_trial(s).to_dict() for s in expand_grid(cfg)[:n]]


def test_append_writes_transcript_then_line(small_config):
    recs = _records(small_config, 3)
    with RunStore.open(small_config) as store:
        for r in recs:
            entry = store.append(r)
            assert store.transcript_path(r["trial_id"]).exists()
            assert entry["summary"]["trial_id"] == r["trial_id"]
        with pytest.raises(RunDirError, match="already stored"):
            store.append(recs[0])
    entries = read_trials(store.trials_path)
    assert [e["trial_id"] for e in entries] == [r["trial_id"] for r in recs]
    stored = json.loads(store.transcript_path(recs[1]["trial_id"]).read_text())
    assert stored == json.loads(json.dumps(recs[1]))
    assert TrialRecord.from_dict(stored).summary()["measurements"] == recs[1]["measurements"]
    for name in ("config.resolved.yaml", "versions.json"):
        assert (store.root / name).exists()
    versions = json.loads((store.root / "versions.json").read_text())
    assert {"python", "numpy", "numba", "scipy", "polars", "openai", "etc_fast", "platform"} <= set(versions)


def test_torn_last_line_is_dropped_and_truncated(small_config):
    recs = _records(small_config, 3)
    with RunStore.open(small_config) as store:
        for r in recs[:2]:
            store.append(r)
    path = store.trials_path
    good = path.read_bytes()
    path.write_bytes(good + b'{"trial_id": "abc", "summ')  # killed mid-write
    with pytest.warns(RuntimeWarning, match="torn last line"):
        assert len(read_trials(path)) == 2
    assert path.read_bytes().endswith(b'"summ')  # reading alone does not modify
    with pytest.warns(RuntimeWarning, match="truncated"):
        with RunStore.open(small_config) as store:
            assert store.finished == {r["trial_id"] for r in recs[:2]}
            store.append(recs[2])
    assert path.read_bytes().startswith(good)
    assert [e["trial_id"] for e in read_trials(path)] == [r["trial_id"] for r in recs]


def test_damaged_middle_line_is_an_error(small_config):
    recs = _records(small_config, 2)
    with RunStore.open(small_config) as store:
        for r in recs:
            store.append(r)
    lines = store.trials_path.read_bytes().split(b"\n")
    store.trials_path.write_bytes(b"\n".join([lines[0][:-5], *lines[1:]]))
    with pytest.raises(RunDirError, match="line 1 is not a valid trial entry"):
        read_trials(store.trials_path)


def test_resume_refuses_a_different_grid(small_config):
    RunStore.open(small_config).close()
    # workers / executor do not change results: fine
    RunStore.open(small_config.with_overrides(workers=1)).close()
    other = small_config.with_overrides(model="local-model")
    with pytest.raises(RunDirError, match=r"different configuration \(grids\[0\]\.model: stored 'symbolic', now 'local-model'\).*new --out"):
        RunStore.open(other)
    changed = dataclasses.replace(small_config, judge="structural")
    with pytest.raises(RunDirError, match="judge"):
        RunStore.open(changed)


def test_second_writer_is_refused(small_config):
    with RunStore.open(small_config):
        with pytest.raises(RunDirError, match="another run"):
            RunStore.open(small_config)


def test_parquet_schema_and_values(small_config):
    recs = _records(small_config, 24)
    with RunStore.open(small_config) as store:
        for r in recs:
            store.append(r)
        path = store.export_parquet()
    frame = pl.read_parquet(path)
    assert frame.schema == TRIALS_SCHEMA
    assert frame.columns == list(SUMMARY_COLUMNS)
    assert frame.height == 24
    want = [TrialRecord.from_dict(r).summary() for r in recs]
    got = frame.to_dicts()
    for w, g in zip(want, got):
        for col in SUMMARY_COLUMNS:
            if isinstance(w[col], float) and math.isnan(w[col]):
                assert math.isnan(g[col]), col
            else:
                assert g[col] == w[col], col
    assert any(math.isnan(v) for v in frame["rmsle"].to_list())  # NaN survives as NaN, not null


def test_manifest_detects_changes(small_config):
    recs = _records(small_config, 2)
    with RunStore.open(small_config) as store:
        for r in recs:
            store.append(r)
    hashes = write_manifest(store.root)
    assert "trials.jsonl" in hashes and f"transcripts/{recs[0]['trial_id']}.json" in hashes
    assert check_manifest(store.root) == []
    t = store.transcript_path(recs[0]["trial_id"])
    t.write_text(t.read_text().replace('"fake"', '"faked"'))
    assert check_manifest(store.root) == [f"transcripts/{recs[0]['trial_id']}.json: SHA-256 differs from the manifest"]


def _other_grid_record(small_config):
    """A finished trial of another grid (another task), as another run would store it."""
    other = dataclasses.replace(small_config, grids=(dataclasses.replace(small_config.grids[0], tasks=("m1_coulomb_force",)),))
    return FakeWorker().run_trial(expand_grid(other)[0]).to_dict()


def test_a_line_from_another_grid_is_refused_not_adopted(small_config):
    recs = _records(small_config, 2)
    with RunStore.open(small_config) as store:
        for r in recs:
            store.append(r)
    foreign = _other_grid_record(small_config)
    # a line of another run copied in (its transcript too): well-formed, but not a trial of this grid
    with RunStore(store.root.parent / "elsewhere") as other_store:
        line = json.dumps(other_store.append(foreign), sort_keys=True)
    with open(store.trials_path, "a") as fh:
        fh.write(line + "\n")
    before = store.trials_path.read_bytes()
    with pytest.raises(RunDirError, match=r"trials\.jsonl: line 3: trial .*m1_coulomb_force.*not in the run's grid.*never adopted"):
        RunStore.open(small_config)
    assert store.trials_path.read_bytes() == before  # nothing was changed


def test_a_line_whose_spec_was_edited_is_refused(small_config):
    recs = _records(small_config, 2)
    with RunStore.open(small_config) as store:
        for r in recs:
            store.append(r)
    lines = store.trials_path.read_text().splitlines()
    entry = json.loads(lines[1])
    entry["spec"]["rollout"] = 7
    store.trials_path.write_text(lines[0] + "\n" + json.dumps(entry) + "\n")
    with pytest.raises(RunDirError, match="line 2: .*does not hash to its trial id"):
        RunStore.open(small_config)


def test_manifest_is_verified_before_any_rewrite(small_config):
    recs = _records(small_config, 2)
    with RunStore.open(small_config) as store:
        store.append(recs[0])
    write_manifest(store.root)
    with RunStore.open(small_config) as store:  # a clean directory reopens; the manifest goes while it writes
        assert not (store.root / "manifest.sha256").exists()
        store.append(recs[1])
    write_manifest(store.root)
    # edit a stored result by hand: the next invocation stops before writing anything
    text = store.trials_path.read_text()
    store.trials_path.write_text(text.replace('"measurements": ', '"measurements": 1', 1))
    snapshot = {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file()}
    with pytest.raises(RunDirError, match=r"manifest\.sha256: .*trials\.jsonl: SHA-256 differs.*nothing was changed"):
        RunStore.open(small_config)
    assert {p: p.read_bytes() for p in store.root.rglob("*") if p.is_file()} == snapshot


def test_a_line_written_by_an_earlier_protocol_version_is_named_as_such(small_config):
    import hashlib

    recs = _records(small_config, 1)
    with RunStore.open(small_config) as store:
        store.append(recs[0])
    # the same trial as an earlier version stored it: its spec lacked a field this version records
    entry = json.loads(store.trials_path.read_text())
    del entry["spec"]["config"]["synthesis_diagnostics"]
    blob = json.dumps(entry["spec"], sort_keys=True, separators=(",", ":"))
    entry["trial_id"] = entry["summary"]["trial_id"] = hashlib.sha256(blob.encode()).hexdigest()[:16]
    store.trials_path.write_text(json.dumps(entry) + "\n")
    with pytest.raises(RunDirError, match="line 1: .*earlier version of etc_fast.*new --out"):
        RunStore.open(small_config)


def test_files_written_whole_get_the_mode_of_a_plain_write(tmp_path):
    """atomic_write goes through a private temporary file; the result is not private: 0666 less the
    umask for a new file (a viewer page or a results page others may read), the old mode on replace."""
    import os
    import stat

    from etc_fast.store import atomic_write

    old = os.umask(0o022)
    try:
        atomic_write(tmp_path / "page.html", b"x")
        assert stat.S_IMODE((tmp_path / "page.html").stat().st_mode) == 0o644
        os.umask(0o077)
        atomic_write(tmp_path / "private.json", b"x")
        assert stat.S_IMODE((tmp_path / "private.json").stat().st_mode) == 0o600
        (tmp_path / "page.html").chmod(0o640)
        atomic_write(tmp_path / "page.html", b"y")
        assert stat.S_IMODE((tmp_path / "page.html").stat().st_mode) == 0o640
        assert (tmp_path / "page.html").read_bytes() == b"y"
        assert sorted(p.name for p in tmp_path.iterdir()) == ["page.html", "private.json"]  # no temporary left
    finally:
        os.umask(old)


def test_no_verdict_is_one_rule_for_a_summary_and_for_a_table():
    import polars as pl

    from etc_fast.store import STOPPED_REASON, no_verdict, no_verdict_expr

    summaries = [
        {"judge_status": "ok", "judge_reason": "same law"},
        {"judge_status": "error", "judge_reason": "judge unavailable: no reply"},
        {"judge_status": "ok", "judge_reason": f"{STOPPED_REASON} 60 s"},
        {"judge_status": None, "judge_reason": None},
        {"judge_status": "ok", "judge_reason": f"not the law; {STOPPED_REASON}"},  # only a reason that begins so
    ]
    frame = pl.DataFrame(summaries, schema={"judge_status": pl.String, "judge_reason": pl.String})
    assert frame.select(no_verdict_expr(frame.columns)).to_series().to_list() == [no_verdict(s) for s in summaries]
    assert [no_verdict(s) for s in summaries] == [False, True, True, False, False]
    # a table without the columns (a run from before they existed) has every verdict
    assert frame.drop("judge_reason").select(no_verdict_expr(["judge_status"])).to_series().to_list() == [
        no_verdict({"judge_status": s["judge_status"]}) for s in summaries]
    assert pl.DataFrame({"x": [1]}).select(no_verdict_expr(["x"])).to_series().to_list() == [False]
    # the judge's own text for a deadline is what the store recognises
    from etc_fast.evaluate import _judge_client

    assert no_verdict({"judge_status": "ok", "judge_reason": _judge_client._stopped(60.0).reason})
