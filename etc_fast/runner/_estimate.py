"""What a run's LLM trials will cost, before it runs (``python -m etc_fast.run CONFIG --dry-run``).

Calls are bounds from the protocol's caps (:func:`call_bounds`): at most a baseline's rounds (each
absorbing up to ``max_validation_retries`` replies whose analysis code fails validation, with an
interpreter) plus the forced final call, or a planner's exploration and synthesis turns; at least a
law at the first call (plus a planner's first synthesis call).

Prompt tokens come from playing distinct trials (model, configuration, task, difficulty, law version,
system, noise; the rollout aside) offline through the real protocol and the real prompts against a
stand-in model that uses every turn: each reply is ``reply_tokens`` tokens of text that is neither an
experiment, a committee nor a law, so a baseline runs its rounds and the forced final call, a planner
its exploration turns (as repairs) and every synthesis turn. Each call's prompt is the exact text the
protocol would send after such replies (measurement rows and diagnostics that a real model's
experiments add are missing; long replies are counted in full), so token counts are approximations,
not bounds. Every distinct trial is played while the grid is small (:data:`PLAY_BUDGET`); above it,
each group of trials with the same model, configuration, system and noise (zero or not) plays a
spread sample and each played trial stands for its block (:func:`_plan`); the estimate says how many
were played. Calls beyond those played (validation retries) are counted at the last played call's size.

When the configured reply cache holds replies, every other pending trial is played up to its first
call, whose exact cache key says whether the cache holds it already (a trial whose first reply is
cached replays from the cache); without a cache file nothing is looked up.

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
    "APPROXIMATION", "DEFAULT_REPLY_TOKENS", "ESTIMATE_FILE", "PLAY_BUDGET", "Estimate", "ModelEstimate", "call_bounds",
    "estimate_run", "stored_finished", "text_tokens", "write_estimate",
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
    """The estimate for one model's pending trials.

    ``calls`` is a bound (the protocol's caps, :func:`call_bounds`), ``calls_min`` too (a law at the
    first call); ``calls_every_turn`` is what a model that uses every turn without a validation retry
    makes. Token counts are the ``chars/4`` approximation of the prompts at those call counts, not
    bounds; ``completion_tokens`` is a bound when ``llm.max_tokens`` is set. ``usd`` is the money at
    the most calls (replies at full length), ``usd_min`` the prompts of the fewest calls alone.
    """

    model: str
    model_id: str
    trials: int = 0
    calls: int = 0
    prompt_tokens: int = 0
    completion_tokens: int = 0
    calls_min: int = 0
    prompt_tokens_min: int = 0
    calls_every_turn: int = 0
    prompt_tokens_every_turn: int = 0
    first_calls_cached: int = 0
    calls_to_pay: int = 0
    prompt_tokens_to_pay: int = 0
    completion_tokens_to_pay: int = 0
    judge_calls_min: int = 0
    judge_calls_max: int = 0
    usd: float | None = None
    usd_to_pay: float | None = None
    usd_min: float | None = None
    usd_every_turn: float | None = None

    def rate(self, prices: Mapping[str, Mapping[str, float]]) -> Mapping[str, float] | None:
        """This model's price (by its grid name, else the id sent), or ``None``."""
        return prices.get(self.model) or prices.get(self.model_id)

    def price(self, prices: Mapping[str, Mapping[str, float]], reply_tokens: int = DEFAULT_REPLY_TOKENS) -> None:
        """Set the money fields from ``prices`` (``{model: {prompt, completion}}``, USD per 1M tokens)."""
        rate = self.rate(prices)
        if rate is None:
            return
        def usd(p: int, c: int) -> float:
            return p / 1e6 * float(rate["prompt"]) + c / 1e6 * float(rate["completion"])
        self.usd = usd(self.prompt_tokens, self.completion_tokens)
        self.usd_to_pay = usd(self.prompt_tokens_to_pay, self.completion_tokens_to_pay)
        self.usd_min = usd(self.prompt_tokens_min, 0)
        self.usd_every_turn = usd(self.prompt_tokens_every_turn, reply_tokens * self.calls_every_turn)


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
    #: The estimated prompt tokens of each call, per played trial; ``trial_shapes`` maps a trial id to
    #: the index of the played trial that stands for it.
    shapes: list[list[int]] = dataclasses.field(default_factory=list)
    trial_shapes: dict[str, int] = dataclasses.field(default_factory=dict)
    prices: dict[str, dict[str, float]] = dataclasses.field(default_factory=dict)
    #: Distinct pending trials (ignoring the rollout) and how many of them were played.
    distinct: int = 0
    played: int = 0
    #: Whether ``llm.max_tokens`` is set (the completion tokens are then a bound, else an assumption).
    max_tokens_set: bool = False

    def to_dict(self) -> dict[str, Any]:
        """The estimate as stored in ``OUT/estimate.json``."""
        return dataclasses.asdict(self)

    def lines(self) -> list[str]:
        """The estimate as printed by ``--dry-run``: each number says whether it is a bound or an approximation."""
        sampled = (f"{self.played} of them played, each standing for its block of trials of the same model, "
                   f"configuration, system and noise" if self.played < self.distinct else "each played")
        out = [
            f"LLM estimate for {self.pending} pending trial(s) ({self.finished} already finished are not run again). "
            f"Basis: {self.distinct} distinct trial(s) ({sampled}) against a stand-in model that uses every turn; "
            f"tokens = {self.method}.",
        ]
        reply = (f"llm.max_tokens = {self.reply_tokens} per reply" if self.max_tokens_set
                 else f"{self.reply_tokens} per reply assumed: llm.max_tokens unset")
        for m in self.models:
            out.append(f"  {m.model} ({m.model_id}): {m.trials} trials")
            every = f"{m.calls_every_turn:,}" if self.played >= self.distinct else f"about {m.calls_every_turn:,}"
            out.append(f"    calls: at least {m.calls_min:,} (a law at the first call), {every} if every turn "
                       f"is used, at most {m.calls:,} (the protocol's caps, validation retries included)")
            out.append(f"    prompt tokens (approximate, not bounds): about {m.prompt_tokens_min:,} at the fewest calls, "
                       f"{m.prompt_tokens_every_turn:,} if every turn is used, {m.prompt_tokens:,} at the caps")
            completion = "at most" if self.max_tokens_set else "about"
            out.append(f"    completion tokens: {completion} {m.completion_tokens:,} at the caps ({reply})")
            rate = m.rate(self.prices)
            if rate is not None and m.usd is not None:
                at = f"at ${float(rate['prompt']):g} prompt / ${float(rate['completion']):g} completion per 1M tokens"
                out.append(f"    USD {at}: at least ~${m.usd_min:.2f} (fewest calls, prompts only), ~${m.usd_every_turn:.2f} "
                           f"if every turn is used, at most ~${m.usd:.2f} (the caps, replies at full length)")
            cached = f"first call already cached for {m.first_calls_cached} trial(s), so " if self.cache_rows else ""
            pay = f"    to pay: {cached}at most {m.calls_to_pay:,} calls"
            if m.usd_to_pay is not None:
                pay += f", at most ~${m.usd_to_pay:.2f}"
            out.append(pay)
            if m.judge_calls_max:
                out.append(f"    judge calls: at least {m.judge_calls_min:,}, at most {m.judge_calls_max:,} (tokens not estimated)")
        if self.cache_path:
            held = "no file yet" if self.cache_rows is None else f"{self.cache_rows} stored replies"
            out.append(f"  reply cache {self.cache_path}: {held}")
        no_price = [m.model for m in self.models if m.usd is None]
        if no_price and self.models:
            out.append(f"  no price for {', '.join(no_price)}: pass --prices input=USD,output=USD (per 1M tokens) "
                       "or --prices FILE.yaml, or set llm.prices")
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


