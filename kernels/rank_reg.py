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

from kernels._checks import as_float_array, as_unit_coordinates, named_errors
from kernels._jit import JIT
from kernels._shared import _finite, _first_outside_unit

__all__ = ["stable_argsort", "ordinal_rank", "edge_weight", "rank_regularize"]

EDGE_LO = 0.08
EDGE_HI = 0.5
EDGE_POWER = 1.5


@njit(**JIT)
def _finite_order(s):
    """Stable ascending order of the finite entries of ``s`` (float64[n]): int64[n_finite].

    The finite entries' indices, ascending, sorted by value with a stable merge sort, so equal
    values keep index order (``-0.0`` and ``0.0`` are equal); the same as NumPy's
    ``argsort(kind="stable")`` on the finite entries.
    """
    idx = np.empty(s.size, dtype=np.int64)
    nf = 0
    for j in range(s.size):
        if _finite(s[j]):
            idx[nf] = j
            nf += 1
    idx = idx[:nf]
    return idx[np.argsort(s[idx], kind="mergesort")]


@njit(**JIT)
def _rank_of_order(order, n):
    """``rho`` of :func:`_ordinal_rank` from the stable order of the finite entries (int64[n_finite])."""
    rho = np.full(n, np.nan)
    nf = order.size
    if nf == 1:
        rho[order[0]] = 1.0
    elif nf > 1:
        scale = 1.0 / (nf - 1)
        for r in range(nf):
            rho[order[r]] = r * scale
    return rho


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
    return _rank_of_order(_finite_order(s), s.size)


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
    e = np.full(n, np.inf)
    for c in range(d):  # column by column: the inner loop vectorizes
        for j in range(n):
            u = U[j, c]
            e[j] = min(e[j], min(u, 1.0 - u))
    w = np.empty(n)
    inv = 1.0 / (edge_hi - edge_lo)
    if power == 1.5:
        for j in range(n):
            x = min(max((e[j] - edge_lo) * inv, 0.0), 1.0)
            w[j] = x * np.sqrt(x)  # x ** 1.5 without a pow call
    else:
        for j in range(n):
            x = min(max((e[j] - edge_lo) * inv, 0.0), 1.0)
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
    return _weighted_rank(raw, _edge_weight(U, edge_lo, edge_hi, power), v)


@njit(**JIT)
def _weighted_rank(raw, w, v):
    """``s~ = rho * w * v`` with the boundary weights ``w`` given (:func:`_edge_weight`).

    Parameters
    ----------
    raw : float64[n]
        Raw scores (NaN/inf = not scored).
    w : float64[n]
        Boundary weights of the points, in [0, 1].
    v : float64[n]
        Fraction of finite hypothesis predictions per point.

    Returns
    -------
    reg : float64[n]
        ``s~``; NaN where ``raw`` is not finite.
    """
    return _scale_rank(_ordinal_rank(raw), w, v)


@njit(**JIT)
def _scale_rank(rho, w, v):
    """``rho * w * v`` in place on ``rho`` (as :func:`_weighted_rank`); returns ``rho``."""
    for j in range(rho.size):
        rho[j] = rho[j] * w[j] * v[j]  # NaN propagates from rho
    return rho


def _check_edges(edge_lo: float, edge_hi: float, power: float) -> tuple[float, float, float]:
    lo, hi, pw = float(edge_lo), float(edge_hi), float(power)
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"need finite edge_lo < edge_hi, got {edge_lo!r}, {edge_hi!r}")
    if not (np.isfinite(pw) and pw > 0):
        raise ValueError(f"power must be positive and finite, got {power!r}")
    return lo, hi, pw


def _as_vector(x, name: str) -> np.ndarray:
    return as_float_array(x, name, 1, kinds="fiu")


@named_errors
def stable_argsort(x) -> np.ndarray:
    """Stable ascending argsort of finite values (same result as ``np.argsort(kind="stable")``)."""
    x = _as_vector(x, "x")
    if not np.all(np.isfinite(x)):
        raise ValueError("stable_argsort needs finite values")
    return _finite_order(x)


@named_errors
def ordinal_rank(scores) -> np.ndarray:
    """Stable ordinal rank of finite scores in [0, 1]; NaN for non-finite ones: float64[n]."""
    return _ordinal_rank(_as_vector(scores, "scores"))


@named_errors
def edge_weight(
    U, *, edge_lo: float = EDGE_LO, edge_hi: float = EDGE_HI, power: float = EDGE_POWER, n_points: int | None = None
) -> np.ndarray:
    """Boundary weight of points with unit coordinates ``U`` (float64[n, d]): float64[n].

    ``U`` holds one point per row. With ``n_points`` stated it must have that many rows; without
    it, a ``U`` with more columns (dimensions) than rows (points) is refused as transposed.
    """
    U = as_unit_coordinates(U, "U", n_points)
    if n_points is None and U.shape[0] < U.shape[1]:
        raise ValueError(
            f"U must have shape (n_points, d) with d <= n_points, got {U.shape}: looks transposed (pass U.T), "
            f"or state n_points={U.shape[0]}"
        )
    return _edge_weight(U, *_check_edges(edge_lo, edge_hi, power))


@named_errors
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
    U = as_unit_coordinates(U, "U")
    vv = _as_vector(v, "v")
    if U.shape[0] != r.shape[0] or vv.shape[0] != r.shape[0]:
        raise ValueError(f"raw ({r.shape[0]}), U ({U.shape[0]} rows) and v ({vv.shape[0]}) must have one entry per point")
    bad = _first_outside_unit(vv)
    if bad >= 0:
        raise ValueError(f"v must lie in [0, 1]; v[{bad}] = {vv[bad]!r}")
    w = _edge_weight(U, *_check_edges(edge_lo, edge_hi, power))
    return _weighted_rank(r, w, vv)
