"""The extremes test of the noise-aware planner and the noise-weighted power-law fits (docs/guide/noise.md)."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.acquisition import KAPPA_DISAGREE, NoiseOptions, extreme_pick, fitted_constants, plan_noisy_step
from etc_fast.core import TrialSpec
from etc_fast.policies.symbolic import VariableDomain, search
from etc_fast.policies.symbolic import _search as search_mod
from etc_fast.policies.symbolic._grammar import OUTERS
from etc_fast.protocol import CONFIGURATIONS, get_configuration


# -- extreme_pick --------------------------------------------------------------------------------
def test_extreme_pick_goes_farthest_outside_the_measured_outputs_in_log():
    y = np.array([1.0, 2.0, 4.0])
    pred = np.array([3.0, 0.5, 40.0, 0.01, np.nan])  # inside, 2x below, 10x above, 100x below, undefined
    avail = np.ones(5, dtype=bool)
    assert extreme_pick(pred, y, 0.01, avail) == 3
    avail[3] = False
    assert extreme_pick(pred, y, 0.01, avail) == 2  # unavailable points are never picked
    assert extreme_pick(np.array([1.5, 3.9]), y, 0.01, np.ones(2, dtype=bool)) == -1  # nothing outside
    # the gap is relative: 4.02 is 0.5% beyond the largest output
    assert extreme_pick(np.array([4.02]), y, 0.01, np.ones(1, dtype=bool)) == -1
    assert extreme_pick(np.array([4.02]), y, 0.001, np.ones(1, dtype=bool)) == 0


def test_extreme_pick_uses_the_range_when_outputs_change_sign():
    y = np.array([-1.0, 1.0])
    pred = np.array([0.0, 1.5, -4.0])
    assert extreme_pick(pred, y, 0.1, np.ones(3, dtype=bool)) == 2
    assert extreme_pick(pred[:2], y, 0.1, np.ones(2, dtype=bool)) == 1
    # one-signed outputs: a prediction of the other sign is not an extreme (log undefined)
    assert extreme_pick(np.array([-5.0, 3.0]), np.array([1.0, 2.0]), 0.01, np.ones(2, dtype=bool)) == 1


def _saturating(X):  # a law that bends only where x is large: 1 / (1 + x / 8)
    return 1.0 / (1.0 + X[:, 0] / 8.0)


def _planner_step(options, seed=2):
    rng = np.random.default_rng(seed)
    Up = rng.random((400, 1))
    Xp = 1.0 + 9.0 * Up
    Uo = rng.random((10, 1)) * 0.3  # measured only at small x
    Xo = 1.0 + 9.0 * Uo
    yo = _saturating(Xo) * (1.0 + 0.001 * rng.standard_normal(10))
    step = plan_noisy_step(["1 - x / 10", "1 - x / 10 + 0.0001 * x**2"], ("x",), Xo, yo, Uo, Xp, Up,
                           np.ones(400, dtype=bool), method="variance", k=4, seed=1, options=options, noisy=True)
    return step, Xp, Up


def test_the_extremes_test_takes_the_first_exploration_slot():
    base = NoiseOptions(noise_aware=True, explore_fraction=0.5)
    on = NoiseOptions(noise_aware=True, explore_fraction=0.5, test_extremes=True)
    plain, Xp, Up = _planner_step(base)
    ext, _, _ = _planner_step(on)
    assert ext.explored.size == plain.explored.size >= 1
    first = int(ext.explored[0])
    # the best law (1 - x/10) predicts its smallest output where x is largest: the pick is there,
    # outside the exploration margin the maximin picks keep to
    assert Xp[first, 0] == pytest.approx(Xp[:, 0].max())
    assert Up[first, 0] > 1.0 - 0.08
    assert all(Up[int(j), 0] <= 1.0 - 0.08 for j in plain.explored)
    assert any("outside the measured range" in n for n in ext.notes)
    # a noiseless lab runs the paper's step: the knob does nothing there
    quiet = plan_noisy_step(["1 - x / 10", "1 - x / 10 + 0.0001 * x**2"], ("x",), Xp[:3], _saturating(Xp[:3]),
                            Up[:3], Xp, Up, np.ones(400, dtype=bool), method="variance", k=4, seed=1, options=on,
                            noisy=False)
    assert not any("outside the measured range" in n for n in quiet.notes)


def test_the_extremes_gap_is_the_disagreement_threshold():
    assert KAPPA_DISAGREE == 2.0  # documented in docs/guide/noise.md, rule 6


def test_test_extremes_knob_keeps_trial_ids_and_needs_exploration():
    for name in CONFIGURATIONS:
        assert "test_extremes" not in TrialSpec(model="symbolic", config=CONFIGURATIONS[name], task="m0_gravity").to_dict()["config"]
    cs = get_configuration("variance_c", name="v", noise_aware=True, explore_fraction=0.5, stop_when_settled=True)
    cx = get_configuration("variance_c", name="v", noise_aware=True, explore_fraction=0.5, stop_when_settled=True,
                           test_extremes=True)
    d_cs = TrialSpec(model="symbolic", config=cs, task="m0_gravity").to_dict()["config"]
    assert "test_extremes" not in d_cs
    assert TrialSpec(model="symbolic", config=cx, task="m0_gravity").to_dict()["config"]["test_extremes"] is True
    with pytest.raises(ValueError, match="test_extremes needs explore_fraction > 0"):
        get_configuration("variance_c", name="x", noise_aware=True, test_extremes=True)
    with pytest.raises(ValueError, match="test_extremes must be a boolean"):
        get_configuration("variance_c", name="x", noise_aware=True, explore_fraction=0.5, test_extremes="yes")


# -- noise-weighted power-law fits ---------------------------------------------------------------
def test_noise_weights_follow_the_steepness_of_the_inverse_transform():
    acos_deg = next(o for o in OUTERS if o.name == "acos_deg")
    y = np.array([10.0, 45.0, 80.0, 89.9])
    w = search_mod._noise_weights(y, acos_deg)
    assert w is not None and np.all(np.diff(w) < 0)  # near 90 degrees cos(y) moves most with y's noise
    # d log cos(y) / d log y = -y tan(y): the weights are its inverse, scaled to a median of 1
    sens = np.abs(np.radians(y) * np.tan(np.radians(y)))
    np.testing.assert_allclose(w / w[1], sens[1] / sens, rtol=1e-2)  # central differences
    assert search_mod._noise_weights(y, OUTERS[0]) is None  # identity: every row alike


def _snell_like(n=16, sigma=1e-3, seed=0):
    rng = np.random.default_rng(seed)
    X = np.column_stack([1.0 + rng.random(n), 1.0 + rng.random(n), 90.0 * rng.random(n)])
    X[0] = [1.0, 1.0, 0.1]  # refraction angle 89.9 degrees: cos of it is 0.0017, steep under noise
    with np.errstate(invalid="ignore"):
        y = np.degrees(np.arccos(X[:, 0] * np.sin(np.radians(X[:, 2])) / X[:, 1]))
    return X, y * (1.0 + sigma * rng.standard_normal(n))


DOMAINS = [VariableDomain("n1", "linear", 1.0, 2.0, "refractive index of medium 1"),
           VariableDomain("n2", "linear", 1.0, 2.0, "refractive index of medium 2"),
           VariableDomain("angle1", "linear", 0.0, 90.0, "angle of incidence in degrees")]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_a_steep_inverse_transform_does_not_let_one_noisy_row_set_the_law(seed):
    from etc_fast.policies.symbolic._criterion import criterion_ranked

    X, y = _snell_like(seed=seed)
    res = search(X, y, DOMAINS, noise=1e-3, output_unit="deg")
    # the law the agent decides with: the criterion charges the factored family's fitted scale
    # (57.2968 for 180/pi) as a fitted number, so the exact degrees(acos(...)) law ranks first
    best = criterion_ranked(res, 1e-3).best
    assert best.expression.startswith("degrees(acos(") and fitted_constants(best.expression) == 0, best.expression
    # and the search's own score puts it among its two best (the scaled acos may lead by half a unit)
    assert any(c.expression.startswith("degrees(acos(") and fitted_constants(c.expression) == 0
               for c in res.candidates[:2]), [c.expression for c in res.candidates[:2]]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_weighted_log_linear_fit_recovers_the_exponents_an_unweighted_one_loses(seed):
    X, y = _snell_like(seed=seed)
    acos_deg = next(o for o in OUTERS if o.name == "acos_deg")
    A = np.column_stack([X[:, 0], X[:, 1], np.sin(np.radians(X[:, 2]))])
    z = acos_deg.inverse(y)
    weighted = search_mod._loglinear(A, z, search_mod._noise_weights(y, acos_deg))
    plain = search_mod._loglinear(A, z)
    np.testing.assert_allclose(weighted[2], [1.0, -1.0, 1.0], atol=0.02)
    # unweighted: a measured 90.06 degrees (seed 0) leaves z of both signs and no fit at all, or
    # the near-90-degree row pulls the exponents away
    assert plain is None or np.max(np.abs(plain[2] - [1.0, -1.0, 1.0])) > 0.1, plain[2]
