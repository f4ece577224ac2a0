"""The trial record: everything one trial did, JSON round-trippable.

The flat summary fields (``summary()``) are the columns of the results table
(``trials.jsonl`` / ``trials.parquet``); the event log and observations go to the transcript.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

from etc_fast.core import TrialSpec, to_jsonable

#: Columns of the results table, in order. ``summary()`` returns exactly these keys.
SUMMARY_COLUMNS: tuple[str, ...] = (
    "trial_id", "model", "configuration", "family", "acquisition", "interpreter", "task", "difficulty",
    "law_version", "noise", "rollout", "measurements", "valid", "error", "rmsle", "complete",
    "n_finite_target", "n_finite_pred", "sign_disagreements", "q_0_01", "q_0_1", "q_1", "credited",
    "judge", "judge_reason", "status", "prompt_tokens", "completion_tokens", "llm_calls", "wall_s",
    "error_kind", "judge_status", "calls_paid", "calls_cached", "prompt_tokens_paid", "completion_tokens_paid",
    "prompt_tokens_cached", "completion_tokens_cached", "judge_calls_paid", "judge_calls_cached",
    "judge_prompt_tokens", "judge_completion_tokens", "system", "simulated_points", "measurement_budget",
    "median_rel_error",
)


@dataclasses.dataclass
class TrialRecord:
    """One finished trial.

    Attributes:
        spec: The trial spec (its ``trial_id`` identifies the record).
        status: How the decision phase ended. Baselines: ``completed`` (the policy submitted) or
            ``max_turns_reached`` (forced final call). Planners: ``completed`` (a draft ended
            exploration), ``max_turns_reached`` (all exploration turns used), ``budget_exhausted``
            (the measurement budget ended exploration) or ``pool_exhausted`` (no unused pool point
            left); synthesis follows in every case. Any family: ``failed`` (the task could not be
            loaded, the protocol itself could not finish, or a model call got no reply; ``error``
            says why). A failed trial is not a result: the next run of the same command runs it again.
        error_kind: For an infrastructure failure, its kind (``auth``, ``unreachable``,
            ``cache_miss``, ...: :data:`etc_fast.errors.ERROR_KINDS`); else ``None``.
        measurements: Simulator evaluations, bootstrap included (equations: rows; systems:
            experiments, one control dict each). Never more than the configuration's
            ``measurement_budget`` (the summary's ``measurement_budget`` column; null = no cap).
        observations: ``{"X": [[...]], "y": [...], "source": ["bootstrap"|"planner"|"experiment", ...]}``.
        events: Ordered log: one dict per decision (phase, turn, observation summary, raw and parsed
            action, feedback, selection with scores, errors).
        diagnostics: Every diagnostics block shown (dicts).
        synthesis_input: The exact observation handed to synthesis (task, observations, draft).
        draft: Draft law source, if any.
        final_source: The submitted ``discovered_law`` source ("" when none).
        submission_origin: ``synthesis``, ``draft``, ``baseline``, ``forced`` (baseline forced final
            call), ``forced_nan`` (the forced call gave no law: NewtonBench's ``return
            float('nan')`` stand-in), ``committee`` / ``diagnostics`` (``synthesis: none`` without a valid draft: the
            best-fitting calibrated committee hypothesis, or the diagnostics' power-law fit) or
            ``none``. The origin says where the text came from, not that it is valid: the
            evaluation decides that.
        evaluation: Metrics from :func:`etc_fast.evaluate.evaluate_submission` (as a dict).
        judge: Judge verdict: ``{"judge": name, "credited": bool, "reason": str, "status": ok|error|skipped}``,
            plus ``usage`` (tokens and calls this trial cost, cached ones apart) for an LLM judge.
            ``status: error``: the judge's model gave no reply; the trial is judged again on resume.
        prompt_tokens / completion_tokens / llm_calls: The policy's replies, summed over the trial.
        calls_cached / prompt_tokens_cached / completion_tokens_cached: The share of those served
            by the reply cache (no request made, nothing paid).
        chat: The policy's whole conversation: each message sent and each reply, with per-call
            records (model id, finish_reason, tokens, latency, attempts, from_cache).
        wall_s: Wall-clock seconds of the trial (excluded from reproducibility comparisons).
        error: Protocol-level error message, if any.
        versions: Package versions used.
    """

    spec: TrialSpec
    status: str = "completed"
    measurements: int = 0
    observations: dict[str, Any] = dataclasses.field(default_factory=dict)
    events: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    diagnostics: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    synthesis_input: dict[str, Any] | None = None
    draft: str | None = None
    final_source: str = ""
    submission_origin: str = "none"
    evaluation: dict[str, Any] = dataclasses.field(default_factory=dict)
    judge: dict[str, Any] = dataclasses.field(default_factory=dict)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0
    calls_cached: int = 0
    prompt_tokens_cached: int = 0
    completion_tokens_cached: int = 0
    wall_s: float = 0.0
    error: str | None = None
    error_kind: str | None = None
    chat: list[dict[str, Any]] = dataclasses.field(default_factory=list)
    versions: dict[str, str] = dataclasses.field(default_factory=dict)

    @property
    def trial_id(self) -> str:
        return self.spec.trial_id

    def to_dict(self) -> dict[str, Any]:
        d = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        d["spec"] = self.spec.to_dict()
        d["trial_id"] = self.trial_id
        return to_jsonable(d)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True, allow_nan=False)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrialRecord:
        d = dict(d)
        d.pop("trial_id", None)
        d["spec"] = TrialSpec.from_dict(d["spec"])
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})

    @classmethod
    def from_json(cls, s: str) -> TrialRecord:
        return cls.from_dict(json.loads(s))

    def summary(self) -> dict[str, Any]:
        """The flat results-table row (keys = :data:`SUMMARY_COLUMNS`)."""
        ev, cfg = self.evaluation, self.spec.config

        def num(key: str) -> float | None:
            v = ev.get(key)
            if v is None:
                return None
            return float(v) if not isinstance(v, str) else float(v)

        q = ev.get("q", {}) or {}
        row = {
            "trial_id": self.trial_id,
            "model": self.spec.model,
            "configuration": cfg.name,
            "family": cfg.family,
            "acquisition": cfg.acquisition,
            "interpreter": cfg.interpreter,
            "task": self.spec.task,
            "difficulty": self.spec.difficulty,
            "law_version": self.spec.law_version,
            "noise": float(self.spec.noise),
            "rollout": int(self.spec.rollout),
            "measurements": int(self.measurements),
            "valid": bool(ev.get("valid", False)),
            "error": self.error if self.error_kind else (ev.get("error") or self.error),
            "rmsle": num("rmsle"),
            "complete": bool(ev.get("complete", False)),
            "n_finite_target": int(ev.get("n_finite_target", 0) or 0),
            "n_finite_pred": int(ev.get("n_finite_pred", 0) or 0),
            "sign_disagreements": int(ev.get("sign_disagreements", 0) or 0),
            "q_0_01": bool(q.get("0.01", False)),
            "q_0_1": bool(q.get("0.1", False)),
            "q_1": bool(q.get("1", False)),
            "credited": bool(self.judge.get("credited", False)),
            "judge": self.judge.get("judge", "none"),
            "judge_reason": self.judge.get("reason", ""),
            "status": self.status,
            "prompt_tokens": int(self.prompt_tokens),
            "completion_tokens": int(self.completion_tokens),
            "llm_calls": int(self.llm_calls),
            "wall_s": float(self.wall_s),
            "error_kind": self.error_kind,
            "judge_status": self.judge.get("status", "ok"),
            "calls_paid": int(self.llm_calls) - int(self.calls_cached),
            "calls_cached": int(self.calls_cached),
            "prompt_tokens_paid": int(self.prompt_tokens) - int(self.prompt_tokens_cached),
            "completion_tokens_paid": int(self.completion_tokens) - int(self.completion_tokens_cached),
            "prompt_tokens_cached": int(self.prompt_tokens_cached),
            "completion_tokens_cached": int(self.completion_tokens_cached),
        }
        ju = self.judge.get("usage") or {}
        row["judge_calls_cached"] = int(ju.get("cached", 0))
        row["judge_calls_paid"] = int(ju.get("calls", 0)) - row["judge_calls_cached"]
        row["judge_prompt_tokens"] = int(ju.get("prompt_tokens", 0))
        row["judge_completion_tokens"] = int(ju.get("completion_tokens", 0))
        row["system"] = self.spec.system
        # Points the simulator returned: one per measurement on the vanilla tier, the returned time
        # points summed over the experiments on a system (kept with the system observations).
        obs = self.observations if isinstance(self.observations, dict) else {}
        row["simulated_points"] = int(obs.get("simulated_points", self.measurements) or 0)
        # The cap the trial ran under (a grid's budget or the configuration's own); None: no cap.
        row["measurement_budget"] = cfg.measurement_budget
        # The scale-free error beside RMSLE (None: an evaluation stored before it was computed).
        row["median_rel_error"] = num("median_rel_error")
        return row
