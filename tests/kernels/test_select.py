"""kernels.select (eligibility, greedy batch, random batch, fused step) against NumPy twins."""

from __future__ import annotations

import math

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernels
from kernels.rank_reg import edge_weight
from kernels.select import (
    _eligible,
    _eligible_unit,
    _greedy,
    _select_batch,
    _select_random,
    eligible_set,
    select_batch,
    select_random,
)
from kernels.step import (
    _committee_prepare,
    _committee_select,
    _hypotheses_prepare,
    _packed_order,
    acquisition_step,
    committee_step,
    step_constants,
)
from tests.kernels._jit_checks import assert_safe_jit_options, needs_jit
from tests.reference import acquisition_step_ref, select_batch_ref, select_random_ref

nan, inf = float("nan"), float("inf")


def test_exported_from_kernels():
    assert kernels.select_batch is select_batch
    assert kernels.select_random is select_random
    assert kernels.eligible_set is eligible_set
    assert kernels.acquisition_step is acquisition_step


@needs_jit
def test_jit_options():
    assert_safe_jit_options(
        _select_batch, _select_random, _hypotheses_prepare, _committee_prepare, _committee_select,
        _eligible, _eligible_unit, _greedy, _packed_order,
    )  # fmt: skip


# ------------------------------------------------------------------------------------------------
# eligibility
# ------------------------------------------------------------------------------------------------


def test_eligible_hand_cases():
    s = np.array([0.1, 0.9, nan, 0.5, 0.9, 0.2, 0.3, 0.0])
    # 7 finite -> ceil(7/4) = 2 (at least k)
    npt.assert_array_equal(eligible_set(s, 1), [1, 4])
    npt.assert_array_equal(eligible_set(s, 3), [1, 3, 4])
    npt.assert_array_equal(eligible_set(s, 100), [0, 1, 3, 4, 5, 6, 7])  # k beyond the finite count
    # ties at the cut are admitted lowest index first
    npt.assert_array_equal(eligible_set(np.full(4, 0.5), 1), [0])
    npt.assert_array_equal(eligible_set(np.array([0.1, 0.5, 0.5, 0.5, 0.9, 0.0, 0.0, 0.0]), 1), [1, 4])
    assert eligible_set(np.array([nan, inf, -inf]), 4).size == 0
    assert eligible_set(np.zeros(0), 4).size == 0


# ------------------------------------------------------------------------------------------------
# greedy batch
# ------------------------------------------------------------------------------------------------


def test_diversity_can_beat_a_higher_score():
    # Eligible: all three (k = 3). s' = (1, 0.2, 0). After the first pick (point 0):
    # point 1: 0.65 * 0.2 + 0.35 * 0.02 / sqrt 2 = 0.1349; point 2: 0.35 * |(0.4, 0.4)| / sqrt 2 = 0.14.
    s = np.array([1.0, 0.2, 0.0])
    U = np.array([[0.5, 0.5], [0.5, 0.52], [0.1, 0.1]])
    picks, elig = select_batch(s, U, 3)
    npt.assert_array_equal(elig, [0, 1, 2])
    npt.assert_array_equal(picks, [0, 2, 1])
    # with a slightly higher score the near point wins
    picks, _ = select_batch(np.array([1.0, 0.3, 0.0]), U, 3)
    npt.assert_array_equal(picks, [0, 1, 2])
    for sc in ([1.0, 0.2, 0.0], [1.0, 0.3, 0.0]):
        npt.assert_array_equal(select_batch(np.array(sc), U, 3)[0], select_batch_ref(np.array(sc), U, 3)[0])


def test_equal_scores_select_by_diversity_and_index():
    # All scores equal -> s' = 1; first pick = lowest index; then the farthest point.
    U = np.array([[0.5, 0.5], [0.6, 0.5], [0.1, 0.9], [0.5, 0.55]])
    picks, elig = select_batch(np.ones(4), U, 2, top_fraction=1.0)
    npt.assert_array_equal(picks, [0, 2])
    # First pick: the highest score, lowest index among ties.
    picks, _ = select_batch(np.array([0.3, 0.9, 0.9, 0.1]), U, 1, top_fraction=1.0)
    npt.assert_array_equal(picks, [1])


@pytest.mark.parametrize("k", [0, 1, 4, 2048])
def test_k_edge_cases(k):
    rng = np.random.default_rng(0)
    s = rng.random(10)
    s[[2, 5]] = nan
    U = rng.random((10, 3))
    picks, elig = select_batch(s, U, k)
    rp, re = select_batch_ref(s, U, k)
    npt.assert_array_equal(picks, rp)
    npt.assert_array_equal(elig, re)
    assert picks.size == min(k, elig.size)
    if k >= 10:  # every finite score becomes eligible and all are returned, in pick order
        assert sorted(picks.tolist()) == [0, 1, 3, 4, 6, 7, 8, 9]


