"""Whole trials through ``run_trial`` with LLMPolicy talking to the scripted server.

Each script mixes good replies with the failures a hosted model produces (rate limits, 5xx,
dropped connections, slow replies, malformed or empty content); every trial must still end with a
complete record, and a second run of the same trial from the cache must make no request at all.
"""

from __future__ import annotations

import pytest

from etc_fast.llm import LLMClient
from etc_fast.llm.judge import LLMJudge
from etc_fast.policies.llm import LLMPolicy
from etc_fast.protocol import TrialSpec, get_configuration, run_trial
from tests.llm._server import dropped, error, ok, slow
from tests.llm.conftest import fast_settings

LAW = "def discovered_law(mass1, mass2, distance):\n    C = 6.674e-5\n    return C * mass1 * mass2 / distance ** 1.5"
WRONG = "def discovered_law(mass1, mass2, distance):\n    C = 1e-4\n    return C * mass1 * mass2 / distance ** 2"


def _policy(srv, **overrides) -> LLMPolicy:
    kw = dict(max_retries=2, timeout_s=0.3)
    kw.update(overrides)
    return LLMPolicy(client=LLMClient(fast_settings(srv.base_url, **kw), sleep=lambda s: None, environ={}))


def _judge(srv, **overrides) -> LLMJudge:
    client = LLMClient(fast_settings(srv.base_url, model="gpt41", temperature=0.6, **overrides), sleep=lambda s: None, environ={})
    return LLMJudge(client=client)


def _comparable(record) -> dict:
    """The record without wall time and the per-call ``cached`` flags (which say where replies came from)."""
    d = record.to_dict()
    d.pop("wall_s", None)
    for ev in d["events"]:
        ev.get("action", {}).get("usage", {}).pop("cached", None)
    return d


PLANNER_SCRIPT = [
    # exploration
    ok('{"hypotheses": ["C*mass1*mass2/distance**2", "C*mass1*mass2/distance**1.5", "C*mass1/distance"]}', prompt_tokens=900, completion_tokens=40),
    error(429, retry_after="0"),
    ok("Let me look at the data.\n<python>\nprint(len(y), round(float(np.log(y[1] / y[0]) / np.log(mass1[1] / mass1[0])), 3))\n</python>", prompt_tokens=1000, completion_tokens=30),
    ok('Updated committee:\n```json\n{"hypotheses": ["C*mass1*mass2/distance**1.5", "C*(mass1+mass2)/distance**1.5"]}\n```', prompt_tokens=1100, completion_tokens=35),
    ok('{"hypotheses": ["C*mass1*mass2/distance**1.5",', prompt_tokens=1200, completion_tokens=20),
    dropped(),
    ok("The exponents are clear.\n<draft_law>\n" + WRONG + "\n</draft_law>", prompt_tokens=1300, completion_tokens=50),
    # synthesis (interpreter: up to 3 turns)
    ok("", prompt_tokens=1400, completion_tokens=0),
    ok("The draft disagrees with the data; corrected:\n<final_law>\n" + LAW + "\n</final_law>", prompt_tokens=1500, completion_tokens=60),
    # judge
    ok("Reasoning: same structure, constant absorbed.\nAnswer: YES", prompt_tokens=300, completion_tokens=20),
]


def test_planner_trial_end_to_end_and_cached_rerun(serve, tmp_path):
    srv = serve(PLANNER_SCRIPT)
    cache = str(tmp_path / "llm.db")
    spec = TrialSpec(model="test-model", config=get_configuration("variance_c"), task="m0_gravity", difficulty="easy")
    record = run_trial(spec, _policy(srv, cache_path=cache, cache_mode="use"), judge=_judge(srv, cache_path=cache, cache_mode="use"))

    assert srv.n_requests == len(PLANNER_SCRIPT)
    assert record.status == "completed" and record.error is None
    assert record.submission_origin == "synthesis" and record.final_source == LAW and record.draft == WRONG
    assert record.evaluation["valid"] and record.evaluation["rmsle"] < 1e-9
    judge_usage = record.judge.pop("usage")
    assert record.judge == {"judge": "llm", "credited": True, "reason": "LLM judge gpt-4.1-2025-04-14 answered YES"}
    assert judge_usage == {"prompt_tokens": 300, "completion_tokens": 20, "calls": 1, "cached": 0}
    # Bootstrap (4) + two committees of up to 4 points each.
    assert 4 < record.measurements <= 12
    explore = [e for e in record.events if e.get("phase") == "explore" and "action" in e]
    assert [e["action"]["kind"] for e in explore] == ["committee", "analysis", "committee", "invalid", "draft"]
    n_seen, slope = explore[1]["analysis"]["stdout"].split()
    assert explore[1]["analysis"]["ok"] and int(n_seen) > 4 and slope == "1.0"  # the code ran on the observations
    synth = [e for e in record.events if e.get("phase") == "synthesis" and "action" in e]
    assert [e["action"]["kind"] for e in synth] == ["invalid", "final"]
    # Token and call accounting: every policy reply counted once (judge calls are the judge's own).
    assert record.llm_calls == 7
    assert record.prompt_tokens == 900 + 1000 + 1100 + 1200 + 1300 + 1400 + 1500
    assert record.completion_tokens == 40 + 30 + 35 + 20 + 50 + 0 + 60
    assert record.synthesis_input is not None and record.synthesis_input["draft"] == WRONG

    # The same trial again: everything comes from the cache, the record is the same.
    again = run_trial(spec, _policy(srv, cache_path=cache, cache_mode="replay"), judge=_judge(srv, cache_path=cache, cache_mode="replay"))
    assert srv.n_requests == len(PLANNER_SCRIPT), "a cached rerun must make zero HTTP requests"
    assert again.judge.pop("usage") == {"prompt_tokens": 300, "completion_tokens": 20, "calls": 1, "cached": 1}
    assert _comparable(again) == _comparable(record)
    cached_flags = [e["action"]["usage"]["cached"] for e in again.events if e.get("action", {}).get("usage")]
    assert cached_flags and all(cached_flags)


