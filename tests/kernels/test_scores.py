"""kernels.scores (variance and pairwise acquisition scores) against their NumPy twins."""

from __future__ import annotations

import math

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernels
from kernels._shared import _quantile_sorted
from kernels.scores import (
    _pairwise_scores,
    _variance_scores,
    finite_fraction,
    pairwise_scores,
    variance_scores,
)
from tests.kernels._jit_checks import assert_safe_jit_options, needs_jit
from tests.reference import finite_fraction_ref, pairwise_scores_fast_ref, pairwise_scores_ref, variance_scores_ref

nan, inf = float("nan"), float("inf")
SQ2 = math.sqrt(2.0)


def close(got, ref, rtol=1e-9, atol=1e-9):
    npt.assert_allclose(got, ref, rtol=rtol, atol=atol)  # NaN positions must agree


def test_exported_from_kernels():
    assert kernels.variance_scores is variance_scores
    assert kernels.pairwise_scores is pairwise_scores
    assert kernels.finite_fraction is finite_fraction


@needs_jit
def test_jit_options():
    assert_safe_jit_options(_variance_scores, _pairwise_scores)


@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 8, 11])
def test_quantile_matches_numpy_percentile(n):
    v = np.sort(np.random.default_rng(n).normal(size=n))
    for q in (0.25, 0.5, 0.75):
        assert _quantile_sorted(v, n, q) == np.percentile(v, 100 * q)


# Worked example: p0 = 2x and p1 = 2x + 2z - 2 over (x, z) in {(1,1), (3,1), (1,3), (3,3)}.
P_HAND = np.array([[2.0, 6.0, 2.0, 6.0], [2.0, 6.0, 6.0, 10.0]])


def test_variance_hand_case():
    # z0 = (-1, 1, -1, 1) (mean 4, sd 2); z1 = (-sqrt2, 0, 0, sqrt2) (mean 6, sd 2 sqrt2);
    # two values: variance = (z0 - z1)^2 / 4.
    expected = np.array([(SQ2 - 1) ** 2 / 4, 0.25, 0.25, (SQ2 - 1) ** 2 / 4])
    close(variance_scores(P_HAND), expected, rtol=1e-13, atol=1e-15)
    close(variance_scores_ref(P_HAND), expected, rtol=1e-13, atol=1e-15)


def test_pairwise_hand_case():
    # p0: median 4, IQR 6 - 2 = 4 -> r0 = (-.5, .5, -.5, .5); p1: median 6, IQR 7 - 5 = 2 -> r1 = (-2, 0, 0, 2)
    expected = np.array([1.5, 0.5, 0.5, 1.5])
    close(pairwise_scores(P_HAND), expected, rtol=1e-14, atol=0)
    close(pairwise_scores(P_HAND, direct_max=0), expected, rtol=1e-14, atol=1e-15)
    close(pairwise_scores_ref(P_HAND), expected, rtol=1e-14, atol=0)


def test_constant_hypothesis_is_zeros_in_variance():
    P = np.array([[1.0, 2.0, 3.0], [5.0, 5.0, 5.0], [0.1, 0.1, 0.1]])
    z = np.array([-1.0, 0.0, 1.0]) * math.sqrt(1.5)
    # values z, 0, 0 -> mean z/3, variance (z^2 (4/9) + 2 z^2/9) / 3 = 2 z^2 / 9
    close(variance_scores(P, n_points=P.shape[1]), 2 * z**2 / 9, rtol=1e-12, atol=1e-15)
    close(variance_scores_ref(P), 2 * z**2 / 9, rtol=1e-12, atol=1e-15)


def test_pairwise_drops_constant_and_uses_sd_when_iqr_is_zero():
    P = np.array([[0.0, 0.0, 0.0, 0.0, 4.0], [7.0, 7.0, 7.0, 7.0, 7.0], [1.0, 2.0, 3.0, 4.0, 5.0]])
    # row 0: IQR 0 -> sd = 1.6, median 0 -> r0 = (0, 0, 0, 0, 2.5); row 1 dropped;
    # row 2: median 3, IQR 2 -> r2 = (-1, -.5, 0, .5, 1)
    expected = np.abs(np.array([0, 0, 0, 0, 2.5]) - np.array([-1, -0.5, 0, 0.5, 1]))
    close(pairwise_scores(P, n_points=P.shape[1]), expected, rtol=1e-13, atol=1e-15)
    close(pairwise_scores_ref(P), expected, rtol=1e-13, atol=1e-15)
    assert np.isnan(pairwise_scores(P[:2])).all()  # one usable hypothesis: no pairs


def test_nan_handling_and_minimum_counts():
    P = np.array([[1.0, 2.0, nan, 4.0, inf], [2.0, nan, nan, 1.0, 3.0], [3.0, 1.0, 5.0, nan, 2.0]])
    var = variance_scores(P, n_points=P.shape[1])
    pair = pairwise_scores(P, n_points=P.shape[1])
    close(var, variance_scores_ref(P))
    close(pair, pairwise_scores_ref(P))
    assert np.isnan(var[2]) and np.isnan(pair[2])  # only one finite prediction
    assert np.isfinite(var[[0, 1, 3, 4]]).all()
    close(finite_fraction(P, n_points=P.shape[1]), [1.0, 2 / 3, 1 / 3, 2 / 3, 2 / 3], rtol=1e-15, atol=0)


