"""kernels.mi (the information planner's estimator and batch) against its NumPy twin (tests/_ref_mi.py),
and its closed forms and properties.

Tolerances: distances and informations agree to a relative 1e-10 (absolute 1e-12): the kernel
takes the log of each variance where the twin takes the log of their ratio, and sums the
log-sum-exp in another order. The picks (pool indices) are equal. Sizes stay small so the file also
runs with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from kernels.mi import MIN_GAIN, mi_select, mutual_information, point_distances
from tests._ref_mi import mi_select_ref, mutual_information_ref, point_distances_ref

RTOL, ATOL = 1e-10, 1e-12


def _problem(seed: int, K: int = 4, n: int = 60, m: int = 1, holes: bool = False):
    rng = np.random.default_rng(seed)
    mu = rng.normal(size=(K, n, m)) * 0.3 + 1.0
    var = (0.05 + rng.random((K, n, m))) ** 2 * 0.1
    if holes:
        mu[rng.random(mu.shape) < 0.05] = np.nan
        var[rng.random(var.shape) < 0.03] = 0.0
        mu[0, 0, 0] = np.inf
    log_w = rng.normal(size=K)
    available = rng.random(n) < 0.8
    return mu, var, log_w, available


@pytest.mark.parametrize("seed, K, n, m, holes", [(0, 4, 60, 1, False), (1, 2, 30, 5, True), (2, 6, 40, 3, True),
                                                   (3, 1, 10, 1, False), (4, 3, 0, 2, False)])
def test_distances_and_information_match_the_twin(seed, K, n, m, holes):
    mu, var, log_w, _ = _problem(seed, K, n, m, holes)
    np.testing.assert_allclose(point_distances(mu, var), point_distances_ref(mu, var), rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(mutual_information(mu, var, log_w), mutual_information_ref(mu, var, log_w),
                               rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed, K, n, m, k", [(0, 4, 60, 1, 4), (1, 2, 30, 5, 3), (2, 6, 40, 3, 8), (5, 3, 12, 2, 20)])
def test_the_batch_matches_the_twin(seed, K, n, m, k):
    mu, var, log_w, available = _problem(seed, K, n, m, holes=seed % 2 == 1)
    picks, info = mi_select(mu, var, log_w, available, k)
    ref_picks, ref_info = mi_select_ref(mu, var, log_w, available, k)
    np.testing.assert_array_equal(picks, ref_picks)
    np.testing.assert_allclose(info, ref_info, rtol=RTOL, atol=ATOL)


def test_two_equal_laws_closed_form():
    # two laws, weights 1/2, common variance v, means 0 and delta: D = delta^2 / (8 v), and
    # I = -log((1 + exp(-D)) / 2), from 0 (D = 0) to log 2 (D -> infinity)
    delta = np.array([0.0, 0.5, 1.0, 3.0, 40.0])
    v = 0.25
    mu = np.stack([np.zeros(5), delta])[:, :, None]
    var = np.full_like(mu, v)
    D = point_distances(mu, var)
    np.testing.assert_allclose(D[:, 0, 1], delta**2 / (8 * v), rtol=1e-14)
    want = -np.log((1.0 + np.exp(-(delta**2) / (8 * v))) / 2.0)
    np.testing.assert_allclose(mutual_information(mu, var, [0.0, 0.0]), want, rtol=1e-12, atol=1e-15)
    assert mutual_information(mu, var, [0.0, 0.0])[-1] == pytest.approx(math.log(2.0), abs=1e-12)


def test_distance_of_unequal_variances_and_additivity_over_readings():
    mu = np.array([[[1.0, 2.0]], [[1.5, 2.0]]])
    var = np.array([[[0.1, 0.2]], [[0.3, 0.8]]])
    per = [(a - b) ** 2 / (4 * (va + vb)) + 0.5 * math.log((va + vb) / (2 * math.sqrt(va * vb)))
           for a, b, va, vb in [(1.0, 1.5, 0.1, 0.3), (2.0, 2.0, 0.2, 0.8)]]
    assert point_distances(mu, var)[0, 0, 1] == pytest.approx(sum(per), rel=1e-14)


def test_information_lies_between_zero_and_the_weights_entropy():
    mu, var, log_w, available = _problem(7, K=5, n=200, m=2)
    w = np.exp(log_w - np.logaddexp.reduce(log_w))
    H = float(-(w * np.log(w)).sum())
    mi = mutual_information(mu, var, log_w)
    assert np.all(mi >= 0) and np.all(mi <= H + 1e-12)
    picks, info = mi_select(mu, var, log_w, available, 10)
    assert np.all(np.diff(info) > 0) and info[-1] <= H + 1e-12
    assert np.unique(picks).size == picks.size and available[picks].all()
    assert picks[0] == np.flatnonzero(available)[np.argmax(mi[available])]


def test_scaling_every_reading_leaves_the_information_unchanged():
    mu, var, log_w, _ = _problem(8, K=3, n=20)
    base = mutual_information(mu, var, log_w)
    for scale in (1e-100, 1e-30, 1e30, 1e100):
        out = mutual_information(mu * scale, var * scale * scale, log_w)
        assert np.all(np.isfinite(out))
        np.testing.assert_allclose(out, base, rtol=1e-9, atol=1e-14)


def test_ties_go_to_the_lowest_index():
    mu = np.array([[[1.0]] * 5, [[2.0]] * 5])
    var = np.full_like(mu, 0.5)
    picks, _ = mi_select(mu, var, [0.0, 0.0], np.array([False, True, True, True, True]), 2)
    assert picks.tolist() == [1, 2]


def test_nothing_to_learn_picks_nothing():
    mu, var, _, available = _problem(9, K=2, n=20)
    same = np.stack([mu[0], mu[0]])
    assert mi_select(same, np.stack([var[0], var[0]]), [0.0, 0.0], available, 4)[0].size == 0
    assert mi_select(mu, var, [0.0, -1e4], available, 4)[0].size == 0  # one law holds the weight
    one = mu[:1]
    assert mi_select(one, var[:1], [0.0], available, 4)[0].size == 0


def test_a_saturated_batch_stops_early():
    # two laws far apart at every point: the first pick separates them; nothing is left to add
    mu = np.stack([np.zeros((6, 1)), np.full((6, 1), 100.0)])
    picks, info = mi_select(mu, np.ones_like(mu), [0.0, 0.0], np.ones(6, dtype=bool), 4)
    assert picks.tolist() == [0] and info[0] == pytest.approx(math.log(2.0), abs=1e-12)
    assert MIN_GAIN > 0


def test_bad_input_is_refused():
    mu, var, log_w, available = _problem(10, K=2, n=5)
    with pytest.raises(ValueError, match="mi_select: var must have the shape of mu"):
        mi_select(mu, var[:, :3], log_w, available, 2)
    with pytest.raises(ValueError, match="log_w must hold one weight per law"):
        mutual_information(mu, var, [0.0])
    with pytest.raises(ValueError, match="log_w must be finite"):
        mutual_information(mu, var, [0.0, -np.inf])
    with pytest.raises(ValueError, match="available must be a boolean mask"):
        mi_select(mu, var, log_w, available.astype(int), 2)
    with pytest.raises(ValueError, match="k must be a non-negative integer"):
        mi_select(mu, var, log_w, available, -1)
    with pytest.raises(ValueError, match="min_gain"):
        mi_select(mu, var, log_w, available, 2, min_gain=-1.0)
    with pytest.raises(ValueError, match="point_distances: mu must be 3-D"):
        point_distances(mu[0], var[0])
