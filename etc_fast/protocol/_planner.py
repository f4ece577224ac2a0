"""The explore-then-commit planner loop (paper S1, Algorithm S1) and fresh synthesis, on any lab.

The loop is written once against :class:`etc_fast.labs.Lab`: what an experiment is, the pool, the
bootstrap, the selection rule's inputs and how outputs are shown come from the trial's lab.

1. Build the candidate pool; run the lab's bootstrap (equations: the structured probes; systems:
   the pool's first points).
2. Up to ``exploration_turns`` turns: show observations (+ diagnostics); the policy answers with a
   draft (stored; exploration ends), an analysis request (interpreter variants; output returned),
   or a committee of hypotheses. Scored planners need at least two parseable hypotheses, else a
   repair turn. A planner whose rule does not score the committee (``random``, the GP rules:
   :func:`etc_fast.core.scores_committee`) always selects: whatever else it gets (a committee with
   fewer than two parseable hypotheses, an unusable or disallowed reply), it continues with
   fallback hypotheses. A selecting turn measures up to ``batch_cap`` unused pool points and appends them.
3. Fresh synthesis: a new context with the task, all observations and any non-trivial draft (the
   paper's input; the ``synthesis_diagnostics`` knob adds the diagnostics); no new measurements.
   A valid synthesis law replaces the draft; else the draft stands; else the submission is
   invalid (the record says so).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from etc_fast.core import Action, Observation, clip_text, derive_seed, scores_committee, to_jsonable
from etc_fast.labs import Pool
from etc_fast.protocol._state import MAX_RECORDED_ITEMS, TrialState, action_record, run_analysis
from etc_fast.protocol._submission import is_trivial_submission, precheck_submission

#: Hypotheses of a committee that are used; extra ones are dropped (and the policy is told).
MAX_COMMITTEE = 5


@dataclasses.dataclass
class Outcome:
    """What a loop hands back to :func:`run_trial`."""

    status: str
    final_source: str = ""
    submission_origin: str = "none"
    draft: str | None = None
    synthesis_input: dict[str, Any] | None = None


def _obs_summary(obs: Observation, diag_index: int | None) -> dict[str, Any]:
    return {
        "n_observations": int(obs.y.shape[0]),
        "measurements_used": obs.measurements_used,
        "measurements_left": obs.measurements_left,
        "turns_left": obs.turns_left,
        "allowed": sorted(obs.allowed),
        "feedback": obs.feedback,
        "feedback_kind": obs.feedback_kind,
        "new_rows": obs.new_rows,
        "diagnostics_index": diag_index,
        "draft_shown": obs.draft is not None,
    }


def _decide_event(
    state: TrialState, obs: Observation, phase: str, turn: int, diag_index: int | None, **record: Any
) -> tuple[Action, dict[str, Any]]:
    """Ask the policy for its action on ``obs``; returns it with the start of the turn's event record.

    ``record`` goes to :func:`action_record` (e.g. ``max_points``); a policy problem is logged as
    ``policy_error``.
    """
    action, problem = state.decide(obs)
    ev: dict[str, Any] = {
        "phase": phase, "turn": turn, "observation": _obs_summary(obs, diag_index),
        "action": action_record(action, **record),
    }
    if problem is not None:
        ev["policy_error"] = problem
    return action, ev


# ----------------------------------------------------------------------------------------
# Exploration
# ----------------------------------------------------------------------------------------
def run_planner(state: TrialState) -> Outcome:
    """Play one planner trial on ``state`` (bootstrap, exploration, synthesis)."""
    cfg, lab = state.config, state.lab

    pool = lab.pool()
    available = np.ones(pool.U.shape[0], dtype=bool)
    n_boot, boot_event = lab.bootstrap(pool, available, state.budget_left)
    state.events.append(boot_event)

    begin_error = state.begin("explore")
    draft: str | None = None
    last_committee: list[str] = []
    feedback: str | None = None
    fkind: str | None = None
    new_rows = n_boot
    end_reason = "turns_exhausted"
    for turn in range(cfg.exploration_turns):
        left = state.budget_left
        if left == 0:
            end_reason = "budget_exhausted"
            break
        if not available.any():
            end_reason = "pool_exhausted"
            break
        obs, diag_index = observation(state, "explore", turn, cfg.exploration_turns - turn - 1, cfg.diagnostics,
                                      feedback=feedback, fkind=fkind, new_rows=new_rows, left=left)
        action, ev = _decide_event(state, obs, "explore", turn, diag_index)
        new_rows = 0
        kind = action.kind
        if kind == "draft":
            draft = action.source
            ev["outcome"] = "draft stored; exploration ends"
            state.events.append(ev)
            end_reason = "draft"
            break
        if kind == "analysis" and cfg.interpreter:
            feedback, ev["analysis"] = run_analysis(state, action.code)
            fkind = "analysis"
        elif kind == "committee":
            feedback, fkind, new_rows, parsed_ok = _committee_turn(state, action, turn, pool, available, ev)
            if parsed_ok:
                last_committee = parsed_ok
        elif not scores_committee(cfg.acquisition):
            # Algorithm S1: only scored planners repair; a random planner (and a GP planner, which
            # does not score the committee either) selects on every turn that is neither a draft
            # nor an allowed analysis.
            if kind == "analysis":
                why = "analysis requests are not available in this configuration (no interpreter)"
            elif kind in ("experiment", "final"):
                why = f"{'experiment requests' if kind == 'experiment' else 'final submissions'} are not accepted during exploration"
            else:
                why = f"the reply could not be used ({action.error})"
            ev["unusable_reply"] = why
            feedback, fkind, new_rows, _ = _committee_turn(
                state, Action(kind="committee"), turn, pool, available, ev,
                lead=f"No committee was received: {why[0].upper() + why[1:]}.",
            )
        else:  # a scored planner's unusable reply: refused or repaired, the turn is used
            feedback, fkind = _unaccepted(action, cfg.interpreter)
        ev["feedback"] = feedback
        ev["feedback_kind"] = fkind
        state.events.append(ev)

    state.events.append({
        "phase": "explore", "event": "exploration_end", "reason": end_reason,
        "measurements": state.measurements, "policy_begin_error": begin_error,
    })
    status = _STATUS[end_reason]

    if cfg.synthesis == "fresh":
        out = _fresh_synthesis(state, draft)
    else:
        out = _no_synthesis(state, draft, last_committee)
    out.status = status
    out.draft = draft
    return out


#: Trial status by the reason exploration ended.
_STATUS = {
    "draft": "completed",
    "turns_exhausted": "max_turns_reached",
    "budget_exhausted": "budget_exhausted",
    "pool_exhausted": "pool_exhausted",
}

#: Action kinds each phase accepts (``analysis`` is added with an interpreter, never at the forced
#: final call).
_ALLOWED = {
    "explore": frozenset({"committee", "draft"}),
    "synthesis": frozenset({"final"}),
    "baseline": frozenset({"experiment", "final"}),
    "final": frozenset({"final"}),
}


def observation(state: TrialState, phase: str, turn: int, turns_left: int, diagnostics: bool, *,
                feedback: str | None, fkind: str | None, new_rows: int = 0, left: int | None = 0,
                draft: str | None = None, **extra: Any) -> tuple[Observation, int | None]:
    """What the policy sees at one decision: the protocol's fields and the lab's (its diagnostics,
    a system's records). Returns it with the index of the diagnostics entry shown (``None``: none)."""
    cfg = state.config
    allowed = _ALLOWED[phase] | ({"analysis"} if cfg.interpreter and phase != "final" else set())
    fields, diag_index = state.lab.observation_fields(phase, turn, diagnostics)
    X_obs, y_obs = state.lab.frozen_observations()
    obs = Observation(
        phase=phase, task=state.view, X=X_obs, y=y_obs, turn=turn, turns_left=turns_left,  # type: ignore[arg-type]
        measurements_used=state.measurements, measurements_left=left, allowed=frozenset(allowed),
        interpreter=cfg.interpreter, draft=draft, feedback=feedback, noisy=bool(state.spec.noise > 0),
        batch_cap=cfg.batch_cap, feedback_kind=fkind, new_rows=new_rows, **fields, **extra,
    )  # fmt: skip
    return obs, diag_index


def _unaccepted(action: Action, interpreter: bool) -> tuple[str, str]:
    """``(feedback, kind)`` for a scored planner's reply it cannot act on: an analysis without an
    interpreter or an experiment/final request (refused), or an invalid reply (repair)."""
    kind = action.kind
    if kind == "analysis":
        return (
            "Analysis requests are not available in this configuration (no interpreter); the turn is "
            "used. Propose a committee of hypotheses or submit a draft law."
        ), "refusal"
    if kind in ("experiment", "final"):
        what = "Experiment requests" if kind == "experiment" else "Final submissions"
        return (
            f"{what} are not accepted during exploration; the turn is used. The planner chooses the "
            "measurements: propose a committee of hypotheses, or end exploration with a draft law."
        ), "refusal"
    return (
        f"Your reply could not be used ({action.error}); the turn is used. Reply with a committee of "
        f"2-{MAX_COMMITTEE} hypotheses" + (", an analysis request" if interpreter else "") + " or a draft law."
    ), "repair"


def _parse_committee(hyps: list[Any], names: tuple[str, ...]) -> list[dict[str, Any]]:
    from etc_fast.expr import ExprError, parse

    parsed = []
    for h in hyps:
        if not isinstance(h, str):
            parsed.append({"text": repr(h)[:200], "ok": False, "error": f"not a string ({type(h).__name__})", "position": None})
            continue
        try:
            prog = parse(h, names)
        except ExprError as exc:
            parsed.append({"text": clip_text(h, 2000), "ok": False, "error": exc.message, "position": exc.position})
        except Exception as exc:  # noqa: BLE001 - report, never crash on a hypothesis
            parsed.append({"text": clip_text(h, 2000), "ok": False, "error": f"{type(exc).__name__}: {exc}", "position": None})
        else:
            parsed.append({"text": h, "ok": True, "canonical": prog.text, "nuisance": list(prog.nuisance)})
    return parsed


def _committee_turn(
    state: TrialState,
    action: Any,
    turn: int,
    pool: Pool,
    available: np.ndarray,
    ev: dict[str, Any],
    lead: str | None = None,
) -> tuple[str, str, int, list[str]]:
    """Handle one committee: repair, or select + measure. Returns (feedback, kind, new rows, parsed texts).

    ``lead`` is put before the selection message (a planner that does not score the committee,
    selecting after an unusable reply).
    """
    cfg, lab, names = state.config, state.lab, state.task.variable_names
    hyps = action.hypotheses
    used = list(hyps[:MAX_COMMITTEE])
    n_dropped = max(0, len(hyps) - MAX_COMMITTEE)
    parsed = _parse_committee(used, names)
    ok = [p["text"] for p in parsed if p["ok"]]
    shown_dropped = hyps[MAX_COMMITTEE : MAX_COMMITTEE + MAX_RECORDED_ITEMS]
    ev["committee"] = {
        "parsed": parsed,
        "dropped": [clip_text(h, 2000) if isinstance(h, str) else repr(h)[:200] for h in shown_dropped],
    }
    if n_dropped > len(shown_dropped):
        ev["committee"]["n_dropped"] = n_dropped
    notes = [f"Only the first {MAX_COMMITTEE} hypotheses are used; {n_dropped} dropped."] if n_dropped else []
    failures = [f"  - {p['text']!r}: {p['error']}" + (f" ({p['position']})" if p.get("position") else "") for p in parsed if not p["ok"]]
    scored = scores_committee(cfg.acquisition)

    if scored and len(ok) < 2:
        msg = (
            f"Repair needed: the committee has {len(ok)} parseable hypothesis(es); at least 2 are required. "
            f"{lab.nothing_taken}; the turn is used."
        )
        if failures:
            msg += "\nCould not parse:\n" + "\n".join(failures)
        ev["outcome"] = "repair: fewer than 2 parseable hypotheses"
        return "\n".join([msg, *notes]), "repair", 0, ok

    committee = [h for h in used if isinstance(h, str)]
    stand_ins = lab.fallback_hypotheses() if not scored and len(ok) < 2 else []
    if stand_ins:
        fallback = [h for h in stand_ins if h not in ok]
        committee = ok + fallback
        ev["fallback_hypotheses"] = fallback
        notes.append(f"Fewer than 2 parseable hypotheses; selection continued with fallback hypotheses: {fallback}.")

    seed = derive_seed(state.spec.pool_seed, turn)
    noisy_step = lab.noisy_selection()
    k = min(cfg.batch_cap, state.allowance(cfg.batch_cap), int(available.sum()) + (state.measurements if noisy_step else 0))
    step = lab.select(committee, ok, pool, available, k, seed, ev)
    ev["selection"] = to_jsonable(step.to_record())
    ev["selection_seed"] = seed
    idx = np.asarray(step.indices, dtype=np.int64).reshape(-1)
    reps = np.asarray(getattr(step, "replicate_rows", np.zeros(0, dtype=np.int64)), dtype=np.int64).reshape(-1)
    if idx.size == 0 and reps.size == 0:
        reason = step.error or "no pool point received a finite score"
        msg = f"Repair needed: no measurement could be selected ({reason}). The turn is used."
        if failures:
            msg += "\nCould not parse:\n" + "\n".join(failures)
        ev["outcome"] = f"repair: {reason}"
        return "\n".join([msg, *notes]), "repair", 0, ok
    if idx.size + reps.size > k or np.unique(idx).size != idx.size or (idx.size and (
        idx.min() < 0 or idx.max() >= available.size or not available[idx].all()
    )) or (reps.size and (reps.min() < 0 or reps.max() >= state.measurements)):
        raise RuntimeError(f"acquisition returned invalid pool indices {idx.tolist()} / replicate rows {reps.tolist()} (k = {k})")
    available[idx] = False
    start = state.measurements
    items = lab.batch(pool, idx, reps)
    outputs = state.measure(items, "planner")
    lab.after_batch(step, items, outputs)
    ev["measured"] = {"indices": idx.tolist(), **lab.measured_event(items, outputs)}
    if reps.size:
        ev["measured"]["replicate_rows"] = reps.tolist()
    ev["outcome"] = lab.outcome_text(int(idx.size + reps.size))
    if step.error:
        notes.append(f"Note: {step.error}")
    if getattr(step, "fallback_used", False):
        notes.append("Note: fewer than 2 hypotheses fitted the data well; the whole committee was used for scoring.")
    if failures:
        notes.append("Could not parse:\n" + "\n".join(failures))
    text = lab.selection_text(step, start, int(idx.size + reps.size), outputs, notes)
    return "\n".join([*([lead] if lead else []), text]), "selection", int(idx.size), ok


# ----------------------------------------------------------------------------------------
# Synthesis
# ----------------------------------------------------------------------------------------
def _fresh_synthesis(state: TrialState, draft: str | None) -> Outcome:
    cfg, names = state.config, state.task.variable_names
    carried = draft if (draft is not None and not is_trivial_submission(draft, names)) else None
    begin_error = state.begin("synthesis")
    n_turns = cfg.n_synthesis_turns
    law: str | None = None
    last_attempt: str | None = None
    feedback: str | None = None
    fkind: str | None = None
    synthesis_input: dict[str, Any] | None = None
    for t in range(n_turns):
        obs, diag_index = observation(state, "synthesis", t, n_turns - t - 1, cfg.diagnostics and cfg.synthesis_diagnostics,
                                      feedback=feedback, fkind=fkind, draft=carried)
        if synthesis_input is None:
            synthesis_input = state.lab.synthesis_input(obs)
        action, ev = _decide_event(state, obs, "synthesis", t, diag_index)
        if t == 0 and begin_error is not None:
            ev["policy_begin_error"] = begin_error
        kind = action.kind
        if kind == "final":
            reason = precheck_submission(action.source, names)
            if reason is None:
                law = action.source
                ev["outcome"] = "valid synthesis law"
                state.events.append(ev)
                break
            last_attempt = action.source
            feedback = f"The submitted law is not valid: {reason}. Submit a corrected discovered_law."
            fkind = "repair"
        elif kind == "analysis" and cfg.interpreter:
            feedback, ev["analysis"] = run_analysis(state, action.code)
            fkind = "analysis"
        elif kind == "experiment":
            feedback = "No new measurements are allowed during synthesis; the request is refused. Submit the final law."
            fkind = "refusal"
        elif kind == "invalid":
            feedback = f"Your reply could not be used ({action.error}). Submit the final law."
            fkind = "repair"
        else:
            article = "An" if kind[:1] in "aeiou" else "A"
            feedback = f"{article} {kind} action is not allowed during synthesis. Submit the final law" + (
                " or request an analysis." if cfg.interpreter else "."
            )
            fkind = "refusal"
        ev["feedback"] = feedback
        ev["feedback_kind"] = fkind
        state.events.append(ev)

    draft_ok = draft is not None and precheck_submission(draft, names) is None
    if law is not None:
        out = Outcome(status="", final_source=law, submission_origin="synthesis")
        why = "the synthesis law is valid"
    elif draft_ok:
        out = Outcome(status="", final_source=draft, submission_origin="draft")
        why = "synthesis gave no valid law; the draft stands"
    elif last_attempt is not None:
        out = Outcome(status="", final_source=last_attempt, submission_origin="synthesis")
        why = "neither synthesis nor the draft gave a valid law; the last synthesis attempt is submitted (invalid)"
    elif draft is not None:
        out = Outcome(status="", final_source=draft, submission_origin="draft")
        why = "neither synthesis nor the draft gave a valid law; the draft is submitted (invalid)"
    else:
        out = Outcome(status="", final_source="", submission_origin="none")
        why = "no law was submitted"
    state.events.append({"phase": "synthesis", "event": "submission", "origin": out.submission_origin, "reason": why})
    out.synthesis_input = synthesis_input
    return out


#: Floor of the mean squared calibration residual (in units of the observations' median magnitude)
#: in the criterion of :func:`_calibrated_best`: below it, fits count as exact and tie.
CALIBRATION_FLOOR = 1e-24


def _calibrated_best(texts: list[str], names: tuple[str, ...], X: np.ndarray, y: np.ndarray) -> tuple[str, float] | None:
    """The committee hypothesis, and its calibration, that the observations support best.

    Each hypothesis h is tried as written (``h``), rescaled (``a*h``) and rescaled with an offset
    (``a*h + b``), all by least squares. The choice, over every hypothesis and calibration, minimizes
    the Bayesian information criterion ``n log(max(SSR/n, CALIBRATION_FLOOR)) + k log n`` (k = 0, 1,
    2 calibration constants; residuals in units of the median |y|); ties go to the earlier
    hypothesis and the smaller k. So an exact hypothesis is submitted as written, without a fitted
    offset of 1e-18 that a judge reads as an extra term, and an offset is added only when the
    observations call for one.

    Returns ``(expression, normalized RMS error)`` or ``None`` when no hypothesis can be evaluated.
    """
    from etc_fast.expr import parse

    best: tuple[float, str, float] | None = None
    scale = np.median(np.abs(y[np.isfinite(y)])) if np.isfinite(y).any() else 1.0
    if not (np.isfinite(scale) and scale > 0):
        scale = 1.0
    for text in texts:
        try:
            prog = parse(text, names)
            h = np.asarray(prog.evaluate(X), dtype=np.float64)
        except Exception:  # noqa: BLE001
            continue
        m = np.isfinite(h) & np.isfinite(y)
        n = int(m.sum())
        if n < 2:
            continue
        hm, ym = h[m], y[m]
        fits: list[tuple[int, float, float]] = [(0, 1.0, 0.0)]
        hh = float(hm @ hm)
        if hh > 0:
            fits.append((1, float(hm @ ym) / hh, 0.0))
        if n >= 3:
            (a2, b2), *_ = np.linalg.lstsq(np.column_stack([hm, np.ones(n)]), ym, rcond=None)
            fits.append((2, float(a2), float(b2)))
        for k, a, b in fits:
            if not (np.isfinite(a) and np.isfinite(b)):
                continue
            with np.errstate(over="ignore", invalid="ignore"):
                r = (a * hm + b - ym) / scale
                mse = float(np.mean(r * r))
            if not np.isfinite(mse):
                continue
            crit = n * float(np.log(max(mse, CALIBRATION_FLOOR))) + k * float(np.log(n))
            if best is None or crit < best[0]:
                expr = f"({prog.text})" if k == 0 else (f"({a!r}) * ({prog.text})" if k == 1 else f"({a!r}) * ({prog.text}) + ({b!r})")
                best = (crit, expr, float(np.sqrt(mse)))
    return None if best is None else (best[1], best[2])


def _no_synthesis(state: TrialState, draft: str | None, last_committee: list[str]) -> Outcome:
    """``synthesis: none``: the draft, else the best-fitting last committee hypothesis, else the power-law fit."""
    from etc_fast.diagnostics import power_law_expression
    from etc_fast.expr import parse

    names = state.task.variable_names
    ev: dict[str, Any] = {"phase": "synthesis", "event": "submission", "synthesis": "none"}
    if draft is not None and precheck_submission(draft, names) is None:
        ev.update(origin="draft", reason="synthesis is off; the draft is submitted")
        state.events.append(ev)
        return Outcome(status="", final_source=draft, submission_origin="draft")
    candidates: list[tuple[str, str, Any]] = []
    X, y = state.lab.frozen_observations()
    best = _calibrated_best(last_committee, names, X, y) if last_committee else None
    if best is not None:
        candidates.append(("committee", best[0], best[1]))
    diag = state.lab.current_diagnostics()
    expr = power_law_expression(diag) if diag is not None else None
    if expr is not None:
        candidates.append(("diagnostics", expr, None))
    for origin, text, err in candidates:
        try:
            source = parse(text, names).to_source()
        except Exception as exc:  # noqa: BLE001
            ev.setdefault("rejected", []).append({"origin": origin, "expression": text, "error": f"{type(exc).__name__}: {exc}"})
            continue
        ev.update(origin=origin, expression=text, fit_error=err, reason=f"synthesis is off; the {origin} law is submitted")
        state.events.append(ev)
        return Outcome(status="", final_source=source, submission_origin=origin)
    origin = "draft" if draft is not None else "none"
    ev.update(origin=origin, reason="synthesis is off and no usable law exists")
    state.events.append(ev)
    return Outcome(status="", final_source=draft or "", submission_origin=origin)
