"""Damped Gauss-Newton (Levenberg-Marquardt) steps of many small least-squares problems at once.

For problem ``b`` with Jacobian ``J_b`` (n x p), residual ``r_b`` (n) and damping ``lam_b``, the
step solves

    (J_b^T J_b + lam_b * diag(J_b^T J_b)) delta_b = -J_b^T r_b

(Marquardt's scaling: the damping is relative to each parameter's own curvature; a zero diagonal
entry is floored at ``1e-300`` so the system stays definite). It is solved by a Cholesky
factorisation of the p x p matrix; a problem whose matrix is not positive definite, or whose
inputs are not finite, gets ``ok = False`` and a zero step. The symbolic search's batched
optimizer (``etc_fast.policies.symbolic._lsq.batched_lm``) calls it once per iteration for all of
its problems, where ``scipy.optimize.least_squares`` would run one MINPACK call per problem.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import as_float_array
from kernels._jit import JIT
from kernels._shared import _cholesky

__all__ = ["lm_steps"]


@njit(**JIT)
def _lm_steps(J, r, lam):  # pragma: no cover - compiled
    B, n, p = J.shape
    delta = np.zeros((B, p))
    ok = np.zeros(B, dtype=np.bool_)
    A = np.empty((p, p))
    g = np.empty(p)
    for b in range(B):
        finite = np.isfinite(lam[b])
        for i in range(p):
            s = 0.0
            for k in range(n):
                s += J[b, k, i] * r[b, k]
            g[i] = s
            finite = finite and np.isfinite(s)
            for j in range(i + 1):
                s = 0.0
                for k in range(n):
                    s += J[b, k, i] * J[b, k, j]
                A[i, j] = s
                finite = finite and np.isfinite(s)
        if not finite:
            continue
        for i in range(p):
            A[i, i] += lam[b] * max(A[i, i], 1e-300)
        # Cholesky A = L L^T in the lower triangle
        if not _cholesky(A):
            continue
        # L z = -g, then L^T delta = z
        for i in range(p):
            t = -g[i]
            for k in range(i):
                t -= A[i, k] * delta[b, k]
            delta[b, i] = t / A[i, i]
        for i in range(p - 1, -1, -1):
            t = delta[b, i]
            for k in range(i + 1, p):
                t -= A[k, i] * delta[b, k]
            delta[b, i] = t / A[i, i]
        ok[b] = True
    return delta, ok


def lm_steps(J: np.ndarray, r: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Levenberg-Marquardt steps of ``B`` problems (module docstring).

    Args:
        J: float64[B, n, p] Jacobians.
        r: float64[B, n] residuals.
        lam: float64[B] dampings (non-negative).

    Returns:
        ``(delta, ok)``: float64[B, p] steps (zero where not ``ok``) and bool[B], whether the damped
        system was finite and positive definite.
    """
    J = as_float_array(J, "J", 3)
    r = as_float_array(r, "r", 2)
    lam = as_float_array(lam, "lam", 1)
    if r.shape != J.shape[:2] or lam.shape != J.shape[:1]:
        raise ValueError(f"lm_steps: J must be (B, n, p), r (B, n) and lam (B,), got {J.shape}, {r.shape}, {lam.shape}")
    return _lm_steps(J, r, lam)
