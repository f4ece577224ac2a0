"""Hypothesis evaluation over the 2048-point pool: ``[numba]`` stack machine vs ``[numpy]`` twin.

Committees of realistic hypotheses for three tasks (gravity, damped oscillator, Snell) and one
of the law language's other functions (``general``) at the paper's size (5 hypotheses) and at 100x
(500: the same forms with different constants).

What bounds them: the twin pays one NumPy call and one temporary array per instruction (~1-2 ns
per point for arithmetic, the same order as the arithmetic itself); NumPy's ``arcsin``,
``arccos``, ``arctan``, ``tan``, ``exp``, ``log`` are SIMD loops (~0.7-1.9 ns per point here) but
its float64 ``sin``/``cos`` are scalar (~7 ns per point). The kernel interprets each instruction
once per block of 256 points and runs arithmetic as vectorized loops over an L1-resident stack,
fusing a leaf into the following binary instruction and small integer / half-integer powers into
multiplications and ``sqrt``; arithmetic costs ~0.1-0.5 ns per point. Elementary functions are the
branch-free SIMD versions of ``kernels._vecmath`` (per point on AVX-512: ``sin``/``cos``/``tan``
~1.1-1.4 ns, ``asin``/``acos``/``atan`` ~0.65-0.8 ns, ``exp``/``log`` ~0.6 ns), so
transcendental-heavy committees (Snell) now cost about as much per instruction as the rest, and
what remains is the polynomial arithmetic of those functions plus, for general powers
(``r**1.7``), scalar libm ``pow``. The ``general`` committee's functions are C library calls, one
point at a time, where NumPy runs SIMD loops: there the twin is faster (measured on two shared
cores: 500 programs 79 ms against NumPy's 26 ms, 5 programs 250 us against 122 us; paired 500
programs 0.22 ms against 4.5 ms).
"""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.expr import pack, parse
from kernels.programs import evaluate_programs
from kernels.programs_paired import evaluate_programs_paired
from tests.reference import evaluate_programs_paired_ref, evaluate_programs_ref

N = 2048

TASKS = {
    "gravity": (
        ("m1", "m2", "r"),
        [(1e-3, 1e3), (1e-3, 1e3), (1e-2, 1e2)],
        ["C*m1*m2/r**2", "C*m1*m2/r**1.5", "C*m1*m2/r**3", "C*(m1 + m2)/r**2",
         "C*m1*m2*exp(-r/L)/r**2"],
    ),
    "oscillator": (
        ("k", "m", "b"),
        [(1e-1, 1e2), (1e-1, 1e2), (1e-3, 1e0)],
        ["sqrt(k/m - b/(2*m))", "sqrt(k/m - (b/(2*m))**2)", "C*sqrt(k/m)", "sqrt(k/m)*exp(-b/m)",
         "(k/m)**0.5 - b/(2*m)"],
    ),
    "snell": (
        ("n1", "n2", "a"),
        [(1.0, 1.5), (1.0, 1.5), (0.0, 90.0)],
        ["degrees(acos(n1*sin(radians(a))/n2))", "degrees(asin(n1*sin(radians(a))/n2))",
         "degrees(atan(n1*tan(radians(a))/n2))", "C*a*n1/n2",
         "degrees(asin(n1*sin(radians(a))/n2**2))"],
    ),
    # the functions the kernel takes from the C library point by point (hyperbolic, inverse
    # hyperbolic, expm1, log10/log2/log1p, cbrt, atan2, hypot)
    "general": (
        ("u", "v", "w"),
        [(0.1, 0.9), (1.1, 10.0), (1e-2, 1e2)],
        ["C*tanh(u*v) + sinh(u)/cosh(v)", "asinh(w) + acosh(v)*atanh(u)", "expm1(u) + log10(w) - log2(v)*log1p(w)",
         "cbrt(w)*atan2(u, v)", "hypot(u, v)/hypot(v, w)"],
    ),
}


