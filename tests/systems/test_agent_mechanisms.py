"""Mechanisms of the offline agent on systems, on made-up laws (never a benchmark answer).

The records come from the public forward model (``simulate``) with a law written here; the
mechanisms must read them back.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from etc_fast.expr import parse
from etc_fast.systems import simulate
from etc_fast.systems._derive import derive_law_table, record_times, refit_factor
from etc_fast.systems._forward import observe
from etc_fast.systems._pool import system_pool


def _records(module, system, law, n, seed=3):
    reqs = system_pool(module, system, seed, 256)[:n]
    outs = simulate(module, system, reqs, law=law, rng_seed=0)
    return reqs, outs, observe(module, system, outs)


def test_a_law_input_on_the_records_time_axis_gives_one_row_per_time_point():
    # a made-up decay law of the apparatus's time input: the law changes along every record
    def law(n0, lam, t):
        return n0 / (1.0 + lam * t * t)

    module, system = "m5_radioactive_decay", "simple_system"
    reqs, outs, series = _records(module, system, law, 5)
    times = record_times(module, system, outs)
    table = derive_law_table(module, system, reqs, series, times=times)
    assert table.y.shape[0] == 5 * 6  # six sampled time points per record
    # the time input is each point's returned stamp, not the request's end time
    assert np.unique(np.round(table.X[:, 2], 9)).size > 5
    truth = np.array([law(*x) for x in table.X])
    assert np.allclose(table.y, truth, rtol=1e-5)
    # without the stamps the apparatus returned, the table is one row per record and far off
    plain = derive_law_table(module, system, reqs, series)
    assert plain.y.shape[0] == 5
    assert not np.allclose(plain.y, [law(*x) for x in plain.X], rtol=1e-3)


def test_a_trajectory_has_no_law_input_on_its_time_axis():
    def law(m1, m2, r):
        return 2e-4 * m1 * m2 / r**2.5

    module, system = "m0_gravity", "simple_system"
    reqs, outs, series = _records(module, system, law, 4)
    table = derive_law_table(module, system, reqs, series, times=record_times(module, system, outs))
    assert table.y.shape[0] == 4


def test_refitting_a_factor_through_a_runaway_record_needs_the_prefix_stages(monkeypatch):
    import etc_fast.systems._derive as derive

    # strong made-up forces: bodies fall in within the record, so the misfit is a needle in K
    def law(m1, m2, r):
        return 3e-4 * (m1 * m2) ** 2 / r**2.5

    module, system = "m0_gravity", "simple_system"
    reqs, _, series = _records(module, system, law, 16)
    fit = refit_factor(module, system, reqs, series, [2.0, 2.0, -2.5], 3e-4 * 1.07)
    assert math.isclose(fit.K, 3e-4, rel_tol=1e-6) and fit.rms < 5
    monkeypatch.setattr(derive, "STAGES", (None,))
    whole = refit_factor(module, system, reqs, series, [2.0, 2.0, -2.5], 3e-4 * 1.07)
    assert whole.rms > 100 * max(fit.rms, 1.0)


def test_free_literals_round_trip_and_refit_an_effective_constant():
    from etc_fast.policies.symbolic._systems import fixed_literals, free_literals
    from etc_fast.systems._planning import calibrate

    names = ("omega", "T")
    prog = parse("1/(exp(2.3456e-14*omega**1.5/T) + 1)", names)
    freed, idx = free_literals(prog)
    assert len(idx) == 1 and freed.nuisance == ("lit0",)  # the 1s and the exponent stay literals
    assert fixed_literals(freed, idx) == prog

    def law(omega, T):
        return 1.0 / (math.exp(2.0e-14 * omega**1.5 / T) + 1.0)

    module, system = "m10_be_distribution", "simple_system"
    reqs, _, series = _records(module, system, law, 8)
    off = calibrate(prog, module, system, reqs, series)
    ref = calibrate(freed, module, system, reqs, series, max_nfev=60)
    assert ref.rms < 1e-3 * off.rms
    assert math.isclose(float(ref.program.consts[idx[0]]), 2.0e-14, rel_tol=1e-5)


@pytest.mark.parametrize("step", [0.5, 1.0])
def test_table_factor_reads_the_factor_of_given_exponents(step):
    from etc_fast.policies.symbolic._systems import table_factor
    from etc_fast.systems._derive import DerivedTable

    rng = np.random.default_rng(0)
    X = rng.uniform(1, 10, size=(12, 2))
    p = np.array([1.0, -step])
    y = -0.37 * X[:, 0] ** p[0] * X[:, 1] ** p[1]
    t = DerivedTable(X, y, np.zeros(12))
    assert math.isclose(table_factor(t, np.ones(12, bool), p), -0.37, rel_tol=1e-12)
    y[0] = -y[0]  # mixed signs: no factor
    assert table_factor(DerivedTable(X, y, np.zeros(12)), np.ones(12, bool), p) is None


def _same(a: str, b: str) -> bool:
    import sympy as sp

    return sp.simplify(sp.sympify(a) - sp.sympify(b)) == 0


class _Obs:
    """What the agent's analysis holds of a system: its records (no hidden law)."""

    def __init__(self, module, system, reqs, series):
        self.module, self.system, self.requests, self.series = module, system, reqs, series


