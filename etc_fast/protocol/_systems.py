"""The protocol on NewtonBench's simulated systems (``simple_system``, ``complex_system``).

A system experiment is one control dict; the simulator answers with NewtonBench's output (a time
series of at most 20 points, or one reading). The measurement count is the number of experiments
run; the record also keeps the simulated points (finite numbers returned). Scoring is unchanged:
the submitted ``discovered_law`` is replayed on the law's vanilla 5000-point grid.

Planner rules on systems (docs/systems.md, "Planner on systems"): the pool is 2048 scrambled Sobol
requests over the system's control domain; the bootstrap is the pool's first ``max(bootstrap_min,
n_controls + 1)`` points (Sobol's first points fill the domain); each committee turn simulates the
committee's hypotheses through the public forward model at every available pool point (one call),
after fitting each hypothesis's free constants to the observations through the simulator
(``calibrate``); ``variance`` scores a point by :func:`series_disagreement`, ``pairwise`` by the mean
of the same score over hypothesis pairs, ``random`` draws; the batch takes the best points by rank,
skipping points closer than :data:`MIN_SEPARATION` (unit-cube distance) to a point already in the
batch (diversity). Diagnostics are the derived law table (``etc_fast.systems._derive``).
"""

from __future__ import annotations

import itertools
import json
from typing import Any

import numpy as np

from etc_fast.core import Action, Observation, SystemObservation, derive_seed, to_jsonable
from etc_fast.protocol._baseline import (
    MAX_VALIDATION_RETRIES,
    analysis_validation_error,
    nan_law,
)
from etc_fast.protocol._planner import (
    MAX_COMMITTEE,
    Outcome,
    _decide_event,
    _parse_committee,
)
from etc_fast.protocol._state import TrialState, clip_text, run_analysis
from etc_fast.protocol._submission import is_trivial_submission, precheck_submission
from etc_fast.systems._quiet import quiet

__all__ = ["MIN_SEPARATION", "SystemTrialState", "run_system_baseline", "run_system_planner"]

#: Smallest unit-cube distance between two points of one planner batch (diversity, S2.2).
MIN_SEPARATION = 0.05
#: Most experiments one baseline request runs on a system.
MAX_SYSTEM_REQUEST = 100


class SystemTrialState(TrialState):
    """Trial state of a system trial: experiments are control dicts, observations are series.

    ``task`` is the law's vanilla task (signature, scoring); ``system_task`` runs the experiments.
    ``X``/``y`` stay empty (no law values are ever observed).
    """

    def __init__(self, spec, system_task, view, policy, limits=None) -> None:
        super().__init__(spec, system_task.law, view, policy, limits)
        from etc_fast.systems._prompts import apparatus_block
        from etc_fast.systems._spec import spec as system_spec

        self.system_task = system_task
        self.module, self.system = system_task.module, system_task.system
        self.sys_spec = system_spec(self.module, self.system)
        self.apparatus = apparatus_block(self.sys_spec, law_signature=view.signature, law_meaning=view.output_description)
        self.requests: list[dict[str, Any]] = []
        self.outputs: list[Any] = []
        self.series = np.empty((0, len(self.sys_spec.channels), self.sys_spec.n_times))
        self.derived: Any = None
        self._derived_rows: Any = None  # DerivedTableCache: re-derives only the experiments added

    @property
    def measurements(self) -> int:
        return len(self.requests)

    @property
    def simulated_points(self) -> int:
        """Points returned (time points of a series, or 1 for a reading), summed over experiments."""
        if not len(self.series):
            return 0
        return int(np.isfinite(self.series).sum(axis=2).max(axis=1).sum())

    def run_requests(self, requests: list[dict[str, Any]], source: str) -> list[Any]:
        """Run experiments (budget enforced by the caller), append them, return the outputs."""
        from etc_fast.systems._forward import observe

        left = self.budget_left
        if left is not None and len(requests) > left:
            raise RuntimeError(f"{len(requests)} experiments requested with only {left} left in the budget")
        if not requests:
            return []
        seed = derive_seed(int(self.spec.noise_seed), int(self.spec.rollout), len(self.requests))
        outs = self.system_task.experiment(requests, noise_level=float(self.spec.noise), rng_seed=seed)
        self.requests.extend(dict(r) for r in requests)
        self.outputs.extend(outs)
        self.series = np.concatenate([self.series, observe(self.module, self.system, outs)])
        self.sources.extend([source] * len(requests))
        self.derived = None
        return outs

    def derived_table(self) -> Any:
        from etc_fast.systems._derive import record_times
        from etc_fast.systems._derive_cache import DerivedTableCache

        if self.derived is None:
            if self._derived_rows is None:
                self._derived_rows = DerivedTableCache()
            times = record_times(self.module, self.system, self.outputs)
            self.derived = self._derived_rows.table(self.module, self.system, self.requests, self.series, times)
        return self.derived

    def system_observation(self, diagnostics: bool) -> SystemObservation:
        series = self.series.copy()
        series.flags.writeable = False
        return SystemObservation(
            module=self.module, system=self.system, apparatus=self.apparatus, spec=self.sys_spec,
            requests=tuple(dict(r) for r in self.requests), outputs=tuple(self.outputs), series=series,
            derived=self.derived_table() if diagnostics and self.requests else None,
        )

    def analysis_preload(self) -> dict[str, Any]:
        """What analysis code finds preloaded: ``X`` (controls, one row per experiment, spec order),
        ``series`` (float64[n, channels, times]), ``data`` (the requests with their outputs)."""
        from etc_fast.systems._forward import controls_matrix

        C = controls_matrix(self.sys_spec, self.requests) if self.requests else np.empty((0, len(self.sys_spec.controls)))
        return {"X": C, "y": np.empty(0), "series": self.series.copy(),
                "data": [{"request": r, "output": o} for r, o in zip(to_jsonable(self.requests), to_jsonable(self.outputs))]}

    def observations_record(self) -> dict[str, Any]:
        return {
            "requests": to_jsonable(self.requests), "outputs": to_jsonable(self.outputs),
            "source": list(self.sources), "simulated_points": self.simulated_points,
        }


