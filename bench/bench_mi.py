"""The information planner's estimator (``kernels.mi``) at a planner step's size, ``[numba]`` vs ``[numpy]``.

Sizes: 4 kept laws over 1900 available points of a 2048-point pool, a batch of 4; one reading per
point (an equation) and 200 readings per point (a simulated system's series: 2 channels x 100
times). The kernel builds each point's distance matrix once and keeps the batch's running sum;
the twin rebuilds the batch's matrix from its points for every candidate, as the definition reads.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.mi import mi_select
from tests._ref_mi import mi_select_ref


def _inputs(m: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    t = rng.random((2048, m))
    mu = np.stack([1.0 + t, 1.0 + t + 0.02 * t**2, 1.0 + 1.01 * t, 1.0 + t + 0.01 * np.sin(6 * t)])
    var = (0.01 * mu) ** 2
    available = np.ones(2048, dtype=bool)
    available[rng.choice(2048, 148, replace=False)] = False
    return mu, var, np.array([0.0, -0.5, -1.0, -2.0]), available


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("m", [1, 200], ids=["equation", "series200"])
def test_mi_select(benchmark, m, impl):
    benchmark.group = f"mi-select-4x2048x{m}-k4"
    mu, var, log_w, available = _inputs(m)
    if impl == "numba":
        mi_select(mu, var, log_w, available, 4)
        picks, _ = benchmark(lambda: mi_select(mu, var, log_w, available, 4))
    else:
        picks, _ = benchmark(lambda: mi_select_ref(mu, var, log_w, available, 4))
    assert picks.size == 4 and available[picks].all()
