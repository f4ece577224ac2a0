"""The extended suite (configs/tasks/*.yaml): every file loads, its truth is finite on its grid, and
configs/extended.yaml runs exactly these files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import yaml

from etc_fast.tasks import CUSTOM, get_task

ROOT = Path(__file__).resolve().parents[2]
TASK_FILES = sorted((ROOT / "configs" / "tasks").glob("*.yaml"))


def test_suite_has_at_least_forty_laws_with_one_to_four_inputs():
    assert len(TASK_FILES) >= 40
    dims = [get_task(str(p)).d for p in TASK_FILES]
    assert min(dims) >= 1 and max(dims) <= 4
    assert len({get_task(str(p)).name for p in TASK_FILES}) == len(TASK_FILES)  # names are unique


@pytest.mark.parametrize("path", TASK_FILES, ids=[p.stem for p in TASK_FILES])
def test_task_loads_and_truth_is_finite_on_its_grid(path):
    pytest.importorskip("etc_fast.expr")
    from etc_fast.sampling import evaluation_grid

    task = get_task(str(path))
    assert task.difficulty == CUSTOM
    X = evaluation_grid(task, n=256)
    y = task.truth(X)
    assert np.isfinite(y).mean() >= 0.95, f"{path.name}: truth not finite on most of its grid"
    assert np.ptp(y[np.isfinite(y)]) > 0, f"{path.name}: truth is constant on its grid"


def test_extended_config_lists_every_suite_file():
    cfg = yaml.safe_load((ROOT / "configs" / "extended.yaml").read_text())
    listed = sorted(t for g in cfg["grids"] for t in g["tasks"])
    assert listed == sorted(str(p.relative_to(ROOT)) for p in TASK_FILES)