def test_an_input_the_apparatus_refuses_at_its_own_scale_is_read_through_a_scaled_identity_law():
    from etc_fast.systems._derive import read_input
    from etc_fast.systems._forward import controls_matrix
    from etc_fast.systems._spec import spec

    # a made-up sound speed of order 1e4: the identity law of an input of order 1 gives a
    # resonance length the tube clamps, so only the scaled reading recovers the input
    def law(gamma, T, M):
        return 40.0 * gamma * T**0.5 / M**0.25

    module, system = "m8_sound_speed", "complex_system"
    reqs, _, series = _records(module, system, law, 6)
    table = derive_law_table(module, system, reqs, series)
    sp = spec(module, system)
    C = controls_matrix(sp, reqs)
    keys = [c.key for c in sp.controls]
    gamma = C[:, keys.index("adiabatic_index")]
    assert np.allclose(table.X[:, 0], gamma, rtol=1e-5)
    unscaled = read_input(module, system, C, 0, np.full(6, 1e-6))  # tiny law values: no scale that helps
    assert not np.allclose(unscaled, gamma, rtol=1e-2)


def test_short_literals_and_pruned_terms_simplify_only_what_the_records_allow():
    from etc_fast.policies.symbolic._systems import pruned_terms, short_literals

    def law(I_0, theta):
        return I_0 * (1.0 + 3.0 * math.sin(theta) ** 2)

    module, system = "m7_malus_law", "simple_system"
    names = ("I_0", "theta")
    reqs, _, series = _records(module, system, law, 8)
    obs = _Obs(module, system, reqs, series)
    from etc_fast.systems._planning import calibrate

    fitted = "1.0000003*I_0 + 2.9999991*I_0*sin(theta)**2"
    rms = calibrate(parse(fitted, names), module, system, reqs, series).rms
    text, r = short_literals(parse(fitted, names), obs, reqs, series, rms)
    assert _same(text, "I_0 + 3*I_0*sin(theta)**2") and r <= 1.5 * rms + 1e-9
    # a needed term stays, a term under the readings' resolution goes
    kept, _ = pruned_terms("I_0 + 3*I_0*sin(theta)**2", names, obs, reqs, series, 1e-9)
    assert _same(kept, "I_0 + 3*I_0*sin(theta)**2")
    extra = "I_0 + 3*I_0*sin(theta)**2 + 1e-9*I_0*cos(theta)"
    pruned, _ = pruned_terms(extra, names, obs, reqs, series, 1e-9)
    assert _same(pruned, "I_0 + 3*I_0*sin(theta)**2")
    # a wrong simple number is refused
    wrong = "1.21*I_0 + 2.9999991*I_0*sin(theta)**2"
    rms_w = calibrate(parse(wrong, names), module, system, reqs, series).rms
    out = short_literals(parse(wrong, names), obs, reqs, series, rms_w)
    assert out is None or "1.2" in out[0] or "1.21" in out[0]


