"""Rank regularization (eq. S4) of 2048 raw scores: ``[numba]`` vs ``[numpy]``.

Inputs: the raw variance and pairwise scores of the acquisition benchmark's step (5-hypothesis
committees; the hypothesis count does not enter this kernel, so there is no 500 variant).

What bounds it: the stable ordinal rank, a compiled merge sort of the finite scores (plain since
issue 25; the planner step itself sorts packed keys with NumPy instead, ~4 us for 2048, see
``kernels/step.py``). NumPy's stable argsort (timsort/merge) costs ~75 us on fresh data.
The boundary weight (``x sqrt(x)`` per point) and the
product are a few us of vectorized arithmetic; a trial computes the weights once for its pool
(``test_edge_weight``, public call with its argument checks) and passes them to every step.
"""

from __future__ import annotations

import pytest

from bench.bench_acquisition import cycled, stage_inputs
from kernels.rank_reg import edge_weight, rank_regularize
from tests.reference import edge_weight_ref, rank_regularize_np_ref


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("method", ["variance", "pairwise"])
def test_rank_regularize(benchmark, method, impl):
    benchmark.group = f"rank_reg-{method}-2048"
    fn = cycled(rank_regularize if impl == "numba" else rank_regularize_np_ref, stage_inputs(5, method), "raw", "U", "v")
    out = benchmark(fn)
    assert out.shape == (2048,)


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_edge_weight(benchmark, impl):
    """Boundary weights of a 2048 x 3 pool: computed once per trial and passed to every step."""
    benchmark.group = "edge_weight-2048x3"
    fn = cycled(edge_weight if impl == "numba" else edge_weight_ref, stage_inputs(5, "variance"), "U")
    out = benchmark(fn)
    assert out.shape == (2048,)
