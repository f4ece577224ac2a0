"""The referee statistics (docs/guide/statistics.md): cluster bootstrap over modules, paired comparisons,
their decision rule and Holm step, the power formula, the budget tables and their files."""

from __future__ import annotations

import math
from statistics import NormalDist

import numpy as np
import polars as pl
import pytest

from etc_fast.report import _budget
from etc_fast.report.__main__ import main
from etc_fast.report._load import BUDGET, load_trials, with_budget
from etc_fast.report._stats import cluster_share_interval, decide, holm, paired_cluster_difference, power_needs
from etc_fast.report._tables import condition_keys, table_configurations, table_heatmap
from etc_fast.runner import trials_frame
from tests.report.conftest import row

TASKS = tuple(f"m{i}_task" for i in range(12))
CURVE_COLUMNS = ["configuration", "system", "noise", "measurement_budget", "n", "credited", "sa", "sa_ci_low",
                 "sa_ci_high", "rmsle_median", "mean_measurements"]
PAIRED_HEAD = ["system", "noise", "measurement_budget", "config_a", "config_b"]
PAIRED_NAMED = ["n_modules", "n_a", "n_b", "sa_a", "sa_b", "diff", "ci_low", "ci_high", "decision"]
ACQ = {"gp_ucb_c": ("planner", "gp_ucb")}


def _trial(cfg, task, rollout, credited, budget, *, noise=0.0, system="vanilla_equation", status="completed", rmsle=0.5,
           measurements=10):
    d = row(cfg, task, rollout, credited=credited, status=status, rmsle=rmsle, measurements=measurements)
    if cfg in ACQ:
        d["family"], d["acquisition"] = ACQ[cfg]
    d.update(noise=noise, system=system, trial_id=f"{d['trial_id']}-{budget}-{noise}-{system}")
    d[BUDGET] = budget
    return d


def frame(rows) -> pl.DataFrame:
    budgets = [r.pop(BUDGET) for r in rows]
    return trials_frame(rows).with_columns(pl.Series(BUDGET, budgets, dtype=pl.Int64))


def known_rows(budgets=(4, 16, None)):
    """variance_c credited everywhere; random_c on the even modules; baseline_c on the even modules
    at budget 16 and uncapped, nowhere at budget 4; gp_ucb_c exactly as random_c. 3 rollouts."""
    rows = []
    for b in budgets:
        for j, t in enumerate(TASKS):
            for r in range(3):
                rows.append(_trial("variance_c", t, r, True, b))
                rows.append(_trial("random_c", t, r, j % 2 == 0, b))
                rows.append(_trial("gp_ucb_c", t, r, j % 2 == 0, b))
                rows.append(_trial("baseline_c", t, r, j % 2 == 0 and b != 4, b))
    return rows


# -- the numeric core ---------------------------------------------------------------------------------


def test_cluster_interval_is_the_ratio_of_resampled_sums_and_deterministic():
    c = np.array([3, 0, 2, 3, 1, 0, 3, 2, 0, 1, 3, 1])
    n = np.array([3, 3, 3, 3, 2, 3, 3, 3, 3, 3, 3, 3])
    sa, lo, hi = cluster_share_interval(c, n, n_draws=2000, seed=0)
    assert sa == c.sum() / n.sum()
    # by hand: the same module draws, each drawn module bringing its credited and trial counts
    idx = np.random.default_rng(0).integers(0, 12, size=(2000, 12))
    want = np.percentile(c[idx].sum(axis=1) / n[idx].sum(axis=1), [2.5, 97.5])
    assert (lo, hi) == (float(want[0]), float(want[1]))
    assert lo <= sa <= hi
    assert cluster_share_interval(c, n, n_draws=2000, seed=0) == (sa, lo, hi)  # deterministic
    assert cluster_share_interval(c, n, n_draws=2000, seed=1) != (sa, lo, hi)
    assert cluster_share_interval([2], [3]) == (2 / 3, None, None)  # one module: no interval
    with pytest.raises(ValueError, match="whole numbers"):
        cluster_share_interval([4, 1], [3, 3])


