"""kernels.metrics against its NumPy twin: hand cases, edge cases, properties and the paper's audit cases."""

from __future__ import annotations

import math
import os
import re

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numba import float64, njit

import kernels
from kernels import _mathlib
from kernels._jit import JIT
from kernels._mathlib import log1p_nonneg
from kernels.metrics import _rmsle_coverage, coverage_q, rmsle_coverage
from tests.kernels._jit_checks import assert_safe_jit_options
from tests.reference import rmsle_coverage_ref, rmsle_ref

nan, inf = float("nan"), float("inf")


def assert_same(got, ref):
    assert len(got) == len(ref) == 5
    r_got, r_ref = got[0], ref[0]
    if math.isnan(r_ref):
        assert math.isnan(r_got)
    elif math.isinf(r_ref):
        assert r_got == r_ref
    else:
        npt.assert_allclose(r_got, r_ref, rtol=1e-12, atol=1e-15)
    assert tuple(got[1:]) == tuple(ref[1:])


def test_exported_from_kernels():
    assert kernels.rmsle_coverage is rmsle_coverage
    assert kernels.coverage_q is coverage_q


JIT_OFF = os.environ.get("NUMBA_DISABLE_JIT") == "1"


@pytest.mark.skipif(JIT_OFF, reason="JIT off")
def test_jit_options():
    assert_safe_jit_options(_rmsle_coverage)
    # the log1p correction term x - ((1 + x) - 1) must not be reassociated away
    math_opts = log1p_nonneg.targetoptions
    assert not {"reassoc", "nnan", "ninf", "afn", "arcp"} & set(math_opts["fastmath"])
    assert math_opts["error_model"] == "numpy"


@pytest.mark.skipif(JIT_OFF, reason="JIT off")
def test_kernel_loop_vectorizes():
    # an uncached copy: inspecting a kernel loaded from the on-disk cache returns no IR
    fresh = njit(**{**JIT, "cache": False})(_rmsle_coverage.py_func)
    sig = (float64[::1], float64[::1])
    fresh.compile(sig)
    ir = fresh.inspect_llvm(sig)
    assert re.search(r"<\d+ x double>", ir), "the RMSLE loop was not vectorized"
    assert "log1p" not in ir.replace("log1p_nonneg", "")  # no libm call left in the loop


