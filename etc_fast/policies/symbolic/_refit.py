"""The agent's own refit of a hypothesis to its observations (it shares no code with any judge).

A draft's non-exponent constants, plus a global scale and offset, are refitted by least squares with
relative weights; the agent uses the result only to compare a kept draft with a new search result.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

__all__ = ["refit_program"]


def _scale(y: np.ndarray) -> np.ndarray:
    ay = np.abs(y)
    return np.maximum(ay, 1e-300 + 1e-12 * (float(ay.max()) if ay.size else 0.0))


def _affine(pred: np.ndarray, y: np.ndarray, w: np.ndarray) -> tuple[float, float]:
    """Weighted least squares ``y ~ a * pred + b`` (relative weights ``w``)."""
    ok = np.isfinite(pred)
    if ok.sum() < 1:
        return 1.0, 0.0
    A = np.column_stack([pred[ok] * w[ok], w[ok]])
    sol, *_ = np.linalg.lstsq(A, y[ok] * w[ok], rcond=None)
    a, b = (float(sol[0]), float(sol[1])) if np.all(np.isfinite(sol)) else (1.0, 0.0)
    return a, b


def refit_program(program, X: np.ndarray, y: np.ndarray, *, max_nfev: int = 200, return_details: bool = False):
    """Refit a program's non-exponent constants plus a global scale and offset to ``(X, y)``.

    Args:
        program: An :class:`etc_fast.expr.Program`.
        X: float64[n, d] points (only points with finite ``y`` should be passed).
        y: float64[n] targets.
        max_nfev: Bound on function evaluations of the nonlinear refit.
        return_details: Also return ``(consts, a, b)``.

    Returns:
        float64[n] refitted predictions (and the details when asked).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    c0 = np.asarray(program.consts, dtype=np.float64)
    free = np.flatnonzero(~np.asarray(program.const_is_exponent, dtype=bool))
    w = 1.0 / _scale(y)
    base = program.evaluate(X)
    a0, b0 = _affine(base, y, w)
    # constants move multiplicatively around their submitted value (additively when it is zero)
    ref = np.where(c0[free] != 0.0, np.abs(c0[free]), 1.0)

    def consts_of(theta):
        c = c0.copy()
        c[free] = np.where(c0[free] != 0.0, c0[free] * (1.0 + theta), theta)
        return c

    def predict(theta):
        prog = program.with_consts(consts_of(theta[:-2])) if free.size else program
        return theta[-2] * prog.evaluate(X) + theta[-1]

    def resid(theta):
        r = (predict(theta) - y) * w
        return np.where(np.isfinite(r), r, 1e6)

    theta0 = np.concatenate([np.zeros(free.size), [a0, b0]])
    best_theta, best_cost = theta0, float(np.sum(resid(theta0) ** 2))
    if y.size >= theta0.size and best_cost > 0:
        try:
            with np.errstate(all="ignore"):
                sol = least_squares(resid, theta0, method="trf", x_scale="jac", max_nfev=max_nfev,
                                    ftol=1e-15, xtol=1e-15, gtol=1e-15)
            if np.all(np.isfinite(sol.x)) and 2 * sol.cost < best_cost:
                best_theta = sol.x
                # the affine part is linear: polish it exactly for the refitted constants
                prog = program.with_consts(consts_of(best_theta[:-2])) if free.size else program
                a, b = _affine(prog.evaluate(X), y, w)
                cand = np.concatenate([best_theta[:-2], [a, b]])
                if np.sum(resid(cand) ** 2) <= np.sum(resid(best_theta) ** 2):
                    best_theta = cand
        except (ValueError, np.linalg.LinAlgError):
            pass
    with np.errstate(all="ignore"):
        pred = predict(best_theta)
    if return_details:
        return pred, (consts_of(best_theta[:-2]), float(best_theta[-2]), float(best_theta[-1]), c0, free)
    return pred


