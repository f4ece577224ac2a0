"""The common-factor sums family of the symbolic search: a monomial times a sum of products over a
few core inputs (etc_fast/policies/symbolic/_prodsums.py)."""

import numpy as np
import pytest

from etc_fast.policies.symbolic import search
from etc_fast.policies.symbolic._grammar import make_atoms
from etc_fast.policies.symbolic._prodsums import _common_exponents, core_library, fit_common_sums
from etc_fast.policies.symbolic._search import SearchLimits, new_collector
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
