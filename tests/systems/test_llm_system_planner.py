"""An LLM planner on a system, against the scripted server: the prompts carry the apparatus, the
time-series records and the derived-law diagnostics; bad replies are repair turns; a server
failure fails the trial; nothing of the hidden law reaches a prompt."""

from __future__ import annotations

import json

import numpy as np
import pytest

from etc_fast.llm import LLMClient
from etc_fast.llm._system_prompts import derived_block, power_law_summary, reliable_threshold
from etc_fast.policies.llm import LLMPolicy
from etc_fast.protocol import TrialSpec, get_configuration, run_trial
from etc_fast.systems._derive import DerivedTable
from etc_fast.tasks import get_task
from tests.llm._server import error, ok
from tests.llm.conftest import fast_settings, serve  # noqa: F401 - the fixture

LAW = "def discovered_law(mass1, mass2, distance):\n    C = 6.674e-5\n    return C * mass1 * mass2 / distance ** 1.5"
DRAFT = "def discovered_law(mass1, mass2, distance):\n    C = 1e-4\n    return C * mass1 * mass2 / distance ** 2"
COMMITTEE = '{"hypotheses": ["C*mass1*mass2/distance**2", "C*mass1*mass2/distance**1.5", "C*mass1/distance"]}'


def _policy(srv, **kw) -> LLMPolicy:
    settings = fast_settings(srv.base_url, cache_mode="off", **kw)
    return LLMPolicy(client=LLMClient(settings, sleep=lambda s: None, environ={}))


def _sent(srv) -> list[tuple[str, str]]:
    """Every (role, content) the protocol side sent (system and user messages), in order, deduplicated."""
    seen, out = set(), []
    for body in srv.requests:
        for m in body["messages"]:
            key = (m["role"], m["content"])
            if m["role"] != "assistant" and key not in seen:
                seen.add(key)
                out.append(key)
    return out


def _no_hidden_law(srv, module: str, difficulty: str) -> None:
    task = get_task(module, difficulty, "v0")
    for role, text in _sent(srv):
        assert task.law_expression not in text and task.ground_truth_text not in text
        assert "HIDDEN_CONSTANT" not in text and module not in text
        static = text.split("Experiments so far")[0].split("All experiments")[0]  # before any record or fit
        for value in task.constants.values():
            assert repr(value) not in static and f"{value:g}" not in static, (role, value)


