"""NewtonBench RMSLE with the coverage audit, in one pass over the evaluation grid.

``_rmsle_coverage`` is the compiled kernel; :func:`rmsle_coverage` checks and coerces its inputs.
The kernel takes its logarithms from :func:`kernels._mathlib.log1p_nonneg` rather than libm, so its
single pass over the grid compiles to packed SIMD code (see that module for the floating-point flags
this relies on).
:func:`coverage_q` turns (complete, rmsle) pairs into the coverage-sensitive pass indicators
``Q(tau)`` of the paper (eq. S5), one column per threshold.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels._checks import named_errors
from kernels._jit import JIT
from kernels._mathlib import log1p_nonneg

__all__ = ["rmsle_coverage", "coverage_q"]


@njit(**JIT)
def _rmsle_coverage(y_true, y_pred):
    """RMSLE, finite-target count, finite-prediction count and sign disagreements in one pass.

    Parameters
    ----------
    y_true : float64[n]
        Noise-free target values (NaN/inf where the target is undefined).
    y_pred : float64[n]
        Submitted predictions at the same points.

    Returns
    -------
    rmsle : float64
        ``sqrt(mean_{j in V} (log1p|y_pred_j| - log1p|y_true_j|)^2)`` where ``V`` keeps pairs with
        neither side NaN and drops terms that are NaN (both sides infinite). NaN when ``V`` is empty,
        inf when some pair has exactly one infinite side.
    n_finite_target : int64
        Number of points with a finite target.
    n_finite_pred : int64
        Number of finite-target points whose prediction is also finite.
    sign_disagreements : int64
        Finite pairs, both non-zero, whose signs differ.

    Notes
    -----
    NewtonBench computes ``sqrt(nanmean((log1p(|p|) - log1p(|t|))**2))`` after removing NaN pairs.
    Here a pair is kept exactly when its difference is not NaN: a NaN on either side makes
    ``log1p_nonneg`` return NaN, and two infinite sides give ``inf - inf``. The loop body has no
    branches (every test is a select) and calls no libm function, so LLVM vectorizes the whole pass;
    the sum of squares is then accumulated in several lanes, which agrees with NumPy's pairwise sum
    to rounding.
    """
    n = y_true.shape[0]
    total = 0.0
    n_terms = 0
    n_ft = 0
    n_fp = 0
    n_sign = 0
    for j in range(n):
        t = y_true[j]
        p = y_pred[j]
        ft = abs(t) < np.inf  # False for NaN as well
        both = ft & (abs(p) < np.inf)  # bitwise, not `and`/`or`: no short-circuit branches
        opposite = ((t > 0.0) & (p < 0.0)) | ((t < 0.0) & (p > 0.0))
        n_ft += ft
        n_fp += both
        n_sign += both & opposite
        diff = log1p_nonneg(abs(p)) - log1p_nonneg(abs(t))
        keep = diff == diff
        total += diff * diff if keep else 0.0
        n_terms += keep
    if n_terms == 0:
        rmsle = np.nan
    else:
        rmsle = math.sqrt(total / n_terms)
    return rmsle, n_ft, n_fp, n_sign


def _as_vector(a, name: str) -> np.ndarray:
    arr = np.asarray(a)
    if arr.dtype.kind not in "biuf":
        raise TypeError(f"{name} must hold real numbers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.float64)


@named_errors
def rmsle_coverage(y_true, y_pred) -> tuple[float, int, int, bool, int]:
    """NewtonBench RMSLE plus the coverage audit of one submission.

    Args:
        y_true: float64[n] target values (the noise-free truth on the grid).
        y_pred: float64[n] predictions of the submission at the same points.

    Returns:
        ``(rmsle, n_finite_target, n_finite_pred, complete, sign_disagreements)``: ``rmsle`` as
        NewtonBench computes it (NaN if no pair is left, inf if a pair has exactly one infinite
        side); ``n_finite_pred`` counts finite predictions at finite-target points; ``complete`` is
        True when the finite-target set is non-empty and every point in it has a finite prediction;
        ``sign_disagreements`` counts finite pairs, both non-zero, of opposite sign.

    Raises:
        ValueError: when the shapes differ (both are named) or an input is not one-dimensional.
        TypeError: when an input is not numeric.
    """
    t = _as_vector(y_true, "y_true")
    p = _as_vector(y_pred, "y_pred")
    if t.ndim != 1:
        raise ValueError(f"rmsle_coverage: y_true must be one-dimensional (n,), got shape {t.shape}")
    if t.shape != p.shape:
        raise ValueError(f"rmsle_coverage: y_pred must have y_true's shape {t.shape}, got {p.shape}")
    rmsle, n_ft, n_fp, n_sign = _rmsle_coverage(t, p)
    complete = bool(n_ft > 0 and n_fp == n_ft)
    return float(rmsle), int(n_ft), int(n_fp), complete, int(n_sign)


@named_errors
def coverage_q(complete, rmsle, taus=(0.01, 0.1, 1.0)) -> np.ndarray:
    """Coverage-sensitive pass indicators ``C = 1 and R finite and R <= tau``.

    Args:
        complete: bool[...] completeness per submission (scalar allowed).
        rmsle: float64[...] RMSLE per submission, same shape as ``complete``.
        taus: thresholds, shape [k].

    Returns:
        bool[..., k]: one column per threshold.
    """
    c = np.asarray(complete, dtype=bool)
    r = np.asarray(rmsle, dtype=np.float64)
    if c.shape != r.shape:
        raise ValueError(f"coverage_q: complete has shape {c.shape} but rmsle has shape {r.shape}")
    tau = np.asarray(taus, dtype=np.float64).reshape(-1)
    if np.any(~np.isfinite(tau)) or np.any(tau < 0):
        raise ValueError(f"coverage_q: thresholds must be finite and non-negative, got {tau.tolist()}")
    ok = c & np.isfinite(r)
    with np.errstate(invalid="ignore"):
        return ok[..., None] & (r[..., None] <= tau)
