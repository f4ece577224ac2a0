"""Compiled forward models: kernel == NumPy twin, and with the true law they reproduce the simulators.

``kernels.simulate_trajectories`` integrates committees of candidate laws over pools of
experiments; ``tests._ref_systems`` is its whole-pool NumPy twin. With the hidden law's own
expression as the candidate, ``etc_fast.systems._forward.predict`` must agree with NewtonBench's
simulators (``etc_fast.systems.simulate``) to the 7 significant digits NewtonBench prints.
"""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from etc_fast.expr import pack, parse
from etc_fast.systems import simulate
from etc_fast.systems._forward import observe, pack_family, predict, predict_paired
from etc_fast.systems._hidden import hidden_law
from etc_fast.systems._spec import SPECS
from etc_fast.tasks import get_task
from kernels.systems import TRAJECTORY_SYSTEMS, simulate_trajectories
from tests._ref_systems import simulate_trajectories_ref

_NAMES = {
    "m0": ("mass1", "mass2", "distance"),
    "m1": ("q1", "q2", "distance"),
    "m2": ("current1", "current2", "distance"),
}
_FORMS = [
    "C*{a}*{b}/{r}**1.5",
    "C*{a}/{r}**2.6",
    "C*({a} + {b})**2*{r}**2",
    "C*log({r} - 2)/{r}**2",  # NaN for r < 2
    "C*{a}*{b}/({r} - 1)**3",  # inf at r = 1, sign change inside
]


def _committee(module: str):
    a, b, r = _NAMES[module[:2]]
    progs = []
    for i, form in enumerate(_FORMS):
        p = parse(form.format(a=a, b=b, r=r), (a, b, r))
        progs.append(
            p.with_consts(
                np.where([n == "C" for n in p.const_names], 10.0 ** -(i + 1), p.consts)
            )
        )
    return pack(progs)


def _controls(rng, sid: int, n_ctrl: int, n: int) -> np.ndarray:
    C = rng.uniform(0.5, 5.0, size=(n, n_ctrl))
    C[:, :2] *= rng.choice(
        [1.0, -1.0, 0.0], size=(n, 2), p=[0.8, 0.15, 0.05]
    )  # signs, zeros
    if sid != 5:
        C[:, -1] = rng.uniform(0.01, 0.4, n)  # time step
    return C


@pytest.mark.parametrize("system", sorted(TRAJECTORY_SYSTEMS))
def test_kernel_equals_numpy_twin(system):
    sid, n_ctrl, n_ch = TRAJECTORY_SYSTEMS[system]
    rng = np.random.default_rng(sid)
    pk = _committee(system.split("/")[0])
    C = _controls(rng, sid, n_ctrl, 333)  # not a multiple of the kernel's block
    npts = rng.integers(0, 21, size=333)
    got = simulate_trajectories(system, *pk, C, npts)
    want = simulate_trajectories_ref(system, *pk, C, npts)
    assert got.shape == (5, 333, n_ch, 20)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)
    assert (
        np.isnan(got[:, npts == 0]).all()
        and np.isfinite(got[0, npts == 20, :, :]).any()
    )


def test_kernel_rejects_bad_arguments():
    pk = _committee("m0_gravity")
    C = np.ones((4, 5))
    with pytest.raises(ValueError, match="unknown trajectory system"):
        simulate_trajectories("m3_fourier_law/simple_system", *pk, C, np.full(4, 20))
    with pytest.raises(ValueError, match=r"shape \(n_exp, 5\)"):
        simulate_trajectories(
            "m0_gravity/simple_system", *pk, np.ones((4, 3)), np.full(4, 20)
        )
    with pytest.raises(ValueError, match="n_points"):
        simulate_trajectories("m0_gravity/simple_system", *pk, C, np.full(4, 21))
    bad = pk._replace(prog_len=pk.prog_len.copy())
    bad.prog_len[0] = 0
    with pytest.raises(ValueError, match="program 0 is empty"):
        simulate_trajectories("m0_gravity/simple_system", *bad, C, np.full(4, 20))
    empty = simulate_trajectories(
        "m0_gravity/simple_system", *pk, np.ones((0, 5)), np.zeros(0, int)
    )
    assert empty.shape == (5, 0, 2, 20)


