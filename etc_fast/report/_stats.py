"""Module-level statistics on the :mod:`kernels` statistics: the sensitivity summaries of the
paper (S4.1) and the cluster bootstrap over modules of the budget tables (docs/guide/statistics.md).

Cluster bootstrap: a cell's SA is the share of its trials credited; a resample draws the cell's
modules with replacement and each drawn module brings all its trials (rollouts, difficulties, law
versions), so a resampled SA is ``sum(credited) / sum(trials)`` over the drawn modules. A paired
comparison draws the modules the two arms share once for both arms (within-module pairing kept).
The resamples are :func:`kernels.module_resample_means` (seeded NumPy index draws, then exact
integer sums), so every machine gives the same numbers.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np

__all__ = [
    "EffectSummary",
    "summarize_effects",
    "N_DRAWS",
    "SEED",
    "LEVEL",
    "DECISIONS",
    "PairedDifference",
    "cluster_share_draws",
    "cluster_share_interval",
    "paired_cluster_difference",
    "decide",
    "holm",
    "power_needs",
    "design_variance",
    "detectable_difference",
]

#: Module-resampling draws and seed used by the paper.
N_DRAWS = 10_000
SEED = 0
#: Coverage of every interval in the report.
LEVEL = 0.95
#: The decision of a paired comparison: its 95% interval of SA(A) - SA(B) lies above 0, below 0,
#: or covers 0; fewer than two shared modules are not tested.
DECISIONS = ("A better", "B better", "no separation", "too few modules")


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


def _counts(credited: np.ndarray, trials: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    c = np.asarray(credited, dtype=np.float64)
    n = np.asarray(trials, dtype=np.float64)
    c = c[:, None] if c.ndim == 1 else c
    n = n[:, None] if n.ndim == 1 else n
    if c.shape != n.shape or c.ndim != 2:
        raise ValueError(f"credited and trials must have one shape [modules] or [modules, arms]; got {c.shape} and {n.shape}")
    if c.shape[0] == 0:
        raise ValueError("need at least one module")
    if np.any(n < 1) or np.any(c < 0) or np.any(c > n) or np.any(c != np.rint(c)) or np.any(n != np.rint(n)):
        raise ValueError("counts must be whole numbers with 0 <= credited <= trials and trials >= 1 in every module")
    return c, n


def cluster_share_draws(credited: np.ndarray, trials: np.ndarray, *, n_draws: int = N_DRAWS, seed: int = SEED) -> np.ndarray:
    """SA under module resampling: ``out[b, k] = sum(credited[idx_b, k]) / sum(trials[idx_b, k])``.

    Args:
        credited: Credited trials per module, float or int [m] or [m, k] (k arms sharing the modules).
        trials: Trials per module, same shape, each >= 1.
        n_draws: Resamples.
        seed: Seed of the module draws (one set of draws for every arm).

    Returns:
        float64[n_draws, k] resampled shares.
    """
    import kernels

    c, n = _counts(credited, trials)
    m, k = c.shape
    means = kernels.module_resample_means(np.hstack([c, n]), n_draws=n_draws, seed=seed)
    # the sums are whole numbers; rounding m * mean recovers them exactly whatever the kernel's
    # summation order, so the shares are the same bits on every machine
    sums = np.rint(means * m)
    return sums[:, :k] / sums[:, k:]


def _percentiles(draws: np.ndarray, level: float) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    lo, hi = np.percentile(draws, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(lo), float(hi)


def cluster_share_interval(credited: np.ndarray, trials: np.ndarray, *, n_draws: int = N_DRAWS, seed: int = SEED,
                           level: float = LEVEL) -> tuple[float, float | None, float | None]:
    """A cell's SA and its percentile interval under the cluster bootstrap over modules.

    Returns:
        ``(sa, low, high)``; ``low``/``high`` are ``None`` with fewer than two modules (resampling
        one module says nothing about the spread between modules).
    """
    c, n = _counts(credited, trials)
    sa = float(c[:, 0].sum() / n[:, 0].sum())
    if c.shape[0] < 2:
        return sa, None, None
    lo, hi = _percentiles(cluster_share_draws(c[:, 0], n[:, 0], n_draws=n_draws, seed=seed)[:, 0], level)
    return sa, lo, hi


@dataclasses.dataclass(frozen=True)
class PairedDifference:
    """SA(A) - SA(B) on the modules both arms ran.

    Attributes:
        n_modules: Shared modules.
        n_a / n_b: Trials of each arm in them.
        sa_a / sa_b: Each arm's SA there (share of its trials credited).
        diff: ``sa_a - sa_b``.
        ci_low / ci_high: Percentile interval of the difference under the paired cluster bootstrap
            (``None`` with fewer than two modules).
        p_boot: Two-sided bootstrap p-value ``min(1, 2 * min(P*(d <= 0), P*(d >= 0)))`` over the
            resampled differences (0 when no resample reaches 0: below ``1 / n_draws``).
        decision: One of :data:`DECISIONS` (:func:`decide`).
        module_diffs: The per-module SA differences (for the power note).
        within_var: Mean over modules of the binomial variance of the module difference,
            ``pA(1-pA)/max(nA-1, 1) + pB(1-pB)/max(nB-1, 1)`` (for the power note).
    """

    n_modules: int
    n_a: int
    n_b: int
    sa_a: float
    sa_b: float
    diff: float
    ci_low: float | None
    ci_high: float | None
    p_boot: float | None
    decision: str
    module_diffs: tuple[float, ...]
    within_var: float


def decide(ci_low: float | None, ci_high: float | None) -> str:
    """The stated rule: ``A better`` when the interval lies above 0, ``B better`` when below, else
    ``no separation``; ``too few modules`` without an interval."""
    if ci_low is None or ci_high is None:
        return DECISIONS[3]
    if ci_low > 0.0:
        return DECISIONS[0]
    if ci_high < 0.0:
        return DECISIONS[1]
    return DECISIONS[2]


def paired_cluster_difference(credited_a: np.ndarray, trials_a: np.ndarray, credited_b: np.ndarray, trials_b: np.ndarray, *,
                              n_draws: int = N_DRAWS, seed: int = SEED, level: float = LEVEL) -> PairedDifference:
    """SA(A) - SA(B) with the paired cluster bootstrap: row ``j`` of every argument is module ``j``
    (the modules both arms ran), and each resample draws the modules once for both arms."""
    c = np.column_stack([np.asarray(credited_a, dtype=np.float64), np.asarray(credited_b, dtype=np.float64)])
    n = np.column_stack([np.asarray(trials_a, dtype=np.float64), np.asarray(trials_b, dtype=np.float64)])
    c, n = _counts(c, n)
    m = c.shape[0]
    sa = c.sum(axis=0) / n.sum(axis=0)
    p_mod = c / n
    within = p_mod * (1.0 - p_mod) / np.maximum(n - 1.0, 1.0)
    lo = hi = p = None
    if m >= 2:
        shares = cluster_share_draws(c, n, n_draws=n_draws, seed=seed)
        d = shares[:, 0] - shares[:, 1]
        lo, hi = _percentiles(d, level)
        p = float(min(1.0, 2.0 * min(np.mean(d <= 0.0), np.mean(d >= 0.0))))
    return PairedDifference(
        n_modules=m, n_a=int(n[:, 0].sum()), n_b=int(n[:, 1].sum()), sa_a=float(sa[0]), sa_b=float(sa[1]),
        diff=float(sa[0] - sa[1]), ci_low=lo, ci_high=hi, p_boot=p, decision=decide(lo, hi),
        module_diffs=tuple(float(x) for x in p_mod[:, 0] - p_mod[:, 1]), within_var=float(within.sum(axis=1).mean()),
    )


def holm(pvalues: Sequence[float | None]) -> list[float | None]:
    """Holm's step-down adjustment of one family of p-values (``None`` stays ``None``): the
    ``i``-th smallest of ``k`` becomes ``max_{j <= i} min(1, (k - j + 1) p_(j))``."""
    given = [(p, i) for i, p in enumerate(pvalues) if p is not None]
    k = len(given)
    out: list[float | None] = [None] * len(pvalues)
    running = 0.0
    for rank, (p, i) in enumerate(sorted(given)):
        running = max(running, min(1.0, (k - rank) * p))
        out[i] = running
    return out


def power_needs(between_var: float, within_var: float, trials0: float, delta: float, *, n_modules: int,
                alpha: float = 1.0 - LEVEL, power: float = 0.8) -> tuple[int | None, float | None]:
    """Normal approximation for a paired difference of module means (docs/guide/statistics.md).

    The mean over ``m`` modules of the module differences has variance
    ``(sb2 + w * t0 / t) / m`` with ``sb2 = between_var`` the between-module variance of the true
    differences (the observed variance of the module differences minus ``w``, at least 0), ``w`` the within-module (binomial) variance at ``t0`` trials per module and arm,
    and ``t`` the trials per module and arm planned. With ``z = z_{1-alpha/2} + z_{power}``:

    - modules needed at ``t = t0``: ``ceil(z**2 (sb2 + w) / delta**2)``;
    - trials per module and arm needed with ``n_modules`` modules:
      ``t = w t0 / (n_modules delta**2 / z**2 - sb2)``, ``None`` when the bracket is <= 0 (no number
      of rollouts reaches the power: the modules themselves vary too much).

    Returns:
        ``(modules needed, trials per module and arm needed)``.
    """
    from statistics import NormalDist

    z = NormalDist().inv_cdf(1.0 - alpha / 2.0) + NormalDist().inv_cdf(power)
    sb2 = max(0.0, between_var)
    modules = math.ceil(z**2 * (sb2 + within_var) / delta**2 - 1e-9)
    room = n_modules * delta**2 / z**2 - sb2
    if within_var <= 0.0:
        trials = 1.0 if room >= 0.0 else None
    else:
        trials = within_var * trials0 / room if room > 0.0 else None
    return max(1, modules), trials


def design_variance(trials: Sequence[Sequence[int]], *, between_family: float, between_law: float,
                    within: float) -> float:
    """Variance of a cell's paired SA difference (the share credited of A minus that of B, over
    every trial of the cell) under a two-level model of the true differences.

    ``trials[c][i]`` is the trials per arm of law ``i`` of family ``c`` (its rollouts). A trial
    pair's difference is ``delta + u_c + e_i + eps``: ``u_c`` the family's effect (variance
    ``between_family``), ``e_i`` the law's (variance ``between_law``), ``eps`` the trial pair's own
    (variance ``within``, at most ``pA(1 - pA) + pB(1 - pB)``). The pooled difference weights each
    trial alike, so with ``N`` trials per arm, ``n_c`` in family ``c`` and ``n_i`` on law ``i``::

        Var = between_family * sum_c (n_c / N)^2 + between_law * sum_i (n_i / N)^2 + within / N

    Raises:
        ValueError: no trials, a negative count or a negative variance.
    """
    if min(between_family, between_law, within) < 0.0:
        raise ValueError("variances must be >= 0")
    counts = [[int(n) for n in fam] for fam in trials]
    if any(n < 0 for fam in counts for n in fam):
        raise ValueError("trial counts must be >= 0")
    total = sum(sum(fam) for fam in counts)
    if total <= 0:
        raise ValueError("a design needs at least one trial")
    fam_share = sum((sum(fam) / total) ** 2 for fam in counts)
    law_share = sum((n / total) ** 2 for fam in counts for n in fam)
    return between_family * fam_share + between_law * law_share + within / total


def detectable_difference(variance: float, *, comparisons: int = 1, alpha: float = 1.0 - LEVEL,
                          power: float = 0.8) -> float:
    """Smallest paired difference found with probability ``power`` by a two-sided test at ``alpha``
    Holm-adjusted over ``comparisons`` (normal approximation): ``(z(1 - alpha / (2k)) + z(power))
    * sqrt(variance)``. Holm's first step is Bonferroni's ``alpha / k``; a comparison that clears it
    clears Holm whatever the others give, so this is the difference the design detects for sure of
    the adjustment (the later steps can only need less).

    Raises:
        ValueError: a negative variance, ``comparisons`` < 1, or ``alpha`` / ``power`` outside (0, 1).
    """
    from statistics import NormalDist

    if variance < 0.0 or comparisons < 1 or not 0.0 < alpha < 1.0 or not 0.0 < power < 1.0:
        raise ValueError("need variance >= 0, comparisons >= 1 and alpha, power in (0, 1)")
    z = NormalDist().inv_cdf(1.0 - alpha / (2.0 * comparisons)) + NormalDist().inv_cdf(power)
    return z * math.sqrt(variance)
