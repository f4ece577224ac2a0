"""Binomial atoms: ``x_i + c * x_j``, so that monomials can contain a power of a sum of two inputs.

Laws such as ``C * (m1 + m2)**2 / r**1.5`` (a total mass), ``K * q2**2 * (q1 + q2)**3 / r**2`` or
``(T - T0)**1.25`` (a temperature excess) are a monomial times a power of a two-input sum. Expanding
the power gives a polynomial only for small integer powers, and not at all for a power such as 1.5.
A *binomial atom* ``b = x_i + c x_j`` makes the family ``C * prod_k x_k**a_k * b**p`` an ordinary
monomial of the grammar: every family (monomial, sums, exponentials) can use it.

How ``c`` is found from the observations (no list of expected values): for a fixed ``c`` the law is
linear in logs, ``log|y| = log|C| + sum_k a_k log x_k + p log(x_i + c x_j)``, so the residual of one
least-squares solve is a function of ``c`` alone. It is scanned on a grid of both signs over six
decades (only values keeping the base positive on the observations), then refined by a bounded
scalar minimisation in ``log|c|``. The refined ``c`` and, when it lies within 2% of one, the nearest
simple number (``exponent_options``: integers, halves, thirds, ...) both become atoms, and the
search's ranking chooses between them like between any two laws.

A pair gets atoms only when the binomial fit beats the plain power law's residual by a clear factor
(:data:`GAIN`), so power laws and the other families are not crowded out.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
from scipy.optimize import minimize_scalar

from etc_fast.policies.symbolic._grammar import Atom, exponent_options
from etc_fast.policies.symbolic._units import DECISIVE_RATIO

__all__ = ["SumAtom", "binomial_atoms", "GAIN"]

#: Factor by which the binomial fit must reduce the log-space residual of the plain power law: a
#: decisive improvement, one decade (:data:`._units.DECISIVE_RATIO`).
GAIN = DECISIVE_RATIO
_GRID = np.concatenate([-np.logspace(3, -3, 61), np.logspace(-3, 3, 61)])


@dataclasses.dataclass(frozen=True)
class SumAtom(Atom):
    """``x_var + coef * x_var2`` (non-zero on the observations it was fitted on; it may change sign)."""

    # the second input and its coefficient have no "absent" value: every atom is built with them
    var2: int = dataclasses.field(kw_only=True)
    name2: str = dataclasses.field(kw_only=True)
    coef: float = dataclasses.field(kw_only=True)

    def values(self, X: np.ndarray) -> np.ndarray:
        return X[:, self.var] + self.coef * X[:, self.var2]

    def render(self, fn) -> str:
        c = self.coef
        mag = abs(c)
        term = self.name2 if mag == 1.0 else f"{mag:.12g}*{self.name2}"
        return f"({self.name} {'-' if c < 0 else '+'} {term})"

    @property
    def cost(self) -> float:
        return 2.0 if abs(self.coef) in (1.0, 2.0, 0.5) else 3.0

    @property
    def ident(self) -> tuple:
        return (self.var, self.kind, self.degrees, self.var2, round(self.coef, 12))


def _residual(L: np.ndarray, t: np.ndarray, xi: np.ndarray, xj: np.ndarray, c: float) -> float:
    b = np.abs(xi + c * xj)
    if not np.all(b > 0):
        return math.inf
    B = np.column_stack([np.ones(t.size), L, np.log(b)])
    beta, *_ = np.linalg.lstsq(B, t, rcond=None)
    r = t - B @ beta
    return float(r @ r)


def binomial_atoms(X: np.ndarray, y: np.ndarray, raw: Sequence[Atom], max_pairs: int = 3) -> list[SumAtom]:
    """Binomial atoms worth trying for observations ``X`` (inputs), ``y`` (outputs).

    Args:
        X: float64[n, d] inputs with a finite output.
        y: float64[n] finite outputs.
        raw: The plain input atoms (positive inputs).
        max_pairs: Most input pairs returned (best residual first).

    Returns:
        Atoms (refined and snapped ``c``) of the pairs whose fit beats the power law by :data:`GAIN`.
    """
    nz = y != 0  # a law through zero (a base that vanishes) has exact zeros; they say nothing in logs
    X, y = X[nz], y[nz]
    n = y.size
    if len(raw) < 2 or n < len(raw) + 4 or not (np.all(y > 0) or np.all(y < 0)):
        return []
    A = np.column_stack([a.values(X) for a in raw])
    if not np.all(A > 0):
        return []
    L = np.log(A)
    t = np.log(np.abs(y))
    B0 = np.column_stack([np.ones(n), L])
    beta, *_ = np.linalg.lstsq(B0, t, rcond=None)
    r0 = t - B0 @ beta
    base = float(r0 @ r0)
    found = []
    for i in range(len(raw)):
        for j in range(i + 1, len(raw)):
            xi, xj = A[:, i], A[:, j]
            res = np.array([_residual(L, t, xi, xj, c) for c in _GRID])
            k = int(np.argmin(res))
            if not np.isfinite(res[k]):
                continue
            sign = 1.0 if _GRID[k] > 0 else -1.0
            lo = math.log(abs(_GRID[max(k - 1, 0)]))
            hi = math.log(abs(_GRID[min(k + 1, len(_GRID) - 1)]))
            lo, hi = min(lo, hi), max(lo, hi)
            if hi - lo < 1e-12:
                c_best, r_best = float(_GRID[k]), float(res[k])
            else:
                opt = minimize_scalar(lambda u, xi=xi, xj=xj, sign=sign: min(_residual(L, t, xi, xj, sign * math.exp(u)), 1e300),
                                      bounds=(lo, hi),
                                      method="bounded", options={"xatol": 1e-12, "maxiter": 200})
                c_best, r_best = (sign * math.exp(opt.x), float(opt.fun)) if opt.fun <= res[k] else (float(_GRID[k]), float(res[k]))
            if not r_best * GAIN < base:
                continue
            found.append((r_best, i, j, c_best))
    found.sort()
    atoms: list[SumAtom] = []
    for _r, i, j, c in found[:max_pairs]:
        coefs = [c]
        for s in exponent_options(abs(c), 0.02 * abs(c), 2):
            s = math.copysign(s, c)
            if s != 0.0 and abs(s - c) <= 0.02 * abs(c) and s not in coefs:
                coefs.insert(0, s)
                break
        for cc in coefs:
            if np.all(A[:, i] + cc * A[:, j] != 0):
                atoms.append(SumAtom(raw[i].var, raw[i].name, "sum", False, var2=raw[j].var, name2=raw[j].name,
                                     coef=float(cc)))
    return atoms
