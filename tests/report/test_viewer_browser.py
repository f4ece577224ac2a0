"""The run viewer in a real headless Chromium, opened from file://.

The browser is the system's (Debian's ``chromium-headless-shell`` or ``chromium``; ``.ci/run``
installs it with apt), driven by the ``playwright`` package: never a browser download. In CI
(``CI=true``) a missing browser fails these tests; elsewhere they are skipped with the reason.
``ETC_FAST_CHROMIUM`` names another executable.
"""

from __future__ import annotations

import csv
import io
import json
import math
import os
import shutil
from pathlib import Path

import polars as pl
import pytest

from etc_fast.report._viewer import VIEWER_FILE, build_compare, build_viewer, compare_table
from tests.report._viewer_run import HOSTILE_REASON, make_run

FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync"]
_CANDIDATES = ("chromium-headless-shell", "chromium", "chromium-browser")


def _browser_path() -> str | None:
    env = os.environ.get("ETC_FAST_CHROMIUM")
    if env:
        return env if Path(env).is_file() else None
    for name in _CANDIDATES:
        found = shutil.which(name) or (f"/usr/lib/chromium/{name}" if Path(f"/usr/lib/chromium/{name}").is_file() else None)
        if found:
            return found
    return None


def _unavailable(why: str):
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must run the browser tests: {why}")
    pytest.skip(why)


def launch_chromium(unavailable):
    """Yield the system's headless Chromium driven by Playwright, closed afterwards; ``unavailable(why)``
    is called (skip, or fail under CI=true) when playwright or the browser is missing."""
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        unavailable("the playwright package is not installed (pip install -e '.[dev]')")
    path = _browser_path()
    if path is None:
        unavailable("no system Chromium found (apt-get install chromium-headless-shell, or set ETC_FAST_CHROMIUM)")
    with sync_playwright() as p:
        b = p.chromium.launch(executable_path=path, args=FLAGS)
        yield b
        b.close()


@pytest.fixture(scope="module")
def browser():
    yield from launch_chromium(_unavailable)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """16 trials (baseline_n, variance_c on 4 modules, 2 rollouts); the first is hostile. Each has
    a 4-call chat, one call per decision of the stored events."""
    root = make_run(tmp_path_factory.mktemp("vb") / "run", tasks=("m0_gravity", "m4_snell_law", "m9_hooke_law", "m7_malus_law"),
                    rollouts=2, hostile=1, chat_calls=4, chat_chars=300, model="gpt41mini", n_draws=50)
    build_viewer(root)
    return root


@pytest.fixture(scope="module")
def frame(run):
    return pl.read_parquet(run / "trials.parquet")


class Page:
    """One tab with its page errors, console errors and every request made that is not the file itself."""

    def __init__(self, browser, url: str, tmp: Path) -> None:
        self.ctx = browser.new_context(viewport={"width": 1280, "height": 900}, accept_downloads=True)
        self.page = self.ctx.new_page()
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.url = url
        self.tmp = tmp
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        self.page.on("request", lambda r: self.requests.append(r.url) if r.url.split("#")[0] != url.split("#")[0] and not r.url.startswith(("data:", "blob:")) else None)

    def open(self, fragment: str = ""):
        self.page.goto(self.url + fragment)
        self.page.wait_for_selector("#app[data-view]")
        return self.page

    def close(self, name: str) -> None:
        self.page.screenshot(path=str(self.tmp / f"{name}.png"))
        self.ctx.close()
        assert self.errors == [], self.errors
        assert self.requests == [], f"the page made network requests: {self.requests}"


@pytest.fixture
def tab(browser, run, tmp_path, request):
    t = Page(browser, (run / "report" / VIEWER_FILE).as_uri(), tmp_path)
    yield t
    t.close(request.node.name)
    assert (tmp_path / f"{request.node.name}.png").stat().st_size > 1000


