"""The information planner (``acquisition: mi``; docs/guide/acquisition.md) through the one planner loop
on every tier, with and without noise.

``mi`` scores the committee: like ``variance`` it repairs a committee of fewer than two parseable
hypotheses. On an equation the trial's picks are those of a direct :func:`plan_mi_step` call on the
same observations (the lab passes it what it holds).
"""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.acquisition import plan_mi_step
from etc_fast.core import TrialSpec, get_configuration
from etc_fast.policies.symbolic import SymbolicPolicy
from etc_fast.protocol import load_lab, run_trial
from tests.protocol.test_gp_planner import GOOD, TIERS, _committee, _script  # the GP tests' scripted trial


def _selections(rec) -> list[dict]:
    return [e for e in rec.events if "selection" in e]


@pytest.mark.parametrize("noise", [0.0, 0.01])
def test_an_equation_trials_picks_are_the_steps(play, noise):
    spec = TrialSpec(model="scripted", config=get_configuration("mi_n"), task="m0_gravity", noise=noise)
    rec, _ = play(spec, _script(_committee(*GOOD), _committee(*GOOD)))
    assert rec.status == "completed"
    lab, _ = load_lab(spec, _script())
    pool = lab.pool()
    available = np.ones(pool.U.shape[0], dtype=bool)
    lab.bootstrap(pool, available, None)
    sels = _selections(rec)
    assert len(sels) == 2
    for ev in sels:
        step = plan_mi_step(list(GOOD), lab.task.variable_names, lab.X, lab.y, lab.task.inputs_to_unit(lab.X), pool.X,
                            pool.U, available.copy(), k=4, noisy=noise > 0)
        assert ev["measured"]["indices"] == step.indices.tolist() and len(step.indices) == 4
        sel = ev["selection"]
        assert sel["method"] == "mi" and sel["error"] is None and len(sel["laws"]) == 2
        assert sel["noise"]["basis"] == ("residuals" if noise else "noiseless")
        idx = np.asarray(ev["measured"]["indices"], dtype=np.int64)
        available[idx] = False
        lab.run(lab.batch(pool, idx, np.zeros(0, dtype=np.int64)), "planner")


@pytest.mark.parametrize("tier", TIERS)
def test_mi_repairs_a_committee_it_cannot_score(play, tier):
    spec = TrialSpec(model="scripted", config=get_configuration("mi_c"), task="m0_gravity", system=tier)
    rec, _ = play(spec, _script(_committee("mass1 * (", GOOD[0])))
    turn = next(e for e in rec.events if e.get("phase") == "explore" and "action" in e)
    assert turn["feedback_kind"] == "repair" and "selection" not in turn


@pytest.mark.parametrize(("preset", "task", "tier", "noise"), [
    ("mi_n", "m0_gravity", "vanilla_equation", 0.0),
    ("mi_c", "m0_gravity", "vanilla_equation", 0.01),
    ("mi_n", "m3_fourier_law", "simple_system", 0.0),
    ("mi_c", "m3_fourier_law", "simple_system", 0.01),
    ("mi_c", "m3_fourier_law", "complex_system", 0.0),
    ("mi_n", "m3_fourier_law", "complex_system", 0.01),
])
def test_presets_run_end_to_end_with_the_offline_agent(preset, task, tier, noise):
    spec = TrialSpec(model="symbolic", config=get_configuration(preset), task=task, system=tier, noise=noise)
    rec = run_trial(spec, SymbolicPolicy(seed=0))
    assert rec.status == "completed", rec.error
    sels = _selections(rec)
    assert sels and all(s["selection"]["method"] == "mi" for s in sels)
    assert all(len(s["measured"]["indices"]) == s["selection"]["k"] for s in sels)
    assert any(s["selection"].get("chosen") for s in sels) or any(s["selection"]["explored"] for s in sels)
    assert rec.evaluation["valid"]
    assert rec.summary()["acquisition"] == "mi"
