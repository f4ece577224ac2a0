"""The noise-aware planner's stopping rule (docs/noise.md, "Stopping rule") on synthetic committees."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.acquisition import (
    KAPPA_FIT,
    NoiseOptions,
    PredictionCheck,
    check_prediction,
    plan_noisy_step,
    prediction_error,
)
from etc_fast.core import CONFIGURATIONS, TrialSpec
from etc_fast.protocol import get_configuration

NAMES = ("x", "z")
SETTLE = NoiseOptions(noise_aware=True, explore_fraction=0.5, stop_when_settled=True)
PLAIN = NoiseOptions(noise_aware=True, explore_fraction=0.5)
PASSED = PredictionCheck("x * z", 0.012, 0.01, 4)  # 1.2 noise levels: passed
FAILED = PredictionCheck("x * z", 0.08, 0.01, 4)  # 8 noise levels: a term is missing


def _law(X):
    return X[:, 0] * X[:, 1]


def _data(law=_law, sigma=0.01, n=12, seed=1, upper=False):
    """``n`` noisy observations in the lower half of [1, 10]^2 (the upper half with ``upper``)."""
    rng = np.random.default_rng(seed)
    U = rng.random((n, 2)) * 0.5 + (0.5 if upper else 0.0)
    X = 1.0 + 9.0 * U
    return U, X, law(X) * (1.0 + sigma * rng.normal(size=n))


def _pool(n=256, seed=0):
    U = np.random.default_rng(seed).random((n, 2))
    return U, 1.0 + 9.0 * U


def _step(hyps, options, prior=PASSED, k=4, method="variance", law=_law, **kw):
    Uo, Xo, yo = _data(law, **kw)
    Up, Xp = _pool()
    return plan_noisy_step(hyps, NAMES, Xo, yo, Uo, Xp, Up, np.ones(Xp.shape[0], dtype=bool), method=method, k=k,
                           seed=3, options=options, noisy=True, prior=prior)


def test_prediction_error_matches_numpy():
    rng = np.random.default_rng(0)
    h, y = rng.random(6) + 1, rng.random(6) + 1
    y[2] = np.nan  # not comparable: left out
    e, n = prediction_error(h, y, 1.5, -0.2)
    ok = np.isfinite(y)
    assert n == 5 and e == pytest.approx(np.sqrt(np.mean(((1.5 * h[ok] - 0.2 - y[ok]) / y[ok]) ** 2)), rel=1e-12)
    assert prediction_error(h[:1], np.array([np.nan]), 1.0, 0.0) is None
    with pytest.raises(ValueError, match="same length"):
        prediction_error(h, y[:3], 1.0, 0.0)


def _bent(X):
    """x z in the lower half of x, with a term that shows only beyond x = 5.5 (up to 9% at x = 10)."""
    return X[:, 0] * X[:, 1] * (1 + 0.02 * np.maximum(X[:, 0] - 5.5, 0.0))


@pytest.mark.parametrize("sigma", [0.001, 0.01])
def test_check_prediction_out_of_sample_tracks_the_noise(sigma):
    # the step is fitted on the lower half; the batch after it is measured in the upper half
    hyps = ["x * z", "x + z", "x**2"]
    seen = {}
    for law in (_law, _bent):
        passed = []
        for seed in range(10):
            step = _step(hyps, SETTLE, prior=None, law=law, sigma=sigma, seed=seed)
            assert step.best == "x * z"  # the lower half cannot tell the two truths apart
            _U, X_new, y_new = _data(law, sigma=sigma, n=4, seed=100 + seed, upper=True)
            chk = check_prediction(step, NAMES, X_new, y_new)
            _Uo, Xo, yo = _data(law, sigma=sigma, seed=seed)
            ho, h = Xo[:, 0] * Xo[:, 1], X_new[:, 0] * X_new[:, 1]
            a = np.sum(ho / yo) / np.sum((ho / yo) ** 2)  # NumPy: relative least-squares scale, no offset
            law_sigma = np.sqrt(np.sum(((a * ho - yo) / yo) ** 2) / (yo.size - 1))  # x * z has no fitted constant
            assert step.best_ab == (pytest.approx(a, rel=1e-12), 0.0) and step.best_noise == pytest.approx(law_sigma)
            assert chk.hypothesis == "x * z" and chk.n == 4 and chk.sigma == max(step.noise.sigma, step.best_noise)
            assert chk.error == pytest.approx(np.sqrt(np.mean(((a * h - y_new) / y_new) ** 2)), rel=1e-9)
            passed.append(chk.passed)
        seen[law.__name__] = sum(passed)
    assert seen["_law"] >= 8  # the right law predicts unseen measurements to the noise ...
    assert seen["_bent"] == 0  # ... and misses a term that shows only where it was not fitted
    assert check_prediction(step, NAMES, np.zeros((0, 2)), np.zeros(0)) is None


def test_a_passed_check_and_one_consistent_law_stop_the_scored_share():
    hyps = ["x * z", "x + z", "x**2"]
    step = _step(hyps, SETTLE)
    assert step.n_consistent == 1 and step.settled and step.n_dropped == 2
    assert step.indices.size == 2 == step.explored.size
    assert any("were not measured" in n for n in step.notes)
    rec = step.to_record()
    assert rec["settled"] is True and rec["n_dropped"] == 2 and rec["prior_check"]["error"] == PASSED.error
    for options, prior in ((PLAIN, PASSED), (SETTLE, FAILED), (SETTLE, None)):  # no rule, a failed check, no check yet
        full = _step(hyps, options, prior=prior)
        assert not full.settled and full.n_dropped == 0 and full.indices.size == 4


def test_laws_that_agree_below_the_noise_everywhere_stop_the_scored_share():
    step = _step(["x * z", "1.0005 * x * z"], SETTLE)  # 0.05% apart under 1% noise
    assert step.n_consistent == 2 and step.n_informative == 0
    assert step.settled and step.n_dropped == 2 and step.indices.size == 2


def test_disagreement_above_the_noise_keeps_the_batch_full():
    step = _step(["x * z", "x * z + 0.003 * x**3", "x * z + 0.002 * z**3"], SETTLE)
    assert step.n_consistent >= 2 and step.n_informative > 0
    assert not step.settled and step.n_dropped == 0 and step.indices.size == 4


def test_a_stopped_batch_is_never_empty():
    lone = _step(["x * z", "x + z", "x**2"], NoiseOptions(noise_aware=True, stop_when_settled=True))  # no exploration share
    assert lone.settled and lone.indices.size == 1 and lone.n_dropped == 3
    rnd = _step(["x * z", "x + z", "x**2"], SETTLE, method="random")
    assert rnd.settled and rnd.indices.size == 2 and rnd.n_dropped == 2


def test_fitted_constants_and_law_noise():
    from etc_fast.acquisition import fitted_constants, law_noise

    assert fitted_constants("6.67e-05*m1*m2/r**1.5") == 1  # 1.5 is simple, the scale is fitted
    assert fitted_constants("2*q1*q2/distance**3 + 0.25*x") == 0
    assert fitted_constants("acos(1.00029*n1*sin(t)**1.0014/n2) + 3.5e3") == 3
    # a tiny constant is fitted, not 0 (it was counted as simple once: 1.04e-14 is within 1e-9 of 0)
    assert fitted_constants("1/(exp(1.04e-14*omega**1.5/T) + 1)") == 1
    assert fitted_constants("0.5 - 2.3e-10*omega/T") == 1
    r = np.array([0.01, -0.02, 0.015, 0.0, -0.005])
    y = np.full(5, 2.0)
    assert law_noise(y * (1 + r), y, 1.0, 1) == pytest.approx(np.sqrt(np.sum(r**2) / 3))
    assert law_noise(y[:2], y[:2], 1.0, 1) is None  # no degree of freedom left


def test_passed_uses_kappa_fit():
    assert PredictionCheck("h", KAPPA_FIT * 0.01, 0.01, 3).passed
    assert not PredictionCheck("h", KAPPA_FIT * 0.01 * 1.01, 0.01, 3).passed


def test_knob_default_keeps_trial_ids_and_needs_noise_aware():
    for name in CONFIGURATIONS:
        d = TrialSpec(model="symbolic", config=CONFIGURATIONS[name], task="m0_gravity").to_dict()["config"]
        assert "stop_when_settled" not in d
    spec = TrialSpec(model="symbolic", config=get_configuration("variance_c"), task="m9_hooke_law")
    assert spec.trial_id == "aff0e04fcdc142d9"  # recorded before any noise knob existed
    base = get_configuration("variance_c", name="vn", noise_aware=True, explore_fraction=0.5)
    on = get_configuration("variance_c", name="vn", noise_aware=True, explore_fraction=0.5, stop_when_settled=True)
    assert "stop_when_settled" not in TrialSpec(model="symbolic", config=base, task="m0_gravity").to_dict()["config"]
    assert TrialSpec(model="symbolic", config=on, task="m0_gravity").to_dict()["config"]["stop_when_settled"] is True
    with pytest.raises(ValueError, match="stop_when_settled needs noise_aware"):
        get_configuration("variance_c", name="x", stop_when_settled=True)
    with pytest.raises(ValueError, match="stop_when_settled must be a boolean"):
        get_configuration("variance_c", name="x", noise_aware=True, stop_when_settled=1)


def test_agent_trusts_a_passed_prediction_only_for_its_own_structure():
    from types import SimpleNamespace

    from etc_fast.policies.symbolic import SymbolicPolicy

    pol = SymbolicPolicy()
    pol._proposed = {"2.01 * x * z": "C*x*z"}
    best = SimpleNamespace(structure="C*x*z")
    obs = lambda pred: SimpleNamespace(diagnostics=SimpleNamespace(prediction=pred))  # noqa: E731
    assert pol._predicted(obs(("2.01 * x * z", 0.011, 0.01, True)), best)
    assert not pol._predicted(obs(("2.01 * x * z", 0.08, 0.01, False)), best)  # the check failed
    assert not pol._predicted(obs(("3 * x + z", 0.011, 0.01, True)), best)  # not a law it proposed
    assert not pol._predicted(obs(("2.01 * x * z", 0.011, 0.01, True)), SimpleNamespace(structure="C*x**2"))
    assert not pol._predicted(obs(None), best) and not pol._predicted(SimpleNamespace(diagnostics=None), best)
