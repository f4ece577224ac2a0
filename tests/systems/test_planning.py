"""Series disagreement (the committee score on systems) and calibration through the public forward model."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.expr import pack, parse
from etc_fast.systems import simulate
from etc_fast.systems._forward import observe, predict
from etc_fast.systems._hidden import hidden_law
from etc_fast.systems._planning import calibrate, series_disagreement
from etc_fast.systems._pool import system_pool
from etc_fast.tasks import get_task

CASES = [
    ("m0_gravity", "simple_system", "C*mass1*mass2/distance**1.5", 6.674e-5),
    ("m0_gravity", "complex_system", "C*mass1*mass2/distance**1.5", 6.674e-5),
    ("m1_coulomb_force", "complex_system", "C*q1*q2/distance**3", 2.0),
    ("m2_magnetic_force", "complex_system", "C*current1*current2/distance**3", 4.78e-2),
    ("m8_sound_speed", "complex_system", "sqrt(gamma*C*T**2/M)", 351.6),
    ("m10_be_distribution", "complex_system", "1/(exp(C*omega/T) + 1)", 1.0513e-14),
]


def _observed(module, system, n=8):
    requests = system_pool(module, system, seed=0)[:n]
    return requests, observe(
        module,
        system,
        simulate(module, system, requests, hidden_law(module, "easy", "v0")),
    )


@pytest.mark.parametrize("module,system,form,true_c", CASES)
def test_calibration_through_the_simulator_recovers_the_constant(
    module, system, form, true_c
):
    task = get_task(module, "easy", "v0")
    requests, obs = _observed(module, system)
    cal = calibrate(parse(form, task.variable_names), module, system, requests, obs)
    (c,) = [v for v, n in zip(cal.program.consts, cal.program.const_names) if n == "C"]
    assert (
        c == pytest.approx(true_c, rel=1e-4)
        and cal.rms < 1e-5
        and cal.n_used == np.isfinite(obs).sum()
    )


def test_a_wrong_form_does_not_calibrate():
    task = get_task("m0_gravity", "easy", "v0")
    requests, obs = _observed("m0_gravity", "simple_system")
    right = calibrate(
        parse("C*mass1*mass2/distance**1.5", task.variable_names),
        "m0_gravity",
        "simple_system",
        requests,
        obs,
    )
    wrong = calibrate(
        parse("C*mass1*mass2/distance**2", task.variable_names),
        "m0_gravity",
        "simple_system",
        requests,
        obs,
    )
    assert wrong.rms > 1e3 * right.rms


def test_disagreement_is_zero_for_a_unanimous_committee_and_grows_with_resolvable_differences():
    module, system = "m0_gravity", "simple_system"
    names = get_task(module, "easy", "v0").variable_names
    pool = system_pool(module, system, seed=1)[:256]
    same = predict(
        module,
        system,
        pack([parse("6.7e-5*mass1*mass2/distance**1.5", names)] * 3),
        pool,
    )
    assert np.allclose(series_disagreement(same), 0.0)
    forms = ("6.7e-5*mass1*mass2/distance**1.5", "6.7e-5*mass1*mass2/distance**2.5")
    score = series_disagreement(
        predict(module, system, pack([parse(f, names) for f in forms]), pool)
    )
    assert score.shape == (256,) and (score > 0).all()
    # The law moves the body by a t^2 / 2 with a = C m1 / r^k: heavier mass1 and longer steps make
    # the two laws' readings part by more than a reading resolves.
    m1 = np.array([r["mass1"] for r in pool])
    dt = np.array([r["time_step"] for r in pool])
    assert np.corrcoef(np.log(m1 * dt**2), score)[0, 1] > 0.5


def test_disagreement_counts_what_a_reading_resolves_in_any_unit():
    rng = np.random.default_rng(0)
    y = rng.uniform(1.0, 2.0, size=(1, 40, 2, 20))
    rel = np.where(np.arange(40) < 20, 1e-3, 1e-9)[
        None, :, None, None
    ]  # members part by 0.1% or 1e-9
    pred = np.concatenate([y, y * (1 + rel)])
    score = series_disagreement(pred)
    assert score[:20].min() > 10 * score[20:].max()
    np.testing.assert_allclose(
        series_disagreement(pred * 1e9), score, rtol=1e-6
    )  # other units
    pred[:, 3] = np.nan
    pred[1:, 4] = np.nan  # one finite member only
    out = series_disagreement(pred)
    assert (
        np.isnan(out[3])
        and np.isnan(out[4])
        and np.isfinite(np.delete(out, [3, 4])).all()
    )
    with pytest.raises(ValueError, match="channels, times"):
        series_disagreement(np.zeros((2, 3, 4)))


@pytest.mark.parametrize(
    "module,system",
    [("m0_gravity", "simple_system"), ("m1_coulomb_force", "complex_system"), ("m3_fourier_law", "complex_system"),
     ("m6_underdamped_harmonic", "complex_system"), ("m10_be_distribution", "simple_system")],
)
def test_the_derived_table_cache_reuses_rows_without_changing_them(module, system):
    """A growing record's table, re-deriving only the new experiments, equals the table derived from
    scratch value for value (exactly: the same arithmetic on the same inputs; a difference would
    mean ``derive_law_table`` stopped deriving each experiment on its own)."""
    from etc_fast.systems._derive import derive_law_table
    from etc_fast.systems._derive_cache import DerivedTableCache

    requests, series = _observed(module, system, n=12)
    cache = DerivedTableCache()
    first = cache.table(module, system, requests[:7], series[:7])
    grown = cache.table(module, system, requests, series)
    scratch = derive_law_table(module, system, requests, series)
    for name in ("X", "y", "misfit", "sigma"):
        np.testing.assert_array_equal(getattr(grown, name), getattr(scratch, name))
        np.testing.assert_array_equal(getattr(first, name), getattr(scratch, name)[:7])
    # an edited earlier row is not reused
    edited = series.copy()
    edited[0] = edited[0] * 1.5
    again = cache.table(module, system, requests, edited)
    np.testing.assert_array_equal(again.y, derive_law_table(module, system, requests, edited).y)


@pytest.mark.parametrize("module,system", [("m5_radioactive_decay", "simple_system"), ("m0_gravity", "simple_system")])
def test_the_derived_table_cache_with_time_stamps_equals_a_table_from_scratch(module, system):
    """With the records' time stamps the cache gives exactly the table derived whole: a record whose
    time axis is a law input (one row per sampled time point) reuses its earlier experiments' rows
    and decides the axis again over the whole record, any other reuses its rows as without stamps;
    an edited earlier record or time stamp is derived again."""
    from etc_fast.systems._derive import derive_law_table, has_time_axis, record_times
    from etc_fast.systems._derive_cache import DerivedTableCache
    from etc_fast.systems._forward import controls_matrix
    from etc_fast.systems._spec import spec

    requests = system_pool(module, system, seed=0)[:12]
    outputs = simulate(module, system, requests, hidden_law(module, "easy", "v0"))
    series, times = observe(module, system, outputs), record_times(module, system, outputs)
    cache = DerivedTableCache()
    cache.table(module, system, requests[:7], series[:7], times[:7])
    grown = cache.table(module, system, requests, series, times)
    scratch = derive_law_table(module, system, requests, series, times=times)
    for name in ("X", "y", "misfit", "sigma"):
        np.testing.assert_array_equal(getattr(grown, name), getattr(scratch, name))
    axis = has_time_axis(module, system, controls_matrix(spec(module, system), requests), times, series.shape[2])
    assert axis == (module == "m5_radioactive_decay")
    assert (grown.y.shape[0] > len(requests)) == axis
    for edit in ("series", "times"):
        cache.table(module, system, requests, series, times)  # the record as it was, then one edit
        s2, t2 = series.copy(), times.copy()
        if edit == "series":
            s2[1] = s2[1] * 1.5
        else:  # within the axis test's tolerance: still the time axis, other stamps in the table
            t2[9] = t2[9] * (1 + 1e-7)
        again = cache.table(module, system, requests, s2, t2)
        whole = derive_law_table(module, system, requests, s2, times=t2)
        for name in ("X", "y", "misfit", "sigma"):
            np.testing.assert_array_equal(getattr(again, name), getattr(whole, name))


def test_the_time_axis_answer_is_remembered_by_the_probe_records(monkeypatch):
    import etc_fast.systems._derive as D
    from etc_fast.systems._forward import controls_matrix
    from etc_fast.systems._spec import spec

    module, system = "m5_radioactive_decay", "simple_system"
    requests = system_pool(module, system, seed=3)[:6]
    outputs = simulate(module, system, requests, hidden_law(module, "easy", "v0"))
    C, times = controls_matrix(spec(module, system), requests), D.record_times(module, system, outputs)
    D._TIME_AXIS_SEEN.clear()
    calls = []
    real = D.time_axis_inputs
    monkeypatch.setattr(D, "time_axis_inputs", lambda *a: calls.append(1) or real(*a))
    first = D.has_time_axis(module, system, C, times, 20)
    assert D.has_time_axis(module, system, C[:4], times[:4], 20) == first and len(calls) == 1
    other = times.copy()
    other[0, 1] *= 1.5  # a different first record is asked again
    D.has_time_axis(module, system, C, other, 20)
    assert len(calls) == 2


@pytest.mark.parametrize("module,system,form", [("m0_gravity", "complex_system", "C*mass1*mass2/distance**p"),
                                                ("m8_sound_speed", "complex_system", "sqrt(gamma*C*T**2/M)")])
def test_calibration_is_the_same_without_the_batched_jacobian(monkeypatch, module, system, form):
    """The batched Jacobian only groups least_squares' finite-difference steps into one simulation:
    the fit is the one of SciPy's own finite differences (one simulation per step), to the bit."""
    import etc_fast.systems._planning as planning

    task = get_task(module, "easy", "v0")
    requests, obs = _observed(module, system)
    prog = parse(form, task.variable_names)
    if "p" in prog.const_names:  # start the exponent off its value
        prog = prog.with_consts(np.where([n == "p" for n in prog.const_names], 1.7, prog.consts))
    batched = calibrate(prog, module, system, requests, obs)
    calls = []

    class Plain:  # SciPy's own finite differences, one residual call per step
        def __init__(self, fun, _batch):
            calls.append(1)
            self.fun, self.jac = fun, "2-point"

    monkeypatch.setattr(planning, "BatchedJacobian", Plain)
    plain = calibrate(prog, module, system, requests, obs)
    assert calls  # the plain path ran
    np.testing.assert_array_equal(batched.program.consts, plain.program.consts)
    assert batched.rms == plain.rms