@pytest.mark.parametrize("system", sorted(TRAJECTORY_SYSTEMS))
def test_kernel_paired_is_the_diagonal(system):
    """``paired=True``: experiment e under program e, as in the full product (and its NumPy twin)."""
    sid, n_ctrl, n_ch = TRAJECTORY_SYSTEMS[system]
    rng = np.random.default_rng(100 + sid)
    pk = _committee(system.split("/")[0])
    C = _controls(rng, sid, n_ctrl, 5)
    npts = np.array([20, 7, 0, 20, 13])
    got = simulate_trajectories(system, *pk, C, npts, paired=True)
    full = simulate_trajectories_ref(system, *pk, C, npts)
    want = np.stack([full[e, e] for e in range(5)])
    assert got.shape == (5, n_ch, 20)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-300)
    with pytest.raises(ValueError, match="one program per experiment"):
        simulate_trajectories(system, *pk, C[:4], npts[:4], paired=True)


def test_kernels_import_without_etc_fast():
    code = "import sys, kernels.systems; assert not any(m.startswith('etc_fast') for m in sys.modules)"
    subprocess.run([sys.executable, "-c", code], check=True)


def _pool_requests(sp, rng, n: int) -> list[dict]:
    reqs = []
    for _ in range(n):
        r = {}
        for c in sp.controls:
            if c.pool:
                u = rng.random()
                r[c.key] = (
                    float(c.low * (c.high / c.low) ** u)
                    if c.scale == "log"
                    else float(c.low + u * (c.high - c.low))
                )
            elif c.pool_value is not None:
                r[c.key] = c.pool_value
        reqs.append(r)
    return reqs


_CELLS = [
    (m, s, d, v)
    for (m, s) in SPECS
    for d in ("easy", "medium")
    for v in ("v0", "v1", "v2")
    if m != "m11_heat_transfer"
]


