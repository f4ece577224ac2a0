"""kernels.gp (the GP planner's surrogate) against its NumPy twin (tests/_ref_gp.py), and its properties.

Tolerances: posterior means and sds, likelihoods and signal variances agree to a relative 1e-8
(absolute 1e-9 for values near 0): the kernel's own Cholesky and sums in another order against
LAPACK's, on Gram matrices whose condition number the 1e-6 nugget bounds near 1e6. The discrete
outcomes (the grid values the search picks, the evaluation count, the pool indices picked) are
equal. Sizes stay small so the file also runs with ``NUMBA_DISABLE_JIT=1``.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.gp import (
    LENGTH_GRID,
    NUGGET_GRID,
    NUGGET_NOISELESS,
    gp_fit,
    gp_log_likelihood,
    gp_posterior,
    gp_select,
)
from tests._ref_gp import gp_fit_ref, gp_log_likelihood_ref, gp_posterior_ref, gp_select_ref

RTOL, ATOL = 1e-8, 1e-9


def _problem(seed: int, n: int = 20, d: int = 3, m: int = 300, noise: float = 0.0):
    rng = np.random.default_rng(seed)
    U = rng.random((n, d))
    t = np.sin(3.0 * U[:, 0]) + U[:, -1] ** 2 + noise * rng.normal(size=n)
    z = (t - t.mean()) / t.std() if n else t
    P = rng.random((m, d))
    available = rng.random(m) < 0.8
    return U, z, P, available


@pytest.mark.parametrize("seed, n, d", [(0, 20, 3), (1, 7, 1), (2, 25, 4), (3, 0, 2)])
def test_posterior_matches_the_twin(seed, n, d):
    U, z, P, _ = _problem(seed, n, d)
    lengths = np.linspace(0.3, 1.2, d)
    mean, sd = gp_posterior(U, z, P, lengths, 1.7, 1.7e-6)
    rm, rs = gp_posterior_ref(U, z, P, lengths, 1.7, 1.7e-6)
    np.testing.assert_allclose(mean, rm, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(sd, rs, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize("seed", [0, 1])
def test_log_likelihood_matches_the_twin(seed):
    U, z, _, _ = _problem(seed)
    for lengths, s2, noise in [(np.array([0.2, 0.5, 2.0]), 1.0, 1e-6), (np.full(3, 4.0), 30.0, 1e-3)]:
        got = gp_log_likelihood(U, z, lengths, s2, noise)
        assert got == pytest.approx(gp_log_likelihood_ref(U, z, lengths, s2, noise), rel=RTOL)


@pytest.mark.parametrize("seed, d, noisy", [(0, 3, False), (1, 2, True), (2, 1, False), (3, 4, True)])
def test_fit_matches_the_twin(seed, d, noisy):
    U, z, _, _ = _problem(seed, 18, d, noise=0.1 if noisy else 0.0)
    nuggets = NUGGET_GRID if noisy else NUGGET_NOISELESS
    lengths, s2, noise, lml, n_eval = gp_fit(U, z, nuggets=nuggets)
    rl, rs2, rnoise, rlml, rn = gp_fit_ref(U, z, nuggets, LENGTH_GRID, 2)
    np.testing.assert_array_equal(lengths, rl)  # the same grid values chosen
    assert n_eval == rn
    assert s2 == pytest.approx(rs2, rel=RTOL) and noise == pytest.approx(rnoise, rel=RTOL)
    assert lml == pytest.approx(rlml, rel=RTOL)
    g, G = LENGTH_GRID.size, nuggets.size
    assert n_eval == g * G + (2 * d * (g - 1) + 2 * (G - 1) if d > 1 else 0)  # counts, never time


def test_fit_reports_the_likelihood_at_what_it_returns():
    U, z, _, _ = _problem(4)
    lengths, s2, noise, lml, _ = gp_fit(U, z, nuggets=NUGGET_GRID)
    assert gp_log_likelihood(U, z, lengths, s2, noise) == pytest.approx(lml, rel=1e-9)
    # any other candidate of the shared-length stage is no better
    for ell in LENGTH_GRID:
        for g in NUGGET_GRID:
            assert gp_log_likelihood(U, z, np.full(3, ell), s2, g * s2) <= lml + 1e-9


def test_fit_prefers_a_long_length_on_a_linear_target_and_a_short_one_on_a_wiggly_one():
    u = np.linspace(0.0, 1.0, 15)[:, None]
    lin = (u[:, 0] - u[:, 0].mean()) / u[:, 0].std()
    wig = np.sin(25.0 * u[:, 0])
    wig = (wig - wig.mean()) / wig.std()
    assert gp_fit(u, lin)[0][0] >= 2.0
    assert gp_fit(u, wig)[0][0] == LENGTH_GRID[0]


@pytest.mark.parametrize("kappa", [None, 2.0, 0.5])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_select_matches_the_twin(seed, kappa):
    U, z, P, available = _problem(seed)
    lengths, s2, noise, _, _ = gp_fit(U, z)
    picks, mean, sd = gp_select(U, z, P, available, 4, lengths, s2, noise, kappa=kappa)
    rp, rm, rs = gp_select_ref(U, z, P, available, 4, lengths, s2, noise, kappa=kappa)
    np.testing.assert_array_equal(picks, rp)
    np.testing.assert_allclose(mean, rm, rtol=RTOL, atol=ATOL)
    np.testing.assert_allclose(sd, rs, rtol=RTOL, atol=ATOL)


def test_sd_vanishes_at_observations_and_the_mean_interpolates():
    U, z, _, _ = _problem(5, 12, 2)
    lengths, s2 = np.array([0.4, 0.6]), 1.3
    mean, sd = gp_posterior(U, z, U, lengths, s2, 1e-10 * s2)
    np.testing.assert_allclose(mean, z, atol=1e-5)
    assert sd.max() < 1e-3 * np.sqrt(s2)
    far = np.array([[1.0, 1.0]])
    assert np.sqrt(((U - far) ** 2).sum(axis=1)).min() > 0.1
    far_mean, far_sd = gp_posterior(U, z, far, np.array([0.01, 0.01]), s2, 1e-6)  # short lengths: the prior there
    assert far_sd[0] == pytest.approx(np.sqrt(s2), rel=1e-6) and abs(far_mean[0]) < 1e-6


def test_no_observations_is_the_prior_and_ties_go_to_the_lowest_index():
    P = np.random.default_rng(0).random((50, 2))
    available = np.ones(50, dtype=bool)
    available[:3] = False
    mean, sd = gp_posterior(np.zeros((0, 2)), np.zeros(0), P, np.array([0.5, 0.5]), 2.0, 1e-6)
    np.testing.assert_allclose(mean, 0.0)
    np.testing.assert_allclose(sd, np.sqrt(2.0))
    picks, _, sds = gp_select(np.zeros((0, 2)), np.zeros(0), P, available, 3, np.array([0.5, 0.5]), 2.0, 1e-6)
    assert picks[0] == 3  # every sd equal: the lowest available index
    assert sds[0] == pytest.approx(np.sqrt(2.0)) and sds[1] < sds[0]


def test_conditioning_shrinks_the_variance_around_a_pick():
    U, z, P, available = _problem(6)
    lengths, s2, noise, _, _ = gp_fit(U, z)
    picks, _, sd = gp_select(U, z, P, available, 6, lengths, s2, noise)
    assert np.all(np.diff(sd) <= 1e-12)  # each pick is the largest sd left, and sds only shrink
    _, sd_after = gp_posterior(np.vstack([U, P[picks[0]]]), np.append(z, 0.0), P[picks[:1]], lengths, s2, noise)
    assert sd_after[0] < 0.1 * sd[0]


@pytest.mark.parametrize("kappa", [None, 2.0])
def test_selection_takes_only_available_points_once_each(kappa):
    U, z, P, available = _problem(7, m=60)
    lengths, s2, noise, _, _ = gp_fit(U, z)
    picks, _, _ = gp_select(U, z, P, available, 8, lengths, s2, noise, kappa=kappa)
    assert picks.size == 8 and np.unique(picks).size == 8 and available[picks].all()
    few = np.zeros(60, dtype=bool)
    few[[5, 40]] = True
    got, _, _ = gp_select(U, z, P, few, 4, lengths, s2, noise, kappa=kappa)
    assert sorted(got.tolist()) == [5, 40]
    assert gp_select(U, z, P, np.zeros(60, dtype=bool), 4, lengths, s2, noise, kappa=kappa)[0].size == 0
    assert gp_select(U, z, P, available, 0, lengths, s2, noise, kappa=kappa)[0].size == 0


def test_ucb_with_kappa_zero_starts_at_the_largest_mean():
    U, z, P, available = _problem(8)
    lengths, s2, noise, _, _ = gp_fit(U, z)
    mean, _ = gp_posterior(U, z, P, lengths, s2, noise)
    picks, _, _ = gp_select(U, z, P, available, 1, lengths, s2, noise, kappa=0.0)
    assert picks[0] == np.flatnonzero(available)[np.argmax(mean[available])]


def test_deterministic():
    U, z, P, available = _problem(9)
    a = gp_fit(U, z, nuggets=NUGGET_GRID)
    b = gp_fit(U, z, nuggets=NUGGET_GRID)
    np.testing.assert_array_equal(a[0], b[0])
    assert a[1:] == b[1:]
    pa = gp_select(U, z, P, available, 4, *a[:3], kappa=2.0)
    pb = gp_select(U, z, P, available, 4, *b[:3], kappa=2.0)
    for x, y in zip(pa, pb):
        np.testing.assert_array_equal(x, y)  # the same call twice: the same result


def test_bad_input():
    U, z, P, available = _problem(10, m=20)
    with pytest.raises(ValueError, match="rows but z"):
        gp_posterior(U, z[:-1], P, np.ones(3), 1.0, 1e-6)
    with pytest.raises(ValueError, match="finite"):
        gp_posterior(U, np.where(np.arange(z.size) == 0, np.nan, z), P, np.ones(3), 1.0, 1e-6)
    with pytest.raises(ValueError, match="lengths"):
        gp_posterior(U, z, P, np.ones(2), 1.0, 1e-6)
    with pytest.raises(ValueError, match="noise"):
        gp_posterior(U, z, P, np.ones(3), 1.0, 0.0)
    with pytest.raises(ValueError, match="columns"):
        gp_posterior(U, z, P[:, :2], np.ones(3), 1.0, 1e-6)
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        gp_posterior(U * 2.0, z, P, np.ones(3), 1.0, 1e-6)
    with pytest.raises(ValueError, match="at least 2"):
        gp_fit(U[:1], z[:1])
    with pytest.raises(ValueError, match="boolean mask"):
        gp_select(U, z, P, available[:-1], 2, np.ones(3), 1.0, 1e-6)
    with pytest.raises(ValueError, match="k must"):
        gp_select(U, z, P, available, -1, np.ones(3), 1.0, 1e-6)
