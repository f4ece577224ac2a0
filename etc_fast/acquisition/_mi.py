"""The information planner (``acquisition: mi``; docs/guide/acquisition.md): measure where a reading
tells most about *which committee law is true*, on :mod:`kernels.mi`.

Each kept law (the noise-aware step's calibration, noise estimate and fit filter:
:func:`etc_fast.acquisition._estimate.fit_committee` on equations,
:func:`etc_fast.acquisition._series_noise.fit_series_committee` on systems) becomes a Gaussian
predictive distribution of a reading (:func:`law_predictive`):

* mean: the law's calibrated prediction;
* relative sd ``tau_i = s_i sqrt(1 + p_i / n_i)``, with ``s_i = max(r_i, sigma_eff)``: ``r_i`` the
  law's relative residual RMS corrected for its ``p_i`` fitted constants over ``n_i`` readings,
  ``sigma_eff = max(sigma, MI_NOISE_FLOOR)`` the estimated relative noise (a noiseless lab: the
  floor). This is linear regression's prediction variance (residual variance times one plus the
  mean leverage ``p / n``), with the residual variance never below the noise; a law that misfits
  predicts no more sharply than it fits;
* variance ``tau_i^2 max(mu^2, (MI_ABS_FLOOR c)^2)``, ``c`` the typical magnitude of the output
  (equations: median ``|y|``; systems: each channel's), so a reading near 0 keeps a spread;

and an evidence weight ``log w_i = -e_i log s_i`` (the Gaussian likelihood of its residuals at
its fitted scale, with the scale never below the noise; ``e_i`` the observations it was judged on:
equation points, or experiments on a system, whose readings along one series share a law's
misfit). The batch is :func:`kernels.mi.mi_select`'s greedy pairwise-distance estimate of
``I(Y_B; L)``; slots left when no point adds information (fewer than two kept laws, one law holding
the weight, or the laws already separated) are filled by the noise-aware step's maximin exploration.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from etc_fast.acquisition._estimate import fit_committee
from etc_fast.acquisition._noisy import _checked_arrays
from etc_fast.acquisition._records import NoiseOptions
from etc_fast.acquisition._series import SeriesStep
from etc_fast.acquisition._series_noise import CELL_FLOOR, READING_PRECISION, channel_typical, fit_series_committee
from etc_fast.acquisition._split import explore
from kernels.calibrate import fit_denominator
from kernels.mi import mi_select
from kernels.noise import relative_residual_rms

__all__ = ["MI_ABS_FLOOR", "MI_NOISE_FLOOR", "MIStep", "law_predictive", "plan_mi_step", "plan_series_mi_step"]

MI_NOISE_FLOOR = READING_PRECISION
"""Smallest relative noise the rule assumes (5e-7; a noiseless lab's ``sigma_eff``): half a unit in
the seventh significant digit, the precision of a recorded reading (the systems' scoring floor,
``READING_PRECISION``). Two laws whose predictions differ by less cannot be told apart by one
reading, so a difference below it carries no information."""

MI_ABS_FLOOR = CELL_FLOOR
"""A reading's spread never falls below ``tau`` times this fraction (1e-3) of the output's typical
magnitude: near 0 NewtonBench's absolute floor, not the relative noise, sets a reading (the fraction
the systems' residuals use, ``CELL_FLOOR``)."""

EQUATION_PARAMS = 2
"""Constants the equation calibration fits per law (``a``, ``b``)."""

_ESTIMATE = NoiseOptions(noise_aware=True)


class MIStep(SeriesStep):
    """A batch chosen by ``mi``: pool ``indices`` in pick order (information picks, then
    exploration) and what the record keeps (the planner's step interface: no replicates)."""


def _batch_size(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    return int(k)


def law_predictive(pred: np.ndarray, resid: np.ndarray, n_fit, n_params, n_evidence, sigma: float,
                   scale: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each law's predictive variance and log weight (module docstring).

    Args:
        pred: float64[K, n, m] calibrated predictions (``m`` readings per point).
        resid: float64[K] relative residual RMS corrected for the fitted constants (NaN: unknown,
            treated as the noise).
        n_fit: int[K] readings each law was fitted on; n_params: int[K] its fitted constants.
        n_evidence: int[K] observations its evidence counts.
        sigma: Estimated relative noise (0: noiseless).
        scale: float64[m] typical magnitude of each reading.

    Returns:
        ``(var, log_w, s)``: float64[K, n, m], float64[K] and the scale ``s_i`` of each law.
    """
    K = pred.shape[0]
    s_eff = max(float(sigma), MI_NOISE_FLOOR)
    r = np.asarray(resid, dtype=np.float64).reshape(K)
    s = np.where(np.isfinite(r), np.maximum(r, s_eff), s_eff)
    nf = np.broadcast_to(np.asarray(n_fit, dtype=np.float64), (K,))
    p = np.broadcast_to(np.asarray(n_params, dtype=np.float64), (K,))
    lev = np.where(nf > 0, np.minimum(p / np.maximum(nf, 1.0), 1.0), 1.0)
    tau2 = s * s * (1.0 + lev)
    floor = (MI_ABS_FLOOR * np.asarray(scale, dtype=np.float64)) ** 2
    with np.errstate(invalid="ignore", over="ignore"):
        var = tau2[:, None, None] * np.maximum(pred * pred, floor[None, None, :])
    log_w = -np.broadcast_to(np.asarray(n_evidence, dtype=np.float64), (K,)) * np.log(s)
    return var, log_w, s


def _batch(pred, var, log_w, cols, k, U_obs, pool_U, n_pool, record: dict[str, Any], notes: list[str]) -> np.ndarray:
    """The information picks, then exploration for the slots left; fills ``record``."""
    picks: list[int] = []
    if pred is not None and cols.size:
        rows, info = mi_select(pred, var, log_w, np.ones(cols.size, dtype=bool), k)
        picks = [int(cols[r]) for r in rows]
        record["chosen"] = [{"index": i, "information": float(v)} for i, v in zip(picks, info.tolist())]
        if len(picks) < k:
            notes.append("no further pool point adds information about which hypothesis holds; "
                         f"{k - len(picks)} slot(s) explore")
    taken = np.zeros(n_pool, dtype=bool)
    taken[picks] = True
    explored = explore(U_obs, pool_U, cols, taken, picks, k - len(picks)) if k > len(picks) else []
    record.update(explored=explored, notes=notes)
    return np.asarray(picks + explored, dtype=np.int64)


def _laws_record(positions: Sequence[int], s: np.ndarray, log_w: np.ndarray) -> list[dict[str, Any]]:
    w = np.exp(log_w - np.logaddexp.reduce(log_w))
    return [{"position": int(h), "scale": float(si), "weight": float(wi)} for h, si, wi in zip(positions, s, w)]


def _finish(indices: np.ndarray, cols: np.ndarray, k: int, record: dict[str, Any]) -> MIStep:
    error = None
    if indices.size == 0 and k > 0:
        error = "no available pool points" if cols.size == 0 else "nothing could be selected"
    record["error"] = error
    return MIStep(indices=indices, record=record, error=error)


def plan_mi_step(hypotheses: Sequence[str], variables: Sequence[str], X_obs, y_obs, U_obs, pool_X, pool_U, available,
                 *, k: int, noisy: bool) -> MIStep:
    """One ``mi`` step on an equation (module docstring).

    Args:
        hypotheses: Committee texts (the unparseable are skipped).
        variables: Task variable names.
        X_obs, y_obs, U_obs: float64[n_obs, d], float64[n_obs] and the unit coordinates of the
            observations.
        pool_X, pool_U: float64[n_pool, d] the pool and its unit coordinates.
        available: bool[n_pool] unused pool points.
        k: Batch size.
        noisy: The lab is noisy (the noise is estimated: the best fit's corrected residual;
            noiseless: :data:`MI_NOISE_FLOOR`).

    Returns:
        The :class:`MIStep`; its record holds the noise estimate, each kept law's scale and
        weight, each information pick's ``I(Y_B; L)`` and the explored points.
    """
    k = _batch_size(k)
    X_obs, y, U_obs, pool_X, pool_U, cols = _checked_arrays(X_obs, y_obs, U_obs, pool_X, pool_U, available)
    fit = fit_committee(hypotheses, tuple(variables), X_obs, y, pool_X, cols, _ESTIMATE, bool(noisy))
    kept = fit.kept
    record: dict[str, Any] = {"method": "mi", "k": int(k), "n_available": int(cols.size),
                              "noise": dataclasses.asdict(fit.noise),
                              "noise_floor": MI_NOISE_FLOOR}
    notes: list[str] = []
    pred = var = log_w = None
    if kept.size >= 2:
        pred = (fit.a[kept, None] * fit.H_pool[kept] + fit.b[kept, None])[:, :, None]
        rel, cnt = relative_residual_rms(fit.P_obs[kept], y)
        cnt = np.asarray(cnt, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            resid = np.where(cnt > EQUATION_PARAMS, rel * np.sqrt(cnt / (cnt - EQUATION_PARAMS)), np.nan)
        var, log_w, s = law_predictive(pred, resid, cnt, EQUATION_PARAMS, cnt, fit.sigma, np.array([fit_denominator(y)]))
        record["laws"] = _laws_record([fit.positions[int(r)] for r in kept], s, log_w)
    elif k:
        notes.append("fewer than 2 usable hypotheses: the batch explores")
    indices = _batch(pred, var, log_w, cols, k, U_obs, pool_U, pool_X.shape[0], record, notes)
    return _finish(indices, cols, k, record)


def plan_series_mi_step(texts: Sequence[str], names: Sequence[str], module: str, system: str,
                        requests: Sequence[Mapping[str, Any]], series, U_obs, pool_C, pool_U, available, *, k: int,
                        noisy: bool) -> MIStep:
    """One ``mi`` step on a simulated system (module docstring): a point is a pool experiment, its
    readings every channel and time of its simulated series (independent given the law).

    Args:
        texts: The committee's parseable hypotheses.
        names, module, system: The task's variable names, module and system.
        requests, series: The experiments run and their float64[n, ch, T] series.
        U_obs: float64[n, d] their unit coordinates.
        pool_C, pool_U: The pool's controls and unit coordinates.
        available: bool[n_pool] unused pool experiments.
        k: Batch size.
        noisy: The lab is noisy (the noise is estimated as the noise-aware step does).
    """
    from etc_fast.expr import pack
    from etc_fast.systems import predict

    k = _batch_size(k)
    series = np.asarray(series, dtype=np.float64)
    U_obs = np.asarray(U_obs, dtype=np.float64)
    mask = np.asarray(available)
    if series.shape[0] != len(requests) or U_obs.shape[0] != len(requests):
        raise ValueError(f"{len(requests)} requests but series {series.shape} and U_obs {U_obs.shape}")
    if mask.dtype != np.bool_ or mask.shape != (pool_C.shape[0],) or pool_U.shape[0] != pool_C.shape[0]:
        raise ValueError(f"available must be a boolean mask of the pool's {pool_C.shape[0]} points")
    cols = np.flatnonzero(mask).astype(np.int64)
    typical = channel_typical(series)
    fit = fit_series_committee(tuple(texts), names, module, system, requests, series, typical, bool(noisy))
    kept = fit.kept
    record: dict[str, Any] = {"method": "mi", "k": int(k), "n_available": int(cols.size),
                              "noise": fit.noise.to_record(), "noise_floor": MI_NOISE_FLOOR}
    notes: list[str] = []
    pred = var = log_w = None
    if kept.size >= 2 and cols.size:
        raw = predict(module, system, pack([fit.progs[int(i)] for i in kept]), pool_C[cols])
        pred = np.ascontiguousarray(raw.reshape(raw.shape[0], raw.shape[1], -1))
        scale = np.repeat(typical, raw.shape[3])
        n_fitted = np.array([fit.n_fitted[int(i)] for i in kept], dtype=np.float64)
        var, log_w, s = law_predictive(pred, fit.corr[kept], fit.cells, n_fitted, len(requests), fit.sigma, scale)
        record["laws"] = _laws_record([int(i) for i in kept], s, log_w)
    elif k and kept.size < 2:
        notes.append("fewer than 2 usable hypotheses: the batch explores")
    indices = _batch(pred, var, log_w, cols, k, U_obs, pool_U, pool_C.shape[0], record, notes)
    return _finish(indices, cols, k, record)
