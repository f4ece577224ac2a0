"""Noise-aware step, stage 4: the scored share of the batch, on points where the noise lets the
consistent hypotheses be told apart.

A pool point is informative where the kept hypotheses' calibrated predictions differ by more than
``KAPPA_DISAGREE`` noise levels (:func:`kernels.relative_disagreement`); the paper's scored step
(eq. S2/S3, S4 and the diverse batch, :func:`etc_fast.acquisition.plan_step_arrays`) runs on those
only. ``random`` draws its scored share from every available point.
"""

from __future__ import annotations

import dataclasses

import numpy as np

from etc_fast.acquisition._estimate import CommitteeFit
from etc_fast.acquisition._paper import StepResult, plan_step_arrays
from etc_fast.acquisition._records import KAPPA_DISAGREE, NoiseOptions
from kernels.noise import relative_disagreement
from kernels.select import select_random


@dataclasses.dataclass(frozen=True)
class ScoredPicks:
    """Stage 4's outcome.

    Attributes:
        picks: Pool indices picked by scoring, in pick order (at most the scored share).
        scored: The paper's step on the informative points (None when none was run).
        n_informative: Available points where the kept hypotheses disagree by more than the noise.
        fallback: The paper's fit filter fell back to the whole (kept) committee.
        notes: Plain-language account for the policy.
    """

    picks: list[int]
    scored: StepResult | None = None
    n_informative: int = 0
    fallback: bool = False
    notes: tuple[str, ...] = ()


def score_informative(fit: CommitteeFit, y: np.ndarray, pool_U: np.ndarray, cols: np.ndarray, method: str, n_score: int,
                      seed: int, options: NoiseOptions, noisy: bool, predicted: bool) -> ScoredPicks:
    """Stage 4: up to ``n_score`` scored picks among the available points ``cols`` (pool indices).

    Args:
        fit: Stages 1-3 (:func:`etc_fast.acquisition._estimate.fit_committee`).
        y: float64[n_obs] the observed outputs.
        pool_U: float64[n_pool, d] the pool's unit coordinates.
        cols: int64 pool indices of the available points.
        method, n_score, seed: The step's method, its scored share of the batch, its seed.
        options, noisy: As for :func:`etc_fast.acquisition.plan_noisy_step`.
        predicted: The previous batch was predicted to within the noise (the stopping rule may
            drop the unfilled slots, so they are not announced as moved to exploration).
    """
    if method == "random":
        if not (n_score and cols.size):
            return ScoredPicks([])
        r = select_random(np.ones(cols.size, dtype=bool), n_score, seed=seed)
        return ScoredPicks([int(cols[j]) for j in r])
    kept = fit.kept
    if not (kept.size >= 2 and cols.size):
        return ScoredPicks([], notes=("fewer than 2 usable hypotheses: the batch explores",) if n_score else ())
    notes: list[str] = []
    if options.noise_aware and noisy and fit.n_consistent < 2:
        inf_mask = np.zeros(cols.size, dtype=bool)  # one law fits: nothing to choose between
        notes.append("only one hypothesis fits to the noise level, so the batch checks it in unexplored regions")
    else:
        D = relative_disagreement(fit.a[kept, None] * fit.H_pool[kept] + fit.b[kept, None], n_points=fit.H_pool.shape[1])
        with np.errstate(invalid="ignore"):
            inf_mask = np.isfinite(D) & (D > KAPPA_DISAGREE * fit.sigma)
    n_inf = int(inf_mask.sum())
    picks: list[int] = []
    scored = None
    if n_score and n_inf:
        sub = np.flatnonzero(inf_mask)
        scored = plan_step_arrays(
            fit.H_obs[kept], y, fit.H_pool[kept][:, sub], pool_U[cols[sub]], method, min(n_score, n_inf),
            seed=seed, pool_indices=cols[sub], threshold=np.inf, max_keep=max(2, int(kept.size)), min_keep=2,
        )  # fmt: skip
        picks = [int(i) for i in scored.indices]
    if n_score > len(picks) and options.noise_aware and noisy and not predicted:
        notes.append(
            f"{n_inf} unmeasured point(s) where the hypotheses differ by more than {KAPPA_DISAGREE:g}x the noise; "
            f"{n_score - len(picks)} scored slot(s) moved to exploration"
        )
    return ScoredPicks(picks, scored, n_inf, bool(scored is not None and scored.fallback_used), tuple(notes))
