"""The explore-then-commit planner loop (paper S1, Algorithm S1) and fresh synthesis.

1. Build the candidate pool; measure the structured bootstrap probes.
2. Up to ``exploration_turns`` turns: show observations (+ diagnostics); the policy answers with a
   draft (stored; exploration ends), an analysis request (interpreter variants; output returned),
   or a committee of hypotheses. Scored planners need at least two parseable hypotheses, else a
   repair turn. A random planner always selects: whatever else it gets (a committee with fewer
   than two parseable hypotheses, an unusable or disallowed reply), it continues with fallback
   hypotheses. A selecting turn measures up to ``batch_cap`` unused pool points and appends them.
3. Fresh synthesis: a new context with the task, all observations and any non-trivial draft (the
   paper's input; the ``synthesis_diagnostics`` knob adds the diagnostics); no new measurements.
   A valid synthesis law replaces the draft; else the draft stands; else the submission is
   invalid (the record says so).
"""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np

from etc_fast.core import NOISE_KNOB_DEFAULTS, Action, Diagnostics, Observation, derive_seed, to_jsonable
from etc_fast.protocol._state import MAX_RECORDED_ITEMS, TrialState, action_record, clip_text, run_analysis
from etc_fast.protocol._submission import is_trivial_submission, precheck_submission
from etc_fast.sampling import bootstrap_probes, pool_unit

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


class _Diag:
    """Current diagnostics plus whether the shown version is already logged."""

    def __init__(self, state: TrialState, n_probe: int) -> None:
        self.state = state
        self.n_probe = n_probe
        self.value: Diagnostics | None = None
        self.index: int | None = None
        self.check: Any = None  # how the last noise-aware step's best law predicted its batch (PredictionCheck)
        self.refresh()

    def refresh(self, planner: Any = None) -> None:
        """Recompute on the current observations; ``planner`` (a noise-aware step) adds its estimate."""
        from etc_fast.diagnostics import compute_diagnostics, with_planner_estimate

        s = self.state
        self.value = compute_diagnostics(s.task.variable_names, s.X, s.y, self.n_probe)
        if planner is not None:
            self.value = with_planner_estimate(self.value, planner, s.task.variable_names, self.check)
        self.index = None

    def shown(self, phase: str, turn: int) -> tuple[Diagnostics | None, int | None]:
        """The diagnostics to put in an observation (None when the knob is off), logging once.

        Synthesis sees them only with ``synthesis_diagnostics`` (the paper's synthesis input is the
        task, the observations and the draft).
        """
        cfg = self.state.config
        if not cfg.diagnostics or (phase == "synthesis" and not cfg.synthesis_diagnostics):
            return None, None
        if self.index is None:
            self.index = self.state.log_diagnostics(self.value, phase, turn)
        return self.value, self.index


