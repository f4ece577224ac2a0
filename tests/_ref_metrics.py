"""NumPy twin of :mod:`kernels.metrics` (NewtonBench's metric written the NewtonBench way)."""

from __future__ import annotations

import warnings

import numpy as np


def rmsle_ref(y_true, y_pred) -> float:
    """NewtonBench RMSLE: drop NaN pairs, absolute values, log1p, nanmean of squares, sqrt."""
    t = np.asarray(y_true, dtype=np.float64)
    p = np.asarray(y_pred, dtype=np.float64)
    keep = ~(np.isnan(t) | np.isnan(p))
    t, p = np.abs(t[keep]), np.abs(p[keep])
    if t.size == 0:
        return float("nan")
    with np.errstate(invalid="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # mean of empty slice when every term is NaN
        return float(np.sqrt(np.nanmean((np.log1p(p) - np.log1p(t)) ** 2)))


def rmsle_coverage_ref(y_true, y_pred) -> tuple[float, int, int, bool, int]:
    """Twin of :func:`kernels.rmsle_coverage` built from whole-array NumPy operations."""
    t = np.asarray(y_true, dtype=np.float64)
    p = np.asarray(y_pred, dtype=np.float64)
    if t.shape != p.shape:
        raise ValueError(f"rmsle_coverage: y_true has shape {t.shape} but y_pred has shape {p.shape}")
    ft = np.isfinite(t)
    both = ft & np.isfinite(p)
    n_ft = int(ft.sum())
    n_fp = int(both.sum())
    sign = int(np.sum(both & (np.sign(t) * np.sign(p) < 0)))
    return rmsle_ref(t, p), n_ft, n_fp, bool(n_ft > 0 and n_fp == n_ft), sign
