"""Best column pairs for a two-term least-squares fit (the signed family's subset selection).

``[numba]`` is :func:`kernels.pairs.best_pairs`; ``[numpy]`` its NumPy twin: the Gram matrix
``U.T @ U`` of all columns, the gain of every pair from it in whole-array operations, and
``argpartition`` for the best ``keep``. Sizes are those of a three-input search: 16 observations,
1500 library columns (about 1.1 million pairs).

What bounds it: both do ``L^2 n / 2`` multiply-adds for the Gram entries; NumPy also stores the
``L x L`` matrices (18 MB each here) and runs several passes over them, where the kernel keeps a
running top-``keep`` list and nothing else.
"""

from __future__ import annotations

import numpy as np
import pytest

from kernels.pairs import best_pairs


def best_pairs_np(U: np.ndarray, t: np.ndarray, keep: int) -> list[tuple[int, int]]:
    """NumPy twin of :func:`kernels.pairs.best_pairs` for unordered pairs of all columns."""
    b = U.T @ t
    G = U.T @ U
    with np.errstate(all="ignore"):
        gain = (b[:, None] ** 2 + b[None, :] ** 2 - 2.0 * G * b[:, None] * b[None, :]) / (1.0 - G * G)
    ok = np.triu(np.abs(G) < 1.0 - 1e-9, 1) & np.isfinite(gain)
    gain = np.where(ok, gain, -np.inf)
    flat = np.argpartition(-gain, keep - 1, axis=None)[:keep]
    flat = flat[np.argsort(-gain.ravel()[flat], kind="stable")]
    return [(int(i), int(j)) for i, j in zip(*np.unravel_index(flat, gain.shape)) if np.isfinite(gain[i, j])]


def _inputs(n: int = 16, L: int = 1500, seed: int = 0):
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(n, L))
    U /= np.linalg.norm(U, axis=0)
    t = 0.6 * U[:, 17] - 0.8 * U[:, L - 299] + 0.01 * rng.normal(size=n)
    return U, t


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_best_pairs(benchmark, impl):
    benchmark.group = "best-pairs-16x1500"
    U, t = _inputs()
    fn = best_pairs if impl == "numba" else best_pairs_np
    best_pairs(U, t, 8)  # compile outside the timing
    pairs = benchmark(fn, U, t, 8)
    assert pairs[0] == (17, 1201)  # L - 299
