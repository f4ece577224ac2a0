"""etc_fast.acquisition: the planner step end to end, with a worked example derived by hand."""

from __future__ import annotations

import json
import math

import numpy as np
import numpy.testing as npt
import pytest

from etc_fast.acquisition import Committee, StepResult, plan_step, plan_step_arrays
from etc_fast.core import to_jsonable
from etc_fast.expr import evaluate_many, parse

# Worked example (two variables x, z). Observations follow y = 2x.
X_OBS = np.array([[1.0, 1.0], [2.0, 1.0], [6.0, 1.0]])
Y_OBS = np.array([2.0, 4.0, 12.0])
HYPS = ["x", "x + z", "z", "x[0]"]
# Pool point 0 is already used; points 1-4 are (x, z) = (1,1), (1,4), (2,2), (3,1).
POOL_X = np.array([[2.0, 2.0], [1.0, 1.0], [1.0, 4.0], [2.0, 2.0], [3.0, 1.0]])
POOL_U = np.array([[0.5, 0.5], [0.5, 0.5], [0.29, 0.5], [0.05, 0.5], [0.5, 0.71]])
AVAIL = np.array([False, True, True, True, True])


def step(method, k, **kw):
    return plan_step(HYPS, ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, AVAIL.copy(), method=method, k=k, seed=0, **kw)


def test_worked_example_calibration_and_filter():
    r = step("variance", 3)
    # "x": y = 2x exactly; "x + z" (z = 1 on every observation): y = 2(x + z) - 2 exactly;
    # "z" is constant on the observations: degenerate fit a = 0, b = mean(y) = 6 with
    # error RMS(y - 6) / median|y| = sqrt(56/3) / 4 = 1.08 > 0.75; "x[0]" does not parse.
    assert r.parsed == ("x", "x + z", "z", None)
    assert "subscript" in r.parse_errors[3]
    npt.assert_array_equal(r.rows, [0, 1, 2])
    npt.assert_allclose(r.a, [2.0, 2.0, 0.0], atol=1e-12)
    npt.assert_allclose(r.b, [0.0, -2.0, 6.0], atol=1e-12)
    npt.assert_allclose(r.fit_error, [0.0, 0.0, math.sqrt(56 / 3) / 4], atol=1e-12)
    npt.assert_array_equal(r.kept, [0, 1])
    assert not r.fallback_used and r.error is None


def test_worked_example_variance():
    # Calibrated on points 1-4: p0 = 2x = (2, 2, 4, 6), p1 = 2x + 2z - 2 = (2, 8, 6, 6).
    # p0: mean 3.5, sd sqrt(11/4) -> z0 = (-0.905, -0.905, 0.302, 1.508);
    # p1: mean 5.5, sd sqrt(19/4) -> z1 = (-1.606, 1.147, 0.229, 0.229).
    # Two values per point: variance = (z0 - z1)^2 / 4 = (0.1230, 1.0523, 0.0013, 0.4084);
    # ascending C < A < D < B -> rho = (1/3, 1, 0, 2/3).
    # Boundary weights w: u = (.5,.5) -> 1, (.29,.5) -> 0.5^1.5, (.05,.5) -> 0, (.5,.71) -> 0.5^1.5.
    # s~ = (1/3, 0.3536, 0, 0.2357). k = 3 -> 3 eligible: pool 1, 2, 4. First pick pool 2 (highest);
    # s' = (0.828, 1, -, 0); from pool 2: pool 1 scores 0.65 * 0.828 + 0.35 * 0.21 / sqrt2 = 0.590,
    # pool 4 scores 0 + 0.35 * 0.297 / sqrt2 = 0.0735 -> pool 1, then pool 4.
    r = step("variance", 3)
    npt.assert_array_equal(r.pool_indices, [1, 2, 3, 4])
    z0 = (np.array([2.0, 2, 4, 6]) - 3.5) / math.sqrt(11 / 4)
    z1 = (np.array([2.0, 8, 6, 6]) - 5.5) / math.sqrt(19 / 4)
    npt.assert_allclose(r.raw_scores, (z0 - z1) ** 2 / 4, rtol=1e-12)
    npt.assert_allclose(r.raw_scores, [0.1230, 1.0523, 0.0013, 0.4084], atol=5e-5)
    w = 0.5**1.5
    npt.assert_allclose(r.regularized, [1 / 3, w, 0.0, 2 / 3 * w], rtol=1e-9, atol=1e-15)
    npt.assert_array_equal(r.eligible, [1, 2, 4])
    npt.assert_array_equal(r.indices, [2, 1, 4])


