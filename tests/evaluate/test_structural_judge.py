"""Structural judge: constants refitted, exponents fixed, every finite-target point must match."""

import numpy as np
import pytest

from etc_fast.evaluate._judge import Judge
from etc_fast.evaluate._structural import StructuralJudge, refit_program
from tests._tasks import make_task

GRAV = make_task("grav", "6.674e-5*m1*m2/r**1.5", [("m1", "log", 1, 1e3), ("m2", "log", 1, 1e3), ("r", "log", 1, 10)])
QUART = make_task("quart", "3*x**4 + 2*y", [("x", "log", 0.5, 5), ("y", "linear", 1, 2)])
PINNED = make_task("pinned", "1/(exp(1e-19*w**1.5/T) + 1)", [("w", "log", 1e8, 1e10), ("T", "log", 10, 1e3)])


@pytest.fixture(scope="module")
def judge():
    return StructuralJudge()


def test_is_a_judge(judge):
    assert isinstance(judge, Judge) and judge.name == "structural"


@pytest.mark.parametrize("sub", [
    "6.674e-5*m1*m2/r**1.5",
    "C*m1*m2/r**1.5",
    "(m1*m2)*0.37*r**-1.5",
    "m2*m1*pow(r, -1.5)/12",
    "def discovered_law(m1, m2, r):\n    import numpy as np\n    G = 2.5\n    return G*m1*m2/np.sqrt(r**3)",
])
def test_credits_rescaled_and_rearranged(judge, sub):
    v = judge.judge(sub, GRAV)
    assert v.credited, v.reason
    assert "matches after refit" in v.reason


@pytest.mark.parametrize("sub,fragment", [
    ("C*m1*m2/r**2", "max relative error"),
    ("C*m1*m2/r**1.51", "max relative error"),
    ("C*m1/r**1.5", "max relative error"),
    ("C*m1*m2", "max relative error"),
    ("C*m1*m2/r**1.5 + D*m1", "vanishes"),
])
def test_rejects_changed_structure(judge, sub, fragment):
    v = judge.judge(sub, GRAV)
    assert not v.credited
    assert fragment in v.reason


def test_exponent_4_vs_4_03(judge):
    assert judge.judge("7*x**4 + y", QUART).credited
    v = judge.judge("7*x**4.03 + y", QUART)
    assert not v.credited and "max relative error" in v.reason
    assert not judge.judge("7*x**4", QUART).credited  # missing dependency on y


def test_not_in_language(judge):
    v = judge.judge("m1.real * m2", GRAV)
    assert not v.credited and v.reason.startswith("not in the hypothesis language")
    v = judge.judge("", GRAV)
    assert not v.credited


def test_pinned_output_needs_the_variation(judge):
    # the output stays within 1e-5 of 0.5: relative error alone cannot separate these
    assert judge.judge("1/(exp(3e-19*w**1.5/T) + 1)", PINNED).credited
    assert not judge.judge("0.5 + 0*w", PINNED).credited
    v = judge.judge("1/(exp(1e-14*w/T) + 1)", PINNED)
    assert abs(PINNED.truth(np.array([[1e10, 10.0]]))[0] - 0.5) < 1e-5
    assert not v.credited and "spread" in v.reason


def test_refit_recovers_constants():
    from etc_fast.expr import parse

    X = np.column_stack([np.linspace(1, 3, 40), np.linspace(2, 1, 40)])
    y = 4.0 * np.exp(-0.7 * X[:, 0] * X[:, 1])
    pred = refit_program(parse("exp(-2*x*z)", ["x", "z"]), X, y)
    np.testing.assert_allclose(pred, y, rtol=1e-9)


def test_deterministic(judge):
    a = judge.judge("C*m1*m2/r**1.49", GRAV)
    b = StructuralJudge().judge("C*m1*m2/r**1.49", GRAV)
    assert a == b


def test_bad_tolerance():
    with pytest.raises(ValueError, match="tolerances"):
        StructuralJudge(rel_tol=0)