def test_planner_c_on_simple_system_completes_with_system_prompts(serve):  # noqa: F811
    srv = serve([
        ok(COMMITTEE),
        ok("<python>\nprint(series.shape[0], series.shape[1], X.shape[1], len(data))\n</python>"),
        ok('{"hypotheses": ["C*mass1*mass2/distance**2", "C*mass1*mass2/(distance**"]}'),  # one parseable: repair
        ok("I think this is Newton's law."),  # no action at all: repair
        ok("<draft_law>\n" + DRAFT + "\n</draft_law>"),
        ok("<python>\nprint(np.nanmax(series[:, 0, :]) > 0, len(data))\n</python>"),  # synthesis: an analysis
        ok("<final_law>\n" + LAW + "\n</final_law>"),
    ])
    spec = TrialSpec(model="test-model", config=get_configuration("variance_c"), task="m0_gravity", system="simple_system")
    record = run_trial(spec, _policy(srv))
    assert record.status == "completed" and record.error is None, record.error
    assert record.submission_origin == "synthesis" and record.final_source == LAW and record.judge["credited"]
    explore = [e for e in record.events if e.get("phase") == "explore" and "action" in e]
    assert [e["action"]["kind"] for e in explore] == ["committee", "analysis", "committee", "invalid", "draft"]
    assert [e["feedback_kind"] for e in explore[:4]] == ["selection", "analysis", "repair", "repair"]
    n_boot = next(e["n"] for e in record.events if e.get("event") == "bootstrap")
    assert record.measurements == n_boot + 4  # one committee turn ran a batch; repairs ran nothing

    system, first = srv.requests[0]["messages"][0]["content"], srv.requests[0]["messages"][1]["content"]
    assert "acts inside an apparatus" in system and "simulates every candidate" in system
    assert "Experimental apparatus: A 1-D track" in first and "`time_step`" in first and "Confirmed assisting laws" in first
    assert f"Experiments so far ({n_boot}; numbered 1-{n_boot})" in first
    records = json.loads(first.split("<experiment_output>\n")[2].split("\n</experiment_output>")[0])
    assert len(records) == n_boot and len(records[0]["position"]) == 20 and records[0]["time"][0] == "0.000e+00"
    requests = json.loads(first.split("<run_experiment>\n")[2].split("\n</run_experiment>")[0])
    assert [r["mass1"] for r in requests] == [r["mass1"] for r in record.observations["requests"][:n_boot]]
    assert "Derived law values:" in first and "exp  mass1  mass2  distance  L  misfit  rel_unc" in first
    assert "mass1, mass2, distance are read from the request" in first
    assert "the lab fits each such constant to the records so far by running the hypothesis through the apparatus" in first
    assert "`series` (NumPy array" in first and "<python>" in first

    after_committee = srv.requests[1]["messages"][-1]["content"]
    assert after_committee.startswith(f"The planner (variance) selected and ran 4 new experiment(s): experiments {n_boot + 1}-")
    assert after_committee.count("<experiment_output>") == 1, "the new records are shown once"
    assert f"New experiments (4; numbered {n_boot + 1}-{n_boot + 4})" in after_committee
    assert f"Derived law values of experiments {n_boot + 1}-{n_boot + 4}" in after_committee
    assert "Rows whose record a constant law reproduces" in after_committee
    after_analysis = srv.requests[2]["messages"][-1]["content"]
    assert after_analysis.startswith("<python_output>") and f"{n_boot + 4} 2 6 {n_boot + 4}" in after_analysis
    assert "the committee has 1 parseable hypothesis(es); at least 2 are required" in srv.requests[3]["messages"][-1]["content"]
    assert "Your reply could not be used" in srv.requests[4]["messages"][-1]["content"]

    synth_system, synth = srv.requests[5]["messages"][0]["content"], srv.requests[5]["messages"][1]["content"]
    assert "finalizing the law" in synth_system and "experiment records" in synth_system
    assert f"All experiments ({n_boot + 4}; numbered 1-{n_boot + 4})" in synth and DRAFT in synth
    assert "Derived law values" not in synth  # synthesis_diagnostics is off by default
    assert "<final_law>" in synth and "def discovered_law(mass1, mass2, distance):" in synth
    after = srv.requests[6]["messages"][-1]["content"]
    assert after.startswith("<python_output>") and f"True {n_boot + 4}" in after and "Replies left after this one: 1" in after
    _no_hidden_law(srv, "m0_gravity", "easy")


def test_planner_n_on_complex_system_completes(serve):  # noqa: F811
    srv = serve([ok(COMMITTEE), ok("<draft_law>\n" + LAW + "\n</draft_law>"), ok("<final_law>\n" + LAW + "\n</final_law>")])
    spec = TrialSpec(model="test-model", config=get_configuration("pairwise_n"), task="m0_gravity", system="complex_system",
                     difficulty="medium")
    record = run_trial(spec, _policy(srv))
    assert record.status == "completed" and srv.n_requests == 3
    first = srv.requests[0]["messages"][1]["content"]
    assert "Experimental apparatus: A 2-D plane" in first and "<python>" not in first
    out = json.loads(first.split("<experiment_output>\n")[2].split("\n</experiment_output>")[0])
    assert len(out[0]["position"][0]) == 2 and isinstance(out[0]["position"][0][0], str)  # [x, y] pairs of strings
    assert "Derived law values:" in first
    assert srv.requests[1]["messages"][-1]["content"].startswith("The planner (pairwise) selected and ran")
    _no_hidden_law(srv, "m0_gravity", "medium")


