"""A run's identity includes the files its trials read: custom task files are hashed into
``config.resolved.yaml``; a resume refuses an edited one, and the replay names it."""

from __future__ import annotations

import io
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from etc_fast.run import main
from etc_fast.runner import RunDirError, RunStore, load_config, parse_config, run_config, write_manifest
from etc_fast.runner._inputs import changed_inputs, hash_inputs
from etc_fast.runner._run import _inputs_moved
from tests.runner._fakes import FakeWorker

REPO = Path(__file__).resolve().parents[2]
TASK = (
    "name: tiny\ndescription: a tiny law\noutput: {name: y, description: the output}\nvariables:\n"
    "  - {name: v, description: speed, scale: log, low: 0.1, high: 10}\n"
    "law: {law}\n"
)
CONFIG = {"name": "tiny", "workers": 1, "judge": "structural",
          "grids": [{"model": "symbolic", "configurations": ["baseline_n"], "tasks": ["task.yaml"]}]}


def _write_task(where: Path, law: str) -> None:
    (where / "task.yaml").write_text(TASK.replace("{law}", law))


def _snapshot(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _errors(capsys) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("error: ")]


@pytest.fixture(scope="module")
def finished_run(tmp_path_factory):
    """One symbolic trial on ``task.yaml`` (law ``v``) played through the CLI; returns its folder."""
    base = tmp_path_factory.mktemp("inputs")
    _write_task(base, "v")
    (base / "run.yaml").write_text(yaml.safe_dump(CONFIG))
    cwd = os.getcwd()
    os.chdir(base)
    try:
        assert main(["run.yaml", "--out", "out", "--no-report"]) == 0
    finally:
        os.chdir(cwd)
    return base


@pytest.fixture
def run_dir(finished_run, tmp_path, monkeypatch):
    """A private copy of the finished run, its config and task file; the working directory is its folder."""
    for name in ("task.yaml", "run.yaml"):
        shutil.copy(finished_run / name, tmp_path / name)
    shutil.copytree(finished_run / "out", tmp_path / "out")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_the_run_records_each_task_files_hash(run_dir):
    stored = yaml.safe_load((run_dir / "out" / "config.resolved.yaml").read_text())
    assert stored["inputs"] == hash_inputs(["task.yaml"])
    assert len(stored["inputs"]["task.yaml"]) == 64
    # The stored resolved config still loads as a config (its inputs are written by the run, not read)
    assert load_config(run_dir / "out" / "config.resolved.yaml").grids[0].tasks == ("task.yaml",)


def test_an_edited_task_is_refused_and_nothing_changes(run_dir, capsys):
    before = _snapshot(run_dir / "out")
    old = hash_inputs(["task.yaml"])["task.yaml"]
    _write_task(run_dir, "v**2")
    new = hash_inputs(["task.yaml"])["task.yaml"]
    assert main(["run.yaml", "--out", "out", "--no-report"]) == 2
    (err,) = _errors(capsys)
    tid = yaml.safe_load((run_dir / "out" / "trials.jsonl").read_text().splitlines()[0])["trial_id"]
    assert "custom task file task.yaml changed since this run recorded it" in err
    assert f"recorded {old[:12]}, now {new[:12]}" in err
    assert f"1 stored trial read it ({tid})" in err
    assert "nothing was run or changed" in err and "Restore the file" in err and "new --out" in err
    assert _snapshot(run_dir / "out") == before
    # a new --out plays the edited task
    assert main(["run.yaml", "--out", "edited", "--no-report"]) == 0
    assert yaml.safe_load((run_dir / "edited" / "config.resolved.yaml").read_text())["inputs"]["task.yaml"] == new


def test_an_unchanged_or_restored_task_resumes(run_dir, capsys):
    assert main(["run.yaml", "--out", "out", "--no-report"]) == 0
    assert "resuming out: 1 of 1 trials already finished" in capsys.readouterr().err
    _write_task(run_dir, "v**2")
    assert main(["run.yaml", "--out", "out", "--no-report"]) == 2
    assert len(_errors(capsys)) == 1
    _write_task(run_dir, "v")
    assert main(["run.yaml", "--out", "out", "--no-report"]) == 0
    err = capsys.readouterr().err
    assert "1 of 1 trials already finished" in err and "error" not in err


def test_a_run_without_recorded_hashes_resumes_and_records_them(run_dir, capsys):
    out = run_dir / "out"
    path = out / "config.resolved.yaml"
    text = path.read_text()
    path.write_text(text[: text.index("# SHA-256 of the files")])  # as written before the hashes were
    write_manifest(out)
    assert "inputs" not in yaml.safe_load(path.read_text())
    assert main(["run.yaml", "--out", "out", "--no-report"]) == 0
    err = capsys.readouterr().err
    assert "warning: out was written by a version of etc_fast that did not record" in err
    assert "1 of 1 trials already finished" in err
    assert yaml.safe_load(path.read_text())["inputs"] == hash_inputs(["task.yaml"])
    _write_task(run_dir, "v**2")  # from now on an edit is caught
    assert main(["run.yaml", "--out", "out", "--no-report"]) == 2


