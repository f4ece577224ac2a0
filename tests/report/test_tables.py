import math

import numpy as np
import polars as pl
import pytest

from etc_fast.report import (
    markdown_table,
    module_effects,
    summarize_effects,
    table_configurations,
    table_coverage,
    table_families,
    table_heatmap,
    table_sa_effects,
    table_savings,
)
from tests.report import _np_stats
from tests.report.conftest import CONFIGS, row

TASKS = [f"m{i}_t" for i in range(12)]
# planner credits (of 6 = 3 variants x 2 rollouts) per module for N; baseline never credited
N_CREDITS = [6, 6, 3, 6, 2, 0, 0, 0, 0, 0, 0, 0]


def fixture_rows():
    rows = []
    for mi, task in enumerate(TASKS):
        for r in range(2):
            # baselines: never credited; rmsle 1.0, except module 0 (inf) and module 1 rollout 1 (NaN)
            rm = math.inf if mi == 0 else (math.nan if (mi == 1 and r == 1) else 1.0)
            rows.append(row("baseline_n", task, r, rmsle=rm, complete=mi != 0, measurements=20 + mi))
            rows.append(row("baseline_c", task, r, rmsle=0.2, measurements=30, credited=(mi == 11)))
            for k, cfg in enumerate(("variance_n", "pairwise_n", "random_n")):
                credited = 2 * k + r < N_CREDITS[mi]
                rows.append(row(cfg, task, r, credited=credited, rmsle=0.05 if mi != 2 else 0.005,
                                complete=not (mi == 3 and k == 0), measurements=8))
            for cfg in ("variance_c", "pairwise_c", "random_c"):
                # C planners: credited everywhere on modules 0..4 (effect +100 pp), tie elsewhere
                rows.append(row(cfg, task, r, credited=mi < 5 or mi == 11, rmsle=0.05, measurements=9))
    return rows


@pytest.fixture
def frame(make_frame):
    return make_frame(fixture_rows())


def test_table1_families_by_hand(frame):
    t = table_families(frame)
    assert t.columns[:3] == ["model", "difficulty", "group"]
    assert t["group"].to_list() == ["Baseline N", "Planner N", "Baseline C", "Planner C"]
    assert t["n"].to_list() == [24, 72, 24, 72]
    assert t["credited"].to_list() == [0, sum(N_CREDITS), 2, 6 * 6]
    assert t["sa_pct"].to_list() == pytest.approx([0.0, 100 * 23 / 72, 100 * 2 / 24, 100 * 36 / 72])
    # baseline N: 2 inf + 1 NaN are not finite; the other 21 are 1.0
    assert t["finite"].to_list() == [21, 72, 24, 72]
    assert t["rmsle_mean_finite"][0] == pytest.approx(1.0)
    assert t["rmsle_mean_finite"][1] == pytest.approx((66 * 0.05 + 6 * 0.005) / 72)
    assert t["measurements_mean"].to_list() == pytest.approx([np.mean([20 + i for i in range(12)]), 8, 30, 9])
    assert t["complete"].to_list() == [22, 70, 24, 72]


def test_table2_configurations(frame):
    t = table_configurations(frame)
    assert t.height == 8 and t["configuration"].to_list() == list(CONFIGS)
    assert t["label"].to_list()[:3] == ["Baseline, no int.", "Baseline, int.", "Variance, no int."]
    assert set(t["n"].to_list()) == {24}
    # variance_n (k=0) is credited where 0 + r < credits: module 0,1,3 both rollouts, 2 and 4 one each
    assert t.filter(pl.col("configuration") == "variance_n")["credited"].item() == 2 + 2 + 2 + 2 + 2 - 0
    assert t.filter(pl.col("configuration") == "variance_n")["complete"].item() == 22


def test_module_effects_and_s2_by_hand(frame):
    eff = module_effects(frame)
    n = eff.filter(pl.col("tool") == "N")
    assert n["task"].to_list() == TASKS
    want = [100 * c / 6 for c in N_CREDITS]
    assert n["effect"].to_list() == pytest.approx(want)

    s2 = table_sa_effects(frame, n_draws=5, seed=0)
    assert s2["tool"].to_list() == ["N", "C"]
    rn = s2.row(0, named=True)
    assert rn["delta_sa_pp"] == pytest.approx(np.mean(want))
    assert (rn["n_pos"], rn["n_neg"], rn["n_zero"], rn["n_modules"]) == (5, 0, 7, 12)
    idx = np.random.default_rng(0).integers(0, 12, size=(5, 12))  # the same index draws, by hand
    means = _np_stats.bootstrap_means(want, idx)
    assert (rn["ci_low"], rn["ci_high"]) == pytest.approx(tuple(np.percentile(means, [2.5, 97.5])))
    assert (rn["loo_low"], rn["loo_high"]) == pytest.approx(_np_stats.leave_one_out(want))
    assert rn["sign_flip_p"] == pytest.approx(_np_stats.sign_flip(want))
    rc = s2.row(1, named=True)  # five +100 pp effects and seven ties (module 11 credited in both)
    assert rc["sign_flip_p"] == 0.0625
    assert (rc["n_pos"], rc["n_zero"]) == (5, 7)
    assert rc["delta_sa_pp"] == pytest.approx(500 / 12)
    assert (rc["loo_low"], rc["loo_high"]) == pytest.approx((400 / 11, 500 / 11))


