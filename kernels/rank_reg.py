"""Rank regularization of raw acquisition scores (paper S2.2, eq. S4).

``s~_j = rho_j * clip((e_j - edge_lo) / (edge_hi - edge_lo), 0, 1) ** power * v_j`` where

* ``rho_j`` is the ordinal rank of the finite raw score in [0, 1]: finite scores sorted ascending by
  a stable sort (equal scores: the earlier index ranks lower), ``rho = rank / (n_finite - 1)``, and
  ``rho = 1`` when only one score is finite;
* ``e_j = min_k min(u_jk, 1 - u_jk)`` is the distance of the point's unit coordinates to the nearest
  face of the unit cube (paper constants ``edge_lo = 0.08``, ``edge_hi = 0.5``, ``power = 1.5``);
* ``v_j`` is the fraction of finite hypothesis predictions at the point.

A non-finite raw score gives ``s~ = NaN`` (the point is not eligible for selection).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._jit import JIT

__all__ = ["stable_argsort", "ordinal_rank", "edge_weight", "rank_regularize"]

EDGE_LO = 0.08
EDGE_HI = 0.5
EDGE_POWER = 1.5


@njit(**JIT)
def _finite(x):
    """``x`` is neither NaN nor infinite, robust to the JIT's fastmath flags.

    Numba lowers ``np.isfinite(x)`` as "``x - x`` is not NaN"; with ``reassoc`` + ``nsz`` LLVM folds
    that to true whenever ``x`` is itself computed (e.g. ``_finite(a - b)``). An ordered
    comparison of ``|x|`` with infinity cannot be folded without ``nnan``/``ninf``.
    """
    return abs(x) < np.inf


@njit(**JIT)
def _radix_argsort(x):
    """Stable ascending argsort of finite float64 values by LSD radix sort (no data-dependent branches).

    Parameters
    ----------
    x : float64[n]
        Finite values (``-0.0`` sorts as ``+0.0``, i.e. ties keep index order).

    Returns
    -------
    order : int64[n]
        Permutation with ``x[order]`` ascending; equal values keep their index order
        (identical to ``np.argsort(x, kind="stable")``).

    Notes
    -----
    Float bits map to order-preserving unsigned keys (negative: all bits flipped; non-negative:
    sign bit set); keys are offset by their minimum and sorted 11 bits per pass, only over the
    bits the key range spans, skipping passes whose digit is constant. Comparison sorts on fresh
    data pay a branch misprediction per comparison; this costs a fixed few passes per element.
    """
    n = x.size
    bits = x.view(np.uint64)
    sign = np.uint64(0x8000000000000000)
    keys = np.empty(n, dtype=np.uint64)
    kmin = np.uint64(0xFFFFFFFFFFFFFFFF)
    kmax = np.uint64(0)
    for j in range(n):
        b = bits[j]
        if b == sign:  # -0.0 equals +0.0
            b = np.uint64(0)
        k = ~b if (b & sign) else (b | sign)
        keys[j] = k
        if k < kmin:
            kmin = k
        if k > kmax:
            kmax = k
    order = np.arange(n)
    if n < 2 or kmin == kmax:
        return order
    span = kmax - kmin
    nbits = 0
    while span > np.uint64(0):
        span >>= np.uint64(1)
        nbits += 1
    npass = (nbits + 10) // 11
    hist = np.zeros((npass, 2049), dtype=np.int64)
    mask = np.uint64(2047)
    for j in range(n):
        k = keys[j] - kmin
        keys[j] = k
        for p in range(npass):
            hist[p, ((k >> np.uint64(11 * p)) & mask) + np.uint64(1)] += 1
    k2 = np.empty(n, dtype=np.uint64)
    o2 = np.empty(n, dtype=np.int64)
    for p in range(npass):
        h = hist[p]
        trivial = False
        for bkt in range(1, 2049):
            if h[bkt] == n:
                trivial = True
                break
        if trivial:
            continue
        for bkt in range(2048):
            h[bkt + 1] += h[bkt]
        sh = np.uint64(11 * p)
        for j in range(n):
            k = keys[j]
            dgt = (k >> sh) & mask
            pos = h[dgt]
            h[dgt] = pos + 1
            k2[pos] = k
            o2[pos] = order[j]
        keys, k2 = k2, keys
        order, o2 = o2, order
    return order


@njit(**JIT)
def _ordinal_rank(s):
    """Ordinal rank of the finite entries of ``s`` scaled to [0, 1].

    Parameters
    ----------
    s : float64[n]
        Raw scores (NaN/inf = missing).

    Returns
    -------
    rho : float64[n]
        ``rank / (n_finite - 1)`` for finite entries (stable ascending order; 1.0 if only one is
        finite); NaN elsewhere.
    """
    n = s.size
    rho = np.full(n, np.nan)
    idx = np.empty(n, dtype=np.int64)
    vals = np.empty(n)
    nf = 0
    for j in range(n):
        if _finite(s[j]):
            idx[nf] = j
            vals[nf] = s[j]
            nf += 1
    if nf == 0:
        return rho
    if nf == 1:
        rho[idx[0]] = 1.0
        return rho
    order = _radix_argsort(vals[:nf])
    scale = 1.0 / (nf - 1)
    for r in range(nf):
        rho[idx[order[r]]] = r * scale
    return rho


@njit(**JIT)
def _edge_weight(U, edge_lo, edge_hi, power):
    """Boundary weight per point.

    Parameters
    ----------
    U : float64[n, d]
        Unit-cube coordinates of the points, in [0, 1].
    edge_lo, edge_hi : float
        Edge distance at which the weight starts rising from 0 and reaches 1.
    power : float
        Exponent of the clipped ramp.

    Returns
    -------
    w : float64[n]
        ``clip((e - edge_lo) / (edge_hi - edge_lo), 0, 1) ** power``,
        ``e = min_k min(u_k, 1 - u_k)``.
    """
    n, d = U.shape
    w = np.empty(n)
    inv = 1.0 / (edge_hi - edge_lo)
    for j in range(n):
        e = np.inf
        for c in range(d):
            u = U[j, c]
            m = u if u < 1.0 - u else 1.0 - u
            if m < e:
                e = m
        x = (e - edge_lo) * inv
        if x <= 0.0:
            w[j] = 0.0
        elif x >= 1.0:
            w[j] = 1.0
        elif power == 1.5:
            w[j] = x * np.sqrt(x)  # x ** 1.5 without a pow call
        else:
            w[j] = x**power
    return w


@njit(**JIT)
def _rank_regularize(raw, U, v, edge_lo, edge_hi, power):
    """Regularized score ``s~ = rho * w * v`` (eq. S4).

    Parameters
    ----------
    raw : float64[n]
        Raw scores (NaN/inf = not scored).
    U : float64[n, d]
        Unit coordinates.
    v : float64[n]
        Fraction of finite hypothesis predictions per point.
    edge_lo, edge_hi, power : float
        Boundary ramp constants (paper: 0.08, 0.5, 1.5).

    Returns
    -------
    reg : float64[n]
        ``s~``; NaN where ``raw`` is not finite.
    """
    rho = _ordinal_rank(raw)
    w = _edge_weight(U, edge_lo, edge_hi, power)
    out = np.empty(raw.size)
    for j in range(raw.size):
        out[j] = rho[j] * w[j] * v[j]  # NaN propagates from rho
    return out


def _check_unit(U) -> np.ndarray:
    U = np.asarray(U)
    if U.ndim != 2 or U.shape[1] < 1:
        raise ValueError(f"U must be a 2-D array [n, d] with d >= 1, got shape {U.shape}")
    if not (np.issubdtype(U.dtype, np.floating) or np.issubdtype(U.dtype, np.integer)):
        raise TypeError(f"U must hold real numbers, got dtype {U.dtype}")
    U = np.ascontiguousarray(U, dtype=np.float64)
    bad = ~((U >= 0.0) & (U <= 1.0))
    if bad.any():
        j, c = np.argwhere(bad)[0]
        raise ValueError(f"U must lie in [0, 1]; U[{j}, {c}] = {U[j, c]!r}")
    return U


def _check_edges(edge_lo: float, edge_hi: float, power: float) -> tuple[float, float, float]:
    lo, hi, pw = float(edge_lo), float(edge_hi), float(power)
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"need finite edge_lo < edge_hi, got {edge_lo!r}, {edge_hi!r}")
    if not (np.isfinite(pw) and pw > 0):
        raise ValueError(f"power must be positive and finite, got {power!r}")
    return lo, hi, pw


def _as_vector(x, name: str) -> np.ndarray:
    x = np.asarray(x)
    if x.ndim != 1:
        raise ValueError(f"{name} must be 1-D, got shape {x.shape}")
    if not (np.issubdtype(x.dtype, np.floating) or np.issubdtype(x.dtype, np.integer)):
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
    return np.ascontiguousarray(x, dtype=np.float64)


def stable_argsort(x) -> np.ndarray:
    """Stable ascending argsort of finite values (radix; same result as ``np.argsort(kind="stable")``)."""
    x = _as_vector(x, "x")
    if not np.all(np.isfinite(x)):
        raise ValueError("stable_argsort needs finite values")
    return _radix_argsort(x)


def ordinal_rank(scores) -> np.ndarray:
    """Stable ordinal rank of finite scores in [0, 1]; NaN for non-finite ones: float64[n]."""
    return _ordinal_rank(_as_vector(scores, "scores"))


def edge_weight(U, *, edge_lo: float = EDGE_LO, edge_hi: float = EDGE_HI, power: float = EDGE_POWER) -> np.ndarray:
    """Boundary weight of points with unit coordinates ``U`` (float64[n, d]): float64[n]."""
    return _edge_weight(_check_unit(U), *_check_edges(edge_lo, edge_hi, power))


def rank_regularize(
    raw, U, v, *, edge_lo: float = EDGE_LO, edge_hi: float = EDGE_HI, power: float = EDGE_POWER
) -> np.ndarray:
    """Regularized acquisition score ``s~ = rho * w * v`` (eq. S4).

    Args:
        raw: float64[n] raw scores (NaN = not scored).
        U: float64[n, d] unit coordinates of the pool points, in [0, 1].
        v: float64[n] fraction of finite hypothesis predictions per point, in [0, 1].
        edge_lo: Edge distance below which the weight is 0 (paper 0.08).
        edge_hi: Edge distance at which the weight reaches 1 (paper 0.5).
        power: Exponent of the ramp (paper 1.5).

    Returns:
        float64[n]; NaN where ``raw`` is not finite.
    """
    r = _as_vector(raw, "raw")
    U = _check_unit(U)
    vv = _as_vector(v, "v")
    if U.shape[0] != r.shape[0] or vv.shape[0] != r.shape[0]:
        raise ValueError(f"raw ({r.shape[0]}), U ({U.shape[0]} rows) and v ({vv.shape[0]}) must have one entry per point")
    if not np.all((vv >= 0.0) & (vv <= 1.0)):
        raise ValueError("v must lie in [0, 1]")
    return _rank_regularize(r, U, vv, *_check_edges(edge_lo, edge_hi, power))
