"""The paper's tables as Polars frames, computed from the results table only.

Every function takes the typed trials frame (:func:`etc_fast.report.load_trials`) and returns a
frame; conditions that have no trials (e.g. a run with planners only) simply have no rows, and
columns that need a missing family are null. Rows are grouped by model and difficulty, plus system,
law version, noise level and measurement budget when a run has more than one of them (a run with
budgets never pools them: the budget is a condition like the noise level; null = uncapped).

Family tables (Table 1, S2, S3, savings) use only the paper's eight preset configurations, so
planner-family rows average exactly the three acquisition variants; the GP-surrogate presets and
named ablations appear in the per-configuration tables (Table 2 / S4, heatmap).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import polars as pl

from etc_fast.report._format import format_number
from etc_fast.report._load import (
    BUDGET,
    CONFIG_ORDER,
    FAMILY_GROUPS,
    PAPER_ORDER,
    config_label,
    task_sort_key,
    variant_label,
)
from etc_fast.report._stats import N_DRAWS, SEED, summarize_effects

__all__ = [
    "condition_keys",
    "table_families",
    "table_configurations",
    "module_effects",
    "table_sa_effects",
    "table_coverage",
    "table_heatmap",
    "table_savings",
    "table_modules",
    "table_modules_wide",
    "coverage_curves",
    "group_variants",
    "nb_mask_outliers",
    "table_newtonbench",
    "TAUS",
]

#: Coverage thresholds of Table S3.
TAUS: tuple[float, ...] = (0.01, 0.1, 1.0)
_DIFF_ORDER = {"easy": 0, "medium": 1, "hard": 2}
_GROUP_ORDER = {label: i for i, (label, _, _) in enumerate(FAMILY_GROUPS)}

_FINITE = pl.col("rmsle").is_not_null() & pl.col("rmsle").is_finite()


def condition_keys(df: pl.DataFrame) -> list[str]:
    """Grouping columns: model, difficulty, and system / law_version / noise / measurement_budget
    when they vary (a null budget, uncapped, is one of the values)."""
    keys = ["model", "difficulty"]
    keys += [c for c in ("system", "law_version", "noise", BUDGET) if c in df.columns and df.height and df.get_column(c).n_unique() > 1]
    return keys


def _presets(df: pl.DataFrame) -> pl.DataFrame:
    """The rows of the paper's eight presets (the GP planners and ablations are per-configuration rows)."""
    return df.filter(pl.col("configuration").is_in(list(PAPER_ORDER)))


def _with_group(df: pl.DataFrame) -> pl.DataFrame:
    expr = pl.lit(None, dtype=pl.String)
    for label, family, interp in reversed(FAMILY_GROUPS):
        expr = pl.when((pl.col("family") == family) & (pl.col("interpreter") == interp)).then(pl.lit(label)).otherwise(expr)
    return df.with_columns(group=expr, tool=pl.when(pl.col("interpreter")).then(pl.lit("C")).otherwise(pl.lit("N")))


def _sort(out: pl.DataFrame, src: pl.DataFrame, keys: Sequence[str], extra: Sequence[tuple[str, dict]] = ()) -> pl.DataFrame:
    """Sort by model (first appearance), difficulty (easy < medium < hard), other keys, extras."""
    if out.height == 0:
        return out
    models = {m: i for i, m in enumerate(dict.fromkeys(src.get_column("model").to_list()))}
    cols = [pl.col("model").replace_strict(models, default=len(models), return_dtype=pl.Int64).alias("_k0"),
            pl.col("difficulty").replace_strict(_DIFF_ORDER, default=9, return_dtype=pl.Int64).alias("_k1")]
    order = ["_k0", "_k1"] + [k for k in keys if k not in ("model", "difficulty")]
    for i, (col, mapping) in enumerate(extra):
        cols.append(pl.col(col).replace_strict(mapping, default=len(mapping), return_dtype=pl.Int64).alias(f"_e{i}"))
        order.append(f"_e{i}")
    return out.with_columns(cols).sort(order, maintain_order=True, nulls_last=True).drop([c for c in order if c.startswith("_")])


def _variants_agg() -> pl.Expr:
    return pl.col("configuration").unique().alias("variants")


