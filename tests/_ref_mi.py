"""Slow, obvious NumPy twins of :mod:`kernels.mi` (the information planner's estimator).

Each twin reads the written definition: the Bhattacharyya distance between two Gaussians by
broadcasting over every law pair at once (log of the ratio, not the kernel's difference of logs),
the estimator by ``np.logaddexp`` over the full weight matrix, and the greedy batch
rebuilds the batch's distance matrix from its points before every candidate, where the kernel
keeps a running sum.
"""

from __future__ import annotations

import numpy as np


def point_distances_ref(mu, var):
    mu = np.asarray(mu, dtype=np.float64)
    var = np.asarray(var, dtype=np.float64)
    a, b = mu[:, None], mu[None, :]  # [K, K, n, m]
    va, vb = var[:, None], var[None, :]
    with np.errstate(all="ignore"):
        ok = np.isfinite(a) & np.isfinite(b) & np.isfinite(va) & np.isfinite(vb) & (va > 0) & (vb > 0)
        d = (a - b) ** 2 / (4.0 * (va + vb)) + 0.5 * np.log((va + vb) / (2.0 * np.sqrt(va * vb)))
    D = np.where(ok, d, 0.0).sum(axis=3)  # [K, K, n]
    for i in range(D.shape[0]):
        D[i, i] = 0.0
    return np.transpose(D, (2, 0, 1)).copy()


def information_ref(D, log_w):
    lw = np.asarray(log_w, dtype=np.float64)
    lw = lw - np.logaddexp.reduce(lw)
    w = np.exp(lw)
    inner = np.logaddexp.reduce(lw[None, :] - np.asarray(D), axis=1)  # log sum_j w_j exp(-D_ij)
    return max(float(-(w * inner).sum()), 0.0)


def mutual_information_ref(mu, var, log_w):
    D = point_distances_ref(mu, var)
    return np.array([information_ref(D[x], log_w) for x in range(D.shape[0])])


def mi_select_ref(mu, var, log_w, available, k, min_gain=1e-9):
    D = point_distances_ref(mu, var)
    lw = np.asarray(log_w, dtype=np.float64)
    lw = lw - np.logaddexp.reduce(lw)
    tol = min_gain * float(-(np.exp(lw) * lw).sum())
    cand = [int(i) for i in np.flatnonzero(available)]
    picks: list[int] = []
    info: list[float] = []
    cur = 0.0
    for _ in range(min(k, len(cand))):
        vals = [(information_ref(D[picks + [x]].sum(axis=0), lw), x) for x in cand if x not in picks]
        best = max(v for v, _ in vals)
        x = min(x for v, x in vals if v == best)
        if not best - cur > tol:
            break
        picks.append(x)
        info.append(best)
        cur = best
    return np.asarray(picks, dtype=np.int64), np.asarray(info)
