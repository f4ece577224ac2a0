"""NewtonBench free-form baseline semantics."""

from __future__ import annotations

import json
import math

from etc_fast.protocol import Action
from etc_fast.protocol._baseline import INVALID_VANILLA, MAX_VALIDATION_RETRIES, nan_law
from tests.protocol._helpers import GRAVITY_LAW, analysis, experiment, final, make_spec

P = {"mass1": 10.0, "mass2": 20.0, "distance": 3.0}


def turns(rec):
    return [e for e in rec.events if e.get("phase") in ("baseline", "final") and "turn" in e]


def test_experiment_then_final_completes(play):
    rec, pol = play(make_spec("baseline_n"), [experiment(P, P, {**P, "distance": 9.0}), final()])
    assert rec.measurements == 3
    assert rec.observations["source"] == ["experiment"] * 3
    assert rec.status == "completed" and rec.submission_origin == "baseline"
    assert rec.final_source == GRAVITY_LAW
    assert rec.diagnostics == [] and all(o.diagnostics is None for o in pol.observations)
    assert [b[0] for b in pol.begins] == ["baseline"]
    fb = pol.observations[1].feedback
    assert fb.startswith("<experiment_output>") and pol.observations[1].feedback_kind == "experiment"
    values = json.loads(fb.splitlines()[1])
    assert len(values) == 3 and all(isinstance(v, str) and "e" in v for v in values)
    assert float(values[0]) == rec.observations["y"][0]
    assert pol.observations[1].new_rows == 3


def test_large_requests_are_not_capped(play):
    rec, _ = play(make_spec("baseline_n"), [experiment(*([P] * 37)), final()])
    assert rec.measurements == 37


def test_invalid_replies_use_the_round(play):
    rec, pol = play(make_spec("baseline_n"), [Action(kind="invalid", error="no tag"), analysis("print(1)"), final()])
    assert pol.observations[1].feedback == INVALID_VANILLA
    assert pol.observations[2].feedback == INVALID_VANILLA  # no interpreter: analysis is an invalid reply
    assert pol.observations[2].turn == 2
    assert rec.measurements == 0 and rec.status == "completed"


def test_forced_final_call_after_the_last_round(play):
    spec = make_spec("baseline_n", baseline_rounds=2)
    rec, pol = play(spec, [experiment(P), experiment(P, P), final()])
    assert rec.status == "max_turns_reached" and rec.submission_origin == "forced"
    last = pol.observations[-1]
    assert last.phase == "final" and last.allowed == frozenset({"final"})
    assert last.feedback.startswith("<experiment_output>")  # the reply to round 2's experiment
    assert last.feedback_kind == "experiment" and last.new_rows == 2
    assert rec.measurements == 3


def test_ten_rounds_then_forced_call_without_a_law(play):
    rec, pol = play(make_spec("baseline_n"), [experiment(P)] * 10)
    assert len(pol.observations) == 11
    assert rec.measurements == 10
    # NewtonBench substitutes the signature returning float('nan') when no law can be extracted
    assert rec.status == "max_turns_reached" and rec.submission_origin == "forced_nan"
    assert rec.final_source == nan_law(("mass1", "mass2", "distance"))
    assert "float('nan')" in rec.final_source
    assert math.isnan(float(rec.evaluation["rmsle"])) and rec.evaluation["n_finite_pred"] == 0
    assert rec.judge["credited"] is False


def test_code_failing_validation_does_not_use_the_round(play):
    script = [analysis("print(("), analysis("def f(:\n  pass"), experiment(P), final()]
    rec, pol = play(make_spec("baseline_c", baseline_rounds=2), script)
    # two validation failures, then the experiment still runs in round 0 and the final law in round 1
    assert [o.turn for o in pol.observations] == [0, 0, 0, 1]
    assert pol.observations[1].feedback_kind == "validation" and "validation" in pol.observations[1].feedback
    assert pol.observations[1].analysis_result["validation_error"].startswith("syntax error")
    assert pol.observations[1].analysis_result["code"] == "print(("
    assert "round is not used" in pol.observations[2].feedback
    assert rec.measurements == 1 and rec.status == "completed"
    assert not any("analysis" in e for e in rec.events)  # nothing ran in the sandbox


