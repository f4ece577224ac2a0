import json

import polars as pl
import pytest

from etc_fast.report import write_report
from etc_fast.report.__main__ import main
from etc_fast.runner import check_manifest, trials_frame
from tests.report.test_tables import fixture_rows

TABLES = ("table1_families", "table2_configurations", "table_s2_sa_effects", "table_s2_module_effects",
          "table_s3_coverage", "table_heatmap", "table_savings", "table_modules", "table_modules_wide")
FIGURES = ("measurement_savings.png", "coverage_curves.png", "credit_heatmap.png")


def test_report_files_and_shapes(tmp_path, capsys):
    trials_frame(fixture_rows()).write_parquet(tmp_path / "trials.parquet")
    assert main([str(tmp_path), "--draws", "200"]) == 0
    out = tmp_path / "report"
    assert capsys.readouterr().out.strip() == str(out / "report.md")
    md = (out / "report.md").read_text()
    for stem in TABLES:
        csv = pl.read_csv(out / f"{stem}.csv")
        pq = pl.read_parquet(out / f"{stem}.parquet")
        assert csv.shape == pq.shape and csv.columns == pq.columns
        assert f"[{stem}.csv]({stem}.csv)" in md
    for fig in FIGURES:
        assert (out / fig).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert f"]({fig})" in md
    assert pl.read_parquet(out / "table1_families.parquet").shape == (4, 3 + 9)
    assert pl.read_parquet(out / "table2_configurations.parquet").shape == (8, 4 + 9)
    assert pl.read_parquet(out / "table_s2_sa_effects.parquet").shape == (2, 3 + 10)
    assert pl.read_parquet(out / "table_s2_module_effects.parquet").shape == (24, 3 + 4)
    assert pl.read_parquet(out / "table_s3_coverage.parquet").shape == (4, 3 + 8)
    assert pl.read_parquet(out / "table_heatmap.parquet").shape == (12, 3 + 8)
    assert pl.read_parquet(out / "table_modules.parquet").shape == (96, 4 + 5)
    assert pl.read_parquet(out / "table_modules_wide.parquet").shape == (12, 3 + 8)
    assert "over 200 module resamples" in md
    assert "Planner N averages the three acquisition variants" in md
    assert "2 finite-but-incomplete submission(s), 0 with sign disagreements" in md
    assert check_manifest(tmp_path) == []


def test_captions_state_the_variants_present(tmp_path):
    """A run with only random_n among the N planners must not claim three variants (the smoke design)."""
    keep = ("baseline_n", "random_n", "baseline_c", "variance_c", "pairwise_c", "random_c")
    rows = [r for r in fixture_rows() if r["configuration"] in keep]
    trials_frame(rows).write_parquet(tmp_path / "trials.parquet")
    md = write_report(tmp_path, n_draws=20).read_text()
    assert "Planner N averages only `Rand`" in md
    assert "Planner C averages the three acquisition variants" in md
    assert "| Planner N | Rand |" in md
    table1 = md.split("## Table 1")[1].split("## ")[0]
    assert "Planner N averages the three" not in table1


def test_figures_use_paper_labels_and_keep_equal_curves_apart():
    from etc_fast.report import condition_keys, coverage_curves, table_heatmap
    from etc_fast.report._figures import coverage_figure, heatmap_figure

    rows = fixture_rows()
    # make every group's coverage curve identical: all trials complete with RMSLE 0.05
    same = [{**r, "rmsle": 0.05, "complete": True} for r in rows]
    frame = trials_frame(same)
    keys = condition_keys(frame)
    import numpy as np

    fig = coverage_figure(coverage_curves(frame, np.logspace(-4, 1, 41)), keys)
    lines = fig.axes[0].get_lines()
    assert len(lines) == 4
    ys = [tuple(line.get_ydata()) for line in lines]
    assert len(set(ys)) == 1  # the curves coincide ...
    styles = {(str(ln.get_linestyle()), str(ln.get_dashes() if hasattr(ln, "get_dashes") else ""), ln.get_marker())
              for ln in lines}
    assert len({ln.get_marker() for ln in lines}) == 4 and len(styles) == 4  # ... yet each has its own marker and style
    heat = heatmap_figure(table_heatmap(frame), keys)
    labels = [t.get_text() for t in heat.axes[0].get_xticklabels()]
    assert labels == ["Baseline N", "Baseline C", "Var N", "Pair N", "Rand N", "Var C", "Pair C", "Rand C"]