def format_system_output(outputs: list[Any]) -> str:
    """The reply to a system experiment: NewtonBench's outputs as a JSON list."""
    return "<experiment_output>\n" + json.dumps(to_jsonable(outputs)) + "\n</experiment_output>"


def _obs(state: SystemTrialState, phase: str, turn: int, turns_left: int, allowed: set[str], *, diagnostics: bool,
         feedback: str | None, fkind: str | None, new_rows: int = 0, draft: str | None = None,
         left: int | None = None) -> Observation:
    X, y = state.frozen_observations()
    return Observation(
        phase=phase, task=state.view, X=X, y=y, diagnostics=None, turn=turn, turns_left=turns_left,
        measurements_used=state.measurements, measurements_left=state.budget_left if left is None else left,
        allowed=frozenset(allowed), interpreter=state.config.interpreter, draft=draft, feedback=feedback,
        noisy=bool(state.spec.noise > 0), batch_cap=state.config.batch_cap, feedback_kind=fkind, new_rows=new_rows,
        system=state.system_observation(diagnostics),
    )


# ----------------------------------------------------------------------------------------
# Baseline
# ----------------------------------------------------------------------------------------
def run_system_baseline(state: SystemTrialState) -> Outcome:
    """The free-form loop on a system: experiment requests (control dicts), analyses, the final law."""
    cfg = state.config
    begin_error = state.begin("baseline")
    allowed = {"experiment", "final"} | ({"analysis"} if cfg.interpreter else set())
    feedback: str | None = None
    fkind: str | None = None
    new_rows = retries = r = 0
    while r < cfg.baseline_rounds:
        obs = _obs(state, "baseline", r, cfg.baseline_rounds - r - 1, allowed, diagnostics=False, feedback=feedback,
                   fkind=fkind, new_rows=new_rows)
        action, ev = _decide_event(state, obs, "baseline", r, None, max_points=MAX_SYSTEM_REQUEST)
        if r == 0 and retries == 0 and begin_error is not None:
            ev["policy_begin_error"] = begin_error
        new_rows = 0
        if action.kind == "final":
            ev["outcome"] = "final law submitted"
            state.events.append(ev)
            return Outcome(status="completed", final_source=action.source, submission_origin="baseline")
        problem = analysis_validation_error(action.code) if action.kind == "analysis" and cfg.interpreter else None
        if problem is not None and retries < MAX_VALIDATION_RETRIES:
            retries += 1
            feedback, fkind = f"The Python code failed validation ({problem}); it was not run and the round is not used.", "repair"
            ev.update(outcome="analysis code failed validation; round not used", feedback=feedback, feedback_kind=fkind)
            state.events.append(ev)
            continue
        retries = 0
        r += 1
        if action.kind == "experiment":
            feedback, fkind, new_rows = _system_experiment(state, list(action.points), ev)
        elif action.kind == "analysis" and cfg.interpreter:
            feedback, ev["analysis"] = run_analysis(state, action.code, preload=state.analysis_preload())
            fkind = "analysis"
        else:
            feedback = ("That reply held no usable action. Request experiments with a <run_experiment> block (a JSON list "
                        "of control objects)" + (", run a <python> block" if cfg.interpreter else "") +
                        ", or submit your law in a <final_law> block.")
            fkind = "repair"
            ev["outcome"] = f"invalid reply ({action.error or action.kind + ' is not a baseline action'})"
        ev.update(feedback=feedback, feedback_kind=fkind)
        state.events.append(ev)
    obs = _obs(state, "final", 0, 0, {"final"}, diagnostics=False, feedback=feedback, fkind=fkind, new_rows=new_rows, left=0)
    action, ev = _decide_event(state, obs, "final", 0, None)
    if action.kind == "final":
        ev["outcome"] = "forced final law submitted"
        state.events.append(ev)
        return Outcome(status="max_turns_reached", final_source=action.source, submission_origin="forced")
    ev["outcome"] = f"no law at the forced final call ({action.error or action.kind}); the NaN stand-in is submitted"
    state.events.append(ev)
    return Outcome(status="max_turns_reached", final_source=nan_law(state.task.variable_names), submission_origin="forced_nan")


