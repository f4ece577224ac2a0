"""Expected information about which committee law is true, and its greedy batch (docs/guide/acquisition.md).

Used by the information planner (``acquisition: mi``, :func:`etc_fast.acquisition.plan_mi_step`);
the paper's step never calls it.

**Model.** ``K`` laws with prior (evidence) weights ``w_i`` (given as ``log_w``, normalized here). A
reading ``r`` at candidate point ``x`` given law ``i`` is Gaussian, ``N(mu[i, x, r], var[i, x, r])``,
and the readings of one point, and of different points, are independent given the law. A point may
have several readings (a simulated system's series: channels x times); an equation point has one.

**Distance** (:func:`point_distances`). The Bhattacharyya distance between law ``i``'s and law
``j``'s predictive Gaussians at one reading,

    b_ij = (mu_i - mu_j)^2 / (4 (v_i + v_j)) + log((v_i + v_j) / (2 sqrt(v_i v_j))) / 2,

is additive over independent readings, so a point's (or a batch's) distance matrix is the sum of
its readings' (points'). Readings where either law's mean is not finite or either variance is not
positive and finite are left out of that pair's sum.

**Information** (:func:`mutual_information`). The mutual information between the readings ``Y_B``
of a set ``B`` of points and the law's identity ``L``, by the pairwise-distance estimator of
mixture entropy (Kolchinsky & Tracey 2017, eq. 8 with the Bhattacharyya distance, a Chernoff
alpha-divergence of alpha = 1/2):

    I(Y_B; L) ~ -sum_i w_i log sum_j w_j exp(-D_ij(B)),    D(B) = sum over x in B of D(x).

It is a lower bound on the true information, 0 when every ``D`` is 0 and ``H(w) = -sum_i w_i log
w_i`` when every off-diagonal ``D`` is infinite (complete separation), the two ends exact.

**Greedy batch** (:func:`mi_select`). Picks one available point at a time: each pick maximizes
``I(Y_{B + x}; L)`` over the available points not yet picked (ties to the lowest index), then its
distance matrix is added to the batch's. The batch stops early when no point adds more than
``min_gain`` nats (nothing left to learn at the available points: one law holds all the weight, or
the batch already separates the laws as far as the points can).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels._checks import as_float_array, check_k, named_errors
from kernels._jit import JIT

__all__ = ["MIN_GAIN", "point_distances", "mutual_information", "mi_select"]

MIN_GAIN = 1e-9
"""Default ``min_gain`` of :func:`mi_select`, relative to ``H(w)`` (the most any batch can give):
a pick must add more than ``MIN_GAIN H(w)`` nats. Far above the rounding of a sum of ``K`` terms,
far below any gain that could matter to a choice of measurement."""


@njit(**JIT)
def _point_distances(mu, var):
    """Bhattacharyya distance matrices of every point (module docstring).

    Parameters
    ----------
    mu : float64[n_law, n_pts, n_read]
        Each law's predictive mean at each reading of each point.
    var : float64[n_law, n_pts, n_read]
        Its predictive variance.

    Returns
    -------
    D : float64[n_pts, n_law, n_law]
        Symmetric, zero diagonal.
    """
    K, n, m = mu.shape
    D = np.zeros((n, K, K))
    for x in range(n):
        for i in range(K):
            for j in range(i + 1, K):
                s = 0.0
                for r in range(m):
                    a, b = mu[i, x, r], mu[j, x, r]
                    va, vb = var[i, x, r], var[j, x, r]
                    if not (math.isfinite(a) and math.isfinite(b) and math.isfinite(va) and math.isfinite(vb)):
                        continue
                    if va <= 0.0 or vb <= 0.0:
                        continue
                    vs = va + vb
                    d = a - b
                    # (mu_i - mu_j)^2 / (4 (v_i + v_j)) + log((v_i + v_j) / (2 sqrt(v_i v_j))) / 2
                    s += d * d / (4.0 * vs) + 0.5 * math.log(0.5 * vs) - 0.25 * (math.log(va) + math.log(vb))
                D[x, i, j] = s
                D[x, j, i] = s
    return D


@njit(**JIT)
def _normalized_log_weights(log_w):
    """``log_w`` minus its log-sum-exp (weights summing to 1)."""
    mx = -np.inf
    for v in log_w:
        mx = max(mx, v)
    s = 0.0
    for v in log_w:
        s += math.exp(v - mx)
    return log_w - (mx + math.log(s))


@njit(**JIT)
def _information(D, lw):
    """``-sum_i w_i log sum_j w_j exp(-D_ij)`` by log-sum-exp, for normalized log weights ``lw``.

    Parameters
    ----------
    D : float64[n_law, n_law]
    lw : float64[n_law]

    Returns
    -------
    float
    """
    K = lw.size
    out = 0.0
    for i in range(K):
        wi = math.exp(lw[i])
        if wi == 0.0:
            continue
        mx = -np.inf
        for j in range(K):
            mx = max(mx, lw[j] - D[i, j])
        s = 0.0
        for j in range(K):
            s += math.exp(lw[j] - D[i, j] - mx)
        out -= wi * (mx + math.log(s))
    return max(out, 0.0)


@njit(**JIT)
def _entropy(lw):
    h = 0.0
    for v in lw:
        h -= math.exp(v) * v
    return h


@njit(**JIT)
def _select(D, lw, cand, k, min_gain):
    """Greedy batch over candidate points ``cand`` (rows of ``D``); returns picks (positions in
    ``cand``) and the batch's information after each pick."""
    K = lw.size
    acc = np.zeros((K, K))
    trial = np.zeros((K, K))
    taken = np.zeros(cand.size, dtype=np.bool_)
    picks = np.empty(min(k, cand.size), dtype=np.int64)
    info = np.empty(picks.size)
    cur = 0.0
    tol = min_gain * _entropy(lw)
    n = 0
    for _t in range(picks.size):
        best, best_c = -1.0, -1
        for c in range(cand.size):
            if taken[c]:
                continue
            x = cand[c]
            for i in range(K):
                for j in range(K):
                    trial[i, j] = acc[i, j] + D[x, i, j]
            v = _information(trial, lw)
            if v > best:  # strictly: ties keep the lowest index
                best, best_c = v, c
        if best_c < 0 or not (best - cur > tol):
            break
        taken[best_c] = True
        x = cand[best_c]
        for i in range(K):
            for j in range(K):
                acc[i, j] += D[x, i, j]
        picks[n] = best_c
        info[n] = best
        cur = best
        n += 1
    return picks[:n], info[:n]


