"""What a run's LLM trials will cost, before it runs (``python -m etc_fast.run CONFIG --dry-run``).

Each distinct trial (model, configuration, task, difficulty, law version, system, noise) is played once
offline through the real protocol and the real prompts against a stand-in model that uses every turn
the protocol allows: each reply is ``reply_tokens`` tokens of text that is neither an experiment, a
committee nor a law, so the baseline runs its 10 rounds and the forced final call, a planner its
exploration turns (as repairs) and every synthesis turn. So the call count is the turn limits' maximum,
and each call's prompt is the exact text the protocol would send after such replies (measurement rows
and diagnostics that a real model's experiments would add are missing; long replies are counted in full).
Every other pending trial is played up to its first call, whose exact cache key says whether the
configured reply cache holds it already (a trial whose first reply is cached replays from the cache).

Tokens: no tokenizer for the model family is available offline, so text is counted as
``ceil(characters / 4)`` plus 4 per message (chat framing), the usual approximation for English text
with BPE tokenizers. ``reply_tokens`` is ``llm.max_tokens`` when set, else 400 (an assumption).
Judge calls (``judge: llm``) are counted as 1 to 3 per trial (NewtonBench's attempts), tokens not estimated.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sqlite3
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from etc_fast.errors import InfrastructureError

__all__ = [
    "APPROXIMATION", "DEFAULT_REPLY_TOKENS", "ESTIMATE_FILE", "Estimate", "ModelEstimate", "estimate_run",
    "stored_finished", "text_tokens", "write_estimate",
]

#: How text is turned into tokens (stated in every estimate).
APPROXIMATION = "ceil(chars/4) + 4 per message (no tokenizer available offline)"
#: Reply length assumed when ``llm.max_tokens`` is not set.
DEFAULT_REPLY_TOKENS = 400
_FILLER = "I am still considering the measurements and have no request yet. "


def text_tokens(text: str) -> int:
    """Approximate tokens of one message: ``ceil(len/4) + 4``."""
    return math.ceil(len(text) / 4) + 4


@dataclasses.dataclass
class ModelEstimate:
    """The estimate for one model's pending trials."""

    model: str
    model_id: str
    trials: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls_min: int = 0
    prompt_tokens_min: int = 0
    first_calls_cached: int = 0
    calls_to_pay: int = 0
    prompt_tokens_to_pay: int = 0
    completion_tokens_to_pay: int = 0
    judge_calls_min: int = 0
    judge_calls_max: int = 0
    usd: float | None = None
    usd_to_pay: float | None = None

    def price(self, prices: Mapping[str, Mapping[str, float]]) -> None:
        rate = prices.get(self.model) or prices.get(self.model_id)
        if rate is None:
            return
        def usd(p: int, c: int) -> float:
            return p / 1e6 * float(rate["prompt"]) + c / 1e6 * float(rate["completion"])
        self.usd = usd(self.prompt_tokens, self.completion_tokens)
        self.usd_to_pay = usd(self.prompt_tokens_to_pay, self.completion_tokens_to_pay)


@dataclasses.dataclass
class Estimate:
    """A run's estimate: per model, plus how it was made."""

    models: list[ModelEstimate]
    reply_tokens: int
    pending: int
    finished: int
    cache_path: str | None
    cache_rows: int | None
    method: str = APPROXIMATION
    trial_ids: list[str] = dataclasses.field(default_factory=list)
    #: The estimated prompt tokens of each call, per distinct trial; ``trial_shapes`` maps a trial id to its index.
    shapes: list[list[int]] = dataclasses.field(default_factory=list)
    trial_shapes: dict[str, int] = dataclasses.field(default_factory=dict)
    prices: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    def lines(self) -> list[str]:
        """The estimate as printed by ``--dry-run``."""
        out = [
            f"LLM estimate for {self.pending} pending trial(s) ({self.finished} already finished are not run again); "
            f"at most the protocol's turn limits, replies of {self.reply_tokens} tokens, tokens = {self.method}:"
        ]
        for m in self.models:
            money = "" if m.usd is None else f", ~${m.usd:.2f} (to pay ~${m.usd_to_pay:.2f})"
            judge = f", judge calls {m.judge_calls_min}-{m.judge_calls_max}" if m.judge_calls_max else ""
            out.append(
                f"  {m.model} ({m.model_id}): {m.trials} trials, {m.calls_min}-{m.calls} calls, "
                f"{m.prompt_tokens_min:,}-{m.prompt_tokens:,} prompt + <= {m.completion_tokens:,} completion tokens{money}; "
                f"first call already cached for {m.first_calls_cached} trial(s), so <= {m.calls_to_pay} calls to pay{judge}"
            )
        if self.cache_path:
            held = "no file yet" if self.cache_rows is None else f"{self.cache_rows} stored replies"
            out.append(f"  reply cache {self.cache_path}: {held}")
        no_price = [m.model for m in self.models if m.usd is None]
        if no_price and self.models:
            out.append(f"  no price for {', '.join(no_price)} (llm.prices: {{model: {{prompt: USD/1M, completion: USD/1M}}}})")
        return out


