"""The free-form baseline loop (NewtonBench vanilla and code-assisted agents), on any lab.

Written once against :class:`etc_fast.labs.Lab`: on equations a request's points are input rows and
the outputs law values; on a system they are control dicts and NewtonBench's series.

``baseline_rounds`` rounds (NewtonBench: 10), one decision each: an experiment request of any size,
a Python analysis (interpreter variant only; one per round, and a run uses the round), or the final
law (ends the trial, status ``completed``). An unusable reply also uses the round. Analysis code
that fails validation does not: as in NewtonBench's code-assisted agent, the checks are a Python
parse and a blocklist of operations (:data:`BLOCKED_CODE_PATTERNS`, matched case-insensitively),
and the policy is asked again in the same round (at most ``max_validation_retries`` times per round,
default 3, so a policy that never sends valid code cannot loop forever; NewtonBench sets no bound).
After the last round one forced final call is made (status ``max_turns_reached``); when it yields no
law, NewtonBench's stand-in (the signature followed by ``return float('nan')`` on the same line) is
submitted (origin ``forced_nan``). Baselines get no diagnostics.

The interpreter starts as the configuration's ``interpreter_data`` says: ``empty`` (the equation
baselines' default, NewtonBench's: no observation variable exists, the code carries its own numbers)
or ``preloaded`` (the systems lab's default: its records, as the system prompts describe them).

An experiment request that cannot be run (a missing required key, a value that is not a number)
uses the round and gets the feedback kind ``request_error``: NewtonBench's code-assisted agent
sends no reply at all then, its vanilla agent crashes and restarts the whole trial; an LLM policy
words its reply (see docs/guide/fidelity.md).

Request size: NewtonBench runs every point of a request. Here one request runs at most the lab's
cap (equations: :data:`MAX_EXPERIMENT_POINTS`, 10,000 points, far above anything a real agent asks
for, low enough that a runaway reply cannot exhaust memory or time; systems: 100 experiments, each a
simulation); beyond it, as with the measurement budget, the first points are run and the feedback
says so. A configuration may set its own cap through ``max_experiment_points`` (on every lab).
"""

from __future__ import annotations

import ast
import re
from typing import Any

from etc_fast.labs import MAX_EXPERIMENT_POINTS, RequestError
from etc_fast.protocol._planner import Outcome, _decide_event, observation
from etc_fast.protocol._state import TrialState, run_analysis

#: Analysis replies failing validation that a round absorbs without being used, unless the
#: configuration sets ``max_validation_retries`` (NewtonBench sets no limit; this only bounds a
#: policy that never sends valid code).
MAX_VALIDATION_RETRIES = 3

#: NewtonBench's code checks (regular expressions searched case-insensitively in the code); a match
#: is a validation failure, as is code that does not parse.
BLOCKED_CODE_PATTERNS = (
    r"import\s+os", r"import\s+sys", r"import\s+subprocess", r"__import__", r"eval\(", r"exec\(", r"open\(",
    r"file\(", r"input\(", r"raw_input\(", r"compile\(", r"globals\(", r"locals\(",
)


def nan_law(variable_names: Any) -> str:
    """NewtonBench's stand-in when no law can be extracted: the signature and ``return
    float('nan')`` on one line (it passes validation; its RMSLE is NaN)."""
    return f"def discovered_law({', '.join(variable_names)}): return float('nan')"


def analysis_validation_error(code: str) -> str | None:
    """Why analysis code fails NewtonBench's validation, or ``None``: it does not parse as Python,
    or it matches one of :data:`BLOCKED_CODE_PATTERNS` (checked in that order)."""
    try:
        ast.parse(code)
    except SyntaxError as exc:
        where = f" (line {exc.lineno})" if exc.lineno else ""
        return f"syntax error{where}: {exc.msg}"
    except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
        return f"the code cannot be parsed: {type(exc).__name__}"
    for pattern in BLOCKED_CODE_PATTERNS:
        if re.search(pattern, code, re.IGNORECASE):
            return f"the code uses a blocked operation (pattern {pattern})"
    return None

INVALID_VANILLA = (
    "That reply held no usable action. Request measurements with a <run_experiment> block holding a JSON "
    "list of input objects, or submit your law in a <final_law> block."
)
INVALID_CODE = (
    "That reply held no usable action. Take exactly one action per turn: a <run_experiment> block, a "
    "<python> block, or your law in a <final_law> block once you are confident."
)


def request_cap(cfg: Any, default: int = MAX_EXPERIMENT_POINTS) -> int:
    """Points one experiment request may run: the configuration's ``max_experiment_points`` when it
    has one, else ``default`` (the lab's cap; :data:`MAX_EXPERIMENT_POINTS` on equations)."""
    cap = getattr(cfg, "max_experiment_points", None)
    if cap is None:
        return int(default)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise ValueError(f"max_experiment_points must be a positive integer, got {cap!r}")
    return cap


