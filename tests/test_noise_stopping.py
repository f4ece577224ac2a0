"""The noise-aware planner's stopping rule (docs/noise.md, "Stopping rule") on synthetic committees."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.acquisition import KAPPA_FIT, NoiseOptions, holdout_error, plan_noisy_step
from etc_fast.protocol import get_configuration
from etc_fast.protocol._types import CONFIGURATIONS, TrialSpec

NAMES = ("x", "z")
SETTLE = NoiseOptions(noise_aware=True, explore_fraction=0.5, stop_when_settled=True)
PLAIN = NoiseOptions(noise_aware=True, explore_fraction=0.5)


def _data(law, sigma=0.01, n_old=12, n_new=4, seed=1, new_upper=True):
    """``n_old`` observations in the lower half of [1, 10]^2, then ``n_new`` (the last batch) in the upper half."""
    rng = np.random.default_rng(seed)
    U = rng.random((n_old + n_new, 2)) * 0.5
    if new_upper:
        U[n_old:] += 0.5
    X = 1.0 + 9.0 * U
    y = law(X) * (1.0 + sigma * rng.normal(size=X.shape[0]))
    return U, X, y


def _pool(n=256, seed=0):
    U = np.random.default_rng(seed).random((n, 2))
    return U, 1.0 + 9.0 * U


def _step(hyps, options, law=lambda X: X[:, 0] * X[:, 1], recent=4, k=4, method="variance", **kw):
    Uo, Xo, yo = _data(law, **kw)
    Up, Xp = _pool()
    return plan_noisy_step(hyps, NAMES, Xo, yo, Uo, Xp, Up, np.ones(Xp.shape[0], dtype=bool), method=method, k=k,
                           seed=3, options=options, noisy=True, recent=recent)


def _np_holdout(h, y, recent):
    """NumPy twin of holdout_error: least-squares a h + b on the older rows; relative RMS on the
    held-out rows, and on the fitted rows scaled by sqrt(n / (n - 2))."""
    n_fit = y.size - recent
    a, b = np.polyfit(h[:n_fit], y[:n_fit], 1)
    r = (a * h + b - y) / np.abs(y)
    return np.sqrt(np.mean(r[n_fit:] ** 2)), np.sqrt(np.mean(r[:n_fit] ** 2) * n_fit / (n_fit - 2))


@pytest.mark.parametrize("sigma", [0.001, 0.01])
def test_holdout_error_matches_numpy_and_tracks_the_noise(sigma):
    right, wrong = [], []
    for seed in range(10):
        _U, X, y = _data(lambda X: X[:, 0] * X[:, 1], sigma=sigma, seed=seed)
        for h, out in ((X[:, 0] * X[:, 1], right), (X[:, 0] + X[:, 1], wrong)):
            e = holdout_error(h, y, 4)
            assert e == pytest.approx(_np_holdout(h, y, 4), rel=1e-6, abs=1e-12)
            out.append(e[0])
    assert np.median(right) == pytest.approx(sigma, rel=0.5)  # the right law predicts the new batch to the noise
    assert np.median(wrong) > 10 * sigma  # x + z fitted on the lower half misses the upper half
    h = np.arange(1.0, 9.0)
    assert holdout_error(h, h, 0) is None and holdout_error(h[:5], h[:5], 3) is None  # nothing held out / too few to fit
    with pytest.raises(ValueError, match="same length"):
        holdout_error(h, h[:4], 2)


def test_one_consistent_law_that_predicted_the_batch_stops_the_scored_share():
    hyps = ["x * z", "x + z", "x**2"]
    step = _step(hyps, SETTLE)
    assert step.n_consistent == 1 and step.holdout_error <= KAPPA_FIT * step.noise.sigma
    assert step.settled and step.n_dropped == 2 and step.indices.size == 2 == step.explored.size
    assert any("were not measured" in n for n in step.notes)
    rec = step.to_record()
    assert rec["settled"] is True and rec["n_dropped"] == 2
    plain = _step(hyps, PLAIN)  # without the rule the scored slots explore: a full batch
    assert not plain.settled and plain.indices.size == 4 and plain.holdout_error is None
    assert "settled" not in plain.to_record()


def test_laws_that_agree_below_the_noise_everywhere_stop_the_scored_share():
    step = _step(["x * z", "1.0005 * x * z"], SETTLE)  # 0.05% apart under 1% noise
    assert step.n_consistent == 2 and step.n_informative == 0
    assert step.settled and step.n_dropped == 2 and step.indices.size == 2


def test_disagreement_above_the_noise_keeps_the_batch_full():
    # both fit to the noise and predicted the batch, but differ by far more than the noise elsewhere
    step = _step(["x * z", "x * z + 0.003 * x**3", "x * z + 0.002 * z**3"], SETTLE, new_upper=False)
    assert step.n_consistent >= 2 and step.n_informative > 0 and step.holdout_error <= KAPPA_FIT * step.noise.sigma
    assert not step.settled and step.n_dropped == 0 and step.indices.size == 4


def test_a_law_that_missed_the_batch_does_not_stop():
    # truth bends in the upper half; x * z fits the lower half to the noise but misses the new batch
    law = lambda X: X[:, 0] * X[:, 1] * (1 + 0.002 * X[:, 0] ** 2)  # noqa: E731
    step = _step(["x * z", "x + z", "x**2"], SETTLE, law=law, sigma=0.001)
    assert step.holdout_error > 10 * KAPPA_FIT * 0.001  # it missed the new batch by far more than the noise ...
    assert step.noise.sigma > step.holdout_error / KAPPA_FIT  # ... which the residual estimate (inflated by it) hides
    assert not step.settled and step.indices.size == 4


def test_without_a_held_out_batch_or_exploration_the_batch_is_not_empty():
    first = _step(["x * z", "x + z", "x**2"], SETTLE, recent=0)  # right after the bootstrap: nothing held out
    assert first.holdout_error is None and not first.settled and first.indices.size == 4
    lone = _step(["x * z", "x + z", "x**2"], NoiseOptions(noise_aware=True, stop_when_settled=True))
    assert lone.settled and lone.indices.size == 1 and lone.n_dropped == 3  # one slot always measures
    rnd = _step(["x * z", "x + z", "x**2"], SETTLE, method="random")
    assert rnd.settled and rnd.indices.size == 2 and rnd.n_dropped == 2


def test_knob_default_keeps_trial_ids_and_needs_noise_aware():
    for name in CONFIGURATIONS:
        d = TrialSpec(model="symbolic", config=CONFIGURATIONS[name], task="m0_gravity").to_dict()["config"]
        assert "stop_when_settled" not in d
    spec = TrialSpec(model="symbolic", config=get_configuration("variance_c"), task="m9_hooke_law")
    assert spec.trial_id == "aff0e04fcdc142d9"  # recorded before any noise knob existed
    base = get_configuration("variance_c", name="vn", noise_aware=True, explore_fraction=0.5)
    on = get_configuration("variance_c", name="vn", noise_aware=True, explore_fraction=0.5, stop_when_settled=True)
    assert TrialSpec(model="symbolic", config=base, task="m0_gravity").to_dict()["config"].get("stop_when_settled") is None
    assert TrialSpec(model="symbolic", config=on, task="m0_gravity").to_dict()["config"]["stop_when_settled"] is True
    with pytest.raises(ValueError, match="stop_when_settled needs noise_aware"):
        get_configuration("variance_c", name="x", stop_when_settled=True)
    with pytest.raises(ValueError, match="stop_when_settled must be a boolean"):
        get_configuration("variance_c", name="x", noise_aware=True, stop_when_settled=1)
