"""The report's ledger of LLM calls: every call the server answered for the run (from the
paid-call ledger in the reply cache, interrupted attempts included) and every reply the stored
trials reused from the cache.
"""

from __future__ import annotations

import dataclasses
import json
import sqlite3
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from etc_fast.llm import PaidTotals, paid_usd, read_ledger_file, read_paid

__all__ = ["RunPaid", "ledger_lines", "ledger_totals", "run_paid", "run_prices"]


@dataclasses.dataclass(frozen=True)
class RunPaid:
    """What the ledger says about a run.

    Attributes:
        rows: Paid-call totals (per role, model and, when asked, trial), or ``None`` when the run
            has no usable ledger.
        note: Why there is none, or what part of it is missing (``None`` when complete).
        before: Trials whose latest stored line predates the ledger (their own counts hold their
            paid calls).
    """

    rows: list[PaidTotals] | None
    note: str | None = None
    before: frozenset[str] = frozenset()


def run_paid(root: Path, *, by_trial: bool = False) -> RunPaid:
    """The paid calls recorded for the run in ``root`` (every cache named in ``OUT/ledger.json``)."""
    try:
        named = read_ledger_file(root)
    except ValueError as exc:
        return RunPaid(None, f"the ledger file is unusable ({exc})")
    if named is None:
        return RunPaid(None, "this run directory names no ledger (written before the ledger existed, or run "
                             "without a reply cache)")
    rows: list[PaidTotals] = []
    missing = []
    for cache in named["caches"]:
        try:
            got = read_paid(cache, named["run"], by_trial=by_trial)
        except sqlite3.Error as exc:
            got = None
            missing.append(f"`{cache}` could not be read ({exc})")
        else:
            if got is None:
                missing.append(f"`{cache}` is missing or holds no ledger")
        rows.extend(got or [])
    if missing and not rows:
        return RunPaid(None, "; ".join(missing))
    before: frozenset[str] = frozenset()
    if named["before"]:
        from etc_fast.store import TRIALS, read_trials

        before = frozenset(str(e["trial_id"]) for e in read_trials(root / TRIALS)
                           if named["before"].get(str(e["trial_id"])) == e.get("transcript_sha256"))
    return RunPaid(rows, "; ".join(missing) or None, before)


def run_prices(root: Path) -> dict[str, Mapping[str, float]]:
    """``llm.prices`` of the run's resolved configuration (else of ``estimate.json``; else none)."""
    try:
        cfg = yaml.safe_load((root / "config.resolved.yaml").read_text())
        prices = ((cfg or {}).get("llm") or {}).get("prices")
        if isinstance(prices, Mapping) and prices:
            return dict(prices)
    except (OSError, yaml.YAMLError, AttributeError):
        pass
    try:
        est = json.loads((root / "estimate.json").read_text())
        return dict(est.get("prices") or {})
    except (OSError, ValueError, AttributeError):
        return {}


def _col(df: pl.DataFrame, col: str, frame: pl.DataFrame | None = None) -> int:
    f = df if frame is None else frame
    return int(f.get_column(col).sum() or 0) if f.height and col in f.columns else 0


