"""Report: the paper's tables and figures from a run's results table (Polars only).

``python -m etc_fast.report RUN_DIR`` writes ``RUN_DIR/report/report.md`` with Table 1 (families),
Table 2 / S4 (every configuration), S2 (module-level SA effects: resampling interval,
leave-one-module-out range, exact sign-flip p), S3 (coverage Q(τ)), a module × configuration
credit heatmap, measurement savings and a per-module table, each also as CSV and Parquet, plus PNG figures;
and the statistics of docs/guide/statistics.md: each cell's SA with a cluster-bootstrap interval over modules
(``table_budget_curve``, ``table_budget_to_sa`` and ``budget_curves.png`` with budgets), paired
comparisons with a stated decision rule and Holm step (``table_paired``), and the power note
(``table_power``, ``power.md``). A run of at most 24 trials leads ``report.md`` with one row per trial,
its submitted law beside the true one, and folds the statistics over modules away; every table writes
its numbers with their magnitude and a custom task by its name.
"""

from etc_fast.report._budget import table_budget_curve, table_budget_to_sa, table_paired, table_power, task_family
from etc_fast.report._format import task_label
from etc_fast.report._load import CONFIG_ORDER, FAMILY_GROUPS, config_label, load_trials
from etc_fast.report._rejudge import JUDGE_FILE, judge_label
from etc_fast.report._stats import (
    N_DRAWS,
    SEED,
    EffectSummary,
    design_variance,
    detectable_difference,
    summarize_effects,
)
from etc_fast.report._tables import (
    TAUS,
    condition_keys,
    coverage_curves,
    module_effects,
    table_configurations,
    table_coverage,
    table_families,
    table_heatmap,
    table_modules,
    table_modules_wide,
    table_sa_effects,
    table_savings,
)
from etc_fast.report._viewer import VIEWER_FILE, build_viewer
from etc_fast.report._write import TABLE_TITLES, build_tables, format_cell, markdown_table, write_report

__all__ = [
    "design_variance",
    "detectable_difference",
    "JUDGE_FILE",
    "TABLE_TITLES",
    "VIEWER_FILE",
    "build_viewer",
    "CONFIG_ORDER",
    "FAMILY_GROUPS",
    "N_DRAWS",
    "SEED",
    "TAUS",
    "EffectSummary",
    "build_tables",
    "condition_keys",
    "config_label",
    "coverage_curves",
    "format_cell",
    "judge_label",
    "task_label",
    "load_trials",
    "markdown_table",
    "module_effects",
    "summarize_effects",
    "table_configurations",
    "table_coverage",
    "table_families",
    "table_heatmap",
    "table_modules",
    "table_modules_wide",
    "table_sa_effects",
    "table_budget_curve",
    "table_budget_to_sa",
    "table_paired",
    "task_family",
    "table_power",
    "table_savings",
    "write_report",
]