def test_empty_and_all_nan_pool():
    picks, elig = select_batch(np.zeros(0), np.zeros((0, 2)), 4)
    assert picks.size == 0 and elig.size == 0
    picks, elig = select_batch(np.full(5, nan), np.full((5, 2), 0.5), 4)
    assert picks.size == 0 and elig.size == 0


def test_select_bad_input():
    with pytest.raises(ValueError, match=r"U\[0, 1\]"):
        select_batch(np.ones(2), np.array([[0.5, -0.1], [0.5, 0.5]]), 1)
    with pytest.raises(ValueError, match="one row per point"):
        select_batch(np.ones(2), np.full((3, 2), 0.5), 1)
    with pytest.raises(ValueError, match="non-negative integer"):
        select_batch(np.ones(2), np.full((2, 2), 0.5), -1)
    with pytest.raises(ValueError, match="top_fraction"):
        select_batch(np.ones(2), np.full((2, 2), 0.5), 1, top_fraction=0.0)


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 300),
    d=st.integers(1, 4),
    k=st.integers(0, 12),
    nan_frac=st.sampled_from([0.0, 0.3, 0.9]),
    zero_frac=st.sampled_from([0.0, 0.5]),
)
def test_select_matches_twin_and_invariants(seed, n, d, k, nan_frac, zero_frac):
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    s[rng.random(n) < zero_frac] = 0.0  # many exact ties, as boundary points give
    s[rng.random(n) < nan_frac] = nan
    U = rng.random((n, d))
    picks, elig = select_batch(s, U, k)
    rp, re = select_batch_ref(s, U, k)
    npt.assert_array_equal(elig, re)
    npt.assert_array_equal(picks, rp)
    nf = int(np.isfinite(s).sum())
    assert elig.size == min(max(math.ceil(nf / 4), min(k, nf)), nf)
    assert picks.size == min(k, elig.size) == np.unique(picks).size
    assert np.all(np.isin(picks, elig)) and np.all(np.isfinite(s[picks]))
    if picks.size:
        assert s[picks[0]] == np.nanmax(s)


# ------------------------------------------------------------------------------------------------
# random batch
# ------------------------------------------------------------------------------------------------


def test_random_hand_case():
    avail = np.array([True, False, True, True, True])
    # candidates (0, 2, 3, 4); t=0: j = floor(0.5 * 4) = 2 -> 3; t=1: j = 1 + floor(0.99 * 3) = 3 -> 4
    npt.assert_array_equal(select_random(avail, 2, uniforms=[0.5, 0.99]), [3, 4])
    npt.assert_array_equal(select_random_ref(avail, [0.5, 0.99]), [3, 4])


def test_random_is_seeded_unique_and_available():
    rng = np.random.default_rng(1)
    avail = rng.random(2048) < 0.9
    a = select_random(avail, 4, seed=7)
    npt.assert_array_equal(a, select_random(avail, 4, seed=7))
    assert a.size == 4 == np.unique(a).size and avail[a].all()
    assert not np.array_equal(a, select_random(avail, 4, seed=8))
    npt.assert_array_equal(a, select_random_ref(avail, np.random.default_rng(7).random(4)))
    every = select_random(avail, 5000, seed=3)  # k beyond the pool: every available point once
    npt.assert_array_equal(np.sort(every), np.flatnonzero(avail))
    assert select_random(np.zeros(5, dtype=bool), 3, seed=0).size == 0
    assert select_random(avail, 0, seed=0).size == 0


def test_random_is_uniform():
    # First draw over 8 candidates, 4000 fixed seeds: each candidate near 500 (binomial sd ~ 21).
    avail = np.ones(8, dtype=bool)
    counts = np.bincount([select_random(avail, 1, seed=s)[0] for s in range(4000)], minlength=8)
    assert np.all(np.abs(counts - 500) < 110), counts


def test_random_bad_input():
    with pytest.raises(ValueError, match="seed or pre-drawn"):
        select_random(np.ones(3, dtype=bool), 1)
    with pytest.raises(ValueError, match="boolean mask"):
        select_random(np.ones(3), 1, seed=0)
    with pytest.raises(ValueError, match=r"\[0, 1\)"):
        select_random(np.ones(3, dtype=bool), 1, uniforms=[1.0])


# ------------------------------------------------------------------------------------------------
# fused step
# ------------------------------------------------------------------------------------------------

