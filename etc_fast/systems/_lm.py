"""Many calibrations of one program at once: a Levenberg-Marquardt fit in lockstep.

:func:`calibrate` fits one hypothesis's constants through the simulator with SciPy's trust-region
solver, a forward-model call per step. A scan refits dozens of forms that differ only in which of
one program's constants are free (an exponent fixed at 0 leaves its input out), and there each
forward-model call simulates a handful of programs while its fixed cost (the Python around the
model, the kernel's launch) is most of the time. :func:`calibrate_many` runs all those fits
together: every iteration simulates every active fit's Jacobian steps in one call and every trial
step in another, so the cost of a call is shared by all the fits.

It fits what :func:`calibrate` fits (the same residuals: relative to each channel's typical
magnitude plus the value itself, a non-finite one counted as 1e3; the free constants in log
magnitude with their signs kept; the common log shift scanned first and the fit refined from the
two best shifts, the better result kept), with its own solver:

* the Jacobian by forward differences, SciPy's step (``sqrt(eps) max(1, |x|)``);
* a Levenberg step ``(J^T J + mu I) d = -J^T r``, ``mu`` started at ``1e-3 max diag(J^T J)`` and
  updated by the gain ratio (Nielsen: shrunk by ``max(1/3, 1 - (2 rho - 1)^3)`` after a step that
  lowered the cost, doubled-and-growing after one that did not);
* a fit stops when a step lowers the cost by less than ``FTOL`` of it, the step is below ``XTOL``
  of the parameters, the gradient vanishes, or it has used ``max_nfev`` residual evaluations
  (trial steps, as SciPy counts them).

Its minima are not SciPy's bit for bit; every bound is a count, so the result depends only on the
inputs. tests/systems/test_lm.py holds it against :func:`calibrate` on made-up records.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from etc_fast._median import nanmedian
from etc_fast.expr import Program
from etc_fast.systems._forward import FamilyPacker, controls_matrix, predict
from etc_fast.systems._quiet import quiet
from etc_fast.systems._spec import spec

__all__ = ["FTOL", "XTOL", "calibrate_many"]

#: A fit stops when an accepted step lowers its cost by at most this fraction.
FTOL = 1e-8
#: ... or when the step is at most this fraction of the parameters' norm.
XTOL = 1e-8
#: ... or when the gradient's largest entry is at most this.
GTOL = 1e-8
_EPS = np.finfo(np.float64).eps
_RSTEP = _EPS ** 0.5
_SHIFTS = np.arange(-30.0, 31.0, 3.0)


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sum(a * b)`` over the last axis, each row summed on its own (a contiguous row, NumPy's
    pairwise sum), so a fit's numbers do not depend on how many fits share the batch."""
    return np.sum(np.ascontiguousarray(a * b), axis=-1)


class _Rows:
    """Residual rows of a program at many constant tables, one forward-model call per batch."""

    def __init__(self, program: Program, module: str, system: str, requests: Sequence[Mapping[str, object]],
                 observed: np.ndarray) -> None:
        self.module, self.system = module, system
        self.C = controls_matrix(spec(module, system), requests)
        obs = np.asarray(observed, dtype=np.float64)
        self.mask = np.isfinite(obs)
        with np.errstate(all="ignore"):
            typical = nanmedian(np.where(self.mask, np.abs(obs), np.nan), (0, 2))
        typical = np.where(np.isfinite(typical) & (typical > 0), typical, 1.0)
        self.den = np.broadcast_to(np.abs(obs) + 1e-3 * typical, obs.shape)[self.mask]
        self.obs = obs[self.mask]
        self.family = FamilyPacker(program)
        self.m = int(self.mask.sum())

    def __call__(self, consts: np.ndarray) -> np.ndarray:
        """float64[K, m]: the residuals of each row of ``consts`` (callers hold ``quiet()``)."""
        if not len(consts):
            return np.empty((0, self.m))
        sims = predict(self.module, self.system, self.family(consts), self.C)
        r = (sims.reshape(len(consts), -1)[:, self.mask.reshape(-1)] - self.obs) / self.den
        return np.where(np.isfinite(r), r, 1e3)


