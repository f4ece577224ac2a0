"""RMSLE + coverage audit on the 5000-point evaluation grid: ``[numba]`` kernel vs ``[numpy]`` twin.

Both variants compute the same five outputs. The transcendental work is 2 x 5000 ``log1p``. NumPy runs
``log1p`` through its SIMD loops, so the twin's time is mostly its extra passes (masks, gathers,
``nanmean``). libm's scalar ``log1p`` (no SVML in this Numba build) would cost the kernel 5-13 ns per
call and leave it no faster than the twin; instead the kernel inlines
:func:`kernels._mathlib.log1p_nonneg` (bit-level range reduction + polynomial, no calls, no branches),
so LLVM vectorizes its single pass (packed AVX-512 on this host; AVX2/SSE2 hosts get packed code too).
What is left is about 1 ns per point of packed arithmetic (two divisions and a degree-6 polynomial
per logarithm) plus roughly 1-2 us of call overhead (argument checks, dispatch).

``metrics-5000-floor`` compares that logarithm alone with NumPy's: both arrays through
``np.log1p`` vs one compiled loop calling ``log1p_nonneg``.
"""

from __future__ import annotations

import numpy as np
import pytest
from numba import njit

from kernels._mathlib import log1p_nonneg
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


@njit(cache=True)
def _log1p_pair(a, b, out_a, out_b):
    for i in range(a.shape[0]):
        out_a[i] = log1p_nonneg(a[i])
        out_b[i] = log1p_nonneg(b[i])


@pytest.mark.benchmark(group="metrics-5000-floor")
@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_log1p_floor(benchmark, arrays, impl):
    """Two log1p passes over 5000 values: the transcendental work any implementation must do."""
    t, p = arrays
    a, b = np.abs(t), np.abs(p)
    out_a, out_b = np.empty_like(a), np.empty_like(b)
    if impl == "numba":
        _log1p_pair(a, b, out_a, out_b)
        benchmark(_log1p_pair, a, b, out_a, out_b)
        np.testing.assert_allclose(out_a, np.log1p(a), rtol=2.3e-16)
    else:
        benchmark(lambda: (np.log1p(a, out=out_a), np.log1p(b, out=out_b)))
