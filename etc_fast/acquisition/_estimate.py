"""Noise-aware step, stages 1-3: calibrate the committee, estimate the noise, keep what fits it.

:func:`fit_committee` parses and calibrates the committee as the paper does (affine ``a h + b``,
:func:`kernels.calibrate`), measures each fit's relative residual RMS, estimates the relative noise
(:func:`estimate_noise`: replicate pairs, else the best fit's residuals) and keeps the hypotheses
consistent with that noise (:func:`consistent_rows`). Its :class:`CommitteeFit` is what the later
stages read.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np

from etc_fast.acquisition._paper import Committee
from etc_fast.acquisition._records import KAPPA_FIT, MIN_REPLICATE_PAIRS, NOISE_FLOOR, NoiseEstimate, NoiseOptions
from kernels.calibrate import calibrate
from kernels.noise import relative_residual_rms

_MAX_KEEP = 4
"""Most hypotheses kept (the paper's fit filter keeps 4)."""


@dataclasses.dataclass(frozen=True)
class CommitteeFit:
    """The committee after stages 1-3: one row per parseable hypothesis, in committee order.

    Attributes:
        positions: Committee position of each row.
        H_obs: float64[n_rows, n_obs] the rows' values at the observations.
        H_pool: float64[n_rows, n_avail] their values at the available pool points.
        a, b: float64[n_rows] the affine calibration of each row (:func:`kernels.calibrate`).
        P_obs: float64[n_rows, n_obs] calibrated values at the observations (NaN rows where the
            fit is invalid).
        noise: The :class:`NoiseEstimate` (a noiseless lab: 0, basis ``noiseless``).
        kept: int64 rows consistent with the noise (at most 4, best fit first), else the two best
            fits.
        n_consistent: How many rows fitted to the noise level.
        sigma: The noise level later stages judge against: the estimate when the step is noise
            aware and has one, else 0.
    """

    positions: tuple[int, ...]
    H_obs: np.ndarray
    H_pool: np.ndarray
    a: np.ndarray
    b: np.ndarray
    P_obs: np.ndarray
    noise: NoiseEstimate
    kept: np.ndarray
    n_consistent: int
    sigma: float


def fit_committee(hypotheses: Sequence[str], variables: tuple[str, ...], X_obs: np.ndarray, y: np.ndarray,
                  pool_X: np.ndarray, cols: np.ndarray, options: NoiseOptions, noisy: bool) -> CommitteeFit:
    """Stages 1-3 on the parseable hypotheses (the others are skipped).

    Args:
        hypotheses: Committee texts.
        variables: Task variable names (the columns of ``X_obs`` and ``pool_X``).
        X_obs: float64[n_obs, d] observed inputs; y: float64[n_obs] outputs.
        pool_X: float64[n_pool, d] the pool; cols: int64 pool indices of the available points.
        options: The :class:`NoiseOptions`; noisy: the lab is noisy (a noiseless one has noise 0
            and every valid fit is consistent).
    """
    from etc_fast.expr import ExprError, parse

    programs, positions = [], []
    for h, text in enumerate(hypotheses):
        if not isinstance(text, str):
            continue
        try:
            programs.append(parse(text, variables))
        except ExprError:
            continue
        positions.append(h)
    noise = NoiseEstimate(0.0 if not noisy else None, "noiseless" if not noisy else "none", 0)
    if not programs:
        none = np.zeros((0, y.size))
        return CommitteeFit((), none, np.zeros((0, cols.size)), np.zeros(0), np.zeros(0), none, noise,
                            np.zeros(0, dtype=np.int64), 0, _judged_sigma(noise, options))
    com = Committee(programs)
    H_obs = com.evaluate(X_obs)
    a, b, _n_pairs, ok, _err = calibrate(H_obs, y)
    P_obs = a[:, None] * H_obs + b[:, None]
    P_obs[~ok] = np.nan
    rel, cnt = relative_residual_rms(P_obs, y)
    if noisy and options.noise_aware:
        noise = estimate_noise(rel, cnt, X_obs, y)
        if noise.hypothesis >= 0:
            noise = dataclasses.replace(noise, hypothesis=positions[noise.hypothesis])
    kept, n_consistent = consistent_rows(rel, ok, noise, options, noisy)
    H_pool = com.evaluate(pool_X[cols])
    return CommitteeFit(tuple(positions), H_obs, H_pool, a, b, P_obs, noise, kept, n_consistent,
                        _judged_sigma(noise, options))


def consistent_rows(rel: np.ndarray, ok: np.ndarray, noise: NoiseEstimate, options: NoiseOptions,
                    noisy: bool) -> tuple[np.ndarray, int]:
    """Stage 3: ``(kept rows, n_consistent)``.

    Valid fits in order of relative residual RMS ``rel``; with a noise estimate (noise aware), the
    consistent ones are those within ``KAPPA_FIT`` noise levels (all valid fits in a noiseless
    lab): the best 4 of them, or the two best fits when fewer than two are consistent. Otherwise
    the 4 best fits (``n_consistent`` 0).
    """
    valid = np.flatnonzero(ok & np.isfinite(rel))
    order = valid[np.argsort(rel[valid], kind="stable")]
    if options.noise_aware and noise.sigma is not None:
        tol = KAPPA_FIT * max(noise.sigma, NOISE_FLOOR) if noisy else np.inf
        consistent = order[rel[order] <= tol]
        return (consistent[:_MAX_KEEP] if consistent.size >= 2 else order[:2]), int(consistent.size)
    return order[:_MAX_KEEP], 0


def _judged_sigma(noise: NoiseEstimate, options: NoiseOptions) -> float:
    return noise.sigma if (options.noise_aware and noise.sigma is not None) else 0.0


def replicate_noise(X_obs, y_obs) -> tuple[float | None, int]:
    """Relative noise from repeated measurements: rows of ``X_obs`` that are equal.

    Each group of ``m >= 2`` finite, nonzero outputs at one input contributes ``m - 1`` degrees of
    freedom of the relative deviations from its mean. Returns ``(sigma, pairs)``; sigma is None
    without a repeated point.
    """
    X = np.asarray(X_obs, dtype=np.float64)
    y = np.asarray(y_obs, dtype=np.float64)
    if X.shape[0] < 2:
        return None, 0
    _, inv, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    ss = 0.0
    dof = 0
    for g in np.flatnonzero(counts >= 2):
        v = y[inv == g]
        v = v[np.isfinite(v) & (v != 0)]
        if v.size < 2:
            continue
        mu = v.mean()
        if mu == 0:
            continue
        r = (v - mu) / abs(mu)
        ss += float(r @ r)
        dof += v.size - 1
    if dof == 0:
        return None, 0
    return float(np.sqrt(ss / dof)), dof


def estimate_noise(rel_rms: np.ndarray, counts: np.ndarray, X_obs, y_obs, n_params: int = 2) -> NoiseEstimate:
    """The planner's noise estimate from replicates, else from the committee's residuals.

    Args:
        rel_rms: float64[n_hyp] relative residual RMS of each calibrated hypothesis (NaN: no fit).
        counts: int64[n_hyp] observations behind each.
        X_obs, y_obs: The observations (for replicates).
        n_params: Parameters fitted per hypothesis by the calibration (``a``, ``b``): the residual
            RMS is scaled by ``sqrt(n / (n - n_params))``.
    """
    sig, pairs = replicate_noise(X_obs, y_obs)
    if sig is not None and pairs >= MIN_REPLICATE_PAIRS:
        return NoiseEstimate(max(sig, NOISE_FLOOR), "replicates", pairs)
    best, best_h, best_n = None, -1, 0
    for h in range(rel_rms.size):
        e, c = float(rel_rms[h]), int(counts[h])
        if not np.isfinite(e) or c <= n_params:
            continue
        s = e * float(np.sqrt(c / (c - n_params)))
        if best is None or s < best:
            best, best_h, best_n = s, h, c
    if best is None:
        if sig is not None:
            return NoiseEstimate(max(sig, NOISE_FLOOR), "replicates", pairs)
        return NoiseEstimate(None, "none", 0)
    if sig is not None:  # one replicate pair: the residual estimate bounded by it from above is not safe; average
        best = float(np.sqrt((best * best + sig * sig) / 2.0))
        return NoiseEstimate(max(best, NOISE_FLOOR), "residuals", best_n, best_h)
    return NoiseEstimate(max(best, NOISE_FLOOR), "residuals", best_n, best_h)
