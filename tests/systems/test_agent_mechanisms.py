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
