"""NumPy twin of :func:`kernels.trust_region.trust_region_steps`: the same More steps, every
problem's Newton iterations vectorised over the batch (masks instead of per-problem branches)."""

from __future__ import annotations

import numpy as np

_EPS = np.finfo(np.float64).eps


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return np.sum(a * b, axis=-1)


def trust_region_steps_ref(n: np.ndarray, m: int, uf: np.ndarray, s: np.ndarray, V: np.ndarray, Delta: np.ndarray,
                           alpha0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SciPy's ``solve_lsq_trust_region`` (More's method on one SVD, ``rtol=0.01``, 10 iterations)
    for many problems: ``n`` free parameters each, their singular values first in ``s``; a problem
    with ``n = 0`` gets a zero step and keeps its ``alpha``."""
    M, k = s.shape
    live = np.arange(k)[None, :] < n[:, None]
    s = np.where(live, s, 0.0)
    uf = np.where(live, uf, 0.0)
    suf = s * uf
    s_last = s[np.arange(M), np.maximum(n - 1, 0)]
    full_rank = (m >= n) & (s_last > _EPS * m * s[:, 0])
    with np.errstate(all="ignore"):
        gn = -_rowdot(V, np.where(live & full_rank[:, None], uf / np.where(s > 0, s, 1.0), 0.0)[:, None, :])
    gn_ok = full_rank & (np.linalg.norm(gn, axis=1) <= Delta)

    def phi_and_derivative(al: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        denom = s**2 + al[:, None]
        with np.errstate(all="ignore"):
            p_norm = np.linalg.norm(np.where(live, suf / denom, 0.0), axis=1)
            prime = -np.sum(np.where(live, suf**2 / denom**3, 0.0), axis=1) / p_norm
        return p_norm - Delta, prime

    with np.errstate(all="ignore"):
        upper = np.linalg.norm(suf, axis=1) / Delta
        phi0, prime0 = phi_and_derivative(np.zeros(M))
        lower = np.where(full_rank, -phi0 / prime0, 0.0)
        guess = np.maximum(0.001 * upper, np.sqrt(lower * upper))
        al = np.where((alpha0 == 0) & ~full_rank, guess, alpha0)
        going = ~gn_ok
        for _ in range(10):
            if not going.any():
                break
            out = (al < lower) | (al > upper)
            al = np.where(going & out, np.maximum(0.001 * upper, np.sqrt(lower * upper)), al)
            phi, prime = phi_and_derivative(al)
            upper = np.where(going & (phi < 0), al, upper)
            ratio = phi / prime
            lower = np.where(going, np.maximum(lower, al - ratio), lower)
            al = np.where(going, al - (phi + Delta) * ratio / Delta, al)
            going &= ~(np.abs(phi) < 0.01 * Delta)
        p = -_rowdot(V, np.where(live, suf / (s**2 + al[:, None]), 0.0)[:, None, :])
        p *= (Delta / np.linalg.norm(p, axis=1))[:, None]
    none = n == 0
    step = np.where(none[:, None], 0.0, np.where(gn_ok[:, None], gn, p))
    return step, np.where(none, alpha0, np.where(gn_ok, 0.0, al))
