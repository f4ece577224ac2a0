"""A report that reads well at any size: the per-trial table of a small run, numbers that keep their
magnitude, custom tasks by name, power notes only where they mean something, and the scale-free
error beside RMSLE."""

from __future__ import annotations

import json
import math

import numpy as np
import polars as pl
import pytest

from etc_fast.evaluate import evaluate_submission, median_relative_error
from etc_fast.report import _budget, markdown_table, write_report
from etc_fast.report._format import format_number, law_expression_text, task_labels
from etc_fast.report._trials import SMALL_RUN, display_frame
from etc_fast.runner import trials_frame
from etc_fast.tasks import load_custom_task
from tests.report.conftest import row
from tests.report.test_tables import fixture_rows

GRAVITY = "def discovered_law(mass1, mass2, distance):\n    import numpy as np\n    return 6.674e-05*mass1*mass2/distance**1.5\n"
WRONG = "def discovered_law(mass1, mass2, distance):\n    return 6.674e-05*mass1*mass2/distance**2\n"

TINY = """\
name: tiny_rate
description: A detector counts a very small rate proportional to a flux.
output: {name: y, description: the measured rate}
variables:
  - {name: v, description: flux, scale: log, low: 1.0e-5, high: 1}
law: 0.001*v
"""


def _run(tmp_path, rows, sources):
    """A run directory: ``trials.jsonl`` lines naming transcripts that hold ``final_source``."""
    (tmp_path / "transcripts").mkdir()
    with open(tmp_path / "trials.jsonl", "w") as fh:
        for r in rows:
            tid = r["trial_id"]
            if tid in sources:
                (tmp_path / "transcripts" / f"{tid}.json").write_text(json.dumps({"final_source": sources[tid]}))
            fh.write(json.dumps({"trial_id": tid, "summary": r, "transcript": f"transcripts/{tid}.json"}) + "\n")
    return tmp_path


# -- numbers keep their magnitude ------------------------------------------------------------------------


@pytest.mark.parametrize(("value", "decimals", "text"), [
    (1e-15, None, "1.0e-15"), (1e-15, 3, "1.0e-15"), (-2.5e-4, 3, "-2.5e-04"), (2.5e6, 1, "2.5e+06"),
    (0.0, None, "0"), (0.0, 3, "0"), (-0.0, 1, "0"), (0.0123, None, "0.0123"), (1.5, None, "1.50"), (123.4, None, "123"),
    (0.05, 2, "0.05"), (0.0012, 3, "0.0012"), (0.5, 3, "0.500"), (7.5, 1, "7.5"), (0.123, 1, "0.12"),
    (float("nan"), 3, "nan"), (float("inf"), None, "inf"), (None, None, "–"), (True, None, "yes"), (12, 3, "12"),
])
def test_format_number_keeps_the_magnitude(value, decimals, text):
    assert format_number(value, decimals) == text


def test_every_table_writes_a_tiny_rmsle_with_its_magnitude():
    md = markdown_table(pl.DataFrame({"rmsle_mean_finite": [1e-15, 0.25], "sa_pct": [0.04, 50.0],
                                      "median_rel_error": [3e-9, 0.5]}))
    assert "| 1.0e-15 | 0.040 | 3.0e-09 |" in md and "| 0.250 | 50.0 | 0.500 |" in md
    assert "0.000" not in md


# -- the scale-free error ---------------------------------------------------------------------------------


def _np_median_rel(t, p):
    t, p = np.asarray(t, float), np.asarray(p, float)
    keep = np.isfinite(t) & np.isfinite(p) & (t != 0)
    return float(np.median(np.abs(p[keep] - t[keep]) / np.abs(t[keep]))) if keep.any() else math.nan


def test_median_relative_error_against_numpy():
    rng = np.random.default_rng(0)
    t = rng.lognormal(size=101) * rng.choice([-1, 1], size=101)
    p = t * (1 + rng.normal(scale=0.3, size=101))
    t[[3, 7]], p[[11]], p[[12]] = np.nan, np.inf, np.nan
    t[20] = 0.0
    got = median_relative_error(t, p)
    assert got == pytest.approx(_np_median_rel(t, p), rel=1e-15)
    # a factor of two: 0.5 too small, 1.0 too large, whatever the scale
    assert median_relative_error([1e-9, 2e-9, 4e-9], [0.5e-9, 1e-9, 2e-9]) == pytest.approx(0.5)
    assert median_relative_error([1e9, 2e9, 4e9], [2e9, 4e9, 8e9]) == pytest.approx(1.0)
    assert math.isnan(median_relative_error([0.0, np.nan], [1.0, 1.0]))
    with pytest.raises(ValueError, match="3 values but y_pred has 2"):
        median_relative_error([1, 2, 3], [1, 2])


