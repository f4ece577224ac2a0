"""The exact check of the common-factor sums search (``_best_sets`` in
etc_fast/policies/symbolic/_prodsums.py): the ``keep`` column sets with the least exact residual,
when the Gram residuals' error bounds send nearly every set to a QR factorization.

``[blocked]`` is ``_best_sets``: residuals computed a doubling block of chunks at a time, a chunk
none of whose sets can enter skipped, a tuple built only for a set that enters. ``[chunked]`` is
:func:`best_sets_chunked`, the plain reading it must agree with (tests/policies/
test_symbolic_prodsums.py): one QR call per chunk of ``max(4 keep, 64)`` sets and every set merged
by a stable sort. Sizes are those of a many-input law's search: 16 observations, every triple of
60 library columns (34,220 sets), bounds of 0.

What bounds it: both factor every set (``n k^2`` flops each); the chunked reading adds a NumPy
call's overhead per 64 sets and a Python tuple per set.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from etc_fast.policies.symbolic._prodsums import _best_sets, _exact_rss


def best_sets_chunked(U: np.ndarray, t: np.ndarray, sets: np.ndarray, rss: np.ndarray, err: np.ndarray,
                      keep: int) -> list[tuple[float, tuple[int, ...]]]:
    """``_best_sets`` one chunk at a time: each chunk's exact residuals computed on their own and
    merged by a stable sort, the search stopped at the first chunk whose lowest bound is above the
    ``keep``-th exact residual."""
    lower = np.maximum(rss - err, 0.0)
    chunk = max(4 * keep, 64)
    best: list[tuple[float, tuple[int, ...]]] = []

    def confirm(idx: np.ndarray) -> None:
        exact = _exact_rss(U, t, sets[idx])
        best.extend((float(v), tuple(sorted(int(c) for c in sets[i]))) for v, i in zip(exact, idx, strict=True))
        best.sort(key=lambda f: f[0])
        del best[keep:]

    # the first chunk: the sets of least bound (argpartition's pick, as _best_sets makes it)
    first = np.argpartition(lower, chunk - 1)[:chunk] if lower.size > chunk else np.arange(lower.size)
    confirm(first)
    if lower.size <= chunk:
        return best
    # then every other set whose bound is at most the keep-th residual, by bound, then index
    order = np.flatnonzero((lower <= best[-1][0]) & ~np.isin(np.arange(lower.size), first))
    order = order[np.argsort(lower[order], kind="stable")]  # stable: equal bounds by index
    while order.size:
        idx, order = order[:chunk], order[chunk:]
        if lower[idx[0]] > best[-1][0]:
            break
        confirm(idx)
    return best


def _inputs(n: int = 16, L: int = 60, seed: int = 0):
    rng = np.random.default_rng(seed)
    U = rng.normal(size=(n, L))
    U /= np.linalg.norm(U, axis=0)
    t = 0.6 * U[:, 3] - 0.8 * U[:, 41] + 0.2 * U[:, 57] + 1e-3 * rng.normal(size=n)
    sets = np.array(list(itertools.combinations(range(L), 3)))
    return U, t, sets, np.zeros(len(sets)), np.ones(len(sets))


@pytest.mark.parametrize("impl", ["blocked", "chunked"])
def test_best_sets(benchmark, impl):
    benchmark.group = "best-sets-16x34220"
    U, t, sets, rss, err = _inputs()
    fn = _best_sets if impl == "blocked" else best_sets_chunked
    best = benchmark(fn, U, t, sets, rss, err, 4)
    assert best[0][1] == (3, 41, 57)
