"""Module-level summaries (paper S4.1) for 12 modules: ``[numba]`` kernels vs ``[numpy]`` twins.

What bounds them: the resampling interval draws 10,000 x 12 indices with NumPy's generator in
both variants (shared cost, about half the time) and then sums 120,000 gathered values; the
twin adds a fancy-indexed temporary and a row mean. The resample means (the report's cluster
bootstrap: credited and trial counts of two arms, four columns, 2,000 resamples) draw the indices
once and gather each column in the kernel, against a fancy-indexed [2000, 12, 4] temporary. The sign-flip enumeration is 2**11 masks x
12 additions in the kernel (one of each +/- pair), against a 4096 x 12 sign matrix product in the
twin. Leave-one-out is 12 x 11 additions: pure call overhead on either side.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.stats import leave_one_out_range, module_bootstrap_interval, module_resample_means, sign_flip_pvalue
from tests.reference import (
    leave_one_out_range_ref,
    module_bootstrap_interval_ref,
    module_resample_means_ref,
    sign_flip_pvalue_ref,
)

EFFECTS = np.array([12.5, 25.0, 0.0, 37.5, 0.0, 12.5, 0.0, 0.0, 50.0, 0.0, 12.5, -12.5])
#: Two arms' credited and trial counts in 12 modules (the paired cluster bootstrap's input).
COUNTS = np.column_stack([np.arange(12) % 4, np.full(12, 3), np.arange(12) % 3, np.full(12, 3)]).astype(np.float64)


@pytest.fixture(scope="module", autouse=True)
def compiled():
    # compile outside the timing
    module_bootstrap_interval(EFFECTS, n_draws=10)
    leave_one_out_range(EFFECTS)
    sign_flip_pvalue(EFFECTS)
    module_resample_means(COUNTS, n_draws=10)


@pytest.mark.benchmark(group="stats-bootstrap-12x10000")
@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_module_bootstrap_interval(benchmark, impl):
    fn = module_bootstrap_interval if impl == "numba" else module_bootstrap_interval_ref
    out = benchmark(fn, EFFECTS, 10000, 0)
    np.testing.assert_allclose(out, module_bootstrap_interval_ref(EFFECTS, 10000, 0), rtol=1e-12)


@pytest.mark.benchmark(group="stats-sign-flip-12")
@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_sign_flip_pvalue(benchmark, impl):
    fn = sign_flip_pvalue if impl == "numba" else sign_flip_pvalue_ref
    assert benchmark(fn, EFFECTS) == sign_flip_pvalue_ref(EFFECTS)


@pytest.mark.benchmark(group="stats-leave-one-out-12")
@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_leave_one_out_range(benchmark, impl):
    fn = leave_one_out_range if impl == "numba" else leave_one_out_range_ref
    np.testing.assert_allclose(benchmark(fn, EFFECTS), leave_one_out_range_ref(EFFECTS), rtol=1e-12)


@pytest.mark.benchmark(group="stats-resample-means-12x4x2000")
@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_module_resample_means(benchmark, impl):
    fn = module_resample_means if impl == "numba" else module_resample_means_ref
    out = benchmark(fn, COUNTS, 2000, 0)
    np.testing.assert_allclose(out, module_resample_means_ref(COUNTS, 2000, 0), rtol=1e-12)