def test_paired_decisions_on_known_answers():
    ones, half, three = np.full(12, 3), np.array([3, 0] * 6), np.full(12, 3)
    a = paired_cluster_difference(ones, three, half, three, n_draws=2000, seed=0)
    assert (a.sa_a, a.sa_b, a.diff) == (1.0, 0.5, 0.5)
    assert a.ci_low > 0 and a.ci_low <= a.diff <= a.ci_high and a.decision == "A better" and 0.0 <= a.p_boot < 0.01
    b = paired_cluster_difference(half, three, ones, three, n_draws=2000, seed=0)
    assert b.decision == "B better" and (b.ci_low, b.ci_high) == (-a.ci_high, -a.ci_low)
    same = paired_cluster_difference(half, three, half, three, n_draws=2000, seed=0)
    assert (same.diff, same.ci_low, same.ci_high, same.p_boot, same.decision) == (0.0, 0.0, 0.0, 1.0, "no separation")
    assert paired_cluster_difference([3], [3], [0], [3]).decision == "too few modules"
    assert decide(-0.1, 0.2) == "no separation" and decide(0.0, 0.3) == "no separation"  # 0 inside: no separation


def test_pairing_keeps_modules_together():
    # A beats B by exactly one credit in every module: the paired interval is a point away from 0,
    # although each arm alone varies a lot between modules
    ca = np.array([3, 1, 3, 1, 2, 3, 1, 2, 3, 1, 2, 3])
    cb = ca - 1
    n = np.full(12, 3)
    r = paired_cluster_difference(ca, n, cb, n, n_draws=2000, seed=0)
    assert r.ci_low == pytest.approx(1 / 3) and r.ci_high == pytest.approx(1 / 3) and r.decision == "A better"
    _, lo_a, hi_a = cluster_share_interval(ca, n, n_draws=2000, seed=0)
    _, lo_b, hi_b = cluster_share_interval(cb, n, n_draws=2000, seed=0)
    assert lo_a <= hi_b  # the unpaired intervals touch


def test_holm_by_hand():
    assert holm([0.01, 0.04, 0.03]) == pytest.approx([0.03, 0.06, 0.06])
    a, none, b = holm([0.5, None, 0.01])
    assert none is None and a == 0.5 and b == pytest.approx(0.02)
    assert holm([]) == []


def test_power_formula_by_hand():
    z = NormalDist().inv_cdf(0.975) + NormalDist().inv_cdf(0.8)
    w, t0 = 0.05, 3.0
    mods, trials = power_needs(0.0, w, t0, 0.1, n_modules=12)
    assert mods == math.ceil(z**2 * w / 0.01)
    assert trials == pytest.approx(w * t0 / (12 * 0.01 / z**2))
    # the modules themselves vary too much: no number of rollouts helps
    assert power_needs(0.2, w, t0, 0.1, n_modules=12)[1] is None


# -- the tables ------------------------------------------------------------------------------------------


def test_budget_curve_columns_counts_and_intervals():
    rows = known_rows()
    rows.append(_trial("variance_c", "m0_task", 9, False, 4, status="failed"))  # left out: not a result
    df = frame(rows)
    curve = _budget.table_budget_curve(df, n_draws=500, seed=0)
    assert curve.columns == CURVE_COLUMNS
    assert curve.height == 4 * 3
    # configurations in preset order, then the others; budgets ascending, uncapped last
    assert curve.get_column("configuration").to_list()[:3] == ["baseline_c"] * 3
    assert curve.filter(pl.col("configuration") == "variance_c").get_column(BUDGET).to_list() == [4, 16, None]
    v = curve.filter((pl.col("configuration") == "variance_c") & (pl.col(BUDGET) == 4)).row(0, named=True)
    assert (v["n"], v["credited"], v["sa"], v["sa_ci_low"], v["sa_ci_high"]) == (36, 36, 1.0, 1.0, 1.0)
    r = curve.filter((pl.col("configuration") == "random_c") & pl.col(BUDGET).is_null()).row(0, named=True)
    assert r["sa"] == 0.5 and r["sa_ci_low"] < 0.5 < r["sa_ci_high"]
    assert all(lo <= s <= hi for s, lo, hi in curve.select("sa", "sa_ci_low", "sa_ci_high").iter_rows())
    assert _budget.table_budget_curve(df, n_draws=500, seed=0).equals(curve)  # deterministic