def expect(locator):
    from playwright.sync_api import expect as _expect

    return _expect(locator)


def _count(page) -> int:
    return int(page.locator("#trial-count").inner_text())


def test_study_view_and_heatmap_filter(tab, run, frame):
    page = tab.open()
    assert page.locator("#judge-name").inner_text().startswith("structural")
    assert page.locator("figure img").count() == len(list((run / "report").glob("*.png")))
    assert page.locator("section.report-table").count() == len(list((run / "report").glob("*.parquet")))
    assert page.locator(".budget-curves, svg.budget-plot").count() == 0  # no trial had a budget: no curves
    cell = page.locator('td.heat-cell[data-task="m4_snell_law"][data-configuration="variance_c"]')
    cell.click()
    page.wait_for_selector("#trials-table")
    want = frame.filter((pl.col("task") == "m4_snell_law") & (pl.col("configuration") == "variance_c")).height
    assert _count(page) == want == page.locator("#trials-table tbody tr").count() == 2
    assert "c.task=m4_snell_law" in page.url and "c.configuration=variance_c" in page.url


def test_trials_filter_search_sort_url_and_csv(tab, frame):
    page = tab.open("#view=trials")
    assert _count(page) == frame.height == page.locator("#trials-table tbody tr[data-trial-id]").count()
    # every results column is a column of the table
    heads = page.locator("#trials-table thead th").all_inner_texts()
    assert sorted(heads) == sorted([*frame.columns, "final law"])
    assert heads[:3] == ["task", "difficulty", "law_version"]
    page.select_option('select[data-filter="configuration"]', "variance_c")
    assert _count(page) == frame.filter(pl.col("configuration") == "variance_c").height
    page.select_option('select[data-filter="configuration"]', "")
    # text search covers the judge's reason and the final law
    page.fill("#trial-search", "different law")
    assert _count(page) == frame.filter(pl.col("judge_reason").str.contains("different law")).height > 0
    page.fill("#trial-search", "onerror=alert")  # only in the hostile final law
    assert _count(page) == 1
    page.fill("#trial-search", "")
    # a numeric range
    page.click("text=Numeric ranges")
    page.fill('input[data-range="measurements"][data-bound="min"]', "8")
    assert _count(page) == frame.filter(pl.col("measurements") >= 8).height
    page.fill('input[data-range="measurements"][data-bound="min"]', "")
    # sort by rmsle: numbers ascending, NaN and nulls last; then descending, still last
    page.click('#trials-table th[data-column="rmsle"]')
    col = heads.index("rmsle")

    def shown():
        return [page.locator("#trials-table tbody tr").nth(i).locator("td").nth(col).inner_text() for i in range(frame.height)]

    values = shown()
    nums = [float(v) for v in values if v not in ("nan", "\u2013")]
    n_missing = sum(1 for v in frame.get_column("rmsle").to_list() if v is None or math.isnan(v))
    assert n_missing > 0 and nums == sorted(nums) and all(v in ("nan", "\u2013") for v in values[len(nums):])
    assert len(values) - len(nums) == n_missing
    page.click('#trials-table th[data-column="rmsle"]')
    values = shown()
    nums = [float(v) for v in values if v not in ("nan", "\u2013")]
    assert nums == sorted(nums, reverse=True) and all(v in ("nan", "\u2013") for v in values[len(nums):])
    # the filter state is in the URL: reloading it gives the same rows
    page.select_option('select[data-filter="task"]', "m0_gravity")
    rows = page.locator("#trials-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.trialId)")
    assert "c.task=m0_gravity" in page.url and "sort=-rmsle" in page.url
    page.goto(page.url)
    page.reload()
    page.wait_for_selector("#trials-table")
    assert page.locator("#trials-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.trialId)") == rows
    # the filtered rows as CSV
    with page.expect_download() as dl:
        page.click("#download-csv")
    text = Path(dl.value.path()).read_text(encoding="utf-8")
    table = list(csv.reader(io.StringIO(text)))
    assert table[0] == heads
    assert [r[heads.index("trial_id")] for r in table[1:]] == rows


