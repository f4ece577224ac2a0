"""The signed family of the symbolic search: signed atoms, log atoms, sign-changing outputs."""

import numpy as np
import pytest

from etc_fast.evaluate._structural import StructuralJudge
from etc_fast.policies.symbolic import VariableDomain, search
from etc_fast.policies.symbolic._signed import POWER_OUTERS, error_scale, signed_view
from tests._tasks import make_task
from tests.policies.test_symbolic import sobol_points

# Laws written only here (none is a task of the benchmark or of configs/tasks/).
SIGNED_LAWS = [
    # a log of an input inside a sum, output changing sign
    ("log_atom", "0.3 - 0.002*a*log(b)", [("a", "linear", 200, 400), ("b", "log", 0.01, 100)]),
    # a difference of logs (a log of a ratio) times another input
    ("log_ratio", "2.5*a*log(b/c)", [("a", "log", 1, 10), ("b", "log", 1, 50), ("c", "log", 1, 50)]),
    # an input of both signs in a rational law
    ("signed_rational", "a*50/(50 - b)", [("a", "log", 1, 20), ("b", "linear", -30, 30)]),
    # an input that is negative over its whole domain, in a sum
    ("negative_input", "3*a + b**2/a", [("a", "log", 1, 10), ("b", "linear", -5, -1)]),
    # a sign-changing output: a saturation minus a constant
    ("sign_change_ratio", "2*a/(1.5 + a) - 0.4", [("a", "log", 0.01, 30)]),
    # a sign-changing output: a sum with an input of both signs
    ("sign_change_sum", "a**2 - 4*a*b + 1", [("a", "log", 0.1, 3), ("b", "linear", -2, 2)]),
    # an exponent off the half-integer grid in a sum
    ("off_grid_sum", "a/b**1.3 - 0.2*a**2", [("a", "log", 0.1, 1), ("b", "log", 0.5, 2)]),
    # a sum under a power 3/2
    ("power_of_sum", "(a + 2*b)**1.5", [("a", "log", 0.5, 5), ("b", "log", 0.5, 5)]),
]


def _domains(task):
    return [VariableDomain(v.name, v.scale, v.low, v.high, v.description) for v in task.variables]


@pytest.mark.parametrize("name,law,variables", SIGNED_LAWS, ids=[x[0] for x in SIGNED_LAWS])
def test_search_recovers_signed_law(name, law, variables):
    task = make_task(name, law, variables)
    X, y = sobol_points(task, 14)
    res = search(X, y, _domains(task))
    best = res.best
    assert best.error <= res.tol, (best.expression, best.error)
    v = StructuralJudge().judge(best.source, task)
    assert v.credited, (best.expression, v.reason)


def test_signed_view_atoms_and_kinds():
    doms = [VariableDomain("a", "log", 1, 10), VariableDomain("b", "linear", -3, 3),
            VariableDomain("c", "linear", -9, -1), VariableDomain("th", "linear", 10, 170, "angle in degrees")]
    atoms, kinds = signed_view(doms)
    got = {(a.name, a.kind): k for a, k in zip(atoms, kinds)}
    assert got[("a", "raw")] == "pos" and got[("a", "log")] == "log"
    assert got[("b", "raw")] == "signed" and ("b", "log") not in got
    assert got[("c", "raw")] == "nonzero" and ("c", "log") not in got
    assert got[("th", "sin")] == "pos" and got[("th", "cos")] == "signed"


def test_error_scale_floors_only_sign_changing_outputs():
    y = np.array([1e-6, 1.0, 2.0, 3.0])
    np.testing.assert_array_equal(error_scale(y), np.abs(y))
    ys = np.array([-1e-6, 1.0, -2.0, 3.0])
    s = error_scale(ys)
    assert s[0] == pytest.approx(1e-2 * np.median(np.abs(ys)))
    np.testing.assert_array_equal(s[1:], np.abs(ys[1:]))


def test_power_outers_invert():
    y = np.array([0.5, 1.0, 7.0])
    for o in POWER_OUTERS:
        np.testing.assert_allclose(o.forward(o.inverse(y)), y, rtol=1e-12)
