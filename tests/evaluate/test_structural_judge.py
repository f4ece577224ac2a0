"""Structural judge: the hidden law up to its hidden constants, nothing else free."""

import dataclasses

import numpy as np
import pytest

from etc_fast.evaluate._judge import Judge
from etc_fast.evaluate._structural import JUDGE_VERSION, StructuralJudge
from etc_fast.tasks import get_task
from tests._tasks import make_task
from tests.evaluate.judge_corpus import CASES

GRAV = dataclasses.replace(
    make_task("grav", "6.674e-5*m1*m2/r**1.5", [("m1", "log", 1, 1e3), ("m2", "log", 1, 1e3), ("r", "log", 1, 10)]),
    ground_truth_text="G*m1*m2/r**1.5", constants={"G": 6.674e-5},
)
QUART = make_task("quart", "3*x**4 + 2*y", [("x", "log", 0.5, 5), ("y", "linear", 1, 2)])


@pytest.fixture(scope="module")
def judge():
    return StructuralJudge()


def _wrap(task, src):
    if "def discovered_law" in src:
        return src
    return f"{task.signature}\n    import numpy as np\n    import math\n    return {src}\n"


def test_is_a_judge(judge):
    assert isinstance(judge, Judge) and judge.name == "structural" and judge.version == JUDGE_VERSION


def test_corpus_covers_every_module_and_version():
    from etc_fast.tasks import MODULES

    assert len(CASES) >= 150
    assert {c[0] for c in CASES} == set(MODULES)
    assert {c[2] for c in CASES} == {"v0", "v1", "v2"}
    assert all(isinstance(c[4], str) and c[4] for c in CASES)
    assert sum(c[3] for c in CASES) >= 60 and sum(not c[3] for c in CASES) >= 60


@pytest.mark.parametrize("case", CASES, ids=[f"{c[0]}-{c[1]}-{c[2]}-{c[4][:40]}" for c in CASES])
def test_corpus(judge, case):
    module, difficulty, version, label, why, src = case
    task = get_task(module, difficulty, version)
    v = judge.judge(_wrap(task, src), task)
    assert v.credited == label, f"{why}: {v.reason}"
    assert v.reason


@pytest.mark.parametrize("sub", [
    "6.674e-5*m1*m2/r**1.5",
    "3e-9*m1*m2/r**1.5",
    "(m1*m2)*0.37*r**-1.5",
    "m2*m1*pow(r, -1.5)/12",
    "def discovered_law(m1, m2, r):\n    import numpy as np\n    G = 2.5\n    return G*m1*m2/np.sqrt(r**3)",
])
def test_credits_other_constant_values(judge, sub):
    v = judge.judge(sub, GRAV)
    assert v.credited, v.reason
    assert "G " in v.reason and "allowed" in v.reason


@pytest.mark.parametrize("sub,fragment", [
    ("6.674e-5*m1*m2/r**2", "exponent -2 vs -1.5 on r"),
    ("6.674e-5*m1*m2/r**1.51", "exponent -1.51 vs -1.5 on r"),
    ("6.674e-5*m1*m2/r**1.5 + 7.0", "extra additive term 7"),
    ("-6.674e-5*m1*m2/r**1.5", "opposite sign"),
    ("6.674e-5*m1*m2*exp(-2*log(r))", "exponent -2 vs -1.5 on r"),
])
def test_names_the_difference(judge, sub, fragment):
    v = judge.judge(sub, GRAV)
    assert not v.credited
    assert fragment in v.reason, v.reason


def test_no_free_scale_without_hidden_constant(judge):
    assert judge.judge("3*x**4 + 2*y", QUART).credited
    assert judge.judge("3.0000001*x**4 + 2*y", QUART).credited  # literals match at relative 1e-6
    for wrong in ("6*x**4 + 4*y", "3*x**4 + 2*y + 1e-9", "3*x**4.03 + 2*y", "3*x**4", "3.01*x**4 + 2*y"):
        assert not judge.judge(wrong, QUART).credited, wrong


def test_scale_far_from_truth_is_credited_with_reason():
    task = get_task("m10_be_distribution", "easy", "v0")
    v = StructuralJudge().judge(_wrap(task, "1 / (np.exp(1e-15 * omega / T) + 1)"), task)
    assert v.credited and "HIDDEN_CONSTANT 1e-15 vs 1.0513e-14: allowed" in v.reason


