"""Noise-aware planner parts: relative residuals, relative disagreement and maximin exploration.

Used by the noise-aware planner step (:func:`etc_fast.acquisition.plan_noisy_step`, docs/guide/noise.md);
the paper's step never calls them.

* :func:`relative_residual_rms` -- per hypothesis, the RMS of ``(p - y) / |y|`` over the
  observations where both are finite and ``y != 0``: under NewtonBench's relative noise
  ``y (1 + sigma z)`` the right law's calibrated residuals have RMS ``sigma``.
* :func:`relative_disagreement` -- per point, ``2 (max - min) / (|max| + |min|)`` of the finite
  predictions (NaN with fewer than two, 0 where all are 0): the relative gap one measurement there
  must resolve, to be compared with the noise level.
* :func:`maximin_pick` -- greedy maximin design: each pick is the candidate farthest (Euclidean,
  unit coordinates) from the reference points and the earlier picks; ties go to the lowest
  candidate index.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import as_float_array, check_points_last, named_errors
from kernels._jit import JIT

__all__ = ["relative_residual_rms", "relative_disagreement", "maximin_pick"]


@njit(**JIT)
def _relative_residual_rms(P, y):  # pragma: no cover - compiled
    n_h, n = P.shape
    rms = np.full(n_h, np.nan)
    count = np.zeros(n_h, dtype=np.int64)
    for i in range(n_h):
        s = 0.0
        c = 0
        for j in range(n):
            p = P[i, j]
            t = y[j]
            if np.isfinite(p) and np.isfinite(t) and t != 0.0:
                r = (p - t) / abs(t)
                s += r * r
                c += 1
        count[i] = c
        if c > 0:
            rms[i] = np.sqrt(s / c)
    return rms, count


@named_errors
def relative_residual_rms(P, y):
    """RMS relative residual of each row of ``P`` against ``y``.

    Args:
        P: float64[n_hyp, n_obs] (calibrated) predictions at the observations.
        y: float64[n_obs] observed outputs.

    Returns:
        ``(rms, count)``: float64[n_hyp] (NaN where no pair is usable) and int64[n_hyp] the pairs
        used (both finite, ``y != 0``).
    """
    P = as_float_array(P, "P", 2)
    y = as_float_array(y, "y", 1)
    if P.shape[1] != y.shape[0]:
        raise ValueError(f"relative_residual_rms: P has {P.shape[1]} columns but y has {y.shape[0]} values")
    return _relative_residual_rms(np.ascontiguousarray(P), np.ascontiguousarray(y))


@njit(**JIT)
def _relative_disagreement(P):  # pragma: no cover - compiled
    n_h, n = P.shape
    out = np.full(n, np.nan)
    for j in range(n):
        lo = np.inf
        hi = -np.inf
        c = 0
        for i in range(n_h):
            p = P[i, j]
            if np.isfinite(p):
                c += 1
                if p < lo:
                    lo = p
                if p > hi:
                    hi = p
        if c >= 2:
            den = abs(hi) + abs(lo)
            out[j] = 2.0 * (hi - lo) / den if den > 0.0 else 0.0
    return out


@named_errors
def relative_disagreement(P, *, n_points: int | None = None):
    """Relative spread ``2 (max - min) / (|max| + |min|)`` of each column's finite predictions.

    Args:
        P: float64[n_hyp, n_points] calibrated predictions. Without ``n_points`` it must not have
            more rows than columns (more hypotheses than points reads as a transposed matrix).
        n_points: The number of points, when stated: ``P`` must have that many columns (any
            number of rows).

    Returns:
        float64[n_points]; NaN where fewer than two predictions are finite, 0 where all are 0. Two
        predictions ``p`` and ``p (1 + delta)`` give about ``delta``; opposite signs give 2.
    """
    P = as_float_array(P, "P", 2)
    check_points_last(P, "P", n_points)
    return _relative_disagreement(np.ascontiguousarray(P))


@njit(**JIT)
def _maximin_pick(R, C, k):  # pragma: no cover - compiled
    n_c, d = C.shape
    dmin = np.full(n_c, np.inf)
    for j in range(n_c):
        for r in range(R.shape[0]):
            s = 0.0
            for q in range(d):
                t = C[j, q] - R[r, q]
                s += t * t
            if s < dmin[j]:
                dmin[j] = s
    k = min(k, n_c)
    picks = np.empty(k, dtype=np.int64)
    taken = np.zeros(n_c, dtype=np.bool_)
    for t in range(k):
        best = -1
        bd = -1.0
        for j in range(n_c):
            if not taken[j] and dmin[j] > bd:
                bd = dmin[j]
                best = j
        picks[t] = best
        taken[best] = True
        for j in range(n_c):
            if not taken[j]:
                s = 0.0
                for q in range(d):
                    u = C[j, q] - C[best, q]
                    s += u * u
                if s < dmin[j]:
                    dmin[j] = s
    return picks


@named_errors
def maximin_pick(U_ref, U_cand, k: int) -> np.ndarray:
    """Greedy maximin picks: ``k`` candidate rows, each farthest from the references and earlier picks.

    Args:
        U_ref: float64[n_ref, d] points already measured (unit coordinates; NaN rows are ignored).
        U_cand: float64[n_cand, d] candidate points (unit coordinates, finite).
        k: Picks wanted (at most ``n_cand`` are returned).

    Returns:
        int64[min(k, n_cand)] candidate row indices in pick order. With no reference the first pick
        is candidate 0.

    Raises:
        ValueError: on mismatched dimensions, a non-finite candidate or a negative ``k``.
    """
    R = as_float_array(U_ref, "U_ref", 2)
    C = as_float_array(U_cand, "U_cand", 2)
    if R.shape[1] != C.shape[1] and (R.shape[0] > 0 or R.shape[1] > 0):
        raise ValueError(f"U_ref must have shape (n_ref, d) with d = U_cand's {C.shape[1]} columns, got {R.shape}")
    if not np.all(np.isfinite(C)):
        raise ValueError("maximin_pick: U_cand holds a non-finite coordinate")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"maximin_pick: k must be a non-negative integer, got {k!r}")
    R = R[np.all(np.isfinite(R), axis=1)] if R.shape[0] else np.zeros((0, C.shape[1]))
    return _maximin_pick(np.ascontiguousarray(R), np.ascontiguousarray(C), int(k))
