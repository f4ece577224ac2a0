"""Module-level sensitivity summaries (paper S4.1): resampling interval, leave-one-out range,
exact sign-flip p-value; and the module resamples themselves (the report's cluster bootstrap).

Each takes the ``m`` per-module effects (planner minus baseline, one number per module), or for
:func:`module_resample_means` ``m`` rows of per-module values (several columns resampled together).
"""

import numpy as np
from numba import njit

from kernels._checks import named_errors
from kernels._jit import JIT

__all__ = ["module_bootstrap_interval", "module_resample_means", "leave_one_out_range", "sign_flip_pvalue", "SIGN_FLIP_MAX_M"]

SIGN_FLIP_MAX_M = 24
"""Largest number of effects :func:`sign_flip_pvalue` enumerates (2**24 sign assignments)."""

_TIE_TOL = 1e-12  # a flipped mean ties the observed one when |mean| >= |observed| - _TIE_TOL


@njit(**JIT)
def _resample_means(effects, idx):
    """Mean of each resample.

    Parameters
    ----------
    effects : float64[m]
        Module effects.
    idx : int64[n_draws, m]
        Resampled module indices, each in ``[0, m)``.

    Returns
    -------
    means : float64[n_draws]
        ``means[b] = mean(effects[idx[b, :]])``.
    """
    n_draws, m = idx.shape
    means = np.empty(n_draws)
    for b in range(n_draws):
        s = 0.0
        for j in range(m):
            s += effects[idx[b, j]]
        means[b] = s / m
    return means


@njit(**JIT)
def _leave_one_out_means(effects):
    """Mean of the effects with each module left out in turn.

    Parameters
    ----------
    effects : float64[m]
        Module effects, ``m >= 2``.

    Returns
    -------
    means : float64[m]
        ``means[i] = mean(effects[j] for j != i)``, summed directly (no subtraction from the
        total, so ties and zeros stay exact).
    """
    m = effects.shape[0]
    means = np.empty(m)
    for i in range(m):
        s = 0.0
        for j in range(m):
            if j != i:
                s += effects[j]
        means[i] = s / (m - 1)
    return means


@njit(**JIT)
def _sign_flip_count(effects, tol):
    """Count sign assignments whose |mean| reaches the observed |mean|.

    Parameters
    ----------
    effects : float64[m]
        Module effects, ``1 <= m <= 24``.
    tol : float
        Tie tolerance: assignment ``s`` counts when ``|mean(s * effects)| >= |mean(effects)| - tol``.

    Returns
    -------
    count : int
        Number of the ``2**m`` assignments that count.

    Notes
    -----
    An assignment and its negation have the same ``|mean|``, so only the ``2**(m-1)`` assignments
    with the last sign fixed to ``+`` are summed, and each counts twice. Every sum is computed
    afresh in index order, so ties are decided on exactly the same arithmetic for every mask.
    """
    m = effects.shape[0]
    observed = 0.0
    for j in range(m):
        observed += effects[j]
    threshold = abs(observed / m) - tol
    count = 0
    half = 1 << (m - 1)
    for mask in range(half):
        s = 0.0
        for j in range(m - 1):
            if (mask >> j) & 1:
                s -= effects[j]
            else:
                s += effects[j]
        s += effects[m - 1]
        if abs(s / m) >= threshold:
            count += 2
    return count


def _effects(effects, min_m=1):
    e = np.ascontiguousarray(effects, dtype=np.float64)
    if e.ndim != 1:
        raise ValueError(f"effects must be one-dimensional, got shape {e.shape}")
    if e.shape[0] < min_m:
        raise ValueError(f"need at least {min_m} effect{'s' if min_m > 1 else ''}, got {e.shape[0]}")
    bad = np.flatnonzero(~np.isfinite(e))
    if bad.size:
        raise ValueError(f"effects must be finite; effects[{bad[0]}] = {e[bad[0]]}")
    return e


