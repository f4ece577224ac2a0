"""Batched Levenberg-Marquardt steps (the compound family's rate fits).

``[numba]`` is :func:`kernels.lm.lm_steps`; ``[numpy]`` its twin (tests/_ref_lm.py): einsum normal
equations and one ``np.linalg.solve`` per problem. Sizes: 48 problems (the 24 screened basins of
both two-rate families), 30 observations, 2 parameters.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.lm import lm_steps
from tests._ref_lm import lm_steps_ref


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_lm_steps(benchmark, impl):
    benchmark.group = "lm-steps-48x30x2"
    rng = np.random.default_rng(0)
    J, r, lam = rng.normal(size=(48, 30, 2)), rng.normal(size=(48, 30)), np.full(48, 1e-3)
    fn = lm_steps if impl == "numba" else lm_steps_ref
    lm_steps(J, r, lam)
    d, ok = benchmark(fn, J, r, lam)
    assert ok.all() and np.all(np.isfinite(d))