@pytest.mark.parametrize("src,fragment", [
    ("", "no submission"),
    ("def discovered_law(m1, m2, r):\n    for i in range(3):\n        pass\n    return m1", "for loops"),
    ("def discovered_law(m1, m2, r):\n    return m1.real * m2", "attribute"),
    ("def discovered_law(m1, m2, r):\n    import os\n    return m1", "import of module 'os'"),
    ("def discovered_law(m1, m2, r):\n    return m1 if r > 3 else m2", "splits the domain"),
    ("def discovered_law(m1, m2, r):\n    return foo(m1)", "unknown name 'foo'"),
    ("def discovered_law(m1, m2):\n    return m1", "discovered_law must take"),
    ("def discovered_law(m1, m2, r)\n    return m1", "not valid Python"),
])
def test_refuses_what_it_cannot_translate(judge, src, fragment):
    v = judge.judge(src, GRAV)
    assert not v.credited and fragment in v.reason, v.reason


def test_never_executes_the_submission(judge, tmp_path):
    marker = tmp_path / "ran"
    src = f"def discovered_law(m1, m2, r):\n    open({str(marker)!r}, 'w').write('x')\n    return m1"
    v = judge.judge(src, GRAV)
    assert not v.credited and not marker.exists()


def test_custom_task_constants(tmp_path):
    from etc_fast.tasks import get_task as gt

    p = tmp_path / "rad.yaml"
    p.write_text(
        "name: rad\ndescription: radiated power\noutput: {name: P, description: power}\n"
        "variables:\n  - {name: T, description: temperature, scale: log, low: 100, high: 1000}\n"
        "constants: {sigma: 5.67e-8}\nlaw: sigma * T**4 + 2\n"
    )
    task = gt(str(p))
    assert task.constants == {"sigma": 5.67e-8}
    assert np.allclose(task.truth(np.array([[100.0]])), 5.67e-8 * 1e8 + 2)
    j = StructuralJudge()
    assert j.judge("1e-7 * T**4 + 2", task).credited
    assert not j.judge("1e-7 * T**4 + 3", task).credited  # 2 is a literal, not a hidden constant
    assert not j.judge("1e-7 * T**4", task).credited


@pytest.mark.parametrize("law,variables,right,wrong", [
    # a number inside an exponential is a prefactor of the same law
    ("exp(-12 - a/(8.314*b))", [("a", "linear", -8e4, -2e4), ("b", "log", 250, 700)],
     ["6.14421235332821e-06*exp(-a/(8.314*b))", "exp(-12)*exp(-a/(8.314*b))"],
     ["6.2e-06*exp(-a/(8.314*b))", "6.14421235332821e-06*exp(-a/(8.3*b))", "exp(-a/(8.314*b))"]),
    # a power of a number is an exponential with a rate
    ("b*2.3**((a - 20)/10)", [("a", "linear", 0, 40), ("b", "log", 1, 10)],
     ["0.189035916824197*b*exp(0.0832909122935104*a)"],
     ["0.189035916824197*b*exp(0.0833*a)", "0.19*b*exp(0.0832909122935104*a)"]),
    # a number inside a logarithm is an additive term
    ("log(5*a)*b", [("a", "log", 1, 10), ("b", "log", 1, 10)],
     ["(1.6094379124341003 + log(a))*b"], ["(1.61 + log(a))*b", "(1.6094379124341003 + log(a))*b + 1"]),
])
def test_numbers_of_the_law_written_another_way(law, variables, right, wrong):
    task = make_task("t", law, variables)
    j = StructuralJudge()
    for sub in right:
        v = j.judge(sub, task)
        assert v.credited, (sub, v.reason)
    for sub in wrong:
        assert not j.judge(sub, task).credited, sub


def test_deterministic(judge):
    a = judge.judge("6.674e-5*m1*m2/r**1.49", GRAV)
    b = StructuralJudge().judge("6.674e-5*m1*m2/r**1.49", GRAV)
    assert a == b


def test_bad_tolerance():
    with pytest.raises(ValueError, match="tolerances"):
        StructuralJudge(rel_tol=0)


