"""Many calibrations through the simulator at once: SciPy's ``trf`` run for every fit in lockstep.

:func:`calibrate` fits one hypothesis's constants through the simulator with SciPy's trust-region
solver, a forward-model call per step. A scan refits dozens of forms that differ only in which of
one program's constants are free (an exponent fixed at 0 leaves its input out), the ranking refits
six laws several ways, and each forward-model call then simulates a handful of programs while its
fixed cost (the Python around the model, the kernel's launch) is most of the time.
:func:`calibrate_many` (one program, many constant tables) and :func:`calibrate_each` (many
programs) run all those fits together: each round simulates the Jacobian steps of every fit that
moved in one call and every active fit's trial step in another.

They fit what :func:`calibrate` fits (the same residuals: relative to each channel's typical
magnitude plus the value itself, a non-finite one counted as 1e3; the free constants in log
magnitude with their signs kept; the common log shift scanned first, the fit refined from the best
shift and, unless that fit is exact, from the second best, the better kept) with the same method,
:func:`trf_lockstep`, SciPy's ``trf`` without bounds (``x_scale=1``, no loss, tolerances 1e-8):

* the Jacobian by SciPy's forward differences (step ``sqrt(eps) max(1, |x|)``);
* each fit's SVD on its own free columns (``min(m, n)`` singular values), so a held constant never
  enters another direction and a fit's numbers do not depend on the fits beside it;
* More's trust-region step on that SVD (:func:`kernels.trust_region.trust_region_steps`), SciPy's
  radius update, its ``ftol``/``xtol``/``gtol`` tests and ``max_nfev`` counted in trial steps.

It is SciPy's method, not SciPy's code: a well-posed fit reaches :func:`calibrate`'s constants to
rounding (tests/systems/test_lm.py: to 1e-9, and SciPy's own steps on made-up problems); where
the misfit is flat or chaotic, rounding can lead to another local minimum. Every bound is a count,
so the result depends only on the inputs.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

import numpy as np

from etc_fast.expr import Packed, Program
from etc_fast.systems._forward import FamilyPacker, controls_matrix, predict
from etc_fast.systems._planning import Calibration, record_scale, relative_residuals
from etc_fast.systems._quiet import quiet
from etc_fast.systems._spec import spec
from kernels.trust_region import trust_region_steps

__all__ = ["FTOL", "XTOL", "LockstepFits", "calibrate_each", "calibrate_many", "trf_lockstep"]

#: A fit stops when an accepted step lowers its cost by at most this fraction.
FTOL = 1e-8
#: ... or when the step is at most this fraction of the parameters' norm.
XTOL = 1e-8
#: ... or when the gradient's largest entry is at most this.
GTOL = 1e-8
_EPS = np.finfo(np.float64).eps
_RSTEP = _EPS ** 0.5
_SHIFTS = np.arange(-30.0, 31.0, 3.0)


class LockstepFits(NamedTuple):
    """What :func:`calibrate_many` returns, one row or entry per fit."""

    fitted: np.ndarray  #: float64[N, n_consts] the fitted constant tables
    rms: np.ndarray  #: float64[N] the records' rms relative misfit
    success: np.ndarray  #: bool[N] stopped by a tolerance (SciPy's ``success``), not by ``max_nfev``


def _rowdot(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``sum(a * b)`` over the last axis, each row summed on its own (a contiguous row, NumPy's
    pairwise sum), so a fit's numbers do not depend on how many fits share the batch."""
    return np.sum(np.ascontiguousarray(a * b), axis=-1)


class _Rows:
    """Residual rows of programs at many constant tables, one forward-model call per batch.

    ``programs[prog_of[i]]`` is fit ``i``'s program; a row's table is padded past its program's
    constants. One program is packed as a family (:class:`FamilyPacker`), several by gathering
    each row's instructions from one concatenation of them all."""

    def __init__(self, programs: Sequence[Program], prog_of: np.ndarray, module: str, system: str,
                 requests: Sequence[Mapping[str, object]], observed: np.ndarray) -> None:
        self.module, self.system = module, system
        self.C = controls_matrix(spec(module, system), requests)
        self.obs = np.asarray(observed, dtype=np.float64)
        self.mask, self.den = record_scale(self.obs)
        self.m = int(self.mask.sum())
        self.prog_of = np.asarray(prog_of, dtype=np.int64)
        self.family = FamilyPacker(programs[0]) if len(programs) == 1 else None
        self.n_consts = np.array([len(p.consts) for p in programs], dtype=np.int64)
        self.lens = np.array([len(p.ops) for p in programs], dtype=np.int64)
        self.starts = np.concatenate([[0], np.cumsum(self.lens)[:-1]]).astype(np.int64)
        self.ops = np.concatenate([p.ops.astype(np.int64, copy=False) for p in programs])
        self.args = np.concatenate([p.args.astype(np.int64, copy=False) for p in programs])

    def _packed(self, consts: np.ndarray, fits: np.ndarray) -> Packed:
        if self.family is not None:
            return self.family(consts)
        w = self.prog_of[fits]
        lens, nc = self.lens[w], self.n_consts[w]
        first = np.concatenate([[0], np.cumsum(lens)[:-1]]).astype(np.int64)
        gather = np.repeat(self.starts[w] - first, lens) + np.arange(int(lens.sum()))
        flat = consts[np.arange(consts.shape[1])[None, :] < nc[:, None]]
        flat[np.isnan(flat)] = np.nan  # the NaN that with_consts stores
        return Packed(self.ops[gather], self.args[gather], flat, first, lens,
                      np.concatenate([[0], np.cumsum(nc)[:-1]]).astype(np.int64))

    def __call__(self, consts: np.ndarray, fits: np.ndarray) -> np.ndarray:
        """float64[K, m]: the residuals of each row of ``consts``, row ``j`` a table of fit
        ``fits[j]``'s program (callers hold ``quiet()``)."""
        if not len(consts):
            return np.empty((0, self.m))
        sims = predict(self.module, self.system, self._packed(consts, np.asarray(fits)), self.C)
        return relative_residuals(sims, self.obs, self.mask, self.den)


