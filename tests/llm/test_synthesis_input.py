"""What an LLM is shown: the paper's synthesis input, and only "noisy" or "noise-free"."""

from __future__ import annotations

import pytest

from etc_fast.llm import LLMClient
from etc_fast.policies.llm import LLMPolicy
from etc_fast.protocol import TrialSpec, get_configuration, run_trial
from tests.llm._server import ok
from tests.llm.conftest import fast_settings

LAW = "def discovered_law(mass1, mass2, distance):\n    C = 6.674e-5\n    return C * mass1 * mass2 / distance ** 1.5"
SCRIPT = [ok("<draft_law>\n" + LAW + "\n</draft_law>"), ok("<final_law>\n" + LAW + "\n</final_law>")]


def _run(srv, config, noise=0.0):
    policy = LLMPolicy(client=LLMClient(fast_settings(srv.base_url), sleep=lambda s: None, environ={}))
    spec = TrialSpec(model="test-model", config=config, task="m0_gravity", noise=noise)
    record = run_trial(spec, policy)
    assert record.status == "completed" and record.submission_origin == "synthesis"
    explore, synthesis = (r["messages"] for r in srv.requests[:2])
    return explore, synthesis


def _text(messages):
    return "\n".join(m["content"] for m in messages)


@pytest.mark.parametrize("knob", [False, True], ids=["paper", "synthesis_diagnostics"])
def test_synthesis_sees_diagnostics_only_with_the_knob(serve, knob):
    cfg = get_configuration("variance_n", name="v", synthesis_diagnostics=True) if knob else get_configuration("variance_n")
    explore, synthesis = _run(serve(SCRIPT), cfg)
    assert "Automatic diagnostics" in _text(explore)
    text = _text(synthesis)
    assert ("Automatic diagnostics" in text) is knob
    assert "<draft_law>" in text and "All observations (4)" in text


@pytest.mark.parametrize("level", [0.001, 0.05])
def test_prompts_say_noisy_never_the_level(serve, level):
    explore, synthesis = _run(serve(SCRIPT), get_configuration("random_n"), noise=level)
    text = _text(explore) + _text(synthesis)
    assert "random error" in text and "noise-free" not in text
    assert str(level) not in text and f"{level:g}" not in text and f"{level:.0%}" not in text
