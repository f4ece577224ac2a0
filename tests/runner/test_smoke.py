"""configs/smoke.yaml end to end with the real protocol, symbolic policy, structural judge and sandbox."""

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from etc_fast.run import main
from etc_fast.runner import TRIALS_SCHEMA, check_manifest, file_hashes, load_config, replay_run

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("smoke") / "run"
    assert main([str(REPO / "configs" / "smoke.yaml"), "--out", str(out), "--workers", "2"]) == 0
    return out


def test_smoke_config_end_to_end(smoke_run):
    cfg = load_config(REPO / "configs" / "smoke.yaml")
    frame = pl.read_parquet(smoke_run / "trials.parquet")
    assert frame.schema == TRIALS_SCHEMA
    assert frame.height == 6 == len(list((smoke_run / "transcripts").glob("*.json")))
    assert set(frame["configuration"]) == set(cfg.grids[0].configurations)
    assert (frame["status"] != "failed").all() and (frame["measurements"] > 0).all()
    assert (frame["judge"] == "structural").all()
    for name in ("report.md", "table1_families.csv", "table_s3_coverage.parquet", "coverage_curves.png"):
        assert (smoke_run / "report" / name).exists(), name
    assert check_manifest(smoke_run) == []
    # a second invocation resumes: nothing left to run
    assert main([str(REPO / "configs" / "smoke.yaml"), "--out", str(smoke_run), "--no-report"]) == 0
    assert len((smoke_run / "trials.jsonl").read_text().splitlines()) == 6


def test_replay_reproduces_and_leaves_data_unchanged(smoke_run):
    before = file_hashes(smoke_run)
    rep = replay_run(smoke_run, workers=2)
    assert rep.ok, rep.to_text()
    assert rep.n_replayed == 6 and rep.unchanged and rep.manifest_problems == ()
    assert file_hashes(smoke_run) == before


def test_replay_detects_a_tampered_metric(smoke_run, tmp_path):
    run = tmp_path / "tampered"
    shutil.copytree(smoke_run, run)
    first = json.loads((run / "trials.jsonl").read_text().splitlines()[0])
    tpath = run / first["transcript"]
    rec = json.loads(tpath.read_text())
    rec["evaluation"]["rmsle"] = 0.123
    tpath.write_text(json.dumps(rec, sort_keys=True))
    rep = replay_run(run)
    assert not rep.ok and rep.unchanged
    fields = {(d.trial_id, d.where, d.field) for d in rep.differences}
    assert (first["trial_id"], "transcript", "rmsle") in fields
    assert (first["trial_id"], "trials.jsonl", "transcript_sha256") in fields
    assert rep.manifest_problems == (f"{first['transcript']}: SHA-256 differs from the manifest",)