@pytest.mark.parametrize("config", ["variance_n", "random_c"])
def test_a_server_failure_fails_a_system_planner_trial(serve, config):  # noqa: F811
    srv = serve([ok(COMMITTEE)] + [error(503)] * 20)
    spec = TrialSpec(model="test-model", config=get_configuration(config), task="m0_gravity", system="simple_system")
    record = run_trial(spec, _policy(srv, max_retries=1))
    assert record.status == "failed" and record.error_kind == "server_error"
    assert record.evaluation == {} and record.judge["credited"] is False and record.judge["status"] == "skipped"
    assert record.final_source == "" and record.chat[-1]["event"] == "call_failed"
    assert srv.n_requests == 3  # the committee, then one call with one retry


def test_a_policy_without_system_planner_prompts_still_fails_clearly():
    class NoSystems:
        name = "no-systems"
        plays_system_planner = False

    spec = TrialSpec(model="x", config=get_configuration("variance_n"), task="m0_gravity", system="complex_system")
    record = run_trial(spec, NoSystems())
    assert record.status == "failed" and "no planner prompts for complex_system" in record.error


def _table(X, y, misfit):
    X, y, misfit = (np.asarray(a, dtype=np.float64) for a in (X, y, misfit))
    return DerivedTable(X, y, misfit, np.full(len(y), 1e-6))


def test_power_law_summary_recovers_exponents_from_the_reliable_rows_only():
    rng = np.random.default_rng(3)
    X = rng.uniform(1, 10, (8, 2))
    y = 3e-4 * X[:, 0] ** 2 / X[:, 1] ** 0.5
    y[0] *= 50  # a row whose record a constant law does not reproduce
    misfit = np.r_[1e5, np.full(7, 5.0)]
    text = derived_block(_table(X, y, misfit), ["a", "b"], ["a"], noisy=False)
    assert "Rows whose record a constant law reproduces (misfit <= 100): 7 of 8." in text
    assert "|L| proportional to a**2.000 * b**-0.500 (R^2 = 1.000000; L is positive in every one)" in text
    assert "0.0003" not in text  # the factor is not shown (as in the vanilla diagnostics)
    assert "a is read from the request" in text and "b is the constant that imitates" in text
    assert text.count("\n1  ") == 1 and "\n8  " in text  # every row listed
    later = derived_block(_table(X, y, misfit), ["a", "b"], ["a"], noisy=False, start=6, full=False)
    assert "Derived law values of experiments 7-8" in later and "\n1  " not in later and "Automatic" not in later
    # the fit counts every row even when only new ones are listed
    assert "7 of 8" in later


def test_power_law_summary_declines_mixed_signs_and_unvaried_inputs():
    X = np.array([[1.0, 2.0], [2.0, 2.0], [3.0, 2.0], [4.0, 2.0]])
    keep = np.ones(4, dtype=bool)
    assert power_law_summary(X, np.array([1.0, -2.0, 3.0, 4.0]), ["a", "b"], keep) is None
    text = power_law_summary(X, -2.0 * X[:, 0] ** 3, ["a", "b"], keep)
    assert text is not None and "proportional to a**3.000 (R^2 = 1.000000; L is negative" in text
    assert "not varied in those rows: b" in text
    assert power_law_summary(X[:2], X[:2, 0], ["a", "b"], keep[:2]) is None  # too few rows


def test_reliable_threshold_follows_the_noise():
    misfit = np.array([1e4, 2e4, 3e4])
    assert reliable_threshold(misfit, noisy=False) == 100.0
    assert reliable_threshold(misfit, noisy=True) == pytest.approx(2e5)


def test_a_vanilla_planner_conversation_keeps_the_vanilla_prompts(serve):  # noqa: F811
    from etc_fast.llm import _prompts as P

    srv = serve([ok(COMMITTEE), ok("<draft_law>\n" + LAW + "\n</draft_law>"), ok("<final_law>\n" + LAW + "\n</final_law>")])
    record = run_trial(TrialSpec(model="test-model", config=get_configuration("variance_n"), task="m0_gravity"), _policy(srv))
    assert record.status == "completed" and srv.n_requests == 3
    assert srv.requests[0]["messages"][0]["content"] == P.planner_system_prompt(False)
    assert srv.requests[2]["messages"][0]["content"] == P.synthesis_system_prompt(False)
    for _, text in _sent(srv):
        assert "acts inside an apparatus" not in text and "Derived law values" not in text and "<experiment_output>" not in text