def test_a_wrong_power_on_tiny_outputs_has_a_small_rmsle_and_a_large_relative_error(tmp_path):
    """Outputs 1e-8…1e-3: RMSLE (a difference of log(1 + |y|)) barely sees v**2 for v; the median
    relative error does."""
    path = tmp_path / "tiny.yaml"
    path.write_text(TINY)
    task = load_custom_task(path)
    right = evaluate_submission("def discovered_law(v):\n    return 0.001*v\n", task)
    wrong = evaluate_submission("def discovered_law(v):\n    return 0.001*v**2\n", task)
    assert right.median_rel_error == 0.0
    assert wrong.rmsle < 1e-3
    from etc_fast.sampling import evaluation_grid

    X = evaluation_grid(task)
    v = X[:, 0]
    assert wrong.median_rel_error == pytest.approx(_np_median_rel(0.001 * v, 0.001 * v**2), rel=1e-12)
    assert wrong.median_rel_error > 0.9  # most of the grid's v is far below 1: off by nearly 100%
    assert json.loads(json.dumps(wrong.to_dict()))["median_rel_error"] == wrong.median_rel_error
    bad = evaluate_submission("def discovered_law(v):\n    raise ValueError('no')\n", task)
    assert bad.to_dict()["median_rel_error"] == "nan"


# -- a small run's report ---------------------------------------------------------------------------------


def _small_rows():
    rows = []
    for cfg in ("baseline_n", "variance_c", "random_n"):
        rows.append(row(cfg, "m0_gravity", difficulty="easy", credited=cfg != "random_n", rmsle=1e-15 if cfg != "random_n" else 0.3))
    return rows


def test_small_run_leads_with_submitted_and_true_laws(tmp_path):
    rows = _small_rows()
    ids = [r["trial_id"] for r in rows]
    # the first trial stores its error (a new run); the others are an old run's rows: replayed from the transcript
    rows[0]["median_rel_error"] = 0.0
    _run(tmp_path, rows, {ids[0]: GRAVITY, ids[1]: GRAVITY, ids[2]: WRONG})
    md = write_report(tmp_path, n_draws=50).read_text()
    assert md.index("## Trials") < md.index("## Table 1")
    trials = md.split("## Trials")[1].split("\n## ")[0]
    assert "| task | configuration | submitted law | true law | credited | rmsle | median_rel_error | measurements |" in trials
    assert ("| m0_gravity (easy, v0) | baseline_n | `6.674e-05 * mass1 * mass2 / distance ** 1.5` | "
            "`6.674e-05 * mass1 * mass2 / distance ** 1.5` | yes | 1.0e-15 | 0 | 10 |") in trials
    wrong_row = next(line for line in trials.splitlines() if "| random_n |" in line)
    assert "`6.674e-05 * mass1 * mass2 / distance ** 2`" in wrong_row and "| no | 0.300 |" in wrong_row
    assert wrong_row.split("|")[7].strip() not in ("–", "0")  # replayed: a real relative error
    assert "for 2 trial(s): the report replayed" in trials
    assert "0.000" not in trials
    assert "## Folded at this size" in md and "<details><summary>How many modules" in md
    assert md.index("## Folded at this size") < md.index("## Paired comparisons")
    power = (tmp_path / "report" / "power.md").read_text()
    assert "No paired comparison of this run shares two or more modules" in power


def test_trial_without_transcript_reads_a_dash_and_a_large_run_has_no_trial_table(tmp_path):
    rows = _small_rows()
    _run(tmp_path, rows, {})
    md = write_report(tmp_path, n_draws=20).read_text()
    line = next(x for x in md.split("## Trials")[1].splitlines() if "| baseline_n |" in x)
    assert line.split("|")[3].strip() == "–" and line.split("|")[7].strip() == "–"
    big = tmp_path / "big"
    big.mkdir()
    rows = fixture_rows()
    assert len(rows) > SMALL_RUN
    trials_frame(rows).write_parquet(big / "trials.parquet")
    md = write_report(big, n_draws=20).read_text()
    assert "## Trials" not in md and "Folded" not in md and "<details>" not in md
    assert "## Paired comparisons" in md and "![Credit heatmap](credit_heatmap.png)" in md


# -- custom tasks by name ----------------------------------------------------------------------------------


