"""The noise-aware planner step (docs/guide/noise.md), assembled from its stages.

:func:`plan_noisy_step` checks its arguments, then runs :mod:`._estimate` (calibrate, estimate the
noise, keep what fits it), :mod:`._score` (scored picks where the kept laws disagree by more than
the noise), :mod:`._split` (replicates; maximin exploration) and :mod:`._stop` (the best law for
the prediction check, the stopping rule, the extremes test), in that order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from etc_fast.acquisition._estimate import CommitteeFit, fit_committee
from etc_fast.acquisition._paper import _check_method_k, _float_array
from etc_fast.acquisition._records import NoiseOptions, NoisyStepResult, PredictionCheck
from etc_fast.acquisition._score import score_informative
from etc_fast.acquisition._split import batch_split, explore, replicate_rows
from etc_fast.acquisition._stop import best_law, extreme_slot, settled_before, stop_slots

_EXTREME_NOTE = ("one exploration point tests the best-fitting hypothesis where it predicts an output outside the "
                 "measured range")


def plan_noisy_step(
    hypotheses: Sequence[str],
    variables: Sequence[str],
    X_obs,
    y_obs,
    U_obs,
    pool_X,
    pool_U,
    available,
    *,
    method: str,
    k: int,
    seed: int,
    options: NoiseOptions,
    noisy: bool,
    prior: PredictionCheck | None = None,
) -> NoisyStepResult:
    """One noise-aware planner step (docs/guide/noise.md).

    1. Parse and calibrate the committee as the paper does; relative residual RMS of each fit.
    2. Estimate the relative noise: replicate pairs, else the best fit's residuals (``noisy`` only;
       a noiseless lab has noise 0).
    3. Keep the hypotheses consistent with that noise (residual <= ``KAPPA_FIT`` sigma, the best
       ``max_keep`` = 4), else the two best fits.
    4. Informative points: where the kept hypotheses' calibrated predictions differ by more than
       ``KAPPA_DISAGREE`` sigma. The paper's scored step (eq. S2/S3, S4, diversity) runs on those
       only, for the scored share of the batch; ``random`` draws from every available point.
    5. Replicates: the observed point where the kept hypotheses disagree most (at least
       ``KAPPA_DISAGREE`` sigma), else, before any repeat exists, the best fit's worst residual.
    6. Exploration: with ``test_extremes``, the first slot goes to the point where the best
       kept law's calibrated prediction lies farthest outside the measured outputs
       (:func:`extreme_pick`, whole domain); the rest of the batch by greedy maximin distance
       (unit coordinates, inside ``EXPLORE_MARGIN``) to the observations and the points picked.
    7. Stopping rule (``stop_when_settled``): ``prior`` says how the previous step's best law
       predicted the batch measured after it (:func:`check_prediction`: calibrated before the
       batch, compared with the batch; the batch's explored points lie far from what it was
       fitted to). If that error was at most ``KAPPA_FIT`` times the noise estimate of that step,
       scored slots that find no informative point (all of them when fewer than two laws are
       consistent) are dropped, not explored; a batch keeps at least one point.

    The arguments not listed below are those of :func:`plan_step`.

    Args:
        U_obs: float64[n_obs, d] unit coordinates of the observations.
        options: The :class:`NoiseOptions`.
        noisy: The task says the lab is noisy.
        prior: The previous batch's :class:`PredictionCheck` (the stopping rule; None: none).
    """
    k = _check_method_k(method, k)
    variables = tuple(variables)
    X_obs, y, U_obs, pool_X, pool_U, cols = _checked_arrays(X_obs, y_obs, U_obs, pool_X, pool_U, available)
    n_score, n_exp, n_rep = batch_split(k, options.explore_fraction, options.replicates if noisy else 0, int(y.size))

    fit = fit_committee(hypotheses, variables, X_obs, y, pool_X, cols, options, noisy)  # 1-3
    best, best_ab, best_noise = best_law(fit, hypotheses, y)
    predicted = settled_before(options, noisy, prior)
    scored = score_informative(fit, y, pool_U, cols, method, n_score, seed, options, noisy, predicted)  # 4
    picks, notes = scored.picks, list(scored.notes)
    reps = replicate_rows(fit, X_obs, y, n_rep)  # 5
    n_exp += n_rep - len(reps)
    if predicted:  # 7
        picks, n_exp, n_dropped = stop_slots(method, picks, n_score, n_exp, len(reps), fit.n_consistent, prior, notes)
    else:
        n_exp, n_dropped = n_exp + n_score - len(picks), 0
    explored, tested = _exploration(fit, y, U_obs, pool_U, cols, pool_X.shape[0], picks, n_exp,
                                    options.test_extremes and noisy)  # 6
    if tested:
        notes.append(_EXTREME_NOTE)

    indices = np.asarray(picks + explored, dtype=np.int64)
    error = None
    if indices.size == 0 and not reps and k > 0:
        error = "no available pool points" if cols.size == 0 else "nothing could be selected"
    return NoisyStepResult(
        method, k, seed, indices, np.asarray(explored, dtype=np.int64), np.asarray(reps, dtype=np.int64), fit.noise,
        tuple(fit.positions[int(r)] for r in fit.kept), fit.n_consistent, scored.n_informative, scored.scored, error,
        scored.fallback, pool_U[indices] if indices.size else np.zeros((0, pool_U.shape[1])), tuple(notes),
        pool_X[np.asarray(explored, dtype=np.int64)], prior, bool(predicted and n_dropped), n_dropped,
        best, best_ab, best_noise,
    )  # fmt: skip


def _checked_arrays(X_obs, y_obs, U_obs, pool_X, pool_U, available):
    """The step's arrays as float64 (checked), and the pool indices of the available points."""
    X_obs = _float_array(X_obs, "X_obs", 2)
    y = _float_array(y_obs, "y_obs", 1)
    U_obs = _float_array(U_obs, "U_obs", 2)
    pool_X = _float_array(pool_X, "pool_X", 2)
    pool_U = _float_array(pool_U, "pool_U", 2)
    mask = np.asarray(available)
    if U_obs.shape != X_obs.shape:
        raise ValueError(f"U_obs must have the shape of X_obs {X_obs.shape}, got {U_obs.shape}")
    if mask.dtype != np.bool_ or mask.shape != (pool_X.shape[0],):
        raise ValueError(f"available must be a boolean mask of shape ({pool_X.shape[0]},), got {mask.dtype} {mask.shape}")
    return X_obs, y, U_obs, pool_X, pool_U, np.flatnonzero(mask).astype(np.int64)


def _exploration(fit: CommitteeFit, y: np.ndarray, U_obs: np.ndarray, pool_U: np.ndarray, cols: np.ndarray,
                 n_pool: int, picks: list[int], n_exp: int, extremes: bool) -> tuple[list[int], bool]:
    """Stage 6: ``n_exp`` exploration picks, the extremes test's first (``extremes``, a kept law,
    a point that qualifies), then maximin; and whether the extremes test placed one."""
    explored: list[int] = []
    taken = np.zeros(n_pool, dtype=bool)
    taken[picks] = True
    if n_exp and extremes and fit.kept.size:
        ext = extreme_slot(fit, y, cols, taken)
        if ext >= 0:
            explored.append(ext)
            taken[ext] = True
            n_exp -= 1
    return explored + explore(U_obs, pool_U, cols, taken, picks + explored, n_exp), bool(explored)
