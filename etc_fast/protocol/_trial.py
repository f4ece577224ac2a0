"""``run_trial``: load the task, play the loop, score the submission, return the record."""

from __future__ import annotations

import functools
import platform
import time
import traceback
from collections.abc import Callable
from importlib import metadata
from typing import Any

from etc_fast.core import Policy, TaskView, TrialSpec, to_jsonable
from etc_fast.errors import InfrastructureError
from etc_fast.labs import Lab, make_lab
from etc_fast.protocol._baseline import run_baseline
from etc_fast.protocol._planner import Outcome, run_planner
from etc_fast.protocol._record import TrialRecord
from etc_fast.protocol._state import TrialState
from etc_fast.protocol._submission import precheck_submission

__all__ = ["LOOPS", "judge_submission", "load_lab", "package_versions", "play", "run_trial"]

#: The protocol loop by configuration family; each runs on any lab.
LOOPS: dict[str, Callable[[TrialState], Outcome]] = {"planner": run_planner, "baseline": run_baseline}


def package_versions() -> dict[str, str]:
    """Versions of the packages that shape a trial's numbers (read once per process: the packages
    a process has imported do not change under it, and the metadata lookup costs milliseconds
    per trial)."""
    return dict(_package_versions())


@functools.cache
def _package_versions() -> tuple[tuple[str, str], ...]:
    import etc_fast

    out = {"python": platform.python_version(), "etc_fast": getattr(etc_fast, "__version__", "unknown")}
    for pkg in ("numpy", "numba", "scipy"):
        try:
            out[pkg] = metadata.version(pkg)
        except metadata.PackageNotFoundError:
            out[pkg] = "missing"
    return tuple(out.items())


def load_lab(spec: TrialSpec, policy: Policy) -> tuple[Lab, TaskView]:
    """The lab of ``spec`` (its task loaded) and the task view its policy gets.

    Raises:
        Exception: the task cannot be loaded, or the policy cannot play this tier's planner.
    """
    from etc_fast.systems import SystemTask
    from etc_fast.tasks import Task, get_task, task_view

    if spec.system == "vanilla_equation":
        task = get_task(spec.task, spec.difficulty, spec.law_version)
        view = task_view(task)
        return make_lab(spec, task, view), view
    system_task = get_task(spec.task, spec.difficulty, spec.law_version, system=spec.system)
    if not isinstance(system_task, SystemTask):
        raise TypeError(f"{spec.task!r} on {spec.system} loaded as {type(system_task).__name__}, not a system task")
    if spec.config.family == "planner" and getattr(policy, "plays_system_planner", True) is False:
        raise NotImplementedError(
            f"policy {getattr(policy, 'name', '?')!r} has no planner prompts for {spec.system} yet "
            "(docs/guide/labs.md, What the labs miss)"
        )
    law = system_task.law  # signature and scoring: the law's vanilla task
    if not isinstance(law, Task):
        raise TypeError(f"{spec.task!r} on {spec.system}: its law is a {type(law).__name__}, not a task")
    view = task_view(law)
    return make_lab(spec, system_task, view), view


def play(spec: TrialSpec, policy: Policy, limits: Any = None) -> tuple[TrialState, Outcome]:
    """Load ``spec``'s lab and play its loop with ``policy``, without scoring or judging
    (exceptions propagate: :func:`run_trial` is the caller that records them)."""
    lab, view = load_lab(spec, policy)
    state = TrialState(spec, lab, view, policy, limits)
    return state, LOOPS[spec.config.family](state)


