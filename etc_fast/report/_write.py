"""Writing ``RUN_DIR/report/``: tables (Markdown, CSV, Parquet), figures (PNG), ``report.md``."""

from __future__ import annotations

import datetime as _dt
import math
import os
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl
import yaml

from etc_fast.report import _budget, _tables
from etc_fast.report._figures import plot_budget_curves, plot_coverage, plot_heatmap, plot_savings
from etc_fast.report._format import format_number
from etc_fast.report._ledger import ledger_lines
from etc_fast.report._load import load_trials
from etc_fast.report._stats import N_DRAWS, SEED
from etc_fast.report._trials import SMALL_RUN, display_frame, is_small_run, table_trials

__all__ = ["TABLE_TITLES", "build_tables", "format_cell", "write_report", "markdown_table"]

_TITLES = {
    "table1_families": "Table 1 — family-level results",
    "table2_configurations": "Table 2 / S4 — every configuration",
    "table_s2_sa_effects": "Table S2 — planner-family minus baseline SA (pp), module sensitivity",
    "table_s2_module_effects": "Per-module SA effects behind Table S2 (pp)",
    "table_s3_coverage": "Table S3 — coverage-sensitive results (complete counts, 100·Q(τ))",
    "table_heatmap": "Module × configuration SA (%)",
    "table_savings": "Measurement savings per module (baseline − planner-family mean)",
    "table_modules": "Per module and configuration",
    "table_modules_wide": "Per module and configuration (compact)",
    "table_newtonbench": "NewtonBench's own aggregation (outlier-masked mean ± std; not the paper's statistics)",
    "table_budget_curve": "SA per configuration, system, noise and measurement budget, with cluster-bootstrap intervals",
    "table_budget_to_sa": "The measurement budget each configuration needs to reach an SA",
    "table_paired": "Paired comparisons at each system, noise and budget (SA(A) − SA(B))",
    "table_power": "How many modules and rollouts an SA difference needs (power.md)",
}
#: Each report table's file stem and title.
TABLE_TITLES = _TITLES
_NOTES = {
    "table1_families": "{variants} RMSLE averages finite scores only "
    "(their count is `finite`); `measurements_mean` counts simulator evaluations per rollout (on a simulated "
    "system: the experiments run, one control dict each); `simulated_points_mean` counts the points the simulator "
    "returned (a system's time points; one per evaluation on the vanilla tier).",
    "table2_configurations": "Includes named ablations. RMSLE means exclude non-finite scores; `complete` = "
    "finite predictions wherever the target is finite; `median_rel_error_median` = the median over the trials of "
    "their median relative error |prediction − truth| / |truth| on the grid, a scale-free error beside RMSLE "
    "(docs/guide/statistics.md; – where the run stored none).",
    "table_s2_sa_effects": "Module effect = planner-family SA − baseline SA within a module (rollouts and variants "
    "averaged first). {variants} Interval: 95% percentile over {n_draws} module resamples (seed {seed}); leave-one-out "
    "range removes one module at a time; sign-flip p is exact and two-sided. Sensitivity summaries for a fixed "
    "suite, not population inference.",
    "table_s2_module_effects": "`planner` = planner-family SA (variants and rollouts averaged), `baseline` = "
    "baseline SA, `effect` = their difference; modules lacking either family are left out.",
    "table_s3_coverage": "Q(τ) = share of all trials that are complete and have finite RMSLE ≤ τ (columns "
    "`q_<τ>`, percent); invalid and incomplete submissions stay in the denominator. `finite_incomplete` = "
    "submissions with a finite RMSLE that still lack a finite prediction at some finite-target point; "
    "`sign_disagree` = submissions whose sign differs from the target's at one or more finite pairs (magnitude "
    "RMSLE cannot see it; paper S4.2). {variants}",
    "table_heatmap": "Each cell averages the rollouts of one module and configuration.",
    "table_savings": "Positive `savings` = the planner family used fewer simulator evaluations. {variants}",
    "table_modules": "Mean measurements, mean finite RMSLE, complete and credited counts per module and configuration.",
    "table_modules_wide": "Each cell: mean measurements · mean finite RMSLE · complete/n · credited/n.",
    "table_newtonbench": "Computed as NewtonBench's `result_analysis/summarize_results.py` does, for comparison with "
    "NewtonBench's published numbers: failed trials left out, inf RMSLE → missing, RMSLE outliers (modified z-score "
    "> 3.5) masked per module × difficulty × system × configuration (`masked` counts them), then mean and sample std "
    "over trial indices (rollout per law version) of the per-trial mean accuracy (`acc`, %) and RMSLE; `system` = "
    "the trials' system column, else vanilla_equation; `all` = every system and difficulty.",
    "table_budget_curve": "One row per cell (configuration × system × noise × measurement budget; empty budget = "
    "uncapped, the configuration's own rule); a cell pools its modules' difficulties, law versions and rollouts; "
    "failed trials are left out. `sa` = credited / n (a fraction). Interval: cluster bootstrap over {clusters} (each "
    "resampled cluster brings all its trials of the cell), {n_draws} resamples, seed {seed}, 95% percentile; empty "
    "with one cluster. `rmsle_median` = median RMSLE of the scored trials (NaN counted as +inf). "
    "docs/guide/statistics.md.",
    "table_budget_to_sa": "For each configuration, system and noise level: the smallest capped budget whose SA "
    "reaches `target_sa` (`budget_point`) and whose 95% lower bound reaches it (`budget_ci`), with the mean "
    "measurements used there; empty = no budget of the run reaches it; `uncapped_sa` = the uncapped point's SA.",
    "table_paired": "Every pair of configurations in a cell (A before B by role: scored = variance/pairwise, gp, "
    "random, baseline), or with `analysis.reference` each configuration (A) against it (B), on the {clusters} both "
    "ran (`n_modules` counts them). `diff` = sa_a − sa_b; interval: paired cluster bootstrap (clusters "
    "resampled once for both arms), {n_draws} resamples, seed {seed}, 95% percentile. Decision rule: `A better` "
    "when the interval lies above 0, `B better` below 0, else `no separation` (`too few modules` under two). "
    "Multiplicity: `decision` is per comparison (unadjusted); `p_boot` = two-sided bootstrap p, `p_holm` = Holm "
    "within the pairs of one system × noise × budget, `decision_holm` = the same words at family-wise 0.05. "
    "docs/guide/statistics.md.",
    "table_power": "Normal approximation on the paired module means at the run's between- and within-module "
    "variances (formula in power.md and docs/guide/statistics.md); `modules_needed` at the run's rollouts, "
    "`rollouts_needed` with the run's modules (empty: more rollouts cannot reach 80% power).",
}
#: Digits of the float columns of the statistics tables (SA as a fraction, p-values, variances).
_DIGITS = {
    "table_budget_curve": {"sa": 3, "sa_ci_low": 3, "sa_ci_high": 3, "rmsle_median": 3, "mean_measurements": 1},
    "table_budget_to_sa": {"target_sa": 2, "uncapped_sa": 3},
    "table_paired": {"sa_a": 3, "sa_b": 3, "diff": 3, "ci_low": 3, "ci_high": 3, "p_boot": 4, "p_holm": 4},
    "table_power": {"trials_per_module": 1, "between_var": 4, "within_var": 4, "delta": 2},
}
_PCT = ("sa_pct",)
_INT_LIKE = ("n", "credited", "finite", "complete", "n_modules", "n_pos", "n_neg", "n_zero", "rollout")