def _system_experiment(state: SystemTrialState, points: list[Any], ev: dict[str, Any]) -> tuple[str, str, int]:
    keys = {c.key for c in state.sys_spec.controls}
    reqs = []
    for i, p in enumerate(points[:MAX_SYSTEM_REQUEST]):
        if not isinstance(p, dict):
            ev["outcome"] = f"bad experiment request: experiment {i} is not an object"
            return f"Invalid experiment request: experiment {i} is not a JSON object of controls. No experiment was run.", "repair", 0
        unknown = sorted(set(p) - keys)
        if unknown:
            ev["outcome"] = f"bad experiment request: unknown controls {unknown}"
            text = (f"Invalid experiment request: experiment {i} has unknown controls {unknown}; the controls are "
                    f"{sorted(keys)}. No experiment was run.")
            return text, "repair", 0
        reqs.append(dict(p))
    n_ok = state.allowance(len(reqs))
    if n_ok == 0:
        ev["outcome"] = "refused: measurement budget spent"
        return "The experiment budget is spent; no experiment was run. Submit your final law.", "refusal", 0
    outs = state.run_requests(reqs[:n_ok], "experiment")
    ev["measured"] = {"requests": to_jsonable(reqs[:n_ok]), "outputs": to_jsonable(outs), "requested": len(points)}
    ev["outcome"] = f"ran {n_ok} experiment(s)"
    text = format_system_output(outs)
    if n_ok < len(points):
        text += f"\nOnly the first {n_ok} of {len(points)} requested experiments were run."
    return text, "experiment", n_ok


