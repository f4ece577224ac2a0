"""NewtonBench's aggregation (result_analysis/summarize_results.py) as an extra report table."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

from etc_fast.report._tables import nb_mask_outliers, table_newtonbench


def test_outlier_rule():
    vals = [0.1, 0.11, 0.12, 0.1, 5.0, None, float("inf")]
    out = nb_mask_outliers(vals)
    # median 0.11, MAD 0.01: 5.0 has |z| = 0.6745 * 4.89 / 0.01 >> 3.5; inf and None are masked too
    assert out[:4] == [0.1, 0.11, 0.12, 0.1] and out[4] is None and out[5] is None and out[6] is None
    # MAD 0: only the non-finite values go
    assert nb_mask_outliers([0.2, 0.2, 0.2, 9.0]) == [0.2, 0.2, 0.2, 9.0]
    assert nb_mask_outliers([0.2, 0.2, float("inf")]) == [0.2, 0.2, None]
    assert nb_mask_outliers([]) == [] and nb_mask_outliers([None, None]) == [None, None]
    # the threshold is |z| > 3.5 exactly: median 1, MAD 1 -> x = 1 + 3.5/0.6745 is kept, a bit more is not
    edge = 1 + 3.5 / 0.6745
    kept = nb_mask_outliers([0.0, 1.0, 2.0, 1.0, 0.0, 2.0, edge - 1e-9])
    assert kept[-1] is not None
    assert nb_mask_outliers([0.0, 1.0, 2.0, 1.0, 0.0, 2.0, edge + 1e-6])[-1] is None


def _frame(rows):
    cols = ["model", "configuration", "task", "difficulty", "law_version", "rollout", "rmsle", "credited", "status", "noise",
            "completion_tokens"]
    return pl.DataFrame([dict(zip(cols, r, strict=True)) for r in rows], infer_schema_length=None)


def test_table_follows_newtonbench_per_trial_means():
    rows = []
    # two modules x 3 rollouts; m1 rollout 2 is an outlier; one failed trial is left out
    for task, rms, acc in (("m0", [0.10, 0.12, 0.11], [1, 1, 0]), ("m1", [0.20, 0.21, 50.0], [0, 1, 1])):
        for r in range(3):
            rows.append(("gpt", "baseline_n", task, "easy", "v0", r, rms[r], bool(acc[r]), "completed", 0.0, 100 + r))
    rows.append(("gpt", "baseline_n", "m1", "easy", "v0", 3, None, False, "failed", 0.0, 0))
    out = table_newtonbench(_frame(rows))
    easy = out.filter(pl.col("difficulty") == "easy").row(0, named=True)
    assert easy["system"] == "vanilla_equation" and easy["masked"] == 1 and easy["trials"] == 3
    # per-trial (rollout) means: acc (1+0)/2, (1+1)/2, (0+1)/2; rmsle (0.10+0.20)/2, (0.12+0.21)/2, 0.11 (outlier masked)
    accs, rmsles = [0.5, 1.0, 0.5], [0.15, 0.165, 0.11]
    assert easy["acc_mean_pct"] == pytest.approx(100 * np.mean(accs))
    assert easy["acc_std_pct"] == pytest.approx(100 * np.std(accs, ddof=1))
    assert easy["rmsle_mean"] == pytest.approx(np.mean(rmsles)) and easy["rmsle_std"] == pytest.approx(np.std(rmsles, ddof=1))
    assert easy["acc"] == f"{100 * np.mean(accs):.1f} (±{100 * np.std(accs, ddof=1):.3f})"
    allrow = out.filter(pl.col("difficulty") == "all").row(0, named=True)
    assert allrow["system"] == "all" and allrow["rmsle_mean"] == pytest.approx(easy["rmsle_mean"])
    assert allrow["tokens_mean"] == pytest.approx(101.0)


def test_system_column_and_single_trial():
    rows = [("gpt", "baseline_c", "m0", "hard", "v0", 0, float("inf"), True, "completed", 0.0, 5),
            ("gpt", "baseline_c", "m0", "hard", "v0", 1, 0.3, False, "completed", 0.0, 5)]
    df = _frame(rows).with_columns(pl.Series("system", ["simple_system", "vanilla_equation"]))
    out = table_newtonbench(df)
    systems = out.get_column("system").to_list()
    assert systems == ["vanilla_equation", "simple_system", "all"]
    simple = out.filter(pl.col("system") == "simple_system").row(0, named=True)
    # inf -> missing, so that trial's RMSLE mean is missing and NewtonBench drops the trial altogether
    assert simple["trials"] == 0 and simple["acc"] == "N/A"
    van = out.filter(pl.col("system") == "vanilla_equation").row(0, named=True)
    assert van["trials"] == 1 and van["acc_std_pct"] == 0.0 and math.isclose(van["rmsle_mean"], 0.3)


def test_empty_and_noise_split():
    assert table_newtonbench(pl.DataFrame()).height == 0
    rows = [("gpt", "baseline_n", "m0", "easy", "v0", 0, 0.1, True, "completed", n, 1) for n in (0.0, 0.01)]
    out = table_newtonbench(_frame(rows))
    assert "noise" in out.columns and sorted(set(out.get_column("noise").to_list())) == [0.0, 0.01]


def test_report_header_names_the_prompt_source(tmp_path):
    import json

    from etc_fast.report._write import prompts_line

    df = pl.DataFrame({"model": ["gpt41mini"]})
    assert "etc_fast's wording" in prompts_line(tmp_path, df)[0]
    assert prompts_line(tmp_path, pl.DataFrame({"model": ["symbolic"]})) == []
    (tmp_path / "versions.json").write_text(json.dumps({"prompts": {
        "prompts": "newtonbench", "newtonbench_path": "/nb", "newtonbench_commit": "912a4ba", "newtonbench_version": "912a4ba+sha256:ab"}}))
    line = prompts_line(tmp_path, df)[0]
    assert "NewtonBench's own texts" in line and "/nb" in line and "912a4ba" in line
