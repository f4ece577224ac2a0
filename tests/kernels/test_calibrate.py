"""kernels.calibrate (affine calibration, fit filter) against its NumPy twin."""

from __future__ import annotations

import math

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernels
from kernels.calibrate import _calibrate, _fit_filter, calibrate, fit_denominator, fit_filter
from tests.kernels._jit_checks import assert_safe_jit_options, needs_jit
from tests.reference import calibrate_ref, fit_denominator_ref, fit_filter_ref

nan, inf = float("nan"), float("inf")


def assert_calib_equal(got, ref, y=None):
    """Equal up to rounding; absolute slack scales with the largest |y| (residuals of exact fits are noise)."""
    a, b, n, ok, err = got
    ra, rb, rn, rok, rerr = ref
    ymax = 1.0
    if y is not None:
        fin = np.abs(np.asarray(y, dtype=float))
        fin = fin[np.isfinite(fin)]
        ymax = max(1.0, float(fin.max(initial=0.0)))
    npt.assert_array_equal(n, rn)
    npt.assert_array_equal(ok, rok)
    npt.assert_allclose(a, ra, rtol=1e-9, atol=1e-12)
    npt.assert_allclose(b, rb, rtol=1e-9, atol=1e-12 * ymax)
    denom = fit_denominator_ref(y) if y is not None else 1.0
    npt.assert_allclose(err, rerr, rtol=1e-9, atol=1e-12 * ymax / denom)


def test_exported_from_kernels():
    assert kernels.calibrate is calibrate
    assert kernels.fit_filter is fit_filter


@needs_jit
def test_jit_options():
    assert_safe_jit_options(_calibrate, _fit_filter)
    for fn in (_calibrate, _fit_filter):
        assert fn._cache is not None and type(fn._cache).__name__ != "NullCache"


def test_exact_affine_fit_has_zero_error():
    h = np.array([[1.0, 2.0, 4.0, 8.0]])
    y = 3.0 * h[0] + 1.0
    a, b, n, ok, err = calibrate(h, y)
    npt.assert_allclose([a[0], b[0]], [3.0, 1.0], rtol=1e-12)
    assert n[0] == 4 and ok[0]
    assert err[0] < 1e-12


def test_two_pairs_fit_scale_only():
    # a = sum(h y) / sum(h^2) = (2 + 10) / 5; residuals 0.4, -0.2; D = median(|y|) = 3.5
    a, b, n, ok, err = calibrate([[1.0, 2.0, nan]], [2.0, 5.0, 7.0])
    assert n[0] == 2 and ok[0]
    npt.assert_allclose(a[0], 2.4, rtol=1e-12)
    assert b[0] == 0.0
    expected = math.sqrt((0.4**2 + 0.2**2) / 2) / np.percentile([2.0, 5.0, 7.0], 50)
    npt.assert_allclose(err[0], expected, rtol=1e-12)


def test_one_pair_is_invalid_identity():
    a, b, n, ok, err = calibrate([[1.0, nan, inf], [nan, nan, nan]], [2.0, 3.0, 4.0])
    npt.assert_array_equal(n, [1, 0])
    assert not ok.any()
    npt.assert_array_equal(a, [1.0, 1.0])
    npt.assert_array_equal(b, [0.0, 0.0])
    assert np.isnan(err).all()


def test_pairs_need_finite_y_too():
    a, b, n, ok, err = calibrate([[1.0, 2.0, 3.0, 4.0]], [1.0, nan, 3.0, -inf])
    assert n[0] == 2 and ok[0] and b[0] == 0.0


def test_degenerate_constant_hypothesis_fits_the_mean():
    # Constant h over >= 3 pairs: a = 0, b = mean(y); error = RMS(y - mean) / median|y|.
    y = np.array([2.0, 4.0, 12.0])
    a, b, n, ok, err = calibrate([[5.0, 5.0, 5.0]], y)
    assert ok[0] and a[0] == 0.0
    npt.assert_allclose(b[0], 6.0, rtol=1e-15)
    npt.assert_allclose(err[0], math.sqrt(56 / 3) / 4.0, rtol=1e-12)


