"""kernels.noise (relative residuals, relative disagreement, maximin picks) against NumPy twins."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.noise import maximin_pick, relative_disagreement, relative_residual_rms


def relative_residual_rms_np(P, y):
    """NumPy twin of :func:`kernels.noise.relative_residual_rms`."""
    P = np.asarray(P, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        ok = np.isfinite(P) & np.isfinite(y)[None, :] & (y != 0)[None, :]
        r = np.where(ok, (P - y) / np.abs(y), 0.0)
        c = ok.sum(axis=1)
        rms = np.where(c > 0, np.sqrt((r * r).sum(axis=1) / np.maximum(c, 1)), np.nan)
    return rms, c


def relative_disagreement_np(P):
    """NumPy twin of :func:`kernels.noise.relative_disagreement`."""
    P = np.asarray(P, dtype=np.float64)
    fin = np.isfinite(P)
    c = fin.sum(axis=0)
    with np.errstate(all="ignore"):
        hi = np.where(fin, P, -np.inf).max(axis=0, initial=-np.inf)
        lo = np.where(fin, P, np.inf).min(axis=0, initial=np.inf)
        den = np.abs(hi) + np.abs(lo)
        out = np.where(den > 0, 2.0 * (hi - lo) / np.where(den > 0, den, 1.0), 0.0)
    return np.where(c >= 2, out, np.nan)


def maximin_pick_np(R, C, k):
    """NumPy twin of :func:`kernels.noise.maximin_pick` (squared distances, first maximum on ties)."""
    R = np.asarray(R, dtype=np.float64)
    C = np.asarray(C, dtype=np.float64)
    R = R[np.all(np.isfinite(R), axis=1)]
    dmin = ((C[:, None, :] - R[None, :, :]) ** 2).sum(axis=2).min(axis=1) if R.shape[0] else np.full(C.shape[0], np.inf)
    picks = []
    taken = np.zeros(C.shape[0], dtype=bool)
    for _ in range(min(k, C.shape[0])):
        j = int(np.argmax(np.where(taken, -np.inf, dmin)))
        picks.append(j)
        taken[j] = True
        dmin = np.minimum(dmin, ((C - C[j]) ** 2).sum(axis=1))
    return np.asarray(picks, dtype=np.int64)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_relative_residual_rms_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    y = rng.lognormal(size=30) * rng.choice([-1, 1], size=30)
    y[3] = 0.0
    y[5] = np.nan
    P = y[None, :] * (1 + 0.01 * rng.normal(size=(4, 30)))
    P[1, 7] = np.inf
    got, gc = relative_residual_rms(P, y)
    ref, rc = relative_residual_rms_np(P, y)
    np.testing.assert_allclose(got, ref, rtol=1e-12)
    np.testing.assert_array_equal(gc, rc)
    assert gc[0] == 28 and gc[1] == 27


def test_relative_residual_rms_recovers_the_noise_level():
    rng = np.random.default_rng(7)
    truth = rng.lognormal(mean=3.0, sigma=2.0, size=4000)
    y = truth * (1 + 0.01 * rng.normal(size=truth.size))
    rms, _ = relative_residual_rms(truth[None, :], y)
    assert rms[0] == pytest.approx(0.01, rel=0.05)


@pytest.mark.parametrize("seed", [0, 1])
def test_relative_disagreement_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    P = rng.normal(size=(5, 200))
    P[:, 0] = np.nan
    P[1:, 1] = np.nan
    P[:, 2] = 0.0
    P[0, 3] = -np.inf
    got = relative_disagreement(P)
    np.testing.assert_allclose(got, relative_disagreement_np(P), rtol=1e-12, equal_nan=True)
    assert np.isnan(got[0]) and np.isnan(got[1]) and got[2] == 0.0


def test_relative_disagreement_of_a_relative_gap():
    P = np.array([[100.0, -1.0], [101.0, 1.0]])
    d = relative_disagreement(P)
    assert d[0] == pytest.approx(2.0 / 201.0) and d[1] == pytest.approx(2.0)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_maximin_matches_numpy(seed):
    rng = np.random.default_rng(seed)
    R = rng.random((7, 3))
    R[2] = np.nan
    C = rng.random((300, 3))
    np.testing.assert_array_equal(maximin_pick(R, C, 6), maximin_pick_np(R, C, 6))


def test_maximin_goes_where_nothing_was_measured():
    # observations crowd the lower-left corner: the first pick is the far corner
    R = np.array([[0.0, 0.0], [0.1, 0.1], [0.2, 0.0], [0.0, 0.2]])
    g = np.linspace(0, 1, 11)
    C = np.array([[a, b] for a in g for b in g])
    first, second = maximin_pick(R, C, 2)
    assert tuple(C[first]) == (1.0, 1.0)
    ref = np.vstack([R, C[first]])
    dist = np.sqrt(((C[:, None, :] - ref[None]) ** 2).sum(axis=2)).min(axis=1)
    assert dist[second] == pytest.approx(dist.max()) and dist[second] > 0.8
    assert maximin_pick(np.zeros((0, 2)), C, 1).tolist() == [0]
    assert maximin_pick(R, C, 500).size == C.shape[0]


def test_bad_input():
    with pytest.raises(ValueError, match="columns"):
        maximin_pick(np.zeros((2, 3)), np.zeros((4, 2)), 1)
    with pytest.raises(ValueError, match="non-finite"):
        maximin_pick(np.zeros((2, 2)), np.full((4, 2), np.nan), 1)
    with pytest.raises(ValueError, match="k must be"):
        maximin_pick(np.zeros((2, 2)), np.zeros((4, 2)), -1)
    with pytest.raises(ValueError, match="columns"):
        relative_residual_rms(np.zeros((2, 3)), np.zeros(4))
