"""python -m etc_fast.results: a stored run's numbers reach its page as the report printed them; the
committed pages are what results/*.json regenerate; bad input is refused with exit 2."""

import json
import os
import re
import shutil
from pathlib import Path

import pytest

from etc_fast.report import format_cell
from etc_fast.results import (
    dump_summary,
    load_summaries,
    readme_full_table,
    readme_noise_table,
    readme_systems_table,
    render_pages,
    stale_pages,
    summarise_run,
)
from etc_fast.results.__main__ import main
from etc_fast.runner import parse_config, run_config
from tests.results.conftest import TINY

REPO = Path(__file__).resolve().parents[2]
STATED = ["--commit", "abcdef1", "--machine", "a test machine", "--date", "2026-01-02"]


def _report_rows(report_md: Path, title: str) -> list[dict[str, str]]:
    """The rows of one table of report.md, as printed (header -> cell text)."""
    return _first_table(report_md.read_text().split(f"## {title}", 1)[1])


def _first_table(text: str) -> list[dict[str, str]]:
    """The rows of the first Markdown table in ``text`` (header -> cell text)."""
    lines = text.splitlines()
    start = next(i for i, ln in enumerate(lines) if ln.startswith("|"))
    block = []
    for ln in lines[start:]:
        if not ln.startswith("|"):
            break
        block.append(ln)
    head = [c.strip() for c in block[0].strip().strip("|").split(" | ")]
    return [dict(zip(head, (c.strip() for c in ln.strip().strip("|").split(" | ")))) for ln in block[2:]]


def _page_cells(page: str, heading: str) -> dict[tuple[str, str], str]:
    """``{(row label, column): cell}`` of the first table under ``heading`` on a page."""
    out = {}
    for row in _first_table(page.split(f"## {heading}", 1)[1]):
        label, *rest = row.items()
        for col, cell in rest:
            out[(label[1], col)] = cell
    return out


def _check_page_against_report(run: Path, root: Path, name: str) -> None:
    """Every Table 2 row of the run's report.md reaches the study page with the same printed numbers."""
    page = (root / "docs" / "results" / f"{name}.md").read_text()
    cells = _page_cells(page, "By configuration")
    summary = json.loads((root / "results" / f"{name}.json").read_text())
    stored = summary["tables"]["configurations"]
    report = _report_rows(run / "report" / "report.md", "Table 2 / S4")
    assert len(report) == len(stored["rows"]) > 0
    for want, row in zip(report, stored["rows"]):
        got = dict(zip(stored["columns"], row))
        for col in ("configuration", "n", "credited", "sa_pct", "rmsle_mean_finite", "complete", "measurements_mean"):
            shown = got[col] if isinstance(got[col], str) else format_cell("table2_configurations", col, got[col])
            assert shown == want[col], (col, got, want)
        assert cells[(want["difficulty"], want["configuration"])] == (
            f"{want['credited']}/{want['n']} · {want['measurements_mean']}")


