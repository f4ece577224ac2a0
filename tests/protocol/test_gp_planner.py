"""The GP-surrogate planners (``gp_ucb``, ``gp_var``; docs/guide/acquisition.md) on every tier.

A GP planner plays the planner loop as a random planner does (it selects on every committee turn,
whatever the committee holds), but its picks come from the surrogate: the tests replay each trial's
observations in a fresh lab and call :func:`etc_fast.acquisition.plan_gp_step` directly, and the
trial's picks must be those; they also differ from a random planner's.
"""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.acquisition import KAPPA_UCB, equation_target, plan_gp_step, series_target
from etc_fast.core import Action, TrialSpec, get_configuration
from etc_fast.policies.scripted import ScriptedPolicy
from etc_fast.policies.symbolic import SymbolicPolicy
from etc_fast.protocol import load_lab, run_trial

TIERS = ("vanilla_equation", "simple_system", "complex_system")
GOOD = ("mass1 * mass2 / distance ** 2", "mass1 * mass2 / distance")
LAW = "def discovered_law(mass1, mass2, distance):\n    return 6.674e-5 * mass1 * mass2 / distance ** 2\n"


def _script(*explore: Action) -> ScriptedPolicy:
    def act(obs):
        if obs.phase == "explore" and obs.turn < len(explore):
            return explore[obs.turn]
        if obs.phase == "explore":
            return Action(kind="draft", source=LAW, raw="draft")
        return Action(kind="final", source=LAW, raw="final")

    return ScriptedPolicy(act)


def _committee(*hyps: str) -> Action:
    return Action(kind="committee", hypotheses=hyps, raw="committee")


def _spec(preset: str, tier: str, task: str = "m0_gravity", **kw) -> TrialSpec:
    return TrialSpec(model="scripted", config=get_configuration(preset), task=task, system=tier, **kw)


def _selections(rec) -> list[dict]:
    return [e for e in rec.events if "selection" in e]


def _replay(spec: TrialSpec, rec) -> list[tuple[dict, object]]:
    """Each selecting event of ``rec`` with the GP step a direct call makes on the same observations."""
    lab, _ = load_lab(spec, _script())
    pool = lab.pool()
    available = np.ones(pool.U.shape[0], dtype=bool)
    lab.bootstrap(pool, available, None)
    cfg = spec.config
    out = []
    for ev in _selections(rec):
        if spec.system == "vanilla_equation":
            target, transform = equation_target(lab.y)
            U_obs = lab.task.inputs_to_unit(lab.X)
        else:
            target, transform = series_target(lab.series)
            U_obs = lab.units
        step = plan_gp_step(U_obs, target, pool.U, available.copy(), method=cfg.acquisition, k=cfg.batch_cap,
                            noisy=spec.noise > 0, transform=transform)
        out.append((ev, step))
        idx = np.asarray(ev["measured"]["indices"], dtype=np.int64)
        available[idx] = False
        lab.run(lab.batch(pool, idx, np.zeros(0, dtype=np.int64)), "planner")
    return out


@pytest.mark.parametrize("tier", TIERS)
@pytest.mark.parametrize("preset", ["gp_ucb_n", "gp_var_n"])
def test_the_picks_are_the_surrogates(play, tier, preset):
    spec = _spec(preset, tier)
    rec, _ = play(spec, _script(_committee(*GOOD), _committee(*GOOD)))
    assert rec.status == "completed"
    replayed = _replay(spec, rec)
    assert len(replayed) == 2
    for ev, step in replayed:
        assert ev["measured"]["indices"] == step.indices.tolist() and len(step.indices) == 4
        sel = ev["selection"]
        assert sel["method"] == spec.config.acquisition and sel["error"] is None
        gp = sel["gp"]
        assert gp["kernel"] == "matern52" and gp["nuggets"] == "jitter"
        assert gp["target"] == ("log_abs" if tier == "vanilla_equation" else "log_rms")
        assert gp["lengths"] == step.record["gp"]["lengths"] and gp["n_evaluations"] == step.record["gp"]["n_evaluations"]
        assert gp["signal_var"] == pytest.approx(step.record["gp"]["signal_var"], rel=1e-12)
        assert [c["index"] for c in sel["chosen"]] == ev["measured"]["indices"]
        assert ("kappa" in sel) == (preset == "gp_ucb_n")
        if preset == "gp_ucb_n":
            assert sel["kappa"] == KAPPA_UCB
            c = sel["chosen"][0]
            assert c["score"] == pytest.approx(c["mean"] + KAPPA_UCB * c["sd"])
    # the second fit saw the first batch
    assert replayed[1][0]["selection"]["gp"]["n_obs"] == replayed[0][0]["selection"]["gp"]["n_obs"] + 4
    random_rec, _ = play(_spec("random_n", tier), _script(_committee(*GOOD), _committee(*GOOD)))
    assert _selections(random_rec)[0]["measured"]["indices"] != replayed[0][0]["measured"]["indices"]


@pytest.mark.parametrize("tier", TIERS)
def test_a_noisy_lab_searches_the_nugget(play, tier):
    spec = _spec("gp_ucb_c", tier, noise=0.01)
    rec, _ = play(spec, _script(_committee(*GOOD)))
    (ev, step), = _replay(spec, rec)
    assert ev["measured"]["indices"] == step.indices.tolist()
    gp = ev["selection"]["gp"]
    d = len(gp["lengths"])
    assert gp["nuggets"] == "grid" and gp["n_evaluations"] == 12 * 6 + 2 * d * 11 + 2 * 5


@pytest.mark.parametrize("tier", TIERS)
def test_a_gp_planner_selects_whatever_the_committee_holds(play, tier):
    """As a random planner: no repair turn for a committee of one parseable hypothesis or an
    unusable reply; the selection goes on with the lab's fallback hypotheses (unused by the GP)."""
    invalid = Action(kind="invalid", error="no action block found", raw="?")
    rec, _ = play(_spec("gp_var_c", tier), _script(_committee("mass1 * (", GOOD[0]), invalid))
    turns = [e for e in rec.events if e.get("phase") == "explore" and "action" in e]
    assert [e["feedback_kind"] for e in turns[:2]] == ["selection", "selection"]
    assert turns[1]["unusable_reply"].startswith("the reply could not be used")
    assert all(len(e["measured"]["indices"]) == 4 and "gp" in e["selection"] for e in turns[:2])
    scored, _ = play(_spec("variance_c", tier), _script(_committee("mass1 * (", GOOD[0]), invalid))
    turns = [e for e in scored.events if e.get("phase") == "explore" and "action" in e]
    assert [e.get("feedback_kind") for e in turns[:2]] == ["repair", "repair"], [e.get("outcome") for e in turns]


@pytest.mark.parametrize(("preset", "task", "tier"), [
    ("gp_ucb_n", "m0_gravity", "vanilla_equation"),
    ("gp_var_c", "m0_gravity", "vanilla_equation"),
    ("gp_var_n", "m3_fourier_law", "simple_system"),
    ("gp_ucb_c", "m3_fourier_law", "complex_system"),
])
def test_presets_run_end_to_end_with_the_offline_agent(preset, task, tier):
    spec = TrialSpec(model="symbolic", config=get_configuration(preset), task=task, system=tier)
    rec = run_trial(spec, SymbolicPolicy(seed=0))
    assert rec.status == "completed", rec.error
    sels = _selections(rec)
    assert sels and all(s["selection"]["method"] == spec.config.acquisition and "gp" in s["selection"] for s in sels)
    assert rec.evaluation["valid"] and rec.judge is not None
    assert rec.summary()["acquisition"] == spec.config.acquisition
