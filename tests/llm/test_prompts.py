"""Prompt texts: structure, tags, task facts, NewtonBench output formatting."""

from __future__ import annotations

import json
import math

import numpy as np

from etc_fast.llm import _prompts as P
from etc_fast.tasks import get_task, task_view

GRAVITY = task_view(get_task("m0_gravity"))
SNELL = task_view(get_task("m4_snell_law"))


def test_baseline_task_message_has_the_four_blocks_and_request_keys():
    text = P.baseline_task_message(SNELL, noisy=False, interpreter=False)
    for key in ("refractive_index_1", "refractive_index_2", "incidence_angle"):
        assert f'"{key}": ...' in text
    assert "argument `n1` of discovered_law" in text  # keys differ from signature names
    assert SNELL.signature in text and "<final_law>" in text and "<run_experiment>" in text
    assert "noise-free" in text and "<python>" not in text
    code = P.baseline_task_message(SNELL, noisy=True, interpreter=True)
    assert "<python>" in code and "random error" in code and "preloaded" in code


def test_system_prompts_state_the_rules():
    vanilla = P.baseline_system_prompt(10, False)
    assert "10 rounds" in vanilla and "<run_experiment>" in vanilla and "<final_law>" in vanilla and "<python>" not in vanilla
    code = P.baseline_system_prompt(7, True)
    assert "7 rounds" in code and "<python>" in code and "no comments" in code.lower()
    assert "draft" in P.planner_system_prompt(False)
    assert "No new measurements" in P.synthesis_system_prompt(True)


def test_explore_menu_lists_only_allowed_actions():
    full = P.action_menu(GRAVITY, ["analysis", "committee", "draft"], 4)
    assert '{"hypotheses":' in full and "<python>" in full and "<draft_law>" in full and "up to 4 new inputs" in full
    for fn in ("sin", "acos", "atan", "exp", "log", "sqrt", "abs", "degrees", "radians", "pow", "pi"):
        assert fn in full
    assert "mass1, mass2, distance" in full
    plain = P.action_menu(GRAVITY, ["committee", "draft"], 2)
    assert "<python>" not in plain and "up to 2 new inputs" in plain
    brief = P.action_menu(GRAVITY, ["committee", "draft"], 2, brief=True)
    assert "<python>" not in brief and "draft_law" in brief and len(brief) < 300


def test_explore_messages_show_table_and_diagnostics():
    X = np.array([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    y = np.array([0.5, np.nan])
    first = P.explore_first_message(GRAVITY, X, y, None, ["committee", "draft"], noisy=False, batch_cap=4, turns_left=7, measurements_left=12)
    assert "Observations so far (2)" in first and "nan" in first and "12 left in the budget" in first
    nxt = P.explore_next_message(GRAVITY, "fb", X[1:], y[1:], 1, None, ["committee"], batch_cap=4, turns_left=3, measurements_used=2, measurements_left=None)
    assert nxt.startswith("fb") and "New observations (1)" in nxt and "\n2 " in nxt


def test_synthesis_message_with_and_without_draft():
    X = np.ones((3, 3))
    y = np.ones(3)
    draft = "def discovered_law(mass1, mass2, distance):\n    return mass1"
    with_draft = P.synthesis_first_message(GRAVITY, X, y, None, draft, noisy=False, interpreter=True, turns_left=2)
    assert "<draft_law>" in with_draft and "Keep this draft unless" in with_draft and "<python>" in with_draft
    assert "Replies left after this one: 2" in with_draft and "probe each input" not in with_draft
    without = P.synthesis_first_message(GRAVITY, X, y, None, None, noisy=False, interpreter=False, turns_left=0)
    assert "No draft law" in without and "last reply" in without and "<python>" not in without


def test_experiment_output_formats():
    vals = [2.568823797714375e-05, float("nan"), float("inf")]
    vanilla = P.experiment_output(vals, interpreter=False)
    body = json.loads(vanilla.split("\n")[1])
    assert body == ["2.568823797714375e-05", "nan", "inf"]
    assert vanilla.startswith("<experiment_output>\n") and vanilla.endswith("</experiment_output>")
    code = P.experiment_output(vals, interpreter=True)
    assert code.split("\n")[1] == "[2.568823797714375e-05, NaN, Infinity]"
    assert P.format_vanilla_value(1.0) == "1.000000000000000e+00"
    assert math.isnan(float(P.format_vanilla_value(float("nan"))))


def test_forced_and_invalid_messages():
    assert "<final_law>" in P.forced_final_message(GRAVITY, False) and GRAVITY.signature not in P.forced_final_message(GRAVITY, False)
    assert GRAVITY.signature in P.forced_final_message(GRAVITY, True)
    assert "<python>" in P.invalid_reply_message(True, "bad JSON") and "bad JSON" in P.invalid_reply_message(True, "bad JSON")
    assert P.python_output("x") == "<python_output>\nx\n</python_output>"


def test_judge_prompt_holds_both_equations_and_the_answer_format():
    text = P.judge_prompt("C * a / r ** 2", "def discovered_law(a, r):\n    return 3*a/r**2", "- a: thing")
    assert "Equation 1 (reference):\nC * a / r ** 2" in text and "return 3*a/r**2" in text and "- a: thing" in text
    assert text.rstrip().endswith("Answer: YES or NO") and "Reasoning:" in text


# Sentences and phrases NewtonBench's prompts use (as quoted in the project's notes on it); the
# prompts here say the same things in their own words.
NEWTONBENCH_PHRASES = (
    "Invalid response. Please use",
    "You have used all your experiment turns",
    "Please submit your final law now using",
    "subject to random noise",
    "noise-free and deterministic",
    "No output produced",
    "Execution Failed",
    "Action Reminder",
    "Please use exactly 1 action per turn",
    "AI research physicist",
    "constants inside the function",
    "Reasoning Process",
    "Main Response",
    "detailed thinking on",
)


def _every_prompt_text() -> list[str]:
    rng = np.random.default_rng(0)
    X, y = rng.uniform(1, 2, (3, 3)), rng.uniform(1, 2, 3)
    texts = []
    for interp in (False, True):
        for noisy in (False, True):
            texts.append(P.baseline_task_message(GRAVITY, noisy=noisy, interpreter=interp))
            texts.append(P.explore_first_message(GRAVITY, X, y, None, ["committee", "draft", "analysis"], noisy=noisy,
                                                 batch_cap=4, turns_left=7, measurements_left=None))
            texts.append(P.synthesis_first_message(GRAVITY, X, y, None, "def discovered_law(m1, m2, r):\n    return m1",
                                                   noisy=noisy, interpreter=interp, turns_left=2))
        texts += [P.baseline_system_prompt(10, interp), P.planner_system_prompt(interp), P.synthesis_system_prompt(interp),
                  P.forced_final_message(GRAVITY, interp), P.invalid_reply_message(interp, "x"), P.action_reminder(3, 5)]
    return texts


def test_no_newtonbench_sentence_is_copied():
    from etc_fast.protocol import _baseline, _planner, _state

    texts = _every_prompt_text()
    texts += [open(m.__file__).read() for m in (P, _baseline, _planner, _state)]
    texts.append(open(__import__("etc_fast.policies.llm", fromlist=["x"]).__file__).read())
    for text in texts:
        low = text.lower()
        for phrase in NEWTONBENCH_PHRASES:
            assert phrase.lower() not in low, phrase
