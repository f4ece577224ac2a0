"""SciPy's 2-point Jacobian with its steps evaluated in one call (shared by the search's fits and
the simulator calibrations)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["BatchedJacobian"]

_RSTEP = np.finfo(np.float64).eps ** 0.5  # SciPy's relative 2-point step for float64


class BatchedJacobian:
    """SciPy's default 2-point Jacobian of ``least_squares``, its steps evaluated in one call.

    ``fun(x)`` is the residual at one vector; ``batch(X)`` the residuals at every row of ``X``
    [B, p] -> [B, n], each row with the bits of ``fun`` there. Pass ``fun=self.fun, jac=self.jac``:
    the Jacobian is built as ``scipy.optimize._numdiff`` builds it without bounds (step
    ``h = sqrt(eps) * sign(x) * max(1, |x|)``, ``dx = (x + h) - x``, column ``(f(x + dx e_i) - f(x)) / dx``,
    the same memory layout), so the fit is the one of the plain call, with one residual call per
    Jacobian instead of ``p`` and none of SciPy's per-call bookkeeping. ``f(x)`` is the residual of
    the last ``fun`` call when that was at ``x`` (it always is inside ``least_squares``).
    """

    def __init__(self, fun: Callable[[np.ndarray], np.ndarray], batch: Callable[[np.ndarray], np.ndarray]):
        self._fun, self._batch = fun, batch
        self._x: bytes | None = None
        self._f: np.ndarray | None = None

    def fun(self, x: np.ndarray) -> np.ndarray:
        f = self._fun(x)
        self._x, self._f = np.asarray(x, dtype=np.float64).tobytes(), np.array(f, dtype=np.float64)
        return f

    def jac(self, x: np.ndarray) -> np.ndarray:
        x0 = np.asarray(x, dtype=np.float64)
        if self._f is not None and x0.tobytes() == self._x:
            f0 = self._f
        else:
            f0 = np.atleast_1d(np.asarray(self._fun(x0), dtype=np.float64))
        sign = (x0 >= 0).astype(float) * 2 - 1
        h = _RSTEP * sign * np.maximum(1.0, np.abs(x0))
        p = x0.size
        X = np.repeat(x0[None, :], p, axis=0)
        X[np.arange(p), np.arange(p)] = x0 + h
        dx = (x0 + h) - x0
        JT = np.empty((p, f0.size))
        F = self._batch(X) if p > 1 else np.asarray(self._fun(X[0]))[None, :]  # one step: the plain call
        JT[...] = (np.asarray(F, dtype=np.float64) - f0) / dx[:, None]
        return np.ravel(JT) if f0.size == 1 else JT.T