def test_report_from_jsonl_only_and_planners_only(tmp_path):
    rows = [r for r in fixture_rows() if r["family"] == "planner"]
    with open(tmp_path / "trials.jsonl", "w") as fh:
        for r in rows:
            fh.write(json.dumps({"trial_id": r["trial_id"], "summary": r}) + "\n")
        fh.write('{"trial_id": "torn", "summ')  # an interrupted last line is dropped, with a warning
    with pytest.warns(RuntimeWarning, match="torn last line"):
        path = write_report(tmp_path, n_draws=50)
    md = path.read_text()
    assert "| Planner N |" in md and "| Baseline N |" not in md
    assert pl.read_parquet(tmp_path / "report" / "table1_families.parquet").height == 2


def test_report_missing_run_dir(tmp_path, capsys):
    assert main([str(tmp_path / "nothing")]) == 2
    assert "no trials.parquet or trials.jsonl" in capsys.readouterr().err


def test_report_reads_jsonl_like_the_store(tmp_path):
    """Duplicated trial ids keep their first line; damage before the last line is an error."""
    import pytest

    from etc_fast.report import load_trials
    from etc_fast.runner import RunDirError

    rows = [r for r in fixture_rows() if r["family"] == "planner"][:3]
    lines = [json.dumps({"trial_id": r["trial_id"], "summary": r}) for r in rows]
    dup = dict(rows[0], measurements=999)
    (tmp_path / "trials.jsonl").write_text("\n".join(lines + [json.dumps({"trial_id": dup["trial_id"], "summary": dup})]) + "\n")
    with pytest.warns(RuntimeWarning):
        frame = load_trials(tmp_path)
    assert frame.height == 3 and 999 not in frame["measurements"].to_list()
    (tmp_path / "trials.jsonl").write_text(lines[0] + "\n{broken\n" + lines[1] + "\n")
    with pytest.raises(RunDirError):
        load_trials(tmp_path)


@pytest.mark.parametrize("damage", ["middle_line", "parquet"])
def test_report_on_damaged_results_exits_2_with_one_line(tmp_path, capsys, damage):
    rows = [r for r in fixture_rows() if r["family"] == "planner"][:3]
    lines = [json.dumps({"trial_id": r["trial_id"], "summary": r}) for r in rows]
    if damage == "middle_line":
        (tmp_path / "trials.jsonl").write_text(lines[0] + "\n{broken\n" + lines[1] + "\n")
    else:
        (tmp_path / "trials.parquet").write_bytes(b"PAR1 not really a parquet file")
    assert main([str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "Traceback" not in err
    assert "trials" in err
    assert not (tmp_path / "manifest.sha256").exists()


def test_figures_of_a_study_of_many_conditions_stay_bounded_and_say_so():
    from etc_fast.report._figures import COVERAGE_MAX_PANELS, HEATMAP_MAX_ROWS, coverage_figure, heatmap_figure

    keys = ["noise", "measurement_budget"]
    conds = [(n, b) for n in (0.0, 0.001, 0.01) for b in (4, 8, 12, 16, 24)] * 3  # 45 (15 distinct x 3 systems)
    conds = [(n, b, s) for (n, b), s in zip(conds, [s for s in ("a", "b", "c") for _ in range(15)])]
    keys3 = [*keys, "system"]
    tasks = [f"law{i:03d}" for i in range(100)]
    heat = pl.DataFrame([{**dict(zip(keys3, c)), "task": t, "variance_c": 50.0, "random_c": 25.0}
                         for c in conds for t in tasks])
    fig = heatmap_figure(heat, keys3)
    panels = [ax for ax in fig.axes if ax.get_title().startswith("SA (%)")]
    assert len(panels) == HEATMAP_MAX_ROWS // 100 and fig.get_figheight() * fig.dpi < 30_000
    assert fig._suptitle.get_text() == (f"The first {len(panels)} of 45 conditions; every condition: table_heatmap "
                                        "and the viewer's heatmaps")
    few = heatmap_figure(heat.filter(pl.col("system") == "a").head(300), keys3)
    assert few._suptitle is None  # three conditions of 100 rows: all drawn, no note
    curves = pl.DataFrame([{**dict(zip(keys3, c)), "group": "Planner C", "tau": tau, "q": 50.0}
                           for c in conds for tau in (0.01, 0.1, 1.0)])
    cov = coverage_figure(curves, keys3)
    assert len(cov.axes) == COVERAGE_MAX_PANELS and "of 45 conditions" in cov._suptitle.get_text()
