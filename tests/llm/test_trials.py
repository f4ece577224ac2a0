"""Whole trials through ``run_trial`` with LLMPolicy talking to the scripted server.

Each script mixes good replies with the failures a hosted model produces (rate limits, 5xx,
dropped connections, slow replies, malformed or empty content). Transient failures are retried
inside one call and leave no trace in the conversation; bad replies are the model's and become
invalid turns; a call that ends without a reply fails the trial (status ``failed``, an
``error_kind``), never becomes a turn. A second run of a trial from the cache makes no request.
"""

from __future__ import annotations

import pytest

from etc_fast.evaluate._llm_judge import LLMJudge
from etc_fast.llm import LLMClient
from etc_fast.llm._texts import DEFAULT_TEXTS
from etc_fast.policies.llm import LLMPolicy
from etc_fast.protocol import TrialSpec, get_configuration, run_trial
from etc_fast.tasks import get_task, task_view
from tests.llm._server import dropped, error, not_json, ok, slow
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
    for k in ("wall_s", "calls_cached", "prompt_tokens_cached", "completion_tokens_cached"):
        d.pop(k, None)
    for ev in d["events"]:
        for k in ("cached", "prompt_tokens_cached", "completion_tokens_cached"):
            ev.get("action", {}).get("usage", {}).pop(k, None)
    for m in d["chat"]:
        m.pop("call", None)
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
    assert record.judge == {"judge": "llm", "credited": True, "reason": "LLM judge gpt41 answered YES", "status": "ok"}
    assert judge_usage == {"prompt_tokens": 300, "completion_tokens": 20, "calls": 1, "cached": 0,
                           "prompt_tokens_cached": 0, "completion_tokens_cached": 0}
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
    assert again.judge.pop("usage") == {"prompt_tokens": 300, "completion_tokens": 20, "calls": 1, "cached": 1,
                                        "prompt_tokens_cached": 300, "completion_tokens_cached": 20}
    assert _comparable(again) == _comparable(record)
    # Paid + cached tokens add up to what the server reported, and the rerun paid nothing.
    first, second = record.summary(), again.summary()
    assert first["calls_paid"] == 7 and first["calls_cached"] == 0 and second["calls_paid"] == 0 and second["calls_cached"] == 7
    assert first["prompt_tokens_paid"] == second["prompt_tokens_cached"] == sum(
        r.prompt_tokens for r in PLANNER_SCRIPT[:-1] if r.status == 200 and not r.drop)
    assert second["prompt_tokens_paid"] == second["completion_tokens_paid"] == 0
    for ev in again.events:
        ev.get("action", {}).get("usage", {}).pop("prompt_tokens_cached", None)
        ev.get("action", {}).get("usage", {}).pop("completion_tokens_cached", None)
    cached_flags = [e["action"]["usage"]["cached"] for e in again.events if e.get("action", {}).get("usage")]
    assert cached_flags and all(cached_flags)


BASELINE_SCRIPT = [
    ok('I will start broad.\n<run_experiment>\n[{"mass1": 1, "mass2": 1, "distance": 1}, {"mass1": 10, "mass2": 1, "distance": 1}]\n</run_experiment>'),
    ok("<run_experiment>[{mass1: 2}]</run_experiment>"),  # malformed JSON
    ok(""),  # empty content
    # one call: 5xx twice, a timeout, then the reply (retries are invisible to the protocol)
    error(500), error(502), slow(0.6), ok('<run_experiment>{"mass1": 1, "mass2": 1, "distance": 4}</run_experiment>'),
    ok("Here is my answer.\n<final_law>\n" + LAW + "\n</final_law>\nThanks."),
]


def test_baseline_trial_end_to_end(serve):
    srv = serve(BASELINE_SCRIPT)
    spec = TrialSpec(model="test-model", config=get_configuration("baseline_n"), task="m0_gravity", difficulty="easy", rollout=1)
    record = run_trial(spec, _policy(srv, cache_mode="off", max_retries=4))
    assert srv.n_requests == len(BASELINE_SCRIPT)
    assert record.status == "completed" and record.submission_origin == "baseline" and record.final_source == LAW
    assert record.measurements == 3 and record.evaluation["valid"]
    kinds = [e["action"]["kind"] for e in record.events if "action" in e]
    assert kinds == ["experiment", "invalid", "invalid", "experiment", "final"]
    errors = [e["action"].get("error", "") for e in record.events if "action" in e]
    assert "strict JSON" in errors[1] and "neither" in errors[2]
    assert record.llm_calls == 5
    # The four attempts of the fourth call sent the very same bytes.
    assert len({srv.raw_requests[i] for i in (3, 4, 5, 6)}) == 1
    calls = [m["call"] for m in record.chat if m.get("role") == "assistant"]
    assert [c["attempts"] for c in calls] == [1, 1, 1, 4, 1]
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
    # NewtonBench: the forced instruction is appended (after a blank line) to the last reply, here
    # the one-action reminder sent for the unusable second reply; no turn reminder precedes it.
    T = DEFAULT_TEXTS
    assert forced == T.invalid_reply(True, 2) + "\n\n" + T.forced_final(task_view(get_task("m0_gravity")), True)


@pytest.mark.parametrize("config", ["baseline_n", "random_n"])
@pytest.mark.parametrize("failure, kind, requests", [
    (error(503), "server_error", 2), (error(401), "auth", 1), (not_json(), "bad_response", 2),
])
def test_a_call_without_reply_fails_the_trial(serve, config, failure, kind, requests):
    srv = serve([failure] * 50)
    overrides = {"baseline_rounds": 2} if config == "baseline_n" else {"exploration_turns": 2}
    cfg = get_configuration(config, name=f"{config}_short", **overrides)
    record = run_trial(TrialSpec(model="test-model", config=cfg, task="m0_gravity"), _policy(srv, cache_mode="off", max_retries=1))
    assert record.status == "failed" and record.error_kind == kind and "\n" not in record.error
    assert srv.n_requests == requests, "the trial stops at the first call without a reply"
    assert not [e for e in record.events if "action" in e], "no turn was taken"
    assert record.evaluation == {} and record.judge["credited"] is False and record.judge["status"] == "skipped"
    assert record.summary()["valid"] is False and record.summary()["error"] == record.error
    assert record.llm_calls == 0 and record.summary()["error_kind"] == kind
    assert record.chat[-1]["event"] == "call_failed"
    record.to_json()  # strict JSON, nothing unserializable


def test_replay_miss_fails_the_trial_with_cache_miss(tmp_path):
    from etc_fast.llm import LLMSettings

    settings = LLMSettings(model="test-model", base_url="http://127.0.0.1:9/v1", cache_path=str(tmp_path / "c.db"), cache_mode="replay")
    policy = LLMPolicy(client=LLMClient(settings, environ={}))
    cfg = get_configuration("baseline_n", name="b2", baseline_rounds=2)
    record = run_trial(TrialSpec(model="test-model", config=cfg, task="m0_gravity"), policy)
    assert record.status == "failed" and record.error_kind == "cache_miss"