def prompts_line(root: Path, df: pl.DataFrame) -> list[str]:
    """The header line naming where the baselines' and the judge's messages came from (LLM runs)."""
    import json

    try:
        versions = json.loads((root / "versions.json").read_text())
    except (OSError, ValueError):
        versions = {}
    src = versions.get("prompts") if isinstance(versions, dict) else None
    if isinstance(src, dict) and src.get("prompts") == "newtonbench":
        return [
            f"Baseline and judge messages: NewtonBench's own texts, read from `{src.get('newtonbench_path')}` "
            f"(commit {src.get('newtonbench_commit') or 'unknown'}; version `{src.get('newtonbench_version')}`)."
        ]
    models = set(df.get_column("model").to_list()) if df.height else set()
    if models - {"symbolic", "scripted", "sr"}:
        return ["Baseline and judge messages: etc_fast's wording of NewtonBench's messages (docs/guide/fidelity.md)."]
    return []


def estimate_lines(root: Path, df: pl.DataFrame) -> list[str]:
    """"LLM calls: estimate and actual": the estimate the last run wrote before it played (``estimate.json``)
    beside what its trials' stored usage says (nothing when the run had no LLM trials)."""
    import json

    try:
        est = json.loads((root / "estimate.json").read_text())
    except (OSError, ValueError):
        return []
    ids = set(est.get("trial_ids") or [])
    needed = {"trial_id", "model", "llm_calls", "prompt_tokens", "completion_tokens", "calls_paid",
              "prompt_tokens_paid", "completion_tokens_paid"}
    if not ids or not df.height or not needed <= set(df.columns):
        return []
    played = df.filter(pl.col("trial_id").is_in(sorted(ids)))
    prices = est.get("prices") or {}
    from etc_fast.report._ledger import paid_for_trials

    ledger = paid_for_trials(root, ids, played)  # every attempt's paid calls; None: the trials' own counts
    rows = ["| model | trials (played) | calls: estimate (max) / actual / paid | prompt tokens: estimate / actual "
            "| completion tokens: estimate / actual | USD: estimate / actual paid |",
            "|---|---|---|---|---|---|"]
    for m in est.get("models") or []:
        mine = played.filter(pl.col("model") == m["model"])
        def total(col: str, frame: pl.DataFrame = mine) -> int:
            return int(frame.get_column(col).sum() or 0) if frame.height else 0
        if ledger is not None:
            got = ledger.get(m["model"])
            paid_calls, paid_p, paid_c = (got.calls, got.prompt_tokens, got.completion_tokens) if got else (0, 0, 0)
            calls = paid_calls + total("calls_cached")
            p_tok, c_tok = paid_p + total("prompt_tokens_cached"), paid_c + total("completion_tokens_cached")
        else:
            paid_calls, paid_p, paid_c = total("calls_paid"), total("prompt_tokens_paid"), total("completion_tokens_paid")
            calls, p_tok, c_tok = total("llm_calls"), total("prompt_tokens"), total("completion_tokens")
        rate = prices.get(m["model"]) or prices.get(m.get("model_id", ""))
        paid_usd = "–"
        if rate:
            paid_usd = f"{paid_p / 1e6 * rate['prompt'] + paid_c / 1e6 * rate['completion']:.2f}"
        est_usd = "–" if m.get("usd") is None else f"{m['usd']:.2f}"
        rows.append(
            f"| {m['model']} | {m['trials']} ({mine.height}) | {m['calls']} / {calls} / {paid_calls} "
            f"| {m['prompt_tokens']:,} / {p_tok:,} | {m['completion_tokens']:,} / {c_tok:,} "
            f"| {est_usd} / {paid_usd} |"
        )
    actual = ("paid + reused, where paid = the calls the server answered for these trials in any attempt "
              "(the ledger, interrupted attempts included) and reused = the replies the stored trials took from the cache"
              if ledger is not None else
              "the usage the server reported, as stored with each trial (cached replies included in the totals, "
              "not in paid; no ledger, so calls of interrupted attempts are missing)")
    return [
        "## LLM calls: estimate and actual",
        "",
        f"The estimate was made before the run played these trials (`estimate.json`: the protocol's turn limits, "
        f"replies of {est.get('reply_tokens')} tokens, tokens = {est.get('method')}); actual = {actual}.",
        "",
        *rows,
        "",
    ]


