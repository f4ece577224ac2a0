"""kernels.programs against its NumPy twin (tests/_ref_programs.py)."""

import inspect
import itertools

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from numba import config as numba_config

import kernels
import kernels.programs as programs_module
from kernels._jit import FASTMATH
from kernels.programs import OP_ARITY, OPCODES, check_programs, evaluate_programs
from kernels.programs_paired import evaluate_programs_paired
from tests.reference import evaluate_programs_paired_ref, evaluate_programs_ref

OP = OPCODES
UNARY = [name for name, code in OPCODES.items() if code > 1 and OP_ARITY[code] == 1]
BINARY = [name for name, code in OPCODES.items() if code > 1 and OP_ARITY[code] == 2]


def packed(*programs):
    """Pack programs given as (instructions, consts); an instruction is a name or (name, arg)."""
    ops, args, consts, starts, lens, cstarts = [], [], [], [], [], []
    for code, cs in programs:
        starts.append(len(ops))
        lens.append(len(code))
        cstarts.append(len(consts))
        for ins in code:
            name, arg = (ins, 0) if isinstance(ins, str) else ins
            ops.append(OP[name])
            args.append(arg)
        consts.extend(cs)
    return (np.array(ops, dtype=np.int64), np.array(args, dtype=np.int64),
            np.array(consts, dtype=np.float64), np.array(starts, dtype=np.int64),
            np.array(lens, dtype=np.int64), np.array(cstarts, dtype=np.int64))


def stable_points(pk, X, ref, draws=3):
    """Points whose twin value survives a few ulps of noise in every intermediate result.

    Elsewhere (cancellation, a value on a branch cut or domain edge) a kernel and a twin that both
    round correctly may legitimately disagree, so exact comparison is only meaningful here.
    """
    mask = np.ones(ref.shape, dtype=bool)
    with np.errstate(all="ignore"):
        for seed in range(draws):
            noisy = evaluate_programs_ref(*pk, X, jitter=np.random.default_rng(seed))
            same = (noisy == ref) | (np.isnan(noisy) & np.isnan(ref))
            near = np.abs(noisy - ref) <= 1e-13 * np.abs(ref)
            mask &= same | near
    return mask


def assert_matches_twin(pk, X):
    got = evaluate_programs(*pk, X, n_points=len(X))
    ref = evaluate_programs_ref(*pk, X)
    assert got.shape == ref.shape == (len(pk[3]), X.shape[0])
    mask = stable_points(pk, X, ref)
    npt.assert_array_equal(np.isnan(got)[mask], np.isnan(ref)[mask])
    # atol: results below the normal range carry only a few significant bits.
    npt.assert_allclose(got[mask], ref[mask], rtol=1e-12, atol=1e-300)
    return got, ref, mask


# -- hand cases -----------------------------------------------------------------------------------


def test_gravity_by_hand():
    # C*m1*m2/r**2 with C = 2
    pk = packed(([("const", 0), ("var", 0), "mul", ("var", 1), "mul", ("var", 2), ("const", 1),
                  "pow", "div"], [2.0, 2.0]))
    X = np.array([[1.0, 2.0, 2.0], [3.0, 4.0, 0.5], [0.0, 1.0, 0.0]])
    got = evaluate_programs(*pk, X)
    npt.assert_array_equal(got[0, :2], [1.0, 96.0])
    assert np.isnan(got[0, 2])  # 0/0
    npt.assert_allclose(got, evaluate_programs_ref(*pk, X), rtol=1e-15)


def test_every_opcode_on_special_values():
    specials = [0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 2.5, -3.0, 1e-320, -1e-320, 1e-160,
                1e200, -1e200, 1e308, np.inf, -np.inf, np.nan]
    X = np.array(list(itertools.product(specials, specials)))
    progs = [([("var", 0), name], []) for name in UNARY]
    progs += [([("var", 0), ("var", 1), name], []) for name in BINARY]
    # constant right operands take the fused path, including every small-power special case
    for c in [0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 4.0, -4.0, 0.5, -0.5, 1.5, -1.5, 2.5, 3.5,
              -3.5, 4.5, 1.0 / 3.0, 7.0, np.inf, -np.inf, np.nan]:
        for name in BINARY:
            progs.append(([("var", 0), ("const", 0), name], [c]))
    pk = packed(*progs)
    got = evaluate_programs(*pk, X)
    ref = evaluate_programs_ref(*pk, X)
    npt.assert_array_equal(np.isnan(got), np.isnan(ref))
    npt.assert_array_equal(np.isinf(got) & (got > 0), np.isinf(ref) & (ref > 0))
    # results in the subnormal range keep few significant bits; compare those absolutely
    npt.assert_allclose(got, ref, rtol=1e-15, atol=1e-300)
    # signed zeros and infinities exactly as NumPy (1/(-0.0) = -inf, (-0.0)**-1 = -inf, ...)
    finite_zero = ref == 0
    npt.assert_array_equal(np.signbit(got[finite_zero]), np.signbit(ref[finite_zero]))