def ledger_totals(root: Path, df: pl.DataFrame) -> dict[str, Any] | None:
    """The run's LLM calls in all: ``{source, note, paid, reused, calls, prompt_tokens_paid,
    completion_tokens_paid, usd, rows}``; ``rows`` has one dict per role and model. ``None`` for
    a run without LLM calls.

    ``source`` is ``ledger`` (paid calls from the reply cache's ledger, every attempt) or ``trials``
    (no ledger: the stored trials' own counts, which miss calls paid by interrupted attempts).
    ``reused`` counts the replies the stored trials (each trial's latest line) took from the cache.
    """
    has_usage = {"calls_cached", "calls_paid"} <= set(df.columns)
    paid = run_paid(root)
    if not has_usage and paid.rows is None:
        return None
    prices = run_prices(root)
    rows: list[dict[str, Any]] = []
    if paid.rows is not None:
        for t in paid.rows:
            if t.role == "judge":
                reused = _col(df, "judge_calls_cached")
            else:
                reused = _col(df, "calls_cached", df.filter(pl.col("model") == t.name)) if "model" in df.columns else 0
            rows.append({"role": t.role, "model": t.name, "model_id": t.model, "trials": t.trials, "paid": t.calls,
                         "reused": reused, "prompt_tokens_paid": t.prompt_tokens,
                         "completion_tokens_paid": t.completion_tokens, "usd": paid_usd([t], prices)})
        # Trials stored before the ledger began: their own counts.
        old = df.filter(pl.col("trial_id").is_in(sorted(paid.before))) if paid.before and has_usage else df.clear()
        for name in dict.fromkeys(old.get_column("model").to_list()) if old.height else []:
            mine = old.filter(pl.col("model") == name)
            row = next((r for r in rows if r["role"] == "policy" and r["model"] == name), None)
            if row is None:
                row = {"role": "policy", "model": name, "model_id": "", "trials": 0, "paid": 0, "reused": 0,
                       "prompt_tokens_paid": 0, "completion_tokens_paid": 0, "usd": 0.0}
                rows.append(row)
            t = PaidTotals("policy", str(name), "", _col(df, "calls_paid", mine), _col(df, "prompt_tokens_paid", mine),
                           _col(df, "completion_tokens_paid", mine), mine.height)
            row["paid"] += t.calls
            row["trials"] += t.trials
            row["prompt_tokens_paid"] += t.prompt_tokens
            row["completion_tokens_paid"] += t.completion_tokens
            extra = paid_usd([t], prices)
            row["usd"] = None if row["usd"] is None or extra is None else row["usd"] + extra
            if row["reused"] == 0:
                row["reused"] = _col(df, "calls_cached", df.filter(pl.col("model") == name))
        if old.height and _col(df, "judge_calls_paid", old):
            judge = next((r for r in rows if r["role"] == "judge"), None)
            if judge is None:
                judge = {"role": "judge", "model": "judge", "model_id": "", "trials": 0, "paid": 0,
                         "reused": _col(df, "judge_calls_cached"), "prompt_tokens_paid": 0,
                         "completion_tokens_paid": 0, "usd": 0.0}
                rows.append(judge)
            judge["paid"] += _col(df, "judge_calls_paid", old)
            judge["usd"] = None  # the judge's paid tokens of those trials are not stored apart
        # Reuses by a model (or the judge) that paid for nothing in this run.
        seen = {(r["role"], r["model"]) for r in rows}
        if has_usage and "model" in df.columns:
            for name in dict.fromkeys(df.get_column("model").to_list()):
                mine = df.filter(pl.col("model") == name)
                if ("policy", name) not in seen and _col(df, "calls_cached", mine):
                    rows.append({"role": "policy", "model": name, "model_id": "", "trials": 0, "paid": 0,
                                 "reused": _col(df, "calls_cached", mine), "prompt_tokens_paid": 0,
                                 "completion_tokens_paid": 0, "usd": 0.0})
        if has_usage and not any(r["role"] == "judge" for r in rows) and _col(df, "judge_calls_cached"):
            rows.append({"role": "judge", "model": "judge", "model_id": "", "trials": 0, "paid": 0,
                         "reused": _col(df, "judge_calls_cached"), "prompt_tokens_paid": 0,
                         "completion_tokens_paid": 0, "usd": 0.0})
        source = "ledger"
    else:
        cols = ("llm_calls", "judge_calls_paid", "judge_calls_cached")
        llm = df.filter(pl.sum_horizontal([pl.col(c).fill_null(0) for c in cols]) > 0) \
            if set(cols) <= set(df.columns) else df.clear()
        if not llm.height:
            return None
        for name in dict.fromkeys(llm.get_column("model").to_list()):
            mine = llm.filter(pl.col("model") == name)
            if _col(df, "llm_calls", mine):
                t = PaidTotals("policy", str(name), "", _col(df, "calls_paid", mine), _col(df, "prompt_tokens_paid", mine),
                               _col(df, "completion_tokens_paid", mine), mine.height)
                rows.append({"role": "policy", "model": name, "model_id": "", "trials": mine.height, "paid": t.calls,
                             "reused": _col(df, "calls_cached", mine), "prompt_tokens_paid": t.prompt_tokens,
                             "completion_tokens_paid": t.completion_tokens, "usd": paid_usd([t], prices)})
        if _col(df, "judge_calls_paid", llm) or _col(df, "judge_calls_cached", llm):
            rows.append({"role": "judge", "model": "judge", "model_id": "", "trials": llm.height,
                         "paid": _col(df, "judge_calls_paid", llm), "reused": _col(df, "judge_calls_cached", llm),
                         "prompt_tokens_paid": None, "completion_tokens_paid": None, "usd": None})
        source = "trials"
    total_paid = sum(r["paid"] for r in rows)
    total_reused = sum(r["reused"] for r in rows)
    usds = [r["usd"] for r in rows if r["paid"]]
    return {
        "source": source, "note": paid.note, "before": len(paid.before), "paid": total_paid, "reused": total_reused,
        "calls": total_paid + total_reused,
        "prompt_tokens_paid": sum(r["prompt_tokens_paid"] or 0 for r in rows),
        "completion_tokens_paid": sum(r["completion_tokens_paid"] or 0 for r in rows),
        "usd": None if any(u is None for u in usds) else float(sum(usds)), "rows": rows,
    }


