"""Mutable state of one trial: observations, measurement counting, policy calls, the event log."""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from etc_fast.core import Action, Observation, Policy, ProtocolConfig, TaskView, TrialSpec, to_jsonable
from etc_fast.errors import InfrastructureError

if TYPE_CHECKING:
    from etc_fast.tasks._base import Task

_ACTION_KINDS = ("committee", "analysis", "draft", "experiment", "final", "invalid")
#: Usage summed over a trial's actions: all replies, and the share of them that came from a cache.
_USAGE_KEYS = ("prompt_tokens", "completion_tokens", "calls", "cached", "prompt_tokens_cached", "completion_tokens_cached")
#: Longest text (characters) of code output handed back to a policy.
MAX_FEEDBACK_CHARS = 20_000
#: Longest text field (raw reply, code, law source) kept in an action's record; the full length is
#: recorded beside it. Replies are parsed only up to this length too (``etc_fast.llm`` cuts them).
MAX_RECORDED_CHARS = 200_000
#: Most hypotheses (or dropped hypotheses) listed in one action's record; the count is kept.
MAX_RECORDED_ITEMS = 50
#: Most experiment points listed in one action's record (the default request cap); the count is kept.
MAX_RECORDED_POINTS = 10_000


class TrialState:
    """Observations, counters and the event log of one running trial.

    Every simulator evaluation goes through :meth:`measure`, which enforces the measurement budget
    and records the row's source; every policy decision goes through :meth:`decide`, which turns
    any misbehaviour into an ``invalid`` action with the reason. The one exception let through is an
    :class:`~etc_fast.errors.InfrastructureError` (no reply at all): it ends the trial.
    """

    def __init__(self, spec: TrialSpec, task: Task, view: TaskView, policy: Policy, limits: Any = None) -> None:
        self.spec = spec
        self.config: ProtocolConfig = spec.config
        self.task = task
        self.view = view
        self.policy = policy
        self.limits = limits
        self.X = np.empty((0, task.d), dtype=np.float64)
        self.y = np.empty(0, dtype=np.float64)
        self.sources: list[str] = []
        self.events: list[dict[str, Any]] = []
        self.diagnostics_log: list[dict[str, Any]] = []
        self.usage = {k: 0 for k in _USAGE_KEYS}
        self.rng = np.random.default_rng([int(spec.noise_seed), int(spec.rollout)])

    # -- measurements --------------------------------------------------------------------
    @property
    def measurements(self) -> int:
        """Simulator evaluations so far (one per observed row)."""
        return int(self.y.shape[0])

    @property
    def budget_left(self) -> int | None:
        """Evaluations still allowed, or ``None`` without a budget."""
        b = self.config.measurement_budget
        return None if b is None else max(0, b - self.measurements)

    def allowance(self, requested: int) -> int:
        """How many of ``requested`` evaluations the budget admits."""
        left = self.budget_left
        return requested if left is None else min(requested, left)

    def measure(self, X: np.ndarray, source: str) -> np.ndarray:
        """Evaluate the simulator at ``X`` (n, d), append the rows, return the outputs.

        Raises:
            RuntimeError: if the rows would exceed the measurement budget (callers truncate first).
        """
        X = np.ascontiguousarray(X, dtype=np.float64).reshape(-1, self.task.d)
        left = self.budget_left
        if left is not None and X.shape[0] > left:
            raise RuntimeError(f"{X.shape[0]} measurements requested with only {left} left in the budget")
        if X.shape[0] == 0:
            return np.empty(0)
        y = np.asarray(self.task.measure(X, float(self.spec.noise), self.rng), dtype=np.float64).reshape(X.shape[0])
        self.X = np.vstack([self.X, X])
        self.y = np.concatenate([self.y, y])
        self.sources.extend([source] * X.shape[0])
        return y

    def frozen_observations(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only copies of the observations (a policy cannot alter the record)."""
        X, y = self.X.copy(), self.y.copy()
        X.flags.writeable = False
        y.flags.writeable = False
        return X, y

    def observations_record(self) -> dict[str, Any]:
        return {"X": self.X.tolist(), "y": self.y.tolist(), "source": list(self.sources)}

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

    def begin(self, phase: str) -> str | None:
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

    # -- records -------------------------------------------------------------------------
    def log_diagnostics(self, diag: Any, phase: str, turn: int) -> int:
        """Record one diagnostics block shown to the policy; returns its index."""
        entry = {"phase": phase, "turn": turn, "n_observations": self.measurements}
        entry.update(to_jsonable(dataclasses.asdict(diag)))
        self.diagnostics_log.append(entry)
        return len(self.diagnostics_log) - 1


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


def clip_text(text: str, limit: int = MAX_RECORDED_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters not recorded]"


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


def run_analysis(state: TrialState, code: str, *, preload: bool | dict[str, Any] = True) -> tuple[str, dict[str, Any]]:
    """Run analysis code in the sandbox, with the observations preloaded unless ``preload`` is false.

    Preloaded names: ``X`` (n, d), ``y`` (n,), one array per variable name, ``data`` (list of
    dicts: variable names and ``y``). With ``preload=False`` (NewtonBench's interpreter) no
    observation variable exists: the code must carry its numbers; a dict preloads exactly its
    names (a system trial's records, ``SystemTrialState.analysis_preload``). Returns the feedback text and a
    record of the run (``ok``, ``error``, ``stdout``, ``truncated``).
    """
    from etc_fast.sandbox import run_code  # lazy: the sandbox pulls in process machinery

    names = state.task.variable_names
    reserved = {"X", "y", "data", "np", "math"}
    data: dict[str, Any] = {}
    shadowed = []
    if isinstance(preload, dict):  # a system trial: exactly the names its records define
        data = dict(preload)
    elif preload:
        data = {"X": state.X.copy(), "y": state.y.copy()}
        for k, name in enumerate(names):
            if name in reserved:
                shadowed.append(name)
                continue
            data[name] = state.X[:, k].copy()
        data["data"] = [
            {**{name: float(state.X[i, k]) for k, name in enumerate(names)}, "y": float(state.y[i])}
            for i in range(state.measurements)
        ]
    try:
        res = run_code(code, data, limits=state.limits)
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