NAMES = ("a", "b", "n_pairs", "ok", "err", "keep", "fallback", "raw", "v", "reg", "eligible", "picks")


def _well_separated(x, rel=1e-7):
    """Distinct finite values differ by more than ``rel`` (so rounding cannot reorder them)."""
    f = np.sort(x[np.isfinite(x)])
    if f.size < 2:
        return True
    gaps = np.diff(f)
    return bool(np.all((gaps == 0) | (gaps > rel * (1 + np.abs(f[1:])))))


def assert_step_equal(got, ref):
    # Regularized scores, eligibility and picks follow the order of the raw scores; where raw scores
    # lie within rounding noise of each other (e.g. identical hypotheses: variance ~1e-31) that order
    # is the rounding's, which differs between the compiled kernel and its twin, so they are compared
    # only when the raw scores are well separated.
    raw = np.asarray(got[7])
    ordered = _well_separated(raw)
    for name, g, r in zip(NAMES, got, ref):
        g, r = np.asarray(g), np.asarray(r)
        assert g.shape == r.shape, name
        if name == "reg" and not ordered:
            continue
        if g.dtype.kind == "f":
            npt.assert_allclose(g, r, rtol=1e-8, atol=1e-10, err_msg=name)
        elif name not in ("eligible", "picks"):
            npt.assert_array_equal(g, r, err_msg=name)
    if ordered and _well_separated(np.asarray(got[9])):
        npt.assert_array_equal(got[10], ref[10])
        npt.assert_array_equal(got[11], ref[11])


def _problem(seed, n_hyp, n_obs, n, d, nan_frac):
    rng = np.random.default_rng(seed)
    X = rng.random((n_obs, d)) + 0.5
    y = X.prod(axis=1) * rng.lognormal(0, 0.05, n_obs)
    U = rng.random((n, d))
    XP = U + 0.5
    powers = rng.integers(-2, 3, size=(n_hyp, d))
    H_obs = np.stack([np.prod(X**p, axis=1) for p in powers]) if n_hyp else np.zeros((0, n_obs))
    H_pool = np.stack([np.prod(XP**p, axis=1) for p in powers]) if n_hyp else np.zeros((0, n))
    H_pool[rng.random(H_pool.shape) < nan_frac] = nan
    return H_obs, y, H_pool, U


STEP_PROBLEMS = dict(
    seed=st.integers(0, 2**32 - 1),
    n_hyp=st.integers(0, 7),
    n_obs=st.integers(0, 10),
    n=st.integers(0, 200),
    d=st.integers(1, 3),
    k=st.integers(0, 6),
    nan_frac=st.sampled_from([0.0, 0.1, 0.6]),
    method=st.sampled_from(["variance", "pairwise"]),
)
"""Strategies of a random fused-step problem (:func:`_problem` arguments, batch size and method)."""


@given(**STEP_PROBLEMS)
def test_fused_step_matches_twin(seed, n_hyp, n_obs, n, d, k, nan_frac, method):
    H_obs, y, H_pool, U = _problem(seed, n_hyp, n_obs, n, d, nan_frac)
    got = acquisition_step(H_obs, y, H_pool, U, method, k)
    assert_step_equal(got, acquisition_step_ref(H_obs, y, H_pool, U, method, k))
    picks = got[-1]
    assert picks.size == np.unique(picks).size <= k
    assert np.all((picks >= 0) & (picks < n))


def test_fused_step_equals_composed_kernels():
    H_obs, y, H_pool, U = _problem(5, 5, 9, 512, 3, 0.05)
    for method in ("variance", "pairwise"):
        a, b, n_pairs, ok, err, keep, fallback, raw, v, reg, elig, picks = acquisition_step(H_obs, y, H_pool, U, method, 4)
        ca, cb, cn, cok, cerr = kernels.calibrate(H_obs, y)
        ckeep, cfb = kernels.fit_filter(cerr, cok)
        P = ca[ckeep, None] * H_pool[ckeep] + cb[ckeep, None]
        craw = (kernels.variance_scores if method == "variance" else kernels.pairwise_scores)(P)
        creg = kernels.rank_regularize(craw, U, kernels.finite_fraction(P))
        cpicks, celig = kernels.select_batch(creg, U, 4)
        npt.assert_array_equal(keep, ckeep)
        assert fallback == cfb
        npt.assert_allclose(raw, craw, rtol=1e-12)
        npt.assert_allclose(reg, creg, rtol=1e-12)
        npt.assert_array_equal(picks, cpicks)
        npt.assert_array_equal(elig, celig)