def _predictions(mu, var) -> tuple[np.ndarray, np.ndarray]:
    m = as_float_array(mu, "mu", 3)
    v = as_float_array(var, "var", 3)
    if v.shape != m.shape:
        raise ValueError(f"var must have the shape of mu {m.shape}, got {v.shape}")
    if m.shape[0] < 1:
        raise ValueError("mu must hold at least one law")
    return m, v


def _laws(mu, var, log_w) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    m, v = _predictions(mu, var)
    lw = as_float_array(log_w, "log_w", 1, kinds="fiu")
    if lw.shape != (m.shape[0],):
        raise ValueError(f"log_w must hold one weight per law ({m.shape[0]},), got shape {lw.shape}")
    if not np.all(np.isfinite(lw)):
        raise ValueError(f"log_w must be finite (a law without weight is left out by the caller), got {lw.tolist()}")
    return m, v, _normalized_log_weights(lw)


@named_errors
def point_distances(mu, var) -> np.ndarray:
    """Bhattacharyya distance matrix of each point, summed over its readings (module docstring).

    Args:
        mu: float64[K, n, m] each law's predictive mean at each of ``m`` readings of ``n`` points.
        var: float64[K, n, m] its predictive variance.

    Returns:
        float64[n, K, K], symmetric with a zero diagonal.
    """
    m, v = _predictions(mu, var)
    return _point_distances(m, v)


@named_errors
def mutual_information(mu, var, log_w) -> np.ndarray:
    """The information one point's readings give about the law, ``I(Y_x; L)`` in nats, at each point
    (module docstring).

    Args:
        mu, var: float64[K, n, m] as in :func:`point_distances`.
        log_w: float64[K] finite log weights of the laws (normalized here).

    Returns:
        float64[n], each in ``[0, H(w)]``.
    """
    m, v, lw = _laws(mu, var, log_w)
    D = _point_distances(m, v)
    return np.array([_information(D[x], lw) for x in range(D.shape[0])])


@named_errors
def mi_select(mu, var, log_w, available, k: int, *, min_gain: float = MIN_GAIN) -> tuple[np.ndarray, np.ndarray]:
    """Greedy batch of at most ``k`` available points by the batch's information (module docstring).

    Args:
        mu, var: float64[K, n, m] as in :func:`point_distances`.
        log_w: float64[K] finite log weights of the laws.
        available: bool[n] points that may be picked.
        k: Batch size.
        min_gain: A pick must add more than ``min_gain H(w)`` nats; the batch stops at the first
            step where none does (so it may hold fewer than ``k`` points, none when nothing is left
            to learn).

    Returns:
        ``(picks, info)``: int64 point indices in pick order and float64 ``I(Y_B; L)`` of the
        batch after each pick (non-decreasing).
    """
    m, v, lw = _laws(mu, var, log_w)
    mask = np.asarray(available)
    if mask.dtype != np.bool_ or mask.shape != (m.shape[1],):
        raise ValueError(f"available must be a boolean mask of shape ({m.shape[1]},), got {mask.dtype} {mask.shape}")
    g = float(min_gain)
    if not (g >= 0.0 and np.isfinite(g)):
        raise ValueError(f"min_gain must be a finite number >= 0, got {min_gain!r}")
    kk = check_k(k)
    cand = np.flatnonzero(mask).astype(np.int64)
    D = _point_distances(m, v)
    rows, info = _select(D, lw, cand, kk, g)
    return cand[rows], info
