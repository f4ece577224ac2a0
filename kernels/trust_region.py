"""Trust-region steps of many small least-squares problems, each from one SVD of its Jacobian.

For problem ``b`` with residuals ``f`` (m), Jacobian ``J = U diag(s) V^T`` (its ``n_b`` free
columns; ``s`` descending) and radius ``Delta``, the step ``p`` minimises ``|J p + f|`` subject to
``|p| <= Delta`` (More's method, as MINPACK and SciPy's ``trf`` solve it):

* where ``J`` has full column rank (``s[n-1] > eps m s[0]``) and the Gauss-Newton step
  ``p = -V (U^T f / s)`` lies inside the region, that step, with ``alpha = 0``;
* otherwise ``p(alpha) = -V (s U^T f / (s^2 + alpha))`` with ``alpha`` the root of
  ``phi(alpha) = |p(alpha)| - Delta``, found by safeguarded Newton iterations (at most 10, until
  ``|phi| < 0.01 Delta``, started from the problem's last ``alpha``), and ``p`` scaled onto the
  region's boundary.

Inputs per problem: ``uf = U^T f`` and ``s`` (float64[B, k], the first ``n_b`` entries used),
``V`` (float64[B, k, k], columns the right singular vectors), ``Delta`` and the last ``alpha``
(float64[B]). The lockstep calibration (``etc_fast.systems._lm``) calls it once per round for
every fit that takes a trial step; a problem with ``n_b = 0`` gets a zero step.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import as_float_array
from kernels._jit import JIT, JitOptions

__all__ = ["trust_region_steps"]

_EPS = np.finfo(np.float64).eps
#: NumPy's error model: a division by zero gives inf or NaN, as in the twin, instead of raising.
_JIT_NP: JitOptions = {**JIT, "error_model": "numpy"}


@njit(**_JIT_NP)
def _phi(suf, s, n, alpha, Delta):  # pragma: no cover - compiled
    """``(|p(alpha)| - Delta, its derivative)`` over the first ``n`` components."""
    pn = 0.0
    d = 0.0
    for j in range(n):
        den = s[j] * s[j] + alpha
        q = suf[j] / den
        pn += q * q
        d += suf[j] * suf[j] / (den * den * den)
    pn = np.sqrt(pn)
    return pn - Delta, -d / pn


@njit(**_JIT_NP)
def _minus_v_times(Vb, w, nb, out):  # pragma: no cover - compiled
    """``out = -Vb[:, :nb] @ w[:nb]``; returns its norm."""
    pn = 0.0
    for i in range(Vb.shape[0]):
        acc = 0.0
        for j in range(nb):
            acc += Vb[i, j] * w[j]
        out[i] = -acc
        pn += acc * acc
    return np.sqrt(pn)


@njit(**_JIT_NP)
def _steps(n, m, uf, s, V, Delta, alpha0):  # pragma: no cover - compiled
    B, k = s.shape
    step = np.zeros((B, k))
    alpha_out = alpha0.copy()
    suf = np.empty(k)
    w = np.empty(k)
    for b in range(B):
        nb = n[b]
        if nb == 0:
            continue
        D = Delta[b]
        for j in range(nb):
            suf[j] = s[b, j] * uf[b, j]
        full_rank = m >= nb and s[b, nb - 1] > _EPS * m * s[b, 0]
        if full_rank:
            for j in range(nb):
                w[j] = uf[b, j] / s[b, j]
            if _minus_v_times(V[b], w, nb, step[b]) <= D:
                alpha_out[b] = 0.0
                continue
        sn = 0.0
        for j in range(nb):
            sn += suf[j] * suf[j]
        upper = np.sqrt(sn) / D
        lower = 0.0
        if full_rank:
            phi, prime = _phi(suf, s[b], nb, 0.0, D)
            lower = -phi / prime
        alpha = alpha0[b]
        if not full_rank and alpha == 0.0:
            alpha = max(0.001 * upper, np.sqrt(lower * upper))
        for _ in range(10):
            if alpha < lower or alpha > upper:
                alpha = max(0.001 * upper, np.sqrt(lower * upper))
            phi, prime = _phi(suf, s[b], nb, alpha, D)
            if phi < 0.0:
                upper = alpha
            ratio = phi / prime
            lower = max(lower, alpha - ratio)
            alpha -= (phi + D) * ratio / D
            if abs(phi) < 0.01 * D:
                break
        for j in range(nb):
            w[j] = suf[j] / (s[b, j] * s[b, j] + alpha)
        scale = D / _minus_v_times(V[b], w, nb, step[b])
        for i in range(k):
            step[b, i] *= scale
        alpha_out[b] = alpha
    return step, alpha_out


def trust_region_steps(n, m, uf, s, V, Delta, alpha):
    """The trust-region step of every problem (module docstring).

    Args:
        n: int64[B] free parameters of each problem (its first ``n`` singular values are used).
        m: Residuals per problem.
        uf, s: float64[B, k] ``U^T f`` and the singular values, descending.
        V: float64[B, k, k] the right singular vectors (columns).
        Delta: float64[B] trust-region radii (positive).
        alpha: float64[B] each problem's last Levenberg-Marquardt parameter (0 at first).

    Returns:
        ``(step, alpha)``: float64[B, k] the steps and float64[B] the parameters found (0 for a
        Gauss-Newton step).

    Raises:
        ValueError: on inconsistent shapes or ``n`` outside ``[0, k]``.
    """
    uf, s = as_float_array(uf, "uf", 2), as_float_array(s, "s", 2)
    V = as_float_array(V, "V", 3)
    Delta, alpha = as_float_array(Delta, "Delta", 1), as_float_array(alpha, "alpha", 1)
    n = np.ascontiguousarray(n, dtype=np.int64)
    B, k = s.shape
    if uf.shape != (B, k) or V.shape != (B, k, k) or Delta.shape != (B,) or alpha.shape != (B,) or n.shape != (B,):
        raise ValueError(f"uf {uf.shape}, V {V.shape}, Delta {Delta.shape}, alpha {alpha.shape} and n {n.shape} "
                         f"must match s {s.shape} (B={B} problems, k={k})")
    if B and (n.min() < 0 or n.max() > k):
        raise ValueError(f"n must lie in [0, {k}], got {n.min()}..{n.max()}")
    return _steps(n, int(m), uf, s, V, Delta, alpha)