def test_keyboard_next_previous(tab):
    page = tab.open("#view=trials&c.configuration=variance_c")
    ids = page.locator("#trials-table tbody tr").evaluate_all("rs => rs.map(r => r.dataset.trialId)")
    page.keyboard.press("j")
    page.keyboard.press("j")
    page.keyboard.press("k")
    page.keyboard.press("j")
    page.keyboard.press("Enter")
    page.wait_for_selector("#trial-body[data-ready]")
    assert page.locator(".trial-page").get_attribute("data-trial-id") == ids[1]
    page.keyboard.press("j")
    page.wait_for_selector(f'.trial-page[data-trial-id="{ids[2]}"]')
    page.keyboard.press("k")
    page.wait_for_selector(f'.trial-page[data-trial-id="{ids[1]}"]')
    assert "c.configuration=variance_c" in page.url, "the filter travels with the trial"


def _trial(frame, **eq):
    return frame.filter(pl.all_horizontal([pl.col(k) == v for k, v in eq.items()])).get_column("trial_id").to_list()[0]


def test_one_planner_trial(tab, run, frame):
    tid = _trial(frame, configuration="variance_c", task="m0_gravity", rollout=1)
    record = json.loads((run / "transcripts" / f"{tid}.json").read_text())
    page = tab.open(f"#view=trial&run=0&id={tid}")
    page.wait_for_selector("#trial-body[data-ready]")
    assert page.locator("pre.final-law").inner_text().strip() == record["final_source"].strip()
    assert "HIDDEN_CONSTANT" in page.locator("pre.hidden-law").inner_text()
    assert page.locator("table.timeline tbody tr").count() == len(record["events"])
    # by default: the last event that measured points (the committee turn: 4 selections after 4 probes)
    plot = page.locator("svg.plot").first
    n_boot = len(record["events"][0]["X"])
    assert (plot.get_attribute("data-bootstrap"), plot.get_attribute("data-selected"), plot.get_attribute("data-earlier")) == (str(n_boot), "4", "0")
    assert int(plot.get_attribute("data-points")) == n_boot + 4 == page.locator("svg.plot .pt").count()
    assert plot.get_attribute("data-log-x") == "1", "m0's mass1 is log-scaled"
    assert page.locator(".obs-table").get_attribute("data-rows") == str(n_boot + 4)
    # the bootstrap event: its probes only
    page.click('table.timeline tbody tr[data-event="0"]')
    plot = page.locator("svg.plot").first
    assert (plot.get_attribute("data-points"), plot.get_attribute("data-selected")) == (str(n_boot), "0")
    assert page.locator(".obs-table").get_attribute("data-rows") == str(n_boot)
    assert "ev=0" in page.url
    # committee with fits and survivors, interpreter code next to its output, chat call records
    assert page.locator(".committee table tbody tr").first.is_visible()
    assert "no" in page.locator(".committee").first.inner_text()  # one hypothesis did not survive
    assert page.locator(".interp pre").count() == 2
    msg = page.locator('.chat .msg[data-role="assistant"]').first.inner_text()
    assert "finish_reason" in msg and "attempts" in msg and "latency" in msg and "gpt-4.1-mini" in msg
    assert page.locator("pre.synthesis-input").is_visible()
    # each decision's prompt and reply sit in its timeline row
    decisions = [e for e in record["events"] if e.get("observation") and e.get("action")]
    assert page.locator("table.timeline details.prompt").count() == len(decisions) == 4
    first_prompt = next(m["content"] for m in record["chat"] if m.get("role") == "user")
    assert page.locator("table.timeline details.prompt pre").first.text_content() == first_prompt
    page.click("text=Raw JSON")
    expect(page.locator("#raw-json")).to_contain_text('"trial_id"')
    assert json.loads(page.locator("#raw-json").inner_text()) == record


