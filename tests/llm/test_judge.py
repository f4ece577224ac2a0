"""The NewtonBench LLM judge: verdict parsing, retries, prompt contents, settings."""

from __future__ import annotations

import pytest

from etc_fast.errors import InfrastructureError
from etc_fast.evaluate._llm_judge import DEFAULT_JUDGE_MODEL, LLMJudge, judge_settings, parse_verdict
from etc_fast.llm import LLMClient, LLMConfigError
from etc_fast.tasks import get_task
from tests.llm._server import cut, error, ok
from tests.llm.conftest import fast_settings

LAW = "def discovered_law(mass1, mass2, distance):\n    C = 6.7e-5\n    return C * mass1 * mass2 / distance ** 1.5"


@pytest.mark.parametrize(
    "reply, verdict",
    [
        ("Reasoning: same.\nAnswer: YES", True),
        ("Reasoning: differs.\nAnswer: NO", False),
        ("reasoning: ...\nanswer: yes", True),
        ("Reasoning: x\n**Answer:** NO", False),  # no "ANSWER: NO" here: the last whole word decides
        ("Answer: maybe. **Answer:** YES, not NO", False),  # NewtonBench: the last whole word, even here
        ("**Answer: YES**", True),
        ("Reasoning: x\nANSWER:NO", False),
        ("Reasoning: I first thought yes, but the exponent differs. Answer: NO", False),
        ("The answer is NO, definitely not... actually YES", True),  # last whole word
        ("NOTHING here says YESTERDAY", None),  # no whole-word YES/NO
        ("", None),
        (None, None),
        ("Answer: YES\nOn reflection. Answer: NO", True),  # NewtonBench: the FIRST "ANSWER: YES|NO" decides
        ("  answer:   no  ", False),
    ],
)
def test_parse_verdict(reply, verdict):
    assert parse_verdict(reply) is verdict


def test_defaults_follow_newtonbench():
    s = judge_settings()
    assert s.model == DEFAULT_JUDGE_MODEL == "gpt41" and s.temperature == 0.6
    assert s.resolved.model_id == "gpt-4.1-2025-04-14"
    with pytest.raises(ValueError, match="unknown judge setting"):
        judge_settings(colour="red")


def test_missing_key_is_a_config_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(LLMConfigError, match="OPENAI_API_KEY"):
        LLMJudge()


def _judge(srv, **kw):
    client = LLMClient(fast_settings(srv.base_url, model="gpt41", temperature=0.6, **kw), sleep=lambda s: None, environ={})
    return LLMJudge(client=client)


def test_judge_sends_truth_submission_and_parameters(serve):
    task = get_task("m0_gravity", "easy")
    srv = serve([ok("Reasoning: the constant is absorbed.\nAnswer: YES")])
    verdict = _judge(srv).judge(LAW, task)
    assert verdict.credited and verdict.judge == "llm" and "YES" in verdict.reason
    body = srv.requests[0]
    # A local server gets the name as given; only the OpenAI API gets the dated snapshot id.
    assert body["model"] == "gpt41" and body["temperature"] == 0.6
    prompt = body["messages"][-1]["content"]
    assert task.ground_truth_text in prompt and LAW in prompt and task.param_description.strip() in prompt
    assert "Answer: (YES/NO)" in prompt
    # NewtonBench's order: the parameter descriptions, then Equation 1 (truth), then Equation 2 (submission).
    pd, eq1, eq2 = (prompt.rindex(t) for t in (task.param_description, "Equation 1: " + task.ground_truth_text, "Equation 2: " + LAW))
    assert pd < eq1 < eq2 and prompt.endswith(LAW)
    # The seven worked examples, with NewtonBench's verdicts in NewtonBench's order.
    verdicts = [line.split(": ", 1)[1] for line in prompt.split("\n") if line.startswith("Answer: ") and "(" not in line]
    assert verdicts == ["YES", "NO", "YES", "NO", "YES", "YES", "YES"]