def test_worked_example_pairwise():
    # p0 = (2, 2, 4, 6): median 3, IQR 4.5 - 2 = 2.5 -> r0 = (-0.4, -0.4, 0.4, 1.2);
    # p1 = (2, 8, 6, 6): median 6, IQR 6.5 - 5 = 1.5 -> r1 = (-8/3, 4/3, 0, 0);
    # |r0 - r1| = (2.267, 1.733, 0.4, 1.2) -> rho = (1, 2/3, 0, 1/3) -> s~ = (1, 0.236, 0, 0.118).
    # k = 2 -> eligible pool 1, 2; first pick pool 1, then pool 2.
    r = step("pairwise", 2)
    npt.assert_allclose(r.raw_scores, [34 / 15, 26 / 15, 0.4, 1.2], rtol=1e-12)
    npt.assert_allclose(r.regularized, [1.0, 2 / 3 * 0.5**1.5, 0.0, 1 / 3 * 0.5**1.5], rtol=1e-9, atol=1e-15)
    npt.assert_array_equal(r.indices, [1, 2])


def test_worked_example_random():
    r = step("random", 2)
    # Fisher-Yates over (1, 2, 3, 4) with default_rng(0).random(2)
    u = np.random.default_rng(0).random(2)
    cand = [1, 2, 3, 4]
    j = int(u[0] * 4)
    cand[0], cand[j] = cand[j], cand[0]
    j = 1 + int(u[1] * 3)
    cand[1], cand[j] = cand[j], cand[1]
    npt.assert_array_equal(r.indices, cand[:2])
    assert r.error is None and r.raw_scores.size == 0


def test_record_is_compact_json():
    for method in ("variance", "pairwise", "random"):
        rec = step(method, 3).to_record()
        text = json.dumps(rec, allow_nan=False)
        assert len(text) < 4000
        assert to_jsonable(rec) == rec
        assert rec["method"] == method and len(rec["hypotheses"]) == 4
        assert [c["index"] for c in rec["chosen"]] == step(method, 3).indices.tolist()
    rec = step("variance", 3).to_record()
    assert rec["hypotheses"][2]["kept"] is False and rec["hypotheses"][3]["parse_error"]
    assert rec["chosen"][0]["regularized"] == pytest.approx(0.5**1.5)
    assert rec["raw_scores"]["n_finite"] == 4


def test_fewer_than_two_parseable_hypotheses():
    r = plan_step(["x", "x[0]", "lambda: 1"], ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, AVAIL, method="variance", k=2, seed=0)
    assert r.indices.size == 0 and "fewer than 2 parseable" in r.error
    json.dumps(r.to_record(), allow_nan=False)
    # random does not need hypotheses at all
    r = plan_step([], ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, AVAIL, method="random", k=2, seed=1)
    assert r.indices.size == 2 and r.error is None


def test_filter_fallback_with_too_few_observations():
    # One observation: no hypothesis has 2 finite pairs, so no fit is valid and the whole committee
    # is scored uncalibrated.
    r = plan_step(HYPS[:3], ["x", "z"], X_OBS[:1], Y_OBS[:1], POOL_X, POOL_U, AVAIL, method="variance", k=2, seed=0)
    assert r.fallback_used and r.keep.all() and not r.fit_ok.any()
    assert r.indices.size == 2 and r.error is None
    json.dumps(r.to_record(), allow_nan=False)


def test_nothing_available_or_all_undefined():
    r = plan_step(HYPS, ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, np.zeros(5, dtype=bool), method="variance", k=2, seed=0)
    assert r.indices.size == 0 and r.error == "no available pool points"
    r = plan_step(["log(-x)", "sqrt(-x - z)"], ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, AVAIL, method="pairwise", k=2, seed=0)
    assert r.indices.size == 0 and r.error == "no pool point received a finite score"
    r = step("variance", 0)
    assert r.indices.size == 0 and r.error is None


def test_discovered_law_source_and_non_string_hypotheses():
    src = "def discovered_law(x, z):\n    c = 2 * x\n    return c + z\n"
    r = plan_step([src, "x", 7], ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, AVAIL, method="variance", k=2, seed=0)
    assert r.parsed[0] is not None and r.parsed[2] is None and "string" in r.parse_errors[2]
    assert r.indices.size == 2


