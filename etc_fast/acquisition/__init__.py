"""The planner's acquisition step: which pool points to measure next.

* :mod:`._paper` — the paper's step (DESIGN "Planner step" 1-7): :func:`plan_step`,
  :func:`plan_step_arrays`, :class:`Committee`, :class:`StepResult`, on :mod:`kernels`.
* The noise-aware step (docs/guide/noise.md), :func:`plan_noisy_step` in :mod:`._noisy`, composed of
  :mod:`._estimate` (calibration, the noise estimate, the hypotheses consistent with it),
  :mod:`._score` (disagreement judged against the noise; the paper's scored picks on the
  informative points), :mod:`._split` (the batch's shares, replicates, maximin exploration) and
  :mod:`._stop` (the best law's prediction check, the stopping rule, the extremes test); its
  thresholds, options and records are in :mod:`._records`.
* The GP-surrogate rules (``gp_ucb``, ``gp_var``; docs/guide/acquisition.md): :func:`plan_gp_step` in
  :mod:`._gp`, on :mod:`kernels.gp`, with the targets of each tier (:func:`equation_target`,
  :func:`series_target`).
* The information rule (``mi``; docs/guide/acquisition.md): :func:`plan_mi_step` (equations) and
  :func:`plan_series_mi_step` (systems) in :mod:`._mi`, on :mod:`kernels.mi`, with the laws'
  predictive distributions (:func:`law_predictive`).
* Selection on a simulated system: :func:`select_series` in :mod:`._series` (the paper's rules on
  simulated series, with diversity) and its noise-aware version :func:`plan_series_noisy_step` in
  :mod:`._series_noise` (the same stages, on series).

The public names are those below; the modules are private.
"""

from etc_fast.acquisition._estimate import estimate_noise, replicate_noise
from etc_fast.acquisition._gp import (
    GP_METHODS,
    KAPPA_UCB,
    MIN_GP_OBSERVATIONS,
    GPStep,
    equation_target,
    plan_gp_step,
    series_target,
)
from etc_fast.acquisition._mi import (
    MI_ABS_FLOOR,
    MI_NOISE_FLOOR,
    MIStep,
    law_predictive,
    plan_mi_step,
    plan_series_mi_step,
)
from etc_fast.acquisition._noisy import plan_noisy_step
from etc_fast.acquisition._paper import METHODS, Committee, StepResult, plan_step, plan_step_arrays
from etc_fast.acquisition._records import (
    EXPLORE_MARGIN,
    KAPPA_DISAGREE,
    KAPPA_FIT,
    MIN_REPLICATE_PAIRS,
    NOISE_FLOOR,
    NoiseEstimate,
    NoiseOptions,
    NoisyStepResult,
    PredictionCheck,
)
from etc_fast.acquisition._series import MIN_SEPARATION, SeriesStep, diverse_top, select_series, series_scores
from etc_fast.acquisition._series_noise import (
    SeriesCheck,
    SeriesNoise,
    SeriesNoisyStep,
    calibrate_committee,
    check_series_prediction,
    describe_series_step,
    plan_series_noisy_step,
)
from etc_fast.acquisition._stop import (
    check_prediction,
    extreme_pick,
    fitted_constants,
    law_noise,
    prediction_error,
    relative_scale,
)

__all__ = [
    "GP_METHODS",
    "KAPPA_UCB",
    "MIN_GP_OBSERVATIONS",
    "GPStep",
    "equation_target",
    "plan_gp_step",
    "series_target",
    "MI_ABS_FLOOR",
    "MI_NOISE_FLOOR",
    "MIStep",
    "law_predictive",
    "plan_mi_step",
    "plan_series_mi_step",
    "MIN_SEPARATION",
    "SeriesStep",
    "diverse_top",
    "select_series",
    "series_scores",
    "SeriesCheck",
    "SeriesNoise",
    "SeriesNoisyStep",
    "calibrate_committee",
    "check_series_prediction",
    "describe_series_step",
    "plan_series_noisy_step",
    "EXPLORE_MARGIN",
    "KAPPA_DISAGREE",
    "KAPPA_FIT",
    "METHODS",
    "MIN_REPLICATE_PAIRS",
    "NOISE_FLOOR",
    "Committee",
    "NoiseEstimate",
    "NoiseOptions",
    "NoisyStepResult",
    "PredictionCheck",
    "StepResult",
    "check_prediction",
    "estimate_noise",
    "extreme_pick",
    "fitted_constants",
    "law_noise",
    "plan_noisy_step",
    "plan_step",
    "plan_step_arrays",
    "prediction_error",
    "relative_scale",
    "replicate_noise",
]