def run_baseline(state: TrialState) -> Outcome:
    """Play one free-form baseline trial on ``state``."""
    cfg, lab = state.config, state.lab
    begin_error = state.begin("baseline")
    invalid_text = INVALID_CODE if cfg.interpreter else INVALID_VANILLA
    cap = request_cap(cfg, lab.default_request_cap)
    data_mode = lab.interpreter_data()
    max_retries = cfg.resolved_validation_retries
    feedback: str | None = None
    fkind: str | None = None
    result: dict[str, Any] | None = None
    new_rows = 0
    retries = 0
    r = 0
    while r < cfg.baseline_rounds:
        obs, _ = observation(
            state, "baseline", r, cfg.baseline_rounds - r - 1, False, feedback=feedback, fkind=fkind,
            new_rows=new_rows, left=state.budget_left, analysis_result=result, interpreter_data=data_mode,
        )
        action, ev = _decide_event(state, obs, "baseline", r, None, max_points=cap)
        if r == 0 and retries == 0 and begin_error is not None:
            ev["policy_begin_error"] = begin_error
        new_rows = 0
        result = None
        kind = action.kind
        if kind == "final":
            ev["outcome"] = "final law submitted"
            state.events.append(ev)
            return Outcome(status="completed", final_source=action.source, submission_origin="baseline")
        problem = analysis_validation_error(action.code) if kind == "analysis" and cfg.interpreter else None
        if problem is not None and retries < max_retries:
            retries += 1
            feedback = (
                f"The Python code failed validation ({problem}); it was not run and the round is not used. "
                "Send corrected code, an experiment, or your final law."
            )
            fkind = "validation"
            result = {"ok": False, "validation_error": problem, "code": action.code, "stdout": "", "error": problem}
            ev["outcome"] = f"analysis code failed validation; round not used (retry {retries} of {max_retries})"
            ev["feedback"] = feedback
            ev["feedback_kind"] = fkind
            state.events.append(ev)
            continue
        retries = 0
        r += 1
        if kind == "experiment":
            feedback, fkind, new_rows = _experiment(state, action.points, ev, cap)
        elif kind == "analysis" and cfg.interpreter and problem is not None:
            feedback = f"The Python code failed validation ({problem}); it was not run."
            fkind = "validation"
            result = {"ok": False, "validation_error": problem, "code": action.code, "stdout": "", "error": problem}
            ev["outcome"] = "analysis code failed validation; retries spent, round used"
        elif kind == "analysis" and cfg.interpreter:
            feedback, ev["analysis"] = run_analysis(state, action.code)
            fkind = "analysis"
            result = {**ev["analysis"], "code": action.code}
        else:
            feedback = invalid_text
            fkind = "repair"
            ev["outcome"] = f"invalid reply ({action.error or kind + ' is not a baseline action'})"
        ev["feedback"] = feedback
        ev["feedback_kind"] = fkind
        state.events.append(ev)

    # The forced call carries the reply to the last round's action; phase "final" tells the policy
    # that only a law is accepted now (an LLM policy adds its own forced-final instruction).
    obs, _ = observation(
        state, "final", 0, 0, False, feedback=feedback, fkind=fkind, new_rows=new_rows, left=0,
        analysis_result=result, interpreter_data=data_mode,
    )
    action, ev = _decide_event(state, obs, "final", 0, None)
    if action.kind == "final":
        ev["outcome"] = "forced final law submitted"
        state.events.append(ev)
        return Outcome(status="max_turns_reached", final_source=action.source, submission_origin="forced")
    ev["outcome"] = (
        f"no law at the forced final call ({action.error or action.kind}); NewtonBench's stand-in "
        "returning float('nan') is submitted"
    )
    state.events.append(ev)
    return Outcome(status="max_turns_reached", final_source=nan_law(state.task.variable_names), submission_origin="forced_nan")


def _experiment(state: TrialState, points: Any, ev: dict[str, Any], cap: int) -> tuple[str, str, int]:
    """Run an experiment request: cap, parse, truncate to the budget, measure. Returns (feedback, kind, rows).

    Only the first ``cap`` points are looked at, so the cost never grows with the request's length.
    """
    lab = state.lab
    n_req = len(points)
    try:
        items = lab.parse_request(list(points[:cap]))
    except RequestError as exc:  # bad requests are the policy's problem, never the trial's
        ev["outcome"] = f"bad experiment request: {exc}"
        return f"Invalid experiment request: {exc}. {lab.nothing_taken}.", "request_error", 0
    if n_req > cap:
        ev["capped_at"] = cap
    n_parsed = lab.count(items)
    n_ok = state.allowance(n_parsed)
    if n_ok == 0:
        ev["outcome"] = "refused: measurement budget spent"
        return (
            f"The measurement budget ({state.config.measurement_budget}) is spent; no experiment was run. "
            "Submit your final law with <final_law>.", "refusal", 0,
        )
    run = lab.head(items, n_ok)
    outputs = state.measure(run, "experiment")
    ev["measured"] = {**lab.measured_event(run, outputs), "requested": n_req}
    ev["outcome"] = lab.outcome_text(n_ok)
    text = lab.format_outputs(outputs, state.config.interpreter)
    if n_ok < n_req:
        reasons = []
        if n_req > cap:
            reasons.append(f"one request runs at most {cap} points")
        if n_ok < n_parsed:
            ev["truncated_by_budget"] = True
            reasons.append(f"the measurement budget ({state.config.measurement_budget}) is now spent")
        text += f"\nOnly the first {n_ok} of {n_req} requested experiments were run: " + "; ".join(reasons) + "."
    return text, "experiment", n_ok