def _shape(spec: Any, configs: dict[Any, Any] | None = None) -> str:
    """A distinct trial's key: the spec without its rollout (``configs`` caches each configuration's dict)."""
    from etc_fast.core import config_dict

    configs = {} if configs is None else configs
    if spec.config not in configs:
        configs[spec.config] = config_dict(spec.config)
    d = {f.name: getattr(spec, f.name) for f in dataclasses.fields(spec) if f.name not in ("rollout", "config")}
    d["config"] = configs[spec.config]
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


def call_bounds(cfg: Any) -> tuple[int, int]:
    """``(fewest, most)`` LLM calls one trial of the protocol configuration ``cfg`` can make.

    Most: a baseline's rounds, each of which may absorb ``max_validation_retries`` replies whose
    analysis code fails validation (with an interpreter), plus the forced final call; a planner's
    exploration turns plus its synthesis turns. Fewest: a law at the first call, plus the first
    synthesis call of a planner with fresh synthesis; under a measurement budget the bootstrap may
    spend it all, leaving no exploration call.
    """
    if cfg.family == "baseline":
        retries = cfg.baseline_rounds * cfg.resolved_validation_retries if cfg.interpreter else 0
        return 1, cfg.baseline_rounds + retries + 1
    synthesis = cfg.n_synthesis_turns if cfg.synthesis == "fresh" else 0
    explore = 0 if cfg.measurement_budget is not None else min(cfg.exploration_turns, 1)
    return explore + min(synthesis, 1), cfg.exploration_turns + synthesis


