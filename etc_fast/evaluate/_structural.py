"""Structural judge: is the submission the hidden law up to its constants?

The submission is parsed into the hypothesis language (:func:`etc_fast.expr.parse`; nothing is
executed). Its numeric constants that are not exponents, plus a global scale ``a`` and offset ``b``,
are refitted by least squares against the noise-free truth on the task's evaluation grid:
``a * f(x; c) + b``. Exponents stay as submitted. The submission is credited when, after the refit,

1. the prediction is finite at every grid point where the truth is finite,
2. the relative error ``|pred - y| / |y|`` is at most ``rel_tol`` at every such point, and
3. the residual RMS is at most ``explained_tol`` times the spread (standard deviation) of the truth,
   so a law whose output barely varies over the grid (e.g. a value pinned near 0.5) is still told
   apart from a constant or a wrong dependency, and
4. no submitted non-zero constant had to be refitted to zero (that would be a term the law lacks).

So constant-rescaled and algebraically rearranged forms are credited, while a changed exponent
(1.5 vs 2, 4 vs 4.03), a missing or extra dependency or a wrong function is not. The refit is
deterministic (fixed start, bounded iterations) and offline.
"""

from __future__ import annotations

import numpy as np
from scipy.optimize import least_squares

from etc_fast.evaluate._judge import Verdict
from etc_fast.tasks._base import Task

__all__ = ["StructuralJudge", "refit_program"]


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


class StructuralJudge:
    """Credits a submission that matches the truth after refitting its non-exponent constants.

    Args:
        rel_tol: Largest relative error allowed at any finite-target grid point after the refit.
        explained_tol: Largest residual RMS allowed, as a fraction of the truth's standard deviation.
        grid: Optional float64[n, d] points to judge on (default: the task's evaluation grid).
        max_nfev: Bound on the refit's function evaluations.
    """

    name = "structural"

    def __init__(self, rel_tol: float = 1e-6, explained_tol: float = 1e-3, grid: np.ndarray | None = None,
                 max_nfev: int = 200) -> None:
        if not (rel_tol > 0 and explained_tol > 0):
            raise ValueError(f"tolerances must be positive, got rel_tol={rel_tol!r}, explained_tol={explained_tol!r}")
        self.rel_tol = float(rel_tol)
        self.explained_tol = float(explained_tol)
        self.grid = None if grid is None else np.ascontiguousarray(grid, dtype=np.float64)
        self.max_nfev = int(max_nfev)

    def judge(self, source: str, task: Task) -> Verdict:
        try:
            return self._judge(source, task)
        except Exception as exc:  # noqa: BLE001 - a judge never raises for a submission
            return Verdict(self.name, False, f"structural judge failed: {type(exc).__name__}: {exc}")

    def _judge(self, source: str, task: Task) -> Verdict:
        from etc_fast.expr import ExprError, parse
        from etc_fast.sampling import evaluation_grid

        if not isinstance(source, str) or not source.strip():
            return Verdict(self.name, False, "no submission to judge")
        try:
            program = parse(source, list(task.variable_names))
        except ExprError as exc:
            where = f" ({exc.position})" if exc.position else ""
            return Verdict(self.name, False, f"not in the hypothesis language: {exc.message}{where}")
        X = self.grid if self.grid is not None else evaluation_grid(task)
        y = task.truth(X)
        fin = np.isfinite(y)
        n_fin = int(fin.sum())
        if n_fin == 0:
            return Verdict(self.name, False, "the truth is not finite at any grid point")
        Xf, yf = X[fin], y[fin]
        pred, (consts, a, b, c0, free) = refit_program(program, Xf, yf, max_nfev=self.max_nfev, return_details=True)
        finite = np.isfinite(pred)
        if not finite.all():
            return Verdict(self.name, False, f"prediction not finite at {int((~finite).sum())}/{n_fin} finite-target points after refit")
        rel = np.abs(pred - yf) / _scale(yf)
        bad = int((rel > self.rel_tol).sum())
        worst = float(rel.max())
        if bad:
            return Verdict(self.name, False, f"max relative error {worst:.1e} (> {self.rel_tol:.0e}) at {bad}/{n_fin} points after refit")
        sd = float(np.std(yf))
        rms = float(np.sqrt(np.mean((pred - yf) ** 2)))
        if sd > 0 and rms > self.explained_tol * sd:
            return Verdict(self.name, False, f"residual RMS {rms:.2e} is {rms / sd:.1e} of the truth's spread "
                                              f"(> {self.explained_tol:.0e}) after refit: the variation is not explained")
        zeroed = [i for i in free if c0[i] != 0.0 and abs(consts[i]) <= 1e-8 * abs(c0[i])]
        if zeroed or a == 0.0:
            return Verdict(self.name, False, "a submitted term vanishes after refit (its constant goes to zero): the law lacks it")
        return Verdict(self.name, True, f"matches after refit: max relative error {worst:.1e} at {n_fin} points "
                                         f"({free.size} constant(s) refitted, exponents fixed)")
