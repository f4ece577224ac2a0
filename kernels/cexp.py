"""Screening errors of the compound-exponential families (the symbolic search's rate screens).

A screen scores a family at many fixed nonlinear guesses at once: problem ``b`` takes the library
monomial ``N = NV[li[b]]``, the prefactor monomial ``M = MV[mi[b]]`` and the rate ``g[b]``, sets
``E = exp(g N)``, solves the family's linear constants by relative least squares (each row
weighted by ``1 / |y|``) and returns the relative RMS error of the prediction. The families, with
the columns of their linear problem:

====== ======================================= ==================================
kind   law                                     columns (before the weights)
====== ======================================= ==================================
0      ``M (c0 + c1 E)``                       ``M``, ``M E``
1      ``c0 M / (1 + c1 E)`` (linearised)      ``M``, ``-y E``
2      ``M (c0 + c1 / (1 + c2 E))`` (Moebius)  ``M``, ``M E``, ``-y E``
====== ======================================= ==================================

Each small problem is solved as the NumPy screen does: columns scaled to unit norm, the normal
equations regularised by ``1e-13`` on the diagonal, Gaussian elimination with partial pivoting
(the 2 x 2 and 3 x 3 systems LAPACK's ``gesv`` would factor), then the scaling undone. A problem
whose normal equations are not finite gets the error of a prediction that is nowhere finite
(10, as every point's relative error is clipped at 10). The work is ``B n k^2`` multiply-adds with
no ``[B, n, k]`` temporaries, where NumPy allocates several.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import as_float_array
from kernels._jit import JIT, JitOptions

__all__ = ["KINDS", "screen_errors"]

#: Family names the kernel screens, by kind code.
KINDS = ("expoff", "logistic", "mobius")
_CLIP = 10.0
#: A zero divisor gives inf/nan, as in NumPy's screen (no ZeroDivisionError).
_SCREEN_JIT: JitOptions = {**JIT, "error_model": "numpy"}


@njit(**_SCREEN_JIT)
def _screen_errors(kind, y, NV, MV, li, g, mi):  # pragma: no cover - compiled
    B = li.shape[0]
    n = y.shape[0]
    k = 3 if kind == 2 else 2
    out = np.empty(B)
    C = np.empty((n, 3))  # the guess's weighted columns, scaled to unit norm in place
    E = np.empty(n)  # exp(g N) of the guess, computed once for the columns and the prediction
    w = np.empty(n)  # row weights 1 / |y| and targets sign(y), the same for every guess
    t_y = np.empty(n)
    for i in range(n):
        w[i] = 1.0 / abs(y[i])
        t_y[i] = y[i] / abs(y[i])
    G = np.empty((3, 3))
    r = np.empty(3)
    s = np.empty(3)
    x = np.empty(3)
    for b in range(B):
        a = li[b]
        c = mi[b]
        gb = g[b]
        for i in range(n):
            m = MV[c, i]
            e = np.exp(gb * NV[a, i])
            E[i] = e
            C[i, 0] = m * w[i]
            if kind == 0:
                C[i, 1] = m * e * w[i]
            elif kind == 1:
                C[i, 1] = -y[i] * e * w[i]
            else:
                C[i, 1] = m * e * w[i]
                C[i, 2] = -y[i] * e * w[i]
        for j in range(k):
            t = 0.0
            for i in range(n):
                t += C[i, j] * C[i, j]
            t = np.sqrt(t)
            s[j] = t if t > 0.0 else 1.0
            for i in range(n):
                C[i, j] = C[i, j] / s[j]
        finite = True
        for j in range(k):
            t = 0.0
            for i in range(n):
                t += C[i, j] * t_y[i]
            r[j] = t
            finite = finite and np.isfinite(t)
            for h in range(k):
                t = 0.0
                for i in range(n):
                    t += C[i, j] * C[i, h]
                G[j, h] = t + (1e-13 if j == h else 0.0)
                finite = finite and np.isfinite(G[j, h])
        if finite:
            # Gaussian elimination with partial pivoting on [G | r]
            for p in range(k):
                q = p
                for i in range(p + 1, k):
                    if abs(G[i, p]) > abs(G[q, p]):
                        q = i
                if q != p:
                    for h in range(k):
                        G[p, h], G[q, h] = G[q, h], G[p, h]
                    r[p], r[q] = r[q], r[p]
                for i in range(p + 1, k):
                    f = G[i, p] / G[p, p]
                    for h in range(p, k):
                        G[i, h] -= f * G[p, h]
                    r[i] -= f * r[p]
            for p in range(k - 1, -1, -1):
                t = r[p]
                for h in range(p + 1, k):
                    t -= G[p, h] * x[h]
                x[p] = t / G[p, p]
            for j in range(k):
                x[j] = x[j] / s[j]
        else:
            for j in range(k):
                x[j] = np.nan
        if kind == 2:  # (a, b, c2) of a M + b M E - c2 y E: c0 = b / c2, c1 = a - c0
            c0 = x[1] / x[2]
            c1 = x[0] - c0
            c2 = x[2]
        acc = 0.0
        for i in range(n):
            m = MV[c, i]
            e = E[i]
            if kind == 0:
                pred = x[0] * m + x[1] * m * e
            elif kind == 1:
                pred = x[0] * m / (1.0 + x[1] * e)
            else:
                pred = m * (c0 + c1 / (1.0 + c2 * e))
            d = (pred - y[i]) / abs(y[i])
            d = min(abs(d), _CLIP) if np.isfinite(d) else _CLIP
            acc += d * d
        out[b] = np.sqrt(acc / n)
    return out


def screen_errors(kind: str, y: np.ndarray, NV: np.ndarray, MV: np.ndarray, li: np.ndarray, g: np.ndarray,
                  mi: np.ndarray) -> np.ndarray:
    """Relative RMS errors of ``B`` screened guesses of one compound family (module docstring).

    Args:
        kind: ``"expoff"``, ``"logistic"`` or ``"mobius"``.
        y: float64[n] outputs (non-zero).
        NV: float64[L, n] values of the library monomials inside the exponential.
        MV: float64[K, n] values of the prefactor monomials.
        li: int[B] library row of each guess.
        g: float64[B] rate of each guess.
        mi: int[B] prefactor row of each guess.

    Returns:
        float64[B] relative RMS errors (each point's relative error clipped at 10; non-finite
        points count as 10).
    """
    if kind not in KINDS:
        raise ValueError(f"screen_errors: kind must be one of {KINDS}, got {kind!r}")
    y = as_float_array(y, "y", 1)
    NV = as_float_array(NV, "NV", 2)
    MV = as_float_array(MV, "MV", 2)
    g = as_float_array(g, "g", 1)
    li = np.ascontiguousarray(li, dtype=np.int64).reshape(-1)
    mi = np.ascontiguousarray(mi, dtype=np.int64).reshape(-1)
    n = y.shape[0]
    if NV.shape[1] != n or MV.shape[1] != n:
        raise ValueError(f"screen_errors: NV and MV must have n = {n} columns, got {NV.shape} and {MV.shape}")
    if not (li.shape == g.shape == mi.shape):
        raise ValueError(f"screen_errors: li, g and mi must have one entry per guess, got {li.shape}, {g.shape}, {mi.shape}")
    if li.size and (li.min() < 0 or li.max() >= NV.shape[0] or mi.min() < 0 or mi.max() >= MV.shape[0]):
        raise ValueError("screen_errors: li or mi holds a row index outside NV or MV")
    if n == 0:
        return np.full(li.shape[0], np.nan)
    return _screen_errors(KINDS.index(kind), y, NV, MV, li, g, mi)
