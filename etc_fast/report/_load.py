"""Loading a run's results table (the report reads tables only, never live objects)."""

from __future__ import annotations

import os
from pathlib import Path

import polars as pl

from etc_fast.protocol import CONFIGURATIONS, PAPER_CONFIGURATIONS
from etc_fast.store import TRIALS_SCHEMA, entries_frame, no_verdict_expr, read_trials, trials_frame

__all__ = ["load_trials", "BUDGET", "with_budget", "CONFIG_ORDER", "PAPER_ORDER", "FAMILY_GROUPS", "config_label", "paper_label",
           "variant_label", "task_sort_key"]

#: Preset order of the tables: the order of :data:`etc_fast.protocol.CONFIGURATIONS` (the paper's
#: eight, baselines first, then N planners, then C planners; then the GP-surrogate planners).
CONFIG_ORDER: tuple[str, ...] = tuple(CONFIGURATIONS)
#: The paper's eight presets: the only rows the family tables average.
PAPER_ORDER: tuple[str, ...] = PAPER_CONFIGURATIONS
#: Family groups of Table 1 / S3, in the paper's order: (label, family, interpreter).
FAMILY_GROUPS: tuple[tuple[str, str, bool], ...] = (
    ("Baseline N", "baseline", False),
    ("Planner N", "planner", False),
    ("Baseline C", "baseline", True),
    ("Planner C", "planner", True),
)


#: The measurement budget of a trial (nullable Int64; null = no cap, the configuration's own rule).
BUDGET = "measurement_budget"


def with_budget(df: pl.DataFrame) -> pl.DataFrame:
    """``df`` with a nullable Int64 ``measurement_budget`` column (all null when the run has none:
    a table written before budgets existed reads as uncapped)."""
    if BUDGET in df.columns:
        return df if df.schema[BUDGET] == pl.Int64 else df.with_columns(pl.col(BUDGET).cast(pl.Int64))
    return df.with_columns(pl.lit(None, dtype=pl.Int64).alias(BUDGET))


def _keep_budget(out: pl.DataFrame, values: list | pl.Series | None) -> pl.DataFrame:
    """Carry the budget column the stored table has but the results schema does not (yet) declare."""
    if BUDGET in out.columns or values is None:
        return out
    return out.with_columns(pl.Series(BUDGET, values).cast(pl.Int64))


def config_label(name: str) -> str:
    """``variance_c`` -> ``Variance, int.``; other names are returned as they are."""
    if name in CONFIGURATIONS:
        cfg = CONFIGURATIONS[name]
        head = "Baseline" if cfg.family == "baseline" else _ACQ_TITLE.get(cfg.acquisition, cfg.acquisition.capitalize())
        return f"{head}, {'int.' if cfg.interpreter else 'no int.'}"
    return name


#: The paper's short names of the acquisition rules (Figure S1), the GP surrogate's and the information rule's.
_ACQ_SHORT = {"variance": "Var", "pairwise": "Pair", "random": "Rand", "gp_ucb": "GP-UCB", "gp_var": "GP-Var", "mi": "MI"}
#: Table titles of the rules whose name does not capitalize into one.
_ACQ_TITLE = {"gp_ucb": "GP-UCB", "gp_var": "GP-Var", "mi": "MI"}


def variant_label(name: str) -> str:
    """The acquisition part of a preset's figure label: ``Var``, ``Pair``, ``Rand``, ``GP-UCB``,
    ``GP-Var``, ``MI`` or ``Baseline``; other names are returned as they are."""
    if name in CONFIGURATIONS:
        cfg = CONFIGURATIONS[name]
        return "Baseline" if cfg.family == "baseline" else _ACQ_SHORT[cfg.acquisition]
    return name


def paper_label(name: str) -> str:
    """The paper's figure label of a preset: ``variance_c`` -> ``Var C``, ``baseline_n`` -> ``Baseline N``
    (N = no interpreter, C = interpreter); other names (ablations) are returned as they are."""
    if name in CONFIGURATIONS:
        return f"{variant_label(name)} {'C' if CONFIGURATIONS[name].interpreter else 'N'}"
    return name


def task_sort_key(task: str) -> tuple:
    """Natural order: ``m2_...`` before ``m10_...``; custom task paths after the modules."""
    head = task.split("_", 1)[0]
    if head[:1] == "m" and head[1:].isdigit():
        return (0, int(head[1:]), task)
    return (1, 0, task)


def load_trials(run_dir: str | os.PathLike[str]) -> pl.DataFrame:
    """The typed results table of a run (``trials.parquet``, else ``trials.jsonl``).

    The Parquet file is used when it is at least as new as ``trials.jsonl``; otherwise the table is
    rebuilt from the JSONL summaries. Either way the frame has :data:`TRIALS_SCHEMA`. A trial whose
    judge reached no verdict (:func:`etc_fast.store.no_verdict`) is no result: it reads as
    ``failed``, its ``error`` the judge's reason, so every table leaves it out as a failed trial.

    Raises:
        FileNotFoundError: Neither file exists.
        etc_fast.runner.RunDirError: ``trials.jsonl`` is damaged before its last line.
    """
    return _unjudged_as_failed(_load(Path(run_dir)))


def _load(root: Path) -> pl.DataFrame:
    pq, jl = root / "trials.parquet", root / "trials.jsonl"
    if pq.exists() and (not jl.exists() or pq.stat().st_mtime >= jl.stat().st_mtime):
        frame = pl.read_parquet(pq)
        budget = frame.get_column(BUDGET) if BUDGET in frame.columns else None
        if all(c in frame.columns for c in TRIALS_SCHEMA):
            return _keep_budget(frame.select([pl.col(c).cast(t) for c, t in TRIALS_SCHEMA.items()]), budget)
        if not jl.exists():  # a table written before a column existed: read it as its summaries would be
            return _keep_budget(trials_frame(frame.to_dicts()), budget)
    if jl.exists():
        # The store's own reader: a torn last line is dropped with a warning, damage elsewhere is an
        # error, and a trial id seen twice keeps its first line, exactly as a resumed run sees it.
        entries = list(read_trials(jl))
        stored = [e["summary"].get(BUDGET) for e in entries] if any(BUDGET in e["summary"] for e in entries) else None
        return _keep_budget(entries_frame(entries), stored)
    raise FileNotFoundError(f"{root}: no trials.parquet or trials.jsonl")


def _unjudged_as_failed(frame: pl.DataFrame) -> pl.DataFrame:
    if "judge_status" not in frame.columns or "status" not in frame.columns:
        return frame
    unjudged = no_verdict_expr(frame.columns)
    return frame.with_columns(
        pl.when(unjudged).then(pl.lit("failed")).otherwise(pl.col("status")).alias("status"),
        pl.when(unjudged & pl.col("error").is_null()).then(pl.col("judge_reason")).otherwise(pl.col("error")).alias("error"),
    )
