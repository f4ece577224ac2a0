"""The information planner's step (``acquisition: mi``; docs/guide/acquisition.md): the laws'
predictive distributions, the Must-show case of issue 58, determinism and its fallbacks.

The Must-show case: two laws that the observations cannot tell apart (both fit them to the 1%
noise) differ in two narrow bands of the pool. At large outputs (near t = 0.8) law B adds a bump of
6 on outputs near 800, under one noise sd (about 8); at small outputs (near t = 0.05) it adds 3 on
outputs near 50, six noise sds. The paper's variance rule standardizes each law over the pool, so a
difference counts in units of the pool's spread (about 290) and the bump at 0.8 scores highest; the
information rule counts it in units of each reading's noise and measures where the laws separate.
"""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.acquisition import MI_ABS_FLOOR, MI_NOISE_FLOOR, law_predictive, plan_mi_step
from kernels import calibrate, mutual_information, variance_scores

LAW_A = "1000 * t"
LAW_B = "1000 * t + 6 * exp(-((t - 0.8) / 0.01) ** 2) + 3 * exp(-((t - 0.05) / 0.01) ** 2)"
BAND_HIGH, BAND_LOW = 0.8, 0.05


def _pool():
    t = np.linspace(0.01, 1.0, 991)
    return t[:, None], ((t - 0.01) / 0.99)[:, None]


def _observations(noise: float, seed: int = 0):
    t = np.array([0.2, 0.3, 0.4, 0.5, 0.6, 0.65, 0.7, 0.9, 0.95, 1.0, 0.25, 0.45])  # away from both bands
    z = np.random.default_rng(seed).normal(size=t.size)
    y = 1000.0 * t * (1.0 + noise * z)
    return t[:, None], y, ((t - 0.01) / 0.99)[:, None]


def _bump_law(t):
    return 1000 * t + 6 * np.exp(-(((t - 0.8) / 0.01) ** 2)) + 3 * np.exp(-(((t - 0.05) / 0.01) ** 2))


def test_mi_measures_where_the_laws_separate_not_where_standardized_predictions_differ_most():
    X, y, U = _observations(0.01)
    pool_X, pool_U = _pool()
    t = pool_X[:, 0]
    step = plan_mi_step([LAW_A, LAW_B], ["t"], X, y, U, pool_X, pool_U, np.ones(t.size, dtype=bool), k=1, noisy=True)
    assert step.error is None and step.indices.size == 1
    laws = step.record["laws"]
    assert [w["position"] for w in laws] == [0, 1] or [w["position"] for w in laws] == [1, 0]
    assert all(0.3 < w["weight"] < 0.7 for w in laws)  # the observations cannot tell them apart
    assert 0.004 < step.record["noise"]["sigma"] < 0.03

    # the premise: the variance rule (eq. S2) on the same calibrated committee scores the sub-noise bump highest
    H_obs = np.stack([1000 * X[:, 0], _bump_law(X[:, 0])])
    a, b, _, ok, _ = calibrate(H_obs, y)
    assert ok.all()
    P = a[:, None] * np.stack([1000 * t, _bump_law(t)]) + b[:, None]
    top = t[int(np.nanargmax(variance_scores(P)))]
    assert abs(top - BAND_HIGH) < 0.01
    sigma = step.record["noise"]["sigma"]
    assert abs(P[1] - P[0])[int(np.nanargmax(variance_scores(P)))] < 1.0 * sigma * 800  # below one noise sd

    # the information rule measures in the low band, where the laws differ by several noise sds
    pick = t[int(step.indices[0])]
    assert abs(pick - BAND_LOW) < 0.01
    j = int(step.indices[0])
    assert abs(P[1, j] - P[0, j]) > 3.0 * sigma * abs(P[0, j])
    first = step.record["chosen"][0]["information"]
    assert first > 0.25  # of at most log 2 = 0.69 nats
    var, log_w, _ = law_predictive(P[:, :, None], np.full(2, sigma), 12, 2, 12, sigma, np.array([800.0]))
    mi = mutual_information(P[:, :, None], var, log_w)
    assert mi[int(np.nanargmax(variance_scores(P)))] < 0.1 * mi[j]  # over ten times less information


def test_the_same_inputs_give_the_same_batch():
    X, y, U = _observations(0.01, seed=3)
    pool_X, pool_U = _pool()
    av = np.ones(pool_X.shape[0], dtype=bool)
    av[::7] = False
    runs = [plan_mi_step([LAW_A, LAW_B, "1000 * t ** 1.02"], ["t"], X, y, U, pool_X, pool_U, av, k=4, noisy=True)
            for _ in range(2)]
    assert runs[0].indices.tolist() == runs[1].indices.tolist()
    assert runs[0].record == runs[1].record
    idx = runs[0].indices
    assert idx.size == 4 and np.unique(idx).size == 4 and av[idx].all()
    info = [c["information"] for c in runs[0].record["chosen"]]
    assert info == sorted(info)


def test_law_predictive_states_its_formula():
    pred = np.array([[[100.0, 0.0]], [[110.0, 0.0]]])
    var, log_w, s = law_predictive(pred, np.array([0.005, 0.04]), 10, 2, 10, 0.01, np.array([100.0, 100.0]))
    assert s.tolist() == [0.01, 0.04]  # a residual below the noise counts as the noise
    tau2 = s**2 * (1 + 2 / 10)
    np.testing.assert_allclose(var[:, 0, 0], tau2 * pred[:, 0, 0] ** 2, rtol=1e-14)
    np.testing.assert_allclose(var[:, 0, 1], tau2 * (MI_ABS_FLOOR * 100.0) ** 2, rtol=1e-14)  # a reading near 0
    np.testing.assert_allclose(log_w, -10 * np.log(s), rtol=1e-14)
    _, _, s0 = law_predictive(pred, np.array([0.0, np.nan]), 10, 2, 10, 0.0, np.array([1.0, 1.0]))
    assert s0.tolist() == [MI_NOISE_FLOOR, MI_NOISE_FLOOR]  # noiseless: the floor; no residual: the noise


def test_without_two_usable_laws_the_batch_explores():
    X, y, U = _observations(0.0)
    pool_X, pool_U = _pool()
    av = np.ones(pool_X.shape[0], dtype=bool)
    one = plan_mi_step([LAW_A, "t * ("], ["t"], X, y, U, pool_X, pool_U, av, k=3, noisy=False)
    assert one.indices.size == 3 and one.record["explored"] == one.indices.tolist()
    assert "fewer than 2 usable hypotheses" in one.record["notes"][0]
    same = plan_mi_step([LAW_A, "2 * t * 1000 / 2"], ["t"], X, y, U, pool_X, pool_U, av, k=3, noisy=False)
    assert same.indices.size == 3 and same.record["chosen"] == [] and len(same.record["explored"]) == 3
    assert "no further pool point adds information" in same.record["notes"][0]


def test_noiseless_lab_uses_the_floor():
    X, y, U = _observations(0.0)
    pool_X, pool_U = _pool()
    step = plan_mi_step([LAW_A, "1000 * t ** 1.1"], ["t"], X, y, U, pool_X, pool_U,
                        np.ones(pool_X.shape[0], dtype=bool), k=2, noisy=False)
    assert step.record["noise"]["basis"] == "noiseless" and step.record["noise_floor"] == MI_NOISE_FLOOR
    exact = [w for w in step.record["laws"] if w["position"] == 0][0]
    assert exact["scale"] == MI_NOISE_FLOOR and exact["weight"] == pytest.approx(1.0)
    assert step.indices.size == 2
