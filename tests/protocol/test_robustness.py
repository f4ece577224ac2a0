"""Misbehaving policies, determinism and the record's JSON round trip."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.policies.scripted import ScriptedPolicy
from etc_fast.protocol import Action, ProtocolConfig, TrialRecord, TrialSpec, get_configuration, run_trial
from tests.protocol._helpers import analysis, committee, draft, final, make_spec

GOOD = ("C*mass1*mass2/distance**2", "C*mass1*mass2/distance**1.5", "C*(mass1+mass2)/distance")


def raiser(obs):
    raise RuntimeError("model crashed")


@pytest.mark.parametrize("config", ["variance_c", "baseline_n"])
def test_policy_raising_every_time(play, config):
    rec, _ = play(make_spec(config), raiser)
    errs = [e["policy_error"] for e in rec.events if "policy_error" in e]
    assert errs and all("RuntimeError: model crashed" in e for e in errs)
    if config.startswith("baseline"):  # NewtonBench's stand-in law: it evaluates to NaN everywhere
        assert rec.submission_origin == "forced_nan" and "float('nan')" in rec.final_source
        assert rec.evaluation["n_finite_pred"] == 0 and rec.summary()["credited"] is False
    else:
        assert rec.submission_origin == "none"
        assert rec.evaluation["valid"] is False
        assert rec.summary()["valid"] is False


@pytest.mark.parametrize(
    "garbage",
    [None, "final answer", 42, Action(kind="weird"), Action(kind="committee", hypotheses=(1, None)),
     Action(kind="committee", hypotheses="mass1"), Action(kind="final", source=None), Action(kind="draft", source=""),
     Action(kind="experiment", points=({"mass1": float("nan")},)), Action(kind="experiment", points=("x",)),
     Action(kind="analysis", code=None), Action(kind="committee", hypotheses=("mass1",), usage="lots")],
)
@pytest.mark.parametrize("config", ["pairwise_n", "random_c", "baseline_c"])
def test_garbage_actions_never_crash(play, garbage, config):
    rec, _ = play(make_spec(config, exploration_turns=2, baseline_rounds=2), lambda obs: garbage)
    assert rec.status in ("max_turns_reached", "completed", "budget_exhausted")
    assert rec.to_json()


def test_all_nan_hypotheses(play):
    nan_committee = committee("sqrt(-mass1 - mass2)", "log(-distance)", "asin(mass1 + 2)")
    rec, pol = play(make_spec("variance_n", exploration_turns=2), [nan_committee, nan_committee, final()])
    assert rec.submission_origin == "synthesis"
    assert rec.measurements == 4  # nothing can be scored: repair turns, no selection
    assert pol.observations[1].feedback_kind == "repair"
    assert "no measurement could be selected" in pol.observations[1].feedback
    rec2, _ = play(make_spec("random_n", exploration_turns=1), [nan_committee, final()])
    assert rec2.measurements == 8  # random selection needs no finite prediction


def test_begin_raising_is_recorded(play):
    class BadBegin(ScriptedPolicy):
        def begin(self, phase, task, config, seed):
            raise ValueError("no context")

    rec, _ = play(make_spec("variance_n"), BadBegin([draft(), final()]))
    assert any("no context" in str(e) for e in rec.events)
    assert rec.submission_origin == "synthesis"


def test_unknown_task_gives_a_failed_record():
    spec = make_spec("variance_n", task="m99_nothing")
    rec = run_trial(spec, ScriptedPolicy([]))
    assert rec.status == "failed" and "m99_nothing" in rec.error
    assert rec.summary()["valid"] is False
    assert TrialRecord.from_json(rec.to_json()).to_dict() == rec.to_dict()


def test_judge_raising_is_guarded(play):
    class Broken:
        name = "broken"

        def judge(self, source, task):
            raise RuntimeError("judge down")

    rec, _ = play(make_spec("variance_n"), [draft(), final()], judge=Broken())
    assert rec.judge["credited"] is False and "judge down" in rec.judge["reason"]


def test_judge_not_called_when_the_signature_fails(play):
    class Counting:
        name = "counting"
        calls = 0

        def judge(self, source, task):
            Counting.calls += 1
            from etc_fast.evaluate._judge import Verdict

            return Verdict("counting", True, "ok")

    rec, _ = play(make_spec("baseline_n"), [final("return 1")], judge=Counting())
    assert Counting.calls == 0 and rec.judge["credited"] is False
    rec, _ = play(make_spec("baseline_n"), [final()], judge=Counting())
    assert Counting.calls == 1 and rec.judge == {"judge": "counting", "credited": True, "reason": "ok", "status": "ok"}


def _script(interpreter: bool):
    if interpreter:
        return [committee(*GOOD), analysis("print(float(y.mean()))"), committee(*GOOD), draft(), final()]
    return [committee(*GOOD), committee(*GOOD), draft(), final()]


@pytest.mark.parametrize("config", ["variance_c", "pairwise_n", "random_n"])
def test_deterministic_and_json_round_trip(play, config):
    spec = make_spec(config, noise=0.01)
    interp = spec.config.interpreter
    a, _ = play(spec, _script(interp))
    b, _ = play(spec, _script(interp))
    da, db = a.to_dict(), b.to_dict()
    assert da.pop("wall_s") >= 0 and db.pop("wall_s") >= 0
    assert da == db
    back = TrialRecord.from_json(a.to_json())
    assert back.to_dict() == a.to_dict()
    assert back.summary() == a.summary()
    assert a.versions["numpy"] == np.__version__ and "etc_fast" in a.versions


def test_baseline_json_round_trip(play):
    rec, _ = play(make_spec("baseline_c"), [Action(kind="experiment", points=({"mass1": 1, "mass2": 2, "distance": 0.0},)), final()])
    assert TrialRecord.from_json(rec.to_json()).to_dict() == rec.to_dict()


def test_record_keeps_committees_and_selections(play):
    rec, _ = play(make_spec("pairwise_n"), [committee(*GOOD, "mass1.x"), draft(), final()])
    (ev,) = [e for e in rec.events if e.get("action", {}).get("kind") == "committee"]
    assert ev["action"]["raw"] == "committee" and len(ev["action"]["hypotheses"]) == 4
    assert [p["ok"] for p in ev["committee"]["parsed"]] == [True, True, True, False]
    assert isinstance(ev["selection"], dict) and ev["measured"]["indices"]


def test_committee_beyond_five_is_truncated(play):
    hyps = [f"mass1**{k}*mass2/distance**2" for k in range(1, 8)]
    rec, pol = play(make_spec("variance_n"), [committee(*hyps), draft(), final()])
    (ev,) = [e for e in rec.events if e.get("action", {}).get("kind") == "committee"]
    assert len(ev["committee"]["parsed"]) == 5 and len(ev["committee"]["dropped"]) == 2
    assert "2 dropped" in pol.observations[1].feedback


def test_config_validation_messages():
    with pytest.raises(ValueError, match="batch_cap must be an integer from 1 to 4,096, got 0"):
        ProtocolConfig(name="x", family="planner", acquisition="variance", batch_cap=0)
    with pytest.raises(ValueError, match="acquisition must be one of variance, pairwise, random, gp_ucb, gp_var"):
        ProtocolConfig(name="x", family="planner")
    with pytest.raises(ValueError, match="a baseline has acquisition 'none'"):
        ProtocolConfig(name="x", family="baseline", acquisition="random")
    with pytest.raises(ValueError, match="measurement_budget must be a positive integer"):
        get_configuration("baseline_n", name="b", measurement_budget=0)
    with pytest.raises(ValueError, match="synthesis must be 'fresh' or 'none'"):
        get_configuration("random_n", name="r", synthesis="later")
    with pytest.raises(KeyError, match="unknown configuration"):
        get_configuration("greedy_n")
    cfg = get_configuration("variance_n", name="v2", batch_cap=2)
    assert cfg.name == "v2" and cfg.batch_cap == 2
    assert get_configuration("variance_c").n_synthesis_turns == 3
    assert get_configuration("variance_n").n_synthesis_turns == 1


def test_spec_round_trip():
    spec = make_spec("variance_n", batch_cap=3, noise=0.1, rollout=1)
    assert TrialSpec.from_dict(spec.to_dict()) == spec
    assert TrialSpec.from_dict(spec.to_dict()).trial_id == spec.trial_id


@pytest.mark.parametrize("config", sorted(["baseline_n", "baseline_c", "variance_n", "pairwise_n", "random_n", "variance_c", "pairwise_c", "random_c"]))
def test_every_configuration_with_the_symbolic_policy(play, config):
    from etc_fast.policies import create_policy

    rec, _ = play(make_spec(config, task="m9_hooke_law"), create_policy("symbolic"))
    assert rec.measurements >= 1 and rec.submission_origin != "none"
    assert TrialRecord.from_json(rec.to_json()).to_dict() == rec.to_dict()
    assert set(rec.summary()) == set(__import__("etc_fast.protocol", fromlist=["SUMMARY_COLUMNS"]).SUMMARY_COLUMNS)


@pytest.mark.parametrize(
    "kwargs, match",
    [({"noise": -0.1}, "noise must be a finite number"), ({"noise": float("nan")}, "noise"),
     ({"rollout": -1}, "rollout must be an integer >= 0"), ({"noise_seed": 1.5}, "noise_seed"), ({"task": ""}, "task")],
)
def test_spec_validation_messages(kwargs, match):
    base = {"model": "scripted", "config": get_configuration("variance_n"), "task": "m0_gravity"}
    with pytest.raises(ValueError, match=match):
        TrialSpec(**{**base, **kwargs})