def _num(v: Any) -> str:
    return "–" if v is None else f"{v:,}"


def _usd(v: Any) -> str:
    return "–" if v is None else f"{v:.4f}"


def ledger_lines(root: Path, df: pl.DataFrame) -> list[str]:
    """The report's "LLM calls: paid and reused" section (nothing for a run without LLM calls)."""
    tot = ledger_totals(root, df)
    if tot is None:
        return []
    if tot["source"] == "ledger":
        what = ("Paid = calls the server answered for this run, in every attempt (interrupted ones included), "
                "as recorded with each reply in the reply cache's ledger (`ledger.json` names it); reused = replies "
                "the stored trials took from the cache (each trial's latest line); calls = paid + reused. "
                "USD from `llm.prices`.")
        if tot["before"]:
            what += (f" {tot['before']} trial(s) were stored before the run's ledger began (by an earlier version "
                     "of etc_fast): their paid calls are their own counts, which miss calls of interrupted attempts.")
        if tot["note"]:
            what += f" Part of the ledger could not be read: {tot['note']}."
    else:
        what = (f"No ledger: {tot['note']}. Paid and reused are the stored trials' own counts (each trial's latest "
                "line), so calls paid by an interrupted attempt or by a failed trial's superseded line are not "
                "among them. USD from `llm.prices`.")
    rows = ["| role | model | paid calls | reused | calls | prompt tokens paid | completion tokens paid | USD paid |",
            "|---|---|---|---|---|---|---|---|"]
    for r in tot["rows"]:
        rows.append(f"| {r['role']} | {r['model']} | {r['paid']:,} | {r['reused']:,} | {r['paid'] + r['reused']:,} "
                    f"| {_num(r['prompt_tokens_paid'])} | {_num(r['completion_tokens_paid'])} | {_usd(r['usd'])} |")
    rows.append(f"| all | | {tot['paid']:,} | {tot['reused']:,} | {tot['calls']:,} | {tot['prompt_tokens_paid']:,} "
                f"| {tot['completion_tokens_paid']:,} | {_usd(tot['usd'])} |")
    return [
        "## LLM calls: paid and reused",
        "",
        what,
        "",
        f"LLM calls: {tot['calls']} = paid {tot['paid']} + reused {tot['reused']} (source: {tot['source']}).",
        "",
        *rows,
        "",
    ]


def paid_for_trials(root: Path, trial_ids: set[str], df: pl.DataFrame) -> dict[str, PaidTotals] | None:
    """The policies' paid calls for ``trial_ids`` by model name, summed over every attempt (from
    the ledger; a trial stored before the ledger began: its own counts in ``df``), or ``None`` when
    the run has no usable ledger."""
    paid = run_paid(root, by_trial=True)
    if paid.rows is None:
        return None
    rows = list(paid.rows)
    old = sorted(paid.before & trial_ids)
    if old and {"trial_id", "model", "calls_paid"} <= set(df.columns):
        for r in df.filter(pl.col("trial_id").is_in(old)).iter_rows(named=True):
            rows.append(PaidTotals("policy", str(r["model"]), "", int(r["calls_paid"] or 0),
                                   int(r.get("prompt_tokens_paid") or 0), int(r.get("completion_tokens_paid") or 0), 1,
                                   str(r["trial_id"])))
    out: dict[str, PaidTotals] = {}
    for t in rows:
        if t.role != "policy" or t.trial not in trial_ids:
            continue
        was = out.get(t.name)
        out[t.name] = PaidTotals("policy", t.name, t.model, t.calls + (was.calls if was else 0),
                                 t.prompt_tokens + (was.prompt_tokens if was else 0),
                                 t.completion_tokens + (was.completion_tokens if was else 0),
                                 1 + (was.trials if was else 0))
    return out
