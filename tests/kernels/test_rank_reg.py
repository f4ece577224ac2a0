"""kernels.rank_reg (ordinal rank, boundary weight, eq. S4) against its NumPy twin."""

from __future__ import annotations


import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernels
from kernels.rank_reg import (
    _finite,
    _ordinal_rank,
    _radix_argsort,
    _rank_regularize,
    edge_weight,
    ordinal_rank,
    rank_regularize,
    stable_argsort,
)
from tests.kernels._jit_checks import assert_safe_jit_options, needs_jit
from tests.reference import edge_weight_ref, ordinal_rank_ref, rank_regularize_ref

nan, inf = float("nan"), float("inf")


def test_exported_from_kernels():
    assert kernels.rank_regularize is rank_regularize
    assert kernels.ordinal_rank is ordinal_rank
    assert kernels.edge_weight is edge_weight
    assert kernels.stable_argsort is stable_argsort


@needs_jit
def test_jit_options():
    assert_safe_jit_options(_ordinal_rank, _radix_argsort, _rank_regularize)


def test_finite_helper_survives_fastmath():
    from numba import njit

    from kernels._jit import FASTMATH

    @njit(fastmath=FASTMATH)
    def count_finite_differences(a, b):
        c = 0
        for j in range(a.size):
            if _finite(a[j] - b[j]):
                c += 1
        return c

    a = np.array([1.0, nan, inf, 2.0, -inf])
    b = np.array([0.0, 1.0, 1.0, inf, 0.0])
    assert count_finite_differences(a, b) == 1


def test_rank_hand_case():
    s = np.array([3.0, 1.0, nan, 1.0, 2.0])
    expected = np.array([1.0, 0.0, nan, 1 / 3, 2 / 3])
    npt.assert_allclose(ordinal_rank(s), expected, rtol=1e-15)
    npt.assert_allclose(ordinal_rank_ref(s), expected, rtol=1e-15)


@pytest.mark.parametrize(
    "s, expected",
    [
        ([], []),
        ([nan, inf], [nan, nan]),
        ([nan, 5.0, -inf], [nan, 1.0, nan]),  # single finite score -> 1
        ([2.0, 2.0, 2.0], [0.0, 0.5, 1.0]),  # ties: earlier index ranks lower
        ([0.0, -0.0, 0.0], [0.0, 0.5, 1.0]),  # -0.0 equals 0.0
    ],
)
def test_rank_edge_cases(s, expected):
    s = np.array(s, dtype=float)
    npt.assert_allclose(ordinal_rank(s), expected)
    npt.assert_allclose(ordinal_rank_ref(s), expected)


def test_edge_weight_hand_values():
    U = np.array([[0.5, 0.5], [0.08, 0.5], [0.5, 0.95], [0.29, 0.6], [0.0, 1.0], [0.71, 0.5]])
    expected = np.array([1.0, 0.0, 0.0, 0.5**1.5, 0.0, 0.5**1.5])
    npt.assert_allclose(edge_weight(U), expected, rtol=1e-12, atol=1e-15)
    npt.assert_allclose(edge_weight_ref(U), expected, rtol=1e-12, atol=1e-15)
    npt.assert_allclose(edge_weight(U, power=1.0), np.array([1, 0, 0, 0.5, 0, 0.5]), rtol=1e-12, atol=1e-15)


def test_regularize_hand_case():
    raw = np.array([0.2, 0.9, nan, 0.5])
    U = np.array([[0.5, 0.5], [0.29, 0.5], [0.5, 0.5], [0.01, 0.5]])
    v = np.array([1.0, 0.5, 1.0, 1.0])
    # rho = (0, 1, nan, 1/2); w = (1, 0.5^1.5, 1, 0)
    expected = np.array([0.0, 0.5**1.5 * 0.5, nan, 0.0])
    npt.assert_allclose(rank_regularize(raw, U, v), expected, rtol=1e-12, atol=1e-15)


def test_bad_input():
    with pytest.raises(ValueError, match=r"U\[1, 0\]"):
        rank_regularize([1.0, 2.0], [[0.5], [1.5]], [1.0, 1.0])
    with pytest.raises(ValueError, match="one entry per point"):
        rank_regularize([1.0, 2.0], [[0.5]], [1.0, 1.0])
    with pytest.raises(ValueError, match="v must lie"):
        rank_regularize([1.0], [[0.5]], [2.0])
    with pytest.raises(ValueError, match="edge_lo < edge_hi"):
        edge_weight([[0.5]], edge_lo=0.5, edge_hi=0.1)
    with pytest.raises(ValueError, match="finite"):
        stable_argsort([1.0, nan])


values = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1.0 + 2**-52, -1.0, 5e-324, -5e-324, 1e308, -1e308]),
)


@given(st.lists(values, max_size=300))
def test_radix_argsort_equals_numpy_stable(xs):
    x = np.array(xs, dtype=float)
    npt.assert_array_equal(stable_argsort(x), np.argsort(x, kind="stable"))


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 3000), ties=st.booleans())
def test_radix_argsort_large(seed, n, ties):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(0, 5, size=n) * rng.choice([-1.0, 1.0], size=n)
    if ties:
        x = np.round(x, 1)
    npt.assert_array_equal(stable_argsort(x), np.argsort(x, kind="stable"))


@given(st.lists(st.one_of(values, st.sampled_from([nan, inf, -inf])), max_size=200))
def test_rank_matches_twin(xs):
    s = np.array(xs, dtype=float)
    npt.assert_allclose(ordinal_rank(s), ordinal_rank_ref(s), rtol=1e-15, atol=0)


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 400),
    d=st.integers(1, 5),
    power=st.sampled_from([1.5, 1.0, 2.0, 0.7]),
    nan_frac=st.sampled_from([0.0, 0.2, 1.0]),
)
def test_regularize_matches_twin(seed, n, d, power, nan_frac):
    rng = np.random.default_rng(seed)
    raw = rng.exponential(size=n)
    raw[rng.random(n) < nan_frac] = nan
    U = rng.random((n, d))
    v = rng.integers(0, 6, size=n) / 5
    got = rank_regularize(raw, U, v, power=power)
    npt.assert_allclose(got, rank_regularize_ref(raw, U, v, power=power), rtol=1e-12, atol=1e-15)
    fin = np.isfinite(raw)
    assert np.all(np.isnan(got[~fin])) and np.all((got[fin] >= 0) & (got[fin] <= 1))


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 300), d=st.integers(1, 4))
def test_regularize_is_permutation_equivariant(seed, n, d):
    rng = np.random.default_rng(seed)
    raw = rng.permutation(n).astype(float) + rng.random()  # distinct scores
    raw[rng.random(n) < 0.1] = nan
    U = rng.random((n, d))
    v = rng.random(n)
    perm = rng.permutation(n)
    base = rank_regularize(raw, U, v)
    npt.assert_allclose(rank_regularize(raw[perm], U[perm], v[perm]), base[perm], rtol=1e-15, atol=0)
