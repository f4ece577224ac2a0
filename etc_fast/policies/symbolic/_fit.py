"""The agent's own constant refit of a law it holds (its draft), independent of any judge."""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

from etc_fast.policies.symbolic._lsq import error_scale

__all__ = ["refit_constants"]


def refit_constants(program, X: np.ndarray, y: np.ndarray, *, max_nfev: int = 100, at: np.ndarray | None = None) -> np.ndarray:
    """Predictions of ``program`` after refitting its non-exponent constants to ``(X, y)``.

    Least squares on relative errors (``(pred - y) / |y|``), started at the program's constants and
    bounded by ``max_nfev`` residual evaluations; exponents stay as written. Undefined predictions
    count as a large residual.

    Args:
        program: An :class:`etc_fast.expr.Program`.
        X: float64[n, d] inputs (rows with a finite ``y``).
        y: float64[n] outputs.
        max_nfev: Most residual evaluations.
        at: float64[m, d] inputs to predict at (``None``: ``X``).

    Returns:
        float64[n] (or [m]) predictions with the refitted constants (the original ones when nothing
        is free or the fit fails).
    """
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    c0 = np.asarray(program.consts, dtype=np.float64)
    free = np.flatnonzero(~np.asarray(program.const_is_exponent, dtype=bool))
    scale = error_scale(y, 0.0)

    def predict(theta: np.ndarray, where: np.ndarray = X) -> np.ndarray:
        c = c0.copy()
        c[free] = theta
        with np.errstate(all="ignore"):
            return program.with_consts(c).evaluate(where)

    out = X if at is None else np.ascontiguousarray(at, dtype=np.float64)

    def resid(theta: np.ndarray) -> np.ndarray:
        r = (predict(theta) - y) / scale
        return np.where(np.isfinite(r), r, 1e3)

    if free.size == 0 or y.size < free.size:
        return predict(c0[free], out)
    try:
        sol = least_squares(resid, c0[free], max_nfev=max_nfev, x_scale="jac", ftol=1e-14, xtol=1e-14, gtol=1e-14)
    except Exception:  # noqa: BLE001 - a failed refit keeps the written constants
        return predict(c0[free], out)
    return predict(sol.x, out)
