"""Calibration + fit filter: ``[numba]`` vs ``[numpy]`` at 5 and 500 hypotheses x 9 observations.

Inputs are the real hypothesis values of the acquisition benchmark's committees
(:mod:`bench.bench_acquisition`). What bounds it: per hypothesis a handful of passes over 9
observations, then a stable argsort of the valid errors; the kernel is a few hundred ns of arithmetic
plus the call (~1-2 us of argument unboxing and result boxing), the NumPy version ~20 whole-array
calls with their fixed cost (~1-3 us each) whatever the size. At 500 hypotheses the work is still
only 500 x 9 values, so both remain call-overhead bound and the ratio stays similar.
"""

from __future__ import annotations

import pytest

from bench.bench_acquisition import cycled, stage_inputs
from kernels.calibrate import calibrate, fit_filter
from tests.reference import calibrate_np_ref, fit_filter_ref


def _numba(H, y):
    a, b, n, ok, err = calibrate(H, y)
    return fit_filter(err, ok)


def _numpy(H, y):
    a, b, n, ok, err = calibrate_np_ref(H, y)
    return fit_filter_ref(err, ok)


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("n_hyp", [5, 500])
def test_calibrate_filter(benchmark, n_hyp, impl):
    benchmark.group = f"calibrate+filter-{n_hyp}x9"
    fn = cycled(_numba if impl == "numba" else _numpy, stage_inputs(n_hyp), "H_obs", "y")
    keep, fallback = benchmark(fn)
    assert 2 <= keep.sum() <= 4 or fallback
