"""Budget curves, paired comparisons and the power note (docs/guide/statistics.md), from the results table.

Cells: (configuration, system, noise, measurement_budget), plus the model when a run has more than
one; a cell pools its modules' difficulties, law versions and rollouts. ``measurement_budget``
null = no cap (the configuration's own rule), the "uncapped" point of a curve. Failed trials
(infrastructure failures, run again on resume) are left out: they are not results.

Every interval is the percentile interval of the cluster bootstrap (:mod:`etc_fast.report._stats`):
``n_draws`` resamples, seed ``seed``, 95%. The cluster is the run's ``analysis.cluster``:
``task`` (default; a NewtonBench module, a generated law, a custom task) or ``family`` (a module,
a generated law's class, a custom task). With ``analysis.reference`` the paired table compares
every configuration with that one only, and Holm adjusts over those comparisons.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from etc_fast.report._load import BUDGET, CONFIG_ORDER, with_budget
from etc_fast.report._stats import (
    LEVEL,
    N_DRAWS,
    SEED,
    PairedDifference,
    cluster_share_interval,
    holm,
    paired_cluster_difference,
    power_needs,
)

__all__ = [
    "has_budgets",
    "cell_keys",
    "role_of",
    "ROLES",
    "TARGETS",
    "DELTAS",
    "table_budget_curve",
    "table_paired",
    "table_budget_to_sa",
    "table_power",
    "power_text",
    "paired_results",
    "CLUSTERS",
    "task_family",
]

#: Units of the cluster bootstrap (``analysis.cluster``).
CLUSTERS: tuple[str, ...] = ("task", "family")

#: SA levels of :func:`table_budget_to_sa`.
TARGETS: tuple[float, ...] = (0.5, 0.7, 0.9)
#: Paired SA differences of :func:`table_power`.
DELTAS: tuple[float, ...] = (0.05, 0.1, 0.2)
#: Roles by acquisition rule, in the order a pair names them (A = the earlier role).
ROLES: tuple[str, ...] = ("scored", "gp", "random", "baseline")
_SYSTEM_ORDER = {"vanilla_equation": 0, "simple_system": 1, "complex_system": 2}


def role_of(acquisition: str | None, family: str | None = None) -> str:
    """``variance`` / ``pairwise`` -> scored, ``gp_*`` -> gp, ``random`` -> random, ``none`` (or
    the baseline family) -> baseline; anything else is its own role (named by its rule)."""
    if family == "baseline" or acquisition in (None, "none"):
        return "baseline"
    if acquisition in ("variance", "pairwise"):
        return "scored"
    if acquisition.startswith("gp"):
        return "gp"
    if acquisition == "random":
        return "random"
    return acquisition


def task_family(task: str) -> str:
    """A task's law family: ``generated:<class>`` for a generated law, else the task itself (a
    NewtonBench module, a custom task)."""
    from etc_fast.tasks.generate import is_generated_name, law_by_name

    return f"generated:{law_by_name(task).task_class}" if is_generated_name(task) else task


def _with_cluster(d: pl.DataFrame, cluster: str) -> pl.DataFrame:
    """``d`` with the bootstrap unit in column ``cluster``."""
    if cluster not in CLUSTERS:
        raise ValueError(f"cluster must be one of {', '.join(CLUSTERS)}, got {cluster!r}")
    if cluster == "task":
        return d.with_columns(pl.col("task").alias("cluster"))
    names = d.get_column("task").unique().to_list()
    return d.with_columns(pl.col("task").replace_strict({t: task_family(t) for t in names}, return_dtype=pl.String).alias("cluster"))


def has_budgets(df: pl.DataFrame) -> bool:
    """Whether any trial of the run ran under a measurement budget."""
    return BUDGET in df.columns and df.height > 0 and df.get_column(BUDGET).null_count() < df.height


def cell_keys(df: pl.DataFrame) -> list[str]:
    """The keys of a budget cell besides the configuration: system, noise, measurement_budget,
    and the model first when the run has more than one."""
    multi_model = df.height > 0 and df.get_column("model").n_unique() > 1
    return (["model"] if multi_model else []) + ["system", "noise", BUDGET]


def _results(df: pl.DataFrame) -> pl.DataFrame:
    d = with_budget(df)
    if "status" in d.columns:
        d = d.filter(pl.col("status").fill_null("") != "failed")
    return d.with_columns(pl.col("system").fill_null("vanilla_equation"), pl.col("credited").fill_null(False))


def _config_rank(names: Sequence[str]) -> dict[str, int]:
    present = list(dict.fromkeys(names))
    order = [c for c in CONFIG_ORDER if c in present] + sorted(set(present) - set(CONFIG_ORDER))
    return {c: i for i, c in enumerate(order)}


def _sorted(out: pl.DataFrame, keys: Sequence[str], config_cols: Sequence[str] = ("configuration",), extra: Sequence[str] = ()) -> pl.DataFrame:
    """Model (first seen), system (vanilla, simple, complex), noise, configuration (preset order),
    budget ascending with the uncapped point last, then ``extra``."""
    if out.height == 0:
        return out
    names = [v for c in config_cols for v in out.get_column(c).to_list()]
    rank = _config_rank(names)
    cols = []
    order = []
    if "model" in keys:
        models = {m: i for i, m in enumerate(dict.fromkeys(out.get_column("model").to_list()))}
        cols.append(pl.col("model").replace_strict(models, return_dtype=pl.Int64).alias("_m"))
        order.append("_m")
    cols.append(pl.col("system").replace_strict(_SYSTEM_ORDER, default=9, return_dtype=pl.Int64).alias("_s"))
    order += ["_s", "system", "noise"]
    for i, c in enumerate(config_cols):
        cols.append(pl.col(c).replace_strict(rank, return_dtype=pl.Int64).alias(f"_c{i}"))
    budget = [pl.col(BUDGET).is_null().alias("_bn"), pl.col(BUDGET).fill_null(0).alias("_b")] if BUDGET in keys else []
    out = out.with_columns(cols + budget)
    if BUDGET in keys and config_cols == ("configuration",):
        order += ["_c0", "_bn", "_b"]
    else:
        order += (["_bn", "_b"] if BUDGET in keys else []) + [f"_c{i}" for i in range(len(config_cols))]
    order += list(extra)
    return out.sort(order, maintain_order=True).drop([c for c in out.columns if c.startswith("_")])


def _module_counts(d: pl.DataFrame, keys: Sequence[str]) -> pl.DataFrame:
    """Credited and trial counts per (keys, configuration, cluster) (``d`` from :func:`_with_cluster`)."""
    return d.group_by([*keys, "configuration", "cluster"]).agg(
        pl.col("credited").cast(pl.Int64).sum().alias("c"), pl.len().alias("t"))


_CURVE_SCHEMA: dict[str, Any] = {
    "configuration": pl.String, "system": pl.String, "noise": pl.Float64, BUDGET: pl.Int64, "n": pl.Int64,
    "credited": pl.Int64, "sa": pl.Float64, "sa_ci_low": pl.Float64, "sa_ci_high": pl.Float64,
    "rmsle_median": pl.Float64, "mean_measurements": pl.Float64,
}


def table_budget_curve(df: pl.DataFrame, *, n_draws: int = N_DRAWS, seed: int = SEED, cluster: str = "task") -> pl.DataFrame:
    """SA of every cell with its cluster-bootstrap interval (one row per configuration, system,
    noise and budget; a run without budgets has one uncapped row per configuration, system, noise).

    Columns: (``model`` when several,) ``configuration``, ``system``, ``noise``,
    ``measurement_budget`` (null = uncapped), ``n`` (trials), ``credited``, ``sa`` (credited / n, a
    fraction), ``sa_ci_low`` / ``sa_ci_high`` (95% percentile interval over ``n_draws`` module
    resamples, seed ``seed``; null with one module), ``rmsle_median`` (median RMSLE of the scored
    trials, NaN counted as +inf), ``mean_measurements``. ``cluster``: the resampled unit, one of
    :data:`CLUSTERS`.
    """
    d = _with_cluster(_results(df), cluster)
    keys = cell_keys(d)
    lead = ["model"] if "model" in keys else []
    schema: dict[str, Any] = {"model": pl.String} if lead else {}
    schema |= _CURVE_SCHEMA
    if d.height == 0:
        return pl.DataFrame(schema=schema)
    rm = pl.col("rmsle").cast(pl.Float64)
    cells = d.group_by([*keys, "configuration"]).agg(
        pl.len().alias("n"), pl.col("credited").cast(pl.Int64).sum().alias("credited"),
        pl.when(rm.is_nan()).then(float("inf")).otherwise(rm).median().alias("rmsle_median"),
        pl.col("measurements").cast(pl.Float64).mean().alias("mean_measurements"))
    by_cell = {key: part.sort("cluster") for key, part in _module_counts(d, keys).group_by([*keys, "configuration"])}
    rows = []
    for cell in cells.iter_rows(named=True):
        mine = by_cell[tuple(cell[k] for k in [*keys, "configuration"])]
        _, lo, hi = cluster_share_interval(mine.get_column("c").to_numpy(), mine.get_column("t").to_numpy(), n_draws=n_draws, seed=seed)
        rows.append({**cell, "sa": cell["credited"] / cell["n"], "sa_ci_low": lo, "sa_ci_high": hi})
    out = pl.DataFrame(rows, schema=schema | {k: d.schema[k] for k in keys}, orient="row") if rows else pl.DataFrame(schema=schema)
    return _sorted(out.select(list(schema)), keys)


def _eq(col: str, value: object) -> pl.Expr:
    return pl.col(col).is_null() if value is None else pl.col(col).eq(value)


_PAIRED_TAIL: dict[str, Any] = {
    "config_a": pl.String, "config_b": pl.String, "roles": pl.String, "n_modules": pl.Int64, "n_a": pl.Int64,
    "n_b": pl.Int64, "sa_a": pl.Float64, "sa_b": pl.Float64, "diff": pl.Float64, "ci_low": pl.Float64,
    "ci_high": pl.Float64, "decision": pl.String, "p_boot": pl.Float64, "p_holm": pl.Float64, "decision_holm": pl.String,
}


def paired_results(df: pl.DataFrame, *, n_draws: int = N_DRAWS, seed: int = SEED, cluster: str = "task",
                   reference: str | None = None) -> list[tuple[dict, PairedDifference]]:
    """Every paired comparison of the run: ``(cell and pair names, PairedDifference)``, the rows of
    :func:`table_paired` before the multiplicity step (also the input of :func:`table_power`).
    ``cluster``: the resampled unit (:data:`CLUSTERS`); ``reference``: compare every configuration
    with this one only (it is then B of each pair), else every two."""
    d = _with_cluster(_results(df), cluster)
    return _pairs(d, cell_keys(d), n_draws, seed, reference) if d.height else []


def _pairs(d: pl.DataFrame, keys: Sequence[str], n_draws: int, seed: int,
           reference: str | None = None) -> list[tuple[dict, PairedDifference]]:
    """Every pair of configurations in each cell, A before B by role (scored, gp, random,
    baseline, others) and then preset order, with its paired difference; with ``reference``,
    every other configuration (A) against it (B)."""
    roles = {r["configuration"]: role_of(r["acquisition"], r["family"]) for r in d.select("configuration", "acquisition", "family").unique().iter_rows(named=True)}
    rank = _config_rank(d.get_column("configuration").to_list())

    def order(c: str) -> tuple[int, int]:
        r = roles.get(c, "")
        return (ROLES.index(r) if r in ROLES else len(ROLES), rank[c])

    counts = _module_counts(d, keys)
    out = []
    for cell, part in counts.group_by(list(keys), maintain_order=True):
        cfgs = sorted(set(part.get_column("configuration").to_list()), key=order)
        by_cfg = {c: part.filter(pl.col("configuration") == c) for c in cfgs}
        if reference is None:
            combos: list[tuple[str, str]] = list(itertools.combinations(cfgs, 2))
        else:
            combos = [(a, reference) for a in cfgs if a != reference] if reference in by_cfg else []
        for a, b in combos:
            both = by_cfg[a].join(by_cfg[b], on="cluster", suffix="_b").sort("cluster")
            if both.height == 0:
                continue
            res = paired_cluster_difference(both.get_column("c").to_numpy(), both.get_column("t").to_numpy(),
                                            both.get_column("c_b").to_numpy(), both.get_column("t_b").to_numpy(),
                                            n_draws=n_draws, seed=seed)
            out.append(({**dict(zip(keys, cell, strict=True)), "config_a": a, "config_b": b,
                         "roles": f"{roles.get(a)} vs {roles.get(b)}"}, res))
    return out


def table_paired(df: pl.DataFrame, *, n_draws: int = N_DRAWS, seed: int = SEED, alpha: float = 1.0 - LEVEL,
                 pairs: list[tuple[dict, PairedDifference]] | None = None, cluster: str = "task",
                 reference: str | None = None) -> pl.DataFrame:
    """Paired comparisons of every two configurations at each (system, noise, budget).

    Columns: (``model``,) ``system``, ``noise``, ``measurement_budget``, ``config_a``, ``config_b``,
    ``roles`` (``scored vs random``, ...), ``n_modules`` (modules both ran; only those count),
    ``n_a`` / ``n_b`` (their trials), ``sa_a`` / ``sa_b``, ``diff`` (= sa_a - sa_b), ``ci_low`` /
    ``ci_high`` (95% paired cluster-bootstrap interval of diff), ``decision`` (``A better`` when the
    interval lies above 0, ``B better`` below 0, else ``no separation``; ``too few modules`` under
    two), ``p_boot`` (two-sided bootstrap p), ``p_holm`` (Holm-adjusted within the pairs of one
    system, noise and budget) and ``decision_holm`` (the same words at family-wise ``alpha``).
    ``pairs``: :func:`paired_results` of ``df`` when already computed; else they are computed with
    ``cluster`` and ``reference`` (see there), and ``n_modules`` counts clusters.
    """
    d = _with_cluster(_results(df), cluster)
    keys = cell_keys(d)
    schema: dict[str, Any] = {k: (pl.String if k in ("model", "system") else pl.Float64 if k == "noise" else pl.Int64) for k in keys} | _PAIRED_TAIL
    if d.height == 0:
        return pl.DataFrame(schema=schema)
    found = pairs if pairs is not None else _pairs(d, keys, n_draws, seed, reference)
    rows = []
    for _, group in itertools.groupby(found, key=lambda x: tuple(x[0][k] for k in keys)):
        group_list = list(group)
        adjusted = holm([r.p_boot for _, r in group_list])
        for (head, r), ph in zip(group_list, adjusted, strict=True):
            if ph is None:
                dh = "too few modules"
            elif ph < alpha:
                dh = "A better" if r.diff > 0 else "B better"
            else:
                dh = "no separation"
            rows.append({**head, "n_modules": r.n_modules, "n_a": r.n_a, "n_b": r.n_b, "sa_a": r.sa_a, "sa_b": r.sa_b,
                         "diff": r.diff, "ci_low": r.ci_low, "ci_high": r.ci_high, "decision": r.decision,
                         "p_boot": r.p_boot, "p_holm": ph, "decision_holm": dh})
    out = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    # cells in the curve's order; within a cell, pairs in the order they were formed (by role)
    return _sorted(out.with_row_index("_pair"), keys, (), ("_pair",))


def table_budget_to_sa(curve: pl.DataFrame, targets: Sequence[float] = TARGETS) -> pl.DataFrame:
    """The smallest measurement budget at which each configuration reaches each SA target.

    Columns: (``model``,) ``configuration``, ``system``, ``noise``, ``target_sa``,
    ``budget_point`` (smallest capped budget whose SA reaches the target) and its
    ``measurements_point`` (mean measurements there), ``budget_ci`` / ``measurements_ci`` (the
    same for the interval's lower bound: the budget at which the target is reached with 95%
    confidence), ``uncapped_sa`` (the uncapped point's SA, when the run has one). Null: no capped
    budget of the run reaches it.
    """
    lead = ["model"] if "model" in curve.columns else []
    schema: dict[str, Any] = {"model": pl.String} if lead else {}
    schema |= {"configuration": pl.String, "system": pl.String, "noise": pl.Float64, "target_sa": pl.Float64,
               "budget_point": pl.Int64, "measurements_point": pl.Float64, "budget_ci": pl.Int64,
               "measurements_ci": pl.Float64, "uncapped_sa": pl.Float64}
    rows = []
    group = [*lead, "configuration", "system", "noise"]
    for key, part in curve.group_by(group, maintain_order=True):
        capped = part.filter(pl.col(BUDGET).is_not_null()).sort(BUDGET)
        uncapped = part.filter(pl.col(BUDGET).is_null())
        if capped.height == 0:
            continue
        for t in targets:
            hit = capped.filter(pl.col("sa") >= t - 1e-12)
            sure = capped.filter(pl.col("sa_ci_low").is_not_null() & (pl.col("sa_ci_low") >= t - 1e-12))
            rows.append({**dict(zip(group, key, strict=True)), "target_sa": float(t),
                         "budget_point": hit.item(0, BUDGET) if hit.height else None,
                         "measurements_point": hit.item(0, "mean_measurements") if hit.height else None,
                         "budget_ci": sure.item(0, BUDGET) if sure.height else None,
                         "measurements_ci": sure.item(0, "mean_measurements") if sure.height else None,
                         "uncapped_sa": uncapped.item(0, "sa") if uncapped.height else None})
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def table_power(df: pl.DataFrame, deltas: Sequence[float] = DELTAS, *, alpha: float = 1.0 - LEVEL, power: float = 0.8,
                pairs: list[tuple[dict, PairedDifference]] | None = None) -> pl.DataFrame:
    """How many modules, and how many rollouts on the run's modules, a paired SA difference of each
    size needs for ``power`` at two-sided ``alpha`` (normal approximation on the paired module
    means, :func:`etc_fast.report._stats.power_needs`).

    The variances are the run's, per (model,) system and noise, averaged over every paired
    comparison of :func:`table_paired` with two or more modules: ``between_var`` = observed
    variance of the module differences minus ``within_var`` (the mean binomial variance of a
    module difference at the run's trials per module and arm), at least 0.

    Columns: (``model``,) ``system``, ``noise``, ``pairs``, ``n_modules`` (median shared modules),
    ``rollouts`` (rollouts per module in the run), ``trials_per_module`` (per arm, mean),
    ``between_var``, ``within_var``, ``delta``, ``modules_needed`` (at the run's rollouts),
    ``rollouts_needed`` (with the run's modules; null = not reachable by more rollouts, or not
    estimable), ``note`` (null, or ``not estimable: ...`` saying what the run's variances cannot
    support: :func:`_power_note`).
    ``pairs``: :func:`paired_results` of ``df`` when already computed (the bootstrap is not needed
    here; without ``pairs`` the comparisons are formed with one resample).
    """
    d = _results(df)
    keys = cell_keys(d)
    lead = ["model"] if "model" in keys else []
    schema: dict[str, Any] = {"model": pl.String} if lead else {}
    schema |= {"system": pl.String, "noise": pl.Float64, "pairs": pl.Int64, "n_modules": pl.Int64, "rollouts": pl.Int64,
               "trials_per_module": pl.Float64, "between_var": pl.Float64, "within_var": pl.Float64, "delta": pl.Float64,
               "modules_needed": pl.Int64, "rollouts_needed": pl.Int64, "note": pl.String}
    if d.height == 0:
        return pl.DataFrame(schema=schema)
    found = [(h, r) for h, r in (pairs if pairs is not None else _pairs(_with_cluster(d, "task"), keys, 1, SEED)) if r.n_modules >= 2]
    rows = []
    for key, group in itertools.groupby(sorted(found, key=lambda x: tuple(str(x[0][k]) for k in [*lead, "system", "noise"])),
                                        key=lambda x: tuple(x[0][k] for k in [*lead, "system", "noise"])):
        items = list(group)
        within = float(np.mean([r.within_var for _, r in items]))
        between = float(np.mean([max(0.0, float(np.var(r.module_diffs, ddof=1)) - r.within_var) for _, r in items]))
        n_modules = int(np.median([r.n_modules for _, r in items]))
        trials0 = float(np.mean([(r.n_a + r.n_b) / (2 * r.n_modules) for _, r in items]))
        part = d.filter(pl.all_horizontal([_eq(k, v) for k, v in zip([*lead, "system", "noise"], key, strict=True)]))
        rollouts = int(part.get_column("rollout").n_unique())
        per_rollout = trials0 / max(1, rollouts)
        note = _power_note(between, within, trials0)
        for delta in deltas:
            mods, trials = power_needs(between, within, trials0, float(delta), n_modules=n_modules, alpha=alpha, power=power)
            needed_rollouts = None if trials is None else max(1, math.ceil(trials / per_rollout - 1e-9))
            if note is not None:  # what the run cannot estimate is left empty, never computed from a zero
                needed_rollouts = None
                mods = None if between + within <= 0.0 else mods
            rows.append({**dict(zip([*lead, "system", "noise"], key, strict=True)), "pairs": len(items), "n_modules": n_modules,
                         "rollouts": rollouts, "trials_per_module": trials0, "between_var": between, "within_var": within,
                         "delta": float(delta), "modules_needed": mods, "rollouts_needed": needed_rollouts, "note": note})
    out = pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)
    if out.height:
        out = out.with_columns(pl.col("system").replace_strict(_SYSTEM_ORDER, default=9, return_dtype=pl.Int64).alias("_s")).sort(
            [*lead, "_s", "system", "noise", "delta"], maintain_order=True).drop("_s")
    return out


#: ``note`` of a power row whose variances are both zero: no sample size follows from them.
NOT_ESTIMABLE_ZERO = "not estimable: zero variance"
#: ``note`` of a power row with one trial per module and arm: its within-module variance is 0 by construction.
NOT_ESTIMABLE_ONE_TRIAL = "rollouts_needed not estimable: one trial per module and arm"
#: What each ``note`` means, in the words of ``power.md``.
POWER_NOTES = {
    NOT_ESTIMABLE_ZERO: "every shared module shows the same SA difference and no module's trials disagree, so both "
                        "variances are 0 and no number of modules or rollouts follows from this run "
                        "(`modules_needed` and `rollouts_needed` are left empty)",
    NOT_ESTIMABLE_ONE_TRIAL: "with one trial per module and arm a module's trials cannot disagree, so the run shows no "
                             "within-module variance and cannot say what more rollouts would give (`rollouts_needed` "
                             "is left empty; `modules_needed` rests on the variance of the module differences)",
}


def _power_note(between: float, within: float, trials0: float) -> str | None:
    """Why a power row's numbers cannot be read from the run, or ``None`` when they can: both
    variances zero (:data:`NOT_ESTIMABLE_ZERO`: ``modules_needed`` and ``rollouts_needed`` empty),
    or one trial per module and arm (:data:`NOT_ESTIMABLE_ONE_TRIAL`: ``rollouts_needed`` empty;
    ``modules_needed`` still rests on the variance of the module differences)."""
    if between + within <= 0.0:
        return NOT_ESTIMABLE_ZERO
    if trials0 <= 1.0:
        return NOT_ESTIMABLE_ONE_TRIAL
    return None


def power_text(*, alpha: float = 1.0 - LEVEL, target_power: float = 0.8) -> str:
    """The words of ``report/power.md`` above its table: the formula and how to read it."""
    return "\n".join([
        "# How many modules and rollouts an SA difference needs",
        "",
        f"Paired comparison of two configurations, {target_power:.0%} power, two-sided alpha {alpha:g}, normal "
        "approximation on the paired module means. The difference of module SAs averaged over m modules has variance "
        "(sb2 + w * t0 / t) / m: sb2 = between-module variance of the true differences (`between_var`), w = "
        "within-module binomial variance of a module difference at the run's t0 trials per module and arm "
        "(`within_var`), t = trials per module and arm planned. With z = z(1 - alpha/2) + z(power) = "
        f"{_z(alpha, target_power):.3f}: modules needed m = ceil(z^2 (sb2 + w) / delta^2) at the run's rollouts "
        "(`modules_needed`); trials needed t = w t0 / (m delta^2 / z^2 - sb2) with the run's m modules, in rollouts "
        "(`rollouts_needed` = t / trials per rollout); empty when m delta^2 / z^2 <= sb2: then more rollouts cannot "
        "help, only more modules.",
        "",
        "sb2 and w are the run's own (per system and noise, averaged over every paired comparison with two or more "
        "shared modules), estimated from few modules: read the numbers as orders of magnitude. A tier has 12 "
        "modules, so an effect that needs more than 12 cannot be shown on one tier at this power.",
        "",
    ])


def _z(alpha: float, power: float) -> float:
    from statistics import NormalDist

    return NormalDist().inv_cdf(1.0 - alpha / 2.0) + NormalDist().inv_cdf(power)