class _StandIn:
    """Answers every call with filler; records each request's size and the first request's cache key."""

    def __init__(self, real: Any, reply_tokens: int, stop_after: int | None = None) -> None:
        self._real = real
        self.settings = real.settings
        self.model = real.model
        self.reply_tokens = reply_tokens
        self.stop_after = stop_after
        self._reply = (_FILLER * (reply_tokens * 4 // len(_FILLER) + 1))[: reply_tokens * 4]
        self.prompt_tokens: list[int] = []
        self.phases: list[str] = []
        self.first_key: str | None = None
        self.policy: Any = None

    def complete(self, messages: Sequence[Mapping[str, Any]], *, sample: int | None = None) -> Any:
        from etc_fast.llm import Completion, cache_key

        key = cache_key(self._real.request_for(messages, sample))
        if self.first_key is None:
            self.first_key = key
        self.prompt_tokens.append(sum(text_tokens(str(m["content"])) for m in messages))
        self.phases.append(str(getattr(self.policy, "_phase", "")))
        if self.stop_after is not None and len(self.prompt_tokens) >= self.stop_after:
            raise InfrastructureError("estimate: enough calls seen", kind="stopped")
        return Completion(self._reply, None, self.prompt_tokens[-1], self.reply_tokens, False, self.model.model_id, key, 1,
                          finish_reason="stop")

    def close(self) -> None:
        pass


def _policy(config: Any, model: str, stand_in_args: tuple[int, int | None], texts: dict[Any, Any]) -> tuple[Any, _StandIn]:
    from etc_fast.llm import LLMClient, make_texts
    from etc_fast.policies.llm import LLMPolicy, settings_from

    opts = dict(config.policy_options(model))
    source = (opts.pop("prompts", "etc_fast"), opts.pop("newtonbench_path", None))
    if source not in texts:  # a NewtonBench checkout is read once, not once per trial
        texts[source] = make_texts(*source)
    settings = settings_from(model, None, opts)
    real = LLMClient(settings, environ={settings.api_key_env: "estimate"})  # no request is ever made
    client = _StandIn(real, *stand_in_args)
    client.policy = LLMPolicy(model, client=client, texts=texts[source])  # type: ignore[arg-type]
    return client.policy, client


def _play(spec: Any, policy: Any) -> None:
    """The protocol's loop for ``spec`` (as ``run_trial`` plays it), without scoring or judging."""
    from etc_fast.protocol import play

    try:
        play(spec, policy)
    except InfrastructureError:
        pass  # the stand-in stops a first-call play here


def _shape(spec: Any) -> str:
    d = spec.to_dict()
    d.pop("rollout", None)
    return json.dumps(d, sort_keys=True, default=str)


def _cached_keys(path: str | None, keys: Sequence[str]) -> tuple[set[str], int | None]:
    """Which of ``keys`` the cache at ``path`` holds, and how many rows it has (read only; no file is made)."""
    if not path or not os.path.isfile(path):
        return set(), None
    try:
        conn = sqlite3.connect(f"{Path(path).resolve().as_uri()}?mode=ro", uri=True, timeout=10)
        try:
            rows = int(conn.execute("SELECT COUNT(*) FROM completions").fetchone()[0])
            found: set[str] = set()
            for i in range(0, len(keys), 500):
                part = list(keys[i:i + 500])
                marks = ",".join("?" * len(part))
                found |= {r[0] for r in conn.execute(f"SELECT key FROM completions WHERE key IN ({marks})", part)}
            return found, rows
        finally:
            conn.close()
    except sqlite3.Error:
        return set(), None


def estimate_run(config: Any, specs: Sequence[Any], *, finished: set[str] | None = None) -> Estimate:
    """The estimate for the LLM trials of ``specs`` not in ``finished`` (trial ids already stored)."""
    from etc_fast.runner._config import OFFLINE_MODELS

    finished = finished or set()
    pending = [s for s in specs if s.trial_id not in finished]
    reply_tokens = int(config.llm.max_tokens or DEFAULT_REPLY_TOKENS)
    per_model: dict[str, ModelEstimate] = {}
    first_keys: dict[str, tuple[str, int, int]] = {}  # trial id -> (first key, its prompt tokens, model)
    shapes: dict[str, tuple[list[int], list[int]]] = {}  # shape -> (tokens per call, the fewest calls' tokens)
    shape_index: dict[str, int] = {}
    trial_shapes: dict[str, int] = {}
    llm_specs = [s for s in pending if s.model not in OFFLINE_MODELS]
    texts: dict[Any, Any] = {}
    for spec in llm_specs:
        shape = _shape(spec)
        policy, client = _policy(config, spec.model, (reply_tokens, 1 if shape in shapes else None), texts)
        m = per_model.setdefault(spec.model, ModelEstimate(spec.model, client.model.model_id))
        _play(spec, policy)
        if shape not in shapes:
            # The fewest calls: the first exploration or baseline call (a law at once), plus the
            # first synthesis call when the protocol has one.
            fewest = [t for i, (t, ph) in enumerate(zip(client.prompt_tokens, client.phases))
                      if i == 0 or (ph == "synthesis" and client.phases[i - 1] != "synthesis")]
            shapes[shape] = (list(client.prompt_tokens), fewest)
            shape_index[shape] = len(shape_index)
        calls, fewest = shapes[shape]
        trial_shapes[spec.trial_id] = shape_index[shape]
        m.trials += 1
        m.calls += len(calls)
        m.prompt_tokens += sum(calls)
        m.completion_tokens += reply_tokens * len(calls)
        m.calls_min += len(fewest)
        m.prompt_tokens_min += sum(fewest)
        if client.first_key is not None:
            first_keys[spec.trial_id] = (client.first_key, len(calls), sum(calls))
        if config.judge == "llm":
            m.judge_calls_min += 1
            m.judge_calls_max += 3
    cache_path = config.llm.cache_path if config.llm.cache_mode != "off" else None
    found, rows = _cached_keys(cache_path, [k for k, _, _ in first_keys.values()])
    by_id = {s.trial_id: s for s in llm_specs}
    for tid, (key, n_calls, p_tok) in first_keys.items():
        m = per_model[by_id[tid].model]
        if key in found:
            m.first_calls_cached += 1
        else:
            m.calls_to_pay += n_calls
            m.prompt_tokens_to_pay += p_tok
            m.completion_tokens_to_pay += reply_tokens * n_calls
    for m in per_model.values():
        m.price(config.llm.prices)
    return Estimate(
        models=list(per_model.values()), reply_tokens=reply_tokens, pending=len(pending), finished=len(specs) - len(pending),
        cache_path=cache_path, cache_rows=rows,
        trial_ids=[s.trial_id for s in llm_specs], shapes=[v[0] for v in shapes.values()], trial_shapes=trial_shapes,
        prices={k: dict(v) for k, v in config.llm.prices.items()},
    )


#: Where a run keeps the estimate made for the trials it set out to play (read by the report).
ESTIMATE_FILE = "estimate.json"


def write_estimate(config: Any, pending: Sequence[Any], out: str | os.PathLike[str]) -> Estimate | None:
    """Estimate ``pending`` and write ``OUT/estimate.json`` (nothing for runs without LLM trials)."""
    from etc_fast.runner._config import OFFLINE_MODELS

    if not any(s.model not in OFFLINE_MODELS for s in pending):
        return None
    estimate = estimate_run(config, pending)
    path = Path(out) / ESTIMATE_FILE
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(estimate.to_dict(), indent=1, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)
    return estimate


def stored_finished(out: str | os.PathLike[str]) -> set[str]:
    """Trial ids already stored as results in the run directory ``out`` (read only)."""
    from etc_fast.store import TRIALS, is_finished, read_trials

    path = Path(out) / TRIALS
    if not path.is_file():
        return set()
    latest: dict[str, Any] = {}
    for entry in read_trials(path):
        latest[entry["trial_id"]] = entry
    return {tid for tid, e in latest.items() if is_finished(e)}