def test_numpy_semantics_nan_where_undefined_never_raises():
    pk = packed(
        ([("var", 0), "log"], []),
        ([("var", 0), "sqrt"], []),
        ([("var", 0), "acos"], []),
        ([("var", 0), ("const", 0), "pow"], [1.0 / 3.0]),
        ([("const", 0), ("var", 0), "div"], [1.0]),
        ([("var", 0), ("const", 0), "pow"], [-1.0]),
    )
    got = evaluate_programs(*pk, np.array([[-8.0], [0.0], [2.0]]))
    assert np.isnan(got[0, 0]) and got[0, 1] == -np.inf
    assert np.isnan(got[1, 0]) and got[1, 1] == 0.0
    assert np.isnan(got[2, 0]) and np.isnan(got[2, 2])
    assert np.isnan(got[3, 0]) and got[3, 1] == 0.0
    assert got[4, 1] == np.inf and got[5, 1] == np.inf


def test_many_blocks_and_a_partial_last_block():
    rng = np.random.default_rng(3)
    X = rng.uniform(-3, 3, size=(1000, 2))
    pk = packed(
        ([("var", 0), "sin", ("var", 1), "mul", ("const", 0), "add"], [0.25]),
        ([("var", 0), ("var", 1), "sub", ("const", 0), "pow"], [3.0]),
        ([("const", 0), ("var", 0), "abs", "sqrt", "div", "neg", "exp"], [2.0]),
    )
    got, ref, mask = assert_matches_twin(pk, X)
    assert mask.mean() > 0.99  # only a few points sit at a cancellation


def test_constants_only_and_single_variable_programs():
    X = np.arange(6, dtype=float).reshape(3, 2)
    pk = packed(([("const", 0)], [7.5]), ([("var", 1)], []),
                ([("const", 0), ("const", 1), "pow"], [2.0, 0.5]))
    got = evaluate_programs(*pk, X)
    npt.assert_array_equal(got[0], 7.5)
    npt.assert_array_equal(got[1], X[:, 1])
    npt.assert_allclose(got[2], np.sqrt(2.0), rtol=1e-15)


def test_programs_share_nothing_but_the_points():
    # each program reads its own constants through const_start
    pk = packed(([("var", 0), ("const", 0), "mul"], [2.0]), ([("var", 0), ("const", 0), "mul"], [3.0]))
    got = evaluate_programs(*pk, np.array([[1.0], [2.0]]))
    npt.assert_array_equal(got, [[2.0, 4.0], [3.0, 6.0]])


def test_all_nan_input():
    X = np.full((5, 2), np.nan)
    pk = packed(([("var", 0), ("var", 1), "add"], []), ([("var", 0), ("const", 0), "pow"], [0.0]))
    got = evaluate_programs(*pk, X)
    assert np.isnan(got[0]).all()
    npt.assert_array_equal(got[1], 1.0)  # nan**0 == 1, as NumPy
    npt.assert_array_equal(got, evaluate_programs_ref(*pk, X))


def test_zero_points_and_zero_programs():
    pk = packed(([("var", 0), "sin"], []))
    assert evaluate_programs(*pk, np.zeros((0, 1))).shape == (1, 0)
    empty = packed()
    assert evaluate_programs(*empty, np.zeros((4, 1))).shape == (0, 4)
    assert evaluate_programs_ref(*empty, np.zeros((4, 1))).shape == (0, 4)


