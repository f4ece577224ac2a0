"""Careless inputs to the command-line tools: each exits 2 with one line naming the file and field."""

from __future__ import annotations

import errno
import json
from pathlib import Path

import pytest
import yaml

from etc_fast.run import main
from etc_fast.runner import ConfigError, load_config
from tests.runner._fakes import FakeWorker

GRID = {"model": "symbolic", "configurations": ["baseline_n"], "tasks": ["m0_gravity"]}


def _config(tmp_path: Path, doc: dict | str, name: str = "c.yaml") -> Path:
    path = tmp_path / name
    path.write_text(doc if isinstance(doc, str) else yaml.safe_dump(doc))
    return path


def _one_error_line(capsys) -> str:
    """The one error line (progress lines of trials that ran before it aside)."""
    lines = [ln for ln in capsys.readouterr().err.splitlines() if not ln.startswith("[")]
    assert len(lines) == 1 and lines[0].startswith("error: "), lines
    return lines[0]


@pytest.mark.parametrize(
    "text,words",
    [
        ("name: x\ngrids: " + "[" * 50_000 + "]" * 50_000 + "\n", "nested more than 32 levels deep (line 2)"),
        ("name: x\ngrids:\n" + "".join("  " * i + f"- k{i}:\n" for i in range(1, 80)), "nested more than 32 levels deep"),
    ],
    ids=["flow", "block"],
)
def test_deeply_nested_config(tmp_path, capsys, text, words):
    path = _config(tmp_path, text)
    assert main([str(path), "--dry-run"]) == 2
    err = _one_error_line(capsys)
    assert str(path) in err and words in err


def test_non_utf8_config_names_the_file(tmp_path, capsys):
    path = tmp_path / "latin1.yaml"
    path.write_bytes(b"name: caf\xe9\ngrids: []\n")
    assert main([str(path), "--dry-run"]) == 2
    err = _one_error_line(capsys)
    assert f"{path}: not UTF-8 text (byte 0xe9 at offset 9, line 1)" in err


def test_absurd_rollouts_are_refused_before_expansion(tmp_path, capsys):
    path = _config(tmp_path, {"name": "x", "grids": [{**GRID, "rollouts": 3_000_000}]})
    assert main([str(path), "--dry-run"]) == 2
    assert "grids[0].rollouts: 3,000,000 is more than the limit of 10,000" in _one_error_line(capsys)


def test_grid_size_is_limited(tmp_path, capsys):
    big = {**GRID, "configurations": "all", "tasks": "all", "difficulties": ["easy", "medium", "hard"],
           "law_versions": ["v0", "v1", "v2"], "rollouts": 200}
    path = _config(tmp_path, {"name": "x", "grids": [GRID, big]})
    assert main([str(path), "--dry-run"]) == 2
    err = _one_error_line(capsys)
    assert "grids[1]: the run would have more than 100,000 trials (172,801 up to this grid)" in err


def test_grid_size_counts_custom_tasks_once(tmp_path):
    from etc_fast.runner._config import GridConfig, _grid_size

    g = GridConfig(model="m", configurations=("a", "b"), tasks=("m0_gravity", "x/task.yaml"),
                   difficulties=("easy", "medium"), law_versions=("v0",), noise=(0.0, 0.1), rollouts=3)
    assert _grid_size(g) == (1 * 2 * 1 + 1) * 2 * 2 * 3  # one module x 2 difficulties, one custom task


@pytest.mark.parametrize(
    "law,words",
    [("sqrt(-v) * r", "law: finite at only 0.0%"), ("0.47 * r**2 * v**2", None)],
    ids=["nan-everywhere", "good"],
)
def test_custom_task_checked_at_load(tmp_path, capsys, law, words):
    task = tmp_path / "task.yaml"
    task.write_text(
        "name: drag\ndescription: drag\noutput: {name: F, description: force}\nvariables:\n"
        "  - {name: v, description: speed, scale: log, low: 0.1, high: 100}\n"
        "  - {name: r, description: radius, scale: linear, low: 0.01, high: 0.5}\n"
        f"law: {law}\n"
    )
    path = _config(tmp_path, {"name": "x", "grids": [{**GRID, "tasks": [str(task)]}]})
    code = main([str(path), "--dry-run"])
    if words is None:
        assert code == 0
        return
    assert code == 2
    err = _one_error_line(capsys)
    assert "grids[0].tasks[0]" in err and "task.yaml" in err and words in err