def test_zero_hypothesis_two_pairs_scale_zero():
    a, b, n, ok, err = calibrate([[0.0, 0.0]], [1.0, 3.0])
    assert ok[0] and a[0] == 0.0 and b[0] == 0.0
    npt.assert_allclose(err[0], math.sqrt(5.0) / 2.0, rtol=1e-12)


def test_huge_hypothesis_values_do_not_overflow():
    h = 1e300 * np.array([[1.0, 2.0, 3.0, 5.0]])
    y = np.array([1.0, 2.0, 3.0, 5.0])
    a, b, n, ok, err = calibrate(h, y)
    assert ok[0]
    npt.assert_allclose(a[0], 1e-300, rtol=1e-12)
    assert abs(b[0]) < 1e-12 and err[0] < 1e-12


def test_non_finite_fit_is_invalid():
    # Huge same-sign y: the sum of y overflows in any order, so the fit is reported invalid.
    y = [1.5e308, 1.5e308, 1.5e308]
    a, b, n, ok, err = calibrate([[1.0, 2.0, 3.0]], y)
    ref = calibrate_ref([[1.0, 2.0, 3.0]], y)
    assert_calib_equal((a, b, n, ok, err), ref)
    assert not ok[0] and a[0] == 1.0 and np.isnan(err[0])


@pytest.mark.parametrize(
    "y, expected",
    [
        ([1.0, -3.0, 2.0], 2.0),  # median |y|
        ([0.0, 0.0, 0.0, 5.0], 1.25),  # median 0 -> mean |y|
        ([0.0, 0.0, nan], 1.0),  # mean 0 -> 1
        ([nan, inf], 1.0),  # nothing finite -> 1
        ([], 1.0),
        ([4.0, nan, 1.0], 2.5),  # even count: linear interpolation
    ],
)
def test_fit_denominator(y, expected):
    y = np.array(y, dtype=float)
    assert fit_denominator(y) == expected == fit_denominator_ref(y)


def test_no_hypotheses_and_no_observations():
    out = calibrate(np.zeros((0, 3)), np.ones(3))
    assert all(x.shape == (0,) for x in out)
    a, b, n, ok, err = calibrate(np.zeros((2, 0)), np.zeros(0))
    npt.assert_array_equal(n, [0, 0])
    assert not ok.any()


def test_shape_errors():
    with pytest.raises(ValueError, match="observation columns"):
        calibrate(np.ones((2, 3)), np.ones(4))
    with pytest.raises(ValueError, match="2-D"):
        calibrate(np.ones(3), np.ones(3))
    with pytest.raises(TypeError, match="real numbers"):
        calibrate(np.array([["a", "b"]]), np.ones(2))


# Finite values are 0 or of magnitude >= 1e-3: a median |y| near the underflow range divides
# rounding noise into astronomically large (and order-dependent) fit errors.
finite_or_missing = st.one_of(
    st.floats(-1e6, 1e6, allow_nan=False, allow_infinity=False).map(lambda x: x if abs(x) >= 1e-3 else 0.0),
    st.sampled_from([nan, inf, -inf, 0.0, 1.0]),
)


@given(
    n_hyp=st.integers(0, 6),
    n_obs=st.integers(0, 9),
    data=st.data(),
)
def test_calibrate_matches_twin(n_hyp, n_obs, data):
    H = np.array(data.draw(st.lists(finite_or_missing, min_size=n_hyp * n_obs, max_size=n_hyp * n_obs)), dtype=float)
    H = H.reshape(n_hyp, n_obs)
    y = np.array(data.draw(st.lists(finite_or_missing, min_size=n_obs, max_size=n_obs)), dtype=float)
    assert_calib_equal(calibrate(H, y), calibrate_ref(H, y), y)