def test_ties_identical_programs_give_identical_rows():
    X = np.random.default_rng(0).uniform(0.1, 2.0, size=(300, 1))
    prog = ([("var", 0), "log", ("var", 0), ("const", 0), "pow", "add"], [1.5])
    got = evaluate_programs(*packed(prog, prog, prog), X)
    npt.assert_array_equal(got[0], got[1])
    npt.assert_array_equal(got[0], got[2])


@pytest.mark.parametrize(
    "program, message",
    [
        (([], []), "program 0 is empty"),
        (([("var", 0), "add"], []), "program 0, instruction 1 pops from an empty stack"),
        (([("var", 0), ("var", 0)], []), "does not leave exactly one value"),
        (([("var", 5)], []), "reads a variable column outside X"),
        (([("const", 1)], [1.0]), "reads a constant index outside"),
        (([("var", -1)], []), "reads a variable column outside X"),
    ],
)
def test_malformed_programs_are_rejected(program, message):
    with pytest.raises(ValueError, match=message):
        evaluate_programs(*packed(program), np.zeros((2, 2)))


def test_unknown_opcode_and_bad_shapes_are_rejected():
    pk = list(packed(([("var", 0)], [])))
    pk[0] = np.array([99])
    with pytest.raises(ValueError, match="unknown opcode"):
        evaluate_programs(*pk, np.zeros((2, 1)))
    with pytest.raises(ValueError, match="two-dimensional"):
        evaluate_programs(*packed(([("var", 0)], [])), np.zeros(3))
    with pytest.raises(ValueError, match="one entry per program"):
        good = packed(([("var", 0)], []))
        evaluate_programs(good[0], good[1], good[2], good[3], np.array([1, 1]), good[5],
                          np.zeros((2, 1)))
    with pytest.raises(ValueError, match="runs past the end"):
        good = packed(([("var", 0)], []))
        evaluate_programs(good[0], good[1], good[2], np.array([1]), good[4], good[5],
                          np.zeros((2, 1)))


def test_check_programs_reports_stack_depth():
    pk = packed(([("var", 0), ("var", 0), ("var", 0), "mul", "mul"], []))
    assert check_programs(*pk, 1) == 3


def test_public_names_are_reexported():
    assert kernels.evaluate_programs is evaluate_programs
    assert kernels.evaluate_programs_paired is evaluate_programs_paired


# -- property tests -------------------------------------------------------------------------------

D = 3
_consts = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, -2.0, 3.0, -3.0, 0.5, -0.5, 1.5, -1.5, 2.5, 4.0,
                     -4.0, 1e-3, 1e3, 1e300, np.pi]),
    st.floats(-1e3, 1e3, allow_nan=False),
)
_leaves = st.one_of(
    st.tuples(st.just("var"), st.integers(0, D - 1)),
    st.tuples(st.just("const"), _consts),
)


def _extend(children):
    return st.one_of(
        st.tuples(st.just("un"), st.sampled_from(UNARY), children),
        st.tuples(st.just("bin"), st.sampled_from(BINARY), children, children),
    )


trees = st.recursive(_leaves, _extend, max_leaves=12)


def emit(tree):
    """A (instructions, consts) program from a tree."""
    code, consts = [], []

    def walk(t):
        if t[0] == "var":
            code.append(("var", t[1]))
        elif t[0] == "const":
            code.append(("const", len(consts)))
            consts.append(t[1])
        elif t[0] == "un":
            walk(t[2])
            code.append(t[1])
        else:
            walk(t[2])
            walk(t[3])
            code.append(t[1])

    walk(tree)
    return code, consts


_values = st.one_of(
    st.sampled_from([0.0, -0.0, 1.0, -1.0, 2.0, 1e300, -1e300, 1e-300, 1e-200, np.inf, -np.inf,
                     np.nan]),
    st.floats(-10, 10),
    st.floats(allow_nan=False, allow_infinity=False),
)
points = st.integers(0, 40).flatmap(lambda n: hnp.arrays(np.float64, (n, D), elements=_values))


@settings(max_examples=150, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(trees, min_size=1, max_size=4), points)
def test_random_programs_match_twin(tree_list, X):
    assert_matches_twin(packed(*[emit(t) for t in tree_list]), X)


# -- compiled configuration -----------------------------------------------------------------------


