"""The pieces of the planner step around NumPy's sort, each against a slow twin.

``Committee.step`` runs two compiled calls around one ``ndarray.sort``: packed rank keys
(``kernels.step._packed_keys`` / ``_packed_order``), the eligibility cut of scores in [0, 1]
(``kernels.select._eligible_unit``) and order statistics by histogram select
(``kernels._shared._select_ranks``).
"""

from __future__ import annotations

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kernels._shared import _flag_positions, _quartiles, _select_ranks
from kernels.select import _eligible, _eligible_unit, _max_of, _min_of
from kernels.step import _index_bits, _packed_keys, _packed_order
from tests.reference import eligible_set_ref

nan, inf = float("nan"), float("inf")


def _sorted_order(x: np.ndarray) -> np.ndarray:
    """The step's stable order: packed keys, NumPy's sort, the compiled repair of near-equal runs."""
    ib = _index_bits(x.size)
    packed = _packed_keys(x, ib)
    packed.sort()
    return _packed_order(packed, x, ib)


def stable_finite_order(x: np.ndarray) -> np.ndarray:
    """Twin: indices of the finite entries in ``np.argsort(kind="stable")`` order."""
    idx = np.flatnonzero(np.isfinite(x))
    return idx[np.argsort(x[idx], kind="stable")]


# ------------------------------------------------------------------------------------------------
# Packed rank keys
# ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "x",
    [
        np.zeros(0),
        np.array([nan]),
        np.array([3.0]),
        np.array([2.0, -0.0, 0.0, -1.0, 0.0]),  # -0.0 ties with 0.0, index order kept
        np.array([nan, 1.0, inf, -inf, 1.0, nan, 0.5]),
        np.r_[1.0 + np.arange(40) * 2.2e-16, 1.0, 5.0, -2.0][::-1],  # a run of 41 keys equal above the index bits
        np.r_[np.full(100, 7.0), np.full(50, -7.0)],
    ],
    ids=["empty", "nan", "one", "signed-zero", "non-finite", "long-run", "many-ties"],
)
def test_sorted_order_hand_cases(x):
    npt.assert_array_equal(_sorted_order(x), stable_finite_order(x))


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(0, 3000),
    kind=st.sampled_from(["spread", "ulps", "ties", "cluster"]),
)
@settings(max_examples=40, deadline=None)
def test_sorted_order_equals_stable_argsort(seed, n, kind):
    rng = np.random.default_rng(seed)
    x = rng.lognormal(0, 5, n) * rng.choice([-1.0, 1.0], n)
    if kind == "ulps":  # values a few units in the last place apart: runs of equal packed prefixes
        x = 1.0 + rng.integers(0, 5000, n) * 2.0**-52
    elif kind == "ties":
        x = np.round(x, 0)
    elif kind == "cluster":
        x = np.where(rng.random(n) < 0.8, 3e-8 * (1 + 1e-6 * rng.random(n)), x)
    x[rng.random(n) < 0.05] = nan
    npt.assert_array_equal(_sorted_order(x), stable_finite_order(x))


def test_packed_keys_hold_the_index_and_sort_distinctly():
    x = np.array([5.0, nan, -1.0, 5.0, 0.0])
    ib = _index_bits(x.size)
    packed = _packed_keys(x, ib)
    assert packed.size == 4 and np.unique(packed).size == 4
    mask = np.uint64((1 << ib) - 1)
    npt.assert_array_equal(packed & mask, [0, 2, 3, 4])
    packed.sort()
    npt.assert_array_equal(_packed_order(packed, x, ib), [2, 4, 0, 3])


# ------------------------------------------------------------------------------------------------
# Eligibility cut of scores in [0, 1]
# ------------------------------------------------------------------------------------------------