def test_paper_sign_flip_values():
    assert summarize_effects([50.0] * 5 + [0.0] * 7).sign_flip_p == 0.0625
    # 4 positive, 1 negative, 7 ties, equal magnitudes: sum = 5 - 2 * (negatives); |sum| >= 3 for
    # 0, 1, 4 or 5 negatives: 1 + 5 + 5 + 1 = 12 of 32 sign vectors
    assert summarize_effects([50.0] * 4 + [-50.0] + [0.0] * 7).sign_flip_p == pytest.approx(12 / 32)
    empty = summarize_effects([])
    assert empty.n_modules == 0 and empty.mean is None


def test_s3_coverage_by_hand(frame):
    t = table_coverage(frame)
    assert t.columns[-8:] == ["variants", "n", "complete", "finite_incomplete", "sign_disagree", "q_0.01", "q_0.1", "q_1"]
    assert t["variants"].to_list() == ["Baseline", "Var+Pair+Rand", "Baseline", "Var+Pair+Rand"]
    # baseline N's incomplete module 0 scores inf (not finite); planner N's variance_n on module 3 is
    # incomplete with a finite 0.05: two finite-but-incomplete submissions
    assert t["finite_incomplete"].to_list() == [0, 2, 0, 0]
    assert t["sign_disagree"].to_list() == [0, 0, 0, 0]
    bn = t.row(0, named=True)
    # baseline N: complete except module 0 (2 trials); rmsle 1.0 (finite on 21); module 1 r1 NaN
    assert bn["complete"] == 22
    assert (bn["q_0.01"], bn["q_0.1"], bn["q_1"]) == pytest.approx((0.0, 0.0, 100 * 21 / 24))
    pn = t.row(1, named=True)
    # planner N: 0.005 on module 2 (6 trials), 0.05 elsewhere; module 3 variance_n incomplete (2)
    assert (pn["q_0.01"], pn["q_0.1"], pn["q_1"]) == pytest.approx((100 * 6 / 72, 100 * 70 / 72, 100 * 70 / 72))


def test_sign_disagreements_counted_per_group(make_frame):
    rows = fixture_rows()
    signs = {("random_c", "m5_t", 1): 3, ("baseline_n", "m2_t", 0): 1, ("variance_c", "m9_t", 0): 1}
    rows = [{**r, "sign_disagreements": signs.get((r["configuration"], r["task"], r["rollout"]), 0)} for r in rows]
    t = table_coverage(make_frame(rows))
    # a submission counts once, however many points disagree
    assert dict(zip(t["group"].to_list(), t["sign_disagree"].to_list())) == {
        "Baseline N": 1, "Planner N": 0, "Baseline C": 0, "Planner C": 2}


def test_variants_column_names_only_the_configurations_present(make_frame):
    rows = [r for r in fixture_rows() if r["configuration"] in ("baseline_n", "random_n", "variance_c", "random_c")]
    f = make_frame(rows)
    t1 = table_families(f)
    assert dict(zip(t1["group"].to_list(), t1["variants"].to_list())) == {
        "Baseline N": "Baseline", "Planner N": "Rand", "Planner C": "Var+Rand"}
    assert t1.filter(pl.col("group") == "Planner N")["n"].item() == 24


def test_heatmap_and_savings_shapes(frame):
    h = table_heatmap(frame)
    assert h.shape == (12, 3 + 8)
    assert h.columns[3:] == list(CONFIGS)
    assert h.filter(pl.col("task") == "m2_t")["variance_n"].item() == 100.0
    s = table_savings(frame)
    assert s.height == 24
    assert s.filter((pl.col("tool") == "N") & (pl.col("task") == "m5_t"))["savings"].item() == pytest.approx(25 - 8)


def test_missing_families_are_handled(make_frame):
    rows = [r for r in fixture_rows() if r["family"] == "planner" and not r["interpreter"]]
    f = make_frame(rows)
    assert table_families(f)["group"].to_list() == ["Planner N"]
    s2 = table_sa_effects(f, n_draws=10)
    assert s2.height == 0 and "delta_sa_pp" in s2.columns
    assert table_coverage(f)["group"].to_list() == ["Planner N"]
    assert table_savings(f).height == 0
    assert table_heatmap(f).shape == (12, 3 + 3)
    assert "no rows" in markdown_table(s2)
    empty = make_frame([])
    assert table_families(empty).height == 0 and table_heatmap(empty).height == 0


def test_extra_condition_keys(make_frame):
    rows = fixture_rows()
    rows += [dict(r, difficulty="easy", trial_id=r["trial_id"] + "e", law_version="v1") for r in rows[:50]]
    t = table_families(make_frame(rows))
    assert t.columns[:4] == ["model", "difficulty", "law_version", "group"]
    assert t["difficulty"].to_list()[0] == "easy"