def test_power_law_fit_writes_a_unit_exponent_as_the_grammar_does():
    """One law reached by the simulator's power-law fit and by the grammar search has one text, so
    which of the two ranks first (a CPU's last bits can decide it) does not change the submission."""
    from etc_fast.policies.symbolic._policy import snap_literals
    from etc_fast.systems._derive import PowerLawFit

    fit = PowerLawFit(1.0, [1.0, 1.0, 2.5, 0.0], 0.01, ["m", "c", "delta_T", "t"])
    assert fit.expression == "1.0 * m * c * delta_T**2.5"
    names = ["m", "c", "delta_T", "t"]
    grammar = parse("1*m*c*delta_T**2.5", names).to_source()
    assert parse(snap_literals(fit.expression), names).to_source() == grammar
    assert PowerLawFit(2.0, [-1.0, 0.5, 1.0, 1.5], 0.0, names).expression == "2.0 * m**-1.0 * c**0.5 * delta_T * t**1.5"


def test_constant_errors_are_relative_and_scale_with_the_misfit():
    """A constant's standard error on the records: relative (log magnitude), proportional to the
    residual size it is given, and larger where the records determine the constant less (a
    free exponent shares the records with the prefactor)."""
    from etc_fast.systems import constant_errors

    task = get_task("m0_gravity", "easy", "v0")
    requests, obs = _observed("m0_gravity", "simple_system")
    one = calibrate(parse("C*mass1*mass2/distance**1.5", task.variable_names), "m0_gravity", "simple_system", requests, obs)
    two = calibrate(parse("C*mass1*mass2/distance**p", task.variable_names), "m0_gravity", "simple_system", requests, obs)
    se1 = constant_errors(one.program, "m0_gravity", "simple_system", requests, obs, 1e-6)
    se1b = constant_errors(one.program, "m0_gravity", "simple_system", requests, obs, 2e-6)
    se2 = constant_errors(two.program, "m0_gravity", "simple_system", requests, obs, 1e-6)
    n = np.isfinite(obs).sum()
    assert se1.shape == (1,) and se2.shape == (2,)
    # the prefactor of a law that is the records' own moves every residual by its relative change
    assert 0.2 / np.sqrt(n) < se1[0] / 1e-6 < 5 / np.sqrt(n)
    np.testing.assert_allclose(se1b, 2 * se1, rtol=1e-9)
    assert se2[0] > 10 * se1[0]


