"""The noise-aware planner step (docs/noise.md) on synthetic committees, and its config knobs."""

from __future__ import annotations

import copy

import numpy as np
import pytest
import yaml

from etc_fast.acquisition import (
    EXPLORE_MARGIN,
    KAPPA_DISAGREE,
    NoiseOptions,
    estimate_noise,
    plan_noisy_step,
    replicate_noise,
)
from etc_fast.core import TrialSpec
from etc_fast.protocol import CONFIGURATIONS, get_configuration
from etc_fast.runner import ConfigError, load_config
from kernels.noise import maximin_pick
from tests.runner.conftest import SMALL

NAMES = ("x", "z")


def _pool(n=256, seed=0):
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2))
    X = 1.0 + 9.0 * U  # linear domain [1, 10]^2
    return U, X


def _obs(law, n=12, sigma=0.01, seed=1):
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2)) * 0.5  # observations only in the lower half of the domain
    X = 1.0 + 9.0 * U
    y = law(X) * (1.0 + sigma * rng.normal(size=n))
    return U, X, y


def _law(X):
    return X[:, 0] * X[:, 1]


def _step(hyps, options, k=4, sigma=0.01, n=12, seed=1, noisy=True, method="variance"):
    Uo, Xo, yo = _obs(_law, n=n, sigma=sigma, seed=seed)
    Up, Xp = _pool()
    return plan_noisy_step(
        hyps, NAMES, Xo, yo, Uo, Xp, Up, np.ones(Xp.shape[0], dtype=bool), method=method, k=k, seed=3,
        options=options, noisy=noisy,
    ), (Uo, Xo, yo, Up, Xp)


# -- the noise estimate --------------------------------------------------------------------------
@pytest.mark.parametrize("sigma", [0.001, 0.01, 0.05])
def test_residual_estimate_tracks_the_noise_of_the_right_law(sigma):
    est = []
    for seed in range(20):
        step, _ = _step(["x * z", "x + z", "x * z**1.1"], NoiseOptions(noise_aware=True), sigma=sigma, n=20, seed=seed)
        assert step.noise.basis == "residuals"
        est.append(step.noise.sigma)
    assert np.median(est) == pytest.approx(sigma, rel=0.25)


def test_residual_estimate_is_an_upper_bound_when_every_hypothesis_is_wrong():
    step, _ = _step(["x + z", "x**2 + z"], NoiseOptions(noise_aware=True), sigma=0.001, n=20)
    assert step.noise.sigma > 0.01  # the misfit of the best wrong law, not the noise


def test_replicate_estimate():
    rng = np.random.default_rng(0)
    X = np.repeat(rng.random((30, 2)), 2, axis=0)
    y = 5.0 * (1 + 0.02 * rng.normal(size=60))
    sig, dof = replicate_noise(X, y)
    assert dof == 30 and sig == pytest.approx(0.02, rel=0.3)
    est = estimate_noise(np.array([0.5]), np.array([60]), X, y)  # replicates win over a bad fit
    assert est.basis == "replicates" and est.sigma == pytest.approx(sig)
    assert replicate_noise(rng.random((5, 2)), np.ones(5)) == (None, 0)


# -- selection against the noise -------------------------------------------------------------------
def test_disagreement_below_the_noise_does_not_drive_selection():
    # two hypotheses that differ by 0.05%: under 1% noise nothing is informative, the batch explores
    step, (Uo, *_rest, Up, _Xp) = _step(["x * z", "1.0005 * x * z"], NoiseOptions(noise_aware=True))
    assert step.n_informative == 0 and step.scored is None
    assert step.explored.size == 4 and step.indices.tolist() == step.explored.tolist()
    inner = np.flatnonzero(np.all((Up >= EXPLORE_MARGIN) & (Up <= 1 - EXPLORE_MARGIN), axis=1))
    assert step.indices.tolist() == inner[maximin_pick(Uo, Up[inner], 4)].tolist()
    assert maximin_pick(Uo, Up, 1)[0] not in inner  # without the margin the first pick is at an edge
    # the same committee in a noiseless lab: the paper's disagreement drives all four picks
    quiet, _ = _step(["x * z", "1.0005 * x * z"], NoiseOptions(noise_aware=True), sigma=0.0, noisy=False)
    assert quiet.explored.size == 0 and quiet.indices.size == 4 and quiet.noise.basis == "noiseless"


def test_disagreement_above_the_noise_is_scored_and_explore_fraction_is_the_share():
    hyps = ["x * z", "x * z + 0.003 * x**3", "x * z + 0.002 * z**3"]  # all fit the lower half to the noise
    step, (_Uo, _Xo, _yo, Up, Xp) = _step(hyps, NoiseOptions(noise_aware=True, explore_fraction=0.25))
    assert step.n_consistent >= 2 and step.n_informative > 0
    assert step.explored.size == 1 and step.indices.size == 4 and step.scored is not None
    assert step.indices[:3].tolist() == step.scored.indices.tolist()
    # every scored pick is informative: its relative disagreement exceeds KAPPA_DISAGREE sigma
    for share, n_exp in ((0.0, 0), (0.5, 2), (1.0, 4)):
        s, _ = _step(hyps, NoiseOptions(noise_aware=True, explore_fraction=share))
        assert s.explored.size == n_exp and s.indices.size == 4
    # exploration goes to the unobserved upper half of the domain
    assert np.all(Up[step.explored].max(axis=1) > 0.5)
    assert KAPPA_DISAGREE * step.noise.sigma < 1.0