def variants_sentence(df: pl.DataFrame) -> str:
    """Which configurations each family group of the run averages, in words (the captions' claim
    is computed from the rows present, never assumed)."""
    groups = _tables.group_variants(df)
    planner = {g: v for g, v in groups.items() if g.startswith("Planner")}
    if not planner:
        return "No planner configuration of the paper's presets ran."
    parts = []
    for g, variants in planner.items():
        names = " or ".join(f"`{v}`" for v in variants)
        n = max(len(v.split("+")) for v in variants)
        what = "the three acquisition variants" if variants == ["Var+Pair+Rand"] else (
            f"only {names}" if n == 1 else names)
        parts.append(f"{g} averages {what}")
    return "Planner rows average the variants in `variants`: " + "; ".join(parts) + "."


#: Columns written with three significant digits (a relative error spans many magnitudes).
_SIGNIFICANT = ("median_rel_error",)


def _fmt(col: str, v: Any, digits: dict[str, int] | None = None) -> str:
    if isinstance(v, float) and math.isfinite(v):
        if col in _INT_LIKE:
            return str(int(v))
        if col in ("sign_flip_p", "noise"):
            return f"{v:.4g}"
        n = (digits or {}).get(col)
        if n is None and not col.startswith(_SIGNIFICANT):
            n = 3 if col.startswith("rmsle") else 1
        return format_number(v, n)
    if v is None or isinstance(v, (bool, int, float)):
        return format_number(v)
    return str(v).replace("|", "\\|")


