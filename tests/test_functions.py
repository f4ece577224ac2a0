"""The law language's one table of elementary functions (etc_fast/expr/_functions.py), end to end.

Every entry: a custom task whose law uses it loads and its truth is NumPy's function; the
program's ``discovered_law`` source is scored in the sandbox with RMSLE ~0; the structural judge
credits an algebraic rewrite and refuses a different function; NewtonBench's scalar law semantics
(``_pysem``) agree with plain Python. A name outside the table is refused everywhere with a message
naming it and the accepted set.

Transcendental values are compared with a stated tolerance, never bit for bit: the kernel calls
the C library (or its own vectorized functions) where NumPy may use its own SIMD code, both
within a few ulp of the exact value, so ``RTOL = 1e-13`` (about 450 ulp) leaves a wide margin and
still catches any wrong function or wrong argument order.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

import kernels
from etc_fast.expr import ExprError, pack, parse
from etc_fast.expr._functions import BARE_NAMES, FUNCTIONS, NAMES, accepted_text, lookup
from kernels.programs import OP_ARITY, OPCODES

RTOL = 1e-13

# name -> (law, variables as (name, low, high), an algebraic rewrite, a different function)
CASES: dict[str, tuple[str, tuple, str, str]] = {
    "sin": ("sin(x)", (("x", 0.1, 1.5),), "2*sin(x/2)*cos(x/2)", "tan(x)"),
    "cos": ("cos(x)", (("x", 0.1, 1.5),), "1 - 2*sin(x/2)**2", "sin(x)"),
    "tan": ("tan(x)", (("x", 0.1, 1.2),), "sin(x)/cos(x)", "sin(x)"),
    "asin": ("asin(x)", (("x", -0.9, 0.9),), "atan(x/sqrt(1 - x**2))", "atan(x)"),
    "acos": ("acos(x)", (("x", -0.9, 0.9),), "pi/2 - asin(x)", "asin(x)"),
    "atan": ("atan(x)", (("x", -3.0, 3.0),), "asin(x/sqrt(1 + x**2))", "tanh(x)"),
    "atan2": ("atan2(x, y)", (("x", 0.5, 2.0), ("y", 0.5, 2.0)), "atan(x/y)", "atan(y/x)"),
    "sinh": ("sinh(x)", (("x", -2.0, 2.0),), "(exp(x) - exp(-x))/2", "tan(x)"),
    "cosh": ("cosh(x)", (("x", -2.0, 2.0),), "(exp(x) + exp(-x))/2", "1 + x**2/2"),
    "tanh": ("tanh(x)", (("x", -2.0, 2.0),), "(exp(2*x) - 1)/(exp(2*x) + 1)", "x/sqrt(1 + x**2)"),
    "asinh": ("asinh(x)", (("x", -3.0, 3.0),), "log(x + sqrt(x**2 + 1))", "atan(x)"),
    "acosh": ("acosh(x)", (("x", 1.1, 4.0),), "log(x + sqrt(x**2 - 1))", "log(2*x)"),
    "atanh": ("atanh(x)", (("x", -0.9, 0.9),), "log((1 + x)/(1 - x))/2", "asin(x)"),
    "exp": ("exp(x)", (("x", -2.0, 2.0),), "exp(x/2)**2", "cosh(x)"),
    "expm1": ("expm1(x)", (("x", -2.0, 2.0),), "exp(x) - 1", "sinh(x)"),
    "log": ("log(x)", (("x", 0.1, 10.0),), "2*log(sqrt(x))", "log10(x)"),
    "log10": ("log10(x)", (("x", 0.1, 10.0),), "log(x)/log(10)", "log(x)"),
    "log2": ("log2(x)", (("x", 0.1, 10.0),), "log(x)/log(2)", "log10(x)"),
    "log1p": ("log1p(x)", (("x", -0.5, 5.0),), "log(1 + x)", "log(2 + x)"),
    "sqrt": ("sqrt(x)", (("x", 0.1, 10.0),), "x**0.5", "x**(1/3)"),
    "cbrt": ("cbrt(x)", (("x", 0.1, 10.0),), "x**(1/3)", "sqrt(x)"),
    "hypot": ("hypot(x, y)", (("x", 0.5, 3.0), ("y", 0.5, 3.0)), "sqrt(x**2 + y**2)", "x + y"),
    "abs": ("abs(x)", (("x", -3.0, 3.0),), "sqrt(x**2)", "x"),
    "degrees": ("degrees(x)", (("x", 0.1, 1.5),), "x*180/pi", "x*60"),
    "radians": ("radians(x)", (("x", 1.0, 90.0),), "x*pi/180", "x/60"),
    "pow": ("pow(x, y)", (("x", 0.5, 3.0), ("y", 0.5, 2.0)), "exp(y*log(x))", "x*y"),
}

REFUSED = ("erf", "gamma", "floor", "ceil", "sign")


def test_every_function_has_a_case_an_opcode_and_a_judge_builder():
    from etc_fast.evaluate._translate import _FUNCS
    from etc_fast.expr._functions import sympy_functions

    assert set(CASES) == set(FUNCTIONS)
    builders = sympy_functions()
    for f in FUNCTIONS.values():
        assert OP_ARITY[OPCODES[f.name]] == f.arity, f.name
        assert f.name in builders and f.name in _FUNCS, f.name
        assert hasattr(np, f.numpy_name), f.name
        assert f.math_name is None or hasattr(math, f.math_name), f.name
    # every opcode but the leaves and the four arithmetic operators and negation is a table entry
    plain = {"var", "const", "add", "sub", "mul", "div", "neg"}
    assert set(OPCODES) - plain == set(FUNCTIONS)


def _task_file(tmp_path, name, law, variables):
    lines = [f"name: fn_{name}", f"description: a law with {name}", "output:", "  name: y",
             "  description: the output", "variables:"]
    for v, low, high in variables:
        lines += [f"  - name: {v}", f"    description: input {v}", "    scale: linear",
                  f"    low: {low!r}", f"    high: {high!r}"]
    lines.append(f"law: {law}")
    path = tmp_path / f"fn_{name}.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


@pytest.mark.parametrize("name", list(CASES))
def test_law_language_evaluates_each_function_as_numpy(name):
    law, variables, _, _ = CASES[name]
    names = [v[0] for v in variables]
    p = parse(law, names)
    assert parse(p.text, names) == p  # the canonical text reads back as the same program
    rng = np.random.default_rng(0)
    X = np.column_stack([rng.uniform(lo, hi, 257) for _, lo, hi in variables])
    want = FUNCTIONS[name].ufunc(*X.T)
    np.testing.assert_allclose(p.evaluate(X), want, rtol=RTOL, atol=0)
    # the source a policy submits computes the same values in plain Python
    ns: dict = {}
    exec(p.to_source(), {"math": math, "np": np}, ns)
    got = np.array([float(ns["discovered_law"](*row)) for row in X])
    np.testing.assert_allclose(got, want, rtol=RTOL, atol=0)
    # the integrators' row machine (kernels._rows) computes what the programs' machine computes
    from kernels._rows import IN, law_rows

    S = np.zeros((IN + 8, X.shape[0]))
    S[: X.shape[1]] = X.T
    law_rows(p.ops, p.args, p.consts, 0, len(p.ops), 0, S, X.shape[0])
    np.testing.assert_allclose(S[IN], want, rtol=RTOL, atol=0)


@pytest.mark.parametrize("alias", sorted(NAMES - set(FUNCTIONS)))
def test_aliases_are_the_same_program(alias):
    f = lookup(alias)
    args = ", ".join(["x", "y"][: f.arity])
    for prefix in ("np.", "numpy.", "math.") + (("",) if alias in BARE_NAMES else ()):
        assert parse(f"{prefix}{alias}({args})", ["x", "y"]) == parse(f"{f.name}({args})", ["x", "y"])


@pytest.mark.parametrize("bad", REFUSED)
@pytest.mark.parametrize("prefix", ["", "np.", "math."])
def test_law_language_refuses_other_functions_naming_them_and_the_set(bad, prefix):
    with pytest.raises(ExprError) as err:
        parse(f"1 + {prefix}{bad}(x)", ["x"])
    assert err.value.message.startswith(f"call to {prefix}{bad} is not allowed")
    assert accepted_text() in err.value.message
    assert err.value.position == "line 1, col 5"


def test_parser_folds_constant_calls_as_numpy():
    p = parse("x*atan2(1, 2) + hypot(3, 4) + tanh(0.5)", ["x"])
    assert len(p.consts) == 3
    np.testing.assert_allclose(p.consts, [np.arctan2(1, 2), 5.0, np.tanh(0.5)], rtol=RTOL)


@pytest.fixture(scope="module")
def judge():
    from etc_fast.evaluate._structural import StructuralJudge

    return StructuralJudge(timeout_s=None)


@pytest.mark.parametrize("name", list(CASES))
def test_custom_task_sandbox_and_judge_end_to_end(tmp_path, judge, name):
    from etc_fast.evaluate import evaluate_submission
    from etc_fast.sampling import evaluation_grid
    from etc_fast.tasks import get_task

    law, variables, rewrite, different = CASES[name]
    task = get_task(str(_task_file(tmp_path, name, law, variables)))
    X = evaluation_grid(task)
    np.testing.assert_allclose(task.truth(X), FUNCTIONS[name].ufunc(*X.T), rtol=RTOL, atol=0)

    program = parse(law, task.variable_names)
    ev = evaluate_submission(program.to_source(), task)
    assert ev.valid, ev.error
    assert ev.complete and ev.rmsle <= 1e-12, (ev.rmsle, ev.error)

    sig = f"def discovered_law({', '.join(task.variable_names)}):\n    import math\n    import numpy as np\n"
    for text in (program.to_source(), sig + f"    return {rewrite}\n"):
        v = judge.judge(text, task)
        assert v.credited, (text, v.reason)
    v = judge.judge(sig + f"    return {different}\n", task)
    assert not v.credited, v.reason


@pytest.mark.parametrize("bad", ["erf", "gamma", "floor"])
def test_task_file_with_another_function_is_refused_naming_it(tmp_path, bad):
    from etc_fast.tasks import TaskError, get_task

    path = _task_file(tmp_path, bad, f"1 + {bad}(x)", (("x", 0.5, 2.0),))
    with pytest.raises(TaskError) as err:
        get_task(str(path))
    text = str(err.value)
    assert text.startswith(f"{path.name}: law: call to {bad} is not allowed")
    assert accepted_text() in text and text.endswith("at line 1, col 5")


def test_run_cli_exits_2_on_a_task_file_with_another_function(tmp_path, monkeypatch, capsys):
    from etc_fast.run import main

    _task_file(tmp_path, "erf", "erf(x)", (("x", 0.5, 2.0),))
    (tmp_path / "run.yaml").write_text(
        "name: fn\ngrids:\n  - model: symbolic\n    configurations: [baseline_n]\n"
        "    tasks: [fn_erf.yaml]\n    rollouts: 1\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    assert main(["run.yaml", "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert "fn_erf.yaml: law: call to erf is not allowed" in err and "tanh" in err


@pytest.mark.parametrize("bad", ["math.erf(x)", "np.floor(x)", "gamma(x)", "scipy.special.erf(x)"])
def test_judge_refuses_another_function_naming_it_and_the_set(tmp_path, judge, bad):
    from etc_fast.tasks import get_task

    task = get_task(str(_task_file(tmp_path, "tanh", "tanh(x)", (("x", 0.5, 2.0),))))
    src = f"def discovered_law(x):\n    import math\n    import numpy as np\n    import scipy.special\n    return {bad}\n"
    v = judge.judge(src, task)
    assert not v.credited
    shown = bad.split("(")[0].replace("np.", "numpy.").replace("scipy.special.", "scipy.special.")
    assert "cannot translate" in v.reason and shown.split(".")[-1] in v.reason, v.reason
    assert accepted_text() in v.reason


# NewtonBench's scalar semantics: _pysem against plain Python, point by point.
_POINTS = [-2.5, -1.0, -0.5, -0.0, 0.0, 0.3, 0.5, 1.0, 1.5, 3.0, 800.0]


def _scalar(expr: str, x: float, y: float):
    """(value, raised) of ``expr`` on Python floats, as NewtonBench computes a law."""
    try:
        with np.errstate(all="ignore"):
            v = eval(expr, {"np": np, "math": math}, {"x": x, "y": y})  # noqa: S307 - the test's own text
    except (ValueError, OverflowError, ZeroDivisionError, TypeError):
        return math.nan, True
    return complex(v), False


@pytest.mark.parametrize("spelling", sorted({f"np.{n}" for n in NAMES if hasattr(np, n) and lookup(n).name != "pow"}
                                             | {f"math.{n}" for n in NAMES if hasattr(math, n)
                                                and lookup(n).name != "pow"}))
def test_pysem_matches_python_for_each_spelling(spelling):
    from etc_fast.tasks import _pysem

    f = lookup(spelling.split(".", 1)[1])
    expr = f"{spelling}(x)" if f.arity == 1 else f"{spelling}(x, y)"
    pts = [(x, y) for x in _POINTS for y in (_POINTS if f.arity == 2 else [0.0])]
    xs, ys = np.array([p[0] for p in pts]), np.array([p[1] for p in pts])
    v = _pysem.evaluate(expr, {"x": xs, "y": ys})
    for i, (x, y) in enumerate(pts):
        want, raised = _scalar(expr, x, y)
        assert bool(v.err[i]) == raised, (expr, x, y)
        if raised:
            continue
        got = complex(v.re[i], v.im[i])
        if math.isnan(want.real):
            assert math.isnan(v.re[i]), (expr, x, y)
        else:
            assert got == pytest.approx(want, rel=RTOL, abs=0), (expr, x, y)


def test_pysem_refuses_a_function_outside_the_table():
    from etc_fast.tasks import _pysem

    with pytest.raises(ValueError, match=r"unsupported function np\.floor .*tanh"):
        _pysem.evaluate("np.floor(x)", {"x": np.ones(2)})


def test_policy_reads_the_table():
    from etc_fast.policies.symbolic._policy import _FUNCTIONS, same_law

    assert _FUNCTIONS == frozenset(FUNCTIONS)
    assert same_law("hypot(x, y)", "sqrt(x**2 + y**2)")
    assert same_law("log10(x)*2", "2*log(x)/log(10)")
    assert not same_law("tanh(x)", "sinh(x)")


def test_kernel_programs_match_numpy_for_new_opcodes_on_many_points():
    rng = np.random.default_rng(1)
    X = rng.uniform(-4, 4, size=(3000, 2))
    for f in FUNCTIONS.values():
        args = ", ".join(["x", "y"][: f.arity])
        p = parse(f"{f.name}({args})", ["x", "y"])
        got = kernels.evaluate_programs(*pack([p]), X)[0]
        with np.errstate(all="ignore"):
            want = f.ufunc(*X.T[: f.arity])
        np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=f.name)
        ok = np.isfinite(want)
        np.testing.assert_allclose(got[ok], want[ok], rtol=RTOL, atol=0, err_msg=f.name)
