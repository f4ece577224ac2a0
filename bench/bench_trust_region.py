"""Trust-region steps of many problems: ``[numba]`` is :func:`kernels.trust_region.trust_region_steps`,
``[numpy]`` its twin (tests/_ref_trust_region.py, every problem's Newton iterations vectorised
with masks). Sizes: 48 problems (a scan's 24 refits from two starts), 40 residuals, up to 6
parameters, each problem's SVD computed beforehand as the lockstep calibration does. What bounds
``[numpy]``: about 15 whole-array calls per Newton iteration, up to 10 iterations, whatever the
batch; the kernel is a few hundred flops per problem.
"""

from __future__ import annotations

import pytest

from kernels.trust_region import trust_region_steps
from tests._ref_trust_region import trust_region_steps_ref
from tests.kernels.test_trust_region import _problems


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_trust_region_steps(benchmark, impl):
    benchmark.group = "trust-region-48x40x6"
    args = _problems(0, B=48, m=40, k=6)[:7]
    fn = trust_region_steps if impl == "numba" else trust_region_steps_ref
    trust_region_steps(*args)
    step, alpha = benchmark(fn, *args)
    assert step.shape == (48, 6)
