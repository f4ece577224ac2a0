"""The free-form baseline loop (NewtonBench vanilla and code-assisted agents).

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

The interpreter starts as the configuration's ``interpreter_data`` says: ``empty`` (the baselines'
default, NewtonBench's: no observation variable exists, the code carries its own numbers) or
``preloaded``.

An experiment request that cannot be run (a missing required key, a value that is not a number)
uses the round and gets the feedback kind ``request_error``: NewtonBench's code-assisted agent
sends no reply at all then, its vanilla agent crashes and restarts the whole trial; an LLM policy
words its reply (see docs/fidelity.md).

Request size: NewtonBench runs every point of a request. Here one request runs at most
:data:`MAX_EXPERIMENT_POINTS` points (10,000: far above anything a real agent asks for, low enough
that a runaway reply cannot exhaust memory or time); beyond it, as with the measurement budget, the
first points are run and the feedback says so. A configuration may set its own cap through a
``max_experiment_points`` field.
"""

from __future__ import annotations

import ast
import json
import re
from typing import Any

import numpy as np

from etc_fast.core import Observation, to_jsonable
from etc_fast.protocol._planner import Outcome, _decide_event
from etc_fast.protocol._state import TrialState, run_analysis

#: Most points one experiment request runs (the rest are not measured; the feedback says so).
MAX_EXPERIMENT_POINTS = 10_000

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


def request_cap(cfg: Any) -> int:
    """Points one experiment request may run: the configuration's ``max_experiment_points`` when it
    has one, else :data:`MAX_EXPERIMENT_POINTS`."""
    cap = getattr(cfg, "max_experiment_points", None)
    if cap is None:
        return int(MAX_EXPERIMENT_POINTS)
    if isinstance(cap, bool) or not isinstance(cap, int) or cap < 1:
        raise ValueError(f"max_experiment_points must be a positive integer, got {cap!r}")
    return cap


def format_experiment_output(y: np.ndarray, interpreter: bool) -> str:
    """The reply to an experiment in NewtonBench's format: ``{:.15e}`` strings (vanilla) or raw
    numbers, NaN written bare (interpreter variant). The LLM prompts use this formatter too."""
    vals = [float(v) for v in np.asarray(y, dtype=np.float64).reshape(-1)]
    if interpreter:
        return (
            f"<experiment_output>\n{json.dumps(vals)}\n</experiment_output>\n"
            "You can analyse these values with a <python> block."
        )
    return "<experiment_output>\n" + json.dumps([f"{v:.15e}" for v in vals]) + "\n</experiment_output>"


def run_baseline(state: TrialState) -> Outcome:
    """Play one free-form baseline trial on ``state``."""
    cfg, spec, task = state.config, state.spec, state.task
    begin_error = state.begin("baseline")
    allowed = frozenset({"experiment", "final"} | ({"analysis"} if cfg.interpreter else set()))
    invalid_text = INVALID_CODE if cfg.interpreter else INVALID_VANILLA
    cap = request_cap(cfg)
    preload = cfg.resolved_interpreter_data == "preloaded"
    max_retries = cfg.resolved_validation_retries
    feedback: str | None = None
    fkind: str | None = None
    result: dict[str, Any] | None = None
    new_rows = 0
    retries = 0
    r = 0
    while r < cfg.baseline_rounds:
        X_obs, y_obs = state.frozen_observations()
        obs = Observation(
            phase="baseline", task=state.view, X=X_obs, y=y_obs, diagnostics=None, turn=r,
            turns_left=cfg.baseline_rounds - r - 1, measurements_used=state.measurements,
            measurements_left=state.budget_left, allowed=allowed, interpreter=cfg.interpreter,
            feedback=feedback, noisy=bool(spec.noise > 0), batch_cap=cfg.batch_cap, feedback_kind=fkind,
            new_rows=new_rows, analysis_result=result, interpreter_data=cfg.resolved_interpreter_data,
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
            feedback, ev["analysis"] = run_analysis(state, action.code, preload=preload)
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
    X_obs, y_obs = state.frozen_observations()
    obs = Observation(
        phase="final", task=state.view, X=X_obs, y=y_obs, diagnostics=None, turn=0, turns_left=0,
        measurements_used=state.measurements, measurements_left=0, allowed=frozenset({"final"}),
        interpreter=cfg.interpreter, feedback=feedback, noisy=bool(spec.noise > 0), batch_cap=cfg.batch_cap,
        feedback_kind=fkind, new_rows=new_rows, analysis_result=result, interpreter_data=cfg.resolved_interpreter_data,
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
    return Outcome(status="max_turns_reached", final_source=nan_law(task.variable_names), submission_origin="forced_nan")


def _experiment(state: TrialState, points: Any, ev: dict[str, Any], cap: int) -> tuple[str, str, int]:
    """Run an experiment request: cap, parse, truncate to the budget, measure. Returns (feedback, kind, rows).

    Only the first ``cap`` points are looked at, so the cost never grows with the request's length.
    """
    n_req = len(points)
    try:
        X_req = state.task.inputs_from_request(list(points[:cap]))
    except Exception as exc:  # noqa: BLE001 - bad requests are the policy's problem, never the trial's
        ev["outcome"] = f"bad experiment request: {exc}"
        return f"Invalid experiment request: {exc}. No measurement was taken.", "request_error", 0
    if n_req > cap:
        ev["capped_at"] = cap
    n_ok = state.allowance(int(X_req.shape[0]))
    if n_ok == 0:
        ev["outcome"] = "refused: measurement budget spent"
        return (
            f"The measurement budget ({state.config.measurement_budget}) is spent; no experiment was run. "
            "Submit your final law with <final_law>.", "refusal", 0,
        )
    y = state.measure(X_req[:n_ok], "experiment")
    ev["measured"] = {"X": X_req[:n_ok].tolist(), "y": to_jsonable(y), "requested": n_req}
    ev["outcome"] = f"measured {n_ok} point(s)"
    text = format_experiment_output(y, state.config.interpreter)
    if n_ok < n_req:
        reasons = []
        if n_req > cap:
            reasons.append(f"one request runs at most {cap} points")
        if n_ok < X_req.shape[0]:
            ev["truncated_by_budget"] = True
            reasons.append(f"the measurement budget ({state.config.measurement_budget}) is now spent")
        text += f"\nOnly the first {n_ok} of {n_req} requested experiments were run: " + "; ".join(reasons) + "."
    return text, "experiment", n_ok
