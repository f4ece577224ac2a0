"""Least-squares helpers shared by the families of the symbolic search."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import least_squares

from etc_fast._jacobian import _RSTEP, BatchedJacobian
from etc_fast.policies.symbolic._forms import Form, predict
from kernels.lm import lm_steps

__all__ = ["project_out", "error_scale", "refit_relative", "BatchedJacobian", "batched_lm"]

def batched_lm(resid: Callable[[np.ndarray, np.ndarray], np.ndarray], X0: np.ndarray, max_nfev: int,
               ftol: float = 1e-14) -> tuple[np.ndarray, np.ndarray]:
    """Levenberg-Marquardt on ``B`` independent problems at once, every residual call batched.

    ``resid(X, which)`` returns the residuals [len(X), n] of problem ``which[i]`` at parameters
    ``X[i]`` (row by row what a call on that row alone would give). Each iteration takes one
    damped Gauss-Newton step per active problem (:func:`kernels.lm.lm_steps`, Marquardt's scaling,
    damping from 1e-3, divided by 3 after a step that lowers the cost, multiplied by 10 after one
    that does not), all in one residual call; the Jacobian (SciPy's 2-point steps,
    ``h = sqrt(eps) * sign(x) * max(1, |x|)``) is rebuilt after each accepted step, again in one
    call for all problems. A problem stops after ``max_nfev`` trial evaluations (the start counts
    one, as in MINPACK), when an accepted step lowers its cost by at most ``ftol`` relative, when
    its cost is 0, or when the damping passes 1e16. Every bound is a count or a test on the
    values, so the result depends only on the inputs.

    Returns:
        ``(X, R)``: the parameters [B, p] and their residuals [B, n].
    """
    X = np.array(X0, dtype=np.float64, copy=True)
    B, p = X.shape
    every = np.arange(B)
    R = np.asarray(resid(X, every), dtype=np.float64)
    cost = np.einsum("bn,bn->b", R, R)
    lam = np.full(B, 1e-3)
    nfev = np.ones(B, dtype=np.int64)
    active = np.isfinite(cost) & (cost > 0) & (nfev < max_nfev)
    need_jac = np.ones(B, dtype=bool)
    J = np.zeros((B, R.shape[1], p))
    while active.any():
        jdx = np.flatnonzero(active & need_jac)
        if jdx.size:
            x0 = X[jdx]
            h = _RSTEP * np.where(x0 >= 0, 1.0, -1.0) * np.maximum(1.0, np.abs(x0))
            dx = (x0 + h) - x0
            steps = np.repeat(x0[:, None, :], p, axis=1)  # [Bj, p (stepped column), p]
            steps[:, np.arange(p), np.arange(p)] += dx
            F = np.asarray(resid(steps.reshape(-1, p), np.repeat(jdx, p)), dtype=np.float64).reshape(jdx.size, p, -1)
            J[jdx] = np.swapaxes((F - R[jdx][:, None, :]) / dx[:, :, None], 1, 2)
            need_jac[jdx] = False
        idx = np.flatnonzero(active)
        delta, ok = lm_steps(J[idx], R[idx], lam[idx])
        Xn = X[idx] + delta
        Rn = np.asarray(resid(Xn, idx), dtype=np.float64)
        cn = np.einsum("bn,bn->b", Rn, Rn)
        nfev[idx] += 1
        better = ok & np.isfinite(cn) & (cn < cost[idx])
        acc, rej = idx[better], idx[~better]
        converged = (cost[acc] - cn[better]) <= ftol * cost[acc]
        X[acc], R[acc], cost[acc] = Xn[better], Rn[better], cn[better]
        lam[acc] = np.maximum(lam[acc] / 3.0, 1e-12)
        need_jac[acc] = True
        lam[rej] *= 10.0
        active[acc[converged]] = False
        active &= (nfev < max_nfev) & (cost > 0) & (lam <= 1e16)
    return X, R


def project_out(U: np.ndarray, t: np.ndarray, base: tuple[int, ...]):
    """``U`` and ``t`` with the span of the columns ``base`` projected out.

    Returns:
        ``(Ut, tr, nn, valid)``: the projected columns and target, the columns' norms, and which
        columns still carry something (norm above 1e-6, not in ``base``).
    """
    Q, _ = np.linalg.qr(U[:, list(base)])
    Ut = U - Q @ (Q.T @ U)
    tr = t - Q @ (Q.T @ t)
    nn = np.linalg.norm(Ut, axis=0)
    valid = nn > 1e-6
    valid[list(base)] = False
    return Ut, tr, nn, valid


def error_scale(y: np.ndarray, fraction: float = 1e-2) -> np.ndarray:
    """Per-point scale of relative errors: ``|y|``, floored where the outputs change sign.

    Outputs of one sign keep the plain relative error (floored only against underflow). Where the
    outputs take both signs the error at a point is measured against
    ``max(|y|, fraction * median|y|)``, so a law that crosses zero is not judged by its few points
    nearest the crossing (the search's fits weight points with ``fraction = 1``, its ranking with
    ``1e-2``; ``fraction = 0`` is the plain relative error everywhere).
    """
    ay = np.abs(y)
    floor = 1e-12 * max(float(np.max(ay)) if y.size else 1.0, 1e-300)
    if y.size and np.any(y > 0) and np.any(y < 0):
        floor = max(floor, fraction * float(np.median(ay)))
    return np.maximum(ay, floor)


def refit_relative(form: Form, A: np.ndarray, y: np.ndarray, scale: np.ndarray, start: np.ndarray,
                   fixed: dict[int, float], max_nfev: int) -> tuple[np.ndarray, bool]:
    """Constants of ``form`` minimising the squared errors relative to ``scale``, ``fixed`` held.

    Exponents stay as they are; the free constants start at ``start``.

    Returns:
        ``(constants, refitted)``: ``refitted`` is false, and the constants are ``start`` with the
        fixed values set, when nothing is free, the data are too few, or the optimizer fails.
    """
    p = start.copy()
    for i, v in fixed.items():
        p[i] = v
    free = [i for i in range(p.size) if i not in fixed]
    if not free or y.size < len(free):
        return p, False

    def resid(theta):  # one vector of free constants, or a batch of them (the same bits per row)
        if theta.ndim == 2:
            q = np.repeat(p[None, :], theta.shape[0], axis=0)
            q[:, free] = theta
        else:
            q = p.copy()
            q[free] = theta
        with np.errstate(all="ignore"):
            r = (predict(form, A, q) - y) / scale
        return np.where(np.isfinite(r), r, 1e3)

    fd = BatchedJacobian(resid, resid)
    try:
        sol = least_squares(fd.fun, p[free], jac=fd.jac, max_nfev=max_nfev, x_scale="jac")
    except Exception:  # noqa: BLE001 - a failed refit keeps the starting constants
        return p, False
    p[free] = sol.x
    return p, True


def _best_third_columns(U: np.ndarray, t: np.ndarray, base: tuple[int, ...], keep: int = 2) -> dict[tuple[int, ...], float]:
    """The ``keep`` columns of ``U`` that most reduce the least-squares residual of ``t`` when added
    to the columns ``base``: ``{sorted(base + (column,)): residual sum of squares}``."""
    Ut, tr, nn, valid = project_out(U, t, base)
    out: dict[tuple[int, ...], float] = {}
    if not valid.any():
        return out
    gain = np.full(U.shape[1], -np.inf)
    gain[valid] = (Ut[:, valid].T @ tr / nn[valid]) ** 2
    for c in np.argsort(-gain, kind="stable")[:keep]:
        if np.isfinite(gain[c]):
            out[tuple(sorted((*base, int(c))))] = float(tr @ tr - gain[c])
    return out