def test_hostile_trial_stays_text(tab, run, frame):
    tid = frame.filter(pl.col("judge_reason") == HOSTILE_REASON).get_column("trial_id").to_list()[0]
    page = tab.open(f"#view=trial&run=0&id={tid}")
    page.wait_for_selector("#trial-body[data-ready]")
    assert page.evaluate("window.__pwned") is None
    assert page.locator("img").count() == 0 and page.locator("#app b").count() == 0
    assert "</script><img src=x onerror=" in page.locator("pre.final-law").inner_text()
    assert page.locator(".judge-reason").text_content() == HOSTILE_REASON
    assert page.locator(".chat").inner_text().count("</script>") >= 1
    tab.open("#view=trials")
    page.fill("#trial-search", "window.__pwned")
    assert _count(page) == 1 and page.evaluate("window.__pwned") is None


def test_compare_within_the_run(tab, frame):
    page = tab.open("#view=compare")
    a = frame.filter(pl.col("configuration") == "baseline_n")
    b = frame.filter(pl.col("configuration") == "variance_c")
    keys = ["task", "difficulty", "law_version", "noise", "rollout"]
    pairs = a.join(b, on=keys, suffix="_b")
    gained = pairs.filter(~pl.col("credited") & pl.col("credited_b")).height
    lost = pairs.filter(pl.col("credited") & ~pl.col("credited_b")).height
    summary = page.locator("#compare-summary")
    assert (summary.get_attribute("data-pairs"), summary.get_attribute("data-gained"), summary.get_attribute("data-lost")) == (str(pairs.height), str(gained), str(lost))
    assert gained + lost > 0
    page.locator("#compare-table tbody tr").first.click()
    page.wait_for_selector("#side-by-side[data-ready]")
    rows = page.locator("#aligned-timeline tbody tr")
    assert rows.count() >= 7  # the planner's events, the baseline's aligned beside them
    # a plot of each trial's final observations, and each full trial page with its own turn plot
    assert page.locator("#side-by-side svg.plot").count() == 4
    assert page.locator('#side-by-side .side[data-side="A"] .trial-page').count() == 1
    assert page.locator('#side-by-side .side[data-side="B"] .trial-page').count() == 1
    # a step of the aligned timeline selects that event in both pages (the committee step: only B has one)
    page.locator("#aligned-timeline tbody tr", has_text="turn 1").first.click()
    sel_b = page.locator('#side-by-side .side[data-side="B"] table.timeline tr.sel')
    assert sel_b.count() == 1 and "committee" in sel_b.inner_text()


def test_compare_across_runs(browser, run, tmp_path):
    other = make_run(tmp_path / "other", configs=("baseline_n", "variance_c"), tasks=("m0_gravity", "m4_snell_law"), rollouts=2, n_draws=50)
    page_path = build_compare(run, other, tmp_path / "cmp")
    t = Page(browser, page_path.as_uri(), tmp_path)
    page = t.open()
    assert page.locator("#app").get_attribute("data-view") == "compare"
    # A: run A's first configuration (baseline_n, gpt41mini); B: the other run's (baseline_n, symbolic)
    keys = ["task", "difficulty", "law_version", "noise", "rollout"]
    a = pl.read_parquet(run / "trials.parquet").filter(pl.col("configuration") == "baseline_n")
    b = pl.read_parquet(other / "trials.parquet").filter(pl.col("configuration") == "baseline_n")
    pairs = a.join(b, on=keys, suffix="_b")
    summary = page.locator("#compare-summary")
    assert summary.get_attribute("data-pairs") == str(pairs.height) == "4"
    assert summary.get_attribute("data-gained") == str(pairs.filter(~pl.col("credited") & pl.col("credited_b")).height)
    assert summary.get_attribute("data-lost") == str(pairs.filter(pl.col("credited") & ~pl.col("credited_b")).height)
    assert page.locator("#compare-a option").count() == 4, "two configurations in each run"
    row = compare_table(run, other).filter(pl.col("configuration") == "baseline_n").row(0, named=True)
    assert (row["pairs"], row["gained"], row["lost"]) == tuple(int(summary.get_attribute(k)) for k in ("data-pairs", "data-gained", "data-lost"))
    page.locator("#compare-table tbody tr").first.click()
    page.wait_for_selector("#side-by-side[data-ready]")
    assert page.locator("#side-by-side .side-head").count() == 2
    t.close("compare_across_runs")