def calibrate_many(
    program: Program | Sequence[Program],
    module: str,
    system: str,
    requests: Sequence[Mapping[str, object]],
    observed: np.ndarray,
    consts: np.ndarray,
    free: np.ndarray,
    *,
    max_nfev: int = 60,
) -> LockstepFits:
    """Fit many constant tables of ``program`` to the records at once.

    Args:
        program: One hypothesis over the law's inputs, or one per fit (each row of ``consts``
            then holds its program's constants first; the entries past them are ignored).
        module, system, requests, observed: As for :func:`calibrate`.
        consts: float64[N, n_consts] the starts, one row per fit (``n_consts`` the most
            constants of a program).
        free: bool[N, n_consts] the constants each fit fits; the others keep their values. A
            free constant of value 0 starts at 1, as in :func:`calibrate`.
        max_nfev: Trial steps a fit may take.

    Returns:
        :class:`LockstepFits`: the fitted tables, the records' rms relative misfit of each (NaN
        where no record is finite) and whether each fit stopped by a tolerance.
    """
    consts = np.array(consts, dtype=np.float64, ndmin=2)
    free = np.array(free, dtype=bool, ndmin=2)
    programs = [program] if isinstance(program, Program) else list(program)
    N = len(consts)
    if len(programs) not in (1, N):
        raise ValueError(f"{len(programs)} programs for {N} fits: give one program, or one per fit")
    width = max(len(p.consts) for p in programs) if programs else 0
    if consts.shape != free.shape or consts.shape[1] != width:
        raise ValueError(f"consts {consts.shape} and free {free.shape} must both be [N, {width}]")
    prog_of = np.zeros(N, dtype=np.int64) if len(programs) == 1 else np.arange(N)
    free &= np.arange(width)[None, :] < np.array([len(programs[i].consts) for i in prog_of])[:, None]
    rows = _Rows(programs, prog_of, module, system, requests, observed)
    if rows.m == 0 or N == 0:
        return LockstepFits(consts.copy(), np.full(N, np.nan), np.ones(N, dtype=bool))
    signs = np.where(consts < 0, -1.0, 1.0)
    theta0 = np.log(np.where(consts != 0, np.abs(consts), 1.0))

    def tables(theta: np.ndarray, which: np.ndarray) -> np.ndarray:
        return np.where(free[which], signs[which] * np.exp(theta), consts[which])

    with quiet():
        # the common log shift of each fit's free constants, then the two best shifts refined
        S = len(_SHIFTS)
        shifted = theta0[:, None, :] + _SHIFTS[None, :, None] * free[:, None, :]
        owner = np.repeat(np.arange(N), S)
        R = rows(tables(shifted.reshape(N * S, -1), owner), owner)
        costs = np.sum(R * R, axis=1).reshape(N, S)
        picks = np.argsort(costs, axis=1, kind="stable")[:, :2]
        everyone = np.arange(N)
        start = theta0 + _SHIFTS[picks[:, 0]][:, None] * free
        theta, cost, ok = trf_lockstep(rows, tables, start, everyone, free, max_nfev)
        # calibrate's rule: from the second best shift too where the first fit is not exact, and
        # the second fit kept where it is better
        again = np.flatnonzero(cost >= 1e-12 * rows.m)
        if again.size:
            start2 = theta0[again] + _SHIFTS[picks[again, 1]][:, None] * free[again]
            theta2, cost2, ok2 = trf_lockstep(rows, tables, start2, again, free[again], max_nfev)
            better = cost2 < cost[again]
            theta[again[better]], cost[again[better]], ok[again[better]] = theta2[better], cost2[better], ok2[better]
    fitted = np.where(free, signs * np.exp(theta), consts)
    return LockstepFits(fitted, np.sqrt(2.0 * cost / rows.m), ok)


