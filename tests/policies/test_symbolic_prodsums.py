"""The common-factor sums family of the symbolic search: a monomial times a sum of products over a
few core inputs (etc_fast/policies/symbolic/_prodsums.py)."""

import itertools

import numpy as np
import pytest

from bench.bench_best_sets import best_sets_chunked
from etc_fast.policies.symbolic import search
from etc_fast.policies.symbolic._forms import Form, _complexity, common_factor
from etc_fast.policies.symbolic._grammar import OUTERS, make_atoms
from etc_fast.policies.symbolic._prodsums import (
    _anchored_triples,
    _best_pairs,
    _best_sets,
    _common_exponents,
    _exact_rss,
    core_library,
    fit_common_sums,
    largest_core,
    library_size,
    probe_slopes,
)
from etc_fast.policies.symbolic._search import SearchLimits, _n_params, new_collector
from tests._tasks import make_task
from tests.policies.test_symbolic_factored import _clustered_points, _domains, _recovers

# Laws written only here: two products over two or three core inputs, each law times a monomial of
# four or five more inputs (none is a task of the benchmark, of configs/tasks/ or a generated draw).
_MORE = [("a", "log", 0.5, 5), ("b", "linear", 2, 6), ("k", "log", 1, 10), ("q", "log", 0.1, 1)]
COMMON_SUM_LAWS = [
    # a kinetic plus a potential term over a speed and a height
    ("energy", "0.7*a**2*b/(k*q**0.5)*(v**2 + 19.6*h)", [("v", "linear", 1, 5), ("h", "log", 0.1, 2), *_MORE]),
    # a square root of one input less a term linear in another (of one sign on the domain)
    ("root_less_linear", "3*a*k**2/(b*q)*(r**0.5 - 0.9*s)", [("r", "log", 1, 4), ("s", "linear", 0.1, 0.8), *_MORE]),
    # a square less a mixed product of two core inputs
    ("square_less_mixed", "2e3*a*b**1.5/q*(c**2 - 1.3*c*d**0.5)", [("c", "log", 1, 4), ("d", "log", 0.1, 1), *_MORE,
                                                                    ("e", "log", 1, 3)]),
]


def test_core_library_counts():
    # the constant 1, 12 powers per input, 144 per pair of inputs
    assert [len(core_library(tuple(range(k)), 6)) for k in (1, 2, 3)] == [13, 169, 469]
    lib = core_library((1, 4), 6)
    assert np.all(lib[:, [0, 2, 3, 5]] == 0) and np.all(np.count_nonzero(lib, axis=1) <= 2)


def test_common_exponents_see_through_the_sum():
    """The exponents of the inputs outside the core come out exact beside a quadratic in the core's
    logs, where a plain log-linear fit of the same records is off by more than a quarter."""
    name, law, variables = COMMON_SUM_LAWS[0]
    task = make_task(name, law, variables)
    X, y = _clustered_points(task, 18, 0.3)
    L, t = np.log(X), np.log(np.abs(y))
    got = _common_exponents(L, t, (0, 1))
    np.testing.assert_array_equal(got, [0, 0, 2, 1, -1, -0.5])


@pytest.mark.parametrize("name,law,variables", COMMON_SUM_LAWS, ids=[x[0] for x in COMMON_SUM_LAWS])
def test_family_fits_common_factor_sums_exactly(name, law, variables):
    task = make_task(name, law, variables)
    X, y = _clustered_points(task, 18, 0.3)
    doms = _domains(task)
    col = new_collector(X, y, doms, 0.0)
    atoms = tuple(a for per in make_atoms(doms) for a in per if a.kind == "raw")
    fit_common_sums(col, atoms, col.atoms_matrix(atoms), y, SearchLimits())
    form, err = min(col.flush(), key=lambda f: f[1])
    assert form.kind == "sum" and len(form.exps) == 2
    assert err <= 1e-9, (form, err)


@pytest.mark.parametrize("name,law,variables", COMMON_SUM_LAWS, ids=[x[0] for x in COMMON_SUM_LAWS])
def test_search_recovers_common_factor_sum_from_clustered_records(name, law, variables):
    _recovers(name, law, variables, {}, n=18, width=0.3)


