"""Mutable state of one trial: observations, measurement counting, policy calls, the event log."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np

from etc_fast.core import (
    MAX_RECORDED_CHARS,
    Action,
    Observation,
    Phase,
    Policy,
    ProtocolConfig,
    TaskView,
    TrialSpec,
    clip_text,
    to_jsonable,
)
from etc_fast.errors import InfrastructureError
from etc_fast.labs import Lab

_ACTION_KINDS = ("committee", "analysis", "draft", "experiment", "final", "invalid")
#: Usage summed over a trial's actions: all replies, and the share of them that came from a cache.
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "calls", "cached", "prompt_tokens_cached", "completion_tokens_cached")
#: Longest text (characters) of code output handed back to a policy.
MAX_FEEDBACK_CHARS = 20_000
#: Most hypotheses (or dropped hypotheses) listed in one action's record; the count is kept.
MAX_RECORDED_ITEMS = 50
#: Most experiment points listed in one action's record (the default request cap); the count is kept.
MAX_RECORDED_POINTS = 10_000


class TrialState:
    """The protocol's side of one running trial: the lab, the policy, counters and the event log.

    The lab (``etc_fast.labs``) owns the observations; every experiment goes through
    :meth:`measure`, which enforces the measurement budget and records the row's source; every
    policy decision goes through :meth:`decide`, which turns any misbehaviour into an ``invalid``
    action with the reason. The one exception let through is an
    :class:`~etc_fast.errors.InfrastructureError` (no reply at all): it ends the trial.
    """

    def __init__(self, spec: TrialSpec, lab: Lab, view: TaskView, policy: Policy, limits: Any = None) -> None:
        self.spec = spec
        self.config: ProtocolConfig = spec.config
        self.lab = lab
        self.task = lab.task
        self.view = view
        self.policy = policy
        self.limits = limits
        self.events: list[dict[str, Any]] = []
        self.usage = {k: 0 for k in _USAGE_KEYS}

    # -- measurements --------------------------------------------------------------------
    @property
    def measurements(self) -> int:
        """Experiments run so far (the unit of the measurement budget)."""
        return self.lab.measurements

    @property
    def budget_left(self) -> int | None:
        """Experiments still allowed, or ``None`` without a budget."""
        b = self.config.measurement_budget
        return None if b is None else max(0, b - self.measurements)

    def allowance(self, requested: int) -> int:
        """How many of ``requested`` experiments the budget admits."""
        left = self.budget_left
        return requested if left is None else min(requested, left)

    def measure(self, items: Any, source: str) -> Any:
        """Run the experiments ``items`` in the lab, append them, return the outputs.

        Raises:
            RuntimeError: if they would exceed the measurement budget (callers truncate first).
        """
        n = self.lab.count(items)
        left = self.budget_left
        if left is not None and n > left:
            raise RuntimeError(f"{n} measurements requested with only {left} left in the budget")
        return self.lab.run(items, source)

    @property
    def diagnostics_log(self) -> list[dict[str, Any]]:
        """The diagnostics blocks shown to the policy, in order."""
        return self.lab.diagnostics_log

    def observations_record(self) -> dict[str, Any]:
        return self.lab.record()

    # -- policy calls --------------------------------------------------------------------
    @property
    def policy_seed(self) -> int:
        """The seed handed to ``policy.begin``: 32 bits of the trial id.

        Every distinct trial (model, configuration, task, difficulty, law version, noise, rollout)
        gets its own seed, and a rerun of the same trial the same one. An LLM policy keys its reply
        cache on it, so two trials whose prompts happen to coincide (the first baseline message does
        not depend on the difficulty; the first planner message not on the acquisition rule) still
        draw independent replies instead of sharing one.
        """
        return int(self.spec.trial_id[:8], 16)

    def begin(self, phase: Phase) -> str | None:
        """Start a policy context with :attr:`policy_seed`; returns the error text if ``begin`` raised."""
        try:
            self.policy.begin(phase, self.view, self.config, self.policy_seed)
        except InfrastructureError:
            raise
        except Exception as exc:  # noqa: BLE001 - a policy must never bring the trial down
            err = f"policy.begin({phase!r}) raised {type(exc).__name__}: {exc}"
            self.events.append({"phase": phase, "event": "policy_error", "error": err})
            return err
        return None

    def decide(self, obs: Observation) -> tuple[Action, str | None]:
        """Ask the policy for one action; returns ``(action, problem)``.

        Exceptions, non-Action replies and malformed fields become ``Action(kind="invalid")`` and
        ``problem`` says what happened. Token usage is summed here.

        Raises:
            InfrastructureError: the policy got no reply from its model (never a policy decision).
        """
        try:
            action = self.policy.act(obs)
        except InfrastructureError:
            raise
        except Exception as exc:  # noqa: BLE001
            err = f"policy raised {type(exc).__name__}: {exc}"
            return Action(kind="invalid", error=err, raw=""), err
        if not isinstance(action, Action):
            err = f"policy returned {type(action).__name__}, not an Action"
            return Action(kind="invalid", error=err, raw=_short_repr(action)), err
        self._add_usage(action.usage)
        problem = _malformed(action)
        if problem is not None:
            raw = action.raw if isinstance(action.raw, str) else _short_repr(action.raw)
            return Action(kind="invalid", error=problem, raw=raw, usage={}), problem
        return action, None

    def _add_usage(self, usage: object) -> None:
        if not isinstance(usage, Mapping):
            return
        for key in _USAGE_KEYS:
            v = usage.get(key, 0)
            if isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v > 0:
                self.usage[key] += int(v)


def _short_repr(obj: object, limit: int = 500) -> str:
    try:
        text = repr(obj)
    except Exception:  # noqa: BLE001
        text = f"<unprintable {type(obj).__name__}>"
    return text if len(text) <= limit else text[:limit] + "..."


def _malformed(a: Action) -> str | None:
    """Why an Action's fields are unusable for its kind, or ``None``."""
    if a.kind not in _ACTION_KINDS:
        return f"unknown action kind {a.kind!r}; expected one of {', '.join(_ACTION_KINDS)}"
    if not isinstance(a.raw, str):
        return f"action.raw must be a string, got {type(a.raw).__name__}"
    if a.kind == "committee":
        if not isinstance(a.hypotheses, (tuple, list)):
            return f"committee hypotheses must be a list of strings, got {type(a.hypotheses).__name__}"
        if not a.hypotheses:
            return "the committee holds no hypotheses"
    elif a.kind == "analysis":
        if not isinstance(a.code, str) or not a.code.strip():
            return "an analysis request needs non-empty Python code"
    elif a.kind in ("draft", "final"):
        if not isinstance(a.source, str) or not a.source.strip():
            return f"a {a.kind} needs the discovered_law source text"
    elif a.kind == "experiment":
        if not isinstance(a.points, (tuple, list)):
            return f"experiment points must be a list of objects, got {type(a.points).__name__}"
        if not a.points:
            return "the experiment request holds no points"
    elif a.kind == "invalid":
        return a.error if isinstance(a.error, str) and a.error else "the reply could not be used"
    return None