# ----------------------------------------------------------------------------------------
# Planner
# ----------------------------------------------------------------------------------------
def run_system_planner(state: SystemTrialState) -> Outcome:
    """Explore-then-commit on a system: bootstrap, committee turns over the pool, fresh synthesis."""
    from etc_fast.sampling import pool_unit
    from etc_fast.systems._forward import controls_matrix
    from etc_fast.systems._pool import system_pool

    cfg, spec = state.config, state.spec
    sp = state.sys_spec
    pool = system_pool(state.module, state.system, spec.pool_seed, cfg.pool_size)
    pool_C = controls_matrix(sp, pool)
    pool_U = pool_unit(len(sp.pool_controls), spec.pool_seed, cfg.pool_size)
    available = np.ones(len(pool), dtype=bool)
    n_boot = state.allowance(max(cfg.bootstrap_min, len(sp.pool_controls) + 1))
    boot = list(range(n_boot))
    available[boot] = False
    state.run_requests([pool[i] for i in boot], "bootstrap")
    state.events.append({"phase": "explore", "event": "bootstrap", "indices": boot, "n": n_boot})

    begin_error = state.begin("explore")
    allowed = {"committee", "draft"} | ({"analysis"} if cfg.interpreter else set())
    feedback: str | None = None
    fkind: str | None = None
    new_rows = 0
    draft: str | None = None
    end_reason = "turns_exhausted"
    for turn in range(cfg.exploration_turns):
        if state.budget_left == 0:
            end_reason = "budget_exhausted"
            break
        if not available.any():
            end_reason = "pool_exhausted"
            break
        obs = _obs(state, "explore", turn, cfg.exploration_turns - turn - 1, allowed, diagnostics=cfg.diagnostics,
                   feedback=feedback, fkind=fkind, new_rows=new_rows)
        action, ev = _decide_event(state, obs, "explore", turn, None)
        if turn == 0 and begin_error is not None:
            ev["policy_begin_error"] = begin_error
        new_rows = 0
        kind = action.kind
        if kind == "draft":
            draft = action.source
            ev["outcome"] = "draft stored; exploration ends"
            state.events.append(ev)
            end_reason = "draft"
            break
        if kind == "analysis" and cfg.interpreter:
            feedback, ev["analysis"] = run_analysis(state, action.code, preload=state.analysis_preload())
            fkind = "analysis"
        elif kind == "committee" or cfg.acquisition == "random":
            feedback, fkind, new_rows = _system_committee(state, action, turn, pool, pool_C, pool_U, available, ev)
        else:
            feedback = (f"Your reply could not be used ({action.error or kind + ' is not an exploration action'}); the turn "
                        f"is used. Reply with a committee of 2-{MAX_COMMITTEE} hypotheses or a draft law.")
            fkind = "repair"
        ev.update(feedback=feedback, feedback_kind=fkind)
        state.events.append(ev)
    state.events.append({"phase": "explore", "event": "exploration_end", "reason": end_reason, "measurements": state.measurements})
    status = {"draft": "completed", "turns_exhausted": "max_turns_reached", "budget_exhausted": "budget_exhausted",
              "pool_exhausted": "pool_exhausted"}[end_reason]
    out = _system_synthesis(state, draft)
    out.status, out.draft = status, draft
    return out


def _calibrated(texts: list[str], state: SystemTrialState) -> list[Any]:
    from etc_fast.expr import parse
    from etc_fast.systems._planning import calibrate

    names = state.task.variable_names
    progs = []
    for t in texts:
        prog = parse(t, names)
        if prog.nuisance and state.requests:
            prog = calibrate(prog, state.module, state.system, state.requests, state.series, max_nfev=60).program
        progs.append(prog)
    return progs


