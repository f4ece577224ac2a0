"""A custom task reads as a custom task in the dry-run summary and in the progress line."""

import io
from pathlib import Path

from etc_fast.runner import expand_grid, parse_config
from etc_fast.runner._grid import describe_grid
from etc_fast.runner._progress import Progress

ROOT = Path(__file__).resolve().parents[2]
TASK = str(ROOT / "configs" / "tasks" / "bragg_angle.yaml")


def _specs():
    cfg = parse_config({"name": "t", "grids": [{"model": "symbolic", "configurations": ["variance_c"],
                                                "tasks": [TASK, "m0_gravity"], "difficulties": ["medium"]}]})
    return expand_grid(cfg)


def test_dry_run_summary_names_custom_cells():
    text = describe_grid(_specs())
    assert "symbolic / custom / noise 0: 1 trials" in text
    assert "symbolic / medium / v0 / noise 0: 1 trials" in text
    assert "easy" not in text  # a custom task has no difficulty to show


def test_progress_line_shows_the_declared_name():
    out = io.StringIO()
    progress = Progress(1, stream=out)
    line = progress.line({"task": TASK, "difficulty": "easy", "configuration": "variance_c", "rollout": 0,
                          "status": "completed", "credited": True, "rmsle": 0.0, "measurements": 7})
    assert line.split()[1:3] == ["ext_bragg_angle", "custom"], line
    assert TASK not in line