def format_cell(stem: str, col: str, value: Any) -> str:
    """One cell of report table ``stem`` (e.g. ``table2_configurations``), column ``col``, as
    ``report.md`` prints it."""
    return _fmt(col, value, _DIGITS.get(stem))


def markdown_table(df: pl.DataFrame, digits: dict[str, int] | None = None) -> str:
    """A GitHub-flavoured Markdown table of ``df``. Numbers go through
    :func:`etc_fast.report._format.format_number` and keep their magnitude: ``digits`` decimals per
    column, else 3 for the RMSLE columns, three significant digits for ``median_rel_error`` and one
    decimal for the others; scientific notation below 1e-3 and from 1e5 on."""
    if df.width == 0:
        return "_(no rows)_\n"
    head = "| " + " | ".join(df.columns) + " |"
    sep = "|" + "|".join("---" if df.schema[c] == pl.String else "---:" for c in df.columns) + "|"
    rows = ["| " + " | ".join(_fmt(c, v, digits) for c, v in zip(df.columns, row)) + " |" for row in df.iter_rows()]
    if not rows:
        rows = ["| " + " | ".join("" for _ in df.columns) + " |"]
        return "\n".join([head, sep]) + "\n\n_(no rows: the run has no trials for this table)_\n"
    return "\n".join([head, sep, *rows]) + "\n"


def run_analysis(root: str | os.PathLike[str]) -> dict[str, Any]:
    """The run's ``analysis`` settings (``cluster``, ``reference``) from its ``config.resolved.yaml``;
    the defaults (``task``, none) when it has none or the file is missing."""
    out: dict[str, Any] = {"cluster": "task", "reference": None}
    path = Path(root) / "config.resolved.yaml"
    try:
        doc = yaml.safe_load(path.read_text(encoding="utf-8")) if path.exists() else None
    except (OSError, yaml.YAMLError):
        doc = None
    section = doc.get("analysis") if isinstance(doc, dict) else None
    if isinstance(section, dict):
        out.update({k: section[k] for k in ("cluster", "reference") if k in section})
    return out


#: How the report names each cluster unit (``analysis.cluster``).
CLUSTER_WORDS = {"task": "tasks (a NewtonBench module, a generated law, a custom task)",
                 "family": "law families (a NewtonBench module, a generated law's class, a custom task)"}


def build_tables(df: pl.DataFrame, *, n_draws: int = N_DRAWS, seed: int = SEED, cluster: str = "task",
                 reference: str | None = None) -> dict[str, pl.DataFrame]:
    """Every report table from a trials frame, keyed by file stem (``table_budget_to_sa`` only when
    some trial ran under a measurement budget). ``cluster`` and ``reference``: the run's
    ``analysis`` settings (:func:`etc_fast.report._budget.paired_results`)."""
    curve = _budget.table_budget_curve(df, n_draws=n_draws, seed=seed, cluster=cluster)
    pairs = _budget.paired_results(df, n_draws=n_draws, seed=seed, cluster=cluster, reference=reference)
    budget = {"table_budget_to_sa": _budget.table_budget_to_sa(curve)} if _budget.has_budgets(df) else {}
    return {
        "table1_families": _tables.table_families(df),
        "table2_configurations": _tables.table_configurations(df),
        "table_s2_sa_effects": _tables.table_sa_effects(df, n_draws=n_draws, seed=seed),
        "table_s2_module_effects": _tables.module_effects(df, "credited"),
        "table_s3_coverage": _tables.table_coverage(df),
        "table_heatmap": _tables.table_heatmap(df),
        "table_savings": _tables.table_savings(df),
        "table_modules": _tables.table_modules(df),
        "table_modules_wide": _tables.table_modules_wide(df),
        "table_newtonbench": _tables.table_newtonbench(df),
        "table_budget_curve": curve,
        **budget,
        "table_paired": _budget.table_paired(df, n_draws=n_draws, seed=seed, pairs=pairs),
        "table_power": _budget.table_power(df, pairs=pairs),
    }


#: Tables that a small run's report folds away (statistics over modules with one or two trials a cell).
FOLDED_WHEN_SMALL = ("table_s2_sa_effects", "table_s2_module_effects", "table_savings", "table_modules",
                     "table_modules_wide", "table_newtonbench", "table_budget_curve", "table_budget_to_sa",
                     "table_paired", "table_power")