# ----------------------------------------------------------------------------------------
# Exploration
# ----------------------------------------------------------------------------------------
def run_planner(state: TrialState) -> Outcome:
    """Play one planner trial on ``state`` (bootstrap, exploration, synthesis)."""
    cfg, task, spec = state.config, state.task, state.spec

    pool_U = pool_unit(task.d, spec.pool_seed, cfg.pool_size)
    pool_X = task.unit_to_inputs(pool_U)
    available = np.ones(pool_X.shape[0], dtype=bool)

    n_boot = _bootstrap(state)
    diag = _Diag(state, n_boot)

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
        shown, diag_index = diag.shown("explore", turn)
        obs = _explore_observation(state, shown, turn, left, feedback, fkind, new_rows)
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
            feedback, fkind, new_rows, parsed_ok = _committee_turn(state, action, turn, pool_X, pool_U, available, diag, ev)
            if parsed_ok:
                last_committee = parsed_ok
        elif cfg.acquisition == "random":
            # Algorithm S1: only scored planners repair; a random planner selects on every turn
            # that is neither a draft nor an allowed analysis.
            if kind == "analysis":
                why = "analysis requests are not available in this configuration (no interpreter)"
            elif kind in ("experiment", "final"):
                why = f"{'experiment requests' if kind == 'experiment' else 'final submissions'} are not accepted during exploration"
            else:
                why = f"the reply could not be used ({action.error})"
            ev["unusable_reply"] = why
            feedback, fkind, new_rows, _ = _committee_turn(
                state, Action(kind="committee"), turn, pool_X, pool_U, available, diag, ev,
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
        out = _fresh_synthesis(state, draft, diag)
    else:
        out = _no_synthesis(state, draft, last_committee, diag)
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


def _bootstrap(state: TrialState) -> int:
    """Measure the structured bootstrap probes (as many as the budget allows); returns how many."""
    _, X_boot = bootstrap_probes(state.task, state.config.bootstrap_min)
    n_boot = state.allowance(X_boot.shape[0])
    y_boot = state.measure(X_boot[:n_boot], "bootstrap")
    state.events.append({
        "phase": "bootstrap",
        "event": "bootstrap",
        "n_probes": int(X_boot.shape[0]),
        "measured": int(n_boot),
        "X": X_boot[:n_boot].tolist(),
        "y": to_jsonable(y_boot),
        "truncated_by_budget": bool(n_boot < X_boot.shape[0]),
    })
    return n_boot


def _explore_observation(state: TrialState, shown, turn: int, left, feedback: str | None, fkind: str | None,
                         new_rows: int) -> Observation:
    """What the policy sees on exploration turn ``turn``."""
    cfg = state.config
    allowed = {"committee", "draft"} | ({"analysis"} if cfg.interpreter else set())
    X_obs, y_obs = state.frozen_observations()
    return Observation(
        phase="explore", task=state.view, X=X_obs, y=y_obs, diagnostics=shown, turn=turn,
        turns_left=cfg.exploration_turns - turn - 1, measurements_used=state.measurements,
        measurements_left=left, allowed=frozenset(allowed), interpreter=cfg.interpreter,
        feedback=feedback, noisy=bool(state.spec.noise > 0), batch_cap=cfg.batch_cap, feedback_kind=fkind,
        new_rows=new_rows,
    )


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


def _fallback_hypotheses(diag: Diagnostics | None, names: tuple[str, ...]) -> list[str]:
    """Generic stand-ins when a random planner's committee is unusable: the fitted power law, a sum."""
    from etc_fast.diagnostics import power_law_expression

    out = []
    expr = power_law_expression(diag) if diag is not None else None
    if expr is not None:
        out.append(expr)
    out.append(" + ".join(names))
    return out


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
    pool_X: np.ndarray,
    pool_U: np.ndarray,
    available: np.ndarray,
    diag: _Diag,
    ev: dict[str, Any],
    lead: str | None = None,
) -> tuple[str, str, int, list[str]]:
    """Handle one committee: repair, or select + measure. Returns (feedback, kind, new rows, parsed texts).

    ``lead`` is put before the selection message (a random planner selecting after an unusable reply).
    """
    from etc_fast.acquisition import plan_step

    cfg, names = state.config, state.task.variable_names
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
    method = cfg.acquisition

    if method != "random" and len(ok) < 2:
        msg = (
            f"Repair needed: the committee has {len(ok)} parseable hypothesis(es); at least 2 are required. "
            "No measurement was taken; the turn is used."
        )
        if failures:
            msg += "\nCould not parse:\n" + "\n".join(failures)
        ev["outcome"] = "repair: fewer than 2 parseable hypotheses"
        return "\n".join([msg, *notes]), "repair", 0, ok

    committee = [h for h in used if isinstance(h, str)]
    if method == "random" and len(ok) < 2:
        fallback = [h for h in _fallback_hypotheses(diag.value, names) if h not in ok]
        committee = ok + fallback
        ev["fallback_hypotheses"] = fallback
        notes.append(f"Fewer than 2 parseable hypotheses; selection continued with fallback hypotheses: {fallback}.")

    seed = derive_seed(state.spec.pool_seed, turn)
    noisy_step = _noise_knobs_on(cfg) and state.spec.noise > 0  # a noiseless lab runs the paper's step
    k = min(cfg.batch_cap, state.allowance(cfg.batch_cap), int(available.sum()) + (state.measurements if noisy_step else 0))
    if noisy_step:
        step = _noisy_step(state, committee, pool_X, pool_U, available, method, k, seed, diag.check)
    else:
        step = plan_step(
            committee, names, state.X.copy(), state.y.copy(), pool_X, pool_U, available.copy(),
            method=method, k=k, seed=seed,
        )
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
    X_new = np.vstack([pool_X[idx], state.X[reps]]) if reps.size else pool_X[idx]
    y_new = state.measure(X_new, "planner")
    if noisy_step and cfg.stop_when_settled:  # the stopping rule's out-of-sample check, shown to the policy
        from etc_fast.acquisition import check_prediction

        diag.check = check_prediction(step, names, X_new, y_new)
    diag.refresh(step if noisy_step else None)
    ev["measured"] = {"indices": idx.tolist(), "X": X_new.tolist(), "y": to_jsonable(y_new)}
    if reps.size:
        ev["measured"]["replicate_rows"] = reps.tolist()
    ev["outcome"] = f"measured {idx.size + reps.size} point(s)"
    if step.error:
        notes.append(f"Note: {step.error}")
    if getattr(step, "fallback_used", False):
        notes.append("Note: fewer than 2 hypotheses fitted the data well; the whole committee was used for scoring.")
    if failures:
        notes.append("Could not parse:\n" + "\n".join(failures))
    n_new = idx.size + reps.size
    msg = (
        f"The planner ({method}) selected and measured {n_new} new point(s): observations "
        f"{start + 1}-{start + n_new} (the last rows of X and y)."
    )
    if noisy_step:
        from etc_fast.diagnostics import describe_noisy_step

        msg += "\n" + describe_noisy_step(step, start, names, state.X[start : start + n_new])
    return "\n".join([*([lead] if lead else []), msg, *notes]), "selection", int(idx.size), ok