# --- the branch-free log1p ---------------------------------------------------------------------------
@njit
def _log1p_many(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = log1p_nonneg(x[i])
    return out


def _log1p_inputs():
    rng = np.random.default_rng(11)
    tiny = np.finfo(np.float64).tiny
    parts = [
        np.logspace(-300, 300, 6001),
        [0.0, -0.0, 5e-324, 1e-320, 1e-310, tiny, np.nextafter(tiny, 0.0), 1e-17, 1.1e-16, 2.2e-16, 1e-8],
        [np.finfo(np.float64).max, 2.0**53, 2.0**53 + 2.0, 2.0**54 - 1.0, 1.0, 2.0, 0.5],
        math.sqrt(2.0) * 2.0 ** np.arange(0.0, 60.0) - 1.0,  # reduction boundaries u = sqrt(2) 2**k
        np.nextafter(math.sqrt(2.0) * 2.0 ** np.arange(0.0, 60.0) - 1.0, 0.0),
        rng.uniform(0.0, 1.0, 2000),
        rng.uniform(0.0, 1e-3, 1000),
        rng.uniform(0.0, 50.0, 1000),
        np.exp(rng.uniform(-745.0, 709.0, 2000)),
    ]
    return np.abs(np.concatenate([np.asarray(a, dtype=np.float64) for a in parts]))


def test_log1p_nonneg_matches_numpy_to_one_ulp():
    x = _log1p_inputs()
    got = _log1p_many(x)
    ref = np.log1p(x)
    err = np.abs(got - ref)
    assert np.all(err <= np.spacing(ref)), x[np.argmax(err / np.spacing(ref))]
    assert np.all(err <= 2.3e-16 * ref + 1e-320)
    assert np.all(got[x == 0.0] == 0.0)
    small = x < 1e-17
    assert np.array_equal(got[small], x[small])  # log1p(x) rounds to x: the correction term is intact


def test_log1p_nonneg_scalar_path_agrees():
    x = _log1p_inputs()[::25]
    got = np.array([log1p_nonneg(v) for v in x])  # scalar calls (plain Python when the JIT is off)
    npt.assert_array_less(np.abs(got - np.log1p(x)), np.spacing(np.log1p(x)) * 1.000001 + 1e-323)


def test_log1p_nonneg_special_values():
    assert log1p_nonneg(inf) == inf
    assert math.isnan(log1p_nonneg(nan))
    assert log1p_nonneg(0.0) == 0.0 and log1p_nonneg(-0.0) == 0.0
    assert log1p_nonneg(5e-324) == 5e-324
    assert log1p_nonneg(1.0) == math.log(2.0)
    out = _log1p_many(np.array([inf, nan, 0.0, 1e300]))
    assert out[0] == inf and math.isnan(out[1]) and out[2] == 0.0
    npt.assert_allclose(out[3], math.log1p(1e300), rtol=2.3e-16)


def test_log1p_nonneg_against_high_precision():
    mp = pytest.importorskip("mpmath")
    x = _log1p_inputs()[::7]
    got = _log1p_many(x)
    with mp.workdps(40):
        worst = 0.0
        for xi, gi in zip(x, got):
            if xi == 0.0:
                continue
            exact = mp.log1p(mp.mpf(float(xi)))
            worst = max(worst, float(abs(mp.mpf(float(gi)) - exact) / mp.mpf(np.spacing(float(exact)))))
    assert worst < 0.9  # ulps of the exact result


def test_log1p_nonneg_constants_reproduce():
    mp = pytest.importorskip("mpmath")
    with mp.workdps(50):
        ln2 = mp.log(2)
        hi_bits = np.array([float(ln2)]).view(np.int64)[0] & ~((1 << 20) - 1)
        assert np.array([_mathlib._LN2_HI]).view(np.int64)[0] == hi_bits
        assert _mathlib._LN2_LO == float(ln2 - mp.mpf(_mathlib._LN2_HI))
        assert np.array([math.sqrt(0.5)]).view(np.int64)[0] == _mathlib._SQRT_HALF_BITS
        assert np.array([_mathlib._TWO52]).view(np.int64)[0] == _mathlib._TWO52_BITS

        def p_of_z(z):
            if z == 0:
                return mp.mpf(2) / 3
            s = mp.sqrt(z)
            return (2 * mp.atanh(s) / s - 2) / z

        coeffs = mp.chebyfit(p_of_z, [0, (3 - 2 * mp.sqrt(2)) ** 2], 7)[::-1]
    mine = [getattr(_mathlib, f"_P{i}") for i in range(7)]
    npt.assert_allclose(mine, [float(c) for c in coeffs], rtol=1e-15)


def test_hand_value():
    t = np.array([1.0, 10.0, 100.0])
    p = np.array([2.0, 10.0, 50.0])
    expected = math.sqrt(((math.log1p(2) - math.log1p(1)) ** 2 + 0 + (math.log1p(50) - math.log1p(100)) ** 2) / 3)
    got = rmsle_coverage(t, p)
    npt.assert_allclose(got[0], expected, rtol=1e-14)
    assert got[1:] == (3, 3, True, 0)


def test_equal_inputs_score_zero():
    t = np.array([-3.0, 0.0, 1e-300, 1e300, 7.5])
    assert rmsle_coverage(t, t.copy()) == (0.0, 5, 5, True, 0)


def test_absolute_values_hide_sign():
    t = np.array([1.0, -2.0, 3.0, 0.0])
    p = np.array([-1.0, 2.0, 3.0, -5.0])
    r, n_ft, n_fp, complete, sign = rmsle_coverage(t, p)
    assert sign == 2  # the zero target does not count
    npt.assert_allclose(r, math.sqrt((math.log1p(5) ** 2) / 4), rtol=1e-14)
    assert complete


@pytest.mark.parametrize(
    "t, p",
    [
        ([], []),
        ([nan], [1.0]),
        ([1.0], [nan]),
        ([inf], [inf]),
        ([inf, 1.0], [inf, 2.0]),
        ([-inf], [inf]),
        ([inf], [1.0]),
        ([1.0], [-inf]),
        ([nan, inf, 2.0], [1.0, 3.0, nan]),
        ([0.0, -0.0], [-0.0, 0.0]),
        ([1e308, -1e308], [-1e308, 1e308]),
    ],
)
def test_edge_cases_match_twin(t, p):
    assert_same(rmsle_coverage(np.array(t, float), np.array(p, float)), rmsle_coverage_ref(t, p))


def test_inf_only_one_side_is_inf_and_both_sides_is_dropped():
    assert rmsle_coverage([inf, 1.0], [2.0, 1.0])[0] == inf
    assert rmsle_coverage([inf, 1.0], [-inf, 1.0])[0] == 0.0
    assert math.isnan(rmsle_coverage([inf], [inf])[0])


def test_accepts_lists_and_ints():
    assert rmsle_coverage([1, 2], [1, 2]) == (0.0, 2, 2, True, 0)


def test_rejects_non_numeric():
    with pytest.raises(TypeError, match="y_pred"):
        rmsle_coverage([1.0], np.array(["a"]))


# --- the paper's six audit cases (S5: coverage tests) ---------------------------------------------
def test_audit_partial_nan_predictions():
    t = np.array([1.0, 2.0, 3.0, 4.0])
    p = np.array([1.0, nan, 3.0, nan])
    r, n_ft, n_fp, complete, _ = rmsle_coverage(t, p)
    assert r == 0.0  # the finite score hides two missing predictions
    assert (n_ft, n_fp, complete) == (4, 2, False)
    assert_same((r, n_ft, n_fp, complete, 0), rmsle_coverage_ref(t, p))


def test_audit_invalid_target_points():
    t = np.array([1.0, nan, 3.0, nan])  # target undefined on half the domain (like Snell)
    p = np.array([1.0, 5.0, 3.0, nan])
    r, n_ft, n_fp, complete, _ = rmsle_coverage(t, p)
    assert r == 0.0
    assert (n_ft, n_fp, complete) == (2, 2, True)  # completeness is relative to finite targets


def test_audit_infinite_predictions():
    t = np.array([1.0, 2.0, 3.0])
    p = np.array([1.0, inf, 3.0])
    r, n_ft, n_fp, complete, _ = rmsle_coverage(t, p)
    assert r == inf
    assert (n_ft, n_fp, complete) == (3, 2, False)
    assert not coverage_q(complete, r).any()


def test_audit_sign_changes():
    t = np.array([1.0, 2.0, -3.0, 4.0])
    p = -t
    r, n_ft, n_fp, complete, sign = rmsle_coverage(t, p)
    assert r == 0.0 and complete and sign == 4  # the magnitude metric cannot see it
    assert coverage_q(complete, r).all()


def test_audit_empty_finite_target_set():
    t = np.array([nan, inf, -inf])
    p = np.array([1.0, 2.0, 3.0])
    r, n_ft, n_fp, complete, sign = rmsle_coverage(t, p)
    assert (n_ft, n_fp, complete, sign) == (0, 0, False, 0)
    assert r == inf  # NewtonBench: the (inf, 2) pair makes the score infinite
    assert not coverage_q(complete, r).any()
    r2 = rmsle_coverage([nan, nan], [1.0, 2.0])
    assert math.isnan(r2[0]) and r2[1:] == (0, 0, False, 0)


def test_audit_mismatched_array_shapes():
    with pytest.raises(ValueError, match=r"rmsle_coverage: y_pred must have y_true's shape \(3,\), got \(2,\)"):
        rmsle_coverage(np.ones(3), np.ones(2))
    with pytest.raises(ValueError, match="one-dimensional"):
        rmsle_coverage(np.ones((2, 2)), np.ones((2, 2)))


# --- properties --------------------------------------------------------------------------------------
_values = st.one_of(
    st.floats(allow_nan=True, allow_infinity=True, width=64),
    st.sampled_from([0.0, -0.0, nan, inf, -inf, 1.0, -1.0]),
)


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 40).flatmap(lambda n: st.tuples(hnp.arrays(np.float64, n, elements=_values),
                                                     hnp.arrays(np.float64, n, elements=_values))))
