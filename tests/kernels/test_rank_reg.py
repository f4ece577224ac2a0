"""kernels.rank_reg (ordinal rank, boundary weight, eq. S4) against its NumPy twin."""

from __future__ import annotations

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import given
from hypothesis import strategies as st

import kernels
from kernels._shared import _finite
from kernels.rank_reg import (
    _finite_order,
    _ordinal_rank,
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
    assert_safe_jit_options(_ordinal_rank, _finite_order, _rank_regularize)


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
def test_stable_argsort_equals_numpy_stable(xs):
    x = np.array(xs, dtype=float)
    npt.assert_array_equal(stable_argsort(x), np.argsort(x, kind="stable"))


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(0, 3000), ties=st.booleans())
def test_stable_argsort_large(seed, n, ties):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(0, 5, size=n) * rng.choice([-1.0, 1.0], size=n)
    if ties:
        x = np.round(x, 1)
    npt.assert_array_equal(stable_argsort(x), np.argsort(x, kind="stable"))



def _rank_by_numpy(s):
    """Stable ordinal rank in [0, 1] of the finite entries of ``s`` from ``np.argsort(kind="stable")``."""
    fin = np.flatnonzero(np.isfinite(s))
    rho = np.full(s.size, np.nan)
    if fin.size == 1:
        rho[fin] = 1.0
    elif fin.size > 1:
        rho[fin[np.argsort(s[fin], kind="stable")]] = np.arange(fin.size) * (1.0 / (fin.size - 1))
    return rho


def _prefix_cases(n, rng):
    """Inputs that stress a stable sort: shared prefixes, exact ties, low-bit-only differences."""
    one = 1.0 + 2.0**-30
    return {
        "all_equal": np.full(n, 2.5),
        "exact_ties": rng.integers(0, 7, n).astype(float) - 3.0,
        "low_20_bits": one + rng.integers(0, 1 << 20, n) * 2.0**-52,
        "low_bits_and_ties": one + rng.integers(0, 4, n) * 2.0**-52,
        "two_clusters": np.concatenate([1e-8 * (1 + rng.random(n // 2) * 1e-12), -3.0 * (1 + rng.random(n - n // 2) * 1e-12)]),
        "signed_zeros": rng.choice([0.0, -0.0, 5e-324, -5e-324], n),
        "spread": rng.lognormal(0, 5, n) * rng.choice([-1.0, 1.0], n),
    }


@pytest.mark.parametrize("n", [1, 2, 3, 33, 2048, 10000])
def test_stable_order_adversarial_cases(n):
    rng = np.random.default_rng(n)
    for name, x in _prefix_cases(n, rng).items():
        npt.assert_array_equal(stable_argsort(x), np.argsort(x, kind="stable"), err_msg=name)
        npt.assert_array_equal(ordinal_rank(x), _rank_by_numpy(x), err_msg=name)
        with_gaps = x.copy()
        with_gaps[rng.random(n) < 0.1] = rng.choice([nan, inf, -inf])
        npt.assert_array_equal(ordinal_rank(with_gaps), _rank_by_numpy(with_gaps), err_msg=name)
        npt.assert_array_equal(_ordinal_rank(with_gaps), _rank_by_numpy(with_gaps), err_msg=name)


def test_stable_order_equal_prefixes_different_low_bits():
    """Values equal in their top bits are ordered by the low bits, ties by index."""
    base = np.float64(1.0 + 2.0**-20)
    low = np.array([5, 3, 3, 0, 7, 5, 1, 0, 2, 3] * 5, dtype=np.int64)  # 50 > one insertion run
    x = base + low * 2.0**-52
    x[::7] = 1.0 + 2.0**-19  # a second prefix group above
    npt.assert_array_equal(stable_argsort(x), np.argsort(x, kind="stable"))
    npt.assert_array_equal(stable_argsort(x[:10]), np.argsort(x[:10], kind="stable"))
    npt.assert_array_equal(_ordinal_rank(x), _rank_by_numpy(x))


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.sampled_from([1, 2, 5, 40, 2048]),
    spread_bits=st.integers(0, 60),
    n_distinct=st.sampled_from([1, 3, 50, None]),
)
def test_rank_matches_numpy_stable_clustered(seed, n, spread_bits, n_distinct):
    """Clusters of keys differing only in their lowest ``spread_bits`` bits, with and without ties."""
    rng = np.random.default_rng(seed)
    hi = 1 << spread_bits
    if n_distinct is None:
        offs = rng.integers(0, hi, n, dtype=np.uint64) if hi > 1 else np.zeros(n, dtype=np.uint64)
    else:
        pool = rng.integers(0, hi, n_distinct, dtype=np.uint64) if hi > 1 else np.zeros(n_distinct, dtype=np.uint64)
        offs = rng.choice(pool, n)
    bits = np.uint64(0x3E50000000000000) + offs  # positive doubles near 1e-8 and up
    x = bits.view(np.float64) * rng.choice([-1.0, 1.0])
    x[rng.random(n) < 0.05] = nan
    npt.assert_array_equal(ordinal_rank(x), _rank_by_numpy(x))
    fin = x[np.isfinite(x)]
    npt.assert_array_equal(stable_argsort(fin), np.argsort(fin, kind="stable"))

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