def test_load_config_never_leaks_recursion_error(tmp_path):
    with pytest.raises(ConfigError, match="nested"):
        load_config(_config(tmp_path, "name: x\ngrids: " + "{a: " * 20_000 + "1" + "}" * 20_000 + "\n"))


# ----------------------------------------------------------------------------------------
# The output directory
# ----------------------------------------------------------------------------------------
def _small(tmp_path: Path) -> Path:
    doc = {"name": "t", "workers": 1, "judge": "none",
           "grids": [{"model": "symbolic", "configurations": ["baseline_n", "random_c"], "tasks": ["m0_gravity", "m9_hooke_law"]}],
           "out": str(tmp_path / "out")}
    return _config(tmp_path, doc, "small.yaml")


@pytest.fixture
def fake_worker(monkeypatch):
    monkeypatch.setattr("etc_fast.runner.TrialWorker.from_config", classmethod(lambda cls, cfg: FakeWorker()))


def test_read_only_output_directory(tmp_path, capsys, monkeypatch, fake_worker):
    real_mkdir = Path.mkdir

    def read_only(self, *a, **k):
        if str(self).startswith(str(tmp_path / "out")):
            raise OSError(errno.EROFS, "Read-only file system", str(self))
        return real_mkdir(self, *a, **k)

    monkeypatch.setattr(Path, "mkdir", read_only)
    assert main([str(_small(tmp_path))]) == 2
    err = _one_error_line(capsys)
    assert f"{tmp_path / 'out'}: cannot open the run directory: Read-only file system" in err
    assert "Nothing was run" in err


def test_full_disk_stops_the_run_and_keeps_what_was_stored(tmp_path, capsys, monkeypatch, fake_worker):
    from etc_fast.runner import RunStore, read_trials

    real_append = RunStore.append
    calls = {"n": 0}

    def append(self, record):
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        return real_append(self, record)

    monkeypatch.setattr(RunStore, "append", append)
    cfg = _small(tmp_path)
    assert main([str(cfg)]) == 2
    err = _one_error_line(capsys)
    assert "cannot store the results: No space left on device" in err and "run the same command again" in err
    assert len(read_trials(tmp_path / "out" / "trials.jsonl")) == 2
    monkeypatch.setattr(RunStore, "append", real_append)  # space freed: the same command resumes
    assert main([str(cfg)]) == 0
    assert len(read_trials(tmp_path / "out" / "trials.jsonl")) == 4


def test_report_on_a_damaged_run(tmp_path, capsys, fake_worker):
    from etc_fast.report.__main__ import main as report_main

    assert main([str(_small(tmp_path)), "--no-report"]) == 0
    out = tmp_path / "out"
    (out / "manifest.sha256").unlink()
    (out / "trials.parquet").unlink()
    lines = (out / "trials.jsonl").read_text().splitlines()
    lines[1] = lines[1][: len(lines[1]) // 2]
    (out / "trials.jsonl").write_text("\n".join(lines) + "\n")
    capsys.readouterr()
    assert report_main([str(out)]) == 2
    err = _one_error_line(capsys)
    assert "trials.jsonl: line 2 is not a valid trial entry" in err
    json.loads(lines[0])  # the first line is untouched


def test_replay_on_a_damaged_run(tmp_path, capsys, fake_worker):
    from etc_fast.replay import main as replay_main

    assert main([str(_small(tmp_path)), "--no-report"]) == 0
    out = tmp_path / "out"
    lines = (out / "trials.jsonl").read_text().splitlines()
    (out / "trials.jsonl").write_text("\n".join([lines[0], "{not json", *lines[1:]]) + "\n")
    capsys.readouterr()
    assert replay_main([str(out)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "trials.jsonl: line 2 is not a valid trial entry" in err


def test_ray_address_without_the_ray_executor_exits_2(tmp_path, capsys):
    path = _small(tmp_path)
    assert main([str(path), "--ray-address", "auto", "--dry-run"]) == 2
    assert "--ray-address: is used only by the Ray executor" in capsys.readouterr().err
    assert main([str(path), "--executor", "ray", "--ray-address", "auto", "--dry-run"]) == 0