BASELINE_SCRIPT = [
    ok('I will start broad.\n<run_experiment>\n[{"mass1": 1, "mass2": 1, "distance": 1}, {"mass1": 10, "mass2": 1, "distance": 1}]\n</run_experiment>'),
    ok("<run_experiment>[{mass1: 2}]</run_experiment>"),  # malformed JSON
    ok(""),  # empty content
    error(500), error(502), error(503),  # retries exhausted: the round is used
    slow(0.6), ok('<run_experiment>{"mass1": 1, "mass2": 1, "distance": 4}</run_experiment>'),  # timeout, then retried
    ok("Here is my answer.\n<final_law>\n" + LAW + "\n</final_law>\nThanks."),
]


def test_baseline_trial_end_to_end(serve):
    srv = serve(BASELINE_SCRIPT)
    spec = TrialSpec(model="test-model", config=get_configuration("baseline_n"), task="m0_gravity", difficulty="easy", rollout=1)
    record = run_trial(spec, _policy(srv, cache_mode="off"))
    assert srv.n_requests == len(BASELINE_SCRIPT)
    assert record.status == "completed" and record.submission_origin == "baseline" and record.final_source == LAW
    assert record.measurements == 3 and record.evaluation["valid"]
    kinds = [e["action"]["kind"] for e in record.events if "action" in e]
    assert kinds == ["experiment", "invalid", "invalid", "invalid", "experiment", "final"]
    errors = [e["action"].get("error", "") for e in record.events if "action" in e]
    assert "not valid JSON" in errors[1] and "empty" in errors[2] and "HTTP 503" in errors[3]
    assert record.llm_calls == 6
    # Experiment outputs went back in NewtonBench's vanilla format.
    second_user = srv.requests[1]["messages"][3]["content"]
    y = record.observations["y"][:2]
    assert second_user.startswith('<experiment_output>\n["' + f"{y[0]:.15e}" + '", "' + f"{y[1]:.15e}" + '"]')
    assert f"{y[0]:.15e}" == "6.674000000000000e-05"


def test_baseline_forced_final_call(serve):
    srv = serve([
        ok('<run_experiment>[{"mass1": 3, "mass2": 3, "distance": 3}]</run_experiment>'),
        ok("Thinking about it..."),
        ok("<final_law>\n" + LAW + "\n</final_law>"),
    ])
    cfg = get_configuration("baseline_c", name="baseline_c_r2", baseline_rounds=2)
    record = run_trial(TrialSpec(model="test-model", config=cfg, task="m0_gravity"), _policy(srv, cache_mode="off"))
    assert record.status == "max_turns_reached" and record.submission_origin == "forced" and record.final_source == LAW
    forced = srv.requests[2]["messages"][-1]["content"]
    assert "used up" in forced and "<final_law>" in forced


@pytest.mark.parametrize("config", ["baseline_n", "random_n"])
def test_a_dead_server_still_gives_a_complete_record(serve, config):
    srv = serve([error(503)] * 200)
    overrides = {"baseline_rounds": 2} if config == "baseline_n" else {"exploration_turns": 2}
    cfg = get_configuration(config, name=f"{config}_short", **overrides)
    record = run_trial(TrialSpec(model="test-model", config=cfg, task="m0_gravity"), _policy(srv, cache_mode="off", max_retries=1))
    assert record.status != "failed" and record.error is None
    if config == "baseline_n":  # NewtonBench's stand-in law when the forced call gives none
        assert "float('nan')" in record.final_source and record.submission_origin == "forced_nan"
    else:
        assert record.final_source == "" and record.submission_origin == "none"
        assert not record.evaluation.get("valid", False)
    assert record.judge["credited"] is False
    actions = [e["action"] for e in record.events if "action" in e]
    assert actions and all(a["kind"] == "invalid" and "HTTP 503" in a["error"] for a in actions)
    assert record.llm_calls == len(actions) and record.completion_tokens == 0
    record.to_json()  # strict JSON, nothing unserializable
