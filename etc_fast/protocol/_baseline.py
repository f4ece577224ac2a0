"""The free-form baseline loop (NewtonBench vanilla and code-assisted agents).

``baseline_rounds`` rounds (NewtonBench: 10), one decision each: an experiment request of any size,
a Python analysis (interpreter variant only; one per round, and a run uses the round), or the final
law (ends the trial, status ``completed``). An unusable reply also uses the round. After the last
round one forced final call is made (status ``max_turns_reached``). Baselines get no diagnostics.

Request size: NewtonBench runs every point of a request. Here one request runs at most
:data:`MAX_EXPERIMENT_POINTS` points (10,000: far above anything a real agent asks for, low enough
that a runaway reply cannot exhaust memory or time); beyond it, as with the measurement budget, the
first points are run and the feedback says so. A configuration may set its own cap through a
``max_experiment_points`` field.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from etc_fast.protocol._planner import Outcome, _decide_event
from etc_fast.protocol._state import TrialState, run_analysis
from etc_fast.protocol._types import Observation, to_jsonable

#: Most points one experiment request runs (the rest are not measured; the feedback says so).
MAX_EXPERIMENT_POINTS = 10_000

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
    feedback: str | None = None
    fkind: str | None = None
    new_rows = 0
    for r in range(cfg.baseline_rounds):
        X_obs, y_obs = state.frozen_observations()
        obs = Observation(
            phase="baseline", task=state.view, X=X_obs, y=y_obs, diagnostics=None, turn=r,
            turns_left=cfg.baseline_rounds - r - 1, measurements_used=state.measurements,
            measurements_left=state.budget_left, allowed=allowed, interpreter=cfg.interpreter,
            feedback=feedback, noise=float(spec.noise), batch_cap=cfg.batch_cap, feedback_kind=fkind,
            new_rows=new_rows,
        )
        action, ev = _decide_event(state, obs, "baseline", r, None, max_points=cap)
        if r == 0 and begin_error is not None:
            ev["policy_begin_error"] = begin_error
        new_rows = 0
        kind = action.kind
        if kind == "final":
            ev["outcome"] = "final law submitted"
            state.events.append(ev)
            return Outcome(status="completed", final_source=action.source, submission_origin="baseline")
        if kind == "experiment":
            feedback, fkind, new_rows = _experiment(state, action.points, ev, cap)
        elif kind == "analysis" and cfg.interpreter:
            feedback, ev["analysis"] = run_analysis(state, action.code)
            fkind = "analysis"
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
        interpreter=cfg.interpreter, feedback=feedback, noise=float(spec.noise), batch_cap=cfg.batch_cap,
        feedback_kind=fkind, new_rows=new_rows,
    )
    action, ev = _decide_event(state, obs, "final", 0, None)
    if action.kind == "final":
        ev["outcome"] = "forced final law submitted"
        state.events.append(ev)
        return Outcome(status="max_turns_reached", final_source=action.source, submission_origin="forced")
    ev["outcome"] = f"no law at the forced final call ({action.error or action.kind})"
    state.events.append(ev)
    return Outcome(status="max_turns_reached", final_source="", submission_origin="none")


def _experiment(state: TrialState, points: Any, ev: dict[str, Any], cap: int) -> tuple[str, str, int]:
    """Run an experiment request: cap, parse, truncate to the budget, measure. Returns (feedback, kind, rows).

    Only the first ``cap`` points are looked at, so the cost never grows with the request's length.
    """
    n_req = len(points)
    try:
        X_req = state.task.inputs_from_request(list(points[:cap]))
    except Exception as exc:  # noqa: BLE001 - bad requests are the policy's problem, never the trial's
        ev["outcome"] = f"bad experiment request: {exc}"
        return f"Invalid experiment request: {exc}. No measurement was taken.", "repair", 0
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