def test_store_and_pages_of_a_run_match_its_report(fake_run, tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()
    assert main(["--root", str(root), "store", str(fake_run), "--main", "random_c"]) == 0
    assert "stored" in capsys.readouterr().out
    assert main(["--root", str(root), "pages"]) == 0
    _check_page_against_report(fake_run, root, "tiny")
    summary = json.loads((root / "results" / "tiny.json").read_text())
    assert summary["trials"] == {"done": 8, "failed": 0}
    # the pooled counts (from the trials) agree with Table 2's, configuration by configuration
    pooled, table2 = summary["tables"]["pooled"], summary["tables"]["configurations"]
    for conf in ("baseline_n", "random_c"):
        for col in ("n", "credited"):
            assert sum(r[pooled["columns"].index(col)] for r in pooled["rows"] if conf in r) == sum(
                r[table2["columns"].index(col)] for r in table2["rows"] if conf in r)
    assert summary["provenance"]["source"] == "provenance.json" and summary["provenance"]["ended_utc"]
    index = (root / "docs" / "results" / "index.md").read_text()
    assert "| [tiny](tiny.md) | 8 |" in index
    # per task: credited/n pooled over every condition, as the report's per-module table counts them
    page = (root / "docs" / "results" / "tiny.md").read_text()
    cells = _page_cells(page, "By task")
    modules = _report_rows(fake_run / "report" / "report.md", "Per module and configuration")
    each = re.search(r"Trials credited of the (\d+) each task", page)
    assert each and each.group(1) == "2"  # every task and configuration ran 2 trials: cells give credited alone
    for want in modules:
        if "task" in want:
            assert want["n"] == "2" and cells[(want["task"], want["configuration"])] == want["credited"]
    # storing is deterministic and pages --check agrees with what was written
    first = (root / "results" / "tiny.json").read_bytes()
    assert main(["--root", str(root), "store", str(fake_run), "--main", "random_c"]) == 0
    assert (root / "results" / "tiny.json").read_bytes() == first
    assert main(["--root", str(root), "pages", "--check"]) == 0


def test_pages_check_names_stale_and_orphan_pages(fake_run, tmp_path, capsys):
    root = tmp_path
    assert main(["--root", str(root), "store", str(fake_run), "--as", "a", "--main", "random_c"]) == 0
    assert main(["--root", str(root), "pages"]) == 0
    page = root / "docs" / "results" / "a.md"
    page.write_text(page.read_text().replace("8 trials", "9 trials"))
    capsys.readouterr()
    assert main(["--root", str(root), "pages", "--check"]) == 1
    err = capsys.readouterr().err
    assert "a.md" in err and "python -m etc_fast.results pages" in err
    (root / "results" / "a.json").rename(root / "results" / "b.json")
    text = (root / "results" / "b.json").read_text().replace('"name": "a"', '"name": "b"')
    (root / "results" / "b.json").write_text(text)
    assert main(["--root", str(root), "pages", "--check"]) == 1
    assert "a.md (its study is no longer stored)" in capsys.readouterr().err
    (root / "docs" / "results" / "mine.md").write_text("# a page written by hand stays\n")
    assert main(["--root", str(root), "pages"]) == 0
    assert not page.exists() and (root / "docs" / "results" / "b.md").exists()
    assert (root / "docs" / "results" / "mine.md").exists()
    assert main(["--root", str(root), "pages", "--check"]) == 0


def test_bad_input_is_refused_with_exit_2(fake_run, tmp_path, capsys):
    root = tmp_path / "repo"
    root.mkdir()

    def refused(args, *words):
        assert main(["--root", str(root), *args]) == 2
        err = capsys.readouterr().err
        for w in words:
            assert w in err, (w, err)
        assert not (root / "results").exists() or not any((root / "results").iterdir())

    refused(["store", str(tmp_path / "nowhere")], "nowhere: no such run directory")
    refused(["store", str(tmp_path)], "no config.resolved.yaml")
    refused(["store", str(fake_run), "--main", "no_such_conf"], "--main no_such_conf", "random_c")
    refused(["store", str(fake_run), *STATED], "records its own provenance.json")
    refused(["store", str(fake_run), "--as", "../x", "--main", "random_c"], "--as '../x'")
    # a run without a report, and one written before runs recorded provenance.json
    bare = tmp_path / "bare"
    cfg = parse_config({**TINY, "out": str(bare)}, source="tiny.yaml")
    from tests.runner._fakes import FakeWorker

    run_config(cfg, worker=FakeWorker(), tty=False, report=False)
    refused(["store", str(bare), "--main", "random_c"], "no report/", "python -m etc_fast.report")
    old = tmp_path / "old"
    shutil.copytree(fake_run, old)
    (old / "provenance.json").unlink()
    from etc_fast.store import write_manifest

    write_manifest(old)
    refused(["store", str(old), "--main", "random_c"], "no provenance.json", "--commit SHA --machine TEXT --date")
    refused(["store", str(old), "--main", "random_c", "--commit", "abcdef1"], "--machine, --date missing")
    refused(["store", str(old), "--main", "random_c", "--commit", "xyz", "--machine", "m", "--date", "2026-01-02"],
            "--commit 'xyz'")
    refused(["store", str(old), "--main", "random_c", *STATED[:4], "--date", "2026-13-40"], "--date '2026-13-40'")
    # an edited run is not stored
    edited = tmp_path / "edited"
    shutil.copytree(fake_run, edited)
    with open(edited / "trials.jsonl", "a") as fh:
        fh.write("\n")
    refused(["store", str(edited), "--main", "random_c"], "do not match its manifest", "trials.jsonl")
    # a report older than the results is not stored
    stale = tmp_path / "stale"
    shutil.copytree(fake_run, stale)
    import polars as pl

    table2 = pl.read_parquet(stale / "report" / "table2_configurations.parquet")
    table2.head(1).write_parquet(stale / "report" / "table2_configurations.parquet")
    write_manifest(stale)
    refused(["store", str(stale), "--main", "random_c"], "Table 2 counts 4 trials, the run holds 8",
            "python -m etc_fast.report")
    # stated provenance is recorded as stated
    assert main(["--root", str(root), "store", str(old), "--main", "random_c", *STATED]) == 0
    prov = json.loads((root / "results" / "tiny.json").read_text())["provenance"]
    assert prov == {"source": "stated", "commit": "abcdef1", "dirty": None, "date": "2026-01-02",
                    "machine": "a test machine"}
    capsys.readouterr()
    assert main(["--root", str(root), "pages", "nosuch"]) == 2
    assert "unknown study nosuch" in capsys.readouterr().err
    assert main(["--root", str(root), "readme"]) == 2
    assert "unknown study full, noise" in capsys.readouterr().err
    (root / "results" / "broken.json").write_text("{")
    assert main(["--root", str(root), "pages"]) == 2
    assert "broken.json: unreadable" in capsys.readouterr().err
    summary = json.loads((root / "results" / "tiny.json").read_text())
    summary["name"] = "broken"
    summary["tables"]["modules"]["rows"][0].pop()
    del summary["trials"]
    (root / "results" / "broken.json").write_text(json.dumps(summary))
    assert main(["--root", str(root), "pages"]) == 2
    assert "broken.json: lacks trials, tables.modules" in capsys.readouterr().err


def test_dump_is_sorted_and_round_trips(fake_run, tmp_path):
    summary = summarise_run(fake_run, main="random_c", repo=tmp_path)
    text = dump_summary(summary)
    assert json.loads(text) == summary
    assert text == dump_summary(json.loads(text))
    keys = re.findall(r'^ "(\w+)"', text, re.M)
    assert keys == sorted(keys)


def test_committed_pages_are_what_the_stored_summaries_regenerate():
    summaries = load_summaries(REPO / "results")
    assert summaries, "no results/*.json committed"
    pages = render_pages(summaries)
    assert stale_pages(REPO / "docs" / "results", pages) == ([], [])
    for s in summaries.values():
        assert len(dump_summary(s).encode()) < 60_000
    total = sum(p.stat().st_size for p in (REPO / "docs" / "results").glob("*.md"))
    assert total <= 25 * 1024


def test_readme_holds_the_generated_tables():
    """README.md quotes the tables `python -m etc_fast.results readme` prints, verbatim (the noise
    table once results/noise.json is stored)."""
    summaries = load_summaries(REPO / "results")
    readme = (REPO / "README.md").read_text()
    assert readme_full_table(summaries["full"]) in readme, "README.md's full.yaml table is not the generated one"
    if "noise" in summaries:
        assert readme_noise_table(summaries["noise"]) in readme, "README.md's noise table is not the generated one"
    assert readme_systems_table(summaries["systems"]) in readme, "README.md's systems table is not the generated one"


@pytest.mark.slow
def test_a_real_run_reaches_its_page(tmp_path):
    """A real (offline symbolic) run, stored and paged: its page prints what its report printed."""
    doc = {"name": "real", "workers": 1, "judge": "structural", "out": str(tmp_path / "run"),
           "grids": [{"model": "symbolic", "configurations": ["baseline_c", "variance_c"], "tasks": ["m9_hooke_law"],
                      "difficulties": ["easy"], "rollouts": 1}]}
    res = run_config(parse_config(doc, source="real.yaml"), tty=False)
    assert res.complete and res.report is not None
    root = tmp_path / "repo"
    root.mkdir()
    assert main(["--root", str(root), "store", str(tmp_path / "run")]) == 0
    assert main(["--root", str(root), "pages"]) == 0
    _check_page_against_report(tmp_path / "run", root, "real")
    summary = json.loads((root / "results" / "real.json").read_text())
    assert summary["judge"]["label"].startswith("structural v")
    assert f"{os.cpu_count()} logical cores" in summary["provenance"]["machine"]


def test_a_budget_study_pages_its_budget_curve_as_the_report_printed_it(tmp_path):
    from tests.runner._fakes import FakeWorker

    doc = {**TINY, "out": str(tmp_path / "run"), "executor": "threads",
           "grids": [{**TINY["grids"][0], "configurations": ["variance_c", "random_c"], "budgets": [4, 8],
                      "noise": [0.0, 0.01]}]}
    run_config(parse_config(doc, source="budgets.yaml"), worker=FakeWorker(), tty=False)
    root = tmp_path / "repo"
    root.mkdir()
    assert main(["--root", str(root), "store", str(tmp_path / "run")]) == 0
    assert main(["--root", str(root), "pages"]) == 0
    page = (root / "docs" / "results" / "tiny.md").read_text()
    assert "## By configuration" not in page  # the budget curve holds the same conditions, difficulties pooled
    cells = {}
    for row in _first_table(page.split("## SA against the measurement budget", 1)[1]):
        for conf in ("variance_c", "random_c"):
            cells[(row["noise"], row["budget"], conf)] = row[conf]
    report = _report_rows(tmp_path / "run" / "report" / "report.md", "SA per configuration, system, noise and measurement")
    assert len(report) == len(cells) == 8
    for want in report:
        ci = f" [{want['sa_ci_low']}, {want['sa_ci_high']}]" if want["sa_ci_low"] != "–" else ""
        assert cells[(want["noise"], want["measurement_budget"], want["configuration"])] == (
            f"{want['sa']}{ci} · {want['mean_measurements']}")


def test_readme_noise_table_pools_the_paper_rule_and_cx_planners():
    cols = ["system", "noise", "configuration", "n", "credited", "measurements_sum", "measured"]
    rows = []
    # noise -> (credited of 48, measurements summed over 48) per group member
    groups = {0.001: ((41, 1435), (31, 595), (42, 605)), 0.01: ((40, 1709), (30, 576), (40, 643))}
    for level, (base, paper, cx) in groups.items():
        rows.append(["vanilla_equation", level, "baseline_c", 48, base[0], base[1], 48])
        for conf in ("variance_c", "pairwise_c", "random_c"):
            rows.append(["vanilla_equation", level, conf, 48, paper[0], paper[1], 48])
        for conf in ("variance_cx", "pairwise_cx", "random_cx"):
            rows.append(["vanilla_equation", level, conf, 48, cx[0], cx[1], 48])
        rows.append(["vanilla_equation", level, "variance_cs", 48, 0, 9999, 48])  # in neither group
    noise = {"tables": {"pooled": {"columns": cols, "rows": rows}}}
    # 1435/48 = 29.90, 3*595/144 = 12.40, 3*605/144 = 12.60; 1709/48 = 35.60, 576/48 = 12.0, 643/48 = 13.40
    assert readme_noise_table(noise) == "\n".join([
        "| noise | Baseline C | Planner C, paper's rule | Planner C, `*_cx` |",
        "|---:|---:|---:|---:|",
        "| 0.1% | 41/48 (85.4%), 29.9 meas. | 93/144 (64.6%), 12.4 | 126/144 (87.5%), 12.6 |",
        "| 1% | 40/48 (83.3%), 35.6 | 90/144 (62.5%), 12.0 | 120/144 (83.3%), 13.4 |",
    ])


def _paged_with(fake_run, tmp_path, prov) -> Path:
    """Store ``fake_run`` with ``prov`` as its provenance.json and write its pages: the docs/results/ folder."""
    from etc_fast.store import write_manifest

    (fake_run / "provenance.json").write_text(json.dumps(prov))
    write_manifest(fake_run)
    root = tmp_path / "repo"
    root.mkdir()
    assert main(["--root", str(root), "store", str(fake_run), "--main", "random_c"]) == 0
    assert main(["--root", str(root), "pages"]) == 0
    return root / "docs" / "results"


def test_a_run_resumed_on_other_code_names_both_commits(fake_run, tmp_path):
    prov = json.loads((fake_run / "provenance.json").read_text())
    prov["code"] = {"commit": "1" * 40, "dirty": True}
    prov["later"] = [{"code": {"commit": "2" * 40, "dirty": False}, "machine": prov["machine"], "started_utc": "x"},
                     {"code": {"commit": None, "dirty": None}, "machine": prov["machine"], "started_utc": "y"}]
    pages = _paged_with(fake_run, tmp_path, prov)
    page = (pages / "tiny.md").read_text()
    assert f"- Code: `{'1' * 10}` with modified files, resumed on `{'2' * 10}`;" in page
    assert "| `1111111111` (modified) |" in (pages / "index.md").read_text()


def test_a_run_resumed_on_another_cpu_names_both_machines(fake_run, tmp_path):
    """A study resumed on a CPU of another generation (the same model name, other SIMD levels: its
    records may differ in their last digits) names both machines on its page."""
    from etc_fast.runner import machine_text

    prov = json.loads((fake_run / "provenance.json").read_text())
    prov["machine"] = {**prov["machine"], "cpu_arch": "znver3", "simd": "X86_V3"}
    other = {**prov["machine"], "cpu_arch": "znver4", "simd": "X86_V3 X86_V4 AVX512_ICL"}
    prov["later"] = [{"code": prov["code"], "machine": other, "started_utc": "x"},
                     {"code": prov["code"], "machine": prov["machine"], "started_utc": "y"}]
    page = (_paged_with(fake_run, tmp_path, prov) / "tiny.md").read_text()
    assert f"- Machine: {machine_text(prov['machine'])}; resumed on {machine_text(other)}." in page
    assert "(znver4, SIMD X86_V3 X86_V4 AVX512_ICL)" in machine_text(other)


def test_readme_prose_quotes_the_stored_numbers():
    """The README's sentences under its tables quote the stored studies too (whitespace aside)."""
    from etc_fast.results._pages import _family_groups, _pct, _pooled, _rows

    summaries = load_summaries(REPO / "results")
    text = " ".join((REPO / "README.md").read_text().split())
    groups = dict(_family_groups())
    rows = _rows(summaries["full"]["tables"]["pooled"])
    c, n, m = _pooled(rows, groups["Planner C"].__contains__)
    _, _, mb = _pooled(rows, groups["Baseline C"].__contains__)
    said = f"credited {c}/{n} ({_pct(c, n)}%) with {m:.2f} measurements per trial against the baseline's {mb:.1f}"
    assert said in text, f"README.md should say: {said}"
    at = [r for r in _rows(summaries["noise"]["tables"]["pooled"]) if abs(float(r["noise"]) - 0.01) < 1e-12]
    cx, ncx, mcx = _pooled(at, lambda conf: conf.endswith("_cx"))
    cb, nb, mbb = _pooled(at, groups["Baseline C"].__contains__)
    said = (f"At 1% the noise-aware planners are credited on {_pct(cx, ncx)}% (the baseline {_pct(cb, nb)}%) "
            f"with {mcx:.1f} measurements against {mbb:.1f}")
    assert said in text, f"README.md should say: {said}"
    gen = _rows(summaries["generated_seeds"]["tables"]["generated"])
    dev, check = (_pooled([r for r in gen if r["seed"] == seed], lambda conf: conf == "variance_c") for seed in (0, 13))
    said = (f"`variance_c` is credited on {dev[0]}/{dev[1]} ({_pct(dev[0], dev[1])}%) of the development seed and "
            f"{check[0]}/{check[1]} ({_pct(check[0], check[1])}%) of a seed never played during development")
    assert said in text, f"README.md should say: {said}"


def _budget_numbers(followups):
    """The equal-budget numbers the README quotes, from the stored budget curve (credited / n)."""
    t = followups["tables"]["budget_curve"]
    cell = {}
    for row in t["rows"]:
        d = dict(zip(t["columns"], row))
        if d["system"] == "vanilla_equation":
            cell[(d["configuration"], float(d["noise"]), d["measurement_budget"])] = d

    def sa(conf, noise, budget):
        d = cell[(conf, noise, budget)]
        return 100.0 * d["credited"] / d["n"]

    def span(values):
        return f"{min(values):.1f}–{max(values):.1f}"

    meas = [cell[("variance_cx", 0.01, b)]["mean_measurements"] for b in (12, 16)]
    return [f"variance is {span([sa('variance_c', 0.0, b) - sa('random_c', 0.0, b) for b in (6, 8, 12)])} points above random",
            f"the paper's rule is {span([sa('random_c', 0.01, b) - sa('variance_c', 0.01, b) for b in (8, 12, 16)])} points below random",
            f"`variance_cx` {span([sa('variance_cx', 0.01, b) - sa('random_c', 0.01, b) for b in (8, 12, 16)])} points above it",
            f"{meas[0]:.1f} and {meas[1]:.1f} measurements at 12 and 16",
            f"{sa('variance_c', 0.01, 8):.0f}% of trials credited with it, {sa('variance_c_nosynth', 0.01, 8):.0f}% without"]


def test_readme_equal_budget_paragraph_quotes_the_stored_study():
    summaries = load_summaries(REPO / "results")
    text = " ".join((REPO / "README.md").read_text().split())
    for phrase in _budget_numbers(summaries["followups"]):
        assert phrase in text, f"README.md should say: {phrase}"


def test_generated_guide_holds_the_stored_rates():
    """docs/guide/generated.md prints the rates by class and by inputs that results/generated_seeds.json
    gives (the tables of its results page), verbatim."""
    from etc_fast.results import generated_tables

    summaries = load_summaries(REPO / "results")
    guide = (REPO / "docs" / "guide" / "generated.md").read_text()
    assert generated_tables(summaries["generated_seeds"]).rstrip("\n") in guide


def test_a_generated_study_pages_its_rates_by_seed(tmp_path):
    """A run of generated laws stores their counts per seed, class and inputs, and its page prints a
    column per seed (the by-task table is left out)."""
    from etc_fast.results import generated_tables
    from etc_fast.tasks.generate import law_by_name

    doc = {"name": "gen", "workers": 1, "judge": "structural", "out": str(tmp_path / "run"),
           "grids": [{"model": "symbolic", "configurations": ["variance_c"],
                      "tasks": [{"generated": {"seed": 0, "n": 2}}, {"generated": {"seed": 5, "n": 1}}],
                      "rollouts": 1}]}
    res = run_config(parse_config(doc, source="gen.yaml"), tty=False)
    assert res.complete
    root = tmp_path / "repo"
    root.mkdir()
    assert main(["--root", str(root), "store", str(tmp_path / "run")]) == 0
    assert main(["--root", str(root), "pages"]) == 0
    summary = json.loads((root / "results" / "gen.json").read_text())
    page = (root / "docs" / "results" / "gen.md").read_text()
    text = generated_tables(summary)
    assert text.rstrip("\n") in page and "## By task" not in page
    head = text.splitlines()[0]
    assert head == "| class | seed 0 | seed 5 |"
    classes = {law_by_name(f"gen-s0-000{i}").task_class for i in range(2)} | {law_by_name("gen-s5-0000").task_class}
    rows = [line.split(" | ")[0].lstrip("| ") for line in text.split("\n\n")[0].splitlines()[2:]]
    assert rows == [*sorted(classes), "all"]
    assert sum(r[summary["tables"]["generated"]["columns"].index("n")] for r in summary["tables"]["generated"]["rows"]) == 3


def test_a_study_with_a_reference_pages_its_paired_table_as_the_report_printed_it(tmp_path, capsys):
    from etc_fast.report.__main__ import main as report_main
    from tests.runner._fakes import FakeWorker

    doc = {**TINY, "out": str(tmp_path / "run"), "executor": "threads",
           "grids": [{**TINY["grids"][0], "configurations": ["variance_c", "baseline_c", "random_c"], "budgets": [4, 8]}]}
    run_config(parse_config(doc, source="paired.yaml"), worker=FakeWorker(), tty=False)
    # the analysis is set after the trials (it is not part of the run's identity); resumed without a report
    doc["analysis"] = {"reference": "random_c", "cluster": "family"}
    run_config(parse_config(doc, source="paired.yaml"), worker=FakeWorker(), tty=False, report=False)
    root = tmp_path / "repo"
    root.mkdir()
    capsys.readouterr()
    assert main(["--root", str(root), "store", str(tmp_path / "run")]) == 2  # the report predates the analysis
    assert "its paired table is not against analysis.reference (random_c)" in capsys.readouterr().err
    assert report_main([str(tmp_path / "run"), "--draws", "500", "--no-viewer"]) == 0
    assert main(["--root", str(root), "store", str(tmp_path / "run")]) == 0
    stored = json.loads((root / "results" / "tiny.json").read_text())
    assert stored["analysis"] == {"reference": "random_c", "cluster": "family"}
    assert main(["--root", str(root), "pages"]) == 0
    page = (root / "docs" / "results" / "tiny.md").read_text()
    assert "interval over law families" in page
    rows = _first_table(page.split("## Each configuration against `random_c`", 1)[1])
    report = _report_rows(tmp_path / "run" / "report" / "report.md", "Paired comparisons at each system")
    assert len(report) == 4 and {r["config_b"] for r in report} == {"random_c"}
    verdicts = [line for line in page.split("## Where a configuration differs from `random_c`", 1)[1]
                .split("## Each configuration", 1)[0].splitlines() if line.startswith("- **")]
    assert len(verdicts) == len({(r["system"], r["noise"]) for r in report})
    cells = {(r["budget"], conf): r[conf] for r in rows for conf in ("variance_c", "baseline_c")}
    for want in report:
        text = f"{want['diff']} [{want['ci_low']}, {want['ci_high']}]"
        got = cells[(want["measurement_budget"], want["config_a"])]
        assert got.strip("*") == text and got.startswith("**") == (want["decision_holm"] in ("A better", "B better"))


def test_a_run_stored_in_parts_says_it_is_partial(tmp_path):
    from tests.runner._fakes import FakeWorker

    cfg = parse_config({**TINY, "out": str(tmp_path / "run"), "executor": "threads"}, source="tiny.yaml")
    run_config(cfg, worker=FakeWorker(), tty=False, limit=3)
    root = tmp_path / "repo"
    root.mkdir()
    assert main(["--root", str(root), "store", str(tmp_path / "run"), "--main", "random_c"]) == 0
    stored = json.loads((root / "results" / "tiny.json").read_text())
    assert stored["trials"] == {"done": 3, "failed": 0, "planned": 8}
    assert main(["--root", str(root), "pages"]) == 0
    assert "a run in progress: 3 of its 8 planned trials" in (root / "docs" / "results" / "tiny.md").read_text()
    assert "| 3 of 8 (in progress) |" in (root / "docs" / "results" / "index.md").read_text()
    run_config(cfg, worker=FakeWorker(), tty=False)  # the rest: a finished run's summary has no "planned"
    assert main(["--root", str(root), "store", str(tmp_path / "run"), "--main", "random_c"]) == 0
    assert json.loads((root / "results" / "tiny.json").read_text())["trials"] == {"done": 8, "failed": 0}


def test_a_run_made_in_parts_pages_each_part(tmp_path):
    from etc_fast.runner._provenance import read_provenance
    from tests.runner._fakes import FakeWorker

    cfg = parse_config({**TINY, "out": str(tmp_path / "run"), "executor": "threads", "workers": 1}, source="tiny.yaml")
    run_config(cfg, worker=FakeWorker(), tty=False, limit=3)
    run_config(cfg, worker=FakeWorker(), tty=False, limit=0)  # ran nothing: not a part
    run_config(cfg, worker=FakeWorker(), tty=False)
    parts = read_provenance(tmp_path / "run")["invocations"]
    assert [(p["trials_run"], p["executor"], p["workers"]) for p in parts] == [(3, "threads", 1), (5, "threads", 1)]
    assert all(p["started_utc"] <= p["ended_utc"] for p in parts)
    root = tmp_path / "repo"
    root.mkdir()
    assert main(["--root", str(root), "store", str(tmp_path / "run"), "--main", "random_c"]) == 0
    assert main(["--root", str(root), "pages"]) == 0
    page = (root / "docs" / "results" / "tiny.md").read_text()
    assert "- Time, by part: 3 trials in 0 min (threads, 1 workers, from " in page and "; 5 trials in 0 min" in page
    assert "earlier parts" not in page
    from etc_fast.results._pages import _untimed

    # parts run by code that did not record them are counted, not hidden
    assert _untimed({"trials": {"done": 10}, "provenance": {"parts": [{"trials_run": 4}]}}) == (
        "; and 6 trials in earlier parts whose time the run does not record")


def test_a_run_made_in_many_parts_pages_their_sum():
    from etc_fast.results._pages import PARTS_LISTED, _time_line

    def part(hour, minutes, trials, executor="ray"):
        return {"started_utc": f"2026-12-07T{hour:02d}:00:00Z", "ended_utc": f"2026-12-07T{hour:02d}:{minutes:02d}:00Z",
                "trials_run": trials, "executor": executor, "workers": None}

    parts = [part(h, 30, 100) for h in range(PARTS_LISTED)] + [part(9, 48, 50, "local")]
    line = _time_line({"trials": {"done": 1000}, "provenance": {"parts": parts}})
    assert line == ("- Time: 5 parts (local; ray) ran 450 trials in 2.8 h (the longest part 48 min); "
                    "and 550 trials in earlier parts whose time the run does not record.")
    parts[0]["ended_utc"] = None  # a part with no end counts its trials, not its time
    line = _time_line({"trials": {"done": 450}, "provenance": {"parts": parts}})
    assert line == "- Time: 5 parts (local; ray) ran 450 trials in 2.3 h over the 4 parts whose time is recorded " \
                   "(the longest part 48 min)."
    few = _time_line({"trials": {"done": 200}, "provenance": {"parts": parts[1:3]}})
    assert few.startswith("- Time, by part: 100 trials in 30 min (ray, from 2026-12-07T01:00:00Z); 100 trials")


def test_the_paired_table_is_read_as_a_line_per_system_and_noise():
    from etc_fast.results._pages import _verdicts

    cols = ["system", "noise", "measurement_budget", "config_a", "config_b", "diff", "ci_low", "ci_high", "decision_holm"]

    def row(noise, budget, conf, diff, lo, hi, decision):
        return ["vanilla_equation", noise, budget, conf, "random_c", diff, lo, hi, decision]

    rows = [row(0.0, 4, "mi_c", 0.02, -0.01, 0.05, "no difference"),
            row(0.0, 8, "mi_c", 0.061, 0.02, 0.103, "A better"),
            row(0.0, 12, "mi_c", 0.04, 0.01, 0.07, "A better"),
            row(0.0, 4, "baseline_c", -0.12, -0.2, -0.05, "B better"),
            row(0.0, 8, "baseline_c", -0.01, -0.05, 0.03, "no difference"),
            row(0.01, 4, "mi_c", 0.01, -0.02, 0.04, "no difference"),
            row(0.01, 4, "baseline_c", 0.0, -0.03, 0.03, "no difference")]
    s = {"analysis": {"reference": "random_c"}, "tables": {"paired": {"columns": cols, "rows": rows}}}
    lines = [line for line in _verdicts(s) if line.startswith("- ")]
    assert lines == [
        "- **vanilla_equation, noise 0**: better than `random_c`: `mi_c` at 8, 12 (+6.1 [+2.0, +10.3] at 8); "
        "worse than `random_c`: `baseline_c` at 4 (−12.0 [−20.0, −5.0] at 4).",
        "- **vanilla_equation, noise 0.01**: not separated at any budget: `mi_c`, `baseline_c`.",
    ]
    assert _verdicts({"analysis": {"reference": None}, "tables": {}}) == []


def test_the_budget_the_reference_needs_is_read_off_its_curve():
    from etc_fast.results._pages import _matching, matching_budget

    curve = [(4.0, 0.2), (8.0, 0.5), (12.0, 0.6), (16.0, 0.55)]
    assert matching_budget(curve, 0.1) == ("<=", 4.0)
    assert matching_budget(curve, 0.35) == ("=", 6.0)  # halfway from 0.2 to 0.5
    assert matching_budget(curve, 0.58) == ("=", 11.2)
    assert matching_budget(curve, 0.61) == (">", 16.0)  # the curve falls back after 12: never reached
    with pytest.raises(ValueError):
        matching_budget([], 0.5)

    cols = ["configuration", "system", "noise", "measurement_budget", "sa"]
    rows = [["random_c", "vanilla_equation", 0.01, b, sa] for b, sa in curve]
    rows += [["mi_c", "vanilla_equation", 0.01, 4, 0.35], ["mi_c", "vanilla_equation", 0.01, 8, 0.7],
             ["baseline_c", "vanilla_equation", 0.01, 8, 0.1]]
    s = {"analysis": {"reference": "random_c"}, "main": "mi_c",
         "tables": {"budget_curve": {"columns": cols, "rows": rows},
                    "configurations": {"columns": ["configuration"], "rows": [["mi_c"], ["baseline_c"], ["random_c"]]}}}
    table = [line for line in _matching(s) if line.startswith("| vanilla")]
    assert table[:2] == ["| vanilla_equation | 0.01 | 4 | 6.0 (×1.50) |  |",
                         "| vanilla_equation | 0.01 | 8 | > 16.0 (> ×2.00) | ≤ 4.0 (≤ ×0.50) |"]
    assert _matching({"analysis": {}, "tables": {"budget_curve": {"columns": cols, "rows": rows}}}) == []


def test_what_each_cell_could_detect_is_read_off_its_intervals():
    from etc_fast.results._pages import _detectable

    cols = ["system", "noise", "measurement_budget", "config_a", "config_b", "ci_low", "ci_high"]

    def row(noise, budget, conf, lo, hi):
        return ["vanilla_equation", noise, budget, conf, "random_c", lo, hi]

    # standard errors 0.01 and 0.005 in the first cell: the larger one, Holm over its two comparisons:
    # (z(1 - 0.05/4) + z(0.8)) * 0.01 = (2.2414 + 0.8416) * 0.01 = 3.1 points
    rows = [row(0.0, 4, "mi_c", -0.0196, 0.0196), row(0.0, 4, "baseline_c", 0.0, 0.0196),
            row(0.0, 8, "mi_c", 0.0, 0.0), row(0.0, 8, "baseline_c", 0.0, 0.0),  # no trial pair differs
            row(0.01, 4, "mi_c", 0.1, 0.1392)]  # one comparison: (1.96 + 0.8416) * 0.01
    s = {"analysis": {"reference": "random_c"}, "tables": {"paired": {"columns": cols, "rows": rows}}}
    table = [line for line in _detectable(s) if line.startswith("| vanilla")]
    assert table == ["| vanilla_equation | 0 | 3.1 | – |", "| vanilla_equation | 0.01 | 2.8 |  |"]
    assert _detectable({"analysis": {"reference": None}, "tables": {}}) == []