def test_fit_filter_judges_residuals_against_the_noise():
    hyps = ["x * z", "x * z + 0.003 * x**3", "x + z", "x * z + 0.002 * z**3"]  # x + z misfits by far more than 3 sigma
    step, _ = _step(hyps, NoiseOptions(noise_aware=True))
    assert 2 not in step.kept and set(step.kept) == {0, 1, 3}
    paper, _ = _step(hyps, NoiseOptions(explore_fraction=0.25))  # without noise_aware: the four best fits
    assert 2 in paper.kept
    # only the right law fits to the noise: nothing to choose between, the batch explores
    lone, _ = _step(["x * z", "x + z", "x**2"], NoiseOptions(noise_aware=True))
    assert lone.n_consistent == 1 and lone.explored.size == 4


def _calibrated_gap(Xo, yo, coef):
    H = np.stack([Xo[:, 0] * Xo[:, 1], Xo[:, 0] * Xo[:, 1] + coef * Xo[:, 0] ** 3])
    P = np.stack([np.polyval(np.polyfit(h, yo, 1), h) for h in H])
    return P, 2 * np.abs(P[0] - P[1]) / (np.abs(P[0]) + np.abs(P[1]))


@pytest.mark.parametrize("coef", [0.003, 0.01])
def test_replicates_go_where_they_resolve_a_choice(coef):
    hyps = ["x * z", f"x * z + {coef} * x**3"]
    step, (_Uo, Xo, yo, *_rest) = _step(hyps, NoiseOptions(noise_aware=True, replicates=1))
    assert step.replicate_rows.size == 1 and step.indices.size == 3
    P, gap = _calibrated_gap(Xo, yo, coef)  # NumPy: calibrated predictions and their relative gap
    r = int(step.replicate_rows[0])
    if gap.max() > KAPPA_DISAGREE * step.noise.sigma:  # the point where the hypotheses differ most
        assert coef == 0.01 and r == int(np.argmax(gap))
    else:  # no gap above the noise: is the best fit's worst residual noise or a missing term?
        best = int(np.argmin([np.sqrt(np.mean(((p - yo) / yo) ** 2)) for p in P]))
        assert coef == 0.003 and r == int(np.argmax(np.abs(P[best] - yo) / np.abs(yo)))
    none, _ = _step(hyps, NoiseOptions(noise_aware=True, replicates=1), noisy=False, sigma=0.0)
    assert none.replicate_rows.size == 0 and none.indices.size == 4  # no replicates in a noiseless lab


def test_random_method_with_exploration():
    step, _ = _step(["x * z", "x + z"], NoiseOptions(explore_fraction=0.5), method="random")
    assert step.indices.size == 4 and step.explored.size == 2 and len(set(step.indices.tolist())) == 4


# -- configuration: trial ids and the YAML block ----------------------------------------------------
def test_trial_ids_unchanged_at_default_knobs():
    # ids recorded before the knobs existed (main at 5f3f4c0)
    spec = TrialSpec(model="symbolic", config=get_configuration("variance_c"), task="m9_hooke_law")
    assert spec.trial_id == "aff0e04fcdc142d9"
    assert "noise_aware" not in spec.to_dict()["config"]
    on = TrialSpec(model="symbolic", config=get_configuration("variance_c", noise_aware=True), task="m9_hooke_law")
    assert on.trial_id != spec.trial_id and on.to_dict()["config"]["noise_aware"] is True
    assert TrialSpec.from_dict(on.to_dict()) == on and TrialSpec.from_dict(spec.to_dict()) == spec
    for name in CONFIGURATIONS:
        d = TrialSpec(model="symbolic", config=CONFIGURATIONS[name], task="m0_gravity").to_dict()["config"]
        assert not {"noise_aware", "explore_fraction", "replicates"} & set(d)


def _load(tmp_path, ablations):
    raw = copy.deepcopy(SMALL)
    raw["ablations"] = ablations
    raw["grids"][0]["configurations"] = list(ablations)
    path = tmp_path / "x.yaml"
    path.write_text(yaml.safe_dump(raw))
    return load_config(path)


def test_yaml_acquisition_block(tmp_path):
    cfg = _load(tmp_path, {"vn": {"base": "variance_c", "acquisition": {"noise_aware": True, "explore_fraction": 0.25, "replicates": 1}}})
    c = cfg.configuration("vn")
    assert (c.noise_aware, c.explore_fraction, c.replicates) == (True, 0.25, 1)
    assert cfg.to_dict()["ablations"]["vn"] == {"base": "variance_c", "acquisition": {"noise_aware": True, "explore_fraction": 0.25, "replicates": 1}}


@pytest.mark.parametrize(
    ("body", "words"),
    [
        ({"base": "variance_c", "acquisition": {"explore_fraction": 1.5}}, "explore_fraction must be a number from 0 to 1"),
        ({"base": "variance_c", "acquisition": {"noise_awar": True}}, "ablations.bad.acquisition.noise_awar: unknown key"),
        ({"base": "variance_c", "acquisition": {"replicates": -1}}, "replicates must be an integer"),
        ({"base": "baseline_c", "acquisition": {"noise_aware": True}}, "ablations.bad.acquisition: the acquisition knobs apply to planners"),
        ({"base": "variance_c", "noise_aware": True}, "ablations.bad.noise_aware: unknown key"),
    ],
)
def test_yaml_acquisition_block_errors(tmp_path, body, words):
    with pytest.raises(ConfigError, match=words.replace("(", r"\(")):
        _load(tmp_path, {"bad": body})


def test_estimate_text():
    from etc_fast.acquisition import NoiseEstimate

    assert "about 1.2% relative" in NoiseEstimate(0.012, "replicates", 4).describe()
    assert "upper estimate" in NoiseEstimate(0.012, "residuals", 9, 0).describe()
    assert NoiseEstimate(55.4, "residuals", 13, 0).describe().startswith("unknown: no hypothesis fits")
    assert "no noise estimate yet" in NoiseEstimate(None, "none", 0).describe()