def _variants_text(out: pl.DataFrame) -> pl.DataFrame:
    """Turn the aggregated configuration lists of ``variants`` into the paper's short labels in
    preset order (``Var+Pair+Rand``, ``Rand``, ``Baseline``)."""
    if out.height == 0:
        return out.with_columns(pl.col("variants").cast(pl.List(pl.String)).list.join("+"))
    order = {c: i for i, c in enumerate(CONFIG_ORDER)}

    def text(names: Sequence[str]) -> str:
        return "+".join(variant_label(n) for n in sorted(names, key=lambda c: order.get(c, len(order))))

    return out.with_columns(pl.col("variants").map_elements(text, return_dtype=pl.String))


def group_variants(df: pl.DataFrame) -> dict[str, list[str]]:
    """For each family group present, the distinct ``variants`` strings of its rows (one per
    condition pattern), e.g. ``{"Planner N": ["Rand"], "Planner C": ["Var+Pair+Rand"]}``."""
    t = table_families(df)
    out: dict[str, list[str]] = {}
    for row in t.iter_rows(named=True):
        vals = out.setdefault(row["group"], [])
        if row["variants"] not in vals:
            vals.append(row["variants"])
    return out


def _metrics() -> list[pl.Expr]:
    return [
        pl.len().alias("n"),
        pl.col("credited").sum().cast(pl.Int64).alias("credited"),
        (pl.col("credited").mean() * 100).alias("sa_pct"),
        pl.col("rmsle").filter(_FINITE).mean().alias("rmsle_mean_finite"),
        _FINITE.sum().cast(pl.Int64).alias("finite"),
        pl.col("complete").sum().cast(pl.Int64).alias("complete"),
        pl.col("measurements").mean().alias("measurements_mean"),
        pl.col("simulated_points").mean().alias("simulated_points_mean"),
    ]


def table_families(df: pl.DataFrame) -> pl.DataFrame:
    """Table 1: per model/difficulty and family group (Baseline N, Planner N, Baseline C, Planner C).

    Columns: keys, ``group``, ``variants`` (the configurations the row averages, e.g.
    ``Var+Pair+Rand``; fewer when fewer ran), ``n``, ``credited``, ``sa_pct``, ``rmsle_mean_finite``
    (mean of finite scores), ``finite``, ``complete``, ``measurements_mean`` (experiments run),
    ``simulated_points_mean`` (points the simulator returned: a system's time points).
    """
    keys = condition_keys(df)
    d = _with_group(_presets(df))
    out = _variants_text(d.group_by(keys + ["group"]).agg([_variants_agg(), *_metrics()]))
    return _sort(out, df, keys, [("group", _GROUP_ORDER)])


def table_configurations(df: pl.DataFrame) -> pl.DataFrame:
    """Table 2 / S4: every configuration (presets and ablations) per model/difficulty.

    Columns: keys, ``configuration``, ``label``, ``n``, ``credited``, ``sa_pct``,
    ``rmsle_mean_finite``, ``finite``, ``complete``, ``measurements_mean``, ``simulated_points_mean``,
    ``median_rel_error_median`` (the median over the trials of their scale-free error, finite values
    only; null where no trial stored one, as in a run stored before the column).
    """
    keys = condition_keys(df)
    rel = pl.col("median_rel_error") if "median_rel_error" in df.columns else pl.lit(None, dtype=pl.Float64)
    out = df.group_by(keys + ["configuration"]).agg(
        *_metrics(), rel.filter(rel.is_finite()).median().alias("median_rel_error_median"))
    names = list(CONFIG_ORDER) + sorted(set(df.get_column("configuration").to_list()) - set(CONFIG_ORDER))
    out = out.with_columns(label=pl.col("configuration").map_elements(config_label, return_dtype=pl.String))
    out = out.select(keys + ["configuration", "label"] + [c for c in out.columns if c not in keys + ["configuration", "label"]])
    return _sort(out, df, keys, [("configuration", {c: i for i, c in enumerate(names)})])


