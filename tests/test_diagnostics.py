"""Planner diagnostics: probe sensitivities, power-law fit, advisory text, observation table."""

from __future__ import annotations

import math

import numpy as np
import pytest

from etc_fast.diagnostics import compute_diagnostics, power_law_expression, probe_rows, render_observations
from etc_fast.sampling import bootstrap_unit

NAMES = ("a", "b", "c")


def _probes(d, n_min=3, lo=1.0, hi=100.0):
    U = bootstrap_unit(d, n_min)
    return np.exp(np.log(lo) + U * (np.log(hi) - np.log(lo)))


def test_pure_power_law_sensitivities_and_fit_are_exact():
    X = _probes(3)
    y = 2.5 * X[:, 0] ** 1.0 * X[:, 1] ** -2.0 * X[:, 2] ** 0.5
    rng = np.random.default_rng(0)
    Xr = np.exp(rng.uniform(0, np.log(100), size=(6, 3)))
    yr = 2.5 * Xr[:, 0] * Xr[:, 1] ** -2.0 * Xr[:, 2] ** 0.5
    diag = compute_diagnostics(NAMES, np.vstack([X, Xr]), np.concatenate([y, yr]), n_probe=4)
    assert diag.sensitivities == pytest.approx({"a": 1.0, "b": -2.0, "c": 0.5}, abs=1e-12)
    assert diag.exponents == pytest.approx({"a": 1.0, "b": -2.0, "c": 0.5}, abs=1e-9)
    assert diag.intercept == pytest.approx(math.log(2.5), abs=1e-9)
    assert diag.r2 == pytest.approx(1.0, abs=1e-12)
    assert diag.residual_rms < 1e-9
    assert diag.n_used == 10 and diag.n_observations == 10 and diag.excluded == ()
    assert "advisory, not ground truth" in diag.text
    assert "exponent of b: -2" in diag.text


def test_sensitivity_is_a_log_ratio_against_the_centre():
    X = _probes(2)
    y = np.array([3.0, 6.0, 1.5])
    diag = compute_diagnostics(("a", "b"), X, y, 3)
    expect_a = (math.log(6.0) - math.log(3.0)) / (math.log(X[1, 0]) - math.log(X[0, 0]))
    expect_b = (math.log(1.5) - math.log(3.0)) / (math.log(X[2, 1]) - math.log(X[0, 1]))
    assert diag.sensitivities["a"] == pytest.approx(expect_a)
    assert diag.sensitivities["b"] == pytest.approx(expect_b)


def test_one_variable_uses_the_075_probe_then_the_025_probe():
    X = _probes(1)  # centre, 0.75, 0.25 (Hooke's three probes)
    assert probe_rows(1, 3) == [(1, 2)]
    y = X[:, 0] ** 3
    assert compute_diagnostics(("x",), X, y, 3).sensitivities["x"] == pytest.approx(3.0)
    y_bad = y.copy()
    y_bad[1] = -1.0
    diag = compute_diagnostics(("x",), X, y_bad, 3)
    assert diag.sensitivities["x"] == pytest.approx(3.0)
    assert "u=0.25" in diag.text


def test_sensitivity_needs_positive_outputs_and_inputs():
    X = _probes(2)
    y = np.array([1.0, -2.0, np.nan])
    diag = compute_diagnostics(("a", "b"), X, y, 3)
    assert diag.sensitivities == {"a": None, "b": None}
    assert "not computable" in diag.text
    Xz = X.copy()
    Xz[1, 0] = 0.0
    assert compute_diagnostics(("a", "b"), Xz, np.array([1.0, 2.0, 3.0]), 3).sensitivities["a"] is None


def test_variables_with_non_positive_inputs_are_left_out_of_the_fit():
    rng = np.random.default_rng(1)
    X = np.column_stack([np.exp(rng.uniform(0, 3, 12)), rng.uniform(-1, 1, 12)])
    y = 4.0 * X[:, 0] ** 2
    diag = compute_diagnostics(("r", "theta"), X, y, 0)
    assert diag.excluded == ("theta",)
    assert set(diag.exponents) == {"r"}
    assert diag.exponents["r"] == pytest.approx(2.0)
    assert "left out of the fit" in diag.text and "theta" in diag.text