def test_explanation_does_not_expand_nested_functions():
    """A genetic-programming model with functions of functions is explained without expanding it:
    sympy's expand of this model (symbolic regression on a fin-efficiency law) factored huge
    integers for minutes inside the judge's explanation."""
    import sympy as sp

    from etc_fast.evaluate._structural import _EXPAND_MAX_OPS, _expand_small

    x = sp.Symbol("mL", positive=True)
    f = sp.Float
    model = f("-0.000002764325") + f("1.000001668930") * sp.exp(
        sp.cos((f("-0.981372952461") * x - f("0.006044315"))
               / (f("-0.051043257117") - f("0.330697864294") ** (f("-0.326864689589") * x)))
        - sp.cos(f("-6.331334590912"))) ** (f("0.768189668655") + f("0.519777774811") * x)
    assert _expand_small(model) is model
    big = sum(sp.Integer(k) * x ** k for k in range(1, _EXPAND_MAX_OPS))
    assert _expand_small(big * (x + 1)) == big * (x + 1)
    assert _expand_small(x * (x + 1)) == x ** 2 + x  # small laws are still expanded


# ---- combined constants ------------------------------------------------------------------
def _combined_task(name):
    from tests.evaluate.judge_corpus import COMBINED_TASKS

    law, constants, variables = COMBINED_TASKS[name]
    return make_task(name, law, variables, constants=constants)


def test_combined_corpus_is_balanced():
    from tests.evaluate.judge_corpus import COMBINED_CASES, COMBINED_TASKS

    assert len(COMBINED_CASES) >= 20
    assert {c[0] for c in COMBINED_CASES} == set(COMBINED_TASKS)
    assert sum(c[1] for c in COMBINED_CASES) >= 9 and sum(not c[1] for c in COMBINED_CASES) >= 9


def _combined_ids():
    from tests.evaluate.judge_corpus import COMBINED_CASES

    return COMBINED_CASES, [f"{c[0]}-{c[2][:40]}" for c in COMBINED_CASES]


@pytest.mark.parametrize("case", _combined_ids()[0], ids=_combined_ids()[1])
def test_combined_corpus(judge, case):
    name, label, why, src = case
    task = _combined_task(name)
    v = judge.judge(_wrap(task, src), task)
    assert v.credited == label, f"{why}: {v.reason}"


_PENDULUM_YAML = (
    "name: pendulum\ndescription: period of a damped pendulum\noutput: {name: P, description: period}\n"
    "variables:\n  - {name: l, description: length, scale: log, low: 0.1, high: 10}\n"
    "  - {name: gamma, description: damping rate, scale: linear, low: 0.0, high: 1.0}\n"
)


@pytest.mark.parametrize("constants", [True, False], ids=["constants-block", "literal-g"])
@pytest.mark.parametrize("sqrt", ["np.sqrt", "numpy.sqrt", "math.sqrt"])
def test_damped_pendulum_with_combined_constants(tmp_path, constants, sqrt):
    """A custom damped pendulum: the exact law with g/(4 pi^2) and 1/(16 pi^2) written as decimals
    is credited, with g a named constant and with g a literal; 1/(8 pi^2) or g/(4 pi) are refused."""
    from etc_fast.tasks import get_task as gt

    p = tmp_path / "pendulum.yaml"
    law = "law: 2*pi/sqrt(g/l - gamma**2/4)\nconstants: {g: 9.81}\n" if constants else \
        "law: 2*pi/sqrt(9.81/l - gamma**2/4)\n"
    p.write_text(_PENDULUM_YAML + law)
    task = gt(str(p))
    j = StructuralJudge(timeout_s=None)

    def src(body):
        return f"def discovered_law(l, gamma):\n    import numpy as np\n    import numpy\n    import math\n    return {body}\n"

    v = j.judge(src(f"1/{sqrt}(-0.00633257397765*gamma**2 + 0.248490202883/l)"), task)
    assert v.credited, v.reason
    assert "1/(16*pi**2)" in v.reason or "-0.00633257" in v.reason
    # g/(4 pi) for g/(4 pi^2) is the law with g = 9.81 pi where g is a named constant, wrong where it is 9.81
    gpi = "1/{s}(-0.00633257397765*gamma**2 + 0.780654995866/l)"
    assert j.judge(src(gpi.format(s=sqrt)), task).credited == constants
    for wrong in ("1/{s}(-0.0126651479553*gamma**2 + 0.248490202883/l)",
                  "1/{s}(-0.00633257397765*gamma**2 + 0.248490202883/l**1.01)",
                  "1/{s}(-0.00633257397765*gamma**3 + 0.248490202883/l)",
                  "1/{s}(0.248490202883/l)"):
        w = j.judge(src(wrong.format(s=sqrt)), task)
        assert not w.credited, (wrong, w.reason)