@pytest.mark.parametrize("module,system,difficulty,version", _CELLS)
def test_true_law_forward_model_reproduces_the_simulator(
    module, system, difficulty, version
):
    task = get_task(module, difficulty, version)
    sp = SPECS[(module, system)]
    reqs = _pool_requests(
        sp,
        np.random.default_rng(hash((module, system, difficulty, version)) % 2**32),
        25,
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        obs = observe(
            module,
            system,
            simulate(module, system, reqs, hidden_law(module, difficulty, version)),
        )
    pred = predict(
        module, system, pack([parse(task.law_expression, task.variable_names)]), reqs
    )[0]
    assert pred.shape == obs.shape
    # Runaway orbits (a force growing with r) reach 1e200 and beyond, where |r|^2 overflows in one
    # implementation and not the other: compare below 1e100.
    tame = ~(np.abs(obs) > 1e100) & ~(np.abs(pred) > 1e100)
    # The deep Wien tail (m10's frequency pool reaches 1e16, docs/guide/labs.md): NewtonBench's
    # errstate(over='raise') turns an overflowing exp inside the law into NaN, while the forward
    # model evaluates the law with NumPy semantics and predicts the limit, 0 (or a subnormal). Only
    # cells NewtonBench gives NaN and the forward model gives (almost) 0 are left out.
    tame &= ~(np.isnan(obs) & (np.abs(pred) < 1e-300))
    np.testing.assert_array_equal(np.isfinite(pred)[tame], np.isfinite(obs)[tame])
    ok = np.isfinite(obs) & tame
    # NewtonBench prints 7 significant digits; an absolute floor per channel covers values at round-off.
    scale = np.nanmax(np.abs(np.where(ok, obs, np.nan)), axis=(0, 2), keepdims=True)
    tol = 1e-6 * np.abs(obs) + 1e-9 * np.broadcast_to(scale, obs.shape)
    assert (np.abs(pred - obs)[ok] <= tol[ok]).all()


def test_m11_forward_models_predict_the_expected_reading():
    module = "m11_heat_transfer"
    task = get_task(module, "easy", "v0")
    prog = pack([parse(task.law_expression, task.variable_names)])
    reqs = [{"m": 2.0, "c": 500.0, "delta_T": 20.0}] * 20000
    law = hidden_law(module, "easy", "v0")
    for system in ("simple_system", "complex_system"):
        obs = observe(module, system, simulate(module, system, reqs, law, rng_seed=3))[
            :, 0, 0
        ]
        pred = predict(module, system, prog, reqs[:1])[0, 0, 0, 0]
        assert obs.mean() == pytest.approx(
            pred, rel=0.02
        )  # bulbs: |1 - r| has a 70% spread, so 0.5% standard error


def test_observe_parses_newtonbench_outputs():
    obs = observe(
        "m0_gravity",
        "complex_system",
        [
            {
                "time": ["0.0e0"],
                "position": [["1.0e0", "2.0e0"]],
                "velocity": [["3.0e0", "4.0e0"]],
            },
            {"error": "ZeroDivisionError: x"},
        ],
    )
    assert (
        obs.shape == (2, 4, 20)
        and obs[0, :, 0].tolist() == [1.0, 2.0, 3.0, 4.0]
        and np.isnan(obs[1]).all()
    )
    assert np.isnan(
        observe("m4_snell_law", "simple_system", [{"refraction_angle": "invalid"}])
    ).all()
    assert (
        observe(
            "m11_heat_transfer",
            "simple_system",
            [{"P_cond": 1.0, "P_conv": 2.0, "P_rad": 3.5}],
        )[0, 0, 0]
        == 6.5
    )
    assert observe("m7_malus_law", "complex_system", [-12.5])[0, 0, 0] == -12.5


@settings(max_examples=25)
@given(
    system=st.sampled_from(sorted(TRAJECTORY_SYSTEMS)),
    exponents=st.tuples(
        *[st.sampled_from([-3.0, -2.5, -1.3, 0.0, 0.5, 1.0, 2.0, 2.7])] * 3
    ),
    log_c=st.floats(-6, 1),
    n=st.integers(100, 300),
    seed=st.integers(0, 2**16),
)
def test_kernel_equals_twin_on_drawn_power_laws(system, exponents, log_c, n, seed):
    """Property: any power law C a^p b^q r^s, any pool size (blocks of 128 and partial blocks), any step count."""
    sid, n_ctrl, _ = TRAJECTORY_SYSTEMS[system]
    a, b, r = _NAMES[system[:2]]
    prog = parse(
        f"C*{a}**{exponents[0]}*{b}**{exponents[1]}*{r}**{exponents[2]}", (a, b, r)
    )
    pk = pack(
        [
            prog.with_consts(
                np.where(
                    [nm == "C" for nm in prog.const_names], 10.0**log_c, prog.consts
                )
            )
        ]
    )
    rng = np.random.default_rng(seed)
    C = _controls(rng, sid, n_ctrl, n)
    npts = rng.integers(0, 21, size=n)
    got = simulate_trajectories(system, *pk, C, npts)
    want = simulate_trajectories_ref(system, *pk, C, npts)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    close = np.isclose(got, want, rtol=1e-9, atol=1e-300) | np.isnan(want)
    assert (
        close.mean() >= 0.99
    )  # a close pass of a singular force can amplify round-off on a trajectory


def test_pack_family_is_pack_of_with_consts():
    prog = parse("K*mass1*mass2/distance**p", ("mass1", "mass2", "distance"))
    consts = np.array([[1.0, 2.0], [3e-5, 2.5], [np.nan, -1.0]])[:, : len(prog.consts)]
    got = pack_family(prog, consts)
    want = pack([prog.with_consts(c) for c in consts])
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype
    with pytest.raises(ValueError, match="constants per copy"):
        pack_family(prog, np.ones((2, len(prog.consts) + 1)))


def test_family_packer_is_pack_family():
    """The kept instruction arrays per family size: every call equals ``pack`` of the programs with
    their constants, whatever the order of sizes, and a call's constants do not leak into the next."""
    from etc_fast.systems._forward import FamilyPacker

    prog = parse("K*mass1*mass2/distance**p", ("mass1", "mass2", "distance"))
    family = FamilyPacker(prog)
    rng = np.random.default_rng(3)
    for K in (1, 3, 1, 2, 3, 3):
        consts = rng.normal(size=(K, len(prog.consts)))
        consts[0, 0] = np.nan
        got, want = family(consts), pack([prog.with_consts(c) for c in consts])
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
    with pytest.raises(ValueError, match="constants per copy"):
        family(np.ones((3, len(prog.consts) + 1)))


@pytest.mark.parametrize("module,system", sorted(SPECS))
def test_forward_models_leave_a_family_s_arrays_alone(module, system):
    """FamilyPacker hands the same instruction arrays to every call: no forward model (product or
    paired) may write to them, on any system."""
    from etc_fast.systems._forward import FamilyPacker

    task = get_task(module, "easy", "v0")
    sp = SPECS[(module, system)]
    reqs = _pool_requests(sp, np.random.default_rng(5), 4)
    prog = parse(f"1.0*({task.law_expression})", task.variable_names)
    family = FamilyPacker(prog)
    consts = np.repeat(prog.consts[None], 4, axis=0) * np.linspace(0.9, 1.1, 4)[:, None]
    for call in (predict, predict_paired):
        packed = family(consts)
        before = [np.array(a, copy=True) for a in packed]
        call(module, system, packed, reqs)
        for a, b in zip(packed, before):
            np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("module,system", sorted(SPECS))
def test_predict_paired_is_the_diagonal_of_predict(module, system):
    """Experiment e under program e, on every system: trajectory systems through the kernel's
    paired mode (to 1e-12), closed forms through paired programs, each experiment's law calls under
    its own program (bit for bit: the same arithmetic as the product's diagonal)."""
    from etc_fast.systems._definition import TrajectoryKernel
    from etc_fast.systems._registry import definition

    task = get_task(module, "easy", "v0")
    sp = SPECS[(module, system)]
    reqs = _pool_requests(sp, np.random.default_rng(7), 130)
    scale = 10.0 ** np.linspace(-0.5, 0.5, 130)
    progs = [parse(f"({float(s)!r})*({task.law_expression})", task.variable_names) for s in scale]
    got = predict_paired(module, system, pack(progs), reqs)
    full = predict(module, system, pack(progs), reqs)
    want = np.stack([full[e, e] for e in range(130)])
    assert got.shape == want.shape
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    if isinstance(definition(module, system).forward, TrajectoryKernel):
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=0)
    else:
        np.testing.assert_array_equal(got, want)
    assert np.isfinite(got).any()
    with pytest.raises(ValueError, match="one program per experiment"):
        predict_paired(module, system, pack(progs[:3]), reqs)