def action_record(a: Action, *, max_points: int = MAX_RECORDED_POINTS) -> dict[str, Any]:
    """JSON-able record of an action (everything but empty fields), bounded in size.

    Long texts are cut at :data:`MAX_RECORDED_CHARS` (``raw_chars``/``code_chars``/``source_chars``
    keep the full length), hypotheses at :data:`MAX_RECORDED_ITEMS` (``n_hypotheses``) and points at
    ``max_points`` (``n_points``), so a misbehaving policy cannot blow up the record.
    """
    rec: dict[str, Any] = {"kind": a.kind, "raw": clip_text(a.raw)}
    if len(a.raw) > MAX_RECORDED_CHARS:
        rec["raw_chars"] = len(a.raw)
    if a.hypotheses:
        hyps = a.hypotheses if isinstance(a.hypotheses, (tuple, list)) else (a.hypotheses,)
        rec["hypotheses"] = [clip_text(h) if isinstance(h, str) else _short_repr(h) for h in hyps[:MAX_RECORDED_ITEMS]]
        if len(hyps) > MAX_RECORDED_ITEMS:
            rec["n_hypotheses"] = len(hyps)
    for field in ("code", "source"):
        val = getattr(a, field)
        if val is None:
            continue
        if isinstance(val, str):
            rec[field] = clip_text(val)
            if len(val) > MAX_RECORDED_CHARS:
                rec[f"{field}_chars"] = len(val)
        else:
            rec[field] = _short_repr(val)
    if a.points:
        pts = a.points if isinstance(a.points, (tuple, list)) else (a.points,)
        rec["points"] = to_jsonable([dict(p) if isinstance(p, Mapping) else _short_repr(p) for p in pts[:max_points]])
        if len(pts) > max_points:
            rec["n_points"] = len(pts)
    if a.error is not None:
        rec["error"] = clip_text(a.error) if isinstance(a.error, str) else _short_repr(a.error)
    if a.usage:
        rec["usage"] = to_jsonable(dict(a.usage)) if isinstance(a.usage, Mapping) else _short_repr(a.usage)
    return rec


def run_analysis(state: TrialState, code: str) -> tuple[str, dict[str, Any]]:
    """Run analysis code in the sandbox with what the lab preloads (:meth:`Lab.analysis_data`:
    nothing with ``interpreter_data: empty``, NewtonBench's interpreter, where the code carries its
    own numbers). Returns the feedback text and a record of the run (``ok``, ``error``, ``stdout``,
    ``truncated``).
    """
    from etc_fast.sandbox import run_code  # lazy: the sandbox pulls in process machinery

    data = state.lab.analysis_data()
    shadowed = state.lab.shadowed_names()
    try:
        res = run_code(code, data, limits=state.limits, reuse=True)  # docs/guide/sandbox.md, "Jobs met again"
        ok, error, stdout, truncated = bool(res.ok), res.error, res.stdout or "", bool(res.truncated)
    except Exception as exc:  # noqa: BLE001 - the sandbox wrapper itself failed
        ok, error, stdout, truncated = False, f"sandbox failure: {type(exc).__name__}: {exc}", "", False
    if len(stdout) > MAX_FEEDBACK_CHARS:
        stdout, truncated = stdout[:MAX_FEEDBACK_CHARS], True
    parts = []
    if ok:
        parts.append("Python execution succeeded.")
        parts.append("Output:\n" + (stdout if stdout.strip() else "(the code printed nothing)"))
    else:
        parts.append(f"The Python code failed: {error}")
        if stdout.strip():
            parts.append("Output before the failure:\n" + stdout)
    if truncated:
        parts.append("(output truncated)")
    if shadowed:
        parts.append(f"Note: variables {', '.join(shadowed)} clash with preloaded names; use the columns of X.")
    record = {"ok": ok, "error": error, "stdout": stdout, "truncated": truncated}
    return "\n".join(parts), record