#: Play units: a vanilla-equation trial costs 1, a simulated-system trial :data:`SYSTEM_PLAY_COST` (its
#: planner derives tables from simulated records every turn). Every distinct trial is played while
#: the grid's cost at most :data:`PLAY_BUDGET`; above it each group plays a spread sample (see :func:`_plan`).
PLAY_BUDGET = 160
SYSTEM_PLAY_COST = 10


def _cost(spec: Any) -> int:
    return 1 if spec.system == "vanilla_equation" else SYSTEM_PLAY_COST


def _group(spec: Any) -> str:
    """What decides a trial's turns and the growth of its prompts: model, configuration, system, noisy or not."""
    from etc_fast.core import config_dict

    return json.dumps([spec.model, config_dict(spec.config), spec.system, spec.noise > 0], sort_keys=True, default=str)


def _plan(cells: Mapping[str, Any]) -> tuple[list[str], dict[str, str]]:
    """Which distinct trials (``cells``: shape -> one spec, in grid order) are played, and which
    played one stands for each cell.

    Every cell is played when all cost at most :data:`PLAY_BUDGET`. Otherwise the budget is shared
    equally by the groups (:func:`_group`); a group of ``n`` cells plays ``R`` of them (at least one),
    spread evenly over its cells in grid order (task, system, difficulty, law version, noise) and
    offset from group to group so that different groups play different tasks; each cell stands in
    for the ``n / R`` cells of its block.
    """
    if sum(_cost(s) for s in cells.values()) <= PLAY_BUDGET:
        return list(cells), {c: c for c in cells}
    groups: dict[str, list[str]] = {}
    for shape, spec in cells.items():
        groups.setdefault(_group(spec), []).append(shape)
    n_groups = len(groups)
    played: list[str] = []
    stands: dict[str, str] = {}
    for g, members in enumerate(groups.values()):
        n = len(members)
        r = max(1, min(n, PLAY_BUDGET // n_groups // _cost(cells[members[0]])))
        offset = (g + 0.5) / n_groups
        reps = [members[min(n - 1, int((j + offset) * n / r))] for j in range(r)]
        played.extend(dict.fromkeys(reps))
        for i, shape in enumerate(members):
            stands[shape] = reps[i * r // n]
    return played, stands


class _Ticker:
    """``estimate: N of M trials played`` on stderr, once the work has taken more than a second."""

    def __init__(self, total: int, stream: Any) -> None:
        import time

        self._clock = time.perf_counter
        self.total, self.stream = total, stream
        self.start = self._clock()
        self.last = self.start

    def tick(self, done: int, what: str) -> None:
        now = self._clock()
        if self.stream is None or now - self.start < 1.0 or (now - self.last < 1.0 and done < self.total):
            return
        self.last = now
        self.stream.write(f"estimate: {what} {done} of {self.total} ({now - self.start:.0f}s)\n")
        self.stream.flush()


def estimate_run(config: Any, specs: Sequence[Any], *, finished: set[str] | None = None,
                 progress: Any = None) -> Estimate:
    """The estimate for the LLM trials of ``specs`` not in ``finished`` (trial ids already stored).

    ``progress``: a text stream for progress lines (stderr in ``--dry-run``), written only when the
    work takes more than a second; ``None``: silent.
    """
    from etc_fast.runner._config import OFFLINE_MODELS

    finished = finished or set()
    ids = [s.trial_id for s in specs]  # each computed once: a grid may hold many thousand trials
    pending = [(s, tid) for s, tid in zip(specs, ids) if tid not in finished]
    reply_tokens = int(config.llm.max_tokens or DEFAULT_REPLY_TOKENS)
    configs: dict[Any, Any] = {}
    llm_specs = [(s, tid, _shape(s, configs)) for s, tid in pending if s.model not in OFFLINE_MODELS]
    cells: dict[str, Any] = {}
    for spec, _, shape in llm_specs:
        cells.setdefault(shape, spec)
    to_play, stands = _plan(cells)
    cache_path = config.llm.cache_path if config.llm.cache_mode != "off" else None
    # A first call can only be cached when the cache file holds replies: only then is every other
    # pending trial played up to its first call for its exact cache key.
    _, rows = _cached_keys(cache_path, [])
    check_cache = bool(rows)
    texts: dict[Any, Any] = {}
    shapes: dict[str, tuple[list[int], list[int]]] = {}  # shape -> (tokens per call, the fewest calls' tokens)
    first_keys: dict[str, str] = {}  # trial id -> its first call's cache key
    ticker = _Ticker(len(to_play), progress)
    model_ids: dict[str, str] = {}
    played_ids: set[str] = set()
    for i, shape in enumerate(to_play):
        spec = cells[shape]
        policy, client = _policy(config, spec.model, (reply_tokens, None), texts)
        model_ids[spec.model] = client.model.model_id
        _play(spec, policy)
        # The fewest calls: the first exploration or baseline call (a law at once), plus the
        # first synthesis call when the protocol has one.
        fewest = [t for k, (t, ph) in enumerate(zip(client.prompt_tokens, client.phases))
                  if k == 0 or (ph == "synthesis" and client.phases[k - 1] != "synthesis")]
        shapes[shape] = (list(client.prompt_tokens), fewest)
        if client.first_key is not None:
            first_keys[spec.trial_id] = client.first_key
            played_ids.add(spec.trial_id)
        ticker.tick(i + 1, "trials played")
    if check_cache:
        rest = [(s, tid) for s, tid, _ in llm_specs if tid not in played_ids]
        ticker = _Ticker(len(rest), progress)
        for i, (spec, tid) in enumerate(rest):
            policy, client = _policy(config, spec.model, (reply_tokens, 1), texts)
            _play(spec, policy)
            if client.first_key is not None:
                first_keys[tid] = client.first_key
            ticker.tick(i + 1, "first calls looked up in the reply cache")
    found, rows = _cached_keys(cache_path, sorted(set(first_keys.values()))) if check_cache else (set(), rows)

    shape_index = {shape: k for k, shape in enumerate(to_play)}
    trial_shapes: dict[str, int] = {}
    per_model: dict[str, ModelEstimate] = {}
    for spec, tid, own in llm_specs:
        if spec.model not in model_ids:
            _, client = _policy(config, spec.model, (reply_tokens, None), texts)
            model_ids[spec.model] = client.model.model_id
        m = per_model.setdefault(spec.model, ModelEstimate(spec.model, model_ids[spec.model]))
        shape = stands[own]
        calls, fewest = shapes[shape]
        trial_shapes[tid] = shape_index[shape]
        low, high = call_bounds(spec.config)
        # Calls beyond those played (a baseline's validation retries) are counted at the last call's size.
        n_max = max(high, len(calls))
        p_max = sum(calls) + (n_max - len(calls)) * (calls[-1] if calls else 0)
        m.trials += 1
        m.calls += n_max
        m.calls_every_turn += len(calls)
        m.prompt_tokens += p_max
        m.prompt_tokens_every_turn += sum(calls)
        m.completion_tokens += reply_tokens * n_max
        m.calls_min += min(low, len(fewest))
        m.prompt_tokens_min += sum(fewest[:low])
        key = first_keys.get(tid)
        if key is not None and key in found:
            m.first_calls_cached += 1
        else:
            m.calls_to_pay += n_max
            m.prompt_tokens_to_pay += p_max
            m.completion_tokens_to_pay += reply_tokens * n_max
        if config.judge == "llm":
            m.judge_calls_min += 1
            m.judge_calls_max += 3
    for m in per_model.values():
        m.price(config.llm.prices, reply_tokens)
    return Estimate(
        models=list(per_model.values()), reply_tokens=reply_tokens, pending=len(pending), finished=len(specs) - len(pending),
        cache_path=cache_path, cache_rows=rows,
        trial_ids=[tid for _, tid, _ in llm_specs], shapes=[shapes[s][0] for s in to_play], trial_shapes=trial_shapes,
        prices={k: dict(v) for k, v in config.llm.prices.items()},
        distinct=len(cells), played=len(to_play), max_tokens_set=config.llm.max_tokens is not None,
    )


#: Where a run keeps the estimate made for the trials it set out to play (read by the report).
ESTIMATE_FILE = "estimate.json"


def write_estimate(config: Any, pending: Sequence[Any], out: str | os.PathLike[str], *,
                   progress: Any = None) -> Estimate | None:
    """Estimate ``pending`` and write ``OUT/estimate.json`` (nothing for runs without LLM trials);
    ``progress`` as in :func:`estimate_run`."""
    from etc_fast.runner._config import OFFLINE_MODELS

    if not any(s.model not in OFFLINE_MODELS for s in pending):
        return None
    estimate = estimate_run(config, pending, progress=progress)
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
