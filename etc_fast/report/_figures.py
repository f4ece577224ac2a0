"""Report figures (PNG, matplotlib's Agg canvas; pyplot and its global backend are not touched)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from etc_fast.report._load import BUDGET, CONFIG_ORDER, paper_label

__all__ = ["plot_savings", "plot_coverage", "plot_heatmap", "plot_budget_curves"]

_COLORS = {"Baseline N": "#9e9e9e", "Planner N": "#1f77b4", "Baseline C": "#616161", "Planner C": "#d62728"}
#: Each family group has its own line style and marker, so curves that coincide stay visible.
_STYLES = {
    "Baseline N": dict(linestyle=(0, (6, 3)), marker="o", lw=2.6),
    "Planner N": dict(linestyle="-", marker="s", lw=2.0),
    "Baseline C": dict(linestyle=(0, (2, 2)), marker="^", lw=1.6),
    "Planner C": dict(linestyle=(0, (5, 2, 1, 2)), marker="x", lw=1.2),
}
_FALLBACK_STYLES = [dict(linestyle=ls, marker=m, lw=1.5) for ls, m in zip(["-", "--", ":", "-."], "oDv+")]


def _figure(width: float, height: float):
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=120)
    FigureCanvasAgg(fig)
    return fig


def _group_style(group: str, i: int) -> dict:
    return dict(_STYLES.get(group, _FALLBACK_STYLES[i % len(_FALLBACK_STYLES)]))


def _cond_value(k: str, v) -> str:
    if k == "noise":
        return f"noise {v:g}"
    if k == BUDGET:
        return "uncapped" if v is None else f"budget {v}"
    return str(v)


def _cond_label(row: dict, keys: list[str]) -> str:
    return " / ".join(_cond_value(k, row[k]) for k in keys)


def _conditions(frame: pl.DataFrame, keys: list[str]) -> list[tuple]:
    """The distinct values of ``keys`` in ``frame``, in order of first appearance."""
    return list(dict.fromkeys(tuple(r[k] for k in keys) for r in frame.iter_rows(named=True)))


#: Most module rows the heatmap figure stacks, and most panels of the coverage figure: a study of
#: hundreds of laws under many conditions would make a figure of millions of pixels. The figures
#: then show the first conditions and say so in their title; every condition is in the tables.
HEATMAP_MAX_ROWS = 600
COVERAGE_MAX_PANELS = 36


def _first(conds: list[tuple], sizes: list[int], limit: int) -> list[tuple]:
    """The leading conditions whose ``sizes`` add up to at most ``limit`` (the first one always)."""
    kept: list[tuple] = []
    total = 0
    for cond, n in zip(conds, sizes):
        if kept and total + n > limit:
            break
        kept.append(cond)
        total += n
    return kept


def _shown_note(fig, kept: int, total: int, where: str) -> None:
    if kept < total:
        fig.suptitle(f"The first {kept} of {total} conditions; every condition: {where}", fontsize=9)


def _rows_of(frame: pl.DataFrame, keys: list[str], cond: tuple) -> pl.DataFrame:
    """The rows of ``frame`` whose ``keys`` equal ``cond``."""
    return frame.filter(pl.all_horizontal([pl.col(k).eq_missing(v) for k, v in zip(keys, cond)]))


def _empty(path: Path, message: str) -> Path:
    fig = _figure(5, 1.5)
    ax = fig.add_subplot()
    ax.axis("off")
    ax.text(0.5, 0.5, message, ha="center", va="center")
    fig.savefig(path)
    return path


def plot_savings(savings: pl.DataFrame, keys: list[str], path: Path) -> Path:
    """Measurement savings (baseline − planner family) per module, one marker series per condition."""
    if savings.height == 0:
        return _empty(path, "no module has both a baseline and a planner family")
    tasks = list(dict.fromkeys(savings.get_column("task").to_list()))
    conds = _conditions(savings, keys + ["tool"])
    fig = _figure(7, 0.35 * len(tasks) + 1.6)
    ax = fig.add_subplot()
    markers = "osD^vP*X"
    offsets = np.linspace(-0.25, 0.25, len(conds)) if len(conds) > 1 else [0.0]
    for i, cond in enumerate(conds):
        part = _rows_of(savings, keys + ["tool"], cond)
        y = [tasks.index(t) + offsets[i] for t in part.get_column("task").to_list()]
        *rest, tool = cond
        label = " / ".join([*(str(c) for c in rest), f"Planner {tool} vs Baseline {tool}"])
        ax.scatter(part.get_column("savings").to_numpy(), y, marker=markers[i % len(markers)], label=label, s=28)
    ax.axvline(0.0, color="black", lw=0.8)
    ax.set_yticks(range(len(tasks)), tasks)
    ax.invert_yaxis()
    ax.set_xlabel("measurements saved per rollout (baseline mean − planner-family mean)")
    ax.set_title("Measurement savings per module")
    ax.legend(fontsize=7, loc="best")
    fig.savefig(path, bbox_inches="tight")
    return path


def plot_coverage(curves: pl.DataFrame, keys: list[str], path: Path) -> Path:
    """Q(τ) over τ (log axis), one panel per condition, one curve per family group."""
    if curves.height == 0:
        return _empty(path, "no trials of the preset configurations")
    fig = coverage_figure(curves, keys)
    fig.savefig(path)
    return path


def coverage_figure(curves: pl.DataFrame, keys: list[str]):
    """The figure of :func:`plot_coverage` (each group its own colour, line style and marker)."""
    every = _conditions(curves, keys)
    conds = every[:COVERAGE_MAX_PANELS]
    ncol = min(3, len(conds))
    nrow = math.ceil(len(conds) / ncol)
    fig = _figure(4.2 * ncol, 3.3 * nrow)
    for i, cond in enumerate(conds):
        ax = fig.add_subplot(nrow, ncol, i + 1)
        part = _rows_of(curves, keys, cond)
        groups = list(dict.fromkeys(part.get_column("group").to_list()))
        for j, group in enumerate(groups):
            g = part.filter(pl.col("group") == group)
            tau, q = g.get_column("tau").to_numpy(), g.get_column("q").to_numpy()
            style = _group_style(group, j)
            # markers at staggered points of the τ grid, so equal curves still show every group
            ax.step(tau, q, where="post", label=group, color=_COLORS.get(group), markevery=(2 * j, 8),
                    markersize=5, fillstyle="none", alpha=0.9, **style)
        ax.set_xscale("log")
        ax.set_ylim(-2, 102)
        ax.set_xlabel("τ (RMSLE threshold)")
        ax.set_ylabel("Q(τ) (% of all trials)")
        ax.set_title(_cond_label(dict(zip(keys, cond)), keys), fontsize=9)
        ax.grid(alpha=0.3)
        ax.legend(fontsize=7, loc="lower right")
    fig.tight_layout()
    if len(conds) < len(every):
        fig.subplots_adjust(top=1 - 0.3 / fig.get_figheight())
        _shown_note(fig, len(conds), len(every), "table_s3_coverage (Q at three thresholds)")
    return fig


def plot_heatmap(heat: pl.DataFrame, keys: list[str], path: Path) -> Path:
    """Module x configuration SA (%) heatmaps, one panel per condition."""
    cfgs = [c for c in heat.columns if c not in keys + ["task"]]
    if heat.height == 0 or not cfgs:
        return _empty(path, "no trials")
    fig = heatmap_figure(heat, keys)
    fig.savefig(path, bbox_inches="tight")
    return path


def heatmap_figure(heat: pl.DataFrame, keys: list[str]):
    """The figure of :func:`plot_heatmap` (configurations under the paper's labels)."""
    cfgs = [c for c in heat.columns if c not in keys + ["task"]]
    every = _conditions(heat, keys)
    parts = {c: _rows_of(heat, keys, c) for c in every}
    conds = _first(every, [parts[c].height for c in every], HEATMAP_MAX_ROWS)
    ncol, nrow = 1, len(conds)  # stacked: module names never run into the neighbouring panel
    n_tasks = max(parts[c].height for c in conds)
    fig = _figure(max(5.0, 0.7 * len(cfgs) + 2.5) * ncol, (0.32 * n_tasks + 1.8) * nrow)
    image = None
    for i, cond in enumerate(conds):
        ax = fig.add_subplot(nrow, ncol, i + 1)
        part = parts[cond]
        values = part.select(cfgs).to_numpy().astype(np.float64)
        image = ax.imshow(np.ma.masked_invalid(values), vmin=0, vmax=100, cmap="viridis", aspect="auto")
        for (r, c), v in np.ndenumerate(values):
            if np.isfinite(v):
                ax.text(c, r, f"{v:.0f}", ha="center", va="center", fontsize=7, color="white" if v < 60 else "black")
        ax.set_xticks(range(len(cfgs)), [paper_label(c) for c in cfgs], rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(part.height), part.get_column("task").to_list(), fontsize=8)
        ax.set_title("SA (%) " + _cond_label(dict(zip(keys, cond)), keys), fontsize=9)
    fig.subplots_adjust(hspace=0.5)
    if image is not None:
        fig.colorbar(image, ax=fig.axes, shrink=0.6, label="SA (%)")
    _shown_note(fig, len(conds), len(every), "table_heatmap and the viewer's heatmaps")
    return fig


#: Line styles of the budget curves, by role (the colour tells the configurations apart).
_ROLE_STYLES = {"scored": "-", "gp": (0, (5, 2)), "random": (0, (1, 1.5)), "baseline": (0, (6, 2, 1, 2))}


def plot_budget_curves(curve: pl.DataFrame, path: Path, roles: dict[str, str] | None = None) -> Path:
    """SA against the measurement budget (log2 axis) with 95% interval bands: one panel per
    (model,) system and noise level, one line per configuration; the uncapped point (null budget)
    sits one doubling right of the largest budget, marked ``none``."""
    if curve.height == 0 or curve.get_column(BUDGET).null_count() == curve.height:
        return _empty(path, "no trial ran under a measurement budget")
    fig = budget_figure(curve, roles or {})
    fig.savefig(path, bbox_inches="tight")
    return path


def budget_figure(curve: pl.DataFrame, roles: dict[str, str]):
    """The figure of :func:`plot_budget_curves`."""
    keys = (["model"] if "model" in curve.columns else []) + ["system", "noise"]
    conds = _conditions(curve, keys)
    budgets = sorted(b for b in set(curve.get_column(BUDGET).to_list()) if b is not None)
    uncapped_x = 2.0 * budgets[-1]
    present = list(dict.fromkeys(curve.get_column("configuration").to_list()))
    cfgs = [c for c in CONFIG_ORDER if c in present] + sorted(set(present) - set(CONFIG_ORDER))
    palette = ["#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
               "#17becf", "#393b79", "#637939"]
    markers = "osD^vP*Xh<>p"
    ncol = min(3, len(conds))
    nrow = math.ceil(len(conds) / ncol)
    fig = _figure(4.4 * ncol, 3.4 * nrow + 0.6)
    has_uncapped = curve.get_column(BUDGET).null_count() > 0
    for i, cond in enumerate(conds):
        ax = fig.add_subplot(nrow, ncol, i + 1)
        part = _rows_of(curve, keys, cond)
        for j, cfg in enumerate(cfgs):
            g = part.filter(pl.col("configuration") == cfg)
            if g.height == 0:
                continue
            color, marker = palette[j % len(palette)], markers[j % len(markers)]
            capped = g.filter(pl.col(BUDGET).is_not_null()).sort(BUDGET)
            style = _ROLE_STYLES.get(roles.get(cfg, ""), "-")
            if capped.height:
                x = capped.get_column(BUDGET).cast(pl.Float64).to_numpy()
                y = capped.get_column("sa").to_numpy()
                lo = capped.get_column("sa_ci_low").cast(pl.Float64).fill_null(float("nan")).to_numpy()
                hi = capped.get_column("sa_ci_high").cast(pl.Float64).fill_null(float("nan")).to_numpy()
                if capped.height == 1:
                    # one budget: a band would have no width, so an interval bar, nudged sideways
                    # by the configuration's place so that bars at one budget stay apart
                    xj = x * 2.0 ** (0.03 * (j - (len(cfgs) - 1) / 2))
                    err = None if np.isnan(lo[0]) or np.isnan(hi[0]) else [[y[0] - lo[0]], [hi[0] - y[0]]]
                    ax.errorbar(xj, y, yerr=err, color=color, marker=marker, markersize=4, capsize=2, lw=1.0,
                                linestyle="none", label=cfg)
                else:
                    ax.fill_between(x, lo, hi, color=color, alpha=0.13, linewidth=0)
                    ax.plot(x, y, color=color, marker=marker, markersize=4, lw=1.4, linestyle=style, label=cfg)
            free = g.filter(pl.col(BUDGET).is_null())
            if free.height:
                y0 = free.item(0, "sa")
                lo0, hi0 = free.item(0, "sa_ci_low"), free.item(0, "sa_ci_high")
                err = None if lo0 is None or hi0 is None else [[y0 - lo0], [hi0 - y0]]
                ax.errorbar([uncapped_x], [y0], yerr=err, color=color, marker=marker, markersize=4, capsize=2, lw=1.0,
                            label=None if capped.height else cfg)
        ax.set_xscale("log", base=2)
        ticks = [float(b) for b in budgets] + ([uncapped_x] if has_uncapped else [])
        ax.set_xticks(ticks, [str(b) for b in budgets] + (["none"] if has_uncapped else []))
        ax.minorticks_off()
        ax.set_ylim(-0.03, 1.03)
        ax.set_xlabel("measurement budget (log2; none = uncapped)")
        ax.set_ylabel("SA (share credited)")
        ax.set_title(_cond_label(dict(zip(keys, cond)), keys), fontsize=9)
        ax.grid(alpha=0.3)
    seen: dict[str, object] = {}
    for ax in fig.axes:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            seen.setdefault(lab, h)
    fig.legend(list(seen.values()), list(seen.keys()), loc="lower center", ncol=min(6, len(seen)), fontsize=7, frameon=False)
    fig.tight_layout(rect=(0, 0.08, 1, 1))
    return fig
