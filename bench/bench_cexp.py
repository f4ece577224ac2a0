"""Compound-family screening errors (the symbolic search's rate screens).

``[numba]`` is :func:`kernels.cexp.screen_errors`; ``[numpy]`` its NumPy twin
(``tests/_ref_cexp.py``): the exponentials, weighted columns, normal equations and predictions of
all guesses as ``[B, n, k]`` arrays, LAPACK's batched solve. Size of one screen of a three-input
search: 20 observations, 216 library monomials x 20 rates x 7 prefactors (30,240 guesses).

What bounds it: both do ``B n k^2`` multiply-adds and ``2 B n`` exponentials; NumPy also writes and
reads several ``[B, n, k]`` temporaries (about 15 MB each here), where the kernel keeps one
problem's columns in a 20 x 3 buffer.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.cexp import screen_errors
from tests._ref_cexp import screen_errors_ref


def _inputs(seed: int = 0):
    rng = np.random.default_rng(seed)
    n = 20
    A = rng.uniform(0.5, 3.0, size=(n, 3))
    y = 2.0 * A[:, 0] * (1.0 + 0.5 * np.exp(-1.3 * A[:, 1]))
    vals = [v for v in np.arange(-4, 5) / 2.0 if v != 0.0]
    lib = [A[:, j] ** v for j in range(3) for v in vals]
    lib += [A[:, j] ** a * A[:, k] ** b for j, k in ((0, 1), (0, 2), (1, 2)) for a in vals for b in vals]
    NV = np.stack(lib)
    MV = np.stack([np.ones(n), A[:, 0], A[:, 1], A[:, 0] ** 2, A[:, 0] * A[:, 2], A[:, 2] ** -1, A[:, 1] ** 0.5])
    L, R, K = NV.shape[0], 20, MV.shape[0]
    li = np.repeat(np.arange(L), R * K)
    g = np.repeat(np.geomspace(0.01, 10.0, L * R) * np.where(np.arange(L * R) % 2, 1.0, -1.0), K)
    mi = np.tile(np.arange(K), L * R)
    return y, NV, MV, li, g, mi


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("kind", ["expoff", "mobius"])
def test_screen_errors(benchmark, impl, kind):
    benchmark.group = f"cexp-screen-{kind}-30240"
    args = _inputs()
    fn = screen_errors if impl == "numba" else screen_errors_ref
    screen_errors(kind, *[a[:4] if a.ndim == 1 and a.size > 100 else a for a in args])  # compile outside
    err = benchmark(fn, kind, *args)
    assert err.shape == (args[3].size,) and np.all(np.isfinite(err))