@pytest.mark.parametrize("c", [2.6, -3.8, 5.0, 7.3, -0.3, 1e-3])
def test_row_machine_general_power_agrees_with_numpy(c):
    """``x**c`` outside the small-power rule: ``exp(c log x)`` on rows of positive values (within
    ``2e-16 (|c log x| + 2)`` relative of NumPy's ``pow``, up to ``|c log x|`` of 700), ``pow``
    itself (same special values) on a row with a zero, a negative or a NaN."""
    from kernels._rows import IN, law_rows

    prog = pack([parse(f"x**{c!r}", ("x", "y", "z"))])
    rng = np.random.default_rng(1)
    positive = np.concatenate([10.0 ** rng.uniform(-300 / max(abs(c), 1), 300 / max(abs(c), 1), 500),
                               [np.inf, 1.0, 5e-324, 1.7e308]])
    mixed = np.array([0.0, -0.0, -2.0, -0.5, np.nan, np.inf, -np.inf, 3.0])
    for row in (positive, mixed):
        m = row.size
        S = np.zeros((IN + 2, m))
        S[0] = row
        law_rows(prog.ops, prog.args, prog.consts, 0, len(prog.ops), 0, S, m)
        with np.errstate(all="ignore"):
            want = np.power(row, c)
        np.testing.assert_array_equal(np.isnan(S[IN]), np.isnan(want))
        if row is mixed:
            np.testing.assert_array_equal(S[IN], want)  # pow's own values, signs included
            continue
        bound = 2e-16 * (np.abs(c * np.log(row)) + 2.0)  # the documented bound, relative
        ok = np.isfinite(want) & (want != 0)
        assert (np.abs(S[IN] - want)[ok] <= bound[ok] * np.abs(want)[ok]).all()
        np.testing.assert_array_equal(S[IN][~ok], want[~ok])  # inf and underflow to 0