def calibrate_each(programs: Sequence[Program], module: str, system: str, requests: Sequence[Mapping[str, object]],
                   observed: np.ndarray, *, max_nfev: int = 200) -> list[Calibration]:
    """``[calibrate(p, ...) for p in programs]`` in lockstep: each program's named constants (not
    ``pi`` or ``e``) fitted from its values, all fits' steps simulated together."""
    programs = list(programs)
    if not programs:
        return []
    width = max(len(p.consts) for p in programs)
    consts = np.zeros((len(programs), width))
    free = np.zeros((len(programs), width), dtype=bool)
    for i, p in enumerate(programs):
        consts[i, :len(p.consts)] = p.consts
        free[i, :len(p.consts)] = [n is not None and n not in ("pi", "e") for n in p.const_names]
    fitted, rms, ok = calibrate_many(programs, module, system, requests, observed, consts, free, max_nfev=max_nfev)
    n_used = int(np.isfinite(np.asarray(observed, dtype=np.float64)).sum())
    return [Calibration(p.with_consts(fitted[i, :len(p.consts)]) if free[i].any() else p, float(rms[i]), n_used,
                        bool(ok[i])) for i, p in enumerate(programs)]


def trf_lockstep(rows: Callable[[np.ndarray, np.ndarray], np.ndarray],
                 tables: Callable[[np.ndarray, np.ndarray], np.ndarray], theta0: np.ndarray, fit_of: np.ndarray,
                 free: np.ndarray, max_nfev: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """SciPy's ``trf`` without bounds (exact subproblem, ``x_scale=1``, no loss, its tolerances
    1e-8) on every row of ``theta0`` at once, its non-free entries held.

    ``tables(theta, fits)`` turns parameter rows into what ``rows(tables, fits)`` simulates, the
    residuals of each row (``fits[j]`` the fit a row belongs to, an index the two callables
    share: ``fit_of`` maps each row of ``theta0`` to it). Each round takes one ``rows`` call for
    the Jacobian steps of the fits that moved and one for every active fit's trial step. Returns
    the parameters, the costs (half the residuals' sum of squares) and whether each fit stopped by
    a tolerance (SciPy's ``success``) rather than by ``max_nfev``.
    """
    M, k = theta0.shape
    n_free = free.sum(axis=1)
    x = np.where(free, theta0, 0.0)
    base = np.where(free, 0.0, theta0)  # held entries, added back for the residuals
    f = rows(tables(x + base, fit_of), fit_of)
    m = f.shape[1]
    cost = 0.5 * _rowdot(f, f)
    nfev = np.ones(M, dtype=np.int64)
    delta = np.linalg.norm(x, axis=1)
    delta[delta == 0] = 1.0
    alpha = np.zeros(M)
    active = n_free > 0
    converged = ~active  # stopped by a tolerance (SciPy's success), not by max_nfev
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
            F[cols] = rows(tables(steps.reshape(-1, k)[cols] + base[owners[cols]], fit_of[owners[cols]]), fit_of[owners[cols]])
            Jn = np.where(free[jn][:, :, None], (F.reshape(jn.size, k, m) - f[jn][:, None, :]) / dx[:, :, None], 0.0)
            J[jn] = np.swapaxes(Jn, 1, 2)
            g[jn] = _rowdot(np.swapaxes(J[jn], 1, 2), f[jn][:, None, :])
            need_j[jn] = False
            small_g = np.abs(g[jn]).max(axis=1) < GTOL
            converged[jn[small_g]] = True
            stop = small_g | (nfev[jn] >= max_nfev)
            active[jn[stop]] = False
            go = jn[~stop]
            for nb in np.unique(n_free[go]):  # each fit's SVD on its own free columns
                grp = go[n_free[go] == nb]
                cols_of = np.nonzero(free[grp])[1].reshape(grp.size, nb)  # in index order
                u, s, vt = np.linalg.svd(np.take_along_axis(J[grp], cols_of[:, None, :], axis=2), full_matrices=False)
                r = s.shape[1]  # min(m, nb) singular values; the rest stay 0 (rank-deficient)
                S[grp] = 0.0
                S[grp, :r] = s
                Vg = np.zeros((grp.size, k, k))
                Vg[np.arange(grp.size)[:, None], cols_of, :r] = np.swapaxes(vt, 1, 2)
                V[grp] = Vg
                U_f[grp] = 0.0
                U_f[grp, :r] = _rowdot(np.swapaxes(u, 1, 2), f[grp][:, None, :])
        a = np.flatnonzero(active & (nfev < max_nfev))
        active[np.flatnonzero(active & (nfev >= max_nfev))] = False
        if not a.size:
            break
        step, alpha[a] = trust_region_steps(n_free[a], m, U_f[a], S[a], V[a], delta[a], alpha[a])
        Js = _rowdot(J[a], step[:, None, :])
        predicted = -(0.5 * _rowdot(Js, Js) + _rowdot(step, g[a]))
        x_new = x[a] + step
        f_new = rows(tables(x_new + base[a], fit_of[a]), fit_of[a])
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
        converged[a[terminate]] = True
    return x + base, cost, converged