def _cell_means(df: pl.DataFrame, keys: list[str], value: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Per-module family means: planner = mean over variants of the variant's rollout mean."""
    d = _with_group(_presets(df)).with_columns(pl.col(value).cast(pl.Float64).alias("_v"))
    per_cfg = d.group_by(keys + ["tool", "family", "task", "configuration"]).agg(pl.col("_v").mean())
    fam = per_cfg.group_by(keys + ["tool", "family", "task"]).agg(pl.col("_v").mean())
    base = fam.filter(pl.col("family") == "baseline").drop("family").rename({"_v": "baseline"})
    plan = fam.filter(pl.col("family") == "planner").drop("family").rename({"_v": "planner"})
    return base, plan


def module_effects(df: pl.DataFrame, value: str = "credited", *, scale: float = 100.0) -> pl.DataFrame:
    """Per-module planner-family minus baseline effects (paper S4.1).

    Rollouts and planner variants are averaged within each module first; modules lacking either
    family are left out.

    Args:
        df: Trials frame.
        value: Column to compare (``credited`` -> SA, ``measurements``, ...).
        scale: Multiplier (100 turns SA fractions into percentage points).

    Returns:
        Columns: keys, ``tool`` (N/C), ``task``, ``planner``, ``baseline``, ``effect``.
    """
    keys = condition_keys(df)
    base, plan = _cell_means(df, keys, value)
    out = plan.join(base, on=keys + ["tool", "task"], how="inner")
    out = out.with_columns(
        (pl.col("planner") * scale).alias("planner"),
        (pl.col("baseline") * scale).alias("baseline"),
        ((pl.col("planner") - pl.col("baseline")) * scale).alias("effect"),
    ).select(keys + ["tool", "task", "planner", "baseline", "effect"])
    tasks = sorted(set(out.get_column("task").to_list()), key=task_sort_key)
    return _sort(out, df, keys, [("tool", {"N": 0, "C": 1}), ("task", {t: i for i, t in enumerate(tasks)})])


def table_sa_effects(df: pl.DataFrame, *, n_draws: int = N_DRAWS, seed: int = SEED) -> pl.DataFrame:
    """Table S2: planner-family minus baseline SA (pp) per model/difficulty/interpreter condition.

    Columns: keys, ``tool``, ``n_modules``, ``delta_sa_pp``, ``ci_low``, ``ci_high`` (95% percentile
    interval over ``n_draws`` module resamples, seed ``seed``), ``n_pos``, ``n_neg``, ``n_zero``,
    ``loo_low``, ``loo_high`` (leave-one-module-out range), ``sign_flip_p`` (exact, two-sided).
    """
    keys = condition_keys(df)
    eff = module_effects(df, "credited")
    rows = []
    for group_key, part in eff.group_by(keys + ["tool"], maintain_order=True):
        s = summarize_effects(part.get_column("effect").to_numpy(), n_draws=n_draws, seed=seed)
        row = dict(zip(keys + ["tool"], group_key))
        row.update(
            n_modules=s.n_modules, delta_sa_pp=s.mean, ci_low=s.ci_low, ci_high=s.ci_high, n_pos=s.n_pos,
            n_neg=s.n_neg, n_zero=s.n_zero, loo_low=s.loo_low, loo_high=s.loo_high, sign_flip_p=s.sign_flip_p,
        )
        rows.append(row)
    schema = {k: df.schema[k] for k in keys} | {
        "tool": pl.String, "n_modules": pl.Int64, "delta_sa_pp": pl.Float64, "ci_low": pl.Float64,
        "ci_high": pl.Float64, "n_pos": pl.Int64, "n_neg": pl.Int64, "n_zero": pl.Int64, "loo_low": pl.Float64,
        "loo_high": pl.Float64, "sign_flip_p": pl.Float64,
    }
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def _q(tau: float) -> pl.Expr:
    return pl.col("complete") & _FINITE & (pl.col("rmsle") <= tau)


def table_coverage(df: pl.DataFrame, taus: Sequence[float] = TAUS) -> pl.DataFrame:
    """Table S3: complete counts, the audit counts and 100·Q(τ) per model/difficulty and family group.

    Q(τ) = fraction of ALL trials that are complete and have finite RMSLE <= τ.
    Columns: keys, ``group``, ``variants``, ``n``, ``complete``, ``finite_incomplete`` (finite
    RMSLE although a finite-target point has no finite prediction), ``sign_disagree`` (submissions
    disagreeing with the target's sign at one or more finite pairs; paper S4.2), ``q_<τ>``
    (percent) per threshold.
    """
    keys = condition_keys(df)
    d = _with_group(_presets(df))
    aggs = [
        _variants_agg(),
        pl.len().alias("n"),
        pl.col("complete").sum().cast(pl.Int64).alias("complete"),
        (_FINITE & ~pl.col("complete").fill_null(False)).sum().cast(pl.Int64).alias("finite_incomplete"),
        (pl.col("sign_disagreements").fill_null(0) > 0).sum().cast(pl.Int64).alias("sign_disagree"),
    ]
    aggs += [(_q(t).mean() * 100).alias(f"q_{t:g}") for t in taus]
    out = _variants_text(d.group_by(keys + ["group"]).agg(aggs))
    return _sort(out, df, keys, [("group", _GROUP_ORDER)])


def coverage_curves(df: pl.DataFrame, taus: Iterable[float]) -> pl.DataFrame:
    """Q(τ) (percent) on a τ grid per condition and family group (long format: ..., ``tau``, ``q``)."""
    keys = condition_keys(df)
    d = _with_group(_presets(df))
    frames = []
    for t in taus:
        frames.append(d.group_by(keys + ["group"]).agg((_q(float(t)).mean() * 100).alias("q")).with_columns(tau=pl.lit(float(t))))
    if not frames:
        return pl.DataFrame()
    out = pl.concat(frames).sort("tau", maintain_order=True)
    return _sort(out, df, keys, [("group", _GROUP_ORDER)])


def table_heatmap(df: pl.DataFrame) -> pl.DataFrame:
    """Module x configuration SA (%) per model/difficulty (one column per configuration)."""
    keys = condition_keys(df)
    if df.height == 0:
        return pl.DataFrame(schema={k: df.schema[k] for k in keys} | {"task": pl.String})
    cell = df.group_by(keys + ["task", "configuration"]).agg((pl.col("credited").mean() * 100).alias("sa"))
    wide = cell.pivot(on="configuration", index=keys + ["task"], values="sa")
    present = set(df.get_column("configuration").to_list())
    cfgs = [c for c in CONFIG_ORDER if c in present] + sorted(present - set(CONFIG_ORDER))
    wide = wide.select(keys + ["task"] + cfgs)
    tasks = sorted(set(df.get_column("task").to_list()), key=task_sort_key)
    return _sort(wide, df, keys, [("task", {t: i for i, t in enumerate(tasks)})])


def table_savings(df: pl.DataFrame) -> pl.DataFrame:
    """Measurement savings per module: baseline mean minus planner-family mean measurements.

    Columns: keys, ``tool``, ``task``, ``planner``, ``baseline``, ``effect`` (= planner − baseline,
    negative when the planner family measures less), ``savings`` (= baseline − planner).
    """
    eff = module_effects(df, "measurements", scale=1.0)
    return eff.with_columns(savings=-pl.col("effect"))



def table_modules(df: pl.DataFrame) -> pl.DataFrame:
    """Per module and configuration: trials, mean measurements, mean finite RMSLE, complete and
    credited counts (the per-module view of Table 2)."""
    keys = condition_keys(df)
    if df.height == 0:
        return pl.DataFrame(schema={k: df.schema[k] for k in keys} | {"task": pl.String, "configuration": pl.String})
    out = df.group_by(keys + ["task", "configuration"]).agg(
        pl.len().alias("n"),
        pl.col("measurements").mean().alias("measurements_mean"),
        pl.col("rmsle").filter(_FINITE).mean().alias("rmsle_mean_finite"),
        pl.col("complete").sum().cast(pl.Int64).alias("complete"),
        pl.col("credited").sum().cast(pl.Int64).alias("credited"),
    )
    present = set(df.get_column("configuration").to_list())
    cfgs = [c for c in CONFIG_ORDER if c in present] + sorted(present - set(CONFIG_ORDER))
    tasks = sorted(set(df.get_column("task").to_list()), key=task_sort_key)
    return _sort(out, df, keys, [("task", {t: i for i, t in enumerate(tasks)}), ("configuration", {c: i for i, c in enumerate(cfgs)})])


def table_modules_wide(df: pl.DataFrame) -> pl.DataFrame:
    """:func:`table_modules` with one column per configuration; each cell reads
    ``measurements · RMSLE · complete/n · credited/n`` (RMSLE at 3 decimals, keeping its magnitude:
    :func:`etc_fast.report._format.format_number`)."""
    long = table_modules(df)
    keys = condition_keys(df)
    if long.height == 0:
        return long
    rmsle = pl.col("rmsle_mean_finite")
    cell = (
        pl.col("measurements_mean").round(1).cast(pl.String)
        + pl.lit(" · ")
        + pl.when(rmsle.is_null()).then(pl.lit("–")).otherwise(rmsle.map_elements(lambda v: format_number(v, 3), return_dtype=pl.String))
        + pl.lit(" · ") + pl.col("complete").cast(pl.String) + pl.lit("/") + pl.col("n").cast(pl.String)
        + pl.lit(" · ") + pl.col("credited").cast(pl.String) + pl.lit("/") + pl.col("n").cast(pl.String)
    )
    cfgs = list(dict.fromkeys(long.get_column("configuration").to_list()))
    wide = long.with_columns(cell=cell).pivot(on="configuration", index=keys + ["task"], values="cell")
    return wide.select(keys + ["task"] + cfgs)


# ----------------------------------------------------------------------------------------
# NewtonBench's own aggregation (result_analysis/summarize_results.py), for comparison
# ----------------------------------------------------------------------------------------
#: Modified z-score above which NewtonBench masks an RMSLE as an outlier.
NB_OUTLIER_Z = 3.5


def nb_mask_outliers(values: Sequence[float | None], threshold: float = NB_OUTLIER_Z) -> list[float | None]:
    """NewtonBench's outlier rule on one group's RMSLEs: infinities count as missing; with
    ``median`` and ``MAD`` of the finite values, a value whose modified z-score
    ``0.6745 * (x - median) / MAD`` exceeds ``threshold`` in magnitude (or is not finite) becomes
    ``None``; when ``MAD`` is 0 only non-finite values are masked."""
    import numpy as np

    data = np.array([np.nan if v is None else float(v) for v in values], dtype=np.float64)
    if data.size == 0:
        return []
    stats = np.where(np.isinf(data), np.nan, data)
    if np.all(np.isnan(stats)):
        return [None] * data.size
    median = np.nanmedian(stats)
    mad = np.nanmedian(np.abs(stats - median))
    if mad == 0:
        mask = ~np.isfinite(data)
    else:
        with np.errstate(invalid="ignore"):
            z = 0.6745 * (data - median) / mad
        mask = (np.abs(z) > threshold) | ~np.isfinite(z)
    return [None if m else float(v) for v, m in zip(data, mask, strict=True)]


def _nb_trial_stats(frame: pl.DataFrame) -> tuple[float | None, float | None, float | None, float | None, int]:
    """NewtonBench's ``calculate_trial_stats``: per trial index the mean accuracy and mean RMSLE
    (missing RMSLEs skipped), trials whose either mean is missing dropped, then the mean and the
    sample standard deviation (0 for one trial) of those per-trial means."""
    import math

    if frame.height == 0:
        return None, None, None, None, 0
    per = (
        frame.group_by("nb_trial")
        .agg(pl.col("nb_acc").mean().alias("acc"), pl.col("nb_rmsle").drop_nulls().mean().alias("rmsle"))
        .drop_nulls(["acc", "rmsle"])
    )
    if per.height == 0:
        return None, None, None, None, 0

    def mean_std(col: str) -> tuple[float, float]:
        vals = per.get_column(col).to_list()
        m = sum(vals) / len(vals)
        if len(vals) < 2:
            return m, 0.0
        return m, math.sqrt(sum((v - m) ** 2 for v in vals) / (len(vals) - 1))

    acc_m, acc_s = mean_std("acc")
    r_m, r_s = mean_std("rmsle")
    return acc_m, acc_s, r_m, r_s, per.height


def table_newtonbench(df: pl.DataFrame) -> pl.DataFrame:
    """NewtonBench's aggregation of the same trials (not the paper's statistics).

    As ``result_analysis/summarize_results.py``: failed trials are left out; infinite RMSLEs
    become missing; RMSLE outliers (modified z-score > 3.5) are masked within each module x
    difficulty x system x configuration (NewtonBench's ``agent_backend``); then per model x
    configuration (x noise, law version and measurement budget when they vary, which NewtonBench
    would pool) and per
    system x difficulty, plus an ``all`` row over every system and difficulty, the per-trial means
    of accuracy (credited, 0/1) and RMSLE are averaged over trial indices (NewtonBench's
    ``trial_id``: the rollout, per law version) and their sample standard deviation is given.
    ``system`` is the trials' ``system`` column when present, else ``vanilla_equation``.
    Columns ``acc`` / ``rmsle`` hold NewtonBench's text form (``88.9 (±4.811)``,
    ``0.0123 (±0.0045)``); ``tokens_mean`` is the mean completion tokens (NewtonBench's
    ``total_tokens``).
    """
    schema = {
        "model": pl.String, "configuration": pl.String, "system": pl.String, "difficulty": pl.String,
        "trials": pl.Int64, "masked": pl.Int64, "acc_mean_pct": pl.Float64, "acc_std_pct": pl.Float64,
        "rmsle_mean": pl.Float64, "rmsle_std": pl.Float64, "acc": pl.String, "rmsle": pl.String, "tokens_mean": pl.Float64,
    }
    if df.height == 0:
        return pl.DataFrame(schema=schema)
    d = df.filter(pl.col("status") != "failed") if "status" in df.columns else df
    if d.height == 0:
        return pl.DataFrame(schema=schema)
    extra = [c for c in ("noise", "law_version", BUDGET) if c in d.columns and d.get_column(c).n_unique() > 1]
    if "system" not in d.columns:
        d = d.with_columns(pl.lit("vanilla_equation").alias("system"))
    rm = pl.col("rmsle").cast(pl.Float64)
    d = d.with_columns(
        pl.when(rm.is_finite()).then(rm).otherwise(None).alias("nb_rmsle_raw"),
        pl.col("credited").cast(pl.Float64).alias("nb_acc"),
        (pl.col("law_version").cast(pl.String) + pl.lit("/") + pl.col("rollout").cast(pl.String)).alias("nb_trial"),
    ).with_row_index("nb_row")
    masked_parts = []
    group_keys = ["model", "task", "difficulty", "system", "configuration", *extra]
    for _, g in d.group_by(group_keys, maintain_order=True):
        cleaned = nb_mask_outliers(g.get_column("nb_rmsle_raw").to_list())
        masked_parts.append(g.with_columns(pl.Series("nb_rmsle", cleaned, dtype=pl.Float64)))
    d = pl.concat(masked_parts).sort("nb_row")
    d = d.with_columns((pl.col("nb_rmsle_raw").is_not_null() & pl.col("nb_rmsle").is_null()).alias("nb_masked"))
    rows = []
    systems_order = {"vanilla_equation": 0, "simple_system": 1, "complex_system": 2}
    present = set(d.get_column("configuration").to_list())
    cfgs = [c for c in CONFIG_ORDER if c in present] + sorted(present - set(CONFIG_ORDER))
    for model in sorted(set(d.get_column("model").to_list())):
        for cfg in cfgs:
            sub = d.filter((pl.col("model") == model) & (pl.col("configuration") == cfg))
            if sub.height == 0:
                continue
            combos = sub.select(extra).unique().sort(extra).rows() if extra else [()]
            for combo in combos:
                part = sub
                for k, v in zip(extra, combo, strict=True):
                    part = part.filter(pl.col(k).eq_missing(v))
                cells = []
                systems = sorted(set(part.get_column("system").to_list()), key=lambda s: (systems_order.get(s, 9), s))
                for system in systems:
                    for diff in sorted(set(part.get_column("difficulty").to_list()), key=lambda x: _DIFF_ORDER.get(x, 9)):
                        cells.append((system, diff, part.filter((pl.col("system") == system) & (pl.col("difficulty") == diff))))
                cells.append(("all", "all", part))
                for system, diff, frame in cells:
                    acc_m, acc_s, r_m, r_s, n = _nb_trial_stats(frame)
                    row = {"model": model, "configuration": cfg, **dict(zip(extra, combo, strict=True)), "system": system,
                           "difficulty": diff, "trials": n, "masked": int(frame.get_column("nb_masked").sum()),
                           "acc_mean_pct": None if acc_m is None else 100 * acc_m,
                           "acc_std_pct": None if acc_s is None else 100 * acc_s,
                           "rmsle_mean": r_m, "rmsle_std": r_s,
                           "acc": "N/A" if acc_m is None else f"{acc_m * 100:.1f} (±{acc_s * 100:.3f})",
                           "rmsle": "N/A" if r_m is None else f"{r_m:.4f} (±{r_s:.4f})",
                           # polars types Series.mean() as any Python literal; a numeric column's mean is a float
                           "tokens_mean": float(frame.get_column("completion_tokens").mean()) if "completion_tokens" in frame.columns else None}  # type: ignore[arg-type]
                    rows.append(row)
    out = pl.DataFrame(rows, schema_overrides={**schema, **{k: d.schema[k] for k in extra}}, infer_schema_length=None)
    return out.select(["model", "configuration", *extra, *[c for c in schema if c not in ("model", "configuration")]])
