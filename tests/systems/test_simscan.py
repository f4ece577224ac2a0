"""The simulator scans of the offline agent: laws an apparatus shows only through more than one law call.

The laws here are made up (not NewtonBench's): the scans must find the class, not known answers.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from etc_fast.expr import parse
from etc_fast.policies.symbolic import _simscan as S
from etc_fast.policies.symbolic._grammar import VariableDomain
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


def test_a_scan_over_its_cell_bound_runs_nothing(monkeypatch):
    calls = []
    real = S._Records.rms

    def counted(self, program, consts):
        calls.append(len(consts))
        return real(self, program, consts)

    monkeypatch.setattr(S._Records, "rms", counted)
    monkeypatch.setattr(S, "SCAN_CELLS", 10)
    obs = _obs("m4_snell_law", "complex_system", lambda n1, n2, a: a, 6)
    assert S.monomial_scan(obs, SNELL_DOMAINS, "deg") == [] and S.exp_scan(obs, SNELL_DOMAINS) == []
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
