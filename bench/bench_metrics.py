"""RMSLE + coverage audit on the 5000-point evaluation grid: ``[numba]`` kernel vs ``[numpy]`` twin.

Both variants compute the same five outputs. What bounds them is the 2 x 5000 ``log1p`` calls. NumPy
runs ``log1p`` through its SIMD loops (``[floor]`` below: both arrays in well under 10 us, under 1 ns
per value), so the twin's time is mostly its extra passes (masks, gathers, ``nanmean``). The kernel's
single pass calls the scalar libm ``log1p`` (no SVML in this build, so LLVM cannot vectorize it): about
5-13 ns per call, i.e. a floor of roughly 50-130 us for 10000 calls, the same order as the whole twin.
Beating the twin by 2x would need a vectorizable ``log1p`` inside the kernel (polynomial on the
mantissa with the ``u = 1 + x`` correction term) or an SVML-enabled LLVM.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.metrics import rmsle_coverage
from tests.reference import rmsle_coverage_ref

N = 5000


@pytest.fixture(scope="module")
def arrays():
    rng = np.random.default_rng(0)
    t = np.exp(rng.uniform(-5, 15, N)) * rng.choice([-1.0, 1.0], N)
    p = t * rng.lognormal(0.0, 0.3, N)
    t[rng.choice(N, 300, replace=False)] = np.nan  # undefined target points (Snell-like)
    p[rng.choice(N, 100, replace=False)] = np.nan
    rmsle_coverage(t, p)  # compile outside the timing
    return t, p


@pytest.mark.benchmark(group="metrics-5000")
@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_rmsle_coverage(benchmark, arrays, impl):
    t, p = arrays
    fn = rmsle_coverage if impl == "numba" else rmsle_coverage_ref
    out = benchmark(fn, t, p)
    ref = rmsle_coverage_ref(t, p)
    np.testing.assert_allclose(out[0], ref[0], rtol=1e-12)
    assert tuple(out[1:]) == tuple(ref[1:])


@pytest.mark.benchmark(group="metrics-5000-floor")
def test_log1p_floor(benchmark, arrays):
    """Two vectorized log1p passes over 5000 values: the transcendental work any implementation must do."""
    t, p = arrays
    a, b = np.abs(t), np.abs(p)
    benchmark(lambda: (np.log1p(a), np.log1p(b)))