def calibrate_many(
    program: Program,
    module: str,
    system: str,
    requests: Sequence[Mapping[str, object]],
    observed: np.ndarray,
    consts: np.ndarray,
    free: np.ndarray,
    *,
    max_nfev: int = 60,
) -> tuple[np.ndarray, np.ndarray]:
    """Fit many constant tables of ``program`` to the records at once.

    Args:
        program: One hypothesis over the law's inputs.
        module, system, requests, observed: As for :func:`calibrate`.
        consts: float64[N, n_consts] the starts, one row per fit.
        free: bool[N, n_consts] the constants each fit fits; the others keep their values. A
            free constant of value 0 starts at 1, as in :func:`calibrate`.
        max_nfev: Trial steps a fit may take.

    Returns:
        ``(fitted, rms)``: float64[N, n_consts] the fitted tables and float64[N] the records' rms
        relative misfit of each (NaN where no record is finite).
    """
    consts = np.array(consts, dtype=np.float64, ndmin=2)
    free = np.array(free, dtype=bool, ndmin=2)
    if consts.shape != free.shape or consts.shape[1] != len(program.consts):
        raise ValueError(f"consts {consts.shape} and free {free.shape} must both be [N, {len(program.consts)}]")
    rows = _Rows(program, module, system, requests, observed)
    N = len(consts)
    if rows.m == 0 or N == 0:
        return consts.copy(), np.full(N, np.nan)
    signs = np.where(consts < 0, -1.0, 1.0)
    theta0 = np.log(np.where(consts != 0, np.abs(consts), 1.0))

    def tables(theta: np.ndarray, which: np.ndarray) -> np.ndarray:
        return np.where(free[which], signs[which] * np.exp(theta), consts[which])

    with quiet():
        # the common log shift of each fit's free constants, then the two best shifts refined
        S = len(_SHIFTS)
        shifted = theta0[:, None, :] + _SHIFTS[None, :, None] * free[:, None, :]
        owner = np.repeat(np.arange(N), S)
        R = rows(tables(shifted.reshape(N * S, -1), owner))
        costs = np.sum(R * R, axis=1).reshape(N, S)
        picks = np.argsort(costs, axis=1, kind="stable")[:, :2]
        fit_of = np.repeat(np.arange(N), 2)
        start = theta0[fit_of] + _SHIFTS[picks.reshape(-1)][:, None] * free[fit_of]
        theta, cost = _trf(rows, tables, start, fit_of, free[fit_of], max_nfev)
    cost = cost.reshape(N, 2)
    # calibrate's rule: the first start's fit unless it is not exact and the second is better
    pick = np.where((cost[:, 0] >= 1e-12 * rows.m) & (cost[:, 1] < cost[:, 0]), 1, 0)
    best = theta.reshape(N, 2, -1)[np.arange(N), pick]
    fitted = np.where(free, signs * np.exp(best), consts)
    return fitted, np.sqrt(2.0 * cost[np.arange(N), pick] / rows.m)


