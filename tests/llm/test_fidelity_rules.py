"""Trial ids stay those of runs stored before the fidelity knobs existed; the knobs change them
only when set; NewtonBench's parsing rules for baseline replies."""

from __future__ import annotations

import dataclasses
import json

import pytest

from etc_fast.llm._parse import nb_experiments, nb_final_law, parse_baseline_newtonbench
from etc_fast.protocol import CONFIGURATIONS, ProtocolConfig, TrialSpec

#: Trial ids computed by the code before ``interpreter_data``, ``parsing`` and
#: ``max_validation_retries`` existed (commit 5f3f4c0), for every preset on two tasks.
PINNED = {
    "baseline_n/m0_gravity": "ad96d302647ac344",
    "baseline_n/m4_snell_law": "adf7c4f2528677a7",
    "baseline_c/m0_gravity": "a82df05a28c673a2",
    "baseline_c/m4_snell_law": "c6c6f9ab9a796cda",
    "variance_n/m0_gravity": "8a9da4eb8aa84f84",
    "variance_n/m4_snell_law": "2ce7723f77a9b961",
    "pairwise_n/m0_gravity": "352b2e70c49ff1c7",
    "pairwise_n/m4_snell_law": "81e23d2c32d6616e",
    "random_n/m0_gravity": "50604267c2cea0a2",
    "random_n/m4_snell_law": "c1ae9e56d3204549",
    "variance_c/m0_gravity": "adb39e527158f138",
    "variance_c/m4_snell_law": "8ffd7bdbb7bbb294",
    "pairwise_c/m0_gravity": "1330ee6846bfddf5",
    "pairwise_c/m4_snell_law": "d03aae63b80643b9",
    "random_c/m0_gravity": "1594770ac9603bf1",
    "random_c/m4_snell_law": "ccc8758e16f78d0e",
    # the GP-surrogate presets (docs/guide/acquisition.md), pinned when they were added
    "gp_ucb_n/m0_gravity": "92f634e74dce90e4",
    "gp_ucb_n/m4_snell_law": "04f54ec55617a5e1",
    "gp_var_n/m0_gravity": "76eed4610d592106",
    "gp_var_n/m4_snell_law": "4c2d29216c8b2062",
    "gp_ucb_c/m0_gravity": "706e9faaea215212",
    "gp_ucb_c/m4_snell_law": "a504ca63ad470c9a",
    "gp_var_c/m0_gravity": "ba28a0a0858854f6",
    "gp_var_c/m4_snell_law": "85c8941f33e051a1",
    "mi_n/m0_gravity": "3a3eda5940fefcc5",
    "mi_n/m4_snell_law": "cf2defe82e4a6fd3",
    "mi_c/m0_gravity": "7345ba44ad9563a1",
    "mi_c/m4_snell_law": "2b47bbc8ed39cf94",
}


def _spec(cfg: ProtocolConfig, task: str) -> TrialSpec:
    return TrialSpec(model="gpt41mini", config=cfg, task=task, difficulty="medium", law_version="v1", noise=0.01, rollout=2)


def test_trial_ids_of_presets_are_unchanged():
    got = {f"{n}/{t}": _spec(c, t).trial_id for n, c in CONFIGURATIONS.items() for t in ("m0_gravity", "m4_snell_law")}
    assert got == PINNED


@pytest.mark.parametrize("field, value", [("interpreter_data", "preloaded"), ("interpreter_data", "empty"),
                                          ("parsing", "lenient"), ("parsing", "newtonbench"), ("max_validation_retries", 7)])
def test_setting_a_knob_changes_the_id_and_round_trips(field, value):
    base = CONFIGURATIONS["baseline_c"]
    spec = _spec(dataclasses.replace(base, **{field: value}), "m0_gravity")
    assert spec.trial_id != PINNED["baseline_c/m0_gravity"]
    d = spec.to_dict()
    assert d["config"][field] == value
    assert TrialSpec.from_dict(json.loads(json.dumps(d))).trial_id == spec.trial_id
    plain = _spec(base, "m0_gravity").to_dict()
    assert field not in plain["config"]  # omitted while None
    assert TrialSpec.from_dict(plain).trial_id == PINNED["baseline_c/m0_gravity"]


def test_family_defaults():
    b, p = CONFIGURATIONS["baseline_c"], CONFIGURATIONS["variance_c"]
    assert (b.resolved_interpreter_data, b.resolved_parsing) == ("empty", "newtonbench")
    assert (p.resolved_interpreter_data, p.resolved_parsing) == ("preloaded", "lenient")
    assert b.resolved_validation_retries == 3
    with pytest.raises(ValueError, match="interpreter_data"):
        dataclasses.replace(b, interpreter_data="full")
    with pytest.raises(ValueError, match="parsing"):
        dataclasses.replace(b, parsing="strict")


LAW = "def discovered_law(mass1, mass2, distance):\n    return mass1 * mass2 / distance ** 2"