def test_kernel_equals_twin(pair):
    t, p = pair
    assert_same(rmsle_coverage(t, p), rmsle_coverage_ref(t, p))


@settings(max_examples=100, deadline=None)
@given(hnp.arrays(np.float64, st.integers(1, 50), elements=st.floats(-1e300, 1e300)))
def test_zero_on_equal_and_non_negative(t):
    r, n_ft, n_fp, complete, sign = rmsle_coverage(t, t.copy())
    assert r == 0.0 and complete and sign == 0 and n_ft == n_fp == t.size
    r2 = rmsle_coverage(t, t[::-1].copy())[0]
    assert r2 >= 0.0


def test_magnitude_sweep_finite_and_monotone():
    scales = 10.0 ** np.arange(-100, 101, 10)
    rs = [rmsle_coverage([1.0], [s])[0] for s in scales[scales >= 1]]
    assert all(np.isfinite(rs)) and all(np.diff(rs) > 0)


def test_twin_rmsle_is_newtonbench_formula():
    rng = np.random.default_rng(3)
    t = rng.normal(size=200) * 10
    p = t + rng.normal(size=200)
    npt.assert_allclose(rmsle_ref(t, p), np.sqrt(np.mean((np.log1p(np.abs(p)) - np.log1p(np.abs(t))) ** 2)))


def test_large_random_matches_twin():
    rng = np.random.default_rng(0)
    t = rng.normal(size=5000) * 100
    p = t * rng.uniform(0.5, 1.5, size=5000)
    p[rng.integers(0, 5000, 50)] = nan
    t[rng.integers(0, 5000, 50)] = nan
    assert_same(rmsle_coverage(t, p), rmsle_coverage_ref(t, p))


# --- coverage_q ----------------------------------------------------------------------------------------
def test_coverage_q_thresholds():
    c = np.array([True, True, False, True, True])
    r = np.array([0.005, 0.05, 0.0, nan, inf])
    q = coverage_q(c, r)
    assert q.shape == (5, 3)
    assert q.tolist() == [[True, True, True], [False, True, True], [False] * 3, [False] * 3, [False] * 3]
    assert coverage_q(True, 1.0).tolist() == [False, False, True]


def test_coverage_q_bad_input():
    with pytest.raises(ValueError, match="shape"):
        coverage_q([True, False], [0.1])
    with pytest.raises(ValueError, match="thresholds"):
        coverage_q(True, 0.1, taus=(nan,))