def test_search_without_the_family_misses_them():
    """The sum family alone (its library moves two exponents away from one centre) misses the law the
    common-factor family writes: the best law of a search is exact only with it."""
    name, law, variables = COMMON_SUM_LAWS[2]
    task = make_task(name, law, variables)
    X, y = _clustered_points(task, 18, 0.3)
    import etc_fast.policies.symbolic._search as s

    orig = s.fit_common_sums
    try:
        s.fit_common_sums = lambda *a, **k: None
        s._MEMO.clear()
        assert search(X, y, _domains(task)).best.error > 1e-6
    finally:
        s.fit_common_sums = orig
        s._MEMO.clear()
    assert search(X, y, _domains(task)).best.error <= 1e-9


def test_core_sizes_follow_the_work_bound():
    assert [library_size(k) for k in (1, 2, 3, 4, 5)] == [len(core_library(tuple(range(k)), 6)) for k in (1, 2, 3, 4, 5)]
    # every input at 6 or fewer, then 4 at 7 inputs, 3 from 8 to 11, 2 at 12
    assert [largest_core(m, SearchLimits().common_sum_work) for m in range(1, 13)] == [1, 2, 3, 4, 5, 6, 4, 3, 3, 3, 3, 2]
    assert largest_core(10, 10**12) == 10 and largest_core(10, 0) == 0


def _unit(V):
    return V / np.linalg.norm(V, axis=0)


def test_anchored_triples_are_the_best_of_every_anchored_triple():
    """Against brute force: every triple with two anchor columns, fitted by least squares."""
    import itertools

    rng = np.random.default_rng(7)
    U = _unit(rng.normal(size=(14, 25)))
    anchors = np.array([0, 2, 3, 5, 8, 11])
    for t in (rng.normal(size=14), U[:, [2, 8, 19]] @ np.array([1.0, -3.0, 0.5])):
        brute = []
        for a, b in itertools.combinations(anchors, 2):
            for c in range(25):
                if c in (a, b):
                    continue
                cols = sorted((int(a), int(b), c))
                r = t - U[:, cols] @ np.linalg.lstsq(U[:, cols], t, rcond=None)[0]
                brute.append((float(r @ r), tuple(cols)))
        brute = sorted(set(brute))[:3]
        got = _anchored_triples(U, t, anchors, 3)
        assert [g[1] for g in got] == [b[1] for b in brute]
        np.testing.assert_allclose([g[0] for g in got], [b[0] for b in brute], rtol=1e-9, atol=1e-20)


def test_best_sets_trust_the_exact_residual_over_an_inexact_gram_one():
    """A nearly collinear pair's Gram residual can come out below an exact fit's (even below 0); its
    error bound sends it to the exact check, which ranks the exact fit first."""
    rng = np.random.default_rng(3)
    U = _unit(rng.normal(size=(10, 4)))
    t = U[:, 0] + 2.0 * U[:, 1]
    sets = np.array([[2, 3], [0, 1], [0, 2]])
    gram_rss = np.array([-1e-3, 1e-16, 0.5])  # the first is the inexact one
    err = np.array([1.0, 1e-12, 1e-12])
    got = _best_sets(U, t, sets, gram_rss, err, 2)
    assert got[0][1] == (0, 1) and got[0][0] < 1e-25
    for rss, cols in got:  # every residual returned is the exact one
        r = t - U[:, cols] @ np.linalg.lstsq(U[:, cols], t, rcond=None)[0]
        assert rss == pytest.approx(float(r @ r), rel=1e-9, abs=1e-25)


def test_best_pairs_rank_an_exact_pair_first_among_nearly_collinear_columns():
    rng = np.random.default_rng(5)
    base = rng.normal(size=(12, 3))
    near = base[:, [2]] + 1e-7 * rng.normal(size=(12, 6))  # six columns all but equal to the third
    U = _unit(np.column_stack([base, near]))
    t = 0.3 * U[:, 0] + U[:, 1]
    best = _best_pairs(U, t, 3)
    assert best[0][1] == (0, 1) and best[0][0] < 1e-25 * float(t @ t)


def _probed_points(task, n: int, width: float, factor: float = 1.3) -> tuple[np.ndarray, np.ndarray]:
    """A bootstrap's records (the centre, then each input alone moved by ``factor``) and ``n``
    clustered records after them."""
    centre = task.unit_to_inputs(np.full((1, task.d), 0.5))
    probes = np.repeat(centre, task.d, axis=0)
    probes[np.arange(task.d), np.arange(task.d)] *= factor
    Xc, _ = _clustered_points(task, n, width)
    X = np.vstack([centre, probes, Xc])
    return X, task.truth(X)