def _replay(*args):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "etc_fast.replay", *map(str, args)], capture_output=True,
                          text=True, timeout=120, env=env)


def test_replay_names_the_changed_task_file(run_dir):
    r = _replay("out")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "input:" not in r.stdout
    _write_task(run_dir, "v**2")
    r = _replay("out")
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    note = next(i for i, ln in enumerate(lines) if ln.startswith("input: custom task file task.yaml changed"))
    assert "1 stored trial read it" in lines[note]
    assert note < next(i for i, ln in enumerate(lines) if ln.startswith("differences: "))
    assert any("rmsle: stored 0.0" in ln for ln in lines)


def test_replay_says_when_a_run_recorded_no_hashes(run_dir):
    out = run_dir / "out"
    path = out / "config.resolved.yaml"
    text = path.read_text()
    path.write_text(text[: text.index("# SHA-256 of the files")])
    write_manifest(out)
    r = _replay("out", "--json")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "did not record its custom task files' SHA-256 (task.yaml)" in r.stdout


# ----------------------------------------------------------------------------------------
# The library calls, with a stand-in worker
# ----------------------------------------------------------------------------------------
def _config(tmp_path: Path, tasks: list[str]):
    doc = {"name": "t", "workers": 1, "judge": "none", "out": str(tmp_path / "out"),
           "grids": [{"model": "symbolic", "configurations": ["baseline_n", "random_c"], "tasks": tasks}]}
    return parse_config(doc, source="t.yaml")


def test_a_missing_task_file_is_refused(tmp_path):
    _write_task(tmp_path, "v")
    cfg = _config(tmp_path, [str(tmp_path / "task.yaml")])
    run_config(cfg, worker=FakeWorker(), tty=False, report=False, stream=io.StringIO())
    before = _snapshot(tmp_path / "out")
    (tmp_path / "task.yaml").unlink()
    with pytest.raises(RunDirError, match=r"task\.yaml is missing or unreadable .*2 stored trials read it"):
        run_config(cfg, worker=FakeWorker(), tty=False, report=False, stream=io.StringIO())
    assert _snapshot(tmp_path / "out") == before


def test_only_trials_that_read_the_file_count(tmp_path):
    _write_task(tmp_path, "v")
    cfg = _config(tmp_path, [str(tmp_path / "task.yaml"), "m0_gravity"])
    run_config(cfg, worker=FakeWorker(raise_on=(str(tmp_path / "task.yaml"),)), tty=False, report=False,
               stream=io.StringIO())
    # the trials on the task file failed: the next run plays them again, so an edit spoils nothing
    _write_task(tmp_path, "v**2")
    with RunStore.open(cfg) as store:
        assert store.inputs == hash_inputs([str(tmp_path / "task.yaml")])
        assert len(store.entries()) == 4
    entries = store.entries()
    assert changed_inputs({str(tmp_path / "task.yaml"): "0" * 64}, store.inputs, entries)[0].trials == ()


def test_a_file_edited_during_the_run_is_reported(tmp_path):
    _write_task(tmp_path, "v")
    recorded = hash_inputs([str(tmp_path / "task.yaml")])
    stream = io.StringIO()
    _inputs_moved(recorded, stream)
    assert stream.getvalue() == ""
    _write_task(tmp_path, "v**2")
    _inputs_moved(recorded, stream)
    assert "task.yaml changed while the run was going" in stream.getvalue()


def test_an_edited_newtonbench_checkout_is_named(tmp_path):
    root = tmp_path / "nb"
    shutil.copytree(REPO / "tests" / "llm" / "nb_fixture", root)
    doc = {"name": "x", "judge": "structural", "out": str(tmp_path / "run"),
           "llm": {"base_url": "http://127.0.0.1:9/v1", "prompts": "newtonbench", "newtonbench_path": str(root)},
           "grids": [{"model": "test-model", "configurations": ["baseline_n"], "tasks": ["m0_gravity"]}]}
    with RunStore.open(parse_config(doc)):
        pass
    before = _snapshot(tmp_path / "run")
    prompts = root / "modules" / "m0_gravity" / "prompts.py"
    prompts.write_text(prompts.read_text() + "\n# edited\n")
    with pytest.raises(RunDirError, match=r"NewtonBench checkout .* changed since this run recorded it "
                                          r"\(modules/m0_gravity/prompts\.py: SHA-256 recorded [0-9a-f]{12}, now [0-9a-f]{12}\)"):
        RunStore.open(parse_config(doc))
    assert _snapshot(tmp_path / "run") == before
