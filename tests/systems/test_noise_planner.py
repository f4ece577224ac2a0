"""The noise-aware planner step on simulated systems (etc_fast/acquisition/_series_noise.py): its NumPy
parts on synthetic series, then scripted planner trials on simple_system under 1% noise."""

from __future__ import annotations

import copy
import dataclasses

import numpy as np
import pytest

from etc_fast.acquisition import KAPPA_FIT
from etc_fast.acquisition._series_noise import (
    CELL_FLOOR,
    MIN_REPLICATE_DOF,
    SeriesCheck,
    channel_typical,
    corrected_residuals,
    estimate_series_noise,
    relative_residuals,
    replicate_noise,
    residual_rms,
    series_extreme,
    series_gap,
)
from etc_fast.core import Action, TrialSpec, get_configuration, to_jsonable
from etc_fast.labs import SystemLab, lab_refusal
from etc_fast.policies.scripted import ScriptedPolicy
from etc_fast.protocol import run_trial
from etc_fast.runner import ConfigError, parse_config
from kernels.noise import relative_disagreement
from tests.runner.conftest import SMALL


# -- NumPy parts -----------------------------------------------------------------------------------
def _truth(n_exp=12, ch=2, T=20, seed=0):
    """Synthetic noiseless series: channel 0 around 5 (a position), channel 1 starting at 0 (a
    velocity from rest, whose first reading only the absolute floor sets)."""
    rng = np.random.default_rng(seed)
    t = np.linspace(0.0, 1.0, T)
    a = rng.uniform(1.0, 3.0, size=(n_exp, 1))
    out = np.empty((n_exp, ch, T))
    out[:, 0] = 5.0 - a * t**2
    out[:, 1] = -2.0 * a * t
    return out


def _noisy(truth, sigma, seed):
    rng = np.random.default_rng(seed)
    y = truth * (1.0 + sigma * rng.normal(size=truth.shape))
    return np.where(truth == 0.0, 1e-9 * rng.normal(size=truth.shape), y)  # NewtonBench's floor at 0


@pytest.mark.parametrize("sigma", [0.001, 0.01, 0.05])
def test_replicate_estimate_from_repeated_requests(sigma):
    truth = _truth(n_exp=6)
    reqs = [{"a": float(i), "b": 1.0} for i in range(6)]
    reqs += [dict(reqs[1]), {"b": 1.0, "a": 3.0}]  # two repeats (key order does not matter)
    series = _noisy(np.concatenate([truth, truth[[1, 3]]]), sigma, seed=1)
    typ = channel_typical(series)
    est, dof, n_exp = replicate_noise(reqs, series, typ)
    # each repeated pair compares its readings above the floor: 20 + 19 (the first velocity is 0)
    assert (dof, n_exp) == (2 * 39, 4)
    assert est == pytest.approx(sigma, rel=0.3)
    noise = estimate_series_noise(np.array([0.5, 0.9]), 100, [1, 1], reqs, series, typ)
    assert noise.basis == "replicates" and noise.sigma == pytest.approx(est) and noise.readings == dof
    assert replicate_noise(reqs[:6], series[:6], typ) == (None, 0, 0)


def test_replicate_estimate_needs_its_degrees_of_freedom():
    # one repeated reading (a one-reading apparatus) is below MIN_REPLICATE_DOF: averaged with the residuals
    series = np.array([[[1.0]], [[1.02]], [[2.0]]])
    reqs = [{"x": 1.0}, {"x": 1.0}, {"x": 2.0}]
    sig, dof, _ = replicate_noise(reqs, series, channel_typical(series))
    assert dof == 1 < MIN_REPLICATE_DOF and sig == pytest.approx(0.02 / 1.01 / np.sqrt(2), rel=1e-9)
    noise = estimate_series_noise(np.array([0.03]), 3, [0], reqs, series, channel_typical(series))
    assert noise.basis == "residuals" and noise.sigma == pytest.approx(np.sqrt((0.03**2 + sig**2) / 2))


@pytest.mark.parametrize("sigma", [0.001, 0.01, 0.05])
def test_residual_estimate_tracks_the_noise_of_the_right_law(sigma):
    ests = []
    for seed in range(10):
        truth = _truth(seed=seed)
        obs = _noisy(truth, sigma, seed=100 + seed)
        pred = np.stack([truth, truth * 1.2, truth + 0.5])  # the right law and two wrong ones
        typ = channel_typical(obs)
        rms, cells = residual_rms(pred, obs, typ)
        assert cells == 12 * 39  # the 12 readings of a body at rest are not compared
        noise = estimate_series_noise(rms, cells, [1, 1, 1], [{"i": i} for i in range(12)], obs, typ)
        assert noise.basis == "residuals" and noise.hypothesis == 0 and noise.experiments == 12
        assert noise.sigma == pytest.approx(rms[0] * np.sqrt(cells / (cells - 1)))
        ests.append(noise.sigma)
    assert np.median(ests) == pytest.approx(sigma, rel=0.1)


