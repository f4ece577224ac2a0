"""The generated-law suite: deterministic draws from the stated distribution, each an ordinary
custom task, usable as a run config's task source, and part of a run's identity."""

from __future__ import annotations

import subprocess
import sys
from collections import Counter
from pathlib import Path

import numpy as np
import pytest
import yaml

from etc_fast.runner import ConfigError, RunDirError, parse_config, run_config
from etc_fast.runner._grid import expand_grid
from etc_fast.runner._inputs import hash_inputs
from etc_fast.sampling import evaluation_grid
from etc_fast.tasks import generate as gen
from etc_fast.tasks import get_task, is_custom_task, load_custom_task
from tests.runner._fakes import FakeWorker

REPO = Path(__file__).resolve().parents[2]
N_DIST = 500


@pytest.fixture(scope="module")
def suite():
    return gen.generate(0, N_DIST)


def test_same_seed_gives_the_same_laws_and_a_prefix_does_not_depend_on_n(suite):
    again = gen.generate(0, 30)
    gen.generated_law.cache_clear()
    fresh = gen.generate(0, 30)
    assert [g.text for g in fresh] == [g.text for g in again] == [g.text for g in suite[:30]]
    other = gen.generate(1, 30)
    def law(g):
        return yaml.safe_load(g.text)["law"]

    assert sum(law(a) == law(b) for a, b in zip(other, again, strict=True)) <= 3


def test_the_laws_are_the_same_in_another_process(suite):
    code = ("from etc_fast.tasks.generate import generate; "
            "print('\\n'.join(g.sha256 for g in generate(0, 25)))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300,
                         env={"PYTHONPATH": str(REPO), "PYTHONHASHSEED": "123", "PATH": "/usr/bin:/bin"}, check=True)
    assert out.stdout.split() == [g.sha256 for g in suite[:25]]


def test_class_shares_follow_the_stated_probabilities(suite):
    counts = Counter(g.task_class for g in suite)
    assert set(counts) == {c for c, _ in gen.CLASSES}
    assert sum(p for _, p in gen.CLASSES) == pytest.approx(1.0)
    for name, p in gen.CLASSES:
        sd = (N_DIST * p * (1 - p)) ** 0.5
        assert abs(counts[name] - N_DIST * p) <= 3.5 * sd, (name, counts[name])


def test_input_counts_cover_one_to_ten_and_respect_class_minimums(suite):
    inputs = Counter(g.n_inputs for g in suite)
    assert set(inputs) == set(range(1, 11))
    for g in suite:
        assert g.n_inputs >= gen.class_minimum(g.task_class)
    # the single-input share can only come from classes whose smallest core is one input
    assert inputs[1] < N_DIST * gen.INPUT_WEIGHTS[1]


def test_every_law_loads_as_a_custom_task_and_is_finite(suite):
    scales = Counter()
    named = literal = 0
    for g in suite:
        task = get_task(g.name)
        assert task.name == g.name and len(task.variables) == g.n_inputs
        y = task.truth(evaluation_grid(task))
        assert np.isfinite(y).mean() >= 0.10
        scales.update(v.scale for v in task.variables)
        doc = yaml.safe_load(g.text)
        named += bool(doc.get("constants"))
        literal += not doc.get("constants")
        # every input enters the law
        for v in task.variables:
            assert v.name in doc["law"], (g.name, v.name)
    assert scales["log"] > 0.2 * sum(scales.values()) and scales["linear"] > 0.2 * sum(scales.values())
    assert named > 0.2 * N_DIST and literal > 0.2 * N_DIST


def test_tiny_and_huge_outputs(suite):
    sizes = {"tiny": 0, "huge": 0}
    for g in suite:
        if g.task_class != "tiny_huge":
            continue
        task = get_task(g.name)
        y = np.abs(task.truth(evaluation_grid(task)))
        m = float(np.median(y[np.isfinite(y)]))
        assert m < 1e-3 or m > 1e6, (g.name, m)
        sizes["tiny" if m < 1 else "huge"] += 1
    assert sizes["tiny"] > 0 and sizes["huge"] > 0


def test_written_file_is_the_hashed_text_and_loads(tmp_path):
    from etc_fast.tasks.generate import main

    assert main(["--seed", "3", "--n", "5", "--out", str(tmp_path / "laws")]) == 0
    files = sorted((tmp_path / "laws").iterdir())
    assert [f.name for f in files] == [f"gen-s3-{i:04d}.yaml" for i in range(5)]
    for f, g in zip(files, gen.generate(3, 5), strict=True):
        assert hash_inputs([str(f)])[str(f)] == g.sha256 == hash_inputs([g.name])[g.name]
        task = load_custom_task(f)
        assert task.law_expression == get_task(g.name).law_expression
        assert f"generator {gen.GENERATOR_VERSION}" in f.read_text()


