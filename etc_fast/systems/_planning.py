"""Building blocks of explore-then-commit on systems: series disagreement and calibration through the simulator.

:func:`series_disagreement` is the committee score of a system (docs/guide/acquisition.md, "The
committee rules"): the committee's predicted observables at every pool point (a forward-model call), and
per channel x time cell the variance across hypotheses (eq. S2) over the squared precision of a
reading there, compressed by ``log1p`` and averaged over the cells that are finite. :func:`calibrate` fits a
hypothesis's free constants to the observed series by simulating it through the system's public
forward model (never the hidden law).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from etc_fast._jacobian import BatchedJacobian
from etc_fast._median import nanmedian
from etc_fast.expr import Program
from etc_fast.systems._forward import FamilyPacker, controls_matrix, predict
from etc_fast.systems._quiet import quiet
from etc_fast.systems._spec import spec

__all__ = ["Calibration", "calibrate", "constant_errors", "record_scale", "relative_residuals", "series_disagreement"]


def series_disagreement(
    pred: np.ndarray,
    *,
    precision: float = 5e-7,
    floor: float = 1e-12,
    min_members: int = 2,
) -> np.ndarray:
    """Committee disagreement per pool point from predicted series (eq. S2 on systems).

    Args:
        pred: float64[P, n, n_ch, T] predictions of P hypotheses at n pool points.
        precision: Relative precision of a reading: NewtonBench prints 7 significant digits
            (5e-7); a trial with noise passes its noise level when larger.
        floor: Absolute precision floor (NewtonBench's per-output noise floors are 1e-12 .. 1e-6).
        min_members: Fewest finite predictions a cell needs to count.

    Returns:
        float64[n]: the mean over the cells (channel, time index) of ``log1p(var_p / sigma^2)``,
        the committee's variance at that cell over the squared precision of a reading there
        (``sigma = max(precision |median_p|, floor)``); NaN where no cell has ``min_members``
        finite members.

    Notes:
        Why precision-scaled: a system's reading mixes what the controls set (a starting velocity,
        a distance) with what the law adds, and only the law's part separates hypotheses. Scaled
        by what a reading can resolve, a difference counts when an experiment could see it, in
        any unit and at any magnitude; ``log1p`` keeps one huge cell (a runaway trajectory) from
        outweighing all the others, so every channel and time index has its say.
    """
    pred = np.asarray(pred, dtype=np.float64)
    if pred.ndim != 4:
        raise ValueError(
            f"pred must be [P, n, channels, times], got shape {pred.shape}"
        )
    P, n = pred.shape[:2]
    if n == 0:
        return np.zeros(0)
    with quiet():  # all-NaN cells are expected; they give NaN
        finite = np.isfinite(pred)
        vals = np.where(finite, pred, np.nan)
        count = finite.sum(axis=0)  # [n, ch, T]
        centre = np.nanmedian(vals, axis=0) if P else np.full(pred.shape[1:], np.nan)
        sigma = np.maximum(precision * np.abs(centre), floor)
        var = np.nanvar(vals, axis=0)
        cell = np.where(count >= min_members, np.log1p(var / sigma**2), np.nan)
        out = np.nanmean(cell.reshape(n, -1), axis=1)
    return out


class Calibration:
    """A hypothesis with its free constants fitted through the simulator.

    Attributes:
        program: The fitted program.
        rms: Root-mean-square relative residual over the finite observed cells.
        n_used: Number of observed cells used.
        success: Whether the optimizer converged.
    """

    def __init__(self, program: Program, rms: float, n_used: int, success: bool):
        self.program, self.rms, self.n_used, self.success = (
            program,
            rms,
            n_used,
            success,
        )

    def __repr__(self) -> str:
        return f"Calibration({self.program.text!r}, rms={self.rms:.3g}, n_used={self.n_used})"


def _residual_model(program: Program, module: str, system: str, requests: Sequence[Mapping[str, object]],
                    observed: np.ndarray):
    """What :func:`calibrate` fits: the free constants' indices, the finite observations' mask, and
    ``residuals(thetas, signs)``, each row of ``thetas`` (log magnitudes of the free constants, with
    ``signs``) simulated in one forward-model call. Residuals are relative to each channel's
    typical magnitude (its median absolute observation) plus the value itself; a non-finite one
    counts as 1e3."""
    sp = spec(module, system)
    C = controls_matrix(sp, requests)
    obs = np.asarray(observed, dtype=np.float64)
    mask, den = record_scale(obs)
    free = [i for i, name in enumerate(program.const_names) if name is not None and name not in ("pi", "e")]

    family = FamilyPacker(program)

    def residuals(thetas: np.ndarray, signs: np.ndarray) -> list[np.ndarray]:  # callers hold quiet()
        consts = np.repeat(program.consts[None], len(thetas), axis=0)
        consts[:, free] = signs * np.exp(thetas)
        return list(relative_residuals(predict(module, system, family(consts), C), obs, mask, den))

    return free, mask, residuals


def record_scale(observed: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """What a calibration through the simulator weighs the records by: the finite cells (bool, the
    records' shape) and each one's scale, its absolute value plus a thousandth of its channel's
    typical magnitude (the median absolute finite reading; 1 where a channel has none)."""
    obs = np.asarray(observed, dtype=np.float64)
    mask = np.isfinite(obs)
    with np.errstate(all="ignore"):
        typical = nanmedian(np.where(mask, np.abs(obs), np.nan), (0, 2))
    typical = np.where(np.isfinite(typical) & (typical > 0), typical, 1.0)
    return mask, np.broadcast_to(np.abs(obs) + 1e-3 * typical, obs.shape)[mask]


def relative_residuals(sims: np.ndarray, observed: np.ndarray, mask: np.ndarray, den: np.ndarray) -> np.ndarray:
    """float64[P, cells]: each simulation's residuals on the finite records (:func:`record_scale`),
    relative to their scale; a non-finite one counts as 1e3. Callers hold ``quiet()``."""
    r = (sims - observed[None])[:, mask] / den
    return np.where(np.isfinite(r), r, 1e3)


def constant_errors(
    program: Program,
    module: str,
    system: str,
    requests: Sequence[Mapping[str, object]],
    observed: np.ndarray,
    scale: float,
) -> np.ndarray:
    """Relative standard errors of ``program``'s free constants on the records.

    The linearised errors of :func:`calibrate`'s fit at the program's constants: the residual
    Jacobian in log magnitude (forward differences, step 1e-6, all in one forward-model call),
    ``scale * sqrt(diag((J^T J)^-1))`` with ``scale`` the residuals' size (the law's misfit, or
    the records' floor). A log-magnitude error is a relative one. A constant the records do not
    determine (a singular ``J^T J``, a non-finite Jacobian) gets ``inf``. float64[k], in the
    order of the free constants.
    """
    free, mask, residuals = _residual_model(program, module, system, requests, observed)
    if not free:
        return np.zeros(0)
    start = program.consts[free]
    signs = np.where(start < 0, -1.0, 1.0)
    theta = np.log(np.where(start != 0, np.abs(start), 1.0))
    h = 1e-6
    with quiet():
        rows = residuals(np.vstack([theta[None], theta[None] + h * np.eye(len(free))]), signs)
    J = np.column_stack([(r - rows[0]) / h for r in rows[1:]])
    out = np.full(len(free), np.inf)
    if not np.all(np.isfinite(J)) or J.shape[0] < J.shape[1]:
        return out
    with np.errstate(all="ignore"):
        try:
            cov = np.linalg.inv(J.T @ J)
        except np.linalg.LinAlgError:
            return out
    d = np.diag(cov)
    ok = np.isfinite(d) & (d > 0)
    out[ok] = float(scale) * np.sqrt(d[ok])
    return out


def calibrate(
    program: Program,
    module: str,
    system: str,
    requests: Sequence[Mapping[str, object]],
    observed: np.ndarray,
    *,
    max_nfev: int = 200,
) -> Calibration:
    """Fit ``program``'s nuisance constants so that its simulated observables match ``observed``.

    Args:
        program: Hypothesis over the law's inputs (``etc_fast.expr.parse``).
        module, system: The system.
        requests: The experiments that were run.
        observed: float64[n, n_ch, T] their observations (``etc_fast.systems._forward.observe``).
        max_nfev: Forward-model calls the optimizer may make.

    Returns:
        The :class:`Calibration`. Residuals are relative to each channel's typical magnitude
        (its median absolute observation) plus the value itself, so channels and time indices
        weigh alike; constants are fitted in log magnitude with their sign kept.
    """
    from scipy.optimize import least_squares

    free, mask, residuals = _residual_model(program, module, system, requests, observed)
    start = program.consts[free]
    signs = np.where(start < 0, -1.0, 1.0)

    def residual(theta: np.ndarray) -> np.ndarray:
        return residuals(np.asarray(theta)[None], signs)[0]

    def batched(thetas: np.ndarray) -> np.ndarray:  # a Jacobian's finite-difference steps: one call for all
        return np.asarray(residuals(thetas, signs))

    if not mask.any():
        return Calibration(program, float("nan"), 0, True)
    if not free:
        with quiet():
            r = residuals(np.zeros((1, 0)), signs)[0]
            rms = float(np.sqrt(np.mean(r**2)))
        return Calibration(program, rms, int(mask.sum()), True)
    theta0 = np.log(np.where(start != 0, np.abs(start), 1.0))
    best = None
    # A constant can be off by many orders before the data pin it down, and a trajectory's
    # residual is flat far from the truth (the body barely moves, or it has long crashed): scan
    # a common log-magnitude shift of the free constants, then refine from the two best shifts.
    shifts = np.arange(-30.0, 31.0, 3.0)
    with quiet():
        costs = [float(np.sum(r**2)) for r in residuals(theta0[None] + shifts[:, None], signs)]
    for shift in shifts[np.argsort(costs, kind="stable")[:2]]:
        fd = BatchedJacobian(residual, batched)
        with quiet():
            fit = least_squares(fd.fun, theta0 + shift, jac=fd.jac, method="trf", max_nfev=max_nfev, x_scale=1.0)
        if best is None or fit.cost < best.cost:
            best = fit
        if best.cost < 1e-12 * mask.sum():
            break
    consts = program.consts.copy()
    consts[free] = signs * np.exp(best.x)
    rms = float(np.sqrt(2 * best.cost / max(1, mask.sum())))
    return Calibration(
        program.with_consts(consts), rms, int(mask.sum()), bool(best.success)
    )