def _noise_knobs_on(cfg: Any) -> bool:
    """Whether a planner configuration has a noise knob off its default (the noise-aware step then
    runs in noisy labs; the task says whether the lab is noisy)."""
    return any(getattr(cfg, name) != default for name, default in NOISE_KNOB_DEFAULTS.items())


def _noisy_step(state: TrialState, committee: list[str], pool_X, pool_U, available, method: str, k: int, seed: int,
                prior=None):
    from etc_fast.acquisition import NoiseOptions, plan_noisy_step

    cfg = state.config
    # each knob as the type of its default (explore_fraction: 1 -> 1.0)
    opts = NoiseOptions(**{name: type(default)(getattr(cfg, name)) for name, default in NOISE_KNOB_DEFAULTS.items()})
    U_obs = state.task.inputs_to_unit(state.X)
    return plan_noisy_step(
        committee, state.task.variable_names, state.X.copy(), state.y.copy(), U_obs, pool_X, pool_U, available.copy(),
        method=method, k=k, seed=seed, options=opts, noisy=bool(state.spec.noise > 0), prior=prior,
    )  # fmt: skip


# ----------------------------------------------------------------------------------------
# Synthesis
# ----------------------------------------------------------------------------------------
def _fresh_synthesis(state: TrialState, draft: str | None, diag: _Diag) -> Outcome:
    cfg, spec, names = state.config, state.spec, state.task.variable_names
    carried = draft if (draft is not None and not is_trivial_submission(draft, names)) else None
    begin_error = state.begin("synthesis")
    allowed = {"final"} | ({"analysis"} if cfg.interpreter else set())
    n_turns = cfg.n_synthesis_turns
    law: str | None = None
    last_attempt: str | None = None
    feedback: str | None = None
    fkind: str | None = None
    synthesis_input: dict[str, Any] | None = None
    for t in range(n_turns):
        shown, diag_index = diag.shown("synthesis", t)
        X_obs, y_obs = state.frozen_observations()
        obs = Observation(
            phase="synthesis", task=state.view, X=X_obs, y=y_obs, diagnostics=shown, turn=t,
            turns_left=n_turns - t - 1, measurements_used=state.measurements, measurements_left=0,
            allowed=frozenset(allowed), interpreter=cfg.interpreter, draft=carried, feedback=feedback,
            noisy=bool(spec.noise > 0), batch_cap=cfg.batch_cap, feedback_kind=fkind,
        )
        if synthesis_input is None:
            synthesis_input = to_jsonable(obs)
            synthesis_input.pop("system", None)  # vanilla trials: records as before the systems tier
            synthesis_input["sources"] = list(state.sources)
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


def _calibrated_best(texts: list[str], names: tuple[str, ...], X: np.ndarray, y: np.ndarray) -> tuple[str, float] | None:
    """The committee hypothesis that fits the observations best after ``a*h + b`` calibration.

    Returns ``(calibrated expression, normalized error)`` or ``None`` when none can be fitted.
    """
    from etc_fast.expr import parse

    best = None
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
        if m.sum() < 2:
            continue
        if m.sum() >= 3:
            A = np.column_stack([h[m], np.ones(m.sum())])
            (a, b), *_ = np.linalg.lstsq(A, y[m], rcond=None)
        else:
            hh = float(h[m] @ h[m])
            a, b = (float(h[m] @ y[m]) / hh if hh > 0 else 0.0), 0.0
        if not (np.isfinite(a) and np.isfinite(b)):
            continue
        err = float(np.sqrt(np.mean((a * h[m] + b - y[m]) ** 2)) / scale)
        if best is None or err < best[1]:
            best = (f"({float(a)!r}) * ({prog.text}) + ({float(b)!r})", err)
    return best


def _no_synthesis(state: TrialState, draft: str | None, last_committee: list[str], diag: _Diag) -> Outcome:
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
    best = _calibrated_best(last_committee, names, state.X, state.y) if last_committee else None
    if best is not None:
        candidates.append(("committee", best[0], best[1]))
    expr = power_law_expression(diag.value) if diag.value is not None else None
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
