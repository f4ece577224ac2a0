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
    assert pl.read_parquet(out / "table1_families.parquet").shape == (4, 3 + 7)
    assert pl.read_parquet(out / "table2_configurations.parquet").shape == (8, 4 + 7)
    assert pl.read_parquet(out / "table_s2_sa_effects.parquet").shape == (2, 3 + 10)
    assert pl.read_parquet(out / "table_s2_module_effects.parquet").shape == (24, 3 + 4)
    assert pl.read_parquet(out / "table_s3_coverage.parquet").shape == (4, 3 + 5)
    assert pl.read_parquet(out / "table_heatmap.parquet").shape == (12, 3 + 8)
    assert pl.read_parquet(out / "table_modules.parquet").shape == (96, 4 + 5)
    assert pl.read_parquet(out / "table_modules_wide.parquet").shape == (12, 3 + 8)
    assert "over 200 module resamples" in md
    assert check_manifest(tmp_path) == []


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
