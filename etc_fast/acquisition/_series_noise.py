"""The noise-aware planner step on simulated systems: docs/guide/noise.md's rules for series.

The systems lab runs :func:`plan_series_noisy_step` in place of the paper's series selection
(:func:`etc_fast.labs._systems.select_series`) when a noise knob is on in a noisy lab
(``SystemLab.noisy_selection``). It is the equation step (``etc_fast.acquisition.plan_noisy_step``)
with a system's experiment in place of one input row: an experiment returns a series of readings
(channels x time points, or one reading), each with NewtonBench's relative noise
``y (1 + sigma z)`` drawn independently, and a hypothesis predicts a series only through the
public forward model (after its free constants are fitted through it).

Stages (docs/guide/noise.md, "On simulated systems"):

1. **Calibration and residuals**: each hypothesis's free constants are fitted through the simulator
   (:func:`calibrate_committee`, as the paper's step does); its simulated series at the observed
   experiments give the relative residual RMS over the compared readings (:func:`relative_residuals`:
   finite observations at least :data:`CELL_FLOOR` of their channel's typical magnitude), corrected
   for its fitted constants: ``rms sqrt(n / (n - p))``, ``p`` the constants the lab fitted plus the
   numbers in its text that the proposer fitted (:func:`etc_fast.acquisition.fitted_constants`).
2. **Noise estimate**: repeated experiments (identical requests; :func:`replicate_noise`) once they
   give :data:`MIN_REPLICATE_DOF` degrees of freedom, else the best corrected residual
   (:func:`estimate_series_noise`); never below ``NOISE_FLOOR``.
3. **Fit filter**: hypotheses whose corrected residual is at most ``KAPPA_FIT`` sigma are consistent;
   the :data:`MAX_KEPT` best are kept, else the two best fits (nothing is then scored).
4. **Informative points**: pool points where the kept hypotheses' simulated series differ by more
   than ``KAPPA_DISAGREE`` sigma (:func:`series_gap`: the root-sum-square over readings of each
   reading's relative spread; one reading gives the equation rule). The scored share is chosen among
   them by the configured rule (``variance``/``pairwise``: ``series_disagreement`` with the estimate
   as the reading's precision, then the paper's diversity rule; ``random``: uniform draws from every
   available point).
5. **Replicates**: the observed experiment where the kept hypotheses' series differ most (more than
   ``KAPPA_DISAGREE`` sigma), else, before any repeat exists, the best fit's worst-fitted experiment.
6. **Exploration**: with ``test_extremes`` the first slot goes where the best law's simulated series
   lies farthest outside the measured outputs (:func:`series_extreme`); the rest by greedy maximin
   distance (``kernels.noise.maximin_pick``) in the pool's unit coordinates to every experiment run
   and every point picked, inside ``EXPLORE_MARGIN`` unless too few candidates remain.
7. **Stopping rule** (``stop_when_settled``): the step keeps the best law's simulated series of the
   batch it chose; once the batch was measured, :func:`check_series_prediction` compares them
   (relative RMS); when that error was within ``KAPPA_FIT`` times the noise, the next step drops
   scored slots that find nothing left to tell apart (never the whole batch).
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from etc_fast.acquisition._records import (
    EXPLORE_MARGIN,
    KAPPA_DISAGREE,
    KAPPA_FIT,
    NOISE_FLOOR,
    NoiseOptions,
)
from etc_fast.acquisition._series import diverse_top, series_scores
from etc_fast.acquisition._stop import fitted_constants

__all__ = [
    "CELL_FLOOR",
    "MAX_KEPT",
    "MIN_REPLICATE_DOF",
    "NONFINITE_MISFIT",
    "SeriesCheck",
    "SeriesFit",
    "SeriesNoise",
    "SeriesNoisyStep",
    "batch_split",
    "calibrate_committee",
    "channel_typical",
    "check_series_prediction",
    "describe_series_step",
    "estimate_series_noise",
    "fit_series_committee",
    "plan_series_noisy_step",
    "relative_residuals",
    "replicate_noise",
    "series_extreme",
    "series_gap",
]

#: A reading is compared relatively only where its magnitude is at least this fraction of its
#: channel's typical magnitude (the median absolute observation): the calibration's weighting floor
#: (``etc_fast.systems._planning.calibrate``). Below it NewtonBench's absolute noise floor, not the
#: relative noise, sets the reading (a body at rest, a position that starts at 0).
CELL_FLOOR = 1e-3
#: Relative error counted at a compared reading where a hypothesis's simulation has no finite value
#: (it crashed or never started where the apparatus returned a number).
NONFINITE_MISFIT = 1.0
#: Degrees of freedom of repeated readings before the replicate estimate replaces the residual one
#: (one repeated series gives one per reading compared).
MIN_REPLICATE_DOF = 2
#: Most consistent hypotheses kept for scoring.
MAX_KEPT = 4
#: Relative precision of a printed reading (7 significant digits), the scored share's floor.
READING_PRECISION = 5e-7


# ------------------------------------------------------------------------------------------------
# Residuals, replicates and the noise estimate (NumPy only)
# ------------------------------------------------------------------------------------------------
def channel_typical(series: np.ndarray) -> np.ndarray:
    """float64[n_ch]: each channel's median absolute finite reading over ``series`` (float64[n, ch,
    T]); 1 where a channel has none or it is 0."""
    from etc_fast.systems import quiet

    obs = np.asarray(series, dtype=np.float64)
    if obs.ndim != 3:
        raise ValueError(f"series must be [experiments, channels, times], got shape {obs.shape}")
    with quiet():
        t = np.nanmedian(np.where(np.isfinite(obs), np.abs(obs), np.nan), axis=(0, 2)) if obs.shape[0] else np.full(obs.shape[1], np.nan)
    return np.where(np.isfinite(t) & (t > 0), t, 1.0)


def compared(values: np.ndarray, typical: np.ndarray) -> np.ndarray:
    """bool[..., ch, T]: the readings compared relatively (finite, at least :data:`CELL_FLOOR` of the
    channel's typical magnitude)."""
    v = np.asarray(values, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.isfinite(v) & (np.abs(v) >= CELL_FLOOR * np.asarray(typical)[:, None])


def relative_residuals(pred: np.ndarray, observed: np.ndarray, typical: np.ndarray) -> np.ndarray:
    """``(p - y) / |y|`` at each compared reading of ``observed`` (float64[n, ch, T]), NaN elsewhere.

    Args:
        pred: float64[P, n, ch, T] simulated series of P hypotheses at the same experiments.
        observed: The measured series.
        typical: float64[ch] the channels' typical magnitudes (:func:`channel_typical`).

    A non-finite simulated value at a compared reading counts :data:`NONFINITE_MISFIT`.
    """
    p = np.asarray(pred, dtype=np.float64)
    y = np.asarray(observed, dtype=np.float64)
    if p.ndim != 4 or p.shape[1:] != y.shape:
        raise ValueError(f"pred must be [P, *{y.shape}], got shape {p.shape}")
    mask = compared(y, typical)
    with np.errstate(all="ignore"):
        r = (p - y[None]) / np.abs(y)[None]
    r = np.where(np.isfinite(r), r, NONFINITE_MISFIT)
    return np.where(mask[None], r, np.nan)


def residual_rms(pred: np.ndarray, observed: np.ndarray, typical: np.ndarray) -> tuple[np.ndarray, int]:
    """Each hypothesis's relative residual RMS over the compared readings, and how many there are
    (the same for all: the readings decide). NaN without a compared reading."""
    r = relative_residuals(pred, observed, typical)
    cells = int(compared(observed, typical).sum())
    if cells == 0:
        return np.full(r.shape[0], np.nan), 0
    return np.sqrt(np.nansum(r * r, axis=(1, 2, 3)) / cells), cells


def request_key(request: Mapping[str, Any]) -> str:
    """A request's identity (its controls, exactly): repeated experiments share it."""
    return json.dumps({str(k): request[k] for k in request}, sort_keys=True, default=repr)


def replicate_noise(requests: Sequence[Mapping[str, Any]], series: np.ndarray,
                    typical: np.ndarray) -> tuple[float | None, int, int]:
    """Relative noise from experiments run more than once (identical requests).

    Each reading of a group of ``m >= 2`` repeats with at least two finite values (compared: see
    :func:`compared`, on the group mean) contributes its finite count minus one degrees of freedom
    of the relative deviations from its mean. Returns ``(sigma, dof, experiments in repeated
    groups)``; sigma is None without a repeated reading.
    """
    y = np.asarray(series, dtype=np.float64)
    groups: dict[str, list[int]] = {}
    for i, r in enumerate(requests):
        groups.setdefault(request_key(r), []).append(i)
    ss, dof, n_exp = 0.0, 0, 0
    for rows in groups.values():
        if len(rows) < 2:
            continue
        V = y[rows]
        fin = np.isfinite(V)
        cnt = fin.sum(axis=0)
        with np.errstate(all="ignore"):
            mu = np.where(cnt > 0, np.where(fin, V, 0.0).sum(axis=0) / np.maximum(cnt, 1), np.nan)
        ok = (cnt >= 2) & compared(mu, typical)
        if not ok.any():
            continue
        with np.errstate(all="ignore"):
            R = np.where(fin & ok[None], (V - mu[None]) / np.abs(mu)[None], 0.0)
        ss += float(np.sum(R * R))
        dof += int((cnt - 1)[ok].sum())
        n_exp += len(rows)
    if dof == 0:
        return None, 0, 0
    return float(np.sqrt(ss / dof)), dof, n_exp


@dataclasses.dataclass(frozen=True)
class SeriesNoise:
    """The planner's estimate of the relative noise of one reading.

    Attributes:
        sigma: Estimated relative noise (None: none yet; the knob ``noise_aware`` off: None too).
        basis: ``replicates``, ``residuals`` (the best-fitting hypothesis), ``none`` or ``off``.
        readings: Degrees of freedom (replicates) or readings compared (residuals).
        experiments: Experiments it rests on.
        hypothesis: Position (among the parsed hypotheses) of the best fit (residual basis), else -1.
    """

    sigma: float | None
    basis: str
    readings: int = 0
    experiments: int = 0
    hypothesis: int = -1

    def describe(self) -> str:
        if self.basis == "off":
            return "not estimated (noise_aware is off)"
        if self.sigma is None:
            return "no noise estimate yet (no hypothesis fits the experiments)"
        pct = f"{100 * self.sigma:.3g}%"
        if self.basis == "residuals" and self.sigma > 0.5:
            return (f"unknown: no hypothesis reproduces the {self.experiments} experiments to within 50% (best relative "
                    f"residual {pct}); the planner explores instead of trusting the hypotheses' disagreement")
        if self.basis == "replicates":
            return (f"about {pct} relative per reading (from {self.readings} repeated reading(s) in {self.experiments} "
                    "repeated experiments)")
        return (f"about {pct} relative per reading (upper estimate from the residuals of the best-fitting hypothesis "
                f"on {self.readings} readings of {self.experiments} experiments; lower if that hypothesis is incomplete)")

    def to_record(self) -> dict[str, Any]:
        return dataclasses.asdict(self)


def corrected_residuals(rms: np.ndarray, cells: int, n_fitted: Sequence[int]) -> np.ndarray:
    """``rms sqrt(n / (n - p))`` per hypothesis (``n`` readings, ``p`` its fitted constants); NaN
    where no degree of freedom is left or the residual is undefined."""
    rms = np.asarray(rms, dtype=np.float64)
    out = np.full(rms.shape, np.nan)
    for h, p in enumerate(n_fitted):
        if np.isfinite(rms[h]) and cells > p:
            out[h] = rms[h] * np.sqrt(cells / (cells - p))
    return out


def estimate_series_noise(rms: np.ndarray, cells: int, n_fitted: Sequence[int], requests: Sequence[Mapping[str, Any]],
                          series: np.ndarray, typical: np.ndarray, experiments: int | None = None) -> SeriesNoise:
    """The noise estimate: replicates (at least :data:`MIN_REPLICATE_DOF` degrees of freedom), else the
    best residual corrected for its fitted constants (:func:`corrected_residuals`); with fewer
    repeated readings than that, their estimate and the residual one are averaged in square, as on
    equations.

    Args:
        rms: float64[n_hyp] relative residual RMS (:func:`residual_rms`).
        cells: Readings behind each.
        n_fitted: Constants fitted per hypothesis.
        requests, series, typical: The experiments (for replicates).
        experiments: Experiments behind the residuals (default: all).
    """
    sig, dof, n_rep = replicate_noise(requests, series, typical)
    if sig is not None and dof >= MIN_REPLICATE_DOF:
        return SeriesNoise(max(sig, NOISE_FLOOR), "replicates", dof, n_rep)
    corr = corrected_residuals(rms, cells, n_fitted)
    ok = np.flatnonzero(np.isfinite(corr))
    n_exp = len(requests) if experiments is None else int(experiments)
    if ok.size == 0:
        if sig is not None:
            return SeriesNoise(max(sig, NOISE_FLOOR), "replicates", dof, n_rep)
        return SeriesNoise(None, "none")
    h = int(ok[np.argmin(corr[ok])])
    best = float(corr[h])
    if sig is not None:
        best = float(np.sqrt((best * best + sig * sig) / 2.0))
    return SeriesNoise(max(best, NOISE_FLOOR), "residuals", cells, n_exp, h)


# ------------------------------------------------------------------------------------------------
# Disagreement and extremes of simulated series
# ------------------------------------------------------------------------------------------------
def series_gap(pred: np.ndarray, typical: np.ndarray) -> np.ndarray:
    """How far a committee's simulated series lie apart at each experiment, relative to a reading.

    Per reading (channel, time point) with at least two finite predictions, the relative spread
    ``(max - min) / ((|max| + |min|) / 2)`` (``kernels.noise.relative_disagreement``), counted where
    that mean magnitude is at least :data:`CELL_FLOOR` of the channel's typical magnitude; per
    experiment the root-sum-square over those readings: one experiment resolves a difference between
    two laws when this exceeds a few noise levels (the readings' noise is independent, so their
    evidence adds in square). A single reading gives the equation rule.

    Args:
        pred: float64[P, n, ch, T].
        typical: float64[ch].

    Returns:
        float64[n]; NaN where no reading is compared.
    """
    from etc_fast.systems import quiet

    p = np.asarray(pred, dtype=np.float64)
    if p.ndim != 4:
        raise ValueError(f"pred must be [P, n, channels, times], got shape {p.shape}")
    if p.shape[1] == 0:
        return np.zeros(0)
    with quiet():
        fin = np.isfinite(p)
        cnt = fin.sum(axis=0)
        hi = np.nanmax(np.where(fin, p, np.nan), axis=0)
        lo = np.nanmin(np.where(fin, p, np.nan), axis=0)
        mid = (np.abs(hi) + np.abs(lo)) / 2.0
        ok = (cnt >= 2) & (mid >= CELL_FLOOR * np.asarray(typical)[:, None])
        D = np.where(ok, (hi - lo) / np.where(ok, mid, 1.0), 0.0)
    any_ok = ok.reshape(ok.shape[0], -1).any(axis=1)
    out = np.sqrt(np.sum((D * D).reshape(D.shape[0], -1), axis=1))
    return np.where(any_ok, out, np.nan)


def series_extreme(pred: np.ndarray, observed: np.ndarray, min_gap: float, available: np.ndarray) -> int:
    """The candidate where a law's simulated series lies farthest outside the measured outputs.

    Per channel, the distance of each simulated reading from the range of that channel's measured
    readings: in log magnitude when the measured readings and the prediction have one sign (relative
    noise), else in units of the measured range (``etc_fast.acquisition.extreme_pick``'s rule per
    channel); ``min_gap`` (relative) is subtracted (``log1p(min_gap)`` in log magnitude). A
    candidate's excess is its largest over channels and time points.

    Args:
        pred: float64[n, ch, T] the law's simulated series at the candidates.
        observed: float64[n_obs, ch, T] the measured series.
        min_gap: Relative distance a reading must exceed.
        available: bool[n] the candidates that may be picked.

    Returns:
        The candidate's row, or -1 when no available candidate's series leaves the measured ranges
        by more than ``min_gap``.
    """
    p = np.asarray(pred, dtype=np.float64)
    y = np.asarray(observed, dtype=np.float64)
    av = np.asarray(available, dtype=bool)
    if p.ndim != 3 or y.ndim != 3 or p.shape[1:] != y.shape[1:] or av.shape != (p.shape[0],):
        raise ValueError(f"series_extreme: shapes pred {p.shape}, observed {y.shape}, available {av.shape} do not match")
    excess = np.full(p.shape[0], -np.inf)
    for ch in range(p.shape[1]):
        v = y[:, ch, :]
        v = v[np.isfinite(v)]
        if v.size < 2:
            continue
        lo, hi = float(v.min()), float(v.max())
        q = p[:, ch, :]
        with np.errstate(all="ignore"):
            if lo > 0 or hi < 0:
                sgn = 1.0 if lo > 0 else -1.0
                ok = np.isfinite(q) & (q * sgn > 0)
                lq = np.log(np.abs(q))
                llo, lhi = np.log(min(abs(lo), abs(hi))), np.log(max(abs(lo), abs(hi)))
                d = np.maximum(np.maximum(lq - lhi, llo - lq), 0.0) - np.log1p(min_gap)
            else:
                ok = np.isfinite(q)
                d = np.maximum(np.maximum(q - hi, lo - q), 0.0) / max(hi - lo, 1e-300) - min_gap
        e = np.where(ok, d, -np.inf).max(axis=1, initial=-np.inf)
        excess = np.maximum(excess, e)
    excess = np.where(av, excess, -np.inf)
    if excess.size == 0:
        return -1
    j = int(np.argmax(excess))
    return j if excess[j] > 0 else -1


# ------------------------------------------------------------------------------------------------
# The step
# ------------------------------------------------------------------------------------------------
def calibrate_committee(texts: Sequence[str], names: Sequence[str], module: str, system: str,
                        requests: Sequence[Mapping[str, Any]], series: np.ndarray) -> list[Any]:
    """The hypotheses ``texts`` parsed, with their free (named) constants fitted to the observed
    series through the public forward model (``etc_fast.systems._planning.calibrate``, 60 calls at
    most; the paper's step on systems calibrates the same way)."""
    from etc_fast.expr import parse
    from etc_fast.systems import calibrate

    progs = []
    for t in texts:
        prog = parse(t, tuple(names))
        if prog.nuisance and len(requests):
            prog = calibrate(prog, module, system, list(requests), series, max_nfev=60).program
        progs.append(prog)
    return progs


@dataclasses.dataclass(frozen=True)
class SeriesFit:
    """Stages 1-3 on a system (:func:`fit_series_committee`).

    Attributes:
        progs: The calibrated programs, in committee order.
        C_obs: float64[n_obs, controls] the experiments run (None before any).
        pred_obs: float64[P, n_obs, ch, T] each program's simulated series there (None without
            programs or experiments).
        n_fitted: Constants fitted per program (the lab's and the proposer's).
        corr: float64[P] relative residual RMS corrected for them (NaN: none).
        cells: Readings compared.
        noise: The :class:`SeriesNoise` (``off`` when not noise aware).
        kept: int64 programs kept (consistent, best first, at most :data:`MAX_KEPT`; else the two
            best fits).
        n_consistent: Programs consistent with the noise.
        sigma: The noise level later stages judge against (0 without an estimate).
    """

    progs: list[Any]
    C_obs: np.ndarray | None
    pred_obs: np.ndarray | None
    n_fitted: tuple[int, ...]
    corr: np.ndarray
    cells: int
    noise: SeriesNoise
    kept: np.ndarray
    n_consistent: int
    sigma: float


def fit_series_committee(texts: Sequence[str], names: Sequence[str], module: str, system: str,
                         requests: Sequence[Mapping[str, Any]], series: np.ndarray, typical: np.ndarray,
                         noise_aware: bool) -> SeriesFit:
    """Stages 1-3 (module docstring): calibrate ``texts``, their corrected residuals, the noise
    estimate (``noise_aware``) and the fit filter."""
    from etc_fast.expr import pack
    from etc_fast.systems import controls_matrix, predict
    from etc_fast.systems import spec as system_spec

    n_obs = len(requests)
    progs = calibrate_committee(texts, names, module, system, requests, series) if texts else []
    C_obs = controls_matrix(system_spec(module, system), list(requests)) if n_obs else None
    pred_obs = predict(module, system, pack(progs), C_obs) if progs and n_obs else None
    if pred_obs is not None:
        rms, cells = residual_rms(pred_obs, series, typical)
    else:
        rms, cells = np.full(len(progs), np.nan), 0
    n_fitted = tuple(len(p.nuisance) + fitted_constants(t) for p, t in zip(progs, texts))
    corr = corrected_residuals(rms, cells, n_fitted)
    if noise_aware:
        noise = estimate_series_noise(rms, cells, n_fitted, requests, series, typical)
    else:
        noise = SeriesNoise(None, "off")
    valid = np.flatnonzero(np.isfinite(corr))
    order = valid[np.argsort(corr[valid], kind="stable")]
    n_consistent = 0
    if noise_aware and noise.sigma is not None:
        consistent = order[corr[order] <= KAPPA_FIT * max(noise.sigma, NOISE_FLOOR)]
        n_consistent = int(consistent.size)
        kept = consistent[:MAX_KEPT] if consistent.size >= 2 else order[:2]
    else:
        kept = order[:MAX_KEPT]
    sigma = noise.sigma if (noise_aware and noise.sigma is not None) else 0.0
    return SeriesFit(progs, C_obs, pred_obs, n_fitted, corr, cells, noise, kept, n_consistent, sigma)


def batch_split(k: int, explore_fraction: float, replicates: int, n_obs: int) -> tuple[int, int, int]:
    """``(scored, explore, replicate)`` slots of a batch of ``k`` (as on equations: at least one
    exploration slot when the fraction is positive and more than one slot is free)."""
    n_rep = min(int(replicates), k, n_obs)
    n_exp = min(int(np.floor(explore_fraction * k + 0.5)), k - n_rep)
    if explore_fraction > 0 and n_exp == 0 and k - n_rep > 1:
        n_exp = 1
    return k - n_rep - n_exp, n_exp, n_rep


@dataclasses.dataclass(frozen=True)
class SeriesCheck:
    """How a step's best law predicted the series of the batch it chose, measured after the step.

    Attributes:
        hypothesis: The law's text (as proposed).
        error: Relative RMS ``(p - y) / |y|`` over the batch's compared readings.
        sigma: The noise it is judged against: the larger of the step's estimate and the law's own
            corrected residual then.
        experiments: Experiments with a compared reading.
        readings: Readings compared.
    """

    hypothesis: str
    error: float
    sigma: float
    experiments: int
    readings: int

    @property
    def passed(self) -> bool:
        """The law predicted the batch to within ``KAPPA_FIT`` times the noise."""
        return self.error <= KAPPA_FIT * max(self.sigma, NOISE_FLOOR)

    def to_record(self) -> dict[str, Any]:
        return {**dataclasses.asdict(self), "passed": self.passed}


@dataclasses.dataclass
class SeriesNoisyStep:
    """One noise-aware step on a system (see the module docstring).

    Attributes:
        method, k, seed: The rule, the batch size (pool points and replicates together), the seed.
        indices: int64 pool indices to run, scored first, then exploration.
        explored: int64 the pool indices among ``indices`` chosen by exploration (the extremes test
            first when it picked one).
        replicate_rows: int64 experiments to run again.
        noise: The :class:`SeriesNoise`.
        hypotheses: The parsed hypotheses (texts as proposed).
        calibrated: Their calibrated texts.
        residuals: Each one's corrected relative residual (NaN: no fit).
        n_fitted: Constants fitted per hypothesis.
        kept: Positions (in ``hypotheses``) kept for scoring, best fit first.
        n_consistent: Hypotheses within ``KAPPA_FIT`` sigma.
        n_informative: Available pool points where the kept hypotheses' series differ by more than
            ``KAPPA_DISAGREE`` sigma.
        scores: Committee scores of the scored picks.
        extreme: Pool index the extremes test chose, None without one.
        error: None, or why nothing could be selected.
        fallback_used: Always False (the paper's inner fit filter does not run on systems; when fewer
            than two hypotheses fit, the scored slots explore and the notes say so).
        notes: Plain-language account of the step (shown to the policy).
        prior: The :class:`SeriesCheck` of the previous batch this step was given (None: none).
        settled: The stopping rule dropped slots.
        n_dropped: Batch slots left unmeasured by the stopping rule.
        best: Text of the best kept hypothesis, None without one.
        best_noise: Its corrected residual.
        batch_pred: float64[m, ch, T] the best law's simulated series of the batch (pool points,
            then replicates), kept for the prediction check; None when the check is off.
        typical: float64[ch] the channels' typical magnitudes before the batch.
    """

    method: str
    k: int
    seed: int
    indices: np.ndarray
    explored: np.ndarray
    replicate_rows: np.ndarray
    noise: SeriesNoise
    hypotheses: tuple[str, ...] = ()
    calibrated: tuple[str, ...] = ()
    residuals: tuple[float, ...] = ()
    n_fitted: tuple[int, ...] = ()
    kept: tuple[int, ...] = ()
    n_consistent: int = 0
    n_informative: int = 0
    scores: tuple[float, ...] = ()
    extreme: int | None = None
    error: str | None = None
    fallback_used: bool = False
    notes: tuple[str, ...] = ()
    prior: SeriesCheck | None = None
    settled: bool = False
    n_dropped: int = 0
    best: str | None = None
    best_noise: float | None = None
    batch_pred: np.ndarray | None = None
    typical: np.ndarray = dataclasses.field(default_factory=lambda: np.ones(0))

    def to_record(self) -> dict[str, Any]:
        from etc_fast.core import clip_text

        def num(v: float) -> float | None:
            return float(v) if np.isfinite(v) else None

        rec: dict[str, Any] = {
            "method": self.method, "k": int(self.k), "seed": int(self.seed), "noise_aware": True,
            "error": self.error, "fallback_used": bool(self.fallback_used),
            "noise_estimate": self.noise.to_record(),
            "kept": list(self.kept), "kept_hypotheses": [clip_text(self.hypotheses[i], 2000) for i in self.kept],
            "residuals": [num(r) for r in self.residuals], "n_fitted": list(self.n_fitted),
            "n_consistent": self.n_consistent, "n_informative": self.n_informative,
            "chosen": [int(i) for i in self.indices], "explored": [int(i) for i in self.explored],
            "extreme": self.extreme, "replicate_rows": [int(i) for i in self.replicate_rows],
            "scores": list(self.scores),
            "counts": {"scored": int(len(self.indices) - len(self.explored)), "explored": int(len(self.explored)),
                       "replicates": int(len(self.replicate_rows)), "dropped": int(self.n_dropped)},
            "notes": list(self.notes),
        }
        if self.prior is not None or self.settled or self.n_dropped:
            rec.update(prior_check=None if self.prior is None else self.prior.to_record(),
                       settled=self.settled, n_dropped=self.n_dropped)
        return rec


def _stop_slots(method: str, picks: list[int], n_score: int, n_exp: int, n_rep: int, n_consistent: int,
                prior: SeriesCheck, notes: list[str]) -> tuple[list[int], int, int]:
    """The stopping rule once the previous batch was predicted: ``(picks, exploration slots,
    dropped slots)``; a note says why slots were dropped."""
    if method == "random":  # its scored share is uniform: dropped only when one law is left
        n_dropped, picks = (len(picks), []) if n_consistent < 2 else (0, picks)
    else:
        n_dropped = n_score - len(picks)
    if n_dropped and not picks and n_exp + n_rep == 0:
        n_dropped -= 1  # a batch is never empty: one slot explores
        n_exp += 1
    if n_dropped:
        why = ("only one law fits" if n_consistent < 2
               else "no unused pool experiment is left where the laws' series differ by more than the noise")
        notes.append(f"the best law predicted the last batch's {prior.experiments} experiment(s) before they were run to "
                     f"within the noise (relative RMS {100 * prior.error:.3g}% over {prior.readings} readings) and {why}: "
                     f"{n_dropped} slot(s) of this batch were not run")
    return picks, n_exp, n_dropped


def plan_series_noisy_step(
    texts: Sequence[str],
    names: Sequence[str],
    module: str,
    system: str,
    requests: Sequence[Mapping[str, Any]],
    series: np.ndarray,
    U_obs: np.ndarray,
    pool_C: np.ndarray,
    pool_U: np.ndarray,
    available: np.ndarray,
    *,
    method: str,
    k: int,
    seed: int,
    options: NoiseOptions,
    prior: SeriesCheck | None = None,
) -> SeriesNoisyStep:
    """One noise-aware planner step on a system in a noisy lab (stages: the module docstring).

    Args:
        texts: The committee's parseable hypotheses (expressions over the law's inputs).
        names: The law's input names.
        module, system: The system.
        requests: The experiments run so far; ``series`` (float64[n, ch, T]) their observations.
        U_obs: float64[n, d_pool] their unit coordinates in the pool's domain (NaN rows: not known).
        pool_C: float64[n_pool, n_controls] the pool's controls; ``pool_U`` its unit coordinates.
        available: bool[n_pool] unused pool points.
        method: ``variance``, ``pairwise`` or ``random``.
        k: Batch size (pool points and replicates together).
        seed: Seed of the step (``random`` draws from it).
        options: The noise knobs.
        prior: The previous batch's :class:`SeriesCheck` (the stopping rule; None: none).
    """
    from etc_fast.expr import pack
    from etc_fast.systems import predict
    from kernels.noise import maximin_pick

    if method not in ("variance", "pairwise", "random"):
        raise ValueError(f"method must be variance, pairwise or random, got {method!r}")
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    series = np.asarray(series, dtype=np.float64)
    U_obs = np.asarray(U_obs, dtype=np.float64)
    mask = np.asarray(available)
    n_obs = len(requests)
    if series.shape[0] != n_obs or U_obs.shape[0] != n_obs:
        raise ValueError(f"{n_obs} requests but series {series.shape} and U_obs {U_obs.shape}")
    if mask.dtype != np.bool_ or mask.shape != (pool_C.shape[0],) or pool_U.shape[0] != pool_C.shape[0]:
        raise ValueError(f"available must be a boolean mask of the pool's {pool_C.shape[0]} points")
    texts = tuple(texts)
    cols = np.flatnonzero(mask).astype(np.int64)
    n_score, n_exp, n_rep = batch_split(int(k), options.explore_fraction, options.replicates, n_obs)
    notes: list[str] = []
    typical = channel_typical(series)

    # 1-3: calibration, residuals, the noise estimate, the fit filter
    fit = fit_series_committee(texts, names, module, system, requests, series, typical, options.noise_aware)
    progs, C_obs, pred_obs, n_fitted, corr = fit.progs, fit.C_obs, fit.pred_obs, fit.n_fitted, fit.corr
    noise, kept, n_consistent, sigma = fit.noise, fit.kept, fit.n_consistent, fit.sigma
    predicted = bool(options.stop_when_settled and options.noise_aware and prior is not None and prior.passed)
    kept_progs = [progs[int(i)] for i in kept]

    # 4: the scored share on the informative points
    picks: list[int] = []
    scores: list[float] = []
    n_inf = 0
    pred_pool = None
    if method == "random":
        if n_score and cols.size:
            rng = np.random.default_rng(seed)
            picks = sorted(rng.choice(cols, size=min(n_score, cols.size), replace=False).tolist())
    elif kept.size >= 2 and cols.size:
        pred_pool = predict(module, system, pack(kept_progs), pool_C[cols])
        if options.noise_aware and n_consistent < 2:
            inf_mask = np.zeros(cols.size, dtype=bool)  # one law fits: nothing to choose between
            notes.append("only one hypothesis fits to the noise level, so the batch checks it in unexplored regions")
        else:
            gap = series_gap(pred_pool, typical)
            with np.errstate(invalid="ignore"):
                inf_mask = np.isfinite(gap) & (gap > KAPPA_DISAGREE * sigma)
        n_inf = int(inf_mask.sum())
        if n_score and n_inf:
            score = series_scores(pred_pool[:, inf_mask], method, max(READING_PRECISION, sigma))
            picks, scores = diverse_top(score, cols[inf_mask], pool_U, n_score)
        if n_score > len(picks) and options.noise_aware and n_consistent >= 2 and not predicted:
            notes.append(f"{n_inf} unused pool experiment(s) where the hypotheses' series differ by more than "
                         f"{KAPPA_DISAGREE:g}x the noise; {n_score - len(picks)} scored slot(s) moved to exploration")
    elif n_score:
        notes.append("fewer than 2 usable hypotheses: the batch explores")

    # 5: replicates
    rep_rows: list[int] = []
    if n_rep and pred_obs is not None and kept.size >= 1:
        _sig, dof, _n = replicate_noise(requests, series, typical)
        cand = np.zeros(n_obs)
        if kept.size >= 2 and sigma > 0:
            d_obs = series_gap(pred_obs[kept], typical)
            cand = np.where(np.isfinite(d_obs) & (d_obs > KAPPA_DISAGREE * sigma), d_obs, 0.0)
        if not cand.any() and dof == 0:
            r = relative_residuals(pred_obs[kept[:1]], series, typical)[0]
            with np.errstate(all="ignore"):
                n_c = np.isfinite(r).sum(axis=(1, 2))
                worst = np.sqrt(np.nansum(r * r, axis=(1, 2)) / np.maximum(n_c, 1))
            cand = np.where(n_c > 0, worst, 0.0)
        for j in np.argsort(-cand, kind="stable")[:n_rep]:
            if cand[j] > 0:
                rep_rows.append(int(j))
    n_exp += n_rep - len(rep_rows)
    if predicted:
        assert prior is not None
        picks, n_exp, n_dropped = _stop_slots(method, picks, n_score, n_exp, len(rep_rows), n_consistent, prior, notes)
    else:
        n_exp, n_dropped = n_exp + n_score - len(picks), 0

    # 6: exploration
    explored: list[int] = []
    extreme = None
    taken = np.zeros(pool_C.shape[0], dtype=bool)
    taken[picks] = True
    if n_exp and options.test_extremes and kept.size and cols.size and n_obs:
        best_pool = pred_pool[0] if pred_pool is not None else predict(module, system, pack(kept_progs[:1]), pool_C[cols])[0]
        j = series_extreme(best_pool, series, KAPPA_DISAGREE * max(sigma, NOISE_FLOOR), ~taken[cols])
        if j >= 0:
            extreme = int(cols[j])
            explored.append(extreme)
            taken[extreme] = True
            n_exp -= 1
            notes.append("one exploration experiment tests the best-fitting hypothesis where its simulated output lies "
                         "outside the measured range")
    left = cols[~taken[cols]]
    inner = left[np.all((pool_U[left] >= EXPLORE_MARGIN) & (pool_U[left] <= 1.0 - EXPLORE_MARGIN), axis=1)]
    if inner.size >= n_exp:
        left = inner
    if n_exp and left.size:
        ref = np.vstack([U_obs, pool_U[picks + explored]]) if picks or explored else U_obs
        explored += [int(left[j]) for j in maximin_pick(ref, pool_U[left], n_exp)]
    indices = np.asarray(picks + explored, dtype=np.int64)
    error = None
    if indices.size == 0 and not rep_rows and k > 0:
        error = "no available pool points" if cols.size == 0 else "nothing could be selected"

    # 7: the best law's simulated series of the batch, for the prediction check after it is run
    best = texts[int(kept[0])] if kept.size else None
    best_noise = float(corr[int(kept[0])]) if kept.size and np.isfinite(corr[int(kept[0])]) else None
    batch_pred = None
    if options.stop_when_settled and options.noise_aware and kept.size and noise.sigma and (indices.size or rep_rows):
        C_batch = np.vstack([pool_C[indices], C_obs[rep_rows]]) if rep_rows and C_obs is not None else pool_C[indices]
        batch_pred = predict(module, system, pack(kept_progs[:1]), C_batch)[0]
    return SeriesNoisyStep(
        method=method, k=int(k), seed=int(seed), indices=indices, explored=np.asarray(explored, dtype=np.int64),
        replicate_rows=np.asarray(rep_rows, dtype=np.int64), noise=noise, hypotheses=texts,
        calibrated=tuple(p.text for p in progs), residuals=tuple(float(c) for c in corr), n_fitted=n_fitted,
        kept=tuple(int(i) for i in kept), n_consistent=n_consistent, n_informative=n_inf, scores=tuple(scores),
        extreme=extreme, error=error, notes=tuple(notes), prior=prior, settled=bool(predicted and n_dropped),
        n_dropped=n_dropped, best=best, best_noise=best_noise, batch_pred=batch_pred, typical=typical,
    )  # fmt: skip


def check_series_prediction(step: SeriesNoisyStep, measured: np.ndarray) -> SeriesCheck | None:
    """The :class:`SeriesCheck` of ``step``'s best law on the batch measured after it
    (``measured``: float64[m, ch, T], pool points then replicates); None without a kept
    prediction, a noise estimate or a compared reading."""
    if step.batch_pred is None or step.best is None or not step.noise.sigma:
        return None
    y = np.asarray(measured, dtype=np.float64)
    if y.shape != step.batch_pred.shape:
        raise ValueError(f"measured series {y.shape} do not match the predicted batch {step.batch_pred.shape}")
    r = relative_residuals(step.batch_pred[None], y, step.typical)[0]
    fin = np.isfinite(r)
    n = int(fin.sum())
    if n == 0:
        return None
    error = float(np.sqrt(np.sum(np.where(fin, r * r, 0.0)) / n))
    sigma = max(float(step.noise.sigma), float(step.best_noise or 0.0))
    return SeriesCheck(step.best, error, sigma, int(fin.reshape(fin.shape[0], -1).any(axis=1).sum()), n)


def describe_series_step(step: SeriesNoisyStep, start: int, check: SeriesCheck | None = None) -> str:
    """Plain-language account of a noise-aware batch on a system (the selection feedback; as
    ``etc_fast.diagnostics.describe_noisy_step`` on equations), with the batch's prediction check
    when it was made."""
    n_pool = int(len(step.indices))
    n_exp = int(len(step.explored))
    n_rep = int(len(step.replicate_rows))
    parts = []
    if n_pool - n_exp:
        parts.append(f"{n_pool - n_exp} where the hypotheses' simulated series disagree most")
    if n_exp:
        parts.append(f"{n_exp} to explore (experiments {start + n_pool - n_exp + 1}-{start + n_pool}, far from earlier "
                     "experiments)")
    if n_rep:
        rows = ", ".join(str(int(r) + 1) for r in step.replicate_rows)
        parts.append(f"{n_rep} repeat(s) of experiment(s) {rows} (experiments {start + n_pool + 1}-{start + n_pool + n_rep})")
    lines = ["Batch: " + "; ".join(parts) + "." if parts else "Batch: empty."]
    lines.append("Noise estimate: " + step.noise.describe() + ".")
    lines.extend(f"Note: {n}." for n in step.notes)
    if check is not None:
        verdict = "within the noise" if check.passed else "more than the noise allows: a term may be missing"
        lines.append(f"Before these experiments were run, the best-fitting hypothesis {check.hypothesis} predicted "
                     f"{check.readings} of their readings with a relative RMS error of {100 * check.error:.3g}% ({verdict}).")
    return "\n".join(lines)
