"""Prompt texts: structure, tags, task facts, NewtonBench output formatting."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from etc_fast.llm import _prompts as P
from etc_fast.llm._texts import DEFAULT_TEXTS, vanilla_value
from etc_fast.tasks import get_task, task_view

GRAVITY = task_view(get_task("m0_gravity"))
SNELL = task_view(get_task("m4_snell_law"))


def test_baseline_task_message_has_the_four_blocks_and_request_keys():
    T = DEFAULT_TEXTS
    text = T.task_prompt(SNELL, noisy=False, interpreter=False)
    for key in ("refractive_index_1", "refractive_index_2", "incidence_angle"):
        assert f'"{key}": ...' in text
    assert SNELL.signature in text and "<final_law>" in text and "<run_experiment>" in text
    assert "noise-free" in text and "<python>" not in text
    assert text == "\n\n".join(T.task_sections(SNELL, noisy=False, interpreter=False))
    assert len(T.task_sections(SNELL, noisy=False, interpreter=False)) == 3
    code = T.task_prompt(SNELL, noisy=True, interpreter=True)
    assert "<python>" in code and "random noise" in code and len(T.task_sections(SNELL, noisy=True, interpreter=True)) == 4
    # NewtonBench says nothing about preloaded data: its interpreter starts empty.
    assert "preloaded" not in code


def test_system_prompts_state_the_rules():
    T = DEFAULT_TEXTS
    vanilla = T.system_prompt(10, False)
    assert "up to 10 rounds" in vanilla and "<run_experiment>" in vanilla and "<final_law>" in vanilla and "<python>" not in vanilla
    assert "up to 20 data points per experiment" in vanilla  # NewtonBench's suggestion, not enforced
    code = T.system_prompt(7, True)
    assert "up to 7 rounds" in code and "<python>" in code and "comments" in code.lower()
    assert "at most 20 sets of data per experiment" in code
    assert T.system_prompt(10, False, model="nemotron-ultra").startswith("detailed thinking on \n")
    assert "draft" in P.planner_system_prompt(False)
    assert "No new measurements" in P.synthesis_system_prompt(True)


def test_apparatus_sections_are_pluggable_per_system():
    import dataclasses

    from etc_fast.llm._texts import _APPARATUS, register_apparatus

    @dataclasses.dataclass(frozen=True)
    class SystemView:
        name: str
        title: str
        description: str
        output_name: str
        output_description: str
        variables: tuple
        signature: str
        system: str

    view = SystemView(**{f.name: getattr(GRAVITY, f.name) for f in dataclasses.fields(GRAVITY)}, system="toy_system")
    with pytest.raises(KeyError, match="toy_system"):
        DEFAULT_TEXTS.task_prompt(view, noisy=False, interpreter=False)
    register_apparatus("toy_system", lambda task, noisy, interpreter: f"APPARATUS of {task.name} noisy={noisy}")
    try:
        text = DEFAULT_TEXTS.task_prompt(view, noisy=True, interpreter=False)
        assert "APPARATUS of m0_gravity noisy=True" in text and "<run_experiment>" not in text.split("APPARATUS")[0]
    finally:
        del _APPARATUS["toy_system"]


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
    T = DEFAULT_TEXTS
    vals = [2.568823797714375e-05, float("nan"), float("inf")]
    vanilla = T.experiment_output(vals, interpreter=False)
    body = json.loads(vanilla.split("\n")[1])
    assert body == ["2.568823797714375e-05", "nan", "inf"]
    assert vanilla.startswith("<experiment_output>\n") and vanilla.endswith("</experiment_output>")
    code = T.experiment_output(vals, interpreter=True)
    assert code.split("\n")[1] == "[2.568823797714375e-05, NaN, Infinity]"
    assert "data = 2.568823797714375e-05;" in code  # the reminder quotes the first value, as NewtonBench's
    single = T.experiment_output([0.5], interpreter=True, single=True)
    assert single.split("\n")[1] == "0.5"
    # NewtonBench's code-assisted agent sends nothing for a zero single result or an empty one.
    assert T.experiment_output([0.0], interpreter=True, single=True) is None
    assert T.experiment_output([], interpreter=True) is None
    assert vanilla_value(1.0) == "1.000000000000000e+00"
    assert math.isnan(float(vanilla_value(float("nan"))))


def test_forced_and_invalid_messages():
    T = DEFAULT_TEXTS
    assert "<final_law>" in T.forced_final(GRAVITY, False) and GRAVITY.signature not in T.forced_final(GRAVITY, False)
    assert GRAVITY.signature in T.forced_final(GRAVITY, True)
    assert "<python>" in T.invalid_reply(True, 4) and "Turn 4: 0 of 1" in T.invalid_reply(True, 4)
    assert "<python>" not in T.invalid_reply(False)
    assert T.request_error(True, "missing key") is None and "missing key" in T.request_error(False, "missing key")
    assert T.nan_law(GRAVITY) == "def discovered_law(mass1, mass2, distance): return float('nan')"
    assert P.python_output("x") == "<python_output>\nx\n</python_output>"


def test_interpreter_replies_have_newtonbench_shape():
    T = DEFAULT_TEXTS
    ok_text = T.python_success("  hello\n", "print('hello')", 3)
    assert ok_text.startswith("<python_output>\n✅") and ok_text.endswith("</python_output>")
    assert "\nhello\n" in ok_text and "```python\nprint('hello')\n```" in ok_text and "Turn 3: 1 of 1" in ok_text
    assert "(the code printed nothing)" in T.python_success("", "x = 1", 1)
    bad = T.python_failure("NameError: name 'x' is not defined", "print(x)", 2)
    assert "<python_output>" not in bad and bad.startswith("❌")
    assert "name 'x' is not defined" in bad and "NameError" not in bad  # str(exception), as NewtonBench
    inval = T.python_invalid("syntax error (line 1): invalid syntax", "print(", 2)
    assert "<python_output>" not in inval and "Turn 2: 0 of 1" in inval


def test_judge_prompt_holds_both_equations_and_the_answer_format():
    text = DEFAULT_TEXTS.judge_prompt("C * a / r ** 2", "def discovered_law(a, r):\n    return 3*a/r**2", "- a: thing")
    assert text.endswith("Equation 1: C * a / r ** 2\n\nEquation 2: def discovered_law(a, r):\n    return 3*a/r**2")
    assert text.index("- a: thing") < text.index("Equation 1: C * a")
    assert "Reasoning:" in text and "Answer: (YES/NO)" in text
    assert DEFAULT_TEXTS.judge_messages("a", "b", "c", model="nemotron-ultra")[0] == {"role": "system", "content": "detailed thinking on"}
    assert len(DEFAULT_TEXTS.judge_messages("a", "b", "c", model="gpt41")) == 1


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
    "detailed thinking on",  # a Nemotron control phrase: only NEMOTRON_SWITCH may hold it
    "Constants may differ in form or value",
    "must match exactly for the equations to be considered",
    "Only the assisting laws listed below",
    "Use the feedback",
)


def _every_prompt_text() -> list[str]:
    T = DEFAULT_TEXTS
    rng = np.random.default_rng(0)
    X, y = rng.uniform(1, 2, (3, 3)), rng.uniform(1, 2, 3)
    texts = []
    for interp in (False, True):
        for noisy in (False, True):
            texts.append(T.task_prompt(GRAVITY, noisy=noisy, interpreter=interp))
            texts.append(P.explore_first_message(GRAVITY, X, y, None, ["committee", "draft", "analysis"], noisy=noisy,
                                                 batch_cap=4, turns_left=7, measurements_left=None))
            texts.append(P.synthesis_first_message(GRAVITY, X, y, None, "def discovered_law(m1, m2, r):\n    return m1",
                                                   noisy=noisy, interpreter=interp, turns_left=2))
        texts += [T.system_prompt(10, interp), P.planner_system_prompt(interp), P.synthesis_system_prompt(interp),
                  T.forced_final(GRAVITY, interp), T.invalid_reply(interp, 2), T.experiment_output([1.0], interpreter=interp)]
    texts += [T.turn_reminder(), T.python_success("a", "b", 1), T.python_failure("E: x", "b", 1), T.python_invalid("p", "b", 1),
              T.combine_reasoning("r", "c"), T.judge_prompt("a", "b", "c")]
    return texts


def test_no_newtonbench_sentence_is_copied():
    from etc_fast.llm import _newtonbench, _texts
    from etc_fast.protocol import _baseline, _planner, _state

    texts = _every_prompt_text()
    texts += [open(m.__file__).read() for m in (P, _baseline, _planner, _state, _newtonbench)]
    texts.append(open(_texts.__file__).read().replace('NEMOTRON_SWITCH = "detailed thinking on"', ""))
    texts.append(open(__import__("etc_fast.policies.llm", fromlist=["x"]).__file__).read())
    for text in texts:
        low = text.lower()
        for phrase in NEWTONBENCH_PHRASES:
            assert phrase.lower() not in low, phrase
