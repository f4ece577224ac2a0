"""Module-level sensitivity statistics (paper S4.1) on the :mod:`kernels` statistics."""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

__all__ = ["EffectSummary", "summarize_effects", "N_DRAWS", "SEED"]

#: Module-resampling draws and seed used by the paper.
N_DRAWS = 10_000
SEED = 0


@dataclasses.dataclass(frozen=True)
class EffectSummary:
    """Summary of per-module effects (e.g. planner-family minus baseline SA, in pp).

    Attributes:
        n_modules: Modules with an effect.
        mean: Mean effect.
        ci_low / ci_high: 95% percentile interval of the mean over module resamples.
        n_pos / n_neg / n_zero: Modules with positive, negative and zero effect.
        loo_low / loo_high: Range of the mean after leaving each module out (``None`` with < 2 modules).
        sign_flip_p: Exact two-sided sign-flip p-value (``None`` beyond
            ``kernels.SIGN_FLIP_MAX_M`` modules, where enumeration is not offered).
    """

    n_modules: int
    mean: float | None
    ci_low: float | None
    ci_high: float | None
    n_pos: int
    n_neg: int
    n_zero: int
    loo_low: float | None
    loo_high: float | None
    sign_flip_p: float | None


def summarize_effects(effects: Sequence[float] | np.ndarray, *, n_draws: int = N_DRAWS, seed: int = SEED, level: float = 0.95) -> EffectSummary:
    """Mean, resampling interval, sign counts, leave-one-out range and sign-flip p of module effects.

    Args:
        effects: One effect per module (finite).
        n_draws: Module-resampling draws.
        seed: Seed of the resampling draws.
        level: Interval coverage.
    """
    import kernels

    e = np.ascontiguousarray(effects, dtype=np.float64)
    n = int(e.size)
    if n == 0:
        return EffectSummary(0, None, None, None, 0, 0, 0, None, None, None)
    bad = np.flatnonzero(~np.isfinite(e))
    if bad.size:
        raise ValueError(f"module effects must be finite; effect {int(bad[0])} of {n} is {e[bad[0]]}")
    lo, hi = kernels.module_bootstrap_interval(e, n_draws=n_draws, seed=seed, level=level)
    loo_lo, loo_hi = kernels.leave_one_out_range(e) if n >= 2 else (math.nan, math.nan)
    p = kernels.sign_flip_pvalue(e) if n <= kernels.SIGN_FLIP_MAX_M else math.nan
    tol = 1e-12
    return EffectSummary(
        n_modules=n,
        mean=float(e.mean()),
        ci_low=float(lo),
        ci_high=float(hi),
        n_pos=int(np.sum(e > tol)),
        n_neg=int(np.sum(e < -tol)),
        n_zero=int(np.sum(np.abs(e) <= tol)),
        loo_low=None if math.isnan(loo_lo) else float(loo_lo),
        loo_high=None if math.isnan(loo_hi) else float(loo_hi),
        sign_flip_p=None if math.isnan(p) else float(p),
    )
