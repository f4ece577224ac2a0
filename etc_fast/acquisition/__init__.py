"""The planner's acquisition step (DESIGN "Planner step"; docs/noise.md for the noise-aware step)."""

from etc_fast.acquisition._estimate import estimate_noise, replicate_noise
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
from etc_fast.acquisition._stop import (
    check_prediction,
    extreme_pick,
    fitted_constants,
    law_noise,
    prediction_error,
    relative_scale,
)

__all__ = [
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
