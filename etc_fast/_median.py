"""The median over some axes, NaN ignored: ``np.nanmedian(a, axis, keepdims=True)`` without its masked arrays.

The systems' fits scale every residual by a channel's typical magnitude, the median of its finite
readings, and compute it on every forward-model fit (thousands per trial). ``np.nanmedian`` on
arrays this small goes through ``np.ma.median``, whose bookkeeping costs several times the sort.
:func:`nanmedian` sorts once and reads the middle, with NumPy's own rule: the mean ``(lo + hi) / 2``
of the two middle values of the sorted non-NaN ones (for an odd count both are the middle one), NaN
where a slice has none. It equals ``np.nanmedian`` bit for bit (tests/test_median.py) except where
a middle value exceeds half the largest float, where ``lo + hi`` overflows and NumPy's large-slice
path (600 values or more) returns the value itself.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

__all__ = ["nanmedian"]


def nanmedian(a: np.ndarray, axis: Sequence[int]) -> np.ndarray:
    """The median of ``a`` over ``axis`` ignoring NaN, with the reduced axes kept (size 1).

    Args:
        a: float64 array (inf counts as a value, NaN does not).
        axis: The axes to reduce (non-negative, distinct).

    Returns:
        float64 array of ``a``'s shape with each of ``axis`` of size 1; NaN where a slice has no
        value that is not NaN. No warning is raised for such a slice.
    """
    a = np.asarray(a, dtype=np.float64)
    axes = sorted(int(x) for x in axis)
    if len(set(axes)) != len(axes) or any(x < 0 or x >= a.ndim for x in axes):
        raise ValueError(f"nanmedian: axis must be distinct axes of a {a.ndim}-d array, got {tuple(axis)}")
    rest = [i for i in range(a.ndim) if i not in axes]
    flat = np.transpose(a, rest + axes).reshape([a.shape[i] for i in rest] + [-1])
    out_shape = [1 if i in axes else a.shape[i] for i in range(a.ndim)]
    if flat.shape[-1] == 0:
        return np.full(out_shape, np.nan)
    s = np.sort(flat, axis=-1)  # NaN sort last
    count = s.shape[-1] - np.count_nonzero(np.isnan(s), axis=-1)
    hi = count // 2
    lo = np.where(count % 2 == 1, hi, hi - 1)
    low = np.take_along_axis(s, np.maximum(lo, 0)[..., None], axis=-1)[..., 0]
    high = np.take_along_axis(s, np.minimum(hi, s.shape[-1] - 1)[..., None], axis=-1)[..., 0]
    with np.errstate(invalid="ignore", over="ignore"):
        med = np.where(count > 0, (low + high) / 2.0, np.nan)
    return med.reshape(out_shape)