def test_fit_uses_only_positive_outputs_and_needs_d_plus_one_rows():
    X = _probes(3)
    y = np.array([1.0, 2.0, -3.0, np.nan])
    diag = compute_diagnostics(NAMES, X, y, 4)
    assert diag.n_used == 2 and diag.exponents is None and diag.r2 is None
    assert "needs at least 4" in diag.text


def test_constant_output_gives_r2_one_and_zero_exponents():
    X = _probes(2)
    diag = compute_diagnostics(("a", "b"), X, np.full(3, 7.0), 3)
    assert diag.exponents == pytest.approx({"a": 0.0, "b": 0.0}, abs=1e-12)
    assert diag.r2 == 1.0


def test_empty_observations():
    diag = compute_diagnostics(NAMES, np.empty((0, 3)), np.empty(0), 4)
    assert diag.exponents is None and all(v is None for v in diag.sensitivities.values())


@pytest.mark.parametrize(
    "args, match",
    [
        ((NAMES, np.ones((3, 2)), np.ones(3), 3), r"shape \(n, 3\)"),
        ((NAMES, np.ones((3, 3)), np.ones(4), 3), "3 rows but y has 4"),
        ((NAMES, np.ones((3, 3)), np.ones(3), -1), "n_probe"),
        (((), np.ones((3, 0)), np.ones(3), 3), "variables"),
    ],
)
def test_bad_input_errors(args, match):
    with pytest.raises(ValueError, match=match):
        compute_diagnostics(*args)


def test_power_law_expression_reproduces_the_fit():
    from etc_fast.expr import parse

    rng = np.random.default_rng(2)
    X = np.exp(rng.uniform(0, 4, size=(8, 2)))
    y = 0.3 * X[:, 0] ** 1.5 / X[:, 1]
    diag = compute_diagnostics(("m", "r"), X, y, 0)
    expr = power_law_expression(diag)
    prog = parse(expr, ["m", "r"])
    np.testing.assert_allclose(prog.evaluate(X), y, rtol=1e-8)
    assert power_law_expression(compute_diagnostics(("m", "r"), X[:1], y[:1], 0)) is None


def test_render_observations_table():
    X = np.array([[1.0, 2.5e-7], [3.0, np.nan]])
    text = render_observations(("m", "r"), X, np.array([0.5, np.inf]), output_name="F", sources=["bootstrap", "planner"])
    lines = text.splitlines()
    assert lines[0].split() == ["#", "m", "r", "F", "source"]
    assert lines[1].split() == ["1", "1", "2.5e-07", "0.5", "bootstrap"]
    assert lines[2].split() == ["2", "3", "nan", "inf", "planner"]
    assert "(no observations)" in render_observations(("m",), np.empty((0, 1)), np.empty(0))
    with pytest.raises(ValueError):
        render_observations(("m",), X, np.ones(2))


def test_exactly_determined_fit_says_r2_carries_no_evidence():
    """With only d + 1 usable rows (the bootstrap alone) any data fit exactly: the text must say so."""
    names = ["a", "b", "c"]
    X = 1.0 + bootstrap_unit(3)  # 4 rows = d + 1
    y = np.exp(X[:, 0]) + X[:, 1] * X[:, 2]  # not a power law at all
    d = compute_diagnostics(names, X, y, 4)
    assert d.n_used == 4 and d.r2 is not None and d.r2 > 1 - 1e-9
    assert "no spare observations" in d.text
    more = np.vstack([X, 1.5 + 0.3 * bootstrap_unit(3)[:2]])
    d2 = compute_diagnostics(names, more, np.exp(more[:, 0]) + more[:, 1] * more[:, 2], 4)
    assert d2.n_used == 6 and "no spare observations" not in d2.text
