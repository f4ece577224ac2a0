"""The report and the GP-surrogate presets (docs/guide/acquisition.md): their labels, and family tables that
average the paper's three variants only (a GP planner is a per-configuration row)."""

from __future__ import annotations

from etc_fast.report import CONFIG_ORDER, config_label, table_configurations, table_families
from etc_fast.report._load import PAPER_ORDER, paper_label, variant_label
from tests.report.conftest import row


def test_labels():
    assert [variant_label(n) for n in ("gp_ucb_n", "gp_var_c")] == ["GP-UCB", "GP-Var"]
    assert paper_label("gp_ucb_c") == "GP-UCB C" and paper_label("gp_var_n") == "GP-Var N"
    assert config_label("gp_var_c") == "GP-Var, int." and config_label("random_n") == "Random, no int."
    assert CONFIG_ORDER[:8] == PAPER_ORDER and set(CONFIG_ORDER[8:12]) == {"gp_ucb_n", "gp_var_n", "gp_ucb_c", "gp_var_c"}
    assert CONFIG_ORDER[12:] == ("mi_n", "mi_c") and paper_label("mi_c") == "MI C" and config_label("mi_n") == "MI, no int."


def test_family_tables_leave_the_gp_planners_out(make_frame):
    rows = [row("variance_n", "m0_t", credited=True), row("random_n", "m0_t"),
            row("gp_ucb_n", "m0_t", credited=True), row("gp_var_n", "m0_t", credited=True)]
    for r in rows[2:]:
        r["acquisition"] = r["configuration"][:6]
    df = make_frame(rows)
    fam = table_families(df)
    planner = fam.filter(fam["group"] == "Planner N")
    assert planner["n"].to_list() == [2] and planner["variants"].to_list() == ["Var+Rand"]
    per = table_configurations(df)
    assert per["configuration"].to_list() == ["variance_n", "random_n", "gp_ucb_n", "gp_var_n"]
    assert per["label"].to_list()[2:] == ["GP-UCB, no int.", "GP-Var, no int."]
