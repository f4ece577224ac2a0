"""python -m etc_fast.results pack / unpack: a run's trial lines travel in an archive folder and come
back as a run directory that resumes and reports like the one that never moved."""

import json
import lzma

import polars as pl

from etc_fast.results.__main__ import main
from etc_fast.runner import parse_config, run_config
from tests.results.conftest import TINY
from tests.runner._fakes import FakeWorker


def _config(out):
    return parse_config({**TINY, "out": str(out), "executor": "threads"}, source="tiny.yaml")


def _table(run):
    return pl.read_parquet(run / "trials.parquet").drop("wall_s", strict=False).sort("trial_id")


def test_a_run_packed_in_parts_unpacks_elsewhere_resumes_and_reports_as_one_run(tmp_path, capsys):
    moved, archive = tmp_path / "moved", tmp_path / "archive"
    run_config(_config(moved), worker=FakeWorker(), tty=False, limit=3)
    assert main(["pack", str(moved), str(archive)]) == 0
    assert "packed 3 new lines" in capsys.readouterr().out
    # on another machine: the archive alone, the rest of the run, packed again
    other = tmp_path / "other"
    assert main(["unpack", str(archive), str(other)]) == 0
    assert (other / "trials.jsonl").read_bytes() == (moved / "trials.jsonl").read_bytes()
    assert sorted(p.name for p in archive.iterdir()) == [
        "archive.json", "config.resolved.yaml", "provenance.json", "trials.0001.jsonl.xz", "versions.json"]
    run_config(_config(other), worker=FakeWorker(), tty=False)
    assert main(["pack", str(other), str(archive)]) == 0
    assert "packed 5 new lines" in capsys.readouterr().out
    assert main(["pack", str(other), str(archive)]) == 0
    assert "nothing new" in capsys.readouterr().out
    index = json.loads((archive / "archive.json").read_text())
    assert [(s["file"], s["lines"]) for s in index["shards"]] == [("trials.0001.jsonl.xz", 3), ("trials.0002.jsonl.xz", 5)]
    # its results are those of the run made in one place, and it resumes with nothing left to do
    whole = tmp_path / "whole"
    run_config(_config(whole), worker=FakeWorker(), tty=False)
    again = tmp_path / "again"
    assert main(["unpack", str(archive), str(again)]) == 0
    run_config(_config(again), worker=FakeWorker(), tty=False)
    assert (again / "trials.jsonl").read_bytes() == (other / "trials.jsonl").read_bytes()
    assert _table(again).equals(_table(whole))
    assert (again / "report").is_dir()


def test_a_pack_takes_only_complete_lines(tmp_path, capsys):
    run, archive = tmp_path / "run", tmp_path / "archive"
    run_config(_config(run), worker=FakeWorker(), tty=False, limit=2)
    with open(run / "trials.jsonl", "ab") as fh:
        fh.write(b'{"trial_id": "half a line')  # a line being written
    assert main(["pack", str(run), str(archive)]) == 0
    data = lzma.decompress((archive / "trials.0001.jsonl.xz").read_bytes())
    assert data.count(b"\n") == 2 and b"half a line" not in data


def test_bad_archives_and_runs_are_refused_with_exit_2_and_nothing_written(tmp_path, capsys):
    a, b, archive = tmp_path / "a", tmp_path / "b", tmp_path / "archive"
    run_config(_config(a), worker=FakeWorker(), tty=False, limit=3)
    cfg_b = parse_config({**TINY, "name": "other", "out": str(b), "executor": "threads",
                          "grids": [{**TINY["grids"][0], "rollouts": 1}]}, source="other.yaml")
    run_config(cfg_b, worker=FakeWorker(), tty=False, limit=2)
    assert main(["pack", str(a), str(archive)]) == 0
    before = {p.name: p.read_bytes() for p in archive.iterdir()}
    capsys.readouterr()
    # another run's lines are not a continuation of this archive
    assert main(["pack", str(b), str(archive)]) == 2
    assert "does not begin with the 3 lines packed" in capsys.readouterr().err
    assert {p.name: p.read_bytes() for p in archive.iterdir()} == before
    # a run directory with no trials
    assert main(["pack", str(tmp_path / "nowhere"), str(archive)]) == 2
    assert "no such file" in capsys.readouterr().err
    # unpacking over another run's lines
    assert main(["unpack", str(archive), str(b)]) == 2
    assert "already holds trials other than the archive's" in capsys.readouterr().err
    # not an archive
    assert main(["unpack", str(a), str(tmp_path / "c")]) == 2
    assert "not an archive made by `results pack`" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
    # a damaged shard
    shard = archive / "trials.0001.jsonl.xz"
    data = lzma.decompress(shard.read_bytes())
    shard.write_bytes(lzma.compress(data.replace(b'"credited": true', b'"credited": false', 1)))
    assert main(["unpack", str(archive), str(tmp_path / "d")]) == 2
    assert "the archive is damaged" in capsys.readouterr().err
    assert not (tmp_path / "d").exists()


def test_an_unpacked_trial_whose_judge_gave_no_verdict_is_played_again(tmp_path, capsys):
    # Its transcript held the play that a new judge would read; an archive has none.
    run, archive, moved = tmp_path / "run", tmp_path / "archive", tmp_path / "moved"
    run_config(_config(run), worker=FakeWorker(), tty=False, limit=2)
    lines = (run / "trials.jsonl").read_text().splitlines()
    entry = json.loads(lines[-1])
    entry["summary"].update(judge_status="error", credited=False)
    (run / "trials.jsonl").write_text("\n".join([*lines[:-1], json.dumps(entry)]) + "\n")
    assert main(["pack", str(run), str(archive)]) == 0
    assert main(["unpack", str(archive), str(moved)]) == 0
    run_config(_config(moved), worker=FakeWorker(), tty=False, limit=1)
    out = capsys.readouterr()
    assert "running again 1 trial(s)" in out.out + out.err
    stored = [json.loads(line) for line in (moved / "trials.jsonl").read_text().splitlines()]
    assert len(stored) == 3 and stored[-1]["trial_id"] == entry["trial_id"]
    assert stored[-1]["summary"]["judge_status"] == "ok"