def _trf(rows: _Rows, tables, theta0: np.ndarray, fit_of: np.ndarray, free: np.ndarray,
         max_nfev: int) -> tuple[np.ndarray, np.ndarray]:
    """SciPy's ``trf`` without bounds (exact subproblem, ``x_scale=1``, no loss) on every row of
    ``theta0`` at once, its non-free entries held; returns the parameters and costs (half the
    residuals' sum of squares). Each round takes one Jacobian call for the fits that moved and one
    trial-step call for every active fit."""
    M, k = theta0.shape
    n_free = free.sum(axis=1)
    x = np.where(free, theta0, 0.0)
    base = np.where(free, 0.0, theta0)  # held entries, added back for the residuals
    f = rows(tables(x + base, fit_of))
    m = f.shape[1]
    cost = 0.5 * _rowdot(f, f)
    nfev = np.ones(M, dtype=np.int64)
    delta = np.linalg.norm(x, axis=1)
    delta[delta == 0] = 1.0
    alpha = np.zeros(M)
    active = n_free > 0
    need_j = active.copy()
    U_f = np.zeros((M, k))
    S = np.zeros((M, k))
    V = np.zeros((M, k, k))
    J = np.zeros((M, m, k))
    g = np.zeros((M, k))
    while active.any():
        jn = np.flatnonzero(need_j & active)
        if jn.size:
            xj = x[jn]
            h = _RSTEP * np.where(xj >= 0, 1.0, -1.0) * np.maximum(1.0, np.abs(xj))
            steps = np.repeat(xj[:, None, :], k, axis=1)
            idx = np.arange(k)
            steps[:, idx, idx] += h
            dx = (xj + h) - xj
            owners = np.repeat(jn, k)
            cols = free[jn].reshape(-1)  # only the free columns are simulated
            F = np.zeros((jn.size * k, m))
            F[cols] = rows(tables(steps.reshape(-1, k)[cols] + base[owners[cols]], fit_of[owners[cols]]))
            Jn = np.where(free[jn][:, :, None], (F.reshape(jn.size, k, m) - f[jn][:, None, :]) / dx[:, :, None], 0.0)
            J[jn] = np.swapaxes(Jn, 1, 2)
            g[jn] = _rowdot(np.swapaxes(J[jn], 1, 2), f[jn][:, None, :])
            need_j[jn] = False
            stop = (np.abs(g[jn]).max(axis=1) < GTOL) | (nfev[jn] >= max_nfev)
            active[jn[stop]] = False
            go = jn[~stop]
            if go.size:
                u, s, vt = np.linalg.svd(J[go], full_matrices=False)
                S[go], V[go] = s, np.swapaxes(vt, 1, 2)
                U_f[go] = _rowdot(np.swapaxes(u, 1, 2), f[go][:, None, :])
        a = np.flatnonzero(active & (nfev < max_nfev))
        active[np.flatnonzero(active & (nfev >= max_nfev))] = False
        if not a.size:
            break
        step, alpha[a] = _tr_steps(n_free[a], m, U_f[a], S[a], V[a], delta[a], alpha[a])
        Js = _rowdot(J[a], step[:, None, :])
        predicted = -(0.5 * _rowdot(Js, Js) + _rowdot(step, g[a]))
        x_new = x[a] + step
        f_new = rows(tables(x_new + base[a], fit_of[a]))
        nfev[a] += 1
        step_norm = np.linalg.norm(step, axis=1)
        cost_new = 0.5 * _rowdot(f_new, f_new)
        reduction = cost[a] - cost_new
        with np.errstate(all="ignore"):
            ratio = np.where(predicted > 0, reduction / predicted,
                             np.where((predicted == 0) & (reduction == 0), 1.0, 0.0))
        new_delta = np.where(ratio < 0.25, 0.25 * step_norm,
                             np.where((ratio > 0.75) & (step_norm > 0.95 * delta[a]), 2.0 * delta[a], delta[a]))
        ftol_ok = (reduction < FTOL * cost[a]) & (ratio > 0.25)
        xtol_ok = step_norm < XTOL * (XTOL + np.linalg.norm(x[a], axis=1))
        terminate = ftol_ok | xtol_ok
        with np.errstate(all="ignore"):
            alpha[a] = np.where(terminate, alpha[a], alpha[a] * delta[a] / new_delta)
        delta[a] = np.where(terminate, delta[a], new_delta)
        moved = reduction > 0
        acc = a[moved]
        x[acc], f[acc], cost[acc] = x_new[moved], f_new[moved], cost_new[moved]
        need_j[acc] = True
        active[a[terminate]] = False
    return x + base, cost


def _tr_steps(n: np.ndarray, m: int, uf: np.ndarray, s: np.ndarray, V: np.ndarray, Delta: np.ndarray,
              alpha0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """SciPy's ``solve_lsq_trust_region`` (More's method on one SVD, ``rtol=0.01``, 10 iterations)
    for many fits: ``n`` free parameters each, their singular values first in ``s``."""
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
    step = np.where(gn_ok[:, None], gn, p)
    return step, np.where(gn_ok, 0.0, al)
