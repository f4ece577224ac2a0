"""Batch selection (eligible top quarter + greedy diverse batch of 4) over 2048 points.

``[numba]`` vs ``[numpy]``; inputs are the regularized scores of the acquisition benchmark's step
(the hypothesis count does not enter this kernel). Also the random batch (step 7).

What bounds it: eligibility needs the 512th largest score: the public kernel takes it from
``np.partition`` (plain; the planner step's cut of scores in [0, 1] counts by bisection instead,
~3 us) where the NumPy twin sorts (``argsort``, ~15-75 us); the greedy part is
``k x 512 x d`` distance updates plus an argmax per pick (~2-3 us, vectorized along the eligible
points), against NumPy's few whole-array calls per pick. The random batch is a partial
Fisher-Yates of ``k`` steps: negligible next to drawing the uniforms and the call itself.
"""

from __future__ import annotations

import numpy as np
import pytest

from bench.bench_acquisition import cycled, stage_inputs
from kernels.select import select_batch, select_random
from tests.reference import select_batch_np_ref, select_random_ref


def _numba(reg, U):
    return select_batch(reg, U, 4)


def _numpy(reg, U):
    return select_batch_np_ref(reg, U, 4)


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("method", ["variance", "pairwise"])
def test_select_batch(benchmark, method, impl):
    benchmark.group = f"select-{method}-2048"
    fn = cycled(_numba if impl == "numba" else _numpy, stage_inputs(5, method), "reg", "U")
    picks, elig = benchmark(fn)
    assert picks.size == 4 and elig.size == 512


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_select_random(benchmark, impl):
    benchmark.group = "select-random-2048"
    avail = np.random.default_rng(0).random(2048) < 0.95
    seeds = iter(range(10**9))
    if impl == "numba":
        select_random(avail, 4, seed=0)
        out = benchmark(lambda: select_random(avail, 4, seed=next(seeds)))
    else:
        out = benchmark(lambda: select_random_ref(avail, np.random.default_rng(next(seeds)).random(4)))
    assert out.size == 4