def test_a_failed_trial_and_a_missing_transcript_open_cleanly(browser, tmp_path):
    from etc_fast.runner._store import RunStore
    from tests.report._viewer_run import make_record

    root = tmp_path / "run"
    failed = make_record("variance_c", "m0_gravity", model="gpt41mini")
    failed.update(status="failed", error="no reply from the model (auth)", error_kind="auth", events=[], observations={},
                  evaluation={}, judge={}, synthesis_input=None, draft=None, final_source="", submission_origin="none",
                  chat=[{"event": "begin", "phase": "explore", "seed": 1}, {"event": "call_failed", "error_kind": "auth", "error": "401"}])
    with RunStore(root) as store:
        store.append(failed)
        gone = store.append(make_record("baseline_n", "m0_gravity", model="gpt41mini"))
        store.export_parquet()
    (root / gone["transcript"]).unlink()
    page_path = build_viewer(root)  # no report/ tables: the page has the trials only
    t = Page(browser, page_path.as_uri(), tmp_path)
    page = t.open(f"#view=trial&run=0&id={failed['trial_id']}")
    page.wait_for_selector("#trial-body[data-ready]")
    assert "not credited" in page.locator(".verdict").inner_text() and "auth" in page.locator(".verdict").inner_text()
    assert "call_failed" in page.locator(".chat").inner_text()
    page = t.open(f"#view=trial&run=0&id={gone['trial_id']}")
    page.wait_for_selector("#trial-body[data-ready]")
    assert "no transcript is stored" in page.locator("#trial-body .err").inner_text()
    page = t.open("#view=study")
    assert "No report tables" in page.locator("#app").inner_text()
    t.close("failed_and_missing")


def test_heatmap_with_a_column_a_newer_report_adds(browser, tmp_path):
    root = make_run(tmp_path / "run", tasks=("m0_gravity", "m9_hooke_law"), n_draws=50)
    heat = pl.read_parquet(root / "report" / "table_heatmap.parquet")
    heat.insert_column(heat.columns.index("task") + 1, pl.lit("etc_fast").alias("suite")).write_parquet(root / "report" / "table_heatmap.parquet")
    t = Page(browser, build_viewer(root).as_uri(), tmp_path)
    page = t.open()
    assert page.locator("#heatmap-0 thead th").all_inner_texts()[:2] == ["task", "suite"]
    page.locator('td.heat-cell[data-task="m9_hooke_law"][data-configuration="baseline_n"]').click()
    page.wait_for_selector("#trials-table")
    assert _count(page) == 1 and "suite" not in page.url, "only columns the trials have filter them"
    t.close("heatmap_new_column")