def test_curve_without_a_budget_column_is_the_uncapped_point():
    df = frame(known_rows(budgets=(None,))).drop(BUDGET)
    assert not _budget.has_budgets(df)
    curve = _budget.table_budget_curve(df, n_draws=100)
    assert curve.columns == CURVE_COLUMNS and curve.height == 4
    assert curve.get_column(BUDGET).null_count() == 4
    assert with_budget(df).schema[BUDGET] == pl.Int64
    assert BUDGET not in condition_keys(df)


def test_paired_table_roles_decisions_and_holm():
    df = frame(known_rows())
    paired = _budget.table_paired(df, n_draws=1000, seed=0)
    assert paired.columns[:5] == PAIRED_HEAD and all(c in paired.columns for c in PAIRED_NAMED)
    assert paired.height == 3 * 6  # every pair of four configurations at each of three budgets
    one = paired.filter(pl.col(BUDGET) == 16)
    pairs = list(zip(one.get_column("config_a").to_list(), one.get_column("config_b").to_list(), strict=True))
    assert pairs[0] == ("variance_c", "gp_ucb_c")  # scored, gp, random, baseline
    assert set(one.get_column("roles").to_list()) == {"scored vs gp", "scored vs random", "scored vs baseline", "gp vs random",
                                                       "gp vs baseline", "random vs baseline"}

    def get(b, a, c):
        return paired.filter(pl.col(BUDGET).eq_missing(b) & (pl.col("config_a") == a) & (pl.col("config_b") == c)).row(0, named=True)

    s = get(16, "variance_c", "random_c")
    assert (s["n_modules"], s["n_a"], s["n_b"], s["sa_a"], s["sa_b"], s["diff"]) == (12, 36, 36, 1.0, 0.5, 0.5)
    assert s["ci_low"] > 0 and s["decision"] == "A better" and s["decision_holm"] == "A better"
    assert get(None, "gp_ucb_c", "random_c")["decision"] == "no separation"  # identical arms
    assert get(4, "random_c", "baseline_c")["decision"] == "A better"
    assert get(16, "random_c", "baseline_c")["decision"] == "no separation"
    assert (paired.get_column("p_holm") >= paired.get_column("p_boot")).all()


def test_budget_to_sa_known_answer():
    rows = []
    # budget 4: SA 0.25 everywhere; budget 8: 6 modules at 4/4, 6 at 2/4 (SA 0.75, but spread between
    # modules puts its lower bound under 0.7); budget 16: every trial credited
    for b in (4, 8, 16):
        for j, t in enumerate(TASKS):
            hits = {4: 1, 8: 4 if j % 2 else 2, 16: 4}[b]
            for r in range(4):
                rows.append(_trial("variance_c", t, r, r < hits, b, measurements=b))
    curve = _budget.table_budget_curve(frame(rows), n_draws=2000)
    at8 = curve.filter(pl.col(BUDGET) == 8).row(0, named=True)
    assert at8["sa"] == 0.75 and 0.5 <= at8["sa_ci_low"] < 0.7
    t = _budget.table_budget_to_sa(curve)
    assert t.columns == ["configuration", "system", "noise", "target_sa", "budget_point", "measurements_point",
                         "budget_ci", "measurements_ci", "uncapped_sa"]
    got = {x["target_sa"]: (x["budget_point"], x["budget_ci"], x["measurements_point"]) for x in t.iter_rows(named=True)}
    assert got == {0.5: (8, 8, 8.0), 0.7: (8, 16, 8.0), 0.9: (16, 16, 16.0)}
    assert t.get_column("uncapped_sa").null_count() == 3


