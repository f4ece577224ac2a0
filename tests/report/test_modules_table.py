"""The per-module table: counts and means per module and configuration, computed by hand."""

import math

import pytest

from etc_fast.report import table_modules, table_modules_wide
from tests.report.conftest import row


def _rows():
    return [
        row("variance_c", "m0_a", 0, measurements=8, rmsle=0.0, credited=True),
        row("variance_c", "m0_a", 1, measurements=10, rmsle=0.2, credited=False, complete=False),
        row("baseline_n", "m0_a", 0, measurements=40, rmsle=math.nan, credited=False, complete=False),
        row("baseline_n", "m0_a", 1, measurements=44, rmsle=1.0, credited=True),
        row("variance_c", "m1_b", 0, measurements=9, rmsle=0.5, credited=True),
    ]


def test_long_table_values(make_frame):
    t = table_modules(make_frame(_rows()))
    assert t.columns == ["model", "difficulty", "task", "configuration", "n", "measurements_mean",
                         "rmsle_mean_finite", "complete", "credited"]
    # modules in order, presets in the paper's order within a module
    assert list(zip(t["task"], t["configuration"])) == [("m0_a", "baseline_n"), ("m0_a", "variance_c"), ("m1_b", "variance_c")]
    b, v, _ = t.iter_rows(named=True)
    assert (b["n"], b["measurements_mean"], b["rmsle_mean_finite"], b["complete"], b["credited"]) == (2, 42.0, 1.0, 1, 1)
    assert (v["measurements_mean"], v["rmsle_mean_finite"], v["complete"], v["credited"]) == (9.0, pytest.approx(0.1), 1, 1)


def test_wide_table_cells(make_frame):
    w = table_modules_wide(make_frame(_rows()))
    assert w.columns == ["model", "difficulty", "task", "baseline_n", "variance_c"]
    first = w.row(0, named=True)
    assert first["baseline_n"] == "42.0 · 1.000 · 1/2 · 1/2"
    assert first["variance_c"] == "9.0 · 0.100 · 1/2 · 1/2"
    assert w.row(1, named=True)["baseline_n"] is None  # m1_b has no baseline trials


def test_empty_frame(make_frame):
    assert table_modules(make_frame([])).height == 0
    assert table_modules_wide(make_frame([])).height == 0


def test_noise_levels_keep_their_digits():
    import polars as pl

    from etc_fast.report import markdown_table

    md = markdown_table(pl.DataFrame({"noise": [0.001, 0.01, 0.0]}))
    assert "| 0.001 |" in md and "| 0.01 |" in md and "| 0 |" in md
