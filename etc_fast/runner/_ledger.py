"""The run's side of the paid-call ledger: naming it in the run directory, and the running totals
that the progress line shows.

Paid calls come from the ledger in the reply cache (:mod:`etc_fast.llm._ledger`): every call the
server answered for this run, in any attempt, interrupted ones included. Cache reuses (calls
answered from the cache, paid by an earlier attempt or another run) come from the stored trials:
each trial's latest line. A run without a reply cache has no ledger; its totals are the stored
trials' own counts, as are the paid calls of trials stored before the run's ledger began.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from etc_fast.runner._config import OFFLINE_MODELS, RunConfig

__all__ = ["RunLedger", "ledger_caches", "open_run_ledger"]


def ledger_caches(config: RunConfig) -> list[str]:
    """The reply-cache files the run's LLM calls go to (absolute), none for an offline run or one
    whose cache is off."""
    uses_policy = any(m not in OFFLINE_MODELS for m in config.models)
    paths: list[str] = []
    if uses_policy and config.llm.cache_mode != "off" and config.llm.cache_path:
        paths.append(os.path.abspath(config.llm.cache_path))
    if config.judge == "llm":
        kw = config.judge_kwargs()
        path, mode = kw.get("cache_path"), kw.get("cache_mode", "use")
        if path and mode != "off" and os.path.abspath(str(path)) not in paths:
            paths.append(os.path.abspath(str(path)))
    return paths


def _reused(summary: Mapping[str, Any]) -> int:
    return int(summary.get("calls_cached") or 0) + int(summary.get("judge_calls_cached") or 0)


def _calls(summary: Mapping[str, Any]) -> int:
    return int(summary.get("llm_calls") or 0) + int(summary.get("judge_calls_paid") or 0) + int(
        summary.get("judge_calls_cached") or 0)


def _tokens(summary: Mapping[str, Any]) -> tuple[int, int]:
    return (int(summary.get("prompt_tokens") or 0) + int(summary.get("judge_prompt_tokens") or 0),
            int(summary.get("completion_tokens") or 0) + int(summary.get("judge_completion_tokens") or 0))


@dataclasses.dataclass
class RunLedger:
    """Running totals of a run's LLM calls for the progress line.

    Attributes:
        run: The run's ledger id (``None``: no reply cache, so no ledger).
        caches: The cache files holding its ledger.
        prices: ``llm.prices`` (USD per 1M tokens by model name or id).
        summaries: The latest stored row of each trial, by trial id.
        before: Trials whose latest row was stored before the ledger began: their paid calls are
            their rows' own counts.
    """

    run: str | None
    caches: list[str]
    prices: Mapping[str, Mapping[str, float]]
    summaries: dict[str, Mapping[str, Any]] = dataclasses.field(default_factory=dict)
    before: set[str] = dataclasses.field(default_factory=set)

    def note(self, summary: Mapping[str, Any]) -> None:
        """Take in a trial's newly stored row (it supersedes the trial's earlier one)."""
        tid = str(summary.get("trial_id"))
        self.summaries[tid] = summary
        self.before.discard(tid)

    def totals(self) -> dict[str, Any]:
        """``{calls, paid, reused, prompt_tokens, completion_tokens, usd, source}``: paid calls and
        their tokens and cost from the ledger (``source: ledger``), or, without one, the stored
        trials' own counts (``source: trials``); ``usd`` is ``None`` without a price for every model."""
        from etc_fast.llm import PaidTotals, paid_usd, read_paid

        reused = sum(_reused(s) for s in self.summaries.values())
        if self.run is not None:
            paid_rows = []
            for cache in self.caches:
                try:
                    got = read_paid(cache, self.run)
                except Exception:  # noqa: BLE001 - a progress line never stops the run
                    got = None
                paid_rows.extend(got or [])
            old = [self.summaries[t] for t in self.before if t in self.summaries]
            paid_rows.extend(
                PaidTotals("policy", str(s.get("model")), "", int(s.get("calls_paid") or 0),
                           int(s.get("prompt_tokens_paid") or 0), int(s.get("completion_tokens_paid") or 0), 1)
                for s in old)
            paid = sum(t.calls for t in paid_rows) + sum(int(s.get("judge_calls_paid") or 0) for s in old)
            # Tokens: those paid for (every attempt) plus those reused from the cache by stored trials.
            p_tok = sum(t.prompt_tokens for t in paid_rows) + sum(
                int(s.get("prompt_tokens_cached") or 0) for s in self.summaries.values())
            c_tok = sum(t.completion_tokens for t in paid_rows) + sum(
                int(s.get("completion_tokens_cached") or 0) for s in self.summaries.values())
            usd = paid_usd(paid_rows, self.prices) if self.prices else None
            return {"calls": paid + reused, "paid": paid, "reused": reused, "prompt_tokens": p_tok,
                    "completion_tokens": c_tok, "usd": usd, "source": "ledger"}
        calls = sum(_calls(s) for s in self.summaries.values())
        p_tok = sum(_tokens(s)[0] for s in self.summaries.values())
        c_tok = sum(_tokens(s)[1] for s in self.summaries.values())
        return {"calls": calls, "paid": calls - reused, "reused": reused, "prompt_tokens": p_tok,
                "completion_tokens": c_tok, "usd": None, "source": "trials"}

    def text(self) -> str:
        """The progress line's part: ``calls 12 (paid 9, reused 3) tokens 4,512 $0.0031``."""
        t = self.totals()
        out = f"calls {t['calls']} (paid {t['paid']}, reused {t['reused']}) tokens {t['prompt_tokens'] + t['completion_tokens']:,}"
        if t["usd"] is not None:
            out += f" ${t['usd']:.4f}"
        return out


def open_run_ledger(config: RunConfig, out: str | os.PathLike[str], entries: Iterable[Mapping[str, Any]]) -> RunLedger | None:
    """The run's ledger view, naming the ledger in ``OUT/ledger.json`` first when the run uses a
    reply cache; ``None`` for a run with no LLM model and no LLM judge.

    Args:
        config: The run configuration.
        out: The run directory (its lock held by the caller).
        entries: The stored ``trials.jsonl`` entries (latest line of each trial), for the reuses so far.

    Raises:
        ValueError: ``OUT/ledger.json`` exists but is not a ledger file.
    """
    from etc_fast.llm import read_ledger_file, write_ledger_file

    uses_llm = config.judge == "llm" or any(m not in OFFLINE_MODELS for m in config.models)
    if not uses_llm:
        return None
    entries = list(entries)
    caches = ledger_caches(config)
    run = None
    before: dict[str, str] = {}
    if caches:
        stored = {str(e.get("trial_id")): str(e.get("transcript_sha256")) for e in entries}
        run = write_ledger_file(Path(out), caches, stored)
        named = read_ledger_file(Path(out)) or {}
        caches = list(named.get("caches") or caches)  # earlier invocations' too
        before = dict(named.get("before") or {})
    ledger = RunLedger(run=run, caches=caches, prices=dict(config.llm.prices))
    for e in entries:
        if isinstance(e.get("summary"), Mapping):
            ledger.note({**e["summary"], "trial_id": e.get("trial_id")})
    ledger.before = {str(e.get("trial_id")) for e in entries
                     if before.get(str(e.get("trial_id"))) == e.get("transcript_sha256")}
    return ledger