def _section(stem: str, table: pl.DataFrame, *, n_draws: int, seed: int, variants: str, label: str,
             clusters: str = "modules") -> list[str]:
    """One table's section of ``report.md``: title, caption, file links, the table."""
    return [
        f"## {_TITLES[stem]}",
        "",
        _NOTES[stem].format(n_draws=n_draws, seed=seed, variants=variants, clusters=clusters) + f" Credit and SA: judge {label}.",
        "",
        f"Files: [{stem}.csv]({stem}.csv), [{stem}.parquet]({stem}.parquet)",
        "",
        markdown_table(table, _DIGITS.get(stem)),
    ]


def _code(text: str | None) -> str | None:
    """A law as Markdown code (so ``**`` and ``_`` are not read as emphasis)."""
    return None if text is None else "`" + text.replace("`", "'") + "`"


def trials_section(root: Path, stored: pl.DataFrame, label: str) -> list[str]:
    """The per-trial section that leads a small run's ``report.md``
    (:func:`etc_fast.report._trials.table_trials`)."""
    table, replayed = table_trials(root, stored)
    shown = table.with_columns(
        pl.col(c).map_elements(_code, return_dtype=pl.String) for c in ("submitted law", "true law"))
    note = (f" The run stored no `median_rel_error` for {replayed} trial(s): the report replayed their submissions to "
            "compute it." if replayed else "")
    return [
        "## Trials",
        "",
        f"One row per trial (a run of at most {SMALL_RUN} trials). `submitted law`: the expression the trial's "
        "`discovered_law` returns (from its transcript); `true law`: the task's hidden law with its constants' values. "
        f"`credited`: judge {label}. `rmsle`: NewtonBench's RMSLE; `median_rel_error`: the median over the evaluation "
        "grid of |prediction − truth| / |truth|, a scale-free error that RMSLE lacks when the outputs are far below 1 "
        "(docs/guide/statistics.md). `measurements`: simulator evaluations." + note,
        "",
        markdown_table(shown),
    ]


def power_markdown(power: pl.DataFrame, df: pl.DataFrame) -> str:
    """``report/power.md``: the method, then the run's table, or why the run supports no power
    figure (rows whose ``note`` says ``not estimable`` keep their variances, their needs left empty)."""
    text = _budget.power_text() + "\n"
    if power.height == 0:
        return text + ("No paired comparison of this run shares two or more modules, so it gives no variance to "
                       "plan with.\n")
    for note in (n for n in dict.fromkeys(power.get_column("note").to_list()) if n):
        text += f"`{note}`: {_budget.POWER_NOTES.get(note, note)}.\n\n"
    if is_small_run(df):
        text += (f"This run has {df.height} trials (at most {SMALL_RUN}): its variances come from one or two trials a "
                 "module; read them as a first look.\n\n")
    return text + markdown_table(power, _DIGITS["table_power"])


