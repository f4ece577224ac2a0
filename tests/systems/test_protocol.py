"""The protocol playing simulated systems: loops, counting, records, the offline agent's reading."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from etc_fast.core import TrialSpec, get_configuration
from etc_fast.policies.symbolic import SymbolicPolicy
from etc_fast.protocol import run_trial
from etc_fast.systems._derive import derive_law_table
from etc_fast.systems._forward import observe
from etc_fast.systems._hidden import hidden_law
from etc_fast.systems._pool import system_pool
from etc_fast.tasks import get_task


def _run(config: str, module: str, system: str, difficulty: str = "easy"):
    spec = TrialSpec(model="symbolic", config=get_configuration(config), task=module, difficulty=difficulty, system=system)
    return run_trial(spec, SymbolicPolicy(seed=0))


@pytest.mark.parametrize("system", ["simple_system", "complex_system"])
def test_planner_n_finds_fourier_law_through_the_temperature_profile(system):
    r = _run("variance_n", "m3_fourier_law", system)
    assert r.status == "completed", r.error
    assert r.judge["credited"], r.final_source
    obs = r.observations
    assert r.measurements == len(obs["requests"]) == len(obs["outputs"]) == len(obs["source"])
    assert obs["source"][0] == "bootstrap" and "planner" in obs["source"]
    assert 0 < obs["simulated_points"] <= 20 * r.measurements
    assert r.evaluation["valid"]


def test_planner_c_sends_an_analysis_before_its_full_search():
    r = _run("variance_c", "m8_sound_speed", "simple_system")
    kinds = [e["action"]["kind"] for e in r.events if "action" in e]
    assert "analysis" in kinds
    assert r.judge["credited"], r.final_source


def test_baseline_counts_experiments_and_stops_when_confident():
    r = _run("baseline_n", "m8_sound_speed", "simple_system")
    assert r.status in ("completed", "max_turns_reached")
    ran = [e for e in r.events if e.get("action", {}).get("kind") == "experiment"]
    assert ran and r.measurements == sum(len(e["measured"]["requests"]) for e in ran)
    assert r.judge["credited"], r.final_source


def test_a_bad_experiment_request_is_a_request_error_not_a_crash():
    # the equation baseline's error kind (the systems loop filed it as "repair" before the one loop)
    from etc_fast.labs import SystemLab
    from etc_fast.protocol._baseline import _experiment
    from etc_fast.protocol._state import TrialState
    from etc_fast.tasks import task_view

    st = get_task("m7_malus_law", "easy", "v0", system="simple_system")
    spec = TrialSpec(model="x", config=get_configuration("baseline_n"), task="m7_malus_law", system="simple_system")
    view = task_view(st.law)
    state = TrialState(spec, SystemLab(spec, st, view), view, policy=None)
    ev: dict = {}
    text, kind, n = _experiment(state, [{"I_0": 10.0, "nonsense": 1.0}], ev, 100)
    assert (kind, n, state.measurements) == ("request_error", 0, 0) and "nonsense" in text
    text, kind, n = _experiment(state, [{"I_0": 10.0, "theta": 0.2}], ev, 100)
    assert (kind, n, state.measurements) == ("experiment", 1, 1) and "<experiment_output>" in text


@pytest.mark.parametrize(("module", "system"), [("m3_fourier_law", "simple_system"), ("m8_sound_speed", "simple_system"),
                                                ("m10_be_distribution", "complex_system"), ("m6_underdamped_harmonic", "complex_system")])
def test_derived_law_table_recovers_law_values_where_the_controls_set_the_inputs(module, system):
    task = get_task(module, "easy", "v0", system=system)
    reqs = system_pool(module, system, 0, 64)[:10]
    series = observe(module, system, task.experiment(reqs))
    table = derive_law_table(module, system, reqs, series)
    law = hidden_law(module, "easy", "v0")  # test side only: the agent never sees it
    truth = np.array([float(law(*x)) for x in table.X])
    ok = np.isfinite(truth)
    assert ok.sum() >= 8
    assert np.allclose(table.y[ok], truth[ok], rtol=1e-4)


def test_a_record_no_constant_law_reproduces_is_read_from_its_start():
    task = get_task("m3_fourier_law", "easy", "v0", system="simple_system")
    reqs = system_pool("m3_fourier_law", "simple_system", 0, 64)[:6]
    series = observe("m3_fourier_law", "simple_system", task.experiment(reqs))
    table = derive_law_table("m3_fourier_law", "simple_system", reqs, series)
    assert np.all(table.misfit < 100)  # a few reading precisions (7 printed digits)
    shifted = series.copy()
    shifted[:, :, 5:] *= 1.01  # no constant law reproduces a kinked profile; its first 5 points are intact
    from etc_fast.systems._derive import fit_constant_law
    from etc_fast.systems._forward import controls_matrix
    from etc_fast.systems._spec import spec

    C = controls_matrix(spec("m3_fourier_law", "simple_system"), reqs)
    assert np.all(fit_constant_law("m3_fourier_law", "simple_system", C, shifted)[1] > 1e3)
    kinked = derive_law_table("m3_fourier_law", "simple_system", reqs, shifted)
    assert np.all(kinked.misfit < 100) and np.allclose(kinked.y, table.y, rtol=1e-4)


def test_the_agent_on_systems_reads_no_hidden_law_and_names_no_module():
    import etc_fast.policies.symbolic._systems as agent_sys
    import etc_fast.systems._derive as derive

    for mod in (agent_sys, derive):
        src = inspect.getsource(mod)
        assert "hidden_law" not in src and "_hidden import LAWS" not in src
        assert not any(f"m{i}_" in src for i in range(12))


@pytest.mark.parametrize(("module", "system", "exponents"), [
    ("m0_gravity", "complex_system", (1.0, 1.0, -1.5)),
    ("m1_coulomb_force", "simple_system", (1.0, 1.0, -3.0)),
])
def test_power_law_fitted_through_the_simulator_recovers_the_exponents(module, system, exponents):
    from etc_fast.systems._derive import fit_power_law, power_law_rms, refit_factor

    task = get_task(module, "easy", "v0", system=system)
    reqs = system_pool(module, system, 0, 2048)[:16]
    series = observe(module, system, task.experiment(reqs))
    fit = fit_power_law(module, system, reqs, series)
    assert np.allclose(fit.exponents, exponents, atol=1e-4) and fit.rms < 5
    snapped = refit_factor(module, system, reqs, series, np.round(fit.exponents * 2) / 2, fit.K)
    assert snapped.rms < 5
    wrong = power_law_rms(module, system, reqs, series, snapped.K, np.array(exponents) + np.array([0.0, 0.0, 0.5]))
    assert wrong.rms > 1000 * snapped.rms


@pytest.mark.parametrize(("module", "system"), [("m0_gravity", "complex_system"), ("m1_coulomb_force", "simple_system")])
def test_power_law_fits_in_lockstep_are_each_fit_alone_and_scipys(module, system):
    """The power-law fits run their starts in lockstep (one simulation for every start's rows): a
    row has the bits of its single simulation, a fit the numbers it has alone, and each stage is
    SciPy's trf from the same start (to rounding)."""
    from scipy.optimize import least_squares

    import etc_fast.systems._derive as D
    from etc_fast._jacobian import BatchedJacobian
    from etc_fast.systems._forward import controls_matrix
    from etc_fast.systems._spec import spec

    task = get_task(module, "easy", "v0", system=system)
    reqs = system_pool(module, system, 0, 2048)[:16]
    series = observe(module, system, task.experiment(reqs))
    names = D.LAW_ARGS[module]
    C = controls_matrix(spec(module, system), reqs)
    residual, _, _ = D._residual_fn(module, system, C, series, names, None, 6)
    TH = np.array([[np.log(3e-4), 1.0, 0.9, -1.5], [-70.0, 0.0, 0.0, 0.0], [20.0, 2.0, -1.0, 0.5]])[:, :len(names) + 1]
    R = residual(TH, 1.0)
    for th, r in zip(TH, R):
        assert np.array_equal(r, residual(th, 1.0))
    # four starts together, and each alone
    signs = np.array([1.0, 1.0, -1.0, -1.0])
    theta0 = np.array([[0.0, *p] for p in ([1.2, 0.8, -1.3], [0.0] * 3) * 2])[:, :len(names) + 1]
    lks = np.arange(-70.0, 70.1, 3.5)

    def run(which):
        t0 = theta0[which]
        return D._lockstep(module, system, C, series, names, signs[which], None, t0,
                           lambda rows, tables: D._scan_log_k(rows, tables, t0, np.tile(lks, (len(t0), 1))),
                           lambda upto: 200 if upto is None else 50)

    together, cost, _ = run(np.arange(4))
    for i in range(4):
        alone, cost_i, _ = run(np.array([i]))
        np.testing.assert_array_equal(alone[0], together[i])
        assert cost_i[0] == cost[i]
    # the first start through SciPy's least_squares, stage by stage, from the same scanned start
    theta = None
    for upto in D._stages(series):
        res_fn, _, _ = D._residual_fn(module, system, C, series, names, None, upto)
        if theta is None:
            theta = theta0[0].copy()
            Rs = res_fn(np.array([[lk, *theta[1:]] for lk in lks]), 1.0)
            theta[0] = min(zip(np.sum(Rs**2, axis=1).tolist(), lks.tolist()))[1]
        fd = BatchedJacobian(lambda th, f=res_fn: f(th, 1.0), lambda ths, f=res_fn: f(ths, 1.0))
        with np.errstate(all="ignore"):
            theta = least_squares(fd.fun, theta, jac=fd.jac, method="trf", max_nfev=200 if upto is None else 50).x
    np.testing.assert_allclose(together[0], theta, rtol=1e-7, atol=1e-9)
