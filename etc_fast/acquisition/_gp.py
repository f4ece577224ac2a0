"""The GP-surrogate planners (``gp_ucb``, ``gp_var``): a Gaussian process fitted to the observed
outputs picks the batch from the same pool (docs/gp.md), on :mod:`kernels.gp`.

The committee plays no part: the rule models one scalar per observation, the **target**, and picks
where the surrogate is most uncertain (``gp_var``) or most promising (``gp_ucb``, the largest
``mean + KAPPA_UCB sd``). The targets, each standardized to mean 0 and sd 1 over the observations
that have one (only centred when all are equal):

* equations (:func:`equation_target`): ``log|y|`` when the finite observed ``y`` are all of one
  sign and nonzero (a law's output spans decades), else ``y``;
* systems (:func:`series_target`): the log of each experiment's RMS over every finite value of its
  series (all channels and times), when every RMS is positive, else the RMS.

Hyperparameters come from the kernel's count-bounded likelihood search (:func:`kernels.gp_fit`);
the nugget is numerical jitter in a noiseless lab and searched over a grid in a noisy one.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from etc_fast.acquisition._series import SeriesStep
from etc_fast.core import GP_ACQUISITIONS
from kernels.gp import FIT_PASSES, LENGTH_GRID, NUGGET_GRID, NUGGET_NOISELESS, gp_fit, gp_select

__all__ = ["GP_METHODS", "KAPPA_UCB", "MIN_GP_OBSERVATIONS", "GPStep", "equation_target", "plan_gp_step", "series_target"]

GP_METHODS: tuple[str, ...] = GP_ACQUISITIONS
"""Acquisition rules this module answers."""

KAPPA_UCB = 2.0
"""Weight of the posterior sd in ``gp_ucb``'s score ``mean + KAPPA_UCB sd`` (standardized target
units). 2.0 is the common fixed choice (about a 97.7% one-sided bound under a Gaussian posterior),
leaning toward exploration without the schedule of Srinivas et al.'s GP-UCB, which needs a horizon
and a confidence level a planner with a fixed budget of batches does not have."""

MIN_GP_OBSERVATIONS = 2
"""Fewest observations with a target the likelihood search runs on; with fewer the GP keeps
:data:`DEFAULT_LENGTH` in every dimension and a unit signal variance (it is then its prior, or
nearly: every planner trial starts with a bootstrap of at least three)."""

DEFAULT_LENGTH = 0.5
"""Length scale used without enough observations to fit one (unit-cube coordinates)."""


class GPStep(SeriesStep):
    """A batch chosen by a GP rule: pool ``indices`` in pick order and what the record keeps
    (the planner's step interface, the systems step's fields: no replicates, no committee fallback)."""


def _one_sign_log(values: np.ndarray, usable: np.ndarray, log_name: str, plain_name: str) -> tuple[np.ndarray, str]:
    v = values[usable]
    if v.size and (np.all(v > 0) or np.all(v < 0)):
        out = np.full(values.shape, np.nan)
        out[usable] = np.log(np.abs(v))
        return out, log_name
    return np.where(usable, values, np.nan), plain_name


def equation_target(y) -> tuple[np.ndarray, str]:
    """The GP's raw target of each equation observation and its name: ``log|y|`` (``log_abs``) when
    the finite ``y`` are all of one sign and nonzero, else ``y`` (``identity``); NaN where ``y`` is
    not finite (that observation is left out of the fit)."""
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    return _one_sign_log(y, np.isfinite(y), "log_abs", "identity")


def series_target(series) -> tuple[np.ndarray, str]:
    """The GP's raw target of each system experiment and its name: per experiment (float64[n,
    channels, times]) the RMS of its finite values over every channel and time; its log
    (``log_rms``) when every such RMS is positive, else the RMS itself (``rms``); NaN for an
    experiment without a finite value."""
    S = np.asarray(series, dtype=np.float64)
    S = S.reshape(S.shape[0], -1)
    fin = np.isfinite(S)
    count = fin.sum(axis=1)
    sq = np.where(fin, S, 0.0) ** 2
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        rms = np.sqrt(sq.sum(axis=1) / np.maximum(count, 1))
    usable = (count > 0) & np.isfinite(rms)
    return _one_sign_log(rms, usable, "log_rms", "rms")


def _standardize(t: np.ndarray) -> np.ndarray:
    sd = float(t.std()) if t.size else 0.0
    return (t - t.mean()) / sd if sd > 0 else t - (t.mean() if t.size else 0.0)


def _num(x: float) -> float | None:
    return float(x) if np.isfinite(x) else None


def plan_gp_step(U_obs, target, pool_U, available, *, method: str, k: int, noisy: bool, transform: str,
                 kappa: float = KAPPA_UCB) -> GPStep:
    """Choose up to ``k`` available pool points by a GP rule.

    Args:
        U_obs: float64[n, d] the observations' unit coordinates (rows with a NaN are left out;
            values are clipped to [0, 1]).
        target: float64[n] each observation's raw target (:func:`equation_target`,
            :func:`series_target`; NaN = left out), standardized here.
        pool_U: float64[n_pool, d] the pool's unit coordinates.
        available: bool[n_pool] unused pool points.
        method: ``gp_ucb`` or ``gp_var``.
        k: Batch size.
        noisy: The lab is noisy: the nugget is searched over :data:`kernels.gp.NUGGET_GRID`
            (else it is the jitter :data:`kernels.gp.NUGGET_NOISELESS`).
        transform: The target's name, recorded.
        kappa: ``gp_ucb``'s weight of the sd.

    Returns:
        The :class:`GPStep`; its record holds the model (target, observations used, length scales,
        signal variance, nugget, log likelihood, candidates evaluated), ``kappa`` for ``gp_ucb``
        and the posterior mean and sd at each pick (standardized units, before conditioning on it).
    """
    if method not in GP_METHODS:
        raise ValueError(f"plan_gp_step answers {', '.join(GP_METHODS)}, got {method!r}")
    U = np.asarray(U_obs, dtype=np.float64)
    t = np.asarray(target, dtype=np.float64).reshape(-1)
    P = np.asarray(pool_U, dtype=np.float64)
    if U.ndim != 2 or U.shape != (t.size, P.shape[1]):
        raise ValueError(f"U_obs must be [{t.size}, {P.shape[1]}] (one row per target), got {U.shape}")
    keep = np.isfinite(t) & np.all(np.isfinite(U), axis=1)
    U = np.clip(U[keep], 0.0, 1.0)
    z = _standardize(t[keep])
    nuggets = NUGGET_GRID if noisy else NUGGET_NOISELESS
    model: dict[str, Any] = {"kernel": "matern52", "target": transform, "n_obs": int(z.size),
                             "nuggets": "grid" if noisy else "jitter"}
    if z.size >= MIN_GP_OBSERVATIONS:
        lengths, s2, noise, lml, n_eval = gp_fit(U, z, nuggets=nuggets, length_grid=LENGTH_GRID, passes=FIT_PASSES)
    else:
        lengths, s2, noise, lml, n_eval = np.full(P.shape[1], DEFAULT_LENGTH), 1.0, float(nuggets[0]), float("nan"), 0
        model["fit"] = f"fewer than {MIN_GP_OBSERVATIONS} observations with a target: default hyperparameters"
    model.update(lengths=[float(x) for x in lengths], signal_var=float(s2), noise=float(noise),
                 log_likelihood=_num(lml), n_evaluations=int(n_eval))
    ucb = method == "gp_ucb"
    record: dict[str, Any] = {"method": method, "k": int(k), "n_available": int(np.count_nonzero(available)), "gp": model}
    if ucb:
        record["kappa"] = float(kappa)
    if z.size >= MIN_GP_OBSERVATIONS and not np.isfinite(lml):
        error: str | None = "the GP's covariance matrix is not positive definite at any candidate hyperparameters"
        record.update(error=error, chosen=[])
        return GPStep(indices=np.zeros(0, dtype=np.int64), record=record, error=error)
    picks, mean, sd = gp_select(U, z, P, np.asarray(available, dtype=bool), k, lengths, s2, noise,
                                kappa=float(kappa) if ucb else None)
    record["chosen"] = [
        {"index": int(i), "mean": float(m), "sd": float(s), **({"score": float(m + kappa * s)} if ucb else {})}
        for i, m, s in zip(picks.tolist(), mean.tolist(), sd.tolist())
    ]
    error = None if picks.size or k == 0 else "no available pool points"
    record["error"] = error
    return GPStep(indices=picks, record=record, error=error)