@pytest.mark.parametrize("text, law", [
    ("<final_law>\n" + LAW + "\n</final_law>", LAW),
    ("<final_law>\n```python\n" + LAW + "\n```\n</final_law>", LAW + "\n```"),  # the fence is not removed
    ("<FINAL_LAW>\n" + LAW + "\n</FINAL_LAW>", None),  # tags are case-sensitive
    ("<final_law>\n" + LAW, None),  # no closing tag
    ("<final_law>draft</final_law> later <final_law>\n" + LAW + "\n</final_law>", LAW),  # the last block
    ("<final_law>\n" + LAW + "\n</final_law> and <final_law> open", None),  # the last opening tag has no close
    ("<final_law>\ndef discovered_law(a):\n    return 1\ndef discovered_law(a):\n    return 2\n</final_law>",
     "def discovered_law(a):\n    return 2"),
])
def test_final_law_extraction(text, law):
    assert nb_final_law(text) == law


@pytest.mark.parametrize("text, points, single", [
    ('<run_experiment>[{"a": 1}, {"a": 2}]</run_experiment>', [{"a": 1}, {"a": 2}], False),
    ('<run_experiment>\n{"a": 1}\n</run_experiment>', [{"a": 1}], True),
    ('<run_experiment>\n```json\n[{"a": 1}]\n```\n</run_experiment>', None, False),  # a fence is not JSON
    ('<run_experiment>[{"a": 1},]</run_experiment>', None, False),  # no trailing comma
    ('<run_experiment>[{"a": 1}] // one</run_experiment>', None, False),
    ("<run_experiment>[]</run_experiment>", [], False),
    ("<run_experiment>3</run_experiment>", None, False),
    ('<run_experiment>[1]</run_experiment> <run_experiment>[{"b": 2}]</run_experiment>', [{"b": 2}], False),
])
def test_experiment_requests(text, points, single):
    assert nb_experiments(text) == (points, single)


def test_vanilla_order_and_invalid():
    a, _ = parse_baseline_newtonbench('<final_law>no function</final_law><run_experiment>[{"a": 1}]</run_experiment>', interpreter=False)
    assert a.kind == "experiment"  # a block without def discovered_law is no submission: the request runs
    a, _ = parse_baseline_newtonbench("<run_experiment>[]</run_experiment>", interpreter=False)
    assert a.kind == "invalid"
    a, _ = parse_baseline_newtonbench("", interpreter=False)
    assert a.kind == "invalid"


def test_code_assisted_order():
    nan = "def discovered_law(a): return float('nan')"
    a, _ = parse_baseline_newtonbench("</final_law> text <final_law>", interpreter=True, nan_law=nan)
    assert a.kind == "final" and a.source == nan  # both tags anywhere end the trial; no law -> the stand-in
    a, _ = parse_baseline_newtonbench('<run_experiment>[{"a": 1}]</run_experiment>\n<python>\nprint(1)\n</python>', interpreter=True)
    assert a.kind == "analysis" and a.code == "print(1)"
    a, info = parse_baseline_newtonbench('<python>print(1)</python><run_experiment>{"a": 1}</run_experiment>', interpreter=True)
    assert a.kind == "experiment" and info["single"] is True
    a, info = parse_baseline_newtonbench("<python></python>", interpreter=True)
    assert a.kind == "invalid" and not info["silent"]  # an empty block is no python action
    a, info = parse_baseline_newtonbench("<run_experiment>[{a: 1}]</run_experiment>", interpreter=True)
    assert a.kind == "invalid" and info["silent"]  # NewtonBench's code agent sends no reply to it
    a, _ = parse_baseline_newtonbench("<final_law>\n" + LAW + "\n</final_law>", interpreter=True, final_only=True)
    assert a.kind == "final" and a.source == LAW
    a, _ = parse_baseline_newtonbench("<python>print(1)</python>", interpreter=True, final_only=True)
    assert a.kind == "invalid"


def test_parsing_knob_on_a_baseline_trial(serve):
    from etc_fast.llm import LLMClient
    from etc_fast.policies.llm import LLMPolicy
    from etc_fast.protocol import get_configuration, run_trial
    from tests.llm._server import ok
    from tests.llm.conftest import fast_settings

    fenced = '<run_experiment>\n```json\n[{"mass1": 1, "mass2": 1, "distance": 2}]\n```\n</run_experiment>'
    final = "<final_law>\n```python\n" + LAW + "\n```\n</final_law>"
    results = {}
    for parsing in ("newtonbench", "lenient"):
        srv = serve([ok(fenced), ok(final)])
        client = LLMClient(fast_settings(srv.base_url, cache_mode="off"), sleep=lambda s: None, environ={})
        cfg = get_configuration("baseline_n", name=f"b_{parsing}", baseline_rounds=2, parsing=parsing)
        results[parsing] = run_trial(TrialSpec(model="test-model", config=cfg, task="m0_gravity"), LLMPolicy(client=client))
    strict, lenient = results["newtonbench"], results["lenient"]
    assert strict.measurements == 0 and strict.final_source.endswith("```") and not strict.evaluation["valid"]
    assert lenient.measurements == 1 and lenient.final_source == LAW and lenient.evaluation["valid"]