@pytest.mark.skipif(numba_config.DISABLE_JIT, reason="JIT is disabled")
def test_dispatchers_use_the_shared_fastmath_flags():
    from numba.core.registry import CPUDispatcher

    import kernels.stats as stats_module

    found = 0
    for module in (programs_module, stats_module):
        for _, obj in inspect.getmembers(module):
            if isinstance(obj, CPUDispatcher):
                found += 1
                assert obj.targetoptions["fastmath"] == FASTMATH, obj
    assert found >= 7


def test_elementary_functions_across_blocks_match_twin():
    # vectorized rows, with special values and arguments beyond the trigonometric reduction
    # range (the scalar libm pass) scattered through several blocks
    rng = np.random.default_rng(11)
    n = 700
    X = np.column_stack([rng.uniform(-1.2, 1.2, n), rng.uniform(-40.0, 40.0, n),
                         np.exp(rng.uniform(-700.0, 700.0, n))])
    X[::97, 1] = [1e6, -3e9, 1e300, np.inf, -np.inf, np.nan, -0.0, 5e-324][:len(X[::97, 1])]
    X[::89, 0] = [1.0, -1.0, 0.0, -0.0, np.nan, 2.0, np.inf, -1e-310][:len(X[::89, 0])]
    progs = [([("var", 1), name], []) for name in ("sin", "cos", "tan", "atan", "exp")]
    progs += [([("var", 0), name], []) for name in ("asin", "acos", "atan")]
    progs += [([("var", 2), "log"], []), ([("var", 0), "log"], [])]
    # the Snell forms: degrees(acos(n1 * sin(radians(a)) / n2)) and relatives
    progs += [([("var", 0), ("var", 1), "radians", name, "mul", ("const", 0), "div", inv,
                "degrees"], [1.33]) for name, inv in [("sin", "acos"), ("sin", "asin"),
                                                      ("tan", "atan")]]
    pk = packed(*progs)
    got, ref, mask = assert_matches_twin(pk, X)
    assert mask.mean() > 0.97
    npt.assert_array_equal(np.isnan(got), np.isnan(ref))
    zero = ref == 0
    npt.assert_array_equal(np.signbit(got[zero]), np.signbit(ref[zero]))


# -- each program at its own points ---------------------------------------------------------------


@settings(max_examples=80, deadline=None, derandomize=True,
          suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(trees, min_size=1, max_size=4), st.integers(0, 300), st.integers(0, 2**31 - 1))
def test_paired_programs_are_the_diagonal_blocks_and_match_twin(tree_list, per, seed):
    """Program p at rows p*per .. (p+1)*per: exactly the full product's values there (the same
    per-point arithmetic, whatever the blocks' alignment), and the NumPy twin run program by
    program on its block where the twin is stable."""
    pk = packed(*[emit(t) for t in tree_list])
    P = len(pk[3])
    X = np.random.default_rng(seed).uniform(-3.0, 3.0, size=(P * per, D))
    got = evaluate_programs_paired(*pk, X, n_points=len(X))
    assert got.shape == (P * per,)
    full = evaluate_programs(*pk, X, n_points=len(X))
    diag = np.concatenate([full[p, p * per:(p + 1) * per] for p in range(P)]) if P * per else np.zeros(0)
    npt.assert_array_equal(got, diag)
    ref = evaluate_programs_paired_ref(*pk, X)
    mask = np.concatenate([stable_points(pk, X[p * per:(p + 1) * per],
                                         evaluate_programs_ref(*pk, X[p * per:(p + 1) * per]))[p]
                           for p in range(P)]) if P * per else np.zeros(0, dtype=bool)
    npt.assert_array_equal(np.isnan(got)[mask], np.isnan(ref)[mask])
    npt.assert_allclose(got[mask], ref[mask], rtol=1e-12, atol=1e-300)


def test_paired_programs_refuse_rows_that_do_not_split():
    pk = packed(*[emit(("var", 0)), emit(("var", 1))])
    with pytest.raises(ValueError, match="same number of rows"):
        evaluate_programs_paired(*pk, np.zeros((5, D)))
    assert evaluate_programs_paired(*pk, np.zeros((0, D))).shape == (0,)
    empty = packed()
    with pytest.raises(ValueError, match="same number of rows"):
        evaluate_programs_paired(*empty, np.zeros((2, D)))