def write_report(run_dir: str | os.PathLike[str], *, n_draws: int = N_DRAWS, seed: int = SEED) -> Path:
    """Write ``RUN_DIR/report/`` from the run's results table and return the path of ``report.md``.

    Args:
        run_dir: A run directory (``trials.parquet`` or ``trials.jsonl``).
        n_draws: Module-resampling draws for Table S2.
        seed: Their seed.
    """
    root = Path(run_dir)
    stored = load_trials(root)
    df = display_frame(stored)  # custom tasks by name, every table alike
    small = is_small_run(df)
    out = root / "report"
    out.mkdir(exist_ok=True)
    keys = _tables.condition_keys(df)
    analysis = run_analysis(root)
    tables = build_tables(df, n_draws=n_draws, seed=seed, **analysis)
    for stem, table in tables.items():
        table.write_csv(out / f"{stem}.csv")
        table.write_parquet(out / f"{stem}.parquet")

    taus = np.logspace(-4, 1, 101)
    plot_savings(tables["table_savings"], keys, out / "measurement_savings.png")
    plot_coverage(_tables.coverage_curves(df, taus), keys, out / "coverage_curves.png")
    plot_heatmap(tables["table_heatmap"], keys, out / "credit_heatmap.png")
    budgets = _budget.has_budgets(df)
    stale = out / "budget_curves.png"
    if budgets:
        roles = {r["configuration"]: _budget.role_of(r["acquisition"], r["family"])
                 for r in df.select("configuration", "acquisition", "family").unique().iter_rows(named=True)}
        plot_budget_curves(tables["table_budget_curve"], stale, roles)
    else:  # a report rewritten after the budgets were dropped keeps no stale figure or table
        stale.unlink(missing_ok=True)
        for ext in ("csv", "parquet"):
            (out / f"table_budget_to_sa.{ext}").unlink(missing_ok=True)
    (out / "power.md").write_text(power_markdown(tables["table_power"], df), encoding="utf-8")

    n_failed = int(df.filter(pl.col("status") == "failed").height) if df.height else 0
    n_fin_incomplete = int(tables["table_s3_coverage"].get_column("finite_incomplete").sum() or 0)
    n_sign = int(tables["table_s3_coverage"].get_column("sign_disagree").sum() or 0)
    variants = variants_sentence(df)
    from etc_fast.report._rejudge import judge_label

    judged = df.filter(pl.col("status") != "failed") if "status" in df.columns else df  # failed trials were never judged
    judges = list(dict.fromkeys(j for j in judged.get_column("judge").to_list() if j)) if judged.height else []
    label = judge_label(root, judges)
    figures = [
        "## Figures",
        "",
        "- [Measurement savings per module](measurement_savings.png)",
        "- [Coverage curves Q(τ)](coverage_curves.png)",
        "- [Module × configuration credit heatmap](credit_heatmap.png)",
        *(["- [SA against the measurement budget](budget_curves.png)"] if budgets else []),
        "",
    ]
    if not small:
        figures += [
            "![Measurement savings](measurement_savings.png)",
            "",
            "![Coverage curves](coverage_curves.png)",
            "",
            "![Credit heatmap](credit_heatmap.png)",
            "",
            *(["![SA against the measurement budget](budget_curves.png)", ""] if budgets else []),
        ]
    lines = [
        f"# Report: {root.name}",
        "",
        f"{df.height} trials ({n_failed} failed), models: {', '.join(dict.fromkeys(df.get_column('model').to_list())) or '–'}; "
        f"written {_dt.datetime.now(_dt.UTC).strftime('%Y-%m-%d %H:%M UTC')} from `trials.parquet`.",
        f"Judge: **{label}**. SA = share of trials credited by that judge; RMSLE = NewtonBench magnitude RMSLE "
        "on the shared grid.",
        f"Coverage audit of the preset configurations: {n_fin_incomplete} finite-but-incomplete submission(s), "
        f"{n_sign} with sign disagreements (Table S3). {variants}",
        *prompts_line(root, df),
        "",
        *estimate_lines(root, df),
        *ledger_lines(root, df),
        *(trials_section(root, stored, label) if small else []),
        *figures,
        "## Statistics",
        "",
        f"Intervals of the budget and paired tables: cluster bootstrap over {CLUSTER_WORDS[analysis['cluster']]}, "
        f"{n_draws} resamples, seed {seed}, 95% percentile; paired comparisons resample the shared clusters once for both "
        "arms. "
        + (f"Each configuration is compared with `{analysis['reference']}` only. " if analysis["reference"] else "")
        + "Decision rule: `A better` / "
        "`B better` when the 95% interval of SA(A) − SA(B) excludes 0, else `no separation`; Holm-adjusted within each "
        "system × noise × budget in `decision_holm`. "
        + ("Every table groups by measurement budget (a condition like the noise level; empty = uncapped). " if budgets else "")
        + "How many modules and rollouts an effect needs: [power.md](power.md). Method: docs/guide/statistics.md.",
        "",
    ]
    folded = [stem for stem in tables if small and stem in FOLDED_WHEN_SMALL]
    for stem, table in tables.items():
        if stem not in folded:
            lines += _section(stem, table, n_draws=n_draws, seed=seed, variants=variants, label=label,
                              clusters=CLUSTER_WORDS[analysis["cluster"]])
    if folded:
        lines += [
            "## Folded at this size",
            "",
            f"With {df.height} trials (at most {SMALL_RUN}) these tables average one or two trials a module and "
            "configuration, and their intervals, paired comparisons and power rest on that; they are folded below "
            "and read as records, not as evidence.",
            "",
        ]
        for stem in folded:
            lines += [f"<details><summary>{_TITLES[stem]}</summary>", "",
                      *_section(stem, tables[stem], n_draws=n_draws, seed=seed, variants=variants, label=label,
                               clusters=CLUSTER_WORDS[analysis["cluster"]]),
                      "</details>", ""]
    report = out / "report.md"
    report.write_text("\n".join(lines), encoding="utf-8")
    return report