def test_plan_step_equals_plan_step_arrays_on_a_real_pool():
    rng = np.random.default_rng(4)
    U = rng.random((2048, 3))
    PX = 0.5 + 2.0 * U
    X = 0.5 + 2.0 * rng.random((9, 3))
    y = X[:, 0] * X[:, 1] / X[:, 2] ** 2
    hyps = ["m1*m2/r**2", "C*m1*m2/r", "m1 + m2/r**2", "m1*m2/r**3", "exp(m1)/r"]
    avail = rng.random(2048) < 0.95
    names = ["m1", "m2", "r"]
    for method in ("variance", "pairwise"):
        r = plan_step(hyps, names, X, y, PX, U, avail, method=method, k=4, seed=0)
        progs = [parse(h, names) for h in hyps]
        cols = np.flatnonzero(avail)
        ra = plan_step_arrays(evaluate_many(progs, X), y, evaluate_many(progs, PX[cols]), U[cols], method, 4, pool_indices=cols)
        npt.assert_array_equal(r.indices, ra.indices)
        assert r.indices.size == 4 and avail[r.indices].all() and np.unique(r.indices).size == 4
        assert set(r.kept.tolist()) <= set(range(5)) and 2 <= r.kept.size <= 4
        npt.assert_allclose(r.regularized, ra.regularized)


STEP_FIELDS = (
    "indices", "rows", "a", "b", "n_pairs", "fit_ok", "fit_error", "keep", "pool_indices", "raw_scores",
    "finite_fraction", "regularized", "eligible", "chosen_u",
)  # fmt: skip