def test_residuals_count_a_crash_and_skip_readings_below_the_floor():
    obs = np.array([[[2.0, 4.0, 1e-9]]])  # the last reading: below CELL_FLOOR of the channel's typical 2
    assert 1e-9 < CELL_FLOOR * channel_typical(obs)[0]
    pred = np.array([[[[2.2, np.nan, 5.0]]]])
    r = relative_residuals(pred, obs, channel_typical(obs))
    assert r[0, 0, 0, 0] == pytest.approx(0.1) and r[0, 0, 0, 1] == 1.0 and np.isnan(r[0, 0, 0, 2])
    rms, cells = residual_rms(pred, obs, channel_typical(obs))
    assert cells == 2 and rms[0] == pytest.approx(np.sqrt((0.01 + 1.0) / 2))


def test_corrected_residuals_count_the_fitted_constants():
    c = corrected_residuals(np.array([0.01, 0.01, np.nan]), 10, [0, 2, 0])
    assert c[0] == 0.01 and c[1] == pytest.approx(0.01 * np.sqrt(10 / 8)) and np.isnan(c[2])
    assert np.isnan(corrected_residuals(np.array([0.01]), 3, [3])[0])  # no degree of freedom left


def test_series_gap_is_the_equation_rule_for_one_reading_and_adds_readings_in_square():
    rng = np.random.default_rng(0)
    P = rng.uniform(1.0, 2.0, size=(3, 50))
    one = series_gap(P[:, :, None, None], np.ones(1))
    assert np.allclose(one, relative_disagreement(P))
    base = np.full((2, 1, 1, 20), 10.0)
    base[1] *= 1.01  # two laws 1% apart at each of 20 readings
    assert series_gap(base, np.array([10.0]))[0] == pytest.approx(0.01 / 1.005 * np.sqrt(20))
    lone = base.copy()
    lone[1, 0, 0, 1:] = np.nan  # one reading with two members left
    assert series_gap(lone, np.array([10.0]))[0] == pytest.approx(0.01 / 1.005)
    assert np.isnan(series_gap(np.full((2, 1, 1, 3), np.nan), np.ones(1))[0])


def test_series_extreme_picks_the_prediction_farthest_outside_the_measured_range():
    obs = np.array([[[1.0, 2.0], [-1.0, 1.0]], [[3.0, 4.0], [0.0, 0.5]]])  # channel 0 positive, channel 1 mixed
    pred = np.array([
        [[2.0, 3.0], [0.0, 0.2]],    # inside both ranges
        [[4.0, 9.0], [0.0, 0.0]],    # 9 is log(9/4) outside channel 0
        [[2.0, 2.0], [0.0, 2.0]],    # 2 is (2 - 1) / 2 = 0.5 ranges outside channel 1
        [[40.0, 2.0], [0.0, 0.0]],   # log(10) outside
    ])
    av = np.ones(4, dtype=bool)
    assert series_extreme(pred, obs, 0.01, av) == 3
    av[3] = False
    assert series_extreme(pred, obs, 0.01, av) == 1  # log(9/4) = 0.81 > 0.5
    assert series_extreme(pred, obs, 1.5, av) == -1  # neither exceeds log1p(1.5) = 0.92 or 1.5 ranges
    assert series_extreme(pred[:1], obs, 0.0, av[:1]) == -1


def test_series_check_passes_within_kappa_fit_noise_levels():
    assert SeriesCheck("h", KAPPA_FIT * 0.01, 0.01, 4, 80).passed
    assert not SeriesCheck("h", KAPPA_FIT * 0.01 * 1.01, 0.01, 4, 80).passed


# -- scripted trials on simple_system --------------------------------------------------------------
RIGHT = "C*mass1*mass2/distance**1.5"  # m0 easy v0's form (tests/systems/test_planning.py)
COMMITTEE = (RIGHT, "C*mass1*mass2/distance**2", "C*mass1/distance**1.5")
LAW = "def discovered_law(mass1, mass2, distance):\n    return 6.674e-05 * mass1 * mass2 / distance ** 1.5\n"
KNOBS = {"noise_aware": True, "explore_fraction": 0.5, "stop_when_settled": True, "test_extremes": True}


def _policy():
    def act(obs):
        if obs.phase == "explore":
            return Action(kind="committee", hypotheses=COMMITTEE, raw="committee")
        return Action(kind="final", source=LAW, raw="final")

    return ScriptedPolicy(act)


