"""Reply parsing: tags, committees, experiments, final laws, and the reply -> Action dispatch."""

from __future__ import annotations

import pytest

from etc_fast.llm import (
    ReplyError,
    clean_expression,
    extract_code,
    extract_final_law,
    last_block,
    parse_action,
    parse_committee,
    parse_experiments,
)

EXPLORE = frozenset({"committee", "draft"})
EXPLORE_C = frozenset({"committee", "draft", "analysis"})
BASE = frozenset({"experiment", "final"})
BASE_C = frozenset({"experiment", "final", "analysis"})


# -- tags ----------------------------------------------------------------------------------
def test_last_block_is_from_last_open_to_next_close():
    text = "<t>one</t> prose <t>two</t> more <t>three"
    # The last opening tag has no closing tag: no block (NewtonBench semantics).
    assert last_block(text, "t") is None
    assert last_block("<t>one</t> x <t>two</t>", "t") == "two"
    assert last_block("<T>Upper</T>", "t") == "Upper"
    assert last_block("no tags", "t") is None
    assert last_block("<t>a <t>b</t> c</t>", "t") == "b"


def test_final_law_extraction_follows_newtonbench():
    reply = (
        "Thinking...\n<final_law>\ndef discovered_law(a, b):\n   return a\n</final_law>\n"
        "Actually, better:\n<final_law>\nimport math\ndef discovered_law(a, b):\n    C = 2.0\n    return C * a / b\n"
        "def helper(x):\n    return x\n</final_law>"
    )
    assert extract_final_law(reply) == "def discovered_law(a, b):\n    C = 2.0\n    return C * a / b"
    assert extract_final_law("<final_law>just prose</final_law>") is None
    assert extract_final_law("no tag def discovered_law(a): return a") is None


def test_final_law_inside_a_code_fence():
    reply = "<final_law>\n```python\ndef discovered_law(x):\n    return 2*x\n```\n</final_law>"
    assert extract_final_law(reply) == "def discovered_law(x):\n    return 2*x"


def test_extract_code_strips_fences_and_rejects_empty():
    assert extract_code("<python>\n```python\nprint(1)\n```\n</python>") == "print(1)"
    assert extract_code("<python>   \n</python>") is None
    assert extract_code("<python>print(1)") is None


# -- experiments ------------------------------------------------------------------------------
def test_experiments_strict_json():
    assert parse_experiments('<run_experiment>[{"a": 1, "b": 2}, {"a": 3}]</run_experiment>') == ({"a": 1, "b": 2}, {"a": 3})
    assert parse_experiments('<run_experiment>{"a": 1}</run_experiment>') == ({"a": 1},)
    assert parse_experiments('<run_experiment>\n```json\n[{"a": 1}]\n```\n</run_experiment>') == ({"a": 1},)
    # Only the last block counts.
    assert parse_experiments('<run_experiment>[{"a": 1}]</run_experiment> then <run_experiment>[{"a": 9}]</run_experiment>') == ({"a": 9},)


@pytest.mark.parametrize(
    "body, fragment",
    [
        ('[{"a": 1},]', "not valid JSON"),
        ("[{'a': 1}]", "not valid JSON"),
        ('[{"a": 1} // comment]', "not valid JSON"),
        ("[]", "empty list"),
        ('"text"', "JSON array of objects"),
        ("[1, 2]", "experiment 0 must be a JSON object"),
    ],
)
def test_experiments_reject_non_strict_json(body, fragment):
    with pytest.raises(ReplyError, match=fragment):
        parse_experiments(f"<run_experiment>{body}</run_experiment>")


def test_experiments_need_a_complete_block():
    with pytest.raises(ReplyError, match="no complete"):
        parse_experiments('<run_experiment>[{"a": 1}]')


# -- committees -------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "reply",
    [
        '{"hypotheses": ["C*m1*m2/r**2", "C*m1/r"]}',
        'Here is my committee:\n```json\n{"hypotheses": ["C*m1*m2/r**2", "C*m1/r"]}\n```\nThanks.',
        'I think so.\n{"hypotheses": ["C*m1*m2/r**2", "C*m1/r",]}\nDone',
        "{'hypotheses': ['C*m1*m2/r**2', 'C*m1/r']}",
        '{"hypotheses": ["F = C*m1*m2/r**2", "`C*m1/r`"]}',
        '{"hypotheses": [{"expression": "C*m1*m2/r**2", "why": "x"}, {"expr": "C*m1/r"}]}',
        '["C*m1*m2/r**2", "C*m1/r"]',
        '{"other": 1} and then {"hypotheses": ["C*m1*m2/r**2", "C*m1/r", "C*m1/r"]}',
    ],
)
def test_committee_formats(reply):
    hyps, _ = parse_committee(reply)
    assert hyps == ("C*m1*m2/r**2", "C*m1/r")