def eligible_count(s: np.ndarray, k: int, top_fraction: float = 0.25) -> int:
    nf = int(np.isfinite(s).sum())
    return min(max(int(np.ceil(top_fraction * nf)), min(k, nf)), nf)


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(2, 3000),
    kind=st.sampled_from(["uniform", "zeros", "skewed", "ties", "all-equal"]),
    nan_frac=st.sampled_from([0.0, 0.2]),
)
@settings(max_examples=60, deadline=None)
def test_eligible_unit_equals_twin(seed, n, kind, nan_frac):
    rng = np.random.default_rng(seed)
    s = rng.random(n)
    if kind == "zeros":  # most points at zero weight, as near the pool's faces
        s[rng.random(n) < 0.6] = 0.0
    elif kind == "skewed":
        s = s**6
    elif kind == "ties":
        s = np.round(s, 2)
    elif kind == "all-equal":
        s[:] = 0.5
    s[rng.random(n) < nan_frac] = nan
    m = eligible_count(s, 4)
    if not 0 < m < np.isfinite(s).sum():
        return
    npt.assert_array_equal(_eligible_unit(s, m), eligible_set_ref(s, 4))


def test_eligible_unit_crowded_cut_falls_back_exactly():
    s = np.r_[np.full(500, 0.25), np.linspace(0.3, 1.0, 100), np.zeros(400)]
    m = eligible_count(s, 4)
    npt.assert_array_equal(_eligible_unit(s, m), eligible_set_ref(s, 4))
    npt.assert_array_equal(_eligible_unit(s, m), _eligible(s, m, 0.0))


@given(st.lists(st.booleans(), max_size=200))
def test_flag_positions(bits):
    n8 = (len(bits) + 7) // 8
    flags = np.zeros(8 * n8, dtype=np.uint8)
    flags[: len(bits)] = bits
    npt.assert_array_equal(_flag_positions(flags, int(sum(bits))), np.flatnonzero(bits))


@given(st.lists(st.floats(allow_nan=False), min_size=1, max_size=100))
def test_max_min_of_equal_numpy(xs):
    x = np.array(xs)
    assert _max_of(x) == x.max() and _min_of(x) == x.min()


# ------------------------------------------------------------------------------------------------
# Order statistics
# ------------------------------------------------------------------------------------------------


@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 3000),
    kind=st.sampled_from(["spread", "offset-tail", "ties", "octaves", "two-clusters"]),
)
@settings(max_examples=60, deadline=None)
def test_select_ranks_finds_each_order_statistic(seed, n, kind):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=n) * 10.0 ** rng.integers(-20, 20, n)
    if kind == "offset-tail":  # a calibrated hypothesis that barely varies: b + tiny spread over decades
        x = 5.0 + np.exp(rng.normal(0, 8, n)) * 1e-9
    elif kind == "ties":
        x = np.round(rng.normal(size=n), 1)
    elif kind == "octaves":
        x = 2.0 ** rng.uniform(-900, 900, n)
    elif kind == "two-clusters":
        x = np.where(rng.random(n) < 0.5, 1.0 + 1e-15 * rng.random(n), -1e300 * rng.random(n))
    ranks = np.unique(rng.integers(0, n, 8))
    pos = _select_ranks(x, ranks)
    npt.assert_array_equal(x[pos], np.sort(x)[ranks])
    assert tuple(_quartiles(x)) == tuple(np.percentile(x, [25, 50, 75]))


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 4000), n_ranks=st.integers(1, 300))
@settings(max_examples=30, deadline=None)
def test_select_ranks_many_ranks_grow_the_work_stores(seed, n, n_ranks):
    """Hundreds of ranks and crowded buckets outgrow the select's first segment, request and task stores."""
    rng = np.random.default_rng(seed)
    x = np.where(rng.random(n) < 0.7, 5.0 + np.exp(rng.normal(0, 8, n)) * 1e-9, rng.normal(size=n))
    ranks = rng.integers(0, n, n_ranks)
    npt.assert_array_equal(x[_select_ranks(x, ranks)], np.sort(x)[ranks])