@named_errors
def module_bootstrap_interval(effects, n_draws=10000, seed=0, level=0.95):
    """Percentile interval of the mean effect under resampling of modules.

    Draws ``n_draws`` resamples of the ``m`` effects with replacement (indices from
    ``np.random.default_rng(seed).integers(0, m, size=(n_draws, m))``), takes each mean, and
    returns the ``(1 - level)/2`` and ``(1 + level)/2`` percentiles (NumPy's default linear
    interpolation).

    Args:
        effects: float64[m] module effects (finite, m >= 1).
        n_draws: Number of resamples (>= 1).
        seed: Seed of the index draws.
        level: Interval coverage in (0, 1).

    Returns:
        ``(lo, hi)`` as floats.
    """
    e = _effects(effects)
    n_draws = int(n_draws)
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}")
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    idx = np.random.default_rng(seed).integers(0, e.shape[0], size=(n_draws, e.shape[0]))
    means = _resample_means(e, np.ascontiguousarray(idx, dtype=np.int64))
    alpha = (1.0 - level) / 2.0
    lo, hi = np.percentile(means, [100.0 * alpha, 100.0 * (1.0 - alpha)])
    return float(lo), float(hi)


@named_errors
def module_resample_means(values, n_draws=10000, seed=0, *, n_modules: int | None = None):
    """Column means of ``values`` under resampling of its rows (modules), the same resamples for
    every column.

    The row indices are drawn exactly as :func:`module_bootstrap_interval` draws them,
    ``idx = np.random.default_rng(seed).integers(0, m, size=(n_draws, m))``, and
    ``means[b, k] = mean(values[idx[b, :], k])``. Resampling several columns with one ``idx`` keeps
    what belongs to one module together: a module's credited count and its trial count, or the
    two arms of a paired comparison.

    Args:
        values: float64[m] or float64[m, k] per-module values (finite, m >= 1).
        n_draws: Number of resamples (>= 1).
        seed: Seed of the index draws.
        n_modules: ``m``, when stated: ``values`` must have that many rows. Rows are modules by
            contract and no shape tells a transposed ``values`` apart (a study may have fewer
            modules than columns), so a caller that wants the orientation checked states it.

    Returns:
        float64[n_draws] for one-dimensional ``values``, else float64[n_draws, k].
    """
    v = np.asarray(values, dtype=np.float64)
    if v.ndim not in (1, 2):
        raise ValueError(f"values must be one- or two-dimensional, got shape {v.shape}")
    if n_modules is not None and (isinstance(n_modules, bool) or v.shape[0] != n_modules):
        raise ValueError(f"values must have shape (n_modules={n_modules!r}, k), got {v.shape}")
    cols = v[:, None] if v.ndim == 1 else v
    if cols.shape[0] < 1 or cols.shape[1] < 1:
        raise ValueError(f"need at least one module and one column, got shape {v.shape}")
    for k in range(cols.shape[1]):
        _effects(cols[:, k])  # the same checks as the effects: finite
    n_draws = int(n_draws)
    if n_draws < 1:
        raise ValueError(f"n_draws must be at least 1, got {n_draws}")
    idx = np.ascontiguousarray(np.random.default_rng(seed).integers(0, cols.shape[0], size=(n_draws, cols.shape[0])), dtype=np.int64)
    out = np.empty((n_draws, cols.shape[1]))
    for k in range(cols.shape[1]):
        out[:, k] = _resample_means(np.ascontiguousarray(cols[:, k]), idx)
    return out[:, 0] if v.ndim == 1 else out


@named_errors
def leave_one_out_range(effects):
    """Smallest and largest mean effect after removing one module.

    Args:
        effects: float64[m] module effects (finite, m >= 2).

    Returns:
        ``(min, max)`` over the ``m`` leave-one-out means.
    """
    means = _leave_one_out_means(_effects(effects, min_m=2))
    return float(means.min()), float(means.max())


@named_errors
def sign_flip_pvalue(effects):
    """Exact two-sided sign-flip p-value of the mean effect.

    Enumerates all ``2**m`` sign assignments; the p-value is the fraction whose |mean| is at
    least the observed |mean| (minus 1e-12 for ties). Five equal positive effects among twelve
    modules (seven zeros) give 2/32 = 0.0625.

    Args:
        effects: float64[m] module effects (finite, 1 <= m <= 24).

    Returns:
        The p-value in (0, 1].
    """
    e = _effects(effects)
    if e.shape[0] > SIGN_FLIP_MAX_M:
        raise ValueError(
            f"sign-flip enumeration supports at most {SIGN_FLIP_MAX_M} effects, got {e.shape[0]}"
        )
    count = _sign_flip_count(e, _TIE_TOL)
    return count / float(1 << e.shape[0])