@pytest.mark.parametrize("method", ["variance", "pairwise"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_committee_step_equals_plan_step_arrays(method, seed):
    """The one-call committee step (kept hypotheses only on the pool) reproduces the two-stage path exactly."""
    rng = np.random.default_rng(seed)
    names = ["m1", "m2", "r"]
    U = rng.random((700, 3))
    PX = np.exp(-3 + 6 * U)
    X = np.exp(-3 + 6 * rng.random((9, 3)))
    y = X[:, 0] * X[:, 1] / X[:, 2] ** 2 * (1 + 0.01 * rng.normal(size=9))
    hyps = ["m1*m2/r**2", "m1*m2/r**1.5", "m1*m2/r**3", "(m1 + m2)/r**2", "m1*m2*exp(-r/L)/r**2", "sqrt(m1 - 1)"]
    com = Committee([parse(h, names) for h in hyps])
    cols = np.flatnonzero(rng.random(700) < 0.9)
    r = com.step(X.T.copy(), y, PX[cols].T.copy(), U[cols], method, 4, seed=3, pool_indices=cols)
    ra = plan_step_arrays(com.evaluate(X), y, com.evaluate(PX[cols]), U[cols], method, 4, seed=3, pool_indices=cols)
    for name in STEP_FIELDS:
        npt.assert_array_equal(getattr(r, name), getattr(ra, name), err_msg=name)
    assert (r.error, r.fallback_used, r.seed) == (ra.error, ra.fallback_used, 3)
    # constants pass through
    from kernels import step_constants

    r2 = com.step(X.T.copy(), y, PX[cols].T.copy(), U[cols], method, 4, constants=step_constants(max_keep=5, threshold=1e9))
    assert r2.keep.sum() == 5
    # boundary weights prepared once for the whole pool, gathered for the available points
    from kernels import edge_weight

    r3 = com.step(X.T.copy(), y, PX[cols].T.copy(), U[cols], method, 4, seed=3, pool_indices=cols, edge=edge_weight(U)[cols])
    for name in STEP_FIELDS:
        npt.assert_array_equal(getattr(r3, name), getattr(r, name), err_msg=name)
    # weights other than the pool's own change the regularized scores accordingly
    w = np.linspace(0.0, 1.0, cols.size)
    r4 = com.step(X.T.copy(), y, PX[cols].T.copy(), U[cols], method, 4, pool_indices=cols, edge=w)
    fin = np.isfinite(r.raw_scores)
    rho = np.full(cols.size, np.nan)
    rho[fin] = np.argsort(np.argsort(r.raw_scores[fin], kind="stable"), kind="stable") / (fin.sum() - 1)
    npt.assert_allclose(r4.regularized, rho * w * r.finite_fraction, rtol=1e-15)


def test_committee_step_bad_input():
    com = Committee([parse(h, ["x", "z"]) for h in ("x", "x + z")])
    XT, PT = X_OBS.T.copy(), POOL_X.T.copy()
    with pytest.raises(ValueError, match="variance"):
        com.step(XT, Y_OBS, PT, POOL_U, "random", 2)
    with pytest.raises(ValueError, match="XT_obs"):
        com.step(XT[:1], Y_OBS, PT, POOL_U, "variance", 2)
    with pytest.raises(ValueError, match="XT_pool"):
        com.step(XT, Y_OBS, PT[:1], POOL_U, "variance", 2)
    with pytest.raises(ValueError, match="U_pool must be"):
        com.step(XT, Y_OBS, PT, POOL_U[:3], "variance", 2)
    with pytest.raises(ValueError, match="constants"):
        com.step(XT, Y_OBS, PT, POOL_U, "variance", 2, constants=np.zeros(3))
    bad = POOL_U.copy()
    bad[4, 1] = -0.1
    with pytest.raises(ValueError, match=r"U_pool\[4, 1\]"):
        com.step(XT, Y_OBS, PT, bad, "variance", 2)
    with pytest.raises(ValueError, match="one boundary weight per pool point"):
        com.step(XT, Y_OBS, PT, POOL_U, "variance", 2, edge=np.ones(2))
    w = np.ones(POOL_U.shape[0])
    w[3] = np.nan
    with pytest.raises(ValueError, match=r"edge\[3\]"):
        com.step(XT, Y_OBS, PT, POOL_U, "variance", 2, edge=w)
    one = Committee([parse("x", ["x", "z"])]).step(XT, Y_OBS, PT, POOL_U, "variance", 2)
    assert one.indices.size == 0 and "fewer than 2" in one.error


def test_committee_matches_evaluate_many():
    names = ["x", "z"]
    progs = [parse(h, names) for h in ("x + z", "sqrt(x) * z", "log(x - 2)")]
    X = np.random.default_rng(0).random((37, 2)) * 4
    npt.assert_array_equal(Committee(progs).evaluate(X), evaluate_many(progs, X))
    with pytest.raises(ValueError, match="shape"):
        Committee(progs).evaluate(X[:, :1])


def test_bad_inputs_raise():
    args = (HYPS, ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, AVAIL)
    with pytest.raises(ValueError, match="method"):
        plan_step(*args, method="entropy", k=2, seed=0)
    with pytest.raises(ValueError, match="k must"):
        plan_step(*args, method="variance", k=-1, seed=0)
    with pytest.raises(ValueError, match="X_obs must have 2 columns"):
        plan_step(HYPS, ["x", "z"], X_OBS[:, :1], Y_OBS, POOL_X, POOL_U, AVAIL, method="variance", k=2, seed=0)
    with pytest.raises(ValueError, match="y_obs"):
        plan_step(HYPS, ["x", "z"], X_OBS, Y_OBS[:2], POOL_X, POOL_U, AVAIL, method="variance", k=2, seed=0)
    with pytest.raises(ValueError, match="available"):
        plan_step(HYPS, ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, AVAIL.astype(int), method="variance", k=2, seed=0)
    with pytest.raises(TypeError, match="sequence of strings"):
        plan_step("x", ["x", "z"], X_OBS, Y_OBS, POOL_X, POOL_U, AVAIL, method="variance", k=2, seed=0)
    with pytest.raises(TypeError, match="real numbers"):
        plan_step(HYPS, ["x", "z"], X_OBS.astype(str), Y_OBS, POOL_X, POOL_U, AVAIL, method="variance", k=2, seed=0)
    bad_u = POOL_U.copy()
    bad_u[2, 0] = 1.5
    with pytest.raises(ValueError, match=r"U_pool\[1, 0\]"):  # column 1 of the available pool
        plan_step(HYPS, ["x", "z"], X_OBS, Y_OBS, POOL_X, bad_u, AVAIL, method="variance", k=2, seed=0)
    with pytest.raises(ValueError, match="needs a seed"):
        plan_step_arrays(np.zeros((2, 3)), np.zeros(3), np.zeros((2, 4)), np.full((4, 2), 0.5), "random", 2)
    with pytest.raises(ValueError, match=r"H_pool must have shape \(2, 4\)"):
        plan_step_arrays(np.zeros((2, 3)), np.zeros(3), np.zeros((3, 4)), np.full((4, 2), 0.5), "variance", 2)


def test_step_result_defaults():
    r = StepResult("variance", 4, None, np.zeros(0, dtype=np.int64), "x")
    assert r.kept.size == 0
    json.dumps(r.to_record(), allow_nan=False)
