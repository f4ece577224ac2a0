"""The report of a small run: one row per trial, its submitted law beside the true one.

A run of at most :data:`SMALL_RUN` trials leads its ``report.md`` with :func:`table_trials`. Its
statistics over modules (bootstrap intervals, paired comparisons, power) rest on one or two trials a
cell there and are folded away. The submitted law comes from each trial's transcript, the true law
from the task registry; the scale-free error comes from the results table, or, for a run stored
before that column existed, from replaying the stored submission.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import polars as pl

from etc_fast.report._format import law_expression_text, task_labels

__all__ = ["SMALL_RUN", "is_small_run", "display_frame", "table_trials", "TRIALS_TABLE_COLUMNS"]

#: A run with at most this many trials is a small run: its report leads with the per-trial table.
SMALL_RUN = 24
#: Columns of :func:`table_trials` after the condition columns that vary in the run.
TRIALS_TABLE_COLUMNS = ("task", "configuration", "submitted law", "true law", "credited", "rmsle",
                        "median_rel_error", "measurements")
_VARYING = ("model", "system", "noise", "measurement_budget", "rollout")


def is_small_run(df: pl.DataFrame) -> bool:
    """Whether the report of ``df`` is a small run's (at most :data:`SMALL_RUN` trials)."""
    return df.height <= SMALL_RUN


def display_frame(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` as the report's tables show it: a custom task by its name
    (:func:`etc_fast.report._format.task_labels`), with ``custom`` for the difficulty and law
    version it does not have."""
    if df.height == 0 or "task" not in df.columns:
        return df
    from etc_fast.tasks import CUSTOM, is_custom_task

    tasks = df.get_column("task").to_list()
    labels = task_labels(tasks)
    custom = pl.Series([is_custom_task(t) for t in tasks])
    out = df.with_columns(pl.Series("task", [labels[t] for t in tasks], dtype=pl.String))
    for col in ("difficulty", "law_version"):
        if col in out.columns:
            out = out.with_columns(pl.when(custom).then(pl.lit(CUSTOM)).otherwise(pl.col(col)).alias(col))
    return out


def _sources(root: Path, ids: list[str]) -> dict[str, str]:
    """Each trial's submitted source, read from its transcript (the line of ``trials.jsonl`` names
    it; else ``transcripts/<id>.json``); a trial without a readable transcript is left out."""
    from etc_fast.store import TRANSCRIPTS, TRIALS, read_trials

    named: dict[str, str] = {}
    if (root / TRIALS).exists():
        try:
            named = {e["trial_id"]: str(e.get("transcript") or "") for e in read_trials(root / TRIALS)}
        except Exception:  # noqa: BLE001 - damaged results were already refused by load_trials
            named = {}
    folder = (root / TRANSCRIPTS).resolve()
    out: dict[str, str] = {}
    for tid in ids:
        path = (root / (named.get(tid) or f"{TRANSCRIPTS}/{tid}.json")).resolve()
        if path.parent != folder:  # only a file of the run's own transcripts/
            continue
        try:
            record = json.loads(path.read_bytes())
        except (OSError, ValueError):
            continue
        if isinstance(record, dict):
            out[tid] = str(record.get("final_source") or "")
    return out


def _task(task: str, difficulty: str, law_version: str) -> Any:
    from etc_fast.tasks import get_task

    try:
        return get_task(task, difficulty, law_version)
    except Exception:  # noqa: BLE001 - a custom task file moved away: its law reads "–"
        return None


def _replayed_error(source: str, task: Any) -> float | None:
    """The scale-free error of a stored submission, replayed now (runs stored before the column)."""
    from etc_fast.evaluate import evaluate_submission

    try:
        return float(evaluate_submission(source, task).median_rel_error)
    except Exception:  # noqa: BLE001 - no replay here (sandbox unavailable): the cell reads "–"
        return None


def table_trials(root: str | Path, df: pl.DataFrame, *, replay_missing: bool = True) -> tuple[pl.DataFrame, int]:
    """One row per trial: the conditions that vary in the run (``model``, ``system``, ``noise``,
    ``measurement_budget``, ``rollout``), then :data:`TRIALS_TABLE_COLUMNS`.

    ``task`` reads as :func:`display_frame` names it, with ``(difficulty, law version)`` for a
    NewtonBench module; ``submitted law`` is the expression the trial's ``discovered_law`` returns
    (``failed: <error>`` for a failed trial, ``–`` without a transcript); ``true law`` is the task's
    law with its constants' values; ``credited`` is ``yes``/``no`` (``failed`` for a failed trial).

    Args:
        root: The run directory (its transcripts hold the submitted laws).
        df: The run's trials frame (:func:`etc_fast.report.load_trials`), task keys as stored.
        replay_missing: Replay a stored submission whose ``median_rel_error`` is null (a run stored
            before the column) to fill the cell.

    Returns:
        ``(table, replayed)``: the table, and how many of its errors were replayed now.
    """
    root = Path(root)
    varying = [c for c in _VARYING if c in df.columns and df.height and df.get_column(c).n_unique() > 1]
    schema: dict[str, Any] = {c: df.schema[c] for c in varying}
    schema |= {"task": pl.String, "configuration": pl.String, "submitted law": pl.String, "true law": pl.String,
               "credited": pl.String, "rmsle": pl.Float64, "median_rel_error": pl.Float64, "measurements": pl.Int64}
    if df.height == 0:
        return pl.DataFrame(schema=schema), 0
    from etc_fast.tasks import is_custom_task

    shown = display_frame(df)
    ids = df.get_column("trial_id").to_list()
    sources = _sources(root, ids)
    has_error = "median_rel_error" in df.columns
    rows, replayed = [], 0
    tasks: dict[tuple[str, str, str], Any] = {}
    for raw, disp in zip(df.iter_rows(named=True), shown.iter_rows(named=True), strict=True):
        key = (raw["task"], raw["difficulty"], raw["law_version"])
        if key not in tasks:
            tasks[key] = _task(*key)
        task = tasks[key]
        failed = raw.get("status") == "failed"
        source = sources.get(raw["trial_id"])
        submitted: str | None
        if failed:
            submitted = f"failed: {raw.get('error') or 'no reason stored'}"
        else:
            submitted = law_expression_text(source) if source is not None else None
            if source is not None and submitted is None:
                submitted = "(no law submitted)"
        error = raw.get("median_rel_error") if has_error else None
        if error is None and replay_missing and not failed and source and task is not None:
            error = _replayed_error(source, task)
            replayed += error is not None
        label = disp["task"] if is_custom_task(raw["task"]) else f"{disp['task']} ({raw['difficulty']}, {raw['law_version']})"
        rows.append({
            **{c: raw[c] for c in varying},
            "task": label,
            "configuration": raw["configuration"],
            "submitted law": submitted,
            "true law": None if task is None else str(getattr(task, "law_expression", None) or task.ground_truth_text),
            "credited": "failed" if failed else ("yes" if raw.get("credited") else "no"),
            "rmsle": raw.get("rmsle"),
            "median_rel_error": error,
            "measurements": raw.get("measurements"),
        })
    return pl.DataFrame(rows, schema=schema, orient="row"), replayed