def test_a_synthesis_on_the_records_already_searched_does_not_search_again(monkeypatch):
    """The offline agent's system search is remembered by the exact content it read: a fresh
    synthesis session on the exploration's last records gets the same result without a second
    search, and the trial's outcome is the one it has when every search runs."""
    import hashlib
    import itertools

    import etc_fast.policies.symbolic._incremental as I
    import etc_fast.policies.symbolic._policy as P
    from etc_fast.policies import create_policy
    from etc_fast.protocol import TrialSpec, get_configuration, run_trial

    spec = TrialSpec(model="symbolic", config=get_configuration("variance_c"), task="m1_coulomb_force",
                     difficulty="medium", system="complex_system")
    real = P.search

    def run(memo: bool):
        seen = []

        def counted(X, y, domains, **kw):
            seen.append(hashlib.sha256(X.tobytes() + y.tobytes() + repr(sorted(kw.items())).encode()).hexdigest())
            return real(X, y, domains, **kw)

        monkeypatch.setattr(P, "search", counted)
        monkeypatch.setattr(I, "search", counted)  # the full searches go through IncrementalSearch
        if not memo:  # neither the system memo nor the incremental state: every search runs
            fresh = itertools.count()
            monkeypatch.setattr(P, "_system_search_key", lambda *a: str(next(fresh)))

            class EverySearch:
                counts: dict = {}

                def search(self, X, y, domains, **kw):
                    return counted(X, y, domains, noise=kw["noise"], time_limit_s=kw["time_limit_s"], mode="full",
                                   limits=kw["limits"], output_unit=kw["output_unit"], max_candidates=30,
                                   monomials_only=kw.get("monomials_only", False))

            monkeypatch.setattr(P, "IncrementalSearch", EverySearch)
        rec = run_trial(spec, create_policy("symbolic"))
        monkeypatch.undo()
        return rec, seen

    with_memo, searches = run(True)
    without, all_searches = run(False)
    assert len(set(searches)) == len(searches), "no search ran twice on the same input"
    assert len(all_searches) > len(searches) and set(all_searches) == set(searches)
    assert (with_memo.final_source, with_memo.measurements, with_memo.status) == (
        without.final_source, without.measurements, without.status)


def test_a_reading_that_hides_the_laws_sign_is_refitted_with_the_sign_flipped():
    """A kinetic-energy record does not show a constant force's sign, so a derived table can carry
    the wrong one; a refit keeps each constant's sign, so only the negated candidate can explain
    the records. A made-up repulsive law on the charge apparatus."""
    from etc_fast.policies.symbolic._systems import _flipped_readings
    from etc_fast.systems._planning import calibrate

    def law(q1, q2, distance):
        return 3.0 * q1 * q2 / distance**2 + q2**2 / distance

    module, system = "m1_coulomb_force", "complex_system"
    names = ("q1", "q2", "distance")
    reqs, _, series = _records(module, system, law, 10)
    obs = _Obs(module, system, reqs, series)
    wrong = "-2.91234*q1*q2/distance**2 - 1.09876*q2**2/distance"  # fitted-looking literals
    rms_wrong = calibrate(parse(wrong, names), module, system, reqs, series).rms
    assert rms_wrong > 1e-2
    (text, rms), = _flipped_readings([wrong], names, obs, reqs, series)
    assert rms < 1e-5
    truth = parse("3*q1*q2/distance**2 + q2**2/distance", names)
    X = np.array([[r["q1"], r["q2"], r["distance"]] for r in reqs])
    assert np.allclose(parse(text, names).evaluate(X), truth.evaluate(X), rtol=1e-6)
    # a candidate with the right sign: its negation does not explain the records (the caller keeps
    # the candidate), and the two readings are fitted together as each alone
    right = "2.91234*q1*q2/distance**2 + 1.09876*q2**2/distance"
    good = calibrate(parse(right, names), module, system, reqs, series, max_nfev=60)
    (neg_text, rms_neg), = _flipped_readings([right], names, obs, reqs, series)
    assert not 1.5 * rms_neg + 1e-9 < good.rms  # simulated_rank's rule keeps the candidate
    assert _flipped_readings([wrong, right, "q1*q2"], names, obs, reqs, series) == [(text, rms), (neg_text, rms_neg), None]