def _system_obs(module="m0_gravity", system="simple_system"):
    from types import SimpleNamespace

    requests, obs = _observed(module, system)
    return SimpleNamespace(module=module, system=system, requests=requests, series=obs)


def test_a_law_is_written_to_the_digits_the_records_determine():
    """Digits past a constant's standard error are the optimizer's stopping point (which a CPU's
    last bits move): two fits of one law whose constants differ by far less than their error write
    one text, which still explains the records as well; a law that explains the records keeps the
    digits they fix (here 11 of the gravitational constant's)."""
    from etc_fast.policies.symbolic._systems import evidenced_literals

    so = _system_obs()
    names = get_task("m0_gravity", "easy", "v0").variable_names
    wrong = calibrate(parse("C*mass1*mass2/distance**2 + D", names), "m0_gravity", "simple_system", so.requests, so.series)
    c, d = (float(v) for v, n in zip(wrong.program.consts, wrong.program.const_names) if n)
    texts = {evidenced_literals(f"{c * f!r}*mass1*mass2/distance**2 + {d / f!r}", names, so, wrong.rms)
             for f in (1.0, 1 + 1e-9, 1 - 2e-9)}
    assert len(texts) == 1
    (text,) = texts
    assert len(text) < len(f"{c!r}*mass1*mass2/distance**2 + {d!r}") - 10  # digits were dropped
    rounded = calibrate(parse(text, names), "m0_gravity", "simple_system", so.requests, so.series)
    assert rounded.rms <= 1.5 * wrong.rms
    exact = calibrate(parse("C*mass1*mass2/distance**1.5", names), "m0_gravity", "simple_system", so.requests, so.series)
    (g,) = [float(v) for v, n in zip(exact.program.consts, exact.program.const_names) if n]
    kept = evidenced_literals(f"{g!r}*mass1*mass2/distance**1.5", names, so, exact.rms)
    assert kept.startswith(f"{g:.11g}*") and float(kept.split("*")[0]) == pytest.approx(g, rel=1e-10)


def test_a_law_reached_by_two_families_is_submitted_in_one_text():
    """The Fermi form and the logistic one with unit constants are one law; SymPy's canonical
    order writes both alike. SymPy's own constants (E, pi) are never read back as free constants."""
    from etc_fast.policies.symbolic._policy import system_source

    names = ["omega", "T"]
    a = system_source("1/(exp(1.0512999999995898e-14*omega/T) + 1)", names)
    b = system_source("1/(1 + 1*exp(1.0512999999981631e-14*omega/T))", names)
    assert a == b and "1.0513e-14" in a
    assert system_source("q*omega**1*T**-1 + 0", ["q", "omega", "T"]) == system_source("omega*q/T", ["q", "omega", "T"])
    src = system_source("exp(1)*omega", names)
    ns: dict = {}
    exec(src, ns)  # noqa: S102 - our own generated source
    assert ns["discovered_law"](2.0, 1.0) == pytest.approx(2 * np.e, rel=1e-12)
