"""An LLM baseline on a system: the opening prompt carries the apparatus block, outputs go back in NewtonBench's format."""

from __future__ import annotations

import json

from etc_fast.llm import LLMClient
from etc_fast.policies.llm import LLMPolicy
from etc_fast.protocol import TrialSpec, get_configuration, run_trial
from tests.llm._server import ok
from tests.llm.conftest import fast_settings, serve  # noqa: F401 - the fixture

LAW = "def discovered_law(mass1, mass2, distance):\n    C = 6.674e-5\n    return C * mass1 * mass2 / distance ** 1.5"
REQ = '<run_experiment>\n[{"mass1": 500.0, "mass2": 2.0, "distance": 3.0, "time_step": 0.1, "duration": 0.5}]\n</run_experiment>'


def test_llm_baseline_on_a_system(serve):  # noqa: F811
    srv = serve([ok("I will probe.\n" + REQ, prompt_tokens=10, completion_tokens=5),
                 ok("<final_law>\n" + LAW + "\n</final_law>", prompt_tokens=10, completion_tokens=5)])
    policy = LLMPolicy(client=LLMClient(fast_settings(srv.base_url, cache_mode="off"), sleep=lambda s: None, environ={}))
    spec = TrialSpec(model="test-model", config=get_configuration("baseline_n"), task="m0_gravity", system="simple_system")
    record = run_trial(spec, policy)
    assert record.status == "completed" and record.measurements == 1 and record.judge["credited"]
    first = srv.requests[0]["messages"][1]["content"]
    assert "Experimental apparatus: A 1-D track" in first and "`time_step`" in first and "Confirmed assisting laws" in first
    assert "def discovered_law(mass1, mass2, distance)" in first
    second = srv.requests[1]["messages"][3]["content"]
    assert second.startswith("<experiment_output>\n")
    out = json.loads(second.split("\n")[1])
    assert out[0]["position"][:2] == ["3.000000e+00", "2.999968e+00"] and len(out[0]["time"]) == 5
    assert record.observations["simulated_points"] == 5