def test_committee_last_one_wins_and_is_capped_at_five():
    reply = '{"hypotheses": ["a"]} later {"hypotheses": ["x1", "x2", "x3", "x4", "x5", "x6", "x7"]}'
    hyps, _ = parse_committee(reply)
    assert hyps == ("x1", "x2", "x3", "x4", "x5")


@pytest.mark.parametrize("reply", ["no json here", '{"hypotheses": []}', '{"hypotheses": [1, 2]}', '{"a": 1}', "{broken"])
def test_committee_failures(reply):
    with pytest.raises(ReplyError):
        parse_committee(reply)


def test_clean_expression_keeps_comparisons_and_keywords():
    assert clean_expression("y = a*b") == "a*b"
    assert clean_expression("pow(a, b=2)") == "pow(a, b=2)"  # '=' inside a call is not a prefix
    assert clean_expression("a <= b") == "a <= b"
    assert clean_expression(" `a*b`; ") == "a*b"


# -- dispatch -----------------------------------------------------------------------------------
def test_empty_reply_is_invalid():
    for text in ("", "   \n", None):
        a = parse_action(text, phase="explore", allowed=EXPLORE)
        assert a.kind == "invalid" and "empty" in a.error


def test_explore_committee_and_draft():
    a = parse_action('{"hypotheses": ["C*x", "C*x**2"]}', phase="explore", allowed=EXPLORE)
    assert a.kind == "committee" and a.hypotheses == ("C*x", "C*x**2")
    d = parse_action(
        'Committee {"hypotheses": ["C*x"]} but I am sure:\n<draft_law>\ndef discovered_law(x):\n    return 2*x\n</draft_law>',
        phase="explore",
        allowed=EXPLORE,
    )
    assert d.kind == "draft" and d.source == "def discovered_law(x):\n    return 2*x"


def test_explore_analysis_vs_committee_later_wins():
    code_last = '{"hypotheses": ["C*x", "x**2"]}\nLet me check:\n<python>\nprint({"a": 1})\n</python>'
    a = parse_action(code_last, phase="explore", allowed=EXPLORE_C)
    assert a.kind == "analysis" and a.code == 'print({"a": 1})'
    committee_last = '<python>\nprint(1)\n</python>\nFinal answer: {"hypotheses": ["C*x", "x**2"]}'
    assert parse_action(committee_last, phase="explore", allowed=EXPLORE_C).kind == "committee"
    # JSON inside the python block is code, not a committee.
    only_code = '<python>\nd = {"hypotheses": ["x"]}\nprint(d)\n</python>'
    assert parse_action(only_code, phase="explore", allowed=EXPLORE_C).kind == "analysis"


def test_explore_analysis_not_allowed_falls_back_to_committee_or_is_returned_for_refusal():
    both = '<python>\nprint(1)\n</python>\n{"hypotheses": ["C*x", "x**2"]}'
    assert parse_action(both, phase="explore", allowed=EXPLORE).kind == "committee"
    only_code = "<python>\nprint(1)\n</python>"
    a = parse_action(only_code, phase="explore", allowed=EXPLORE)
    assert a.kind == "analysis"  # the protocol refuses it with an explanation


def test_explore_malformed_committee_is_invalid_with_reason():
    a = parse_action('{"hypotheses": "C*x"', phase="explore", allowed=EXPLORE)
    assert a.kind == "invalid" and "no committee found" in a.error


def test_baseline_final_beats_experiment():
    text = '<run_experiment>[{"x": 1}]</run_experiment>\n<final_law>\ndef discovered_law(x):\n    return x\n</final_law>'
    assert parse_action(text, phase="baseline", allowed=BASE).kind == "final"


def test_baseline_python_only_when_after_experiment_and_allowed():
    text = '<python>\nprint(1)\n</python>\n<run_experiment>[{"x": 1}]</run_experiment>'
    assert parse_action(text, phase="baseline", allowed=BASE_C).kind == "experiment"
    text2 = '<run_experiment>[{"x": 1}]</run_experiment>\n<python>\nprint(1)\n</python>'
    assert parse_action(text2, phase="baseline", allowed=BASE_C).kind == "analysis"
    # Vanilla agent: python is not an action at all.
    assert parse_action("<python>\nprint(1)\n</python>", phase="baseline", allowed=BASE).kind == "invalid"


def test_baseline_invalid_json_reports_the_problem():
    a = parse_action("<run_experiment>[{x: 1}]</run_experiment>", phase="baseline", allowed=BASE)
    assert a.kind == "invalid" and "not valid JSON" in a.error
    b = parse_action("I will think more.", phase="baseline", allowed=BASE)
    assert b.kind == "invalid" and "<run_experiment>" in b.error


