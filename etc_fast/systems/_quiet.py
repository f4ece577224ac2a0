"""Silence for arithmetic that probes overflow on purpose.

Fits through the simulator scan constants over sixty decades and records that have crashed or not
started hold NaN rows: overflow, invalid values and all-NaN medians are expected there and are
handled by the caller (non-finite residuals get a fixed penalty, empty rows a unit scale). Without
this a 768-trial study printed about 1,200 RuntimeWarnings from NumPy and SciPy.
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Iterator

import numpy as np

__all__ = ["quiet"]


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """``np.errstate(all="ignore")`` plus ignored ``RuntimeWarning``s (NumPy's nan-reductions and
    SciPy's least squares warn through :mod:`warnings`, not through the error state)."""
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        yield
