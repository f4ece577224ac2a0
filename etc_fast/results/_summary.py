"""A run's summary as stored in ``results/NAME.json``: provenance, identity, trial counts, tables.

Tables are the run's own report tables (``RUN/report/*.parquet``), a chosen set of columns, each
number kept to what the report shows: a float is stored as the value its report cell prints (so the
pages, written through the report's own formatting, print the same text). Two tables are derived:
``modules`` pools the report's ``table_modules`` rows over every condition but the task (sums of
counts, count-weighted means), and ``pooled`` counts the trials themselves per system, noise level
and configuration (credited, and the exact sum of their measurements); a run of generated laws
also stores ``generated``, the same counts per seed, class and number of inputs.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import polars as pl
import yaml

from etc_fast.report import format_cell
from etc_fast.runner import machine_text, read_provenance

__all__ = ["SCHEMA", "ResultsError", "StatedProvenance", "dump_summary", "summarise_run", "table_rows"]

#: Version of the ``results/NAME.json`` layout.
SCHEMA = 1

#: The configuration a study's headline numbers name when ``store --main`` does not choose one.
DEFAULT_MAIN = "variance_c"

#: Condition columns the report groups by, in the order a table shows them.
_KEYS = ("model", "system", "noise", "measurement_budget", "difficulty", "law_version")

#: Report table -> (stored name, the columns kept besides the condition keys).
_TABLES = {
    "table1_families": ("families", ("group", "n", "credited", "sa_pct", "rmsle_mean_finite", "measurements_mean")),
    "table2_configurations": ("configurations", ("configuration", "n", "credited", "sa_pct", "rmsle_mean_finite",
                                                 "complete", "measurements_mean")),
    "table_newtonbench": ("newtonbench", ("configuration", "system", "difficulty", "trials", "masked", "acc_mean_pct",
                                          "acc_std_pct", "rmsle_mean", "rmsle_std")),
}
#: Columns of ``table_paired`` a summary keeps when the run compares with a reference (``analysis.reference``).
_PAIRED = ("system", "noise", "measurement_budget", "config_a", "config_b", "n_modules", "sa_a", "sa_b", "diff",
           "ci_low", "ci_high", "p_holm", "decision_holm")
_BUDGET_CURVE = ("configuration", "system", "noise", "measurement_budget", "n", "credited", "sa", "sa_ci_low",
                 "sa_ci_high", "mean_measurements")


class ResultsError(ValueError):
    """A run or a stored summary cannot be used; the message says what is wrong and where."""


class StatedProvenance:
    """Provenance given on the command line for a run that has no ``provenance.json``.

    Args:
        commit: The git commit the run's code was at (7 to 40 hex digits).
        machine: One line naming the machine.
        date: The day the run was made, ``YYYY-MM-DD``.

    Raises:
        ResultsError: A value is malformed (the message names it).
    """

    def __init__(self, commit: str, machine: str, date: str) -> None:
        if not re.fullmatch(r"[0-9a-f]{7,40}", commit or ""):
            raise ResultsError(f"--commit {commit!r}: give the git commit as 7 to 40 lower-case hex digits")
        if not (machine or "").strip():
            raise ResultsError("--machine: give one line naming the machine the run was made on")
        try:
            _dt.date.fromisoformat(date)
        except (TypeError, ValueError):
            raise ResultsError(f"--date {date!r}: give the day the run was made as YYYY-MM-DD") from None
        if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", date):
            raise ResultsError(f"--date {date!r}: give the day the run was made as YYYY-MM-DD")
        self.commit, self.machine, self.date = commit, machine.strip(), date


def _cell(stem: str, col: str, value: Any) -> Any:
    """``value`` as its report cell shows it, kept as a number where the cell is one."""
    if value is None or isinstance(value, (bool, int, str)):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
        shown = format_cell(stem, col, value)
        try:
            rounded = float(shown)
        except ValueError:
            return value
        return int(rounded) if shown.lstrip("-").isdigit() else rounded
    return str(value)


def table_rows(frame: pl.DataFrame, columns: list[str], stem: str | None = None) -> dict[str, Any]:
    """``{"columns", "rows"}`` of ``frame``'s ``columns``, each float rounded to its report cell."""
    rows = [[_cell(stem or "", c, v) for c, v in zip(columns, row)] for row in frame.select(columns).iter_rows()]
    return {"columns": list(columns), "rows": rows}


