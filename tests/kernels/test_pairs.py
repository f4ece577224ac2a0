"""kernels.pairs (best pair of columns for a two-term least-squares fit) against brute force."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.pairs import _best_pairs, best_pairs
from tests.kernels._jit_checks import assert_safe_jit_options, needs_jit


def _brute(U, t, keep, left=None, right=None):
    L = U.shape[1]
    left = range(L) if left is None else left
    pairs = [(a, b) for a in left for b in (right if right is not None else range(L))
             if (right is not None or b > a) and a != b]
    res = []
    for a, b in pairs:
        c, *_ = np.linalg.lstsq(U[:, [a, b]], t, rcond=None)
        r = U[:, [a, b]] @ c - t
        res.append((float(r @ r), a, b))
    res.sort()
    return res[:keep]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_brute_force(seed):
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(9, 40))
    U /= np.linalg.norm(U, axis=0)
    t = rng.normal(size=9)
    got = best_pairs(U, t, 5)
    ref = _brute(U, t, 5)
    # the same residuals in the same order (pairs of equal residual may swap)
    for (a, b), (r, *_ab) in zip(got, ref):
        c, *_ = np.linalg.lstsq(U[:, [a, b]], t, rcond=None)
        rr = U[:, [a, b]] @ c - t
        assert float(rr @ rr) == pytest.approx(r, rel=1e-9, abs=1e-12)
    left, right = np.arange(0, 15), np.arange(15, 40)
    got = best_pairs(U, t, 3, left, right)
    assert [(a, b) for _r, a, b in _brute(U, t, 3, list(left), list(right))] == got


def test_finds_an_exact_pair_of_weak_columns():
    rng = np.random.default_rng(4)
    U = rng.normal(size=(12, 30))
    U /= np.linalg.norm(U, axis=0)
    t = 0.7 * U[:, 11] - 0.7 * U[:, 23]  # neither column alone explains much when they correlate
    assert best_pairs(U, t, 1) == [(11, 23)]


def test_collinear_pairs_skipped_and_bad_input():
    U = np.ones((5, 3)) / np.sqrt(5)
    assert best_pairs(U, np.arange(5.0), 2) == []
    with pytest.raises(ValueError, match="keep"):
        best_pairs(U, np.arange(5.0), 0)
    with pytest.raises(ValueError, match="U must be"):
        best_pairs(U, np.arange(4.0), 1)
    with pytest.raises(ValueError, match="left"):
        best_pairs(U, np.arange(5.0), 1, left=[7])


@needs_jit
def test_jit_options():
    assert_safe_jit_options(_best_pairs)


def test_numpy_twin_of_the_benchmark_agrees():
    from bench.bench_pairs import _inputs, best_pairs_np

    U, t = _inputs(n=12, L=300, seed=3)
    assert best_pairs_np(U, t, 6) == best_pairs(U, t, 6)