def test_no_is_not_credited(serve):
    srv = serve([ok("Reasoning: exponent 2 vs 1.5.\nAnswer: NO")])
    verdict = _judge(srv).judge(LAW, get_task("m0_gravity"))
    assert not verdict.credited and "NO" in verdict.reason


def test_garbage_then_retry_then_verdict(serve):
    srv = serve([ok("I cannot decide."), ok(""), ok("Reasoning: fine\nAnswer: YES")])
    judge = _judge(srv)
    verdict = judge.judge(LAW, get_task("m0_gravity"))
    assert verdict.credited and "attempt 3" in verdict.reason
    assert srv.n_requests == 3 and judge.usage["calls"] == 3


def test_three_replies_without_verdict_are_not_credited(serve):
    srv = serve([ok("maybe"), cut("Answer: YES, since"), ok("perhaps"), ok("Answer: YES")])
    verdict = _judge(srv).judge(LAW, get_task("m0_gravity"))
    assert not verdict.credited
    assert srv.n_requests == 3, "at most three attempts"
    assert "no verdict in 3 attempts" in verdict.reason


@pytest.mark.parametrize("status, kind", [(401, "auth"), (403, "permission"), (404, "not_found"), (400, "bad_request")])
def test_a_call_without_reply_is_no_verdict_and_is_not_retried(serve, status, kind):
    srv = serve([error(status), ok("Answer: YES")])
    with pytest.raises(InfrastructureError) as err:
        _judge(srv).judge(LAW, get_task("m0_gravity"))
    assert err.value.kind == kind and srv.n_requests == 1


def test_unreachable_judge_gives_judge_status_error_in_the_record(serve):
    from etc_fast.policies.scripted import ScriptedPolicy
    from etc_fast.protocol import TrialSpec, get_configuration, run_trial

    judge = LLMJudge(client=LLMClient(fast_settings("http://127.0.0.1:9/v1", model="gpt41", max_retries=1), sleep=lambda s: None, environ={}))
    from etc_fast.protocol import Action

    policy = ScriptedPolicy(actions=[Action(kind="final", source=LAW)])
    cfg = get_configuration("baseline_n", name="b1", baseline_rounds=1)
    rec = run_trial(TrialSpec(model="scripted", config=cfg, task="m0_gravity"), policy, judge=judge)
    assert rec.status == "completed" and rec.judge["status"] == "error" and rec.judge["credited"] is False
    assert rec.judge["error_kind"] in ("unreachable", "timeout") and rec.summary()["judge_status"] == "error"


def test_no_function_means_no_call(serve):
    srv = serve([ok("Answer: YES")])
    judge = _judge(srv)
    assert not judge.judge("F = C*m1*m2/r**2", get_task("m0_gravity")).credited
    assert not judge.judge("", get_task("m0_gravity")).credited
    assert srv.n_requests == 0


def test_retries_are_distinct_cache_entries(serve, tmp_path):
    srv = serve([ok("unsure"), ok("Answer: NO")])
    path = tmp_path / "judge.db"
    judge = _judge(srv, cache_path=str(path), cache_mode="use")
    assert not judge.judge(LAW, get_task("m0_gravity")).credited
    assert srv.n_requests == 2
    again = _judge(srv, cache_path=str(path), cache_mode="use").judge(LAW, get_task("m0_gravity"))
    assert not again.credited and "NO" in again.reason and srv.n_requests == 2


def test_create_judge_builds_the_llm_judge(serve):
    from etc_fast.evaluate import create_judge

    srv = serve([ok("Answer: YES")])
    judge = create_judge("llm", base_url=srv.base_url, cache_mode="off", max_retries=0)
    assert judge.name == "llm" and judge.settings.model == "gpt41" and judge.settings.temperature == 0.6
    assert judge.judge(LAW, get_task("m0_gravity")).credited
