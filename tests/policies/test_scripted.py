"""The scripted policy and the policy registry."""

from __future__ import annotations

import sys

import numpy as np
import pytest

from etc_fast.policies import create_policy, register_policy, registered_policies
from etc_fast.policies.scripted import ScriptedPolicy
from etc_fast.protocol import Action, Observation, Policy, TaskView, get_configuration

VIEW = TaskView(name="t", title="t", description="", output_name="y", output_description="", variables=(), signature="def discovered_law(x):")


def _obs(turn=0):
    return Observation(
        phase="explore", task=VIEW, X=np.empty((0, 1)), y=np.empty(0), diagnostics=None, turn=turn, turns_left=0,
        measurements_used=0, measurements_left=None, allowed=frozenset({"draft"}), interpreter=False,
    )


def test_replays_in_order_then_goes_invalid():
    a1 = Action(kind="committee", hypotheses=("x", "x**2"))
    pol = ScriptedPolicy([a1, {"kind": "draft", "source": "def discovered_law(x):\n    return x"}])
    assert isinstance(pol, Policy)
    pol.begin("explore", VIEW, get_configuration("variance_n"), 3)
    assert pol.act(_obs(0)) is a1
    second = pol.act(_obs(1))
    assert second.kind == "draft" and "return x" in second.source
    third = pol.act(_obs(2))
    assert third.kind == "invalid" and "no more actions" in third.error
    assert [o.turn for o in pol.observations] == [0, 1, 2]
    assert pol.begins == [("explore", 3)]
    assert pol.remaining == 0


def test_dict_lists_become_tuples():
    pol = ScriptedPolicy([{"kind": "committee", "hypotheses": ["x", "2*x"]}])
    assert pol.act(_obs()).hypotheses == ("x", "2*x")


def test_callable_script_is_passed_through():
    pol = ScriptedPolicy(lambda obs: "garbage" if obs.turn else Action(kind="final", source="s"))
    assert pol.act(_obs(0)).kind == "final"
    assert pol.act(_obs(1)) == "garbage"


@pytest.mark.parametrize("bad, match", [("draft", "sequence"), ([1], "#0"), ([{"kind": "draft", "sauce": 1}], "#0")])
def test_bad_scripts_are_rejected(bad, match):
    with pytest.raises(ValueError, match=match):
        ScriptedPolicy(bad)


def test_create_policy_scripted_does_not_load_the_llm_client():
    before = set(sys.modules)
    pol = create_policy("scripted", actions=[Action(kind="final", source="s")])
    assert isinstance(pol, ScriptedPolicy) and pol.name == "scripted"
    assert not any(m.startswith("etc_fast.policies.llm") for m in set(sys.modules) - before)


def test_register_policy():
    made = []

    def factory(**opts):
        made.append(opts)
        return ScriptedPolicy([], name="mine")

    register_policy("mine_test", factory)
    assert "mine_test" in registered_policies()
    assert create_policy("mine_test", k=1).name == "mine"
    assert made == [{"k": 1}]
    with pytest.raises(ValueError, match="non-empty"):
        register_policy("", factory)
    with pytest.raises(ValueError, match="callable"):
        register_policy("x", 3)
    with pytest.raises(ValueError, match="non-empty"):
        create_policy("")