def test_validation_retries_are_bounded(play):
    bad = analysis("(((")
    rec, pol = play(make_spec("baseline_c", baseline_rounds=2), [bad] * (2 * (MAX_VALIDATION_RETRIES + 1)) + [final()])
    turns_seen = [o.turn for o in pol.observations if o.phase == "baseline"]
    assert turns_seen == [0] * (MAX_VALIDATION_RETRIES + 1) + [1] * (MAX_VALIDATION_RETRIES + 1)
    assert pol.observations[-1].phase == "final" and rec.submission_origin == "forced"


def test_valid_code_that_fails_at_run_time_uses_the_round(play):
    rec, pol = play(make_spec("baseline_c", baseline_rounds=2), [analysis("1/0"), final()])
    assert pol.observations[1].turn == 1 and pol.observations[1].feedback_kind == "analysis"


def test_bad_request_is_feedback_not_a_crash(play):
    rec, pol = play(make_spec("baseline_n"), [experiment({"mass1": 1.0}), experiment({**P, "mass2": "heavy"}), final()])
    assert rec.measurements == 0
    for o in pol.observations[1:]:
        assert o.feedback.startswith("Invalid experiment request") and o.feedback_kind == "request_error"
    assert "mass2" in pol.observations[1].feedback or "mass2" in pol.observations[2].feedback


def test_blocked_operations_fail_validation_as_in_newtonbench(play):
    from etc_fast.protocol._baseline import analysis_validation_error

    for code in ("import os", "x = 1  # import   SYS", "x = eval('1')", "open('f')", "print(globals())", "__import__('math')"):
        assert analysis_validation_error(code) is not None and "blocked" in analysis_validation_error(code), code
    assert analysis_validation_error("import math\nprint(math.pi)") is None
    rec, pol = play(make_spec("baseline_c", baseline_rounds=1), [analysis("import os\nprint(1)"), final()])
    assert pol.observations[1].feedback_kind == "validation" and pol.observations[1].turn == 0
    assert not any("analysis" in e for e in rec.events)


def test_interpreter_starts_empty_by_default(play):
    # NewtonBench's interpreter has no observation variables: the code must carry its numbers.
    rec, pol = play(make_spec("baseline_c"), [experiment(P), analysis("print(X.shape)"), analysis("print(2 + 2)"), final()])
    assert pol.observations[2].feedback_kind == "analysis" and pol.observations[2].analysis_result["ok"] is False
    assert "name 'X' is not defined" in pol.observations[2].analysis_result["error"]
    assert pol.observations[3].analysis_result == {**pol.observations[3].analysis_result, "ok": True, "code": "print(2 + 2)"}
    assert pol.observations[3].analysis_result["stdout"].strip() == "4"
    assert pol.observations[0].interpreter_data == "empty"


def test_interpreter_baseline_runs_one_analysis_per_round(play):
    rec, pol = play(make_spec("baseline_c", interpreter_data="preloaded"),
                    [experiment(P, P), analysis("print(X.shape, y.size)"), final()])
    assert pol.observations[0].allowed == frozenset({"experiment", "final", "analysis"})
    assert pol.observations[2].feedback_kind == "analysis"
    assert "(2, 3) 2" in pol.observations[2].feedback
    fb = pol.observations[1].feedback
    assert json.loads(fb.splitlines()[1])[0] == rec.observations["y"][0]  # raw numbers
    assert rec.status == "completed"


def test_forced_call_after_an_invalid_last_round(play):
    rec, pol = play(make_spec("baseline_c", baseline_rounds=1), [Action(kind="invalid", error="x"), final()])
    assert pol.observations[-1].phase == "final" and pol.observations[-1].feedback_kind == "repair"
    assert rec.submission_origin == "forced"


def test_measurement_budget_truncates_requests(play):
    spec = make_spec("baseline_n", measurement_budget=5)
    rec, pol = play(spec, [experiment(P, P, P), experiment(P, P, P), experiment(P), final()])
    assert rec.measurements == 5
    assert "Only the first 2 of 3" in pol.observations[2].feedback
    assert pol.observations[3].feedback_kind == "refusal"
    assert pol.observations[3].measurements_left == 0


def test_planner_actions_are_invalid_in_a_baseline(play):
    rec, pol = play(make_spec("baseline_n"), [Action(kind="committee", hypotheses=("mass1",)), final()])
    assert pol.observations[1].feedback == INVALID_VANILLA
