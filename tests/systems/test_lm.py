"""calibrate_many: many calibrations of one program in lockstep (etc_fast.systems._lm)."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import least_squares

from etc_fast._jacobian import BatchedJacobian
from etc_fast.expr import parse
from etc_fast.systems import calibrate, calibrate_each, calibrate_many
from etc_fast.systems._lm import trf_lockstep
from etc_fast.tasks import get_task
from tests.systems.test_planning import CASES, _observed


def _start(prog, values):
    consts, free = prog.consts.copy(), np.zeros(len(prog.consts), dtype=bool)
    for name, v in values.items():
        i = list(prog.const_names).index(name)
        consts[i], free[i] = v, True
    return consts, free


@pytest.mark.parametrize("module,system,form,true_c", CASES)
def test_calibrate_many_is_calibrates_fit_from_every_start(module, system, form, true_c):
    """The same method as calibrate's (the log shift scanned, SciPy's trf steps from the two best
    shifts), so from each start it reaches calibrate's constants, here to about 1e-9, including
    a start from which both stall (m2 complex from 1e3)."""
    requests, obs = _observed(module, system)
    prog = parse(form, get_task(module, "easy", "v0").variable_names)
    starts = [_start(prog, {"C": c0}) for c0 in (1.0, 1e3, 1e-3 * true_c)]
    fitted, rms, _ = calibrate_many(prog, module, system, requests, obs, np.array([s[0] for s in starts]),
                                 np.array([s[1] for s in starts]))
    ic = list(prog.const_names).index("C")
    for (consts, _), c, r in zip(starts, fitted[:, ic], rms):
        single = calibrate(prog.with_consts(consts), module, system, requests, obs)
        assert c == pytest.approx(single.program.consts[ic], rel=1e-9)
        assert r == pytest.approx(single.rms, rel=1e-6, abs=1e-12)
    assert fitted[0, ic] == pytest.approx(true_c, rel=1e-4) and rms[0] < 1e-5


@pytest.mark.parametrize("module,system,form", [("m0_gravity", "simple_system", "C*mass1*mass2/distance**p"),
                                                ("m1_coulomb_force", "complex_system", "C*q1*q2/distance**p"),
                                                ("m8_sound_speed", "complex_system", "sqrt(gamma*C*T**p/M)")])
def test_calibrate_many_fits_exponents_and_holds_what_is_not_free(module, system, form):
    requests, obs = _observed(module, system)
    prog = parse(form, get_task(module, "easy", "v0").variable_names)
    (c_true, p_true) = (None, None)
    ref = calibrate(prog.with_consts(_start(prog, {"C": 1.0, "p": 1.7})[0]), module, system, requests, obs)
    c_true = ref.program.consts[list(prog.const_names).index("C")]
    p_true = ref.program.consts[list(prog.const_names).index("p")]
    a = _start(prog, {"C": 1.0, "p": 1.7})
    b = _start(prog, {"C": 1.0})  # p held at 1.7 (off the law): C alone cannot explain the records
    b[0][list(prog.const_names).index("p")] = 1.7
    fitted, rms, _ = calibrate_many(prog, module, system, requests, obs, np.array([a[0], b[0]]), np.array([a[1], b[1]]))
    ip, ic = list(prog.const_names).index("p"), list(prog.const_names).index("C")
    assert fitted[0, ip] == pytest.approx(p_true, rel=1e-6) and fitted[0, ic] == pytest.approx(c_true, rel=1e-5)
    assert rms[0] <= max(1.01 * ref.rms, 1e-7)
    assert fitted[1, ip] == 1.7 and rms[1] > 100 * rms[0]


def test_a_fit_does_not_depend_on_the_fits_beside_it():
    module, system = "m0_gravity", "complex_system"
    requests, obs = _observed(module, system)
    prog = parse("C*mass1**a*mass2/distance**p", get_task(module, "easy", "v0").variable_names)
    rows = [_start(prog, {"C": c, "a": 1.2, "p": p}) for c, p in ((1.0, 1.0), (1e-2, 2.5), (3.0, 1.5))]
    consts, free = np.array([r[0] for r in rows]), np.array([r[1] for r in rows])
    together, rms_t, _ = calibrate_many(prog, module, system, requests, obs, consts, free)
    for i in range(len(rows)):
        alone, rms_a, _ = calibrate_many(prog, module, system, requests, obs, consts[i:i + 1], free[i:i + 1])
        np.testing.assert_array_equal(alone[0], together[i])
        assert rms_a[0] == rms_t[i]


def test_calibrate_each_fits_different_programs_together_as_each_alone():
    """Each fit's linear algebra runs on its own free columns (its SVD alone), so padding to the
    widest program does not move a bit."""
    module, system = "m1_coulomb_force", "complex_system"
    requests, obs = _observed(module, system)
    names = get_task(module, "easy", "v0").variable_names
    programs = [parse(t, names) for t in ("C*q1*q2/distance**3", "C*q1*q2/distance**p", "q1*q2/distance**2",
                                         "C*q1*q2*exp(-g*distance)", "sqrt(C*q1**2*q2**2/distance**6) + D")]
    together = calibrate_each(programs, module, system, requests, obs)
    for prog, cal in zip(programs, together):
        alone = calibrate_each([prog], module, system, requests, obs)[0]
        np.testing.assert_array_equal(alone.program.consts, cal.program.consts)
        assert alone.rms == cal.rms and alone.n_used == cal.n_used == np.isfinite(obs).sum()
        ref = calibrate(prog, module, system, requests, obs)
        assert cal.rms == pytest.approx(ref.rms, rel=1e-6, abs=1e-10)  # at the 1e-7 floor: the same fit
    assert together[2].program.consts.tolist() == programs[2].consts.tolist()  # nothing to fit
    assert together[0].rms < 1e-5 and together[0].success


def test_calibrate_many_refuses_mismatched_tables():
    requests, obs = _observed("m0_gravity", "simple_system")
    prog = parse("C*mass1*mass2/distance**2", get_task("m0_gravity", "easy", "v0").variable_names)
    with pytest.raises(ValueError, match="must both be"):
        calibrate_many(prog, "m0_gravity", "simple_system", requests, obs, np.ones((2, 3)), np.ones((2, 3), bool))
    with pytest.raises(ValueError, match="2 programs for 3 fits"):
        calibrate_many([prog, prog], "m0_gravity", "simple_system", requests, obs, np.ones((3, 1)), np.ones((3, 1), bool))


# The solver against SciPy's trf on made-up least-squares problems (no simulator): the same method,
# so from the same start it follows SciPy's steps and stops where SciPy stops (to rounding, which an
# ill-conditioned step amplifies: hence 1e-7 on the parameters and 1e-6 on a cost taken mid-path).

def _decay_problem(seed):
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 3.0, 25)
    y = 2.5 * np.exp(-1.3 * t) + 0.4 * t + 1e-3 * rng.standard_normal(t.size)

    def resid(theta):  # theta: log magnitudes of (A, k, B)
        A, k, B = np.exp(theta)
        return A * np.exp(-k * t) + B * t - y

    return resid


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("max_nfev", [3, 8, 60])
def test_the_lockstep_solver_takes_scipys_trf_steps(seed, max_nfev):
    resid = _decay_problem(seed)
    rng = np.random.default_rng(100 + seed)
    starts = rng.normal(0.0, 1.0, (5, 3))

    def rows(T, _fits=None):
        return np.array([resid(th) for th in T])

    x, cost, _ = trf_lockstep(rows, lambda th, which: th, starts, np.arange(5), np.ones((5, 3), bool), max_nfev)
    for i, x0 in enumerate(starts):
        fd = BatchedJacobian(resid, rows)
        ref = least_squares(fd.fun, x0, jac=fd.jac, method="trf", max_nfev=max_nfev, x_scale=1.0)
        np.testing.assert_allclose(x[i], ref.x, rtol=1e-7, atol=1e-9)
        assert cost[i] == pytest.approx(ref.cost, rel=1e-6, abs=1e-15)


def test_held_entries_of_the_lockstep_solver_do_not_move():
    resid = _decay_problem(0)

    def rows(T, _fits=None):
        return np.array([resid(th) for th in T])

    free = np.array([[True, True, False]])
    start = np.array([[0.0, 0.0, np.log(0.4)]])
    x, _, _ = trf_lockstep(rows, lambda th, which: th, start, np.arange(1), free, 60)
    assert x[0, 2] == start[0, 2]

    def two(th):
        return resid(np.array([th[0], th[1], np.log(0.4)]))

    fd = BatchedJacobian(two, lambda T: np.array([two(t) for t in T]))
    ref = least_squares(fd.fun, start[0, :2], jac=fd.jac, method="trf", max_nfev=60, x_scale=1.0)
    np.testing.assert_allclose(x[0, :2], ref.x, rtol=1e-7)


def test_fewer_residuals_than_parameters_take_scipys_steps():
    """The first continuation stage of a power-law fit can read fewer cells than it fits
    parameters: SciPy's trf then solves with min(m, n) singular values, never Gauss-Newton."""
    t = np.array([0.3, 1.7])
    y = 2.5 * np.exp(-1.3 * t) + 0.4 * t

    def resid(theta):
        A, k, B = np.exp(theta)
        return A * np.exp(-k * t) + B * t - y

    def rows(T, _fits=None):
        return np.array([resid(th) for th in T])

    starts = np.array([[0.0, 0.0, 0.0], [1.0, -0.5, -1.0]])
    x, cost, _ = trf_lockstep(rows, lambda th, which: th, starts, np.arange(2), np.ones((2, 3), bool), 30)
    for i, x0 in enumerate(starts):
        fd = BatchedJacobian(resid, rows)
        ref = least_squares(fd.fun, x0, jac=fd.jac, method="trf", max_nfev=30, x_scale=1.0)
        np.testing.assert_allclose(x[i], ref.x, rtol=1e-7, atol=1e-9)
        assert cost[i] == pytest.approx(ref.cost, rel=1e-6, abs=1e-12)  # an exact fit: rounding