def test_the_offline_baselines_experiments_keep_a_count_control_an_integer():
    """A control the pool does not vary goes out as the spec types it: NewtonBench's decay apparatus
    refuses ``num_points=20.0`` (a float where numpy needs an int), which once made every one of
    the offline baseline's experiments an error."""
    from etc_fast.core import TrialSpec, get_configuration
    from etc_fast.policies.symbolic import SymbolicPolicy
    from etc_fast.protocol import run_trial

    spec = TrialSpec(model="symbolic", config=get_configuration("baseline_c"), task="m5_radioactive_decay",
                     difficulty="easy", system="simple_system")
    rec = run_trial(spec, SymbolicPolicy(seed=0))
    outs = rec.observations["outputs"]
    assert outs and not any(isinstance(o, dict) and "error" in o for o in outs)
    assert all(isinstance(r["num_points"], int) for r in rec.observations["requests"])


@pytest.mark.parametrize("system", ["vanilla_equation", "complex_system"])
def test_the_exponent_snapping_knob_reaches_every_search_of_both_tiers(monkeypatch, system):
    """``symbolic: {snap_exponents: true}`` sets the exponent step's count in every search a noisy
    trial runs, on an equation and on a system alike; off by default; a non-boolean is refused."""
    import etc_fast.policies.symbolic._incremental as I
    import etc_fast.policies.symbolic._policy as P
    from etc_fast.policies import create_policy
    from etc_fast.policies.symbolic._search import SearchLimits
    from etc_fast.protocol import TrialSpec, get_configuration, run_trial

    assert SearchLimits().exponent_simplify_top == 0
    with pytest.raises(ValueError, match="snap_exponents"):
        create_policy("symbolic", snap_exponents="yes")
    seen = []
    real = P.search

    def counted(X, y, domains, **kw):
        seen.append((kw.get("limits") or SearchLimits()).exponent_simplify_top)
        return real(X, y, domains, **kw)

    monkeypatch.setattr(P, "search", counted)
    monkeypatch.setattr(I, "search", counted)
    spec = TrialSpec(model="symbolic", config=get_configuration("variance_c"), task="m2_magnetic_force",
                     difficulty="medium", system=system, noise=0.01)
    rec = run_trial(spec, create_policy("symbolic", snap_exponents=True))
    assert rec.status == "completed" and seen and set(seen) == {SearchLimits().simplify_top}
    seen.clear()
    run_trial(spec, create_policy("symbolic"))
    assert seen and set(seen) == {0}


@pytest.mark.parametrize("system", ["vanilla_equation", "complex_system"])
def test_the_commitment_snaps_exponents_on_both_tiers_unless_turned_off(monkeypatch, system):
    """``symbolic: {synthesis_snap: ...}`` (on by default): a noisy planner's synthesis re-ranks its
    laws with the exponent step (``exponent_simplify_top`` set) on an equation and on a system
    alike, and the exploration's searches never take it; off, no search or refit takes it; a
    non-boolean is refused."""
    import etc_fast.policies.symbolic._policy as P
    from etc_fast.policies import create_policy
    from etc_fast.policies.symbolic._search import SearchLimits
    from etc_fast.protocol import TrialSpec, get_configuration, run_trial

    with pytest.raises(ValueError, match="synthesis_snap"):
        create_policy("symbolic", synthesis_snap=1)
    steps = []
    real = P.refit_result

    def counted(prev, X, y, domains, **kw):
        steps.append((kw.get("limits") or SearchLimits()).exponent_simplify_top)
        return real(prev, X, y, domains, **kw)

    monkeypatch.setattr(P, "refit_result", counted)
    spec = TrialSpec(model="symbolic", config=get_configuration("variance_c"), task="m2_magnetic_force",
                     difficulty="medium", system=system, noise=0.01)
    rec = run_trial(spec, create_policy("symbolic"))
    assert rec.status == "completed" and steps == [SearchLimits().simplify_top]
    steps.clear()
    rec = run_trial(spec, create_policy("symbolic", synthesis_snap=False))
    assert rec.status == "completed" and steps == []
