"""Raw scores (eq. S2 variance, eq. S3 pairwise): ``[numba]`` vs ``[numpy]`` at 5 and 500 x 2048.

Inputs: calibrated predictions of every hypothesis of the acquisition benchmark's committees on
the 2048-point pool (in the step only the <= 4 kept ones are scored; here all are, to show scaling).

What bounds them: variance is four streaming passes over ``n_hyp x 2048`` doubles (finite masks as
selects, so the loops vectorize): memory/vector-throughput bound at ~0.2-0.3 ns per value. NumPy
makes ~10 temporaries of the same size. Pairwise needs each hypothesis' median and quartiles:
the kernel gets the six order statistics by a histogram select on order-preserving integer keys
(one counting pass, then the few target buckets; a bucket crowded by clustered values is bucketed
again by octave of its offsets): ~3 us per spread-out row, up to ~10 us for a calibrated
hypothesis that barely varies around its offset (the planner step does the same on each kept,
calibrated row). NumPy's ``nanpercentile``
sorts/partitions (~50 us per row on fresh data); the pair
sum is ``O(n_hyp^2)`` per point up to 16 hypotheses, then ``O(n_hyp log n_hyp)`` by sorting each
point's values (NumPy: one vectorized pass per hypothesis, ``O(n_hyp^2 n)`` in total), so at 500
hypotheses the kernel is sort bound and the twin is bound by 125k pair differences per point.
"""

from __future__ import annotations

import pytest

from bench.bench_acquisition import cycled, stage_inputs
from kernels.scores import pairwise_scores, variance_scores
from tests.reference import pairwise_scores_np_ref, variance_scores_np_ref

IMPLS = {
    "variance": {"numba": variance_scores, "numpy": variance_scores_np_ref},
    "pairwise": {"numba": pairwise_scores, "numpy": pairwise_scores_np_ref},
}


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("n_hyp", [5, 500])
@pytest.mark.parametrize("method", ["variance", "pairwise"])
def test_scores(benchmark, method, n_hyp, impl):
    benchmark.group = f"scores-{method}-{n_hyp}x2048"
    fn = cycled(IMPLS[method][impl], stage_inputs(n_hyp), "P_all")
    if method == "pairwise" and n_hyp == 500 and impl == "numpy":
        out = benchmark.pedantic(fn, rounds=3, iterations=1)  # ~1 s per call
    else:
        out = benchmark(fn)
    assert out.shape == (2048,)
