"""The GP planner's surrogate (``kernels.gp``) at a planner step's size, ``[numba]`` vs ``[numpy]``.

Sizes: 40 observations (a bootstrap and eight batches of 4) in 3 dimensions, a 2048-point pool of
which 1900 are available, a batch of 4. The fit is the count-bounded likelihood search (78
candidates noiseless, 148 with the noisy lab's six nuggets), each a 40 x 40 Gram matrix and its
Cholesky factor: the kernel builds both in one compiled pass per candidate where the twin calls
NumPy and LAPACK on small matrices, so call overhead bounds the twin. The batch is one posterior
over the available pool (``2048 x 40`` covariances and triangular solves) plus a Cholesky row per
pick; the twin refits on the augmented observations before each pick, as the definition reads.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.gp import LENGTH_GRID, NUGGET_GRID, NUGGET_NOISELESS, gp_fit, gp_select
from tests._ref_gp import gp_fit_ref, gp_select_ref


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    U = rng.random((40, 3))
    t = np.log(1.0 + 5.0 * U[:, 0]) * (0.5 + U[:, 1]) ** 2 / (0.2 + U[:, 2]) + 0.01 * rng.normal(size=40)
    z = (t - t.mean()) / t.std()
    P = rng.random((2048, 3))
    available = np.ones(2048, dtype=bool)
    available[rng.choice(2048, 148, replace=False)] = False
    return U, z, P, available


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("noisy", [False, True], ids=["noiseless", "noisy"])
def test_gp_fit(benchmark, noisy, impl):
    benchmark.group = f"gp-fit-40x3-{'noisy' if noisy else 'noiseless'}"
    U, z, _, _ = _inputs()
    nuggets = NUGGET_GRID if noisy else NUGGET_NOISELESS
    if impl == "numba":
        gp_fit(U, z, nuggets=nuggets)
        out = benchmark(lambda: gp_fit(U, z, nuggets=nuggets))
    else:
        out = benchmark(lambda: gp_fit_ref(U, z, nuggets, LENGTH_GRID, 2))
    assert out[4] == (148 if noisy else 78)


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("kappa", [None, 2.0], ids=["var", "ucb"])
def test_gp_select(benchmark, kappa, impl):
    benchmark.group = f"gp-select-{'var' if kappa is None else 'ucb'}-2048x3-k4"
    U, z, P, available = _inputs()
    lengths, s2, noise, _, _ = gp_fit(U, z)
    if impl == "numba":
        gp_select(U, z, P, available, 4, lengths, s2, noise, kappa=kappa)
        picks, _, _ = benchmark(lambda: gp_select(U, z, P, available, 4, lengths, s2, noise, kappa=kappa))
    else:
        picks, _, _ = benchmark(lambda: gp_select_ref(U, z, P, available, 4, lengths, s2, noise, kappa=kappa))
    assert picks.size == 4 and available[picks].all()