def test_final_law_without_function_is_invalid():
    a = parse_action("<final_law>the force is C m1 m2 / r^2</final_law>", phase="final", allowed={"final"})
    assert a.kind == "invalid" and "def discovered_law" in a.error


def test_synthesis_accepts_final_or_draft_tag_and_reports_experiments():
    f = parse_action("<final_law>\ndef discovered_law(x):\n    return x\n</final_law>", phase="synthesis", allowed={"final"})
    assert f.kind == "final"
    d = parse_action("<draft_law>\ndef discovered_law(x):\n    return x\n</draft_law>", phase="synthesis", allowed={"final"})
    assert d.kind == "final"
    e = parse_action('<run_experiment>[{"x": 1}]</run_experiment>', phase="synthesis", allowed={"final"})
    assert e.kind == "experiment"  # not allowed: the protocol refuses it


def test_unknown_phase_is_invalid():
    assert parse_action("x", phase="dance", allowed=BASE).kind == "invalid"


@pytest.mark.parametrize(
    "junk", ["{" * 50_000, '{"a' * 30_000, "[" * 50_000, "'" * 50_000], ids=["braces", "open-objects", "brackets", "quotes"]
)
def test_pathological_replies_parse_in_bounded_time(junk):
    a = parse_action(junk + '\n{"hypotheses": ["a", "b"]}', phase="explore", allowed=EXPLORE)
    assert a.kind in ("committee", "invalid")


# -- misbehaving endpoints: no reply may raise ------------------------------------------------
DEEP = "[" * 50_000 + "]" * 50_000


@pytest.mark.parametrize(
    "reply, phase, allowed, fragment",
    [
        ("<run_experiment>" + DEEP + "</run_experiment>", "baseline", BASE, "nested too deeply"),
        ('<run_experiment>[{"mass1": 1' + "0" * 5000 + "}]</run_experiment>", "baseline", BASE, "not valid JSON"),
        ('{"hypotheses": ["a", ' + DEEP + "]}", "explore", EXPLORE, "committee"),
        ('```json\n{"hypotheses": ["a", ' + DEEP + "]}\n```", "explore", EXPLORE, "committee"),
        ('{"hypotheses": [1' + "0" * 5000 + "]}", "explore", EXPLORE, "committee"),
    ],
    ids=["deep-experiment", "huge-int-experiment", "deep-committee", "deep-fenced-committee", "huge-int-committee"],
)
def test_hostile_json_is_an_invalid_action_not_an_exception(reply, phase, allowed, fragment):
    a = parse_action(reply, phase=phase, allowed=allowed)
    assert a.kind == "invalid" and fragment in a.error


def test_hostile_json_helpers_raise_reply_errors_only():
    with pytest.raises(ReplyError, match="nested too deeply"):
        parse_experiments("<run_experiment>" + DEEP + "</run_experiment>")
    with pytest.raises(ReplyError):
        parse_committee('{"hypotheses": ["a", ' + DEEP + "]}")


def test_reply_beyond_the_parse_window_says_so():
    from etc_fast.llm._parse import MAX_REPLY_CHARS

    points = "[" + ", ".join(['{"mass1": 1.0, "mass2": 2.0, "distance": 3.0}'] * 10_000) + "]"
    reply = "<run_experiment>" + points + "</run_experiment>"
    assert len(reply) > MAX_REPLY_CHARS
    a = parse_action(reply, phase="baseline", allowed=BASE)
    assert a.kind == "invalid" and f"only its first {MAX_REPLY_CHARS} characters" in a.error
    hyps = '{"hypotheses": [' + ", ".join(['"C*mass1*mass2/distance**2"'] * 20_000) + "]}"
    a = parse_action(hyps, phase="explore", allowed=EXPLORE)
    assert a.kind == "invalid" and "characters" in a.error


def test_committee_types_from_a_confused_model():
    for reply in ('{"hypotheses": {"a": "mass1"}}', '{"hypotheses": 5}', '{"hypotheses": [1, 2.5, null, true]}', "[1, 2]"):
        a = parse_action(reply, phase="explore", allowed=EXPLORE)
        assert a.kind == "invalid" and a.error
    a = parse_action('{"hypotheses": [["mass1"], {"expression": 3}, "mass1*mass2", {"formula": "mass2"}]}', phase="explore", allowed=EXPLORE)
    assert a.kind == "committee" and a.hypotheses == ("mass1*mass2", "mass2")
    seven = '{"hypotheses": [' + ", ".join(f'"mass1**{k}"' for k in range(1, 8)) + "]}"
    assert len(parse_action(seven, phase="explore", allowed=EXPLORE).hypotheses) == 5
    a = parse_action('<run_experiment>[{"mass1": {"a": 1}, "mass2": [1, 2]}]</run_experiment>', phase="baseline", allowed=BASE)
    assert a.kind == "experiment"  # the protocol rejects nested values with a message naming the key