@pytest.mark.parametrize("argv", [["--n", "0", "--out", "x"], ["--seed", "-1", "--n", "3", "--summary"], ["--n", "3"],
                                  ["--summary"], ["--rates", "r", "--n", "3"]])
def test_bad_arguments_exit_2(argv, capsys):
    with pytest.raises(SystemExit) as exc:
        gen.main(argv)
    assert exc.value.code == 2
    assert "error:" in capsys.readouterr().err


def test_out_that_is_a_file_exits_2(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert gen.main(["--n", "2", "--out", str(tmp_path / "f")]) == 2
    assert "is not a directory" in capsys.readouterr().err


def test_names_are_canonical():
    assert gen.parse_generated_name("gen-s0-0042") == (0, 42)
    assert gen.parse_generated_name("gen-s12-12345") == (12, 12345)
    for bad in ("gen-s0-42", "gen-s00-0042", "gen-s0-00042", "gen-0-0042", "gen-s0-0042.yaml", 7):
        assert gen.parse_generated_name(bad) is None
    assert is_custom_task("gen-s0-0001") and not is_custom_task("m0_gravity")


def _grid(tasks):
    return {"name": "g", "workers": 1, "grids": [{"model": "symbolic", "configurations": ["variance_c"], "tasks": tasks,
                                                  "difficulties": ["easy", "hard"]}]}


def test_the_config_task_source_expands_to_names():
    cfg = parse_config(_grid([{"generated": {"seed": 2, "n": 3}}, "m0_gravity", "gen-s9-0007"]))
    assert cfg.grids[0].tasks == ("gen-s2-0000", "gen-s2-0001", "gen-s2-0002", "m0_gravity", "gen-s9-0007")
    specs = expand_grid(cfg)
    # a generated task has one law: not multiplied by difficulties
    assert len(specs) == 4 + 2
    assert parse_config(cfg.to_dict()).grids == cfg.grids  # the resolved config round-trips
    assert parse_config(_grid({"generated": {"seed": 0, "n": 2}})).grids[0].tasks == ("gen-s0-0000", "gen-s0-0001")


@pytest.mark.parametrize(("tasks", "where", "says"), [
    ([{"generated": {"seed": 0}}], "grids[0].tasks[0].generated.n", "missing"),
    ([{"generated": {"seed": -1, "n": 2}}], "grids[0].tasks[0].generated.seed", "not an integer from 0"),
    ([{"generated": {"seed": 0, "n": 0}}], "grids[0].tasks[0].generated.n", "not an integer from 1"),
    ([{"generated": {"seed": 0, "n": "5"}}], "grids[0].tasks[0].generated.n", "not an integer from 1"),
    ([{"generated": {"seed": 0, "n": 2, "size": 3}}], "grids[0].tasks[0].generated.size", "unknown key"),
    ([{"generate": {"seed": 0, "n": 2}}], "grids[0].tasks[0].generate", "unknown key"),
    ([{"generated": [0, 2]}], "grids[0].tasks[0].generated", "expected a mapping"),
    (["gen-s0-42"], "grids[0].tasks[0]", "zero-padded to four digits"),
    ([{"generated": {"seed": 0, "n": 2}}, "gen-s0-0001"], "grids[0].tasks[2]", "listed twice"),
])
def test_bad_task_sources_name_the_key(tasks, where, says):
    with pytest.raises(ConfigError) as exc:
        parse_config(_grid(tasks))
    assert exc.value.key == where and says in exc.value.message


def test_generated_tasks_have_only_the_vanilla_system():
    raw = _grid([{"generated": {"seed": 0, "n": 1}}])
    raw["grids"][0]["systems"] = ["simple_system"]
    with pytest.raises(ConfigError, match="only the vanilla_equation system"):
        parse_config(raw)


def test_a_changed_generator_refuses_to_resume(tmp_path, monkeypatch):
    raw = _grid([{"generated": {"seed": 0, "n": 2}}])
    raw["out"] = str(tmp_path / "run")
    cfg = parse_config(raw)
    run_config(cfg, worker=FakeWorker(), report=False)
    stored = yaml.safe_load((tmp_path / "run" / "config.resolved.yaml").read_text())["inputs"]
    assert stored == {g.name: g.sha256 for g in gen.generate(0, 2)}
    table = gen.rates(tmp_path / "run")
    classes = {gen.generated_law(0, i).task_class for i in range(2)}
    assert all(f"| variance_c | {c} |" in table for c in classes) and "| n_inputs |" in table
    run_config(cfg, worker=FakeWorker(), report=False)  # the same generator resumes
    monkeypatch.setattr(gen, "GENERATOR_VERSION", "gen-test-changed")
    gen.generated_law.cache_clear()
    try:
        with pytest.raises(RunDirError, match=r"generated task gen-s0-0000 is not the law this version of the generator"):
            run_config(cfg, worker=FakeWorker(), report=False)
    finally:
        gen.generated_law.cache_clear()
