"""The noise-aware step's thresholds, options and records (docs/guide/noise.md).

Every stage of :func:`etc_fast.acquisition.plan_noisy_step` reads these; none of them computes
anything beyond describing itself. The stages: :mod:`._estimate` (calibrate the committee,
estimate the noise, keep the hypotheses consistent with it), :mod:`._score` (where they disagree
by more than the noise, and the paper's scored picks there), :mod:`._split` (the batch's shares,
replicates and maximin exploration), :mod:`._stop` (the best law's prediction check, the stopping
rule and the extremes test); :mod:`._noisy` assembles them.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from etc_fast.acquisition._paper import StepResult, _num
from kernels.rank_reg import EDGE_LO

#: A point's relative disagreement must exceed this many estimated noise levels to drive scored
#: selection (docs/guide/noise.md, rule 4).
KAPPA_DISAGREE = 2.0
#: A hypothesis is consistent with the observations when its relative residual RMS is at most
#: this many estimated noise levels.
KAPPA_FIT = 3.0
#: Smallest noise level the planner estimates (relative).
NOISE_FLOOR = 1e-6
#: Exploration stays this far (unit coordinates) inside the domain's edges, where the paper's
#: boundary ramp (eq. S4, ``edge_lo``) also gives scored points no weight: the corners of a log
#: domain are where laws are most extreme (overflow, singular angles) and least typical.
EXPLORE_MARGIN = EDGE_LO
#: Replicate pairs needed before the replicate estimate replaces the residual estimate.
MIN_REPLICATE_PAIRS = 2


@dataclasses.dataclass(frozen=True)
class NoiseOptions:
    """The noise knobs of a planner (``acquisition: {noise_aware, explore_fraction, replicates}``).

    Attributes:
        noise_aware: Estimate the noise level and judge fits and disagreement against it.
        explore_fraction: Share of each batch chosen by maximin distance to the observations.
        replicates: Most re-measurements of observed points per batch.
        stop_when_settled: With ``noise_aware``: once the best consistent law predicted the last
            batch (before it was measured) to within ``KAPPA_FIT`` noise levels, scored slots that
            find nothing to tell apart are dropped instead of explored (the batch shrinks; see
            :func:`plan_noisy_step`).
        test_extremes: In a noisy lab, the first exploration slot of a batch goes to the pool point
            where the best consistent law's calibrated prediction lies farthest outside the measured
            outputs (:func:`extreme_pick`; the whole domain, no margin), when one predicts beyond
            them by more than ``KAPPA_DISAGREE`` noise levels.
    """

    noise_aware: bool = False
    explore_fraction: float = 0.0
    replicates: int = 0
    stop_when_settled: bool = False
    test_extremes: bool = False


@dataclasses.dataclass(frozen=True)
class NoiseEstimate:
    """The planner's estimate of the relative noise level.

    Attributes:
        sigma: Estimated relative noise (standard deviation of ``y_measured / y_true - 1``).
        basis: ``replicates`` or ``residuals`` (the best-fitting hypothesis), or ``none``.
        n: Replicate pairs or observations it rests on.
        hypothesis: Committee position of the best-fitting hypothesis (residual basis), else -1.
    """

    sigma: float | None
    basis: str
    n: int
    hypothesis: int = -1

    def describe(self) -> str:
        if self.sigma is None:
            return "no noise estimate yet (no hypothesis fits the observations)"
        pct = f"{100 * self.sigma:.3g}%"
        if self.basis == "residuals" and self.sigma > 0.5:
            return (f"unknown: no hypothesis fits the {self.n} observations to within 50% (best relative residual "
                    f"{pct}); the planner explores instead of trusting the hypotheses' disagreement")
        if self.basis == "replicates":
            return f"about {pct} relative (from {self.n} pairs of repeated measurements)"
        return (f"about {pct} relative (upper estimate from the residuals of the best-fitting hypothesis on "
                f"{self.n} observations; lower if that hypothesis is incomplete)")


@dataclasses.dataclass(frozen=True)
class PredictionCheck:
    """How a planner step's best law predicted the batch it chose, measured after the step.

    Attributes:
        hypothesis: The law's text as the committee gave it.
        error: Relative RMS error ``sqrt(mean(((a h - y) / |y|)^2))`` of its prediction on the new
            measurements (finite, nonzero ones), ``a`` its relative scale before the batch.
        sigma: The noise the prediction is judged against: the larger of the step's estimate
            and the noise the law's own residuals implied then (:func:`law_noise`).
        n: Measurements compared.
    """

    hypothesis: str
    error: float
    sigma: float
    n: int

    @property
    def passed(self) -> bool:
        """The law predicted the batch to within ``KAPPA_FIT`` times the noise it was fitted to."""
        return self.error <= KAPPA_FIT * max(self.sigma, NOISE_FLOOR)


@dataclasses.dataclass(slots=True)
class NoisyStepResult:
    """One noise-aware planner step: scored picks, exploration picks and replicates.

    Attributes:
        method: ``variance``, ``pairwise`` or ``random``.
        k: Batch size (pool points and replicates together).
        seed: Seed of the step.
        indices: int64 pool indices to measure, in pick order (scored first, then exploration).
        explored: int64 the pool indices among ``indices`` chosen by exploration.
        replicate_rows: int64 observation rows to measure again.
        noise: The :class:`NoiseEstimate`.
        kept: Committee positions judged consistent with the noise (or the two best fits).
        n_consistent: How many fitted to the noise level.
        n_informative: Available pool points where the kept hypotheses disagree by more than
            ``KAPPA_DISAGREE`` noise levels.
        scored: The paper's step on the informative points (None when none was run).
        error: None, or why nothing could be selected.
        fallback_used: As in :class:`StepResult`.
        chosen_u: float64[len(indices), d] unit coordinates of the picks.
        notes: Plain-language account of the step (shown to the policy).
        explored_X: float64[len(explored), d] task inputs of the exploration picks.
        prior: The :class:`PredictionCheck` of the previous batch this step was given (None: none).
        settled: The stopping rule held: the previous batch was predicted to within the noise
            and the scored slots found nothing left to tell apart.
        n_dropped: Batch slots left unmeasured by the stopping rule.
        best: Text of the best consistent hypothesis (committee order), None without a fit.
        best_ab: Its calibration for the prediction check: ``(a, 0)`` with ``a`` the relative
            least-squares scale on the observations of this step (:func:`relative_scale`).
        best_noise: The noise its residuals imply (:func:`law_noise`), None where undefined.
    """

    method: str
    k: int
    seed: int | None
    indices: np.ndarray
    explored: np.ndarray
    replicate_rows: np.ndarray
    noise: NoiseEstimate
    kept: tuple[int, ...] = ()
    n_consistent: int = 0
    n_informative: int = 0
    scored: StepResult | None = None
    error: str | None = None
    fallback_used: bool = False
    chosen_u: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))
    notes: tuple[str, ...] = ()
    explored_X: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))
    prior: PredictionCheck | None = None
    settled: bool = False
    n_dropped: int = 0
    best: str | None = None
    best_ab: tuple[float, float] = (1.0, 0.0)
    best_noise: float | None = None

    def to_record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "method": self.method, "k": int(self.k), "seed": None if self.seed is None else int(self.seed),
            "noise_aware": True, "error": self.error, "fallback_used": bool(self.fallback_used),
            "noise_estimate": {"sigma": self.noise.sigma, "basis": self.noise.basis, "n": self.noise.n,
                               "hypothesis": self.noise.hypothesis},
            "kept": list(self.kept), "n_consistent": self.n_consistent, "n_informative": self.n_informative,
            "chosen": [int(i) for i in self.indices], "explored": [int(i) for i in self.explored],
            "replicate_rows": [int(i) for i in self.replicate_rows],
            "chosen_u": [[_num(x) for x in row] for row in self.chosen_u], "notes": list(self.notes),
        }
        if self.prior is not None or self.settled or self.n_dropped:
            rec.update(prior_check=None if self.prior is None else dataclasses.asdict(self.prior),
                       settled=self.settled, n_dropped=self.n_dropped)
        if self.scored is not None:
            rec["scored"] = self.scored.to_record()
        return rec