def test_custom_tasks_read_by_name_without_difficulty(tmp_path):
    path = tmp_path / "tasks" / "rate_file.yaml"
    path.parent.mkdir()
    path.write_text(TINY)
    gone = str(tmp_path / "tasks" / "moved_away.yaml")
    run = tmp_path / "run"
    run.mkdir()
    rows = [row(cfg, str(path), difficulty="easy", credited=True, rmsle=2e-20) for cfg in ("baseline_n", "variance_c")]
    rows.append(row("baseline_n", gone, difficulty="easy", rmsle=0.4))
    rows.append(row("baseline_n", "m0_gravity", difficulty="easy"))
    for i, r in enumerate(rows):
        r["trial_id"] = f"t{i}"  # a custom task's trial id holds no path
    _run(run, rows, {rows[0]["trial_id"]: "def discovered_law(v):\n    return 0.001*v\n"})
    md = write_report(run, n_draws=20).read_text()
    assert str(tmp_path) not in md
    trials = md.split("## Trials")[1].split("\n## ")[0]
    assert "| tiny_rate | baseline_n | `0.001 * v` | `0.001*v` | yes | 2.0e-20 | 0 |" in trials
    assert "| moved_away | baseline_n | – | – | no | 0.400 |" in trials
    assert "| m0_gravity (easy, v0) |" in trials
    heat = pl.read_csv(run / "report" / "table_heatmap.csv")
    assert sorted(heat.get_column("task").to_list()) == ["m0_gravity", "moved_away", "tiny_rate"]
    custom = heat.filter(pl.col("task") != "m0_gravity")
    assert set(custom.get_column("difficulty").to_list()) == {"custom"}
    # difficulty and law version vary in this run, so both are columns; a custom task has neither
    assert "| m | custom | custom | tiny_rate |" in md and "| m | easy | v0 | m0_gravity |" in md
    assert "| easy | v0 | tiny_rate |" not in md


def test_two_custom_tasks_of_one_name_keep_their_paths(tmp_path):
    a, b = tmp_path / "a" / "t.yaml", tmp_path / "b" / "t.yaml"
    for p in (a, b):
        p.parent.mkdir()
        p.write_text(TINY)
    labels = task_labels([str(a), str(b), "m1_coulomb"])
    assert labels == {str(a): str(a), str(b): str(b), "m1_coulomb": "m1_coulomb"}
    frame = display_frame(trials_frame([row("baseline_n", str(a), difficulty="easy")]))
    assert frame.get_column("task").to_list() == ["tiny_rate"] and frame.get_column("law_version").to_list() == ["custom"]


def test_law_text_of_a_submission():
    assert law_expression_text(GRAVITY) == "6.674e-05 * mass1 * mass2 / distance ** 1.5"
    doc = 'def discovered_law(x):\n    """k x"""\n    from math import exp\n    return 2*x\n'
    assert law_expression_text(doc) == "2 * x"
    two = "def discovered_law(x):\n    y = x * 2\n    return y + 1\n"
    assert law_expression_text(two) == "def discovered_law(x):; y = x * 2; return y + 1"
    assert law_expression_text("") is None and law_expression_text(None) is None
    assert law_expression_text("def f(x):\n    return " + "x+" * 200 + "x", limit=50).endswith("…")


# -- power notes only where they mean something -------------------------------------------------------------


def _power_rows(credit, rollouts=1):
    return [row(cfg, f"m{j}_t", r, difficulty="easy", credited=credit(cfg, j, r))
            for cfg in ("variance_c", "baseline_c") for j in range(4) for r in range(rollouts)]


def test_power_zero_variance_is_not_estimable(tmp_path):
    frame = trials_frame(_power_rows(lambda cfg, j, r: True))
    p = _budget.table_power(frame)
    assert p.height == 3
    assert p.get_column("note").to_list() == [_budget.NOT_ESTIMABLE_ZERO] * 3
    assert p.get_column("modules_needed").null_count() == 3 and p.get_column("rollouts_needed").null_count() == 3
    frame.write_parquet(tmp_path / "trials.parquet")
    write_report(tmp_path, n_draws=20)
    power = (tmp_path / "report" / "power.md").read_text()
    assert "`not estimable: zero variance`: every shared module shows the same SA difference" in power
    assert "| – | – | not estimable: zero variance |" in power
    assert "This run has 8 trials (at most 24)" in power


def test_power_with_one_trial_a_module_keeps_modules_needed_only():
    p = _budget.table_power(trials_frame(_power_rows(lambda cfg, j, r: cfg == "variance_c" and j % 2 == 0)))
    assert set(p.get_column("note").to_list()) == {_budget.NOT_ESTIMABLE_ONE_TRIAL}
    assert p.get_column("rollouts_needed").null_count() == 3
    assert p.get_column("modules_needed").null_count() == 0 and p.item(0, "modules_needed") > 1


def test_power_with_rollouts_and_variance_has_no_note():
    p = _budget.table_power(trials_frame(_power_rows(lambda cfg, j, r: cfg == "variance_c" and (j + r) % 2 == 0, rollouts=3)))
    assert p.get_column("note").null_count() == p.height == 3
    assert p.get_column("modules_needed").null_count() == 0


def test_table2_gives_the_median_of_the_trials_scale_free_errors():
    from etc_fast.report import table_configurations

    rows = [row("variance_c", f"m{j}_t", difficulty="easy") for j in range(4)] + [row("baseline_c", "m0_t", difficulty="easy")]
    for r, v in zip(rows, (0.1, 0.3, math.nan, 0.5)):
        r["median_rel_error"] = v  # the fifth row is an old run's: no value
    t = table_configurations(trials_frame(rows))
    got = dict(zip(t.get_column("configuration").to_list(), t.get_column("median_rel_error_median").to_list()))
    assert got["variance_c"] == pytest.approx(0.3) and got["baseline_c"] is None