def _system_committee(state: SystemTrialState, action: Action, turn: int, pool: list[dict[str, float]], pool_C: np.ndarray,
                      pool_U: np.ndarray, available: np.ndarray, ev: dict[str, Any]) -> tuple[str, str, int]:
    from etc_fast.expr import pack
    from etc_fast.systems._forward import predict
    from etc_fast.systems._planning import series_disagreement

    cfg = state.config
    names = state.task.variable_names
    parsed = _parse_committee(list(action.hypotheses[:MAX_COMMITTEE]), names)
    ok = [p["text"] for p in parsed if p["ok"]]
    ev["committee"] = {"parsed": parsed}
    method = cfg.acquisition
    if method != "random" and len(ok) < 2:
        ev["outcome"] = "repair: fewer than 2 parseable hypotheses"
        fails = "\n".join(f"  - {p['text']!r}: {p['error']}" for p in parsed if not p["ok"])
        return ("Repair needed: the committee has fewer than 2 parseable hypotheses; no experiment was run."
                + (f"\nCould not parse:\n{fails}" if fails else "")), "repair", 0
    k = min(cfg.batch_cap, state.allowance(cfg.batch_cap), int(available.sum()))
    seed = derive_seed(state.spec.pool_seed, turn)
    idx_av = np.flatnonzero(available)
    if method == "random" or len(ok) < 2:
        rng = np.random.default_rng(seed)
        chosen = sorted(rng.choice(idx_av, size=k, replace=False).tolist())
        ev["selection"] = {"method": "random", "seed": seed}
    else:
        progs = _calibrated(ok, state)
        ev["committee"]["calibrated"] = [clip_text(p.text, 2000) for p in progs]
        pred = predict(state.module, state.system, pack(progs), pool_C[idx_av])
        precision = max(5e-7, float(state.spec.noise))
        if method == "variance":
            score = series_disagreement(pred, precision=precision)
        else:
            pairs = [series_disagreement(pred[[a, b]], precision=precision) for a, b in itertools.combinations(range(len(progs)), 2)]
            with quiet():
                score = np.nanmean(np.stack(pairs), axis=0)
        score = np.where(np.isfinite(score), score, -np.inf)
        order = np.argsort(-score, kind="stable")
        chosen = []
        for j in order:
            if len(chosen) >= k or not np.isfinite(score[j]):
                break
            i = int(idx_av[j])
            if all(np.linalg.norm(pool_U[i] - pool_U[c]) >= MIN_SEPARATION for c in chosen):
                chosen.append(i)
        ev["selection"] = {"method": method, "seed": seed, "scores": [float(score[np.flatnonzero(idx_av == c)[0]]) for c in chosen]}
    if not chosen:
        ev["outcome"] = "repair: no pool point received a finite score"
        return "Repair needed: the committee's predictions are undefined on every available pool point. The turn is used.", "repair", 0
    available[chosen] = False
    start = state.measurements
    outs = state.run_requests([pool[i] for i in chosen], "planner")
    ev["measured"] = {"indices": chosen, "requests": to_jsonable([pool[i] for i in chosen]), "outputs": to_jsonable(outs)}
    ev["outcome"] = f"ran {len(chosen)} experiment(s)"
    return (f"The planner ({method}) selected and ran {len(chosen)} new experiment(s): experiments {start + 1}-"
            f"{start + len(chosen)}.\n" + format_system_output(outs)), "selection", len(chosen)


def _system_synthesis(state: SystemTrialState, draft: str | None) -> Outcome:
    cfg, names = state.config, state.task.variable_names
    carried = draft if (draft is not None and not is_trivial_submission(draft, names)) else None
    begin_error = state.begin("synthesis")
    allowed = {"final"} | ({"analysis"} if cfg.interpreter else set())
    n_turns = cfg.n_synthesis_turns
    law = last = None
    feedback: str | None = None
    fkind: str | None = None
    synthesis_input = None
    for t in range(n_turns):
        obs = _obs(state, "synthesis", t, n_turns - t - 1, allowed, diagnostics=cfg.diagnostics and cfg.synthesis_diagnostics,
                   feedback=feedback, fkind=fkind, draft=carried, left=0)
        if synthesis_input is None:
            synthesis_input = {"requests": to_jsonable(state.requests), "outputs": to_jsonable(state.outputs),
                               "draft": carried, "sources": list(state.sources)}
        action, ev = _decide_event(state, obs, "synthesis", t, None)
        if t == 0 and begin_error is not None:
            ev["policy_begin_error"] = begin_error
        if action.kind == "final":
            reason = precheck_submission(action.source, names)
            if reason is None:
                law = action.source
                ev["outcome"] = "valid synthesis law"
                state.events.append(ev)
                break
            last = action.source
            feedback, fkind = f"The submitted law is not valid: {reason}. Submit a corrected discovered_law.", "repair"
        elif action.kind == "analysis" and cfg.interpreter:
            feedback, ev["analysis"] = run_analysis(state, action.code, preload=state.analysis_preload())
            fkind = "analysis"
        else:
            feedback, fkind = "Only the final law" + (" or an analysis" if cfg.interpreter else "") + " is accepted now.", "refusal"
        ev.update(feedback=feedback, feedback_kind=fkind)
        state.events.append(ev)
    if law is not None:
        out = Outcome(status="", final_source=law, submission_origin="synthesis")
    elif draft is not None and precheck_submission(draft, names) is None:
        out = Outcome(status="", final_source=draft, submission_origin="draft")
    elif last is not None:
        out = Outcome(status="", final_source=last, submission_origin="synthesis")
    else:
        out = Outcome(status="", final_source=draft or "", submission_origin="draft" if draft else "none")
    state.events.append({"phase": "synthesis", "event": "submission", "origin": out.submission_origin})
    out.synthesis_input = synthesis_input
    return out