def _trial(noise=0.01, turns=4, **knobs):
    base = get_configuration("variance_c")
    cfg = dataclasses.replace(base, name="variance_cx" if knobs else base.name, exploration_turns=turns, **knobs)
    spec = TrialSpec(model="scripted", config=cfg, task="m0_gravity", difficulty="easy", system="simple_system",
                     noise=noise)
    return run_trial(spec, _policy())


def _selections(record):
    return [e for e in record.events if "selection" in e]


@pytest.fixture(scope="module")
def noisy_trial():
    return _trial(**KNOBS)


def test_a_noisy_trial_estimates_the_noise_explores_and_drops_settled_slots(noisy_trial):
    r = noisy_trial
    assert r.status == "max_turns_reached", r.error
    sel = _selections(r)
    assert len(sel) == 4
    for e in sel:
        s = e["selection"]
        est = s["noise_estimate"]
        assert s["noise_aware"] and est["basis"] == "residuals" and 0.005 < est["sigma"] < 0.02
        assert s["kept_hypotheses"][0] == RIGHT and s["noise_estimate"]["hypothesis"] == 0
        assert s["explored"] and set(s["explored"]) <= set(s["chosen"]) == set(e["measured"]["indices"])
        assert "Noise estimate: about" in e["feedback"] and "to explore" in e["feedback"]
        if s["extreme"] is not None:
            assert s["explored"][0] == s["extreme"]
    # the first batch's scored experiments separate the laws: from then on only the right law fits,
    # it predicted each batch before it was run, and the scored slots are dropped
    first = sel[0]["selection"]
    assert first["counts"]["scored"] == 2 and first["n_informative"] > 0 and "prior_check" not in first
    later = [e["selection"] for e in sel[1:]]
    assert all(s["n_consistent"] == 1 and s["counts"]["scored"] == 0 for s in later)
    assert all(s["prior_check"]["passed"] and s["prior_check"]["hypothesis"] == RIGHT for s in later)
    assert all(s["settled"] and s["n_dropped"] == s["counts"]["dropped"] > 0 for s in later)
    assert any("were not run" in e["feedback"] for e in sel[1:])
    boot = r.events[0]["n"]
    ran = boot + sum(len(e["measured"]["indices"]) for e in sel)
    assert r.measurements == ran < boot + 4 * 4
    assert r.judge["credited"]


def test_the_noisy_step_is_deterministic(noisy_trial):
    again = _trial(**KNOBS)
    assert to_jsonable(again.events) == to_jsonable(noisy_trial.events)
    assert to_jsonable(again.observations) == to_jsonable(noisy_trial.observations)


def test_the_budget_binds_with_replicates():
    r = _trial(measurement_budget=12, replicates=1, **KNOBS)
    assert r.measurements <= 12 and r.status == "budget_exhausted"
    reqs = r.observations["requests"]
    reps = [(e["measured"]["replicate_rows"], e["measured"]["requests"]) for e in _selections(r)
            if "replicate_rows" in e.get("measured", {})]
    assert reps, "a replicate slot was used"
    for rows, batch in reps:
        assert batch[-len(rows):] == [reqs[i] for i in rows]  # a repeat runs the observed request again


def test_knobs_off_or_noiseless_run_the_papers_rule():
    plain, knobs = _trial(noise=0.0, turns=2), _trial(noise=0.0, turns=2, **KNOBS)
    assert "noise_aware" not in _selections(knobs)[0]["selection"]
    assert to_jsonable(knobs.events) == to_jsonable(plain.events)
    noisy_plain = _trial(noise=0.01, turns=1)
    s = _selections(noisy_plain)[0]
    assert "noise_aware" not in s["selection"] and "Noise estimate" not in s["feedback"]


# -- the refusal and the config loader -------------------------------------------------------------
def test_systems_accept_the_noise_knobs_and_still_refuse_synthesis_none():
    knobs = dataclasses.replace(get_configuration("variance_c"), name="variance_cx", **KNOBS)
    assert SystemLab.refusal(knobs) is None and lab_refusal("complex_system", knobs) is None
    none = dataclasses.replace(get_configuration("variance_c"), name="variance_cnone", synthesis="none")
    assert "synthesis: none" in (lab_refusal("simple_system", none) or "")

    raw = copy.deepcopy(SMALL)
    raw["ablations"] = {"variance_cx": {"base": "variance_c", "acquisition": dict(KNOBS)}}
    raw["grids"][0].update(configurations=["variance_cx"], systems=["simple_system", "complex_system"])
    cfg = parse_config(raw)
    assert cfg.grids[0].systems == ("simple_system", "complex_system")
    raw["ablations"]["variance_cnone"] = {"base": "variance_c", "synthesis": "none"}
    raw["grids"][0]["configurations"] = ["variance_cx", "variance_cnone"]
    with pytest.raises(ConfigError, match=r"grids\[0\]\.systems.*variance_cnone.*synthesis: none"):
        parse_config(raw)