def test_budget_curves_in_the_study_view(browser, tmp_path):
    """A run with budgets (4, 16 and uncapped; four configurations on 12 modules, written as its
    results table and reported by the CLI): the study view draws the curves, readable, with the
    report's numbers; a heatmap cell of the uncapped point lists the uncapped trials only."""
    from etc_fast.report.__main__ import main
    from tests.report.test_statistics import frame as budget_frame
    from tests.report.test_statistics import known_rows

    root = tmp_path / "budget"
    root.mkdir()
    trials = budget_frame(known_rows())
    trials.write_parquet(root / "trials.parquet")
    assert main([str(root), "--draws", "200"]) == 0
    curve = pl.read_parquet(root / "report" / "table_budget_curve.parquet")
    t = Page(browser, (root / "report" / VIEWER_FILE).as_uri(), tmp_path)
    page = t.open()
    section = page.locator("#budget-curves-0")
    expect(section).to_be_visible()
    assert section.locator("h2").inner_text() == "Budget curves"
    plot = section.locator("svg.budget-plot")
    assert plot.count() == 1 and plot.get_attribute("data-panel") == "vanilla_equation / noise 0"
    box = plot.bounding_box()
    assert box is not None and box["width"] >= 300 and box["height"] >= 200  # drawn at a readable size
    # one point per row of the curve table, one line per configuration over the capped budgets
    assert section.locator("circle.pt").count() == curve.height
    lines = section.locator("polyline.curve")
    assert lines.count() == 4 and {lines.nth(i).get_attribute("data-points") for i in range(4)} == {"2"}
    assert section.locator("polygon.band").count() == 4
    ticks = section.locator("svg.budget-plot text").all_text_contents()
    assert "4" in ticks and "16" in ticks and "none" in ticks
    # the curve as a table, SA [low, high] as the report has it
    for r in curve.iter_rows(named=True):
        b = "none" if r["measurement_budget"] is None else str(r["measurement_budget"])
        cell = section.locator(f'table.budget-table tr[data-configuration="{r["configuration"]}"] td[data-budget="{b}"]')
        assert cell.inner_text() == f"{r['sa']:.3f} [{r['sa_ci_low']:.3f}, {r['sa_ci_high']:.3f}]"
    dot = section.locator('circle.pt[data-configuration="random_c"][data-budget="none"]')
    assert float(dot.get_attribute("data-sa")) == 0.5
    # the paired table follows the curves, ahead of the heatmaps and the other tables, once
    assert page.locator('section.report-table[data-stem="table_paired"] tbody tr').count() == pl.read_parquet(
        root / "report" / "table_paired.parquet").height
    order = page.eval_on_selector_all("#budget-curves-0, section.report-table, #heatmap-0",
                                      "els => els.map(e => e.id || e.dataset.stem)")
    assert order[:3] == ["budget-curves-0", "table_paired", "heatmap-0"] and order.count("table_paired") == 1
    assert page.locator("#heatmap-0 details.heat-group[open]").count() == 3  # a few conditions: all open
    # heatmaps: one per budget, the uncapped one last; its cell lists the uncapped trials only
    heads = page.locator("#heatmap-0 h3").all_inner_texts()
    assert len(heads) == 3 and heads[-1].endswith("uncapped") and "budget 4" in heads[0]
    page.locator("#heatmap-0 .scroll").last.locator('td.heat-cell[data-task="m3_task"][data-configuration="random_c"]').click()
    page.wait_for_selector("#trials-table")
    assert "c.measurement_budget=%28empty%29" in page.url
    want = trials.filter((pl.col("task") == "m3_task") & (pl.col("configuration") == "random_c") & pl.col("measurement_budget").is_null())
    assert _count(page) == want.height == 3
    t.close("budget_curves")


