"""The search's libraries stay within their stated counts as the number of inputs grows."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from etc_fast.policies.symbolic._search import SearchLimits, _library


@pytest.mark.parametrize("m", range(1, 13))
@pytest.mark.parametrize(("centred", "half_width", "field"), [(False, 3.0, "exp_library"), (True, 2.5, "sum_library"),
                                                             (False, 2.0, "ratio_library")])
def test_library_never_exceeds_its_cap(m, centred, half_width, field):
    cap = getattr(SearchLimits(), field)
    center = np.linspace(-1.0, 2.0, m) if centred else None
    E = _library(m, center, half_width, cap, SearchLimits().sparse_level)
    assert E.shape[1] == m and 1 <= E.shape[0] <= cap
    assert len({tuple(r) for r in E.tolist()}) == E.shape[0]  # no monomial twice
    assert np.all(np.abs(E) <= 4.0) and np.all(E * 2 == np.round(E * 2))  # half-integers in [-4, 4]


def test_small_inputs_keep_the_whole_grid():
    # where the grid fits the cap, the library is the whole product grid in its usual order
    E = _library(3, None, 2.0, 1200, SearchLimits().sparse_level)
    axis = np.arange(-4, 5) / 2.0
    assert E.tolist() == [list(c) for c in itertools.product(axis, axis, axis)]


def test_ten_inputs_get_every_monomial_that_moves_two_exponents():
    m, cap, level = 10, SearchLimits().ratio_library, SearchLimits().sparse_level
    E = _library(m, None, 2.0, cap, level)
    moved = np.count_nonzero(E, axis=1)
    assert moved.max() == level == 2
    # every pair of inputs appears with every sign pattern of its two moved exponents
    pairs = {tuple(np.flatnonzero(r)) for r in E if np.count_nonzero(r) == 2}
    assert len(pairs) == m * (m - 1) // 2
    assert [0.0] * m == E[0].tolist()  # the centre comes first


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_search_past_its_memory_bound_fails_with_its_own_kind():
    import resource

    from etc_fast.errors import ERROR_KINDS, InfrastructureError
    from etc_fast.policies.symbolic._grammar import VariableDomain
    from etc_fast.policies.symbolic._memory import SearchMemoryLimit
    from etc_fast.policies.symbolic._search import search

    rng = np.random.default_rng(0)
    m, n = 10, 16000
    X = np.exp(rng.uniform(np.log(0.1), np.log(10.0), size=(n, m)))
    y = 2.0 * X[:, 0] + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] ** 2
    doms = [VariableDomain(f"x{i}", "log", 1.0, 10.0) for i in range(m)]
    before = resource.getrlimit(resource.RLIMIT_AS)
    lim = SearchLimits(memory_limit_mb=300)  # a library table alone needs 16000 x 2961 x 8 B = 379 MB
    with pytest.raises(SearchMemoryLimit) as info:
        search(X, y, doms, limits=lim)
    assert isinstance(info.value, InfrastructureError) and info.value.kind == "memory_limit" in ERROR_KINDS
    assert "memory_limit_mb" in str(info.value)
    assert resource.getrlimit(resource.RLIMIT_AS) == before  # the limit is restored
    big = np.ones((4000, 4000))  # and the process allocates freely again
    assert big.sum() == 16e6


def test_policy_refuses_a_bad_memory_bound():
    from etc_fast.policies.symbolic import SymbolicPolicy

    assert SymbolicPolicy(memory_limit_mb=512).limits.memory_limit_mb == 512
    for bad in (0, -5, 1.5, True, "4096"):
        with pytest.raises(ValueError, match="memory_limit_mb"):
            SymbolicPolicy(memory_limit_mb=bad)


@pytest.mark.skipif(not __import__("sys").platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_bound_too_small_to_start_is_refused_before_the_search():
    from etc_fast.policies.symbolic._grammar import VariableDomain
    from etc_fast.policies.symbolic._memory import SearchMemoryLimit
    from etc_fast.policies.symbolic._search import search

    X = np.linspace(1.0, 2.0, 12)[:, None]
    with pytest.raises(SearchMemoryLimit, match="at least 256 MiB to start"):
        search(X, 3.0 * X[:, 0], [VariableDomain("x", "log", 1.0, 10.0)], limits=SearchLimits(memory_limit_mb=64))


def _signed_library_by_grid(kinds, max_size, max_atoms=3):
    """The signed family's library as the whole grid, filtered: the reference its sparse build must equal."""
    import itertools

    from etc_fast.policies.symbolic import _signed

    plain = [j for j, k in enumerate(kinds) if k != "log"]
    logs = [j for j, k in enumerate(kinds) if k == "log"]
    for level in range(3):
        axes = [_signed._LEVELS[kinds[j]][level] for j in plain]
        if _signed._count(axes, len(logs), max_atoms) <= max_size or level == 2:
            break
    rows = []
    for combo in itertools.product(*axes):
        base = np.zeros(len(kinds))
        base[plain] = combo
        rows.append(base)
        for j in logs:
            r = base.copy()
            r[j] = 1.0
            rows.append(r)
    E = np.array(rows, dtype=np.float64).reshape(-1, len(kinds))
    E = E[np.count_nonzero(E, axis=1) <= max_atoms]
    return E[:max_size]


@pytest.mark.parametrize("seed", range(12))
def test_signed_library_is_the_filtered_grid_in_its_order(seed):
    from etc_fast.policies.symbolic import _signed

    rng = np.random.default_rng(seed)
    kinds = tuple(rng.choice(["pos", "nonzero", "signed", "log"], size=int(rng.integers(1, 8))).tolist())
    for atoms in (2, 3):
        for cap in (5, 60, 400, 3000, 50000):
            got = _signed._library(kinds, cap, atoms)
            assert np.array_equal(got, _signed_library_by_grid(kinds, cap, atoms)), (kinds, cap, atoms)


def test_signed_library_of_many_atoms_builds_only_its_sparse_rows():
    """22 atoms: the grid has about 10**7 rows; the library is built from its sparse rows only."""
    import tracemalloc

    from etc_fast.policies.symbolic import _signed

    kinds = ("pos",) * 12 + ("signed",) * 4 + ("log",) * 6
    _signed._library.cache_clear()
    tracemalloc.start()
    E = _signed._library(kinds, SearchLimits().signed_library, SearchLimits().signed_atoms)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert len(E) == min(SearchLimits().signed_library, len(E))
    assert (np.count_nonzero(E, axis=1) <= SearchLimits().signed_atoms).all()
    assert peak < 200 * 2**20, f"{peak / 2**20:.0f} MiB"
