"""Input checks shared by the public kernel wrappers."""

from __future__ import annotations

import numpy as np


def as_float_array(x, name: str, ndim: int, kinds: str = "fiub") -> np.ndarray:
    """``x`` as a C-contiguous float64 array, checked to have ``ndim`` dimensions and a dtype kind in ``kinds``.

    Raises:
        ValueError: when ``x`` has another number of dimensions.
        TypeError: when its dtype kind is not in ``kinds`` (default: real numbers or booleans).
    """
    x = np.asarray(x)
    if x.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-D, got shape {x.shape}")
    if x.dtype.kind not in kinds:
        raise TypeError(f"{name} must hold real numbers, got dtype {x.dtype}")
    return np.ascontiguousarray(x, dtype=np.float64)