def _read_table(report: Path, stem: str) -> pl.DataFrame:
    pq, csv = report / f"{stem}.parquet", report / f"{stem}.csv"
    try:
        if pq.exists():
            return pl.read_parquet(pq)
        if csv.exists():
            return pl.read_csv(csv)
    except Exception as exc:  # noqa: BLE001 - any unreadable table is reported with its path
        raise ResultsError(f"{pq if pq.exists() else csv}: unreadable ({type(exc).__name__}: {exc})") from None
    raise ResultsError(f"{report}: no {stem}.parquet or {stem}.csv; write the report first "
                       f"(python -m etc_fast.report {report.parent})")


def _keys(frame: pl.DataFrame) -> list[str]:
    return [k for k in _KEYS if k in frame.columns]


def _modules(report: Path) -> dict[str, Any]:
    """Credited and n per task and configuration, pooled over every other condition."""
    frame = _read_table(report, "table_modules")
    order = list(dict.fromkeys(frame.get_column("task").to_list()))
    pooled = (
        frame.with_columns(_m=pl.col("measurements_mean") * pl.col("n"))
        .group_by("task", "configuration", maintain_order=True)
        .agg(pl.col("n").sum(), pl.col("credited").sum(), (pl.col("_m").sum() / pl.col("n").sum()).alias("measurements_mean"))
        .with_columns(pl.col("task").replace_strict({t: i for i, t in enumerate(order)}, return_dtype=pl.Int64).alias("_o"))
        .sort("_o", maintain_order=True)
    )
    return table_rows(pooled, ["task", "configuration", "n", "credited", "measurements_mean"])


def _pooled(trials: pl.DataFrame) -> dict[str, Any]:
    """Per system, noise level and configuration, over every other condition, from the trials
    themselves: ``n``, ``credited``, and the exact integer ``measurements_sum`` over the ``measured``
    trials that stored a count (so pooled means are exact, not means of rounded means)."""
    frame = trials
    for col, default in (("system", "vanilla_equation"), ("noise", 0.0)):
        if col not in frame.columns:
            frame = frame.with_columns(pl.lit(default).alias(col))
    pooled = (
        frame.group_by("system", "noise", "configuration", maintain_order=True)
        .agg(pl.len().alias("n"), pl.col("credited").fill_null(False).cast(pl.Int64).sum().alias("credited"),
             pl.col("measurements").sum().alias("measurements_sum"), pl.col("measurements").count().alias("measured"))
        .sort("system", "noise", maintain_order=True)
    )
    return table_rows(pooled, ["system", "noise", "configuration", "n", "credited", "measurements_sum", "measured"])


def _generated(trials: pl.DataFrame) -> dict[str, Any] | None:
    """Per configuration, seed, class and number of inputs of the run's generated laws
    (docs/guide/generated.md): ``n``, ``credited`` and the exact ``measurements_sum`` over the
    ``measured`` trials; ``None`` when the run played no generated law."""
    from etc_fast.tasks.generate import is_generated_name, law_by_name

    names = [t for t in dict.fromkeys(trials.get_column("task").to_list()) if is_generated_name(t)]
    if not names:
        return None
    laws = {t: law_by_name(t) for t in names}
    frame = (
        trials.filter(pl.col("task").is_in(names))
        .with_columns(pl.col("task").replace_strict({t: g.seed for t, g in laws.items()}, return_dtype=pl.Int64).alias("seed"),
                      pl.col("task").replace_strict({t: g.task_class for t, g in laws.items()},
                                                    return_dtype=pl.String).alias("task_class"),
                      pl.col("task").replace_strict({t: g.n_inputs for t, g in laws.items()},
                                                    return_dtype=pl.Int64).alias("n_inputs"))
        .group_by("configuration", "seed", "task_class", "n_inputs")
        .agg(pl.len().alias("n"), pl.col("credited").fill_null(False).cast(pl.Int64).sum().alias("credited"),
             pl.col("measurements").sum().alias("measurements_sum"), pl.col("measurements").count().alias("measured"))
        .sort("configuration", "seed", "task_class", "n_inputs")
    )
    return table_rows(frame, ["configuration", "seed", "task_class", "n_inputs", "n", "credited", "measurements_sum",
                              "measured"])


