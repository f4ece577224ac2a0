"""The paper's tables as Polars frames, computed from the results table only.

Every function takes the typed trials frame (:func:`etc_fast.report.load_trials`) and returns a
frame; conditions that have no trials (e.g. a run with planners only) simply have no rows, and
columns that need a missing family are null. Rows are grouped by model and difficulty, plus law
version and noise level when a run has more than one of them.

Family tables (Table 1, S2, S3, savings) use only the paper's eight preset configurations, so
planner-family rows average exactly the three acquisition variants; named ablations appear in the
per-configuration tables (Table 2 / S4, heatmap).
"""

from __future__ import annotations

from collections.abc import Sequence

import polars as pl

from etc_fast.report._load import CONFIG_ORDER, FAMILY_GROUPS, config_label, task_sort_key, variant_label
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
    "TAUS",
]

#: Coverage thresholds of Table S3.
TAUS: tuple[float, ...] = (0.01, 0.1, 1.0)
_DIFF_ORDER = {"easy": 0, "medium": 1, "hard": 2}
_GROUP_ORDER = {label: i for i, (label, _, _) in enumerate(FAMILY_GROUPS)}

_FINITE = pl.col("rmsle").is_not_null() & pl.col("rmsle").is_finite()


def condition_keys(df: pl.DataFrame) -> list[str]:
    """Grouping columns: model, difficulty, and system / law_version / noise when they vary."""
    keys = ["model", "difficulty"]
    keys += [c for c in ("system", "law_version", "noise") if c in df.columns and df.height and df.get_column(c).n_unique() > 1]
    return keys


def _presets(df: pl.DataFrame) -> pl.DataFrame:
    return df.filter(pl.col("configuration").is_in(list(CONFIG_ORDER)))


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
    return out.with_columns(cols).sort(order, maintain_order=True).drop([c for c in order if c.startswith("_")])


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
    ]


def table_families(df: pl.DataFrame) -> pl.DataFrame:
    """Table 1: per model/difficulty and family group (Baseline N, Planner N, Baseline C, Planner C).

    Columns: keys, ``group``, ``variants`` (the configurations the row averages, e.g.
    ``Var+Pair+Rand``; fewer when fewer ran), ``n``, ``credited``, ``sa_pct``, ``rmsle_mean_finite``
    (mean of finite scores), ``finite``, ``complete``, ``measurements_mean``.
    """
    keys = condition_keys(df)
    d = _with_group(_presets(df))
    out = _variants_text(d.group_by(keys + ["group"]).agg([_variants_agg(), *_metrics()]))
    return _sort(out, df, keys, [("group", _GROUP_ORDER)])


def table_configurations(df: pl.DataFrame) -> pl.DataFrame:
    """Table 2 / S4: every configuration (presets and ablations) per model/difficulty.

    Columns: keys, ``configuration``, ``label``, ``n``, ``credited``, ``sa_pct``,
    ``rmsle_mean_finite``, ``finite``, ``complete``, ``measurements_mean``.
    """
    keys = condition_keys(df)
    out = df.group_by(keys + ["configuration"]).agg(_metrics())
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


def coverage_curves(df: pl.DataFrame, taus: Sequence[float]) -> pl.DataFrame:
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
    ``measurements · RMSLE · complete/n · credited/n``."""
    long = table_modules(df)
    keys = condition_keys(df)
    if long.height == 0:
        return long
    rmsle = pl.col("rmsle_mean_finite")
    cell = (
        pl.col("measurements_mean").round(1).cast(pl.String)
        + pl.lit(" · ")
        + pl.when(rmsle.is_null()).then(pl.lit("–")).otherwise(rmsle.map_elements(lambda v: f"{v:.3f}", return_dtype=pl.String))
        + pl.lit(" · ") + pl.col("complete").cast(pl.String) + pl.lit("/") + pl.col("n").cast(pl.String)
        + pl.lit(" · ") + pl.col("credited").cast(pl.String) + pl.lit("/") + pl.col("n").cast(pl.String)
    )
    cfgs = list(dict.fromkeys(long.get_column("configuration").to_list()))
    wide = long.with_columns(cell=cell).pivot(on="configuration", index=keys + ["task"], values="cell")
    return wide.select(keys + ["task"] + cfgs)
