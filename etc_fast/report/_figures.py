"""Report figures (PNG, matplotlib's Agg canvas; pyplot and its global backend are not touched)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl

from etc_fast.report._load import paper_label

__all__ = ["plot_savings", "plot_coverage", "plot_heatmap"]

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


def _cond_label(row: dict, keys: list[str]) -> str:
    return " / ".join(str(row[k]) if k != "noise" else f"noise {row[k]:g}" for k in keys)


def _conditions(frame: pl.DataFrame, keys: list[str]) -> list[tuple]:
    """The distinct values of ``keys`` in ``frame``, in order of first appearance."""
    return list(dict.fromkeys(tuple(r[k] for k in keys) for r in frame.iter_rows(named=True)))


def _rows_of(frame: pl.DataFrame, keys: list[str], cond: tuple) -> pl.DataFrame:
    """The rows of ``frame`` whose ``keys`` equal ``cond``."""
    return frame.filter(pl.all_horizontal([pl.col(k) == v for k, v in zip(keys, cond)]))


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
    conds = _conditions(curves, keys)
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
    conds = _conditions(heat, keys)
    ncol, nrow = 1, len(conds)  # stacked: module names never run into the neighbouring panel
    n_tasks = max(_rows_of(heat, keys, c).height for c in conds)
    fig = _figure(max(5.0, 0.7 * len(cfgs) + 2.5) * ncol, (0.32 * n_tasks + 1.8) * nrow)
    image = None
    for i, cond in enumerate(conds):
        ax = fig.add_subplot(nrow, ncol, i + 1)
        part = _rows_of(heat, keys, cond)
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
    return fig
