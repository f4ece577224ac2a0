"""etc_fast._median.nanmedian against np.nanmedian, bit for bit."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

from etc_fast._median import nanmedian


@pytest.mark.parametrize("seed", range(4))
def test_equals_numpy_bit_for_bit(seed):
    rng = np.random.default_rng(seed)
    for _ in range(400):
        shape = tuple(int(s) for s in rng.integers(1, 7, size=rng.integers(1, 4)))
        if rng.random() < 0.1:  # NumPy's large-slice path
            shape = (int(rng.integers(1, 4)), 650)
        a = rng.normal(size=shape) * 10.0 ** rng.uniform(-5, 5, size=shape)
        a[rng.random(shape) < rng.random() * 0.7] = np.nan
        if rng.random() < 0.2:
            a[rng.random(shape) < 0.1] = np.inf
        k = int(rng.integers(1, a.ndim + 1))
        axes = tuple(sorted(int(x) for x in rng.choice(a.ndim, size=k, replace=False)))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", RuntimeWarning)
            ref = np.nanmedian(a, axis=axes, keepdims=True)
        got = nanmedian(a, axes)
        assert got.shape == ref.shape
        assert np.array_equal(got, ref, equal_nan=True), (shape, axes)


def test_even_and_odd_counts_all_nan_and_empty():
    a = np.array([[3.0, 1.0, np.nan, 2.0], [np.nan, np.nan, np.nan, np.nan], [4.0, 1.0, np.nan, np.nan]])
    got = nanmedian(a, (1,))
    assert got.shape == (3, 1)
    assert got[0, 0] == 2.0 and np.isnan(got[1, 0]) and got[2, 0] == 2.5
    assert np.isnan(nanmedian(np.zeros((2, 0)), (1,))).all()
    with pytest.raises(ValueError, match="distinct axes"):
        nanmedian(a, (2,))
    with pytest.raises(ValueError, match="distinct axes"):
        nanmedian(a, (1, 1))