def run_trial(spec: TrialSpec, policy: Policy, *, judge: Any = None, limits: Any = None) -> TrialRecord:
    """Play one trial and score it.

    Args:
        spec: What to run (model name, configuration, task, noise, rollout).
        policy: The decision maker (see :class:`~etc_fast.protocol.Policy`).
        judge: A :class:`~etc_fast.evaluate.Judge`; ``None`` uses the structural judge.
        limits: :class:`etc_fast.sandbox.SandboxLimits` for analysis code and the evaluation
            (``None``: the sandbox defaults).

    Returns:
        The finished :class:`~etc_fast.protocol.TrialRecord`. Policy misbehaviour (exceptions,
        malformed actions) never raises: it is recorded and the trial ends with a scored, possibly
        invalid, submission. A failure of the protocol itself gives ``status="failed"``. A model
        call that got no reply (:class:`~etc_fast.errors.InfrastructureError`) stops the trial at
        once: ``status="failed"``, ``error_kind`` and ``error`` say why, nothing is scored or
        judged, and the record keeps what happened up to that call. A judge that cannot be reached
        leaves the trial's status alone and sets ``judge["status"] = "error"``.
    """
    t0 = time.perf_counter()
    record = TrialRecord(spec=spec, versions=package_versions())
    try:
        lab, view = load_lab(spec, policy)
    except Exception as exc:  # noqa: BLE001
        record.status = "failed"
        record.error = f"task {spec.task!r} ({spec.difficulty}, {spec.law_version}) could not be loaded: {type(exc).__name__}: {exc}"
        record.evaluation = {"valid": False, "error": record.error}
        record.judge = {"judge": "none", "credited": False, "reason": "no task"}
        record.wall_s = time.perf_counter() - t0
        return record

    state = TrialState(spec, lab, view, policy, limits)
    outcome = Outcome(status="failed")
    infra: InfrastructureError | None = None
    try:
        outcome = LOOPS[spec.config.family](state)
    except InfrastructureError as exc:
        infra = exc
        record.error = exc.one_line()
        record.error_kind = exc.kind
        state.events.append({"event": "infrastructure_failure", "error_kind": exc.kind, "error": record.error})
        outcome = Outcome(status="failed")
    except Exception as exc:  # noqa: BLE001 - a protocol failure is recorded, never propagated
        record.error = f"protocol error: {type(exc).__name__}: {exc}"
        state.events.append({"event": "protocol_error", "error": record.error, "traceback": traceback.format_exc()})
        outcome.status = "failed"

    record.chat = to_jsonable(list(getattr(policy, "transcript", None) or []))
    record.status = outcome.status
    record.measurements = state.measurements
    record.observations = state.observations_record()
    record.events = to_jsonable(state.events)
    record.diagnostics = state.diagnostics_log
    record.synthesis_input = outcome.synthesis_input
    record.draft = outcome.draft
    record.final_source = outcome.final_source or ""
    record.submission_origin = outcome.submission_origin
    record.prompt_tokens = state.usage["prompt_tokens"]
    record.completion_tokens = state.usage["completion_tokens"]
    record.llm_calls = state.usage["calls"]
    record.calls_cached = state.usage["cached"]
    record.prompt_tokens_cached = state.usage["prompt_tokens_cached"]
    record.completion_tokens_cached = state.usage["completion_tokens_cached"]
    if infra is not None:
        reason = f"not scored: no reply from the model ({infra.kind})"
        record.evaluation = {}  # never scored (as any failed trial): replay has nothing to compare
        record.judge = {"judge": str(getattr(judge, "name", "structural")), "credited": False, "reason": reason, "status": "skipped"}
    else:
        record.evaluation = _evaluate(record.final_source, lab.task, limits)
        record.judge = judge_submission(record.final_source, lab.task, judge)
    record.wall_s = time.perf_counter() - t0
    return record


def _evaluate(source: str, task: Any, limits: Any) -> dict[str, Any]:
    try:
        from etc_fast.evaluate import evaluate_submission

        ev = evaluate_submission(source, task, limits=limits)
        out = to_jsonable(ev.to_dict())
        out.pop("wall_s", None)  # timing lives in the record's wall_s; the rest must be reproducible
        return out
    except Exception as exc:  # noqa: BLE001
        return {"valid": False, "error": f"evaluation failed: {type(exc).__name__}: {exc}"}


def judge_submission(source: str, task: Any, judge: Any) -> dict[str, Any]:
    """The record's ``judge`` entry for ``source``: ``{judge, credited, reason, status}`` (+ ``usage``).

    ``status`` is ``ok`` when a verdict was reached (or none was needed), ``error`` when none was
    (:class:`~etc_fast.errors.InfrastructureError`: the judge's model could not be reached, or the
    structural judge passed its deadline): not credited, and the runner judges the trial again on resume.
    """
    name = getattr(judge, "name", "structural") if judge is not None else "structural"
    reason = precheck_submission(source, task.variable_names, syntax=False)
    if reason is not None:  # NewtonBench makes no judge call when the pre-check fails
        return {"judge": str(name), "credited": False, "reason": f"not judged: {reason}", "status": "ok"}
    before: dict[str, Any] = {}
    try:
        if judge is None:
            from etc_fast.evaluate import create_judge

            judge = create_judge("structural")
            name = getattr(judge, "name", name)
        before = dict(getattr(judge, "usage", None) or {})
        verdict = judge.judge(source, task)
        out = {"judge": str(verdict.judge), "credited": bool(verdict.credited), "reason": str(verdict.reason), "status": "ok"}
        _judge_usage(out, judge, before)
        return out
    except InfrastructureError as exc:  # no verdict (no reply, a deadline): judged again later
        out = {"judge": str(name), "credited": False, "reason": f"judge unavailable: {exc.one_line()}", "status": "error",
               "error_kind": exc.kind}
        _judge_usage(out, judge, before)
        return out
    except Exception as exc:  # noqa: BLE001 - a judge failure is recorded as not credited
        return {"judge": str(name), "credited": False, "reason": f"judge failed: {type(exc).__name__}: {exc}", "status": "ok"}


def _judge_usage(out: dict[str, Any], judge: Any, before: dict[str, Any]) -> None:
    after = getattr(judge, "usage", None) or {}
    if after:  # an LLM judge counts tokens across trials; keep this trial's share
        out["usage"] = {k: int(after.get(k, 0)) - int(before.get(k, 0)) for k in after}
