"""Slow, obvious NumPy twins of :mod:`kernels.gp` (the GP planner's surrogate).

Each twin follows the written definition in the kernel's docstring with NumPy's linear algebra:
the Gram matrix by broadcasting, ``np.linalg.cholesky`` and ``np.linalg.solve``; the greedy batch
refits the model on the observations plus the earlier picks (each with its own posterior mean as a
pseudo-observation) from scratch before every pick, where the kernel updates its Cholesky factor
by one row. Two routes to the same numbers.
"""

from __future__ import annotations

import math

import numpy as np

S2_FLOOR = 1e-12


def matern52_ref(A, B, lengths):
    """Matérn 5/2 correlation matrix between the rows of ``A`` and ``B`` (ARD lengths)."""
    diff = (np.asarray(A, dtype=np.float64)[:, None, :] - np.asarray(B, dtype=np.float64)[None, :, :]) / np.asarray(lengths)
    r = np.sqrt((diff * diff).sum(axis=2))
    a = math.sqrt(5.0) * r
    return (1.0 + a + a * a / 3.0) * np.exp(-a)


def gp_log_likelihood_ref(U, z, lengths, s2, noise):
    U = np.asarray(U, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    n = z.size
    K = s2 * matern52_ref(U, U, lengths) + noise * np.eye(n)
    try:
        L = np.linalg.cholesky(K)
    except np.linalg.LinAlgError:
        return -np.inf
    w = np.linalg.solve(L, z)
    return float(-0.5 * (w @ w) - np.log(np.diag(L)).sum() - 0.5 * n * math.log(2.0 * math.pi))


def _profile_ref(U, z, lengths, g):
    """Profile log likelihood and closed-form signal variance at relative nugget ``g``."""
    n = z.size
    A = matern52_ref(U, U, lengths) + g * np.eye(n)
    try:
        L = np.linalg.cholesky(A)
    except np.linalg.LinAlgError:
        return -np.inf, S2_FLOOR
    w = np.linalg.solve(L, z)
    s2 = max(float(w @ w) / n, S2_FLOOR)
    return gp_log_likelihood_ref(U, z, lengths, s2, g * s2), s2


def gp_fit_ref(U, z, nuggets, grid, passes):
    """The search of :func:`kernels.gp.gp_fit`, candidate by candidate, in the documented order."""
    U = np.asarray(U, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    d = U.shape[1]
    best = (-np.inf, S2_FLOOR)
    cur = [0] * d
    gi = 0
    n_eval = 0
    for t in range(len(grid)):
        for q in range(len(nuggets)):
            lml, s2 = _profile_ref(U, z, np.full(d, grid[t]), nuggets[q])
            n_eval += 1
            if lml > best[0]:
                best, cur, gi = (lml, s2), [t] * d, q
    if d > 1:
        for _ in range(passes):
            for c in range(d):
                keep = cur[c]
                for t in range(len(grid)):
                    if t == keep:
                        continue
                    trial = list(cur)
                    trial[c] = t
                    lml, s2 = _profile_ref(U, z, np.asarray(grid)[trial], nuggets[gi])
                    n_eval += 1
                    if lml > best[0]:
                        best, cur = (lml, s2), trial
            keep = gi
            for q in range(len(nuggets)):
                if q == keep:
                    continue
                lml, s2 = _profile_ref(U, z, np.asarray(grid)[cur], nuggets[q])
                n_eval += 1
                if lml > best[0]:
                    best, gi = (lml, s2), q
    lml, s2 = best
    return np.asarray(grid)[cur], s2, nuggets[gi] * s2, lml, n_eval


def gp_posterior_ref(U, z, P, lengths, s2, noise):
    U = np.asarray(U, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    if U.shape[0] == 0:
        return np.zeros(P.shape[0]), np.full(P.shape[0], math.sqrt(s2))
    K = s2 * matern52_ref(U, U, lengths) + noise * np.eye(U.shape[0])
    Ks = s2 * matern52_ref(U, P, lengths)
    mean = Ks.T @ np.linalg.solve(K, z)
    var = s2 - np.einsum("ij,ij->j", Ks, np.linalg.solve(K, Ks))
    return mean, np.sqrt(np.maximum(var, 0.0))


def gp_select_ref(U, z, P, available, k, lengths, s2, noise, kappa=None):
    """Greedy batch by refitting on the observations plus the earlier picks (kriging believer)."""
    U = np.asarray(U, dtype=np.float64)
    z = np.asarray(z, dtype=np.float64)
    P = np.asarray(P, dtype=np.float64)
    free = np.asarray(available, dtype=bool).copy()
    picks, means, sds = [], [], []
    for _ in range(min(k, int(free.sum()))):
        mean, sd = gp_posterior_ref(U, z, P, lengths, s2, noise)
        score = sd if kappa is None else mean + kappa * sd
        score = np.where(free, score, -np.inf)
        p = int(np.argmax(score))  # first maximum: the lowest index on ties
        picks.append(p)
        means.append(mean[p])
        sds.append(sd[p])
        free[p] = False
        U = np.vstack([U, P[p]])
        z = np.append(z, mean[p])
    return np.asarray(picks, dtype=np.int64), np.asarray(means), np.asarray(sds)