def _provenance(root: Path, stated: StatedProvenance | None) -> dict[str, Any]:
    try:
        found = read_provenance(root)
    except ValueError as exc:
        raise ResultsError(str(exc)) from None
    if found is not None:
        if stated is not None:
            raise ResultsError(f"{root} records its own provenance.json; --commit, --machine and --date are only for "
                               "runs made before runs recorded it")
        code = found.get("code") or {}
        later = found.get("later") or []
        machine = machine_text(found.get("machine") or {})
        ended = found.get("ended_utc")
        return {
            "source": "provenance.json",
            "commit": code.get("commit"),
            "dirty": code.get("dirty"),
            "later_commits": sorted({str(c) for e in later if (c := (e.get("code") or {}).get("commit"))}
                                    - {str(code.get("commit"))}),
            "etc_fast": found.get("etc_fast"),
            "started_utc": found.get("started_utc"),
            "ended_utc": ended,
            "date": (ended or found.get("started_utc") or "")[:10] or None,
            "machine": machine,
            # the machines later invocations ran on, where they differ from the first's (a study
            # resumed on another CPU: its records may differ in their last digits)
            **({"later_machines": others} if (others := [m for m in dict.fromkeys(
                machine_text(e["machine"]) for e in later if e.get("machine")) if m != machine]) else {}),
            # each invocation that ran trials (a study run in parts has several): its time and trials
            **({"parts": [{k: e.get(k) for k in ("started_utc", "ended_utc", "trials_run", "executor", "workers")}
                          for e in parts]}
               if (parts := found.get("invocations") or []) else {}),
        }
    if stated is None:
        raise ResultsError(f"{root} has no provenance.json (a run made before runs recorded it): say where it was "
                           "made with --commit SHA --machine TEXT --date YYYY-MM-DD")
    return {"source": "stated", "commit": stated.commit, "dirty": None, "date": stated.date, "machine": stated.machine}


def _planned(config: Mapping[str, Any], root: Path) -> int | None:
    """The trials of the run's grid (None when its resolved config no longer expands here, e.g. a
    custom task file that is not at its path)."""
    from etc_fast.runner import ConfigError, expand_grid, parse_config

    try:
        return len(expand_grid(parse_config(dict(config), source=str(root))))
    except (ConfigError, OSError, ValueError):
        return None


