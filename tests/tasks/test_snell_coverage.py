"""Snell's acos laws are undefined on part of the domain (paper: 4259 and 4264 of 5000 finite)."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.sampling import evaluation_grid
from etc_fast.tasks import get_task


@pytest.mark.parametrize("difficulty", ["easy", "medium"])
def test_snell_finite_fraction_on_grid(difficulty):
    task = get_task("m4_snell_law", difficulty, "v0")
    y = task.truth(evaluation_grid(task))
    n_finite = int(np.isfinite(y).sum())
    print(f"m4_snell_law {difficulty} v0: {n_finite} of {y.size} grid targets finite")
    assert 0.80 * y.size <= n_finite <= 0.90 * y.size


def test_snell_arcsin_domain_gives_nan_not_error():
    task = get_task("m4_snell_law", "easy", "v1")  # asin(n2 sin(a) / n1)
    y = task.truth(np.array([[1.0, 1.5, 80.0], [1.5, 1.0, 30.0]]))
    assert np.isnan(y[0]) and np.isfinite(y[1])
