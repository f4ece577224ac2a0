"""The simulator scans of the offline agent: laws an apparatus shows only through more than one law call.

The laws here are made up (not NewtonBench's): the scans must find the class, not known answers.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from etc_fast.expr import parse
from etc_fast.policies.symbolic import _simscan as S
from etc_fast.policies.symbolic._grammar import VariableDomain
from etc_fast.policies.symbolic._search import SearchLimits
from etc_fast.systems import simulate
from etc_fast.systems._forward import observe
from etc_fast.systems._pool import system_pool


def _obs(module, system, law, n, seed=5):
    reqs = system_pool(module, system, seed, 256)[:n]
    outs = simulate(module, system, reqs, law=law, rng_seed=0)
    return SimpleNamespace(system=SimpleNamespace(module=module, system=system, requests=reqs,
                                                  series=observe(module, system, outs)))


def _agrees(text, truth, names, X, rtol=1e-6):
    with np.errstate(all="ignore"):
        a, b = parse(text, names).evaluate(X), parse(truth, names).evaluate(X)
    ok = np.isfinite(b)
    return bool(ok.any()) and np.allclose(a[ok], b[ok], rtol=rtol)


SNELL_DOMAINS = [VariableDomain("n1", "linear", 1.0, 1.5), VariableDomain("n2", "linear", 1.0, 1.5),
                 VariableDomain("angle1", "linear", 0.0, 90.0, "angle of incidence in degrees")]


def test_the_monomial_scan_reads_a_law_applied_at_two_interfaces():
    # the second interface is fed the first one's angle: no constant law reproduces a record, so
    # the derived table carries no law samples; the simulator sees the law itself
    def law(n1, n2, angle1):
        with np.errstate(invalid="ignore"):
            return float(np.degrees(np.arcsin(n1 * np.cos(np.radians(angle1)) / n2 ** 2)))

    obs = _obs("m4_snell_law", "complex_system", law, 14)
    out = S.monomial_scan(obs, SNELL_DOMAINS, "deg")
    assert out, "the scan found nothing"
    text, rms, cx = min(out, key=lambda t: (t[1], t[2]))
    assert rms < 1e-5
    X = np.array([[1.2, 1.3, a] for a in np.linspace(1.0, 89.0, 30)])
    assert _agrees(text, "degrees(asin(n1*cos(radians(angle1))/n2**2))", ["n1", "n2", "angle1"], X)
    assert "1.0*" in text or "1.0" in text.split("*")[0]  # the factor the records allow is written as 1


DECAY_DOMAINS = [VariableDomain("N0", "log", 1.0, 1e2), VariableDomain("lambda_constant", "log", 1e-3, 1e-1),
                 VariableDomain("t", "log", 0.1, 10.0)]


def test_the_exponential_scan_reads_a_law_seen_only_as_a_ratio_of_two_samples():
    def law(N0, lambda_constant, t):
        return N0 * np.exp(-(lambda_constant ** 0.5) * t)

    obs = _obs("m5_radioactive_decay", "complex_system", law, 10)
    assert S.monomial_scan(obs, DECAY_DOMAINS, None) == [] or \
        min(r for _, r, _ in S.monomial_scan(obs, DECAY_DOMAINS, None)) > 1e-3
    out = S.exp_scan(obs, DECAY_DOMAINS)
    text, rms, _ = min(out, key=lambda t: (t[1], t[2]))
    assert rms < 1e-5
    X = np.array([[n, lam, t] for n in (2.0, 50.0) for lam in (2e-3, 5e-2) for t in (0.3, 4.0)])
    # the ratio hides the factor: the law up to it, and written with the factor 1
    assert _agrees(text, "N0*exp(-lambda_constant**0.5*t)", ["N0", "lambda_constant", "t"], X)


def test_a_rate_the_records_do_not_see_is_written_as_no_exponential():
    """A law without an exponential: the exponential forms' rate fits to the optimizer's stopping
    point (a number like -5.8e-17, whose digits a CPU's last bits move), and is written 0, so the
    form is the law without ``exp``; a rate that moves the readings stays (the test above)."""
    import re

    def law(N0, lambda_constant, t):
        return N0 * lambda_constant * t ** 0.5

    obs = _obs("m5_radioactive_decay", "complex_system", law, 10)
    out = S.exp_scan(obs, DECAY_DOMAINS)
    good = [(text, rms) for text, rms, _ in out if rms < 1e-5]
    assert good and any("exp(" not in text for text, _ in good)
    for text, _, _ in out:
        for rate in re.findall(r"exp\(([-0-9.e]+)", text):
            assert abs(float(rate)) > 1e-8, text


def test_a_scan_over_its_cell_bound_runs_nothing(monkeypatch):
    calls = []
    real = S._Records.rms

    def counted(self, program, consts):
        calls.append(len(consts))
        return real(self, program, consts)

    monkeypatch.setattr(S._Records, "rms", counted)
    lim = SearchLimits(scan_cells=10)
    obs = _obs("m4_snell_law", "complex_system", lambda n1, n2, a: a, 6)
    assert S.monomial_scan(obs, SNELL_DOMAINS, "deg", lim) == [] and S.exp_scan(obs, SNELL_DOMAINS, lim) == []
    assert calls == []


def test_the_agent_scans_only_where_the_table_explains_nothing(monkeypatch):
    """A trial whose derived table gives the law never pays for a scan; a composed apparatus does."""
    from etc_fast.core import TrialSpec, get_configuration
    from etc_fast.policies.symbolic import SymbolicPolicy
    from etc_fast.protocol import run_trial

    seen = []
    real = S.monomial_scan

    def counted(*a, **k):
        seen.append(1)
        return real(*a, **k)

    monkeypatch.setattr(S, "monomial_scan", counted)
    cfg = get_configuration("variance_c")
    spec = TrialSpec(model="symbolic", config=cfg, task="m3_fourier_law", difficulty="easy", system="simple_system")
    assert run_trial(spec, SymbolicPolicy(seed=0)).status == "completed"
    assert seen == []
    spec = TrialSpec(model="symbolic", config=cfg, task="m4_snell_law", difficulty="easy", system="complex_system")
    assert run_trial(spec, SymbolicPolicy(seed=0)).status == "completed"
    assert seen


def test_the_scans_own_constants_never_take_a_law_inputs_name():
    assert S._tag(["q1", "q2", "distance"]) == "s"
    tag = S._tag(["s", "ss_x", "K"])
    assert not any(n.startswith(tag) for n in ["s", "ss_x", "K"])


def _counted_scan(obs, domains):
    calls = []

    def scan():
        calls.append(len(obs.system.requests))
        return S.exp_scan(obs, domains)

    return calls, scan


def test_kept_scan_forms_answer_new_records_while_they_still_explain_them():
    """The scan runs once; on more records of the same law its forms are re-scored, not re-scanned,
    and the kept best law is the law a scan from scratch finds."""
    def law(N0, lambda_constant, t):
        return N0 * np.exp(-(lambda_constant ** 0.5) * t)

    kept = S.KeptScans()
    first, more = _obs("m5_radioactive_decay", "complex_system", law, 10), _obs("m5_radioactive_decay", "complex_system", law, 16)
    calls, scan = _counted_scan(first, DECAY_DOMAINS)
    a = kept.forms("exp", first, DECAY_DOMAINS, scan)
    calls2, scan2 = _counted_scan(more, DECAY_DOMAINS)
    b = kept.forms("exp", more, DECAY_DOMAINS, scan2)
    assert calls == [10] and calls2 == [] and (kept.runs, kept.reuses) == (1, 1)
    assert [t for t, _, _ in b] == [t for t, _, _ in a]  # the same forms, misfits on the new records
    text, rms, _ = min(b, key=lambda t: (t[1], t[2]))
    assert rms < 1e-5
    fresh, fresh_rms, _ = min(S.exp_scan(more, DECAY_DOMAINS), key=lambda t: (t[1], t[2]))
    X = np.array([[n, lam, t] for n in (2.0, 50.0) for lam in (2e-3, 5e-2) for t in (0.3, 4.0)])
    assert _agrees(text, fresh, ["N0", "lambda_constant", "t"], X) and fresh_rms < 1e-5


def test_a_kept_scan_runs_again_where_its_forms_stop_explaining_the_records():
    def law(N0, lambda_constant, t):
        return N0 * np.exp(-(lambda_constant ** 0.5) * t)

    def other(N0, lambda_constant, t):
        return N0 * np.exp(-lambda_constant * t ** 2)

    kept = S.KeptScans()
    obs = _obs("m5_radioactive_decay", "complex_system", law, 10)
    kept.forms("exp", obs, DECAY_DOMAINS, _counted_scan(obs, DECAY_DOMAINS)[1])
    changed = _obs("m5_radioactive_decay", "complex_system", other, 12)
    calls, scan = _counted_scan(changed, DECAY_DOMAINS)
    out = kept.forms("exp", changed, DECAY_DOMAINS, scan)
    assert calls == [12] and (kept.runs, kept.reuses) == (2, 0)
    X = np.array([[n, lam, t] for n in (2.0, 50.0) for lam in (2e-3, 5e-2) for t in (0.3, 4.0)])
    assert _agrees(min(out, key=lambda t: (t[1], t[2]))[0], "N0*exp(-lambda_constant*t**2)",
                   ["N0", "lambda_constant", "t"], X)


def test_a_scan_that_found_nothing_and_another_apparatus_both_scan_again():
    kept = S.KeptScans()
    obs = _obs("m4_snell_law", "complex_system", lambda n1, n2, a: a, 6)
    n = []
    assert kept.forms("exp", obs, SNELL_DOMAINS, lambda: n.append(1) or []) == []
    assert kept.forms("exp", obs, SNELL_DOMAINS, lambda: n.append(1) or []) == []
    assert n == [1, 1]
    other = SimpleNamespace(system=SimpleNamespace(module="m4_snell_law", system="simple_system",
                                                   requests=obs.system.requests, series=obs.system.series))
    kept.forms("exp", obs, SNELL_DOMAINS, lambda: [("1.0*n1", 0.5, 1.0)])
    assert kept.forms("exp", other, SNELL_DOMAINS, lambda: n.append(1) or []) == [] and n == [1, 1, 1]


def test_kept_scan_forms_serve_only_records_that_extend_the_scanned_ones():
    """Other records of the same apparatus (another trial, a different first experiment) scan again."""
    def law(N0, lambda_constant, t):
        return N0 * np.exp(-(lambda_constant ** 0.5) * t)

    kept = S.KeptScans()
    obs = _obs("m5_radioactive_decay", "complex_system", law, 10)
    kept.forms("exp", obs, DECAY_DOMAINS, _counted_scan(obs, DECAY_DOMAINS)[1])
    elsewhere = _obs("m5_radioactive_decay", "complex_system", law, 12, seed=9)  # the same law, other experiments
    calls, scan = _counted_scan(elsewhere, DECAY_DOMAINS)
    kept.forms("exp", elsewhere, DECAY_DOMAINS, scan)
    assert calls == [12] and (kept.runs, kept.reuses) == (2, 0)


def test_a_scan_that_found_no_law_is_rescored_not_run_again():
    """A scan whose best form misfits the records by more than NO_LAW found no law of its family:
    on extended records of the same apparatus its forms are re-scored, even where they fit worse,
    while a scan that did find a law still runs again once its forms stop explaining the records."""
    def law(N0, lambda_constant, t):
        return N0 * np.exp(-(lambda_constant ** 0.5) * t)

    first = _obs("m5_radioactive_decay", "complex_system", law, 10)
    more = _obs("m5_radioactive_decay", "complex_system", law, 16)  # the same records, extended
    form = "N0*exp(-0.3*lambda_constant*t)"
    for best, runs in ((1.01 * S.NO_LAW, 1), (0.5 * S.NO_LAW, 2)):
        kept = S.KeptScans()
        found = [(form, best, 3.0)]
        kept.forms("exp", first, DECAY_DOMAINS, lambda found=found: found)
        out = kept.forms("exp", more, DECAY_DOMAINS, lambda found=found: found)
        assert kept.runs == runs
        if runs == 1:  # re-scored on the new records as written, far worse than the kept misfit
            assert [t for t, _, _ in out] == [form] and out[0][1] > 1.5 * best