def test_power_table_reads_the_run():
    p = _budget.table_power(frame(known_rows()))
    assert p.height == 3 and p.get_column("delta").to_list() == [0.05, 0.1, 0.2]
    needed = p.get_column("modules_needed").to_list()
    assert needed == sorted(needed, reverse=True)  # a larger effect needs fewer modules


def test_every_table_groups_by_budget():
    df = frame(known_rows())
    assert condition_keys(df)[-1] == BUDGET
    t2 = table_configurations(df)
    assert t2.height == 4 * 3 and t2.get_column(BUDGET).to_list()[-1] is None  # uncapped last
    v = t2.filter((pl.col("configuration") == "baseline_c") & (pl.col(BUDGET) == 4))
    assert v.get_column("sa_pct").to_list() == [0.0]
    assert table_heatmap(df).height == 12 * 3


# -- the report, end to end ----------------------------------------------------------------------------


def test_report_cli_with_budgets(tmp_path, capsys):
    frame(known_rows()).write_parquet(tmp_path / "trials.parquet")
    assert load_trials(tmp_path).schema[BUDGET] == pl.Int64  # the stored budget survives loading
    assert main([str(tmp_path), "--draws", "300"]) == 0
    out = tmp_path / "report"
    assert pl.read_csv(out / "table_budget_curve.csv").columns == CURVE_COLUMNS
    paired = pl.read_csv(out / "table_paired.csv")
    assert paired.columns[:5] == PAIRED_HEAD and all(c in paired.columns for c in PAIRED_NAMED)
    assert (out / "table_budget_to_sa.csv").is_file() and (out / "table_power.csv").is_file()
    assert (out / "budget_curves.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    md = (out / "report.md").read_text()
    assert "![SA against the measurement budget](budget_curves.png)" in md and "[power.md](power.md)" in md
    assert "300 resamples, seed 0" in md
    power = (out / "power.md").read_text()
    assert "z = z(1 - alpha/2) + z(power) = 2.802" in power and "| delta |" in power
    first = {p.name: p.read_bytes() for p in out.glob("*.csv")}
    first_png = (out / "budget_curves.png").read_bytes()
    assert main([str(tmp_path), "--draws", "300"]) == 0
    assert {p.name: p.read_bytes() for p in out.glob("*.csv")} == first  # same numbers on a rerun
    assert (out / "budget_curves.png").read_bytes() == first_png


def test_report_without_budgets_has_no_budget_figure(tmp_path):
    frame(known_rows(budgets=(None,))).drop(BUDGET).write_parquet(tmp_path / "trials.parquet")
    assert main([str(tmp_path), "--draws", "100", "--no-viewer"]) == 0
    out = tmp_path / "report"
    assert not (out / "budget_curves.png").exists() and not (out / "table_budget_to_sa.csv").exists()
    curve = pl.read_csv(out / "table_budget_curve.csv")
    assert curve.columns == CURVE_COLUMNS and curve.get_column(BUDGET).null_count() == curve.height
    assert pl.read_csv(out / "table_paired.csv").height == 6
    assert "budget_curves.png" not in (out / "report.md").read_text()


def test_a_configuration_at_one_budget_gets_an_interval_bar():
    # a band over one budget has no width: a lone budget's point carries an interval bar instead
    from etc_fast.report._figures import budget_figure

    rows = [r for r in known_rows(budgets=(4, 16)) if not (r["configuration"] == "random_c" and r["measurement_budget"] == 4)]
    curve = _budget.table_budget_curve(frame(rows), n_draws=200)
    lone = curve.filter(pl.col("configuration") == "random_c")
    assert lone.height == 1 and lone.item(0, "sa_ci_high") > lone.item(0, "sa_ci_low")
    ax = budget_figure(curve, {}).axes[0]
    bars = [c for c in ax.containers if type(c).__name__ == "ErrorbarContainer"]
    assert len(bars) == 1
    (x,), (y,) = bars[0].lines[0].get_data()
    assert y == lone.item(0, "sa") and x != 16.0 and abs(math.log2(x) - 4.0) < 0.2


# -- the run's analysis settings (analysis.reference, analysis.cluster) ---------------------------------


def test_paired_against_a_reference_compares_with_it_only():
    df = frame(known_rows())
    every = _budget.table_paired(df, n_draws=1000, seed=0)
    ref = _budget.table_paired(df, n_draws=1000, seed=0, reference="random_c")
    assert ref.height == 3 * 3 and set(ref.get_column("config_b").to_list()) == {"random_c"}
    assert set(ref.get_column("config_a").to_list()) == {"variance_c", "gp_ucb_c", "baseline_c"}
    # the same comparison, the same interval; Holm now adjusts over three comparisons, not six
    key = (pl.col(BUDGET) == 16) & (pl.col("config_a") == "variance_c") & (pl.col("config_b") == "random_c")
    a, b = every.filter(key).row(0, named=True), ref.filter(key).row(0, named=True)
    assert (a["diff"], a["ci_low"], a["ci_high"], a["p_boot"]) == (b["diff"], b["ci_low"], b["ci_high"], b["p_boot"])
    for budget in (4, 16):
        part = ref.filter(pl.col(BUDGET) == budget)
        assert part.get_column("p_holm").to_list() == holm(part.get_column("p_boot").to_list())
    # a reference the cell did not run leaves the cell without comparisons
    assert _budget.table_paired(df, n_draws=100, seed=0, reference="pairwise_c").height == 0


def test_family_cluster_pools_the_generated_laws_of_a_class():
    from etc_fast.tasks.generate import generated_names, law_by_name

    names = generated_names(58, 40)
    by_class: dict[str, list[str]] = {}
    for n in names:
        by_class.setdefault(law_by_name(n).task_class, []).append(n)
    laws = [n for ns in list(by_class.values())[:3] for n in ns[:2]]  # two laws of each of three classes
    assert len(laws) == 6
    rows = []
    for i, t in enumerate([*laws, "m0_gravity"]):
        rows.append(_trial("variance_c", t, 0, True, 8))
        rows.append(_trial("random_c", t, 0, i % 2 == 0, 8))
    df = frame(rows)
    assert _budget.task_family(laws[0]) == f"generated:{law_by_name(laws[0]).task_class}"
    assert _budget.task_family("m0_gravity") == "m0_gravity"
    by_task = _budget.table_paired(df, n_draws=500, seed=0).row(0, named=True)
    by_family = _budget.table_paired(df, n_draws=500, seed=0, cluster="family").row(0, named=True)
    assert (by_task["n_modules"], by_family["n_modules"]) == (7, 4)  # three classes and the module
    assert by_task["diff"] == by_family["diff"] == pytest.approx(3 / 7)
    curve_t = _budget.table_budget_curve(df, n_draws=500, seed=0)
    curve_f = _budget.table_budget_curve(df, n_draws=500, seed=0, cluster="family")
    assert curve_t.get_column("sa").to_list() == curve_f.get_column("sa").to_list()
    assert curve_t.get_column("sa_ci_low").to_list() != curve_f.get_column("sa_ci_low").to_list()
    with pytest.raises(ValueError, match="cluster must be one of task, family, got 'law'"):
        _budget.table_budget_curve(df, cluster="law")


def test_report_follows_the_runs_analysis_settings(tmp_path):
    frame(known_rows()).write_parquet(tmp_path / "trials.parquet")
    (tmp_path / "config.resolved.yaml").write_text("name: t\nanalysis: {reference: random_c, cluster: family}\n")
    assert main([str(tmp_path), "--draws", "200", "--no-viewer"]) == 0
    out = tmp_path / "report"
    paired = pl.read_csv(out / "table_paired.csv")
    assert paired.height == 9 and set(paired.get_column("config_b").to_list()) == {"random_c"}
    md = (out / "report.md").read_text()
    assert "cluster bootstrap over law families" in md and "compared with `random_c` only" in md