def test_a_study_of_many_conditions_lists_its_heatmaps_closed(browser, tmp_path):
    """Five budgets make five heatmaps: each is a line that opens on a click, with its task count."""
    from etc_fast.report.__main__ import main
    from tests.report.test_statistics import frame as budget_frame
    from tests.report.test_statistics import known_rows

    root = tmp_path / "budgets"
    root.mkdir()
    budget_frame(known_rows((4, 8, 12, 16, None))).write_parquet(root / "trials.parquet")
    assert main([str(root), "--draws", "50"]) == 0
    t = Page(browser, (root / "report" / VIEWER_FILE).as_uri(), tmp_path)
    page = t.open()
    groups = page.locator("#heatmap-0 details.heat-group")
    assert groups.count() == 5 and page.locator("#heatmap-0 details.heat-group[open]").count() == 0
    assert groups.first.locator("summary").inner_text().endswith("(12 tasks)")
    cell = groups.nth(1).locator('td.heat-cell[data-task="m3_task"][data-configuration="random_c"]')
    expect(cell).to_be_hidden()
    groups.nth(1).locator("summary").click()
    expect(cell).to_be_visible()
    cell.click()
    page.wait_for_selector("#trials-table")
    assert "c.measurement_budget=8" in page.url and _count(page) == 3
    # a long report table shows its row count and builds its rows when opened; a short one shows them
    page.goto(page.url.split("#")[0] + "#view=study")
    sections = page.locator("section.report-table")
    sizes = [int(sections.nth(i).get_attribute("data-rows")) for i in range(sections.count())]
    long = sections.nth(next(i for i, n in enumerate(sizes) if n > 60))
    short = sections.nth(next(i for i, n in enumerate(sizes) if 0 < n <= 60))
    n = int(long.get_attribute("data-rows"))
    assert long.locator("summary").inner_text() == f"{n} rows" and long.locator("tbody tr").count() == 0
    long.locator("summary").click()
    assert long.locator("tbody tr").count() == n
    assert short.locator("tbody tr").count() == int(short.get_attribute("data-rows"))
    # the trials table draws 500 rows at a time; the count, sort and CSV cover every trial
    page.goto(page.url.split("#")[0] + "#view=trials&sort=-measurement_budget")
    rows = page.locator("#trials-table tbody tr")
    assert _count(page) == 720 and rows.count() == 500
    expect(page.locator("#more-rows")).to_have_text("Show 220 more (220 not drawn)")
    page.locator("#more-rows").click()
    assert rows.count() == 720 and page.locator("#more-rows").is_hidden()
    page.goto(page.url.split("#")[0] + "#view=trials&c.configuration=random_c")  # 180 rows: all drawn
    assert _count(page) == rows.count() == 180 and page.locator("#more-rows").is_hidden()
    page.goto(page.url.split("#")[0] + "#view=trials")
    page.locator("body").click(position={"x": 5, "y": 5})
    for _ in range(501):  # j past the last row drawn draws the next page
        page.keyboard.press("j")
    assert rows.count() == 720 and rows.nth(500).get_attribute("class") == "current"
    t.close("heatmaps_closed")


def test_a_run_past_the_embed_limit_keeps_every_row_and_names_what_is_left_out(browser, tmp_path):
    from etc_fast.report._viewer import run_data

    root = make_run(tmp_path / "run", tasks=("m0_gravity", "m9_hooke_law"), n_draws=50)
    full, packed = run_data(root)
    assert full["transcripts_left_out"] == 0 and len(packed) == full["n_trials"] >= 3
    limit = len(packed[0][1]) + len(packed[1][1])  # room for the first two transcripts only
    data, kept = run_data(root, embed_limit=limit)
    assert [e for e, _ in kept] == [e for e, _ in packed[:2]] and data["transcripts_left_out"] == full["n_trials"] - 2
    assert data["sha256"] == full["sha256"] and data["final_source"] == full["final_source"]  # every row keeps its facts
    t = Page(browser, build_viewer(root, embed_limit=limit).as_uri(), tmp_path)
    page = t.open("#view=study")
    assert f"the {full['n_trials'] - 2} trials after them" in page.locator("#left-out-0").inner_text()
    last = next(i for i, tx in enumerate(data["transcript"]) if tx is None)
    names = [c["name"] for c in data["trials"]["columns"]]
    page = t.open(f"#view=trial&run=0&id={data['trials']['rows'][last][names.index('trial_id')]}")
    page.wait_for_selector("#trial-body[data-ready]")
    assert "not in this page" in page.locator("#trial-body .err").inner_text()
    assert _count(t.open("#view=trials")) == full["n_trials"]
    t.close("embed_limit")