def committee(task, n_prog):
    names, bounds, forms = TASKS[task]
    rng = np.random.default_rng(0)
    progs = []
    for i in range(n_prog):
        p = parse(forms[i % len(forms)], names)
        # copies beyond the first five get other constants (the cost does not depend on them)
        # (exponents stay: 2 in r**2 is structure, not a fitted constant)
        if i >= len(forms) and len(p.consts):
            scale = np.where(p.const_is_exponent, 1.0, rng.uniform(0.9, 1.1, size=p.consts.shape))
            p = p.with_consts(p.consts * scale)
        progs.append(p)
    X = np.empty((N, len(names)))
    for j, (lo, hi) in enumerate(bounds):
        u = rng.uniform(size=N)
        X[:, j] = lo * (hi / lo) ** u if lo > 0 and hi / lo > 100 else lo + u * (hi - lo)
    return pack(progs), X


CASES = [(task, n) for n in (5, 500) for task in TASKS]


@pytest.fixture(scope="module", params=CASES, ids=[f"{t}-{n}x{N}" for t, n in CASES])
def case(request):
    pk, X = committee(*request.param)
    evaluate_programs(*pk, X)  # compile outside the timing
    return request.param, pk, X


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_evaluate_programs(benchmark, case, impl):
    (task, n_prog), pk, X = case
    benchmark.group = f"programs-{task}-{n_prog}x{N}"
    fn = evaluate_programs if impl == "numba" else evaluate_programs_ref
    out = benchmark(fn, *pk, X)
    np.testing.assert_allclose(out, evaluate_programs_ref(*pk, X), rtol=1e-12, atol=1e-300)


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_evaluate_programs_paired(benchmark, case, impl):
    """Each program at its own block of rows (``predict_paired``'s closed forms: one candidate per
    experiment), 500 programs x 2048 rows in all."""
    (task, n_prog), pk, X = case
    if n_prog < 500:
        pytest.skip("paired: the 500-program committees")
    benchmark.group = f"programs-paired-{task}-{n_prog}x{N}"
    per = N // n_prog
    Xp = X[: per * n_prog]
    fn = evaluate_programs_paired if impl == "numba" else evaluate_programs_paired_ref
    evaluate_programs_paired(*pk, Xp)  # compile outside the timing
    out = benchmark(fn, *pk, Xp)
    np.testing.assert_allclose(out, evaluate_programs_paired_ref(*pk, Xp), rtol=1e-12, atol=1e-300)


def _scan_family():
    """A simulator scan's family: ``K * a**p * b**q * exp(g * c**e)`` on a grid, K fastest, then g,
    then the exponents (4,096 tables, as one scan chunk), at 400 points."""
    from etc_fast.expr import parse

    prog = parse("K*a**p*b**q*exp(g*c**e)", ["a", "b", "c"])
    grid = np.linspace(-3.0, 3.0, 16)
    names = list(prog.const_names)
    rows = [{"K": k, "g": g, "p": p, "q": q, "e": e} for p in (0.0, 1.0) for q in (0.0, 1.0) for e in (0.5, 1.0, 1.5, 2.0)
            for g in grid for k in grid]
    table = np.array([[r[n] for n in names] for r in rows])
    X = np.exp(np.random.default_rng(0).uniform(-1.0, 1.0, size=(400, 3)))
    return prog, table, X


@pytest.mark.parametrize("impl", ["numba-family", "numba", "numpy"])
def test_evaluate_family(benchmark, impl):
    """One program under 4,096 constant tables: the family evaluator (steps shared with the previous
    table done once) against the machine on the packed copies and the NumPy twin."""
    from etc_fast.systems._forward import pack_family
    from kernels.programs_family import evaluate_family

    prog, table, X = _scan_family()
    pk = pack_family(prog, table)
    benchmark.group = "programs-family-4096x400"
    if impl == "numba-family":
        evaluate_family(prog.ops, prog.args, table, X)  # compile outside the timing
        out = benchmark(evaluate_family, prog.ops, prog.args, table, X)
    else:
        fn = evaluate_programs if impl == "numba" else evaluate_programs_ref
        fn(*pk, X)
        out = benchmark(fn, *pk, X)
    if impl != "numpy":  # the family's values are the machine's, bit for bit
        assert np.array_equal(out, evaluate_programs(*pk, X), equal_nan=True)
    np.testing.assert_allclose(out, evaluate_programs_ref(*pk, X), rtol=1e-12, atol=1e-300)
