"""Selection on a simulated system: score the pool by how the committee's simulated series differ
(``variance``, ``pairwise``) or draw (``random``), then take a diverse top-k (the paper's S2.2
diversity in the pool's unit coordinates). The noise-aware version is in :mod:`._series_noise`."""

from __future__ import annotations

import dataclasses
import itertools
from typing import Any

import numpy as np

#: Smallest unit-cube distance between two points of one planner batch (diversity, S2.2).
MIN_SEPARATION = 0.05


@dataclasses.dataclass
class SeriesStep:
    """A batch chosen on a system: pool ``indices`` in selection order and what the record keeps."""

    indices: np.ndarray
    record: dict[str, Any]
    replicate_rows: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros(0, dtype=np.int64))
    error: str | None = None
    fallback_used: bool = False

    def to_record(self) -> dict[str, Any]:
        return dict(self.record)


def series_scores(pred: np.ndarray, method: str, precision: float) -> np.ndarray:
    """Each pool point's committee score from predicted series ``pred`` (float64[P, n, ch, T]):
    ``variance`` by :func:`series_disagreement`, ``pairwise`` by the mean of the same score over
    hypothesis pairs; ``-inf`` where no score is finite."""
    from etc_fast.systems import quiet, series_disagreement

    if method == "variance":
        score = series_disagreement(pred, precision=precision)
    else:
        pairs = [series_disagreement(pred[[a, b]], precision=precision) for a, b in itertools.combinations(range(pred.shape[0]), 2)]
        with quiet():
            score = np.nanmean(np.stack(pairs), axis=0)
    return np.where(np.isfinite(score), score, -np.inf)


def diverse_top(score: np.ndarray, idx: np.ndarray, pool_U: np.ndarray, k: int) -> tuple[list[int], list[float]]:
    """The best ``k`` candidates by ``score`` (pool indices ``idx``, one score each), skipping any
    closer than :data:`MIN_SEPARATION` (unit-cube distance) to one already taken; returns the pool
    indices in pick order and their scores. Candidates without a finite score are never taken."""
    order = np.argsort(-score, kind="stable")
    chosen: list[int] = []
    scores: list[float] = []
    for j in order:
        if len(chosen) >= k or not np.isfinite(score[j]):
            break
        i = int(idx[j])
        if all(np.linalg.norm(pool_U[i] - pool_U[c]) >= MIN_SEPARATION for c in chosen):
            chosen.append(i)
            scores.append(float(score[j]))
    return chosen, scores


def select_series(progs: list[Any] | None, module: str, system: str, pool_C: np.ndarray, pool_U: np.ndarray,
                  available: np.ndarray, *, method: str, k: int, seed: int, precision: float) -> SeriesStep:
    """Choose up to ``k`` available pool requests by the disagreement of simulated series.

    ``progs`` are the committee's calibrated programs (``None``: random selection, also for a
    committee of fewer than two). ``variance`` scores a candidate by :func:`series_disagreement`,
    ``pairwise`` by the mean of the same score over hypothesis pairs (:func:`series_scores`); the
    batch takes the best candidates by score, skipping any closer than :data:`MIN_SEPARATION`
    (unit-cube distance) to one already in the batch (:func:`diverse_top`). ``random`` draws ``k``
    candidates with ``seed``.
    """
    from etc_fast.expr import pack
    from etc_fast.systems import predict

    idx_av = np.flatnonzero(available)
    if progs is None:
        rng = np.random.default_rng(seed)
        drawn = sorted(rng.choice(idx_av, size=k, replace=False).tolist())
        return SeriesStep(indices=np.asarray(drawn, dtype=np.int64), record={"method": "random", "seed": seed})
    pred = predict(module, system, pack(progs), pool_C[idx_av])
    score = series_scores(pred, method, precision)
    chosen, scores = diverse_top(score, idx_av, pool_U, k)
    record = {"method": method, "seed": seed, "scores": scores}
    return SeriesStep(indices=np.asarray(chosen, dtype=np.int64), record=record,
                      error=None if chosen else "no pool point received a finite score")
