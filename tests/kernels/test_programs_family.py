"""kernels.programs_family: one program under many constant tables, against the machine and the twin.

The family evaluator must give, bit for bit, what :func:`kernels.evaluate_programs` gives for the
copies of the program (a scan's or a fit's results may not depend on which evaluator ran), and so
match the NumPy twin where :func:`kernels.evaluate_programs` does.
"""

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kernels.programs import evaluate_programs
from kernels.programs_family import MAX_FAMILY_CONSTS, _check_and_evaluate_family, evaluate_family
from tests.kernels.test_programs import D, emit, packed, stable_points, trees
from tests.reference import evaluate_programs_ref


def steps_computed(ops, args, table, X):
    """How many steps of the machine the family evaluator computed (the compiled call's count)."""
    out = np.empty((table.shape[0], X.shape[0]))
    code, _, _, computed = _check_and_evaluate_family(ops, args, table, np.ascontiguousarray(X.T), out)
    assert code == 0
    return int(computed)


def copies(code, table):
    """The packed copies of one program, copy ``p`` with the constants ``table[p]``."""
    return packed(*[(code, list(row)) for row in table])


def family_table(n_consts, n_rows, seed):
    """Constant tables as scans and fits make them: runs of rows that move one or two constants,
    repeats, NaN, and rows that change everything."""
    rng = np.random.default_rng(seed)
    pick = np.array([0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.0, -2.0, 3.0, 1e-3, 1e3, np.pi, np.nan])
    row = rng.normal(size=n_consts)
    rows = []
    for i in range(n_rows):
        r = row.copy()
        if n_consts and i % 7 == 3:
            r = rng.choice(pick, size=n_consts)
        elif n_consts and i % 3:
            j = rng.integers(0, n_consts, size=int(rng.integers(1, 3)))
            r[j] = rng.choice(pick, size=j.size) if i % 5 == 0 else r[j] + rng.normal(size=j.size)
        rows.append(r)
        row = r
    return np.array(rows, dtype=np.float64).reshape(n_rows, n_consts)


@settings(max_examples=120, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(trees, st.integers(0, 12), st.integers(0, 1300), st.integers(0, 2**31 - 1))
def test_family_is_the_machine_on_the_copies_bit_for_bit(tree, n_rows, n_points, seed):
    code, consts = emit(tree)
    table = family_table(len(consts), n_rows, seed)
    X = np.random.default_rng(seed + 1).uniform(-3.0, 3.0, size=(n_points, D))
    pk = copies(code, table)
    one = packed((code, consts))
    got = evaluate_family(one[0], one[1], table, X, n_points=len(X), n_tables=len(table))
    want = evaluate_programs(*pk, X, n_points=len(X))
    assert got.shape == want.shape == (n_rows, n_points)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))


def test_family_matches_the_numpy_twin():
    # a scan's grid: K fastest, then the rate, then the exponents
    code = [("const", 0), ("var", 0), ("const", 1), "pow", "mul", ("var", 1), ("const", 2), "pow", "mul",
            ("const", 3), ("var", 2), ("const", 4), "pow", "mul", "exp", "mul"]
    K = np.linspace(-2.0, 2.0, 5)
    g = np.linspace(-1.0, 1.0, 4)
    table = np.array([[k, p, q, r, e] for p in (0.0, 1.0) for q in (0.5, 2.0, 1.7) for e in (1.0, 0.5)
                      for r in g for k in K])
    X = np.random.default_rng(5).uniform(0.1, 3.0, size=(300, D))
    got = evaluate_family(_ops(code), _args(code), table, X, n_points=len(X), n_tables=len(table))
    steps = steps_computed(_ops(code), _args(code), table, X)
    pk = copies(code, table)
    ref = evaluate_programs_ref(*pk, X)
    mask = stable_points(pk, X, ref)
    assert mask.mean() > 0.99
    npt.assert_allclose(got[mask], ref[mask], rtol=1e-12, atol=1e-300)
    # the work shared by neighbouring tables is done once: far fewer steps than rows x steps
    n_steps = 13  # 16 instructions, 3 of them a constant fused into the power before it
    assert steps < 0.5 * len(table) * n_steps


def _ops(code):
    from kernels.programs import OPCODES

    return np.array([OPCODES[c if isinstance(c, str) else c[0]] for c in code], dtype=np.int64)


def _args(code):
    return np.array([0 if isinstance(c, str) else c[1] for c in code], dtype=np.int64)


def test_a_nan_constant_is_always_recomputed():
    code = [("var", 0), ("const", 0), "add"]
    table = np.array([[np.nan], [np.nan], [1.0], [1.0]])
    got = evaluate_family(_ops(code), _args(code), table, np.ones((3, D)))
    steps = steps_computed(_ops(code), _args(code), table, np.ones((3, D)))
    npt.assert_array_equal(got[2:], 2.0)
    assert np.isnan(got[:2]).all()
    # row 0: the column and the fused addition; row 1: NaN, recomputed; row 2: changed; row 3: the same
    assert steps == 2 + 1 + 1


def test_no_rows_no_points_and_refusals():
    code = [("var", 0), ("const", 0), "mul"]
    ops, args = _ops(code), _args(code)
    assert evaluate_family(ops, args, np.zeros((0, 1)), np.ones((4, D))).shape == (0, 4)
    assert evaluate_family(ops, args, np.ones((3, 1)), np.ones((0, D))).shape == (3, 0)
    with pytest.raises(ValueError, match="two-dimensional"):
        evaluate_family(ops, args, np.ones(3), np.ones((4, D)))
    with pytest.raises(ValueError, match="two-dimensional"):
        evaluate_family(ops, args, np.ones((3, 1)), np.ones(4))
    with pytest.raises(ValueError, match="at most"):
        evaluate_family(ops, args, np.ones((1, MAX_FAMILY_CONSTS + 1)), np.ones((4, D)))
    with pytest.raises(ValueError, match="constant index outside"):
        evaluate_family(ops, args, np.ones((2, 0)), np.ones((4, D)))
    with pytest.raises(ValueError, match="variable column outside"):
        evaluate_family(_ops([("var", 5)]), _args([("var", 5)]), np.ones((2, 0)), np.ones((4, D)))
    with pytest.raises(ValueError, match="exactly one value"):
        evaluate_family(_ops([("var", 0), ("var", 1)]), _args([("var", 0), ("var", 1)]), np.ones((2, 0)),
                        np.ones((4, D)))
