"""Prompt stability: every request an LLM trial makes on the normal path is pinned, byte for byte.

A user's reply cache (``etc_fast/llm/_cache.py``) is keyed on the exact request (messages, model,
temperature, seed, the rollout's sample index, base URL), so one changed prompt byte makes every
later call of that conversation a paid miss. This test plays the real :class:`LLMPolicy` against a
stand-in model whose replies are a pure function of the prompt (``tests.llm._prompt_model``) on
tier x family x interpreter (m0_gravity, easy, noiseless, rollout 0; variance planners and the
free-form baselines), and compares the cache key of every request (the server's address left out)
with ``data/prompt_pins.json``.

The pins were generated from the code before the "one loop, many labs" refactor (09a793e) with
``tests/llm/pin_prompts.py``; that the refactored code gives the same digests is what this test
shows. The scenario keeps to normal paths: valid experiments, committees, analyses, drafts and laws.
The awkward paths whose texts changed on purpose in that refactor are left out (repair texts after
an unparseable committee, refusals during exploration and synthesis; their event logs are pinned in
tests/protocol/test_conformance.py), and so is a *successful analysis on a system baseline*: the old
code rendered it as "The Python code stopped with an error ... Python execution succeeded." and the
new code renders it as a success, so the stand-in runs no analysis in system baselines here;
:func:`test_a_system_baseline_shows_a_successful_analysis_as_the_equation_baseline_does` checks the
new text instead.

The prompts carry measured and simulated values printed to a few significant digits; on another CPU
a value within an ulp of a rounding boundary could in principle print differently
(docs/guide/reproducibility.md). After an intended prompt change, regenerate from the checkout whose
prompts are right (``python tests/llm/pin_prompts.py``), review the diff, and say so in the commit.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

import pytest

from etc_fast.llm import LLMClient
from etc_fast.llm._cache import cache_key
from etc_fast.policies.llm import LLMPolicy
from etc_fast.protocol import TrialSpec, get_configuration, run_trial
from tests.llm._prompt_model import prompt_model
from tests.llm._server import ChatServer, ok
from tests.llm.conftest import fast_settings

PINS = Path(__file__).parent / "data" / "prompt_pins.json"
TIERS = ("vanilla_equation", "simple_system", "complex_system")
PRESETS = {("planner", False): "variance_n", ("planner", True): "variance_c",
           ("baseline", False): "baseline_n", ("baseline", True): "baseline_c"}
CELLS = [(tier, family, interp) for tier in TIERS for family in ("planner", "baseline") for interp in (False, True)]
TASK = "m0_gravity"


def cell_id(cell: tuple[str, str, bool]) -> str:
    tier, family, interp = cell
    return f"{tier}/{family}/{'code' if interp else 'vanilla'}"


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class RecordingClient:
    """An :class:`LLMClient` that notes the canonical request (the cache key's input) of every call."""

    def __init__(self, client: LLMClient) -> None:
        self._client = client
        self.policy: LLMPolicy | None = None
        self.calls: list[dict[str, Any]] = []

    def complete(self, messages, *, sample=None):
        request = dict(self._client.request_for(messages, sample))
        request["base_url"] = "<scripted server>"  # the port changes from run to run
        phase = next((e["phase"] for e in reversed(self.policy.transcript) if e.get("event") == "begin"), None)
        turn = sum(1 for m in messages if m["role"] == "assistant")
        self.calls.append({
            "at": f"{phase} turn {turn}",
            "messages": len(messages),
            "request": cache_key(request),
            "newest": _digest(f"{messages[-1]['role']}\n{messages[-1]['content']}"),
        })
        return self._client.complete(messages, sample=sample)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


def play(cell: tuple[str, str, bool], *, system_baseline_analysis: bool = False) -> tuple[Any, list[dict], list[dict]]:
    """(record, pinned calls, request bodies the server received) of one cell."""
    tier, family, interp = cell
    analysis = system_baseline_analysis or not (family == "baseline" and tier != "vanilla_equation")
    with ChatServer(prompt_model(ok, baseline_analysis=analysis), models=["test-model"], lifetime_s=600) as srv:
        client = RecordingClient(LLMClient(fast_settings(srv.base_url, timeout_s=120), sleep=lambda s: None, environ={}))
        policy = LLMPolicy(client=client)  # type: ignore[arg-type]
        client.policy = policy
        spec = TrialSpec(model="test-model", config=get_configuration(PRESETS[(family, interp)]), task=TASK, system=tier)
        try:
            record = run_trial(spec, policy)
        finally:
            policy.close()
        return record, client.calls, list(srv.requests)


def play_all() -> dict[str, Any]:
    """The pinned scenario: each cell's status, measurements and calls."""
    out = {}
    for cell in CELLS:
        record, calls, _ = play(cell)
        out[cell_id(cell)] = {"status": record.status, "measurements": record.measurements, "calls": calls}
    return out


@pytest.fixture(scope="module")
def played() -> dict[str, Any]:
    return play_all()


def _changes(cell: str, got: dict, pinned: dict) -> list[str]:
    """What changed in one cell, first differing request first (later ones follow from it)."""
    out = []
    if (got["status"], got["measurements"]) != (pinned["status"], pinned["measurements"]):
        out.append(f"{cell}: status/measurements {got['status']}/{got['measurements']}, pinned "
                   f"{pinned['status']}/{pinned['measurements']}")
    for i, (g, p) in enumerate(zip(got["calls"], pinned["calls"])):
        if g == p:
            continue
        if (g["at"], g["messages"]) != (p["at"], p["messages"]):
            what = f"it is {g['at']} with {g['messages']} messages, pinned {p['at']} with {p['messages']}"
        elif g["newest"] != p["newest"]:
            what = "its newest message changed (the text rendered for this turn)"
        else:
            what = "its newest message is the same: an earlier message (system prompt, a reply) or a request field changed"
        out.append(f"{cell}: request {i} ({g['at']}, {g['messages']} messages) misses the cache: {what}")
        break
    if len(got["calls"]) != len(pinned["calls"]):
        out.append(f"{cell}: {len(got['calls'])} requests, pinned {len(pinned['calls'])}")
    return out


def test_every_request_matches_its_pinned_cache_key(played):
    pinned = json.loads(PINS.read_text())["cells"]
    assert sorted(played) == sorted(pinned)
    problems = [line for cell in sorted(played) for line in _changes(cell, played[cell], pinned[cell])]
    assert not problems, "prompts changed (every later call of such a conversation is a paid cache miss):\n" + "\n".join(problems)


def test_the_scenario_is_the_normal_path(played):
    """Every cell completes and asks the model what it should; a stand-in that drifted onto repair
    paths would pin the wrong thing."""
    counts = {cell: len(v["calls"]) for cell, v in played.items()}
    for (tier, family, interp) in CELLS:
        cid = cell_id((tier, family, interp))
        assert played[cid]["status"] == "completed", cid
        if family == "planner":  # committee, (analysis), committee, draft; synthesis: (analysis), final
            assert counts[cid] == (6 if interp else 4), cid
        else:  # experiment, (analysis, on equations only), experiment, final
            assert counts[cid] == (4 if interp and tier == "vanilla_equation" else 3), cid


def test_a_changed_prompt_byte_is_named(played):
    """The comparison names the trial and the turn of a changed request."""
    cell = cell_id(("simple_system", "planner", True))
    got = json.loads(json.dumps(played[cell]))
    got["calls"][2]["newest"] = _digest("user\nsomething else")
    got["calls"][2]["request"] = _digest("another request")
    lines = _changes(cell, got, played[cell])
    assert lines == [f"{cell}: request 2 (explore turn 2, 6 messages) misses the cache: its newest message changed "
                     "(the text rendered for this turn)"]


def test_a_system_baseline_shows_a_successful_analysis_as_the_equation_baseline_does():
    """The one normal-path text the refactor changed on purpose: a system baseline's successful
    analysis used to come back as an error ("Python execution succeeded."); it now reads exactly
    as on the equation tier."""
    replies = {}
    for tier in ("vanilla_equation", "simple_system"):
        record, _, bodies = play((tier, "baseline", True), system_baseline_analysis=True)
        assert record.status == "completed"
        after = [b["messages"][-1]["content"] for b in bodies if len(b["messages"]) == 6]
        assert len(after) == 1
        replies[tier] = after[0]
    assert replies["simple_system"] == replies["vanilla_equation"]
    assert replies["simple_system"].startswith("<python_output>\n✅ **Python code ran successfully**\n\n**Output:**\n45 checked")
    assert "stopped with an error" not in replies["simple_system"]
