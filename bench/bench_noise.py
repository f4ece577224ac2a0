"""Noise-aware planner parts over a 2048-point pool (``[numba]`` vs ``[numpy]``).

Sizes are a planner step's: 4 kept hypotheses, 2048 pool points in 3 dimensions, 20 observations,
a batch of 4. ``relative_disagreement`` is one pass over ``4 x 2048`` predictions where NumPy makes
several whole-array passes and temporaries; ``maximin_pick`` is ``2048 x (20 + k) x d`` distance
updates with a running minimum, where NumPy builds the ``2048 x 20 x d`` difference tensor and one
argmax per pick; ``relative_residual_rms`` on ``4 x 20`` is call overhead on both sides.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.noise import maximin_pick, relative_disagreement, relative_residual_rms
from tests.kernels.test_noise import maximin_pick_np, relative_disagreement_np, relative_residual_rms_np


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    P = rng.lognormal(size=(4, 2048))
    R = rng.random((20, 3))
    C = rng.random((2048, 3))
    y = rng.lognormal(size=20)
    return P, R, C, y


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_relative_disagreement(benchmark, impl):
    benchmark.group = "noise-disagreement-4x2048"
    P, *_ = _inputs()
    relative_disagreement(P)
    fn = relative_disagreement if impl == "numba" else relative_disagreement_np
    out = benchmark(fn, P)
    assert out.shape == (2048,)


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_maximin_pick(benchmark, impl):
    benchmark.group = "noise-maximin-2048x3-k4"
    _P, R, C, _y = _inputs()
    maximin_pick(R, C, 4)
    fn = maximin_pick if impl == "numba" else maximin_pick_np
    out = benchmark(fn, R, C, 4)
    assert out.size == 4


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_relative_residual_rms(benchmark, impl):
    benchmark.group = "noise-residuals-4x20"
    P, _R, _C, y = _inputs()
    relative_residual_rms(P[:, :20], y)
    fn = relative_residual_rms if impl == "numba" else relative_residual_rms_np
    rms, _ = benchmark(fn, P[:, :20], y)
    assert rms.shape == (4,)