@given(seed=st.integers(0, 2**32 - 1), n_hyp=st.integers(1, 8), n_obs=st.integers(2, 12))
def test_calibrate_matches_twin_on_continuous_data(seed, n_hyp, n_obs):
    rng = np.random.default_rng(seed)
    H = rng.lognormal(0, 3, size=(n_hyp, n_obs)) * rng.choice([-1, 1], size=(n_hyp, 1))
    y = rng.lognormal(0, 2, size=n_obs)
    H[rng.random(H.shape) < 0.15] = nan
    assert_calib_equal(calibrate(H, y), calibrate_ref(H, y), y)


# ------------------------------------------------------------------------------------------------
# fit filter
# ------------------------------------------------------------------------------------------------


def test_filter_keeps_four_lowest_passing():
    err = np.array([0.1, 0.8, 0.2, 0.05, 0.5, 0.3])
    keep, fallback = fit_filter(err, np.ones(6, dtype=bool))
    assert not fallback
    npt.assert_array_equal(np.flatnonzero(keep), [0, 2, 3, 5])


def test_filter_keeps_two_lowest_when_fewer_than_two_pass():
    keep, fallback = fit_filter(np.array([0.9, 0.1, 2.0]), np.ones(3, dtype=bool))
    assert not fallback
    npt.assert_array_equal(np.flatnonzero(keep), [0, 1])
    keep, _ = fit_filter(np.array([3.0, 2.0, 5.0, 0.9]), np.ones(4, dtype=bool))
    npt.assert_array_equal(np.flatnonzero(keep), [1, 3])


def test_filter_falls_back_with_fewer_than_two_valid_fits():
    keep, fallback = fit_filter(np.array([0.1, nan, 0.2]), np.array([True, False, False]))
    assert fallback and keep.all()
    keep, fallback = fit_filter(np.zeros(0), np.zeros(0, dtype=bool))
    assert fallback and keep.size == 0


def test_filter_ignores_invalid_fits_and_breaks_ties_by_index():
    err = np.array([0.2, 0.2, 0.2, 0.2, 0.2, 0.1])
    ok = np.array([True, False, True, True, True, True])
    keep, fallback = fit_filter(err, ok)
    npt.assert_array_equal(np.flatnonzero(keep), [0, 2, 3, 5])
    # valid flag with a non-finite error counts as invalid
    keep, fallback = fit_filter(np.array([nan, 0.3, 0.4]), np.ones(3, dtype=bool))
    npt.assert_array_equal(np.flatnonzero(keep), [1, 2])


def test_filter_constants_are_arguments():
    err = np.array([0.1, 0.2, 0.3, 0.4])
    keep, _ = fit_filter(err, np.ones(4, dtype=bool), max_keep=2, threshold=0.35, min_keep=1)
    npt.assert_array_equal(np.flatnonzero(keep), [0, 1])
    with pytest.raises(ValueError, match="min_keep"):
        fit_filter(err, np.ones(4, dtype=bool), max_keep=1, min_keep=2)
    with pytest.raises(TypeError, match="boolean"):
        fit_filter(err, np.ones(4))


@given(
    err=st.lists(st.one_of(st.sampled_from([0.0, 0.5, 0.75, 0.76, 1.0, nan, inf]), st.floats(0, 3)), max_size=12),
    data=st.data(),
)
def test_filter_matches_twin(err, data):
    err = np.array(err, dtype=float)
    ok = np.array(data.draw(st.lists(st.booleans(), min_size=err.size, max_size=err.size)), dtype=bool)
    keep, fallback = fit_filter(err, ok)
    rkeep, rfallback = fit_filter_ref(err, ok)
    npt.assert_array_equal(keep, rkeep)
    assert fallback == rfallback
    if not fallback:
        assert 2 <= keep.sum() <= 4
        assert np.all(ok[keep])
