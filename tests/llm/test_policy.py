"""LLMPolicy decision by decision against the scripted server (real openai client underneath)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from etc_fast.errors import InfrastructureError
from etc_fast.llm import LLMClient, LLMConfigError
from etc_fast.policies import create_policy
from etc_fast.policies.llm import LLMPolicy
from etc_fast.protocol import Observation, get_configuration
from etc_fast.sampling import bootstrap_probes
from etc_fast.tasks import get_task, task_view
from tests.llm._server import cut, dropped, error, no_choices, not_json, ok, slow
from tests.llm.conftest import fast_settings

TASK = get_task("m0_gravity", "easy")
VIEW = task_view(TASK)
_, XB = bootstrap_probes(TASK)
YB = TASK.truth(XB)
DRAFT = "def discovered_law(mass1, mass2, distance):\n    C = 6.674e-5\n    return C * mass1 * mass2 / distance ** 1.5"


def explore_obs(X=XB, y=YB, *, feedback=None, kind=None, new_rows=0, turn=0, interpreter=False) -> Observation:
    allowed = {"committee", "draft"} | ({"analysis"} if interpreter else set())
    return Observation(
        phase="explore", task=VIEW, X=X, y=y, diagnostics=None, turn=turn, turns_left=7 - turn,
        measurements_used=int(y.shape[0]), measurements_left=None, allowed=frozenset(allowed),
        interpreter=interpreter, feedback=feedback, feedback_kind=kind, new_rows=new_rows,
    )


def baseline_obs(X, y, *, phase="baseline", feedback=None, kind=None, turn=0, interpreter=False) -> Observation:
    allowed = {"final"} if phase == "final" else {"experiment", "final"} | ({"analysis"} if interpreter else set())
    return Observation(
        phase=phase, task=VIEW, X=X, y=y, diagnostics=None, turn=turn, turns_left=9 - turn,
        measurements_used=int(y.shape[0]), measurements_left=None, allowed=frozenset(allowed),
        interpreter=interpreter, feedback=feedback, feedback_kind=kind,
    )


def make_policy(srv, **overrides) -> LLMPolicy:
    client = LLMClient(fast_settings(srv.base_url, **overrides), sleep=lambda s: None, environ={})
    return LLMPolicy(client=client)


def started(srv, phase="explore", config="variance_n", **overrides) -> LLMPolicy:
    p = make_policy(srv, **overrides)
    p.begin(phase, VIEW, get_configuration(config), 0)
    return p


# -- one reply, one action -------------------------------------------------------------------
@pytest.mark.parametrize(
    "reply, kind",
    [
        ('{"hypotheses": ["C*mass1*mass2/distance**2", "C*mass1*mass2/distance**1.5"]}', "committee"),
        ('Sure.\n```json\n{"hypotheses": ["C*mass1/distance", "C*mass2/distance"]}\n```', "committee"),
        ("The data fit well.\n<draft_law>\n" + DRAFT + "\n</draft_law>\nThat is my draft.", "draft"),
        ('{"hypotheses": ["C*mass1", ', "invalid"),
        ("", "invalid"),
    ],
    ids=["json", "fenced-json", "prose-around-tags", "malformed-json", "empty"],
)
def test_reply_kinds_become_actions(serve, reply, kind):
    srv = serve([ok(reply, prompt_tokens=321, completion_tokens=54)])
    p = started(srv)
    a = p.act(explore_obs())
    assert a.kind == kind
    assert a.raw == reply
    assert {k: a.usage[k] for k in ("prompt_tokens", "completion_tokens", "calls", "cached")} == {
        "prompt_tokens": 321, "completion_tokens": 54, "calls": 1, "cached": 0}
    assert a.usage["prompt_tokens_cached"] == a.usage["completion_tokens_cached"] == 0
    if kind == "draft":
        assert a.source == DRAFT
    if kind == "invalid":
        assert a.error


def test_rate_limit_then_reply_is_transparent(serve):
    srv = serve([error(429, retry_after="0"), ok('{"hypotheses": ["C*mass1", "C*mass2"]}')])
    a = started(srv).act(explore_obs())
    assert a.kind == "committee" and srv.n_requests == 2


@pytest.mark.parametrize(
    "script, kind",
    [
        ([error(500)] * 3, "server_error"),
        ([slow(0.5)], "timeout"),
        ([dropped()], "unreachable"),
        ([error(401)], "auth"),
        ([error(403)], "permission"),
        ([error(404)], "not_found"),
        ([not_json()] * 3, "bad_response"),
        ([no_choices()] * 3, "bad_response"),
    ],
    ids=["5xx-exhausted", "timeout", "dropped", "auth", "permission", "not-found", "not-json", "no-choices"],
)
def test_call_failures_are_raised_never_turned_into_actions(serve, script, kind):
    srv = serve(script + [ok("unused")] * 3)
    p = started(srv, max_retries=0 if len(script) == 1 else 2, timeout_s=0.15)
    with pytest.raises(InfrastructureError) as err:
        p.act(explore_obs())
    assert err.value.kind == kind
    assert [m["role"] for m in p.messages] == ["system"], "a failed call leaves the conversation as it was"
    assert p.transcript[-1]["event"] == "call_failed" and p.transcript[-1]["error_kind"] == kind


def test_a_failure_adds_nothing_to_the_next_request(serve):
    srv = serve([error(500), ok('{"hypotheses": ["C*mass1", "C*mass2"]}')])
    p = started(srv, max_retries=0)
    with pytest.raises(InfrastructureError):
        p.act(explore_obs())
    a = p.act(explore_obs())
    assert a.kind == "committee"
    assert srv.raw_requests[0] == srv.raw_requests[1], "the request after a failure is the very same request"
    msgs = srv.requests[1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user"]
    text = msgs[1]["content"]
    for transport in ("HTTP", "status 500", "failed", "LLMCallError", "could not be used", "127.0.0.1", "scripted"):
        assert transport not in text


def test_a_reply_cut_at_the_token_limit_is_an_invalid_turn_not_parsed(serve):
    law = "<final_law>\n" + DRAFT + "\n</final_law>"
    srv = serve([cut("<draft_law>\n" + DRAFT + "\n</draft_law>", completion_tokens=64)])
    p = started(srv, max_tokens=64)
    a = p.act(explore_obs())
    assert a.kind == "invalid" and "finish_reason: length" in a.error and a.usage["finish_reason"] == "length"
    assert srv.requests[0]["max_tokens"] == 64
    assert p.transcript[-1]["call"]["finish_reason"] == "length"
    assert law  # the same text, not cut, would have been a draft (see test_reply_kinds_become_actions)


def test_transcript_holds_every_message_and_reply_with_call_records(serve):
    srv = serve([error(429, retry_after="0"), ok('{"hypotheses": ["C*mass1", "C*mass2"]}', prompt_tokens=50, completion_tokens=5),
                 ok("<draft_law>\n" + DRAFT + "\n</draft_law>")])
    p = started(srv)
    p.act(explore_obs())
    p.act(explore_obs(feedback="Measured 4 points.", kind="committee", turn=1))
    chat = [m for m in p.transcript if "role" in m]
    sent = srv.requests[-1]["messages"]
    assert [{"role": m["role"], "content": m["content"]} for m in chat] == sent + [{"role": "assistant", "content": chat[-1]["content"]}]
    call = chat[2]["call"]
    assert call["model"] == "test-model" and call["attempts"] == 2 and call["from_cache"] is False
    assert (call["prompt_tokens"], call["completion_tokens"], call["finish_reason"]) == (50, 5, "stop")
    assert call["latency_s"] >= 0


# -- conversation --------------------------------------------------------------------------------
def test_explore_conversation_shows_new_rows_and_feedback(serve):
    srv = serve([ok('{"hypotheses": ["C*mass1", "C*mass2"]}'), ok("<draft_law>\n" + DRAFT + "\n</draft_law>")])
    p = started(srv)
    p.act(explore_obs())
    X2 = np.vstack([XB, [[10.0, 20.0, 2.0]]])
    y2 = np.concatenate([YB, TASK.truth(X2[-1:])])
    fb = "The planner (variance) selected and measured 1 new point(s): observations 5-5."
    a = p.act(explore_obs(X2, y2, feedback=fb, kind="selection", new_rows=1, turn=1))
    assert a.kind == "draft"
    msgs = srv.requests[1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user", "assistant", "user"]
    last = msgs[-1]["content"]
    assert fb in last and "New observations (1)" in last and "Observations so far" not in last
    assert "5 " in last.split("New observations (1):")[1]  # numbered from 5


def test_begin_starts_a_fresh_conversation(serve):
    srv = serve([ok('{"hypotheses": ["a", "b"]}'), ok("<final_law>\n" + DRAFT + "\n</final_law>")])
    p = started(srv)
    p.act(explore_obs())
    p.begin("synthesis", VIEW, get_configuration("variance_n"), 0)
    obs = Observation(
        phase="synthesis", task=VIEW, X=XB, y=YB, diagnostics=None, turn=0, turns_left=0, measurements_used=4,
        measurements_left=0, allowed=frozenset({"final"}), interpreter=False, draft=DRAFT,
    )
    a = p.act(obs)
    assert a.kind == "final" and a.source == DRAFT
    msgs = srv.requests[1]["messages"]
    assert [m["role"] for m in msgs] == ["system", "user"]
    assert "Keep this draft unless" in msgs[1]["content"] and DRAFT in msgs[1]["content"]
    assert "not available" in msgs[1]["content"]


def test_reasoning_is_kept_and_resent(serve):
    srv = serve([ok('{"hypotheses": ["a", "b"]}', reasoning="Exponent looks like 1.5."), ok('{"hypotheses": ["c", "d"]}')])
    p = started(srv)
    p.act(explore_obs())
    p.act(explore_obs(turn=1))
    assistant = srv.requests[1]["messages"][2]["content"]
    assert assistant.startswith("[reasoning]\nExponent looks like 1.5.") and "\n\n[reply]\n" in assistant


def test_baseline_messages_follow_newtonbench(serve):
    from etc_fast.llm._texts import DEFAULT_TEXTS as T

    srv = serve([
        ok('<run_experiment>[{"mass1": 1, "mass2": 2, "distance": 3}]</run_experiment>'),
        ok("<run_experiment>[{mass1: 1}]</run_experiment>"),
        ok("<final_law>\n" + DRAFT + "\n</final_law>"),
    ])
    p = started(srv, phase="baseline", config="baseline_n")
    empty = np.empty((0, 3))
    a = p.act(baseline_obs(empty, np.empty(0)))
    assert a.kind == "experiment" and a.points == ({"mass1": 1, "mass2": 2, "distance": 3},)
    first = srv.requests[0]["messages"]
    assert first[0]["content"] == T.system_prompt(10, False)
    assert first[1]["content"] == T.task_prompt(VIEW, noisy=False, interpreter=False)
    X1 = np.array([[1.0, 2.0, 3.0]])
    y1 = TASK.truth(X1)
    b = p.act(baseline_obs(X1, y1, feedback="ignored by the LLM policy", kind="experiment", turn=1))
    assert b.kind == "invalid" and "strict JSON" in b.error
    # The reply to an experiment is the <experiment_output> block alone (vanilla: no reminder).
    assert srv.requests[1]["messages"][-1]["content"] == '<experiment_output>\n["' + f"{y1[0]:.15e}" + '"]\n</experiment_output>'
    c = p.act(baseline_obs(X1, y1, phase="final", feedback="x", kind="repair", turn=0))
    assert c.kind == "final" and c.source == DRAFT
    forced = srv.requests[2]["messages"][-1]["content"]
    assert forced == T.invalid_reply(False) + "\n\n" + T.forced_final(VIEW, False)


def test_code_assisted_baseline_wraps_python_output_and_reminds(serve):
    from etc_fast.llm._texts import DEFAULT_TEXTS as T

    srv = serve([ok("<python>\nprint(1)\n</python>"), ok("<final_law>\n" + DRAFT + "\n</final_law>")])
    p = started(srv, phase="baseline", config="baseline_c")
    empty = np.empty((0, 3))
    a = p.act(baseline_obs(empty, np.empty(0), interpreter=True))
    assert a.kind == "analysis" and a.code == "print(1)"
    assert srv.requests[0]["messages"][1]["content"].endswith("\n\n" + T.turn_reminder())
    result = {"ok": True, "stdout": "1\n", "error": None, "code": "print(1)"}
    obs = dataclasses.replace(
        baseline_obs(empty, np.empty(0), feedback="Python execution succeeded.", kind="analysis", turn=1, interpreter=True),
        analysis_result=result,
    )
    p.act(obs)
    last = srv.requests[1]["messages"][-1]["content"]
    assert last == T.python_success("1\n", "print(1)", 1) + "\n\n" + T.turn_reminder()
    assert "Rounds left" not in last and "left" not in T.turn_reminder()  # no countdown, as NewtonBench


# -- construction -----------------------------------------------------------------------------------
def test_no_key_fails_at_construction_with_the_way_out(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError) as err:
        create_policy("gpt41mini")
    assert "OPENAI_API_KEY" in str(err.value) and "--model symbolic" in str(err.value)


def test_options_and_base_url_through_create_policy(serve):
    srv = serve([ok('{"hypotheses": ["a", "b"]}')])
    p = create_policy("my-local-model", base_url=srv.base_url, temperature=0.1, cache_mode="off", max_retries=0)
    assert isinstance(p, LLMPolicy) and p.name == "llm:my-local-model"
    p.begin("explore", VIEW, get_configuration("random_n"), 3)
    assert p.act(explore_obs()).kind == "committee"
    assert srv.requests[0]["model"] == "my-local-model" and srv.requests[0]["temperature"] == 0.1
    with pytest.raises(LLMConfigError, match="unknown LLM option"):
        create_policy("my-local-model", base_url=srv.base_url, colour="blue")


def test_act_before_begin_and_unknown_phase(serve):
    srv = serve([])
    p = make_policy(srv)
    with pytest.raises(RuntimeError, match="before begin"):
        p.act(explore_obs())
    with pytest.raises(ValueError, match="unknown phase"):
        p.begin("final", VIEW, get_configuration("baseline_n"), 0)


# -- a misbehaving endpoint never costs the trial its token count or its context --------------
def test_parser_failure_keeps_the_call_usage(serve, monkeypatch):
    import etc_fast.policies.llm as llm_mod

    def boom(*args, **kwargs):
        raise RecursionError("deep")

    monkeypatch.setattr(llm_mod, "parse_action", boom)
    srv = serve([ok("anything", prompt_tokens=321, completion_tokens=12)])
    p = started(srv)
    a = p.act(explore_obs())
    assert a.kind == "invalid" and "RecursionError" in a.error and a.raw == "anything"
    assert {k: a.usage[k] for k in ("prompt_tokens", "completion_tokens", "calls", "cached")} == {
        "prompt_tokens": 321, "completion_tokens": 12, "calls": 1, "cached": 0}


def test_huge_reply_is_cut_in_the_conversation(serve):
    from etc_fast.llm._parse import MAX_REPLY_CHARS

    huge = '{"hypotheses": ["mass1", "mass2"]}' + " " * (3 * MAX_REPLY_CHARS)
    srv = serve([ok(huge), ok('{"hypotheses": ["mass1", "mass2"]}')])
    p = started(srv)
    a = p.act(explore_obs())
    assert a.kind == "committee" and a.hypotheses == ("mass1", "mass2")
    p.act(explore_obs(turn=1))
    resent = srv.requests[1]["messages"][2]["content"]
    assert len(resent) < MAX_REPLY_CHARS + 200 and "characters of this reply are not kept" in resent


def test_garbage_replies_through_a_whole_trial(serve):
    """Numbers, dicts and lists as content, wrong JSON types and hostile JSON: the trial completes."""
    from etc_fast.protocol import TrialSpec, run_trial
    from tests.llm._server import Reply

    deep = "[" * 20_000 + "]" * 20_000
    script = [
        Reply(content=12345),
        Reply(content={"hypotheses": ["mass1"]}),
        ok('{"hypotheses": {"a": "mass1"}}'),
        ok('{"hypotheses": [1, 2, 3]}'),
        ok('{"hypotheses": ["a", ' + deep + "]}"),
        ok('{"hypotheses": [' + ", ".join(f'"mass1**{k}*mass2"' for k in range(1, 9)) + "]}"),
        ok("<run_experiment>[{\"mass1\": 1}]</run_experiment>"),
        ok("\x00\x01" * 1000),
        ok("<final_law>\n" + DRAFT + "\n</final_law>"),
    ]
    srv = serve(script)
    spec = TrialSpec(model="test-model", config=get_configuration("variance_n"), task="m0_gravity")
    # A generous per-call timeout: this test is about reply content, and a loaded CI machine can
    # hold the server thread past the 2 s the other tests use.
    rec = run_trial(spec, make_policy(srv, max_retries=0, timeout_s=30.0))
    assert rec.status == "max_turns_reached" and rec.error is None, (rec.status, rec.error_kind, rec.error)
    kinds = [e["action"]["kind"] for e in rec.events if e.get("phase") == "explore" and "action" in e]
    # A dict as content reaches the parser as its Python text: a one-hypothesis committee (a repair turn).
    assert kinds == ["invalid", "committee", "invalid", "invalid", "invalid", "committee", "experiment", "invalid"]
    assert rec.submission_origin == "synthesis" and rec.evaluation["valid"]
    assert rec.llm_calls == 9 and rec.completion_tokens == 9 * 7
