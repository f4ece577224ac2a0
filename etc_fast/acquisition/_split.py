"""Noise-aware step, stages 5-6: the batch's shares, replicates and maximin exploration.

A batch of ``k`` splits into scored slots (:mod:`._score`), exploration slots and replicates
(:func:`batch_split`). Replicates re-measure the observed point where the kept hypotheses disagree
most, else (before any repeat exists) the best fit's worst residual (:func:`replicate_rows`).
Exploration fills the remaining slots by greedy maximin distance to the observations and the points
already picked (:func:`explore`, :func:`kernels.maximin_pick`), inside ``EXPLORE_MARGIN``.
"""

from __future__ import annotations

import numpy as np

from etc_fast.acquisition._estimate import CommitteeFit, replicate_noise
from etc_fast.acquisition._records import EXPLORE_MARGIN, KAPPA_DISAGREE
from kernels.noise import maximin_pick, relative_disagreement


def batch_split(k: int, explore_fraction: float, replicates: int, n_obs: int) -> tuple[int, int, int]:
    """``(scored, explore, replicate)`` slots of a batch of ``k``."""
    n_rep = min(int(replicates), k, n_obs)
    n_exp = min(int(np.floor(explore_fraction * k + 0.5)), k - n_rep)
    if explore_fraction > 0 and n_exp == 0 and k - n_rep > 1:
        n_exp = 1
    return k - n_rep - n_exp, n_exp, n_rep


def replicate_rows(fit: CommitteeFit, X_obs: np.ndarray, y: np.ndarray, n_rep: int) -> list[int]:
    """Stage 5: up to ``n_rep`` observation rows to measure again, most informative first.

    A row qualifies where the kept hypotheses' calibrated values differ by more than
    ``KAPPA_DISAGREE`` noise levels; when none does and no point was measured twice yet, the rows
    with the best fit's largest relative residuals. Rows with a zero score are never repeated.
    """
    n_obs = int(y.size)
    kept = fit.kept
    if not (n_rep and kept.size >= 1 and n_obs):
        return []
    _sig_rep, pairs = replicate_noise(X_obs, y)
    cand = np.zeros(n_obs)
    if kept.size >= 2 and fit.sigma > 0:
        Dobs = relative_disagreement(fit.P_obs[kept], n_points=fit.P_obs.shape[1])
        cand = np.where(np.isfinite(Dobs) & (Dobs > KAPPA_DISAGREE * fit.sigma), Dobs, 0.0)
    if not cand.any() and pairs == 0:
        with np.errstate(all="ignore"):
            res = np.abs((fit.P_obs[kept[0]] - y) / np.abs(y))
        cand = np.where(np.isfinite(res), res, 0.0)
    return [int(j) for j in np.argsort(-cand, kind="stable")[:n_rep] if cand[j] > 0]


def explore(U_obs: np.ndarray, pool_U: np.ndarray, cols: np.ndarray, taken: np.ndarray, chosen: list[int],
            n_exp: int) -> list[int]:
    """Stage 6: ``n_exp`` pool indices by greedy maximin distance (unit coordinates).

    Args:
        U_obs: float64[n_obs, d] unit coordinates of the observations.
        pool_U: float64[n_pool, d] the pool's unit coordinates.
        cols: int64 pool indices of the available points.
        taken: bool[n_pool] points already picked in this batch (``chosen``, in pick order).
        chosen: The picked pool indices, whose distance counts like an observation's.
        n_exp: Exploration slots.

    Candidates are the available points not taken, restricted to those inside ``EXPLORE_MARGIN``
    when enough of them are left.
    """
    left = cols[~taken[cols]]
    inner = left[np.all((pool_U[left] >= EXPLORE_MARGIN) & (pool_U[left] <= 1.0 - EXPLORE_MARGIN), axis=1)]
    if inner.size >= n_exp:
        left = inner
    if not (n_exp and left.size):
        return []
    ref = np.vstack([U_obs, pool_U[chosen]]) if chosen else U_obs
    return [int(left[j]) for j in maximin_pick(ref, pool_U[left], n_exp)]