def summarise_run(run_dir: str | Path, name: str | None = None, *, stated: StatedProvenance | None = None,
                  main: str | None = None, repo: str | Path = ".") -> dict[str, Any]:
    """The summary of a finished run that ``results/NAME.json`` stores.

    Args:
        run_dir: The run directory (with its ``report/``).
        name: The study's name (default: the config's ``name``).
        stated: Provenance for a run without ``provenance.json`` (refused for one that has it).
        main: The configuration the study's headline numbers name (default ``variance_c``).
        repo: The checkout whose ``configs/`` holds the shipped study configs (for the re-run command).

    Raises:
        ResultsError: The run is missing, unreadable, has no report, or its files differ from its
            manifest; the message says which and how to fix it.
    """
    from etc_fast.store import CONFIG, check_manifest

    root = Path(run_dir)
    if not root.is_dir():
        raise ResultsError(f"{root}: no such run directory")
    config_path = root / CONFIG
    if not config_path.is_file():
        raise ResultsError(f"{root}: no {CONFIG}; not a run directory")
    problems = check_manifest(root)
    if problems:
        raise ResultsError(f"{root}: its files do not match its manifest ({'; '.join(problems[:3])}); only a finished, "
                           "unedited run is stored (python -m etc_fast.replay shows the details)")
    raw = config_path.read_bytes()
    try:
        config = yaml.safe_load(raw) or {}
    except yaml.YAMLError as exc:
        raise ResultsError(f"{config_path}: unreadable ({exc})") from None
    report = root / "report"
    if not report.is_dir():
        raise ResultsError(f"{root}: no report/; write it first (python -m etc_fast.report {root})")
    config_name = str(config.get("name") or root.name)
    name = name or config_name
    if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9_.-]*", name):
        raise ResultsError(f"--as {name!r}: use letters, digits, '_', '-' or '.', starting with a letter or digit")
    provenance = _provenance(root, stated)

    from etc_fast.report import judge_label, load_trials

    trials = load_trials(root)
    failed = trials.filter(pl.col("status") == "failed").height
    judged = trials.filter(pl.col("status") != "failed")
    judges = list(dict.fromkeys(j for j in judged.get_column("judge").to_list() if j))
    tables: dict[str, Any] = {}
    for stem, (key, cols) in _TABLES.items():
        frame = _read_table(report, stem)
        keys = [k for k in _keys(frame) if k not in cols]
        tables[key] = table_rows(frame, [*keys, *[c for c in cols if c in frame.columns]], stem)
    counted = sum(int(r[tables["configurations"]["columns"].index("n")]) for r in tables["configurations"]["rows"])
    if counted != trials.height:
        raise ResultsError(f"{report}: its Table 2 counts {counted} trials, the run holds {trials.height}; the report is "
                           f"older than the results: rewrite it (python -m etc_fast.report {root})")
    tables["modules"] = _modules(report)
    tables["pooled"] = _pooled(trials)
    generated = _generated(trials)
    if generated is not None:
        tables["generated"] = generated
    budgets = "measurement_budget" in trials.columns and trials.get_column("measurement_budget").drop_nulls().len() > 0
    if budgets:
        tables["budget_curve"] = table_rows(_read_table(report, "table_budget_curve"), list(_BUDGET_CURVE),
                                            "table_budget_curve")
    raw_analysis = config.get("analysis")
    analysis: dict[str, Any] = raw_analysis if isinstance(raw_analysis, dict) else {}
    if analysis.get("reference"):
        paired = _read_table(report, "table_paired")
        if paired.height and set(paired.get_column("config_b").to_list()) != {analysis["reference"]}:
            raise ResultsError(f"{report}: its paired table is not against analysis.reference "
                               f"({analysis['reference']}); rewrite it (python -m etc_fast.report {root})")
        tables["paired"] = table_rows(paired, [c for c in _PAIRED if c in paired.columns], "table_paired")
    shipped = Path(repo) / "configs" / f"{config_name}.yaml"
    main = main or DEFAULT_MAIN
    configurations = {row[tables["configurations"]["columns"].index("configuration")]
                      for row in tables["configurations"]["rows"]}
    if main not in configurations:
        raise ResultsError(f"--main {main}: the run has no such configuration (it has {', '.join(sorted(configurations))})")
    return {
        "schema": SCHEMA,
        "name": name,
        "config": {"name": config_name, "sha256": hashlib.sha256(raw).hexdigest(),
                   "shipped": f"configs/{config_name}.yaml" if shipped.is_file() else None},
        "judge": {"name": str(config.get("judge")), "label": judge_label(root, judges)},
        "models": list(dict.fromkeys(trials.get_column("model").to_list())),
        # "planned" only for a run stored before its grid is played out (a study run in parts)
        "trials": {"done": trials.height, "failed": failed,
                   **({"planned": planned} if (planned := _planned(config, root)) not in (None, trials.height) else {})},
        "main": main,
        "provenance": provenance,
        "tables": tables,
        # left out at the defaults: summaries stored before the setting existed stay byte-identical
        **({"analysis": {"reference": analysis.get("reference"), "cluster": analysis.get("cluster", "task")}}
           if analysis else {}),
    }


def dump_summary(summary: dict[str, Any]) -> str:
    """The stored text of a summary: sorted keys, one table row a line, a final newline."""
    rows: dict[str, str] = {}

    def mark(obj: Any) -> Any:
        if isinstance(obj, dict):
            return {k: mark(v) for k, v in obj.items()}
        if isinstance(obj, list) and all(not isinstance(v, (list, dict)) for v in obj):
            token = f"@row{len(rows)}@"
            rows[token] = json.dumps(obj, allow_nan=False, ensure_ascii=False)
            return token
        if isinstance(obj, list) and all(isinstance(r, list) for r in obj):
            out = []
            for r in obj:
                token = f"@row{len(rows)}@"
                rows[token] = json.dumps(r, allow_nan=False, ensure_ascii=False)
                out.append(token)
            return out
        return obj

    text = json.dumps(mark(summary), sort_keys=True, indent=1, allow_nan=False, ensure_ascii=False)
    for token, row in rows.items():
        text = text.replace(f'"{token}"', row, 1)
    return text + "\n"