def test_fused_step_bad_input():
    H_obs, y, H_pool, U = _problem(1, 3, 5, 20, 2, 0.0)
    with pytest.raises(ValueError, match="method"):
        acquisition_step(H_obs, y, H_pool, U, "entropy", 2)
    with pytest.raises(ValueError, match="H_pool"):
        acquisition_step(H_obs, y, H_pool[:2], U, "variance", 2)
    with pytest.raises(ValueError, match="U_pool"):
        acquisition_step(H_obs, y, H_pool, U[:5], "variance", 2)
    U_bad = U.copy()
    U_bad[3, 1] = nan
    with pytest.raises(ValueError, match=r"U_pool\[3, 1\]"):
        acquisition_step(H_obs, y, H_pool, U_bad, "variance", 2)


@given(**STEP_PROBLEMS)
@pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning")
def test_vectorized_numpy_step_matches_twin(seed, n_hyp, n_obs, n, d, k, nan_frac, method):
    """The vectorized NumPy step the benchmarks time computes the same as the loop twins."""
    from tests.reference import acquisition_step_np_ref

    H_obs, y, H_pool, U = _problem(seed, n_hyp, n_obs, n, d, nan_frac)
    assert_step_equal(acquisition_step_np_ref(H_obs, y, H_pool, U, method, k), acquisition_step_ref(H_obs, y, H_pool, U, method, k))


def test_committee_step_equals_acquisition_step():
    """Evaluation + step in one call: same outputs as evaluating all programs first."""
    from etc_fast.expr import evaluate_many, pack, parse

    rng = np.random.default_rng(7)
    names = ["x", "y"]
    progs = [parse(h, names) for h in ("x*y", "x**2*y", "x/y", "x + y", "log(x - 1)*y")]
    X = 0.5 + 2 * rng.random((8, 2))
    yo = X[:, 0] * X[:, 1] * (1 + 0.02 * rng.normal(size=8))
    U = rng.random((300, 2))
    PX = 0.5 + 2 * U
    pk = pack(progs)
    for method in ("variance", "pairwise"):
        for C, kw in ((None, {}), (step_constants(max_keep=3, threshold=2.0), dict(max_keep=3, threshold=2.0))):
            fit, n_pairs, flags, scores, elig, picks, fallback = committee_step(*pk, X.T, yo, PX.T, U, method, 4, C)
            ref = acquisition_step(evaluate_many(progs, X), yo, evaluate_many(progs, PX), U, method, 4, **kw)
            got = (fit[0], fit[1], n_pairs, flags[0], fit[2], flags[1], fallback, scores[0], scores[1], scores[2], elig, picks)
            for name, g, r in zip(NAMES, got, ref):
                npt.assert_array_equal(g, r, err_msg=name)
            if C is None:  # prepared boundary weights give the same step
                got_w = committee_step(*pk, X.T, yo, PX.T, U, method, 4, edge=edge_weight(U))
                plain = (fit, n_pairs, flags, scores, elig, picks, fallback)
                for name, g, r in zip(("fit", "n_pairs", "flags", "scores", "eligible", "picks", "fallback"), got_w, plain):
                    npt.assert_array_equal(g, r, err_msg=name)


def test_committee_step_bad_input():
    from etc_fast.expr import pack, parse

    pk = pack([parse(h, ["x"]) for h in ("x", "2*x")])
    X, yo, U = np.ones((1, 3)), np.ones(3), np.full((4, 1), 0.5)
    with pytest.raises(ValueError, match="method"):
        committee_step(*pk, X, yo, X[:, :1].repeat(4, 1), U, "entropy", 2)
    with pytest.raises(ValueError, match="XT_pool"):
        committee_step(*pk, X, yo, np.ones((2, 4)), U, "variance", 2)
    with pytest.raises(ValueError, match="constants"):
        committee_step(*pk, X, yo, np.ones((1, 4)), U, "variance", 2, np.zeros(2))
    with pytest.raises(ValueError, match="one boundary weight"):
        committee_step(*pk, X, yo, np.ones((1, 4)), U, "variance", 2, edge=np.ones(3))
    with pytest.raises(ValueError, match=r"edge\[2\]"):
        committee_step(*pk, X, yo, np.ones((1, 4)), U, "variance", 2, edge=np.array([1.0, 0.5, -0.5, 0.0]))
    with pytest.raises(ValueError, match="min_keep"):
        step_constants(min_keep=0)
    with pytest.raises(ValueError, match="top_fraction"):
        step_constants(top_fraction=0.0)
    with pytest.raises(ValueError, match="program 0"):
        committee_step(np.array([0]), np.array([3]), np.zeros(0), np.array([0]), np.array([1]), np.array([0]), X, yo, np.ones((1, 4)), U, "variance", 2)
