"""A judge that counts tokens across trials has only this trial's share recorded."""

from etc_fast.evaluate import Verdict
from etc_fast.policies.scripted import ScriptedPolicy
from etc_fast.protocol import run_trial
from tests.protocol._helpers import HOOKE_LAW, draft, final, make_spec


class CountingJudge:
    name = "counting"

    def __init__(self) -> None:
        self.usage = {"prompt_tokens": 1000, "completion_tokens": 10, "calls": 7}

    def judge(self, source, task):
        self.usage["prompt_tokens"] += 120
        self.usage["completion_tokens"] += 8
        self.usage["calls"] += 1
        return Verdict(judge=self.name, credited=True, reason="counted")


def test_judge_usage_is_per_trial():
    judge = CountingJudge()
    spec = make_spec("variance_n", task="m9_hooke_law")
    rec = run_trial(spec, ScriptedPolicy([draft(HOOKE_LAW), final(HOOKE_LAW)]), judge=judge)
    assert rec.judge["credited"] is True
    assert rec.judge["usage"] == {"prompt_tokens": 120, "completion_tokens": 8, "calls": 1}


def test_structural_judge_records_no_usage():
    spec = make_spec("variance_n", task="m9_hooke_law")
    rec = run_trial(spec, ScriptedPolicy([draft(HOOKE_LAW), final(HOOKE_LAW)]))
    assert "usage" not in rec.judge
    assert rec.judge["judge"] == "structural"


def test_protocol_precheck_agrees_with_the_evaluator():
    """A law the protocol accepts must not fail the evaluator's signature pre-check."""
    from etc_fast.protocol import precheck_submission
    from etc_fast.sandbox import check_signature

    names = ["x"]
    for src in (
        "def discovered_law(x):\n    return x\n",
        "def  discovered_law (x):\n    return x\n",
        "def discovered_law( x ):\n    return x\n",
        "def discovered_law(x):\n    return\n",
    ):
        assert (precheck_submission(src, names) is None) == (check_signature(src, names) is None), src