@pytest.mark.parametrize("shape", [(0, 5), (3, 0), (1, 4), (2, 1)])
def test_degenerate_shapes(shape):
    P = np.arange(float(np.prod(shape))).reshape(shape)
    for f, ref in ((variance_scores, variance_scores_ref), (pairwise_scores, pairwise_scores_ref)):
        got = f(P, n_points=P.shape[1])
        assert got.shape == (shape[1],)
        close(got, ref(P))
    if shape[0] < 2:
        assert np.isnan(variance_scores(P, n_points=P.shape[1])).all()
    close(finite_fraction(P, n_points=P.shape[1]), finite_fraction_ref(P), rtol=1e-15, atol=0)


def test_all_nan_pool():
    P = np.full((4, 6), nan)
    assert np.isnan(variance_scores(P, n_points=P.shape[1])).all() and np.isnan(pairwise_scores(P, n_points=P.shape[1])).all()
    npt.assert_array_equal(finite_fraction(P, n_points=P.shape[1]), np.zeros(6))


def test_huge_finite_predictions_do_not_overflow():
    rng = np.random.default_rng(3)
    P = rng.normal(size=(3, 50))
    big = P * np.array([[1e300], [1.0], [1e-300]])
    close(variance_scores(big, n_points=P.shape[1]), variance_scores(P, n_points=P.shape[1]), rtol=1e-9, atol=1e-12)
    close(pairwise_scores(big, n_points=P.shape[1]), pairwise_scores(P, n_points=P.shape[1]), rtol=1e-9, atol=1e-12)
    close(variance_scores(big, n_points=P.shape[1]), variance_scores_ref(big), rtol=1e-9, atol=1e-12)


def test_bad_input():
    with pytest.raises(ValueError, match="2-D"):
        variance_scores(np.ones(3))
    with pytest.raises(TypeError, match="real numbers"):
        pairwise_scores(np.array([["x"]]))
    with pytest.raises(ValueError, match="direct_max"):
        pairwise_scores(np.ones((2, 2)), direct_max=-1)


cell = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False),
    st.sampled_from([nan, inf, -inf, 0.0, 1.0, 2.0]),
)


@given(n_hyp=st.integers(0, 7), n=st.integers(0, 12), data=st.data())
def test_scores_match_twins(n_hyp, n, data):
    P = np.array(data.draw(st.lists(cell, min_size=n_hyp * n, max_size=n_hyp * n)), dtype=float).reshape(n_hyp, n)
    close(variance_scores(P, n_points=P.shape[1]), variance_scores_ref(P), rtol=1e-7, atol=1e-9)
    ref = pairwise_scores_ref(P)
    close(pairwise_scores(P, n_points=P.shape[1]), ref, rtol=1e-7, atol=1e-9)
    close(pairwise_scores(P, n_points=P.shape[1], direct_max=0), ref, rtol=1e-7, atol=1e-9)
    close(pairwise_scores_fast_ref(P), ref, rtol=1e-7, atol=1e-9)
    close(finite_fraction(P, n_points=P.shape[1]), finite_fraction_ref(P), rtol=1e-15, atol=0)


@given(seed=st.integers(0, 2**32 - 1), n_hyp=st.integers(2, 40), n=st.integers(1, 300), frac_nan=st.sampled_from([0.0, 0.1, 0.5]))
def test_scores_match_twins_continuous(seed, n_hyp, n, frac_nan):
    rng = np.random.default_rng(seed)
    P = rng.lognormal(0, 2, size=(n_hyp, n)) * rng.normal(size=(n_hyp, 1))
    P[rng.random(P.shape) < frac_nan] = nan
    close(variance_scores(P, n_points=P.shape[1]), variance_scores_ref(P), rtol=1e-8, atol=1e-10)
    ref = pairwise_scores_fast_ref(P)
    close(pairwise_scores(P, n_points=P.shape[1]), ref, rtol=1e-8, atol=1e-10)
    close(pairwise_scores(P, n_points=P.shape[1], direct_max=0), ref, rtol=1e-8, atol=1e-10)
    close(pairwise_scores(P, n_points=P.shape[1], direct_max=10**6), ref, rtol=1e-8, atol=1e-10)


@given(seed=st.integers(0, 2**32 - 1), n_hyp=st.integers(2, 6), n=st.integers(2, 60))
def test_scores_invariant_to_positive_affine_rows(seed, n_hyp, n):
    """Both scores standardize each hypothesis, so a positive affine map of a row changes nothing."""
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(n_hyp, n))
    A = rng.uniform(0.1, 10, size=(n_hyp, 1))
    B = rng.uniform(-5, 5, size=(n_hyp, 1))
    close(variance_scores(A * P + B, n_points=P.shape[1]), variance_scores(P, n_points=P.shape[1]), rtol=1e-7, atol=1e-9)
    close(pairwise_scores(A * P + B, n_points=P.shape[1]), pairwise_scores(P, n_points=P.shape[1]), rtol=1e-7, atol=1e-9)
    assert np.all(variance_scores(P, n_points=P.shape[1]) >= 0) and np.all(pairwise_scores(P, n_points=P.shape[1]) >= 0)


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 3000),
    kind=st.sampled_from(["lognormal", "ties", "cluster", "signed"]),
)
def test_quartiles_equal_numpy_percentile(seed, n, kind):
    """The radix multi-select quartiles are bit-identical to np.percentile (linear)."""
    from kernels._shared import _quartiles

    rng = np.random.default_rng(seed)
    x = rng.lognormal(0, 4, size=n)
    if kind == "ties":
        x = np.round(x, 0)
    elif kind == "cluster":
        x = 1.0 + 1e-12 * rng.random(n)
        x[: n // 10] = 1e6
    elif kind == "signed":
        x = x * rng.choice([-1.0, 1.0], size=n)
    assert tuple(_quartiles(x)) == tuple(np.percentile(x, [25, 50, 75]))
