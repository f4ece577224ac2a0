"""Property: a law rewritten with its numbers folded into decimals is credited; a perturbed one is not."""

import re

import sympy as sp
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from etc_fast.evaluate._structural import StructuralJudge
from tests._tasks import make_task

_VARS = [("x", "log", 0.5, 5), ("y", "log", 0.5, 5)]
_X, _Y, _K = sp.Symbol("x", positive=True), sp.Symbol("y", positive=True), sp.Symbol("K", positive=True)
#: The factors a coefficient is a product of: literals, pi, e, sqrt(2) and the named constant K.
_FACTORS = {"2": sp.Integer(2), "3": sp.Integer(3), "1/2": sp.Rational(1, 2), "pi": sp.pi, "e": sp.E,
            "sqrt(2)": sp.sqrt(2), "K": _K}
_EXPONENTS = [sp.Rational(k, 2) for k in (-4, -2, -1, 1, 2, 3)]
_K_VALUE = 9.81

_coef = st.lists(st.sampled_from(sorted(_FACTORS)), min_size=1, max_size=2)
_term = st.tuples(_coef, st.sampled_from(_EXPONENTS), st.sampled_from(_EXPONENTS))
_law = st.tuples(st.lists(_term, min_size=1, max_size=2, unique_by=lambda t: (t[1], t[2])),
                 _coef, st.sampled_from(["plain", "sqrt", "inverse sqrt"]))


def _build(drawn):
    terms, prefactor, wrap = drawn
    inner = sum(sp.Mul(*[_FACTORS[f] for f in c]) * _X ** a * _Y ** b for c, a, b in terms)
    pre = sp.Mul(*[_FACTORS[f] for f in prefactor])
    return pre * {"plain": inner, "sqrt": sp.sqrt(inner), "inverse sqrt": 1 / sp.sqrt(inner)}[wrap], pre, inner, wrap


def _law_text(e):
    return str(e).replace("E", "e")


def _rewrite(drawn):
    """The law with K = 9.81, its numbers folded into decimals of 12 significant digits: expanded,
    over a common denominator, or with the prefactor taken into the root."""
    law, pre, inner, wrap = _build(drawn)
    k = {_K: sp.Float(_K_VALUE)}
    if wrap == "plain":
        forms = [sp.expand(law), sp.together(law)]
    else:
        sign = 1 if wrap == "sqrt" else -1
        forms = [sp.sqrt(sp.expand(pre ** (2 * sign) * inner)) ** sign]
    return [f.subs(k).evalf(12) for f in forms]


def _source(e):
    s = str(e)
    s = re.sub(r"\bsqrt\(", "np.sqrt(", s)
    return "def discovered_law(x, y):\n    import numpy as np\n    return " + s + "\n"


def _judge(text, constants):
    task = make_task("p", text, _VARS, constants=constants)
    return StructuralJudge(timeout_s=None), task


@settings(max_examples=25, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(_law, st.booleans(), st.integers(0, 10**6))
def test_folded_numbers_credited_perturbed_refused(drawn, named, pick):
    law, *_ = _build(drawn)
    if named and _K in law.free_symbols:
        j, task = _judge(_law_text(law), {"K": _K_VALUE})
    else:
        j, task = _judge(_law_text(law.subs(_K, sp.Float(repr(_K_VALUE)))), {})
    for form in _rewrite(drawn):
        v = j.judge(_source(form), task)
        assert v.credited, (task.ground_truth_text, str(form), v.reason)
    # without a named constant every number is the law's: any 1% change, or another exponent, is wrong
    literal = make_task("q", _law_text(law.subs(_K, sp.Float(repr(_K_VALUE)))), _VARS)
    form = _rewrite(drawn)[0]
    floats = sorted(form.atoms(sp.Float), key=str)
    if floats:
        f = floats[pick % len(floats)]
        wrong = form.xreplace({f: f * sp.Float("1.01")})
        assert not j.judge(_source(wrong), literal).credited, (literal.ground_truth_text, str(wrong))
    wrong = form.xreplace({_X: _X ** sp.Rational(11, 10)})
    assert not j.judge(_source(wrong), literal).credited, (literal.ground_truth_text, str(wrong))
