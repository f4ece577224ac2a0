"""The results-table schema: one row per trial, columns = ``etc_fast.protocol.SUMMARY_COLUMNS``."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import polars as pl

from etc_fast.protocol import SUMMARY_COLUMNS

__all__ = ["TRIALS_SCHEMA", "trials_frame", "entries_frame"]

_STRING = ("trial_id", "model", "configuration", "family", "acquisition", "task", "difficulty", "law_version",
           "error", "judge", "judge_reason", "status", "error_kind", "judge_status", "system")
_BOOL = ("interpreter", "valid", "complete", "q_0_01", "q_0_1", "q_1", "credited")
_INT = ("rollout", "measurements", "n_finite_target", "n_finite_pred", "sign_disagreements", "prompt_tokens",
        "completion_tokens", "llm_calls", "calls_paid", "calls_cached", "prompt_tokens_paid", "completion_tokens_paid",
        "prompt_tokens_cached", "completion_tokens_cached", "judge_calls_paid", "judge_calls_cached",
        "judge_prompt_tokens", "judge_completion_tokens", "simulated_points", "measurement_budget")
_FLOAT = ("noise", "rmsle", "wall_s", "median_rel_error")


#: Columns added after the first runs were stored: a row without them reads them as null.
_LATER = ("error_kind", "judge_status", "calls_paid", "calls_cached", "prompt_tokens_paid", "completion_tokens_paid",
          "prompt_tokens_cached", "completion_tokens_cached", "judge_calls_paid", "judge_calls_cached",
          "judge_prompt_tokens", "judge_completion_tokens", "system", "simulated_points", "measurement_budget",
          "median_rel_error")
#: What a later column reads as in a row stored before it existed (else null).
_LATER_DEFAULTS = {"system": "vanilla_equation"}


def _later_default(col: str, row: Mapping[str, Any]) -> Any:
    """A later column's value in a row stored before it existed: a vanilla trial returned one point
    per measurement, so its ``simulated_points`` is its ``measurements``."""
    if col == "simulated_points":
        if row.get("system", "vanilla_equation") in (None, "vanilla_equation"):
            return row.get("measurements")
        return None
    return _LATER_DEFAULTS.get(col)


def _dtype(col: str) -> pl.DataType:
    if col in _STRING:
        return pl.String()
    if col in _BOOL:
        return pl.Boolean()
    if col in _INT:
        return pl.Int64()
    if col in _FLOAT:
        return pl.Float64()
    raise KeyError(f"results column {col!r} has no declared type")


#: Polars schema of ``trials.parquet`` (column order = ``SUMMARY_COLUMNS``). ``rmsle`` keeps NaN/inf
#: as stored (a null means the submission was never scored).
TRIALS_SCHEMA: pl.Schema = pl.Schema({col: _dtype(col) for col in SUMMARY_COLUMNS})


def _cell(col: str, v: Any) -> Any:
    if v is None:
        return None
    if col in _FLOAT:
        return float(v)  # also reads the "nan"/"inf" strings written by to_jsonable
    if col in _INT:
        return int(v)
    if col in _BOOL:
        return bool(v)
    return str(v)


def trials_frame(rows: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """Build the typed results table from summary rows (dicts keyed by ``SUMMARY_COLUMNS``).

    Raises:
        ValueError: A row lacks a column (other than the later additions, read as null).
    """
    data: dict[str, list[Any]] = {col: [] for col in SUMMARY_COLUMNS}
    for i, row in enumerate(rows):
        missing = [c for c in SUMMARY_COLUMNS if c not in row and c not in _LATER]
        if missing:
            raise ValueError(f"results row {i} lacks columns {missing}")
        for col in SUMMARY_COLUMNS:
            data[col].append(_cell(col, row[col] if col in row else _later_default(col, row)))
    return pl.DataFrame(data, schema=TRIALS_SCHEMA)


def entries_frame(entries: Iterable[Mapping[str, Any]]) -> pl.DataFrame:
    """The typed results table of ``trials.jsonl`` entries (their ``summary`` rows, in order).

    A column missing from a summary is null, except ``measurement_budget``, which a line stored
    before the column existed reads from its spec (an ablation's own cap; null without one).
    """
    def row(entry: Mapping[str, Any]) -> dict[str, Any]:
        summary = entry["summary"]
        out = {c: summary.get(c) for c in SUMMARY_COLUMNS if c in summary or c not in _LATER}
        if "measurement_budget" not in summary:
            spec = entry.get("spec")
            cfg = spec.get("config") if isinstance(spec, Mapping) else None
            out["measurement_budget"] = cfg.get("measurement_budget") if isinstance(cfg, Mapping) else None
        return out

    return trials_frame(row(e) for e in entries)