def test_eval_each_is_a_call_per_program():
    """A second law stage fed by the first: every program at its own points in one kernel call,
    the values of one call per program, bit for bit; paired programs read their one row."""
    from etc_fast.systems._definition import PairedPrograms
    from etc_fast.systems._forwardkit import eval_each, eval_programs

    names = ("n1", "n2", "angle1")
    progs = [parse(f, names) for f in ("degrees(asin(n1*sin(radians(angle1))/n2))", "n1*angle1/n2**1.5",
                                       "degrees(atan(n1*tan(radians(angle1))/n2))")]
    rng = np.random.default_rng(3)
    X_each = np.stack([np.column_stack([rng.uniform(1, 1.5, 301), rng.uniform(1, 1.5, 301), rng.uniform(0, 90, 301)])
                       for _ in progs])
    got = eval_each(pack(progs), X_each)
    want = np.stack([eval_programs(pack([p]), X_each[i])[0] for i, p in enumerate(progs)])
    np.testing.assert_array_equal(got, want)
    rows = np.concatenate([X_each[i, i * 100:(i + 1) * 100] for i in range(3)])  # block i for program i
    paired = eval_each(PairedPrograms(pack(progs)), rows[None])
    np.testing.assert_array_equal(paired[0], np.concatenate([want[i, i * 100:(i + 1) * 100] for i in range(3)]))


def test_m3_gradient_rows_is_numpys_gradient_bit_for_bit():
    """The flux of m3's complex model differentiates every experiment of one length at once; each
    row must have the bits of ``np.gradient`` on that row (uniform and uneven coordinates, 2-20
    points, non-finite values)."""
    from etc_fast.systems.defs.m3_fourier_law import gradient_rows

    rng = np.random.default_rng(3)
    for trial in range(200):
        J, m, P = int(rng.integers(1, 6)), int(rng.integers(2, 21)), int(rng.integers(1, 4))
        x = np.array([np.linspace(0.0, d, m) for d in 10 ** rng.uniform(-2, 0, J)])
        if trial % 3 == 0:
            x[0] = np.sort(rng.uniform(0.0, 1.0, m)) + np.arange(m)
        F = rng.normal(size=(P, J, m)) * 10 ** rng.uniform(-3, 3)
        if trial % 5 == 0:
            F[0, 0, 1], F[-1, -1, 0] = np.nan, np.inf
        with np.errstate(all="ignore"):
            want = np.stack([np.gradient(F[:, j], x[j], axis=1) for j in range(J)], axis=1)
        got = gradient_rows(F, x)
        assert np.array_equal(got.view(np.int64), want.view(np.int64)), (trial, J, m)


@pytest.mark.parametrize("module,system", sorted(SPECS))
def test_predict_of_a_family_is_predict_of_its_copies_bit_for_bit(module, system):
    """A family (``pack_family``) is evaluated with the steps its tables share done once
    (``kernels.programs_family``); every system's predictions must be those of the same copies
    packed one by one, bit for bit, with tables that move one constant, repeat, or hold NaN."""
    task = get_task(module, "easy", "v0")
    sp = SPECS[(module, system)]
    reqs = _pool_requests(sp, np.random.default_rng(11), 6)
    prog = parse(f"1.0*({task.law_expression})", task.variable_names)
    base = np.array(prog.consts, dtype=np.float64)
    rows = [base, base, base * 1.01, base, np.full_like(base, np.nan), base * 0.99]
    for j in range(len(base)):
        step = base.copy()
        step[j] *= 1.0 + 1e-6
        rows.append(step)
    consts = np.array(rows)
    got = predict(module, system, pack_family(prog, consts), reqs)
    want = predict(module, system, pack([prog.with_consts(c) for c in consts]), reqs)
    assert np.array_equal(got.view(np.int64), want.view(np.int64))