def test_probe_slopes_read_the_common_factor_through_a_sign_change():
    """The sum changes sign on the records, so log|y| has a spike the quadratic in the core cannot
    take up and the regression's exponents are off; the one-at-a-time probes give them exactly."""
    law = "1.5*a**2*k/(b*q**0.5)*(r**0.5 - 0.9*s)"
    variables = [("r", "log", 1, 4), ("s", "linear", 0.5, 2.5), *_MORE]
    task = make_task("root_less_linear_crossing", law, variables)
    X, y = _probed_points(task, 16, 0.6)
    assert (y > 0).any() and (y < 0).any()
    L, t = np.log(X), np.log(np.abs(y))
    slopes = probe_slopes(L, y)
    np.testing.assert_allclose(slopes[2:], [2, -1, 1, -0.5], atol=1e-9)
    np.testing.assert_array_equal(_common_exponents(L, t, (0, 1), slopes), [0, 0, 2, -1, 1, -0.5])
    assert not np.array_equal(_common_exponents(L, t, (0, 1)), [0, 0, 2, -1, 1, -0.5])


def test_search_recovers_a_separable_three_term_sum_of_unequal_sizes():
    """Three contributions of one input each, their coefficients 20 orders of magnitude apart (the
    inputs' sizes make the terms alike): the anchored triples find it where no pair is close."""
    law = "0.004*(f + 2000*g + 3e-19*n)"
    variables = [("f", "log", 100, 1000), ("g", "log", 0.05, 0.5), ("n", "log", 1e20, 1e21)]
    _recovers("three_contributions", law, variables, {}, n=16, width=0.3)


def test_a_shared_factor_is_described_once():
    doms = _domains(make_task("shared", "a*b*(c + d)", [(v, "log", 1, 2) for v in "abcd"]))
    atoms = tuple(a for per in make_atoms(doms) for a in per if a.kind == "raw")
    shared = Form(atoms, OUTERS[0], "sum", ((1, 1, 1, 0), (1, 1, 0, 1)), (1.0, 2.0))
    apart = Form(atoms, OUTERS[0], "sum", ((1, 1, 1, 0), (1, 0, 0, 1)), (1.0, 2.0))
    assert common_factor(shared) == ((1, 1, 0, 0), ((0, 0, 1, 0), (0, 0, 0, 1)))
    assert common_factor(apart) == ((1, 0, 0, 0), ((0, 1, 1, 0), (0, 0, 0, 1)))
    assert _n_params(shared) == 2 + 2 + 2 and _n_params(apart) == 2 + 1 + 3
    one = Form(atoms, OUTERS[0], "mono", ((1, 1, 1, 0),), (1.0,))
    assert common_factor(one) == ((0, 0, 0, 0), ((1, 1, 1, 0),)) and _n_params(one) == 4
    assert _complexity(shared) < _complexity(Form(atoms, OUTERS[0], "sum", ((1, 1, 1, 0), (1, 1, 0, 1), (0, 0, 1, 1)),
                                                  (1.0, 2.0, 3.0)))


@pytest.mark.parametrize("keep", [1, 3, 16])
@pytest.mark.parametrize("case", ["well", "collinear", "nan"])
def test_best_sets_returns_what_a_chunk_at_a_time_search_returns(keep, case):
    """_best_sets computes residuals a doubling block of chunks at a time and skips a chunk none of
    whose sets can enter: its answer, residuals and ties included, is the one-chunk-at-a-time
    search's, whether few sets need the exact check (well conditioned), nearly all do (bounds of
    0, the slow case of a many-input law), or some residuals are NaN."""
    rng = np.random.default_rng(11)
    U = _unit(rng.normal(size=(14, 24)))
    if case == "collinear":
        U[:, 12:] = U[:, :12] + 1e-9 * rng.normal(size=(14, 12))
    t = U[:, 1] - 0.5 * U[:, 7] + 0.01 * rng.normal(size=14)
    if case == "nan":
        U[5, 20] = np.nan  # every set with column 20 has a NaN residual
    sets = np.array(list(itertools.combinations(range(24), 3)))
    rss = _exact_rss(U, t, sets) + rng.normal(scale=1e-3, size=len(sets))
    rss = np.round(rss, 2)  # many equal residuals, so ties are decided by order
    err = {"well": 1e-6, "collinear": 10.0, "nan": 0.05}[case] * np.ones(len(sets))
    got = _best_sets(U, t, sets, rss, err, keep)
    want = best_sets_chunked(U, t, sets, rss, err, keep)
    assert len(got) == keep and got == want
