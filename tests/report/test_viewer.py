"""The run viewer without a browser: the page parses, is self-contained, holds every transcript
byte for byte, keeps hostile text inert, builds deterministically and stays within its size budget."""

from __future__ import annotations

import base64
import hashlib
import json
import re
import zlib
from html.parser import HTMLParser
from pathlib import Path

import pytest

from etc_fast.report.__main__ import main as report_main
from etc_fast.report._viewer import TRANSCRIPT_TYPE, VIEWER_FILE, build_compare, build_viewer, embed_json
from etc_fast.runner import check_manifest, read_trials
from tests.report._viewer_run import HOSTILE_LAW, HOSTILE_REASON, make_run


class _Page(HTMLParser):
    """Every start tag with its attributes, and the text of each script element."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tags: list[tuple[str, dict[str, str | None]]] = []
        self.scripts: list[tuple[dict[str, str | None], str]] = []
        self._script: dict[str, str | None] | None = None
        self._text: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))
        if tag == "script":
            self._script, self._text = dict(attrs), []

    def handle_data(self, data):
        if self._script is not None:
            self._text.append(data)

    def handle_endtag(self, tag):
        if tag == "script" and self._script is not None:
            self.scripts.append((self._script, "".join(self._text)))
            self._script = None


def _parse(html: str) -> _Page:
    page = _Page()
    page.feed(html)
    page.close()
    return page


def _data(page: _Page) -> dict:
    (text,) = [t for a, t in page.scripts if a.get("id") == "viewer-data"]
    return json.loads(text)


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """A 16-trial run (2 configurations x 4 modules x 2 rollouts) whose first trial is hostile."""
    root = make_run(tmp_path_factory.mktemp("viewer") / "run", tasks=("m0_gravity", "m4_snell_law", "m9_hooke_law", "m10_be_distribution"),
                    rollouts=2, hostile=1, chat_calls=3, chat_chars=400)
    build_viewer(root)
    return root


@pytest.fixture(scope="module")
def html(run):
    return (run / "report" / VIEWER_FILE).read_text(encoding="utf-8")


def test_page_parses_and_names_nothing_outside_itself(html):
    page = _parse(html)
    tags = [t for t, _ in page.tags]
    assert tags[:1] == ["html"] and "body" in tags
    for tag, attrs in page.tags:
        assert "src" not in attrs, f"<{tag}> loads {attrs['src']}"
        href = attrs.get("href")
        assert href is None or href.startswith("#"), f"<{tag}> links to {href}"
        assert tag not in ("link", "iframe", "object", "embed", "img", "base", "form"), tag
        assert attrs.get("type") != "module"
        assert not any(k.startswith("on") for k in attrs), f"<{tag}> has an inline handler"
    # the page's own script neither fetches nor opens connections nor imports
    (script,) = [t for a, t in page.scripts if not a]
    for word in ("fetch(", "XMLHttpRequest", "WebSocket", "import(", "innerHTML", "outerHTML", "insertAdjacentHTML", "eval(", "document.write"):
        assert word not in script, word


def test_csp_forbids_the_network_and_allows_only_the_pages_script(html):
    page = _parse(html)
    (csp,) = [a["content"] for t, a in page.tags if t == "meta" and (a.get("http-equiv") or "").lower() == "content-security-policy"]
    rules = dict((p.split()[0], p.split()[1:]) for p in (x.strip() for x in csp.split(";")) if p)
    assert rules["default-src"] == ["'none'"] and rules["connect-src"] == ["'none'"]
    assert rules["img-src"] == ["data:"] and rules["form-action"] == ["'none'"] and rules["base-uri"] == ["'none'"]
    (script,) = [t for a, t in page.scripts if not a]
    digest = base64.b64encode(hashlib.sha256(script.encode()).digest()).decode()
    assert rules["script-src"] == [f"'sha256-{digest}'"], "the script may run only by its own hash"
    assert "'unsafe-inline'" not in csp and "'unsafe-eval'" not in csp
    (style,) = re.findall(r"<style>(.*?)</style>", html, re.S)
    assert rules["style-src"] == ["'sha256-" + base64.b64encode(hashlib.sha256(style.encode()).digest()).decode() + "'"]
    # the CSP comes before any script: it governs them all
    first_script = min(i for i, (t, _) in enumerate(page.tags) if t == "script")
    first_meta = min(i for i, (t, a) in enumerate(page.tags) if t == "meta" and a.get("http-equiv"))
    assert first_meta < first_script


def test_every_transcript_decompresses_to_the_stored_bytes(run, html):
    page = _parse(html)
    data = _data(page)["runs"][0]
    blobs = {a["id"]: t for a, t in page.scripts if a.get("type") == TRANSCRIPT_TYPE}
    entries = {e["trial_id"]: e for e in read_trials(run / "trials.jsonl")}
    ids = [r[[c["name"] for c in data["trials"]["columns"]].index("trial_id")] for r in data["trials"]["rows"]]
    assert len(blobs) == len(entries) == len(ids) == 16
    for tid, element, sha in zip(ids, data["transcript"], data["sha256"]):
        raw = zlib.decompress(base64.b64decode(blobs[element]))
        stored = (run / entries[tid]["transcript"]).read_bytes()
        assert raw == stored
        assert sha == hashlib.sha256(stored).hexdigest() == entries[tid]["transcript_sha256"]


def test_hostile_text_stays_inert(html):
    page = _parse(html)
    # the parser sees exactly the page's own elements: a law, a judge reason or a reply could not add any
    assert [t for t, _ in page.tags if t in ("img", "b")] == []
    n_scripts = len(page.scripts)
    assert html.count("<script") == n_scripts and html.count("</script>") == n_scripts
    data = _data(page)
    run = data["runs"][0]
    cols = [c["name"] for c in run["trials"]["columns"]]
    reasons = [r[cols.index("judge_reason")] for r in run["trials"]["rows"]]
    assert HOSTILE_REASON in reasons, "the hostile text round-trips exactly"
    assert HOSTILE_LAW in run["final_source"]
    # and it is stored escaped: no raw angle bracket or ampersand from the data reaches the HTML
    raw = [t for a, t in page.scripts if a.get("id") == "viewer-data"][0]
    assert not re.search("[<>&\u2028\u2029]", raw)


@pytest.mark.parametrize("value", ["</script>", "<!--", "<![CDATA[", "a & b", "\u2028\u2029", "</SCRIPT >", {"k<": ["x>", 1.5]}])
def test_embedded_json_cannot_leave_its_element(value):
    text = embed_json(value)
    assert not re.search("[<>&\u2028\u2029]", text)
    assert json.loads(text) == value


def test_embed_json_refuses_non_finite_floats():
    with pytest.raises(ValueError):
        embed_json(float("nan"))


def test_builds_are_byte_identical(run, tmp_path):
    first = (run / "report" / VIEWER_FILE).read_bytes()
    build_viewer(run)
    assert (run / "report" / VIEWER_FILE).read_bytes() == first
    # the whole report command again (tables and figures rewritten): same page
    assert report_main([str(run), "--draws", "200"]) == 0
    assert (run / "report" / VIEWER_FILE).read_bytes() == first


def test_page_holds_every_results_column_and_the_report(run, html):
    import polars as pl

    data = _data(_parse(html))
    r = data["runs"][0]
    assert [c["name"] for c in r["trials"]["columns"]] == pl.read_parquet(run / "trials.parquet").columns
    stems = [t["stem"] for t in r["tables"]]
    assert sorted(stems) == sorted(p.stem for p in (run / "report").glob("*.parquet"))
    assert stems[0] == "table1_families", "report.md's order"
    heat = [t for t in r["tables"] if t["stem"] == "table_heatmap"][0]
    assert heat["title"] and heat["caption"].startswith("Each cell")
    assert {f["name"] for f in r["figures"]} == {p.name for p in (run / "report").glob("*.png")}
    assert r["judge"].startswith("structural")
    facts = r["tasks"]["m0_gravity|easy|v0"]
    assert facts["hidden_law"] and [v["scale"] for v in facts["variables"]] == ["log", "log", "log"]


def test_a_table_added_to_the_report_shows_up_without_code_changes(tmp_path):
    import polars as pl

    root = make_run(tmp_path / "run", tasks=("m0_gravity",))
    pl.DataFrame({"system": ["a", "b"], "score": [1.0, float("nan")]}).write_parquet(root / "report" / "table_zz_new.parquet")
    build_viewer(root)
    data = _data(_parse((root / "report" / VIEWER_FILE).read_text()))
    new = [t for t in data["runs"][0]["tables"] if t["stem"] == "table_zz_new"][0]
    assert new["columns"] == [{"name": "system", "kind": "str"}, {"name": "score", "kind": "num"}]
    assert new["rows"] == [["a", 1.0], ["b", "NaN"]]


def test_size_budget_llm_sized_transcripts(tmp_path):
    """24 trials with 12-call chats (about 45 kB of JSON each, text that compresses worse than a
    model's): the page is the deflated transcripts and the figures in base64 (4/3) plus a fixed
    part, and under the raw transcripts."""
    root = make_run(tmp_path / "run", configs=("baseline_c", "variance_c", "random_c"), tasks=("m0_gravity", "m4_snell_law"),
                    difficulties=("easy", "medium"), rollouts=2, chat_calls=12, chat_chars=2000, model="gpt41mini", n_draws=50)
    page = build_viewer(root).stat().st_size
    blobs = [p.read_bytes() for p in (root / "transcripts").glob("*.json")]
    raw, packed = sum(map(len, blobs)), sum(len(zlib.compress(b, 9)) for b in blobs)
    figures = sum(p.stat().st_size for p in (root / "report").glob("*.png"))
    assert raw > 24 * 35_000
    assert page < 4 / 3 * (packed + figures) + 200_000, (page, packed, figures)
    assert page < 0.8 * raw, (page, raw)


def test_report_cli_writes_the_viewer_into_the_manifest(tmp_path, capsys):
    root = make_run(tmp_path / "run", tasks=("m0_gravity",), report=False)
    assert report_main([str(root), "--draws", "100"]) == 0
    assert (root / "report" / VIEWER_FILE).is_file()
    assert check_manifest(root) == []
    assert "report/index.html" in (root / "manifest.sha256").read_text()
    assert report_main([str(root), "--draws", "100", "--no-viewer"]) == 0


def test_compare_cli(tmp_path, capsys):
    a = make_run(tmp_path / "a", tasks=("m0_gravity", "m9_hooke_law"))
    b = make_run(tmp_path / "b", configs=("baseline_n", "variance_c", "random_n"), tasks=("m0_gravity", "m9_hooke_law"))
    out = tmp_path / "cmp"
    assert report_main(["--compare", str(a), str(b), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    assert captured.out.strip() == str(out / VIEWER_FILE)
    assert "baseline_n: 2 pairs, B gained" in captured.err
    data = _data(_parse((out / VIEWER_FILE).read_text()))
    assert data["mode"] == "compare" and [r["n_trials"] for r in data["runs"]] == [4, 6]
    # element ids never collide although both runs hold trials with the same ids
    ids = [e for r in data["runs"] for e in r["transcript"]]
    assert len(ids) == len(set(ids)) == 10
    assert build_compare(a, b, out).read_bytes() == (out / VIEWER_FILE).read_bytes()
    # compare.csv: per configuration both ran, counted here trial by trial
    import polars as pl

    table = pl.read_csv(out / "compare.csv")
    assert table.get_column("configuration").to_list() == ["baseline_n", "variance_c"]
    ta, tb = pl.read_parquet(a / "trials.parquet"), pl.read_parquet(b / "trials.parquet")
    key = lambda r: (r["configuration"], r["task"], r["difficulty"], r["law_version"], r["noise"], r["rollout"])  # noqa: E731
    credit_b = {key(r): (r["credited"], r["measurements"]) for r in tb.iter_rows(named=True)}
    for row in table.iter_rows(named=True):
        mine = [r for r in ta.iter_rows(named=True) if r["configuration"] == row["configuration"] and key(r) in credit_b]
        gained = sum(1 for r in mine if not r["credited"] and credit_b[key(r)][0])
        lost = sum(1 for r in mine if r["credited"] and not credit_b[key(r)][0])
        dm = sum(credit_b[key(r)][1] - r["measurements"] for r in mine) / len(mine)
        assert (row["pairs"], row["gained"], row["lost"], row["measurements_delta_mean"]) == (len(mine), gained, lost, dm)


@pytest.mark.parametrize("argv, message", [
    (["--compare", "A", "B"], "needs --out"),
    (["RUN", "--out", "x"], "--out only goes with --compare"),
    ([], "give RUN_DIR"),
])
def test_cli_usage_errors_exit_2(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        report_main(argv)
    assert exc.value.code == 2 and message in capsys.readouterr().err


def test_compare_of_a_missing_run_exits_2(tmp_path, capsys):
    a = make_run(tmp_path / "a", tasks=("m0_gravity",), report=False)
    assert report_main(["--compare", str(a), str(tmp_path / "nope"), "--out", str(tmp_path / "o")]) == 2
    assert "nope: not a run directory" in capsys.readouterr().err


def test_every_run_ends_with_its_viewer(tmp_path):
    from etc_fast.runner import parse_config, run_config
    from tests.runner._fakes import FakeWorker
    from tests.runner.conftest import SMALL

    config = parse_config({**SMALL, "out": str(tmp_path / "run")}, source="small.yaml")
    res = run_config(config, worker=FakeWorker(), tty=False)
    page = Path(config.out) / "report" / VIEWER_FILE
    assert res.report_error is None and page.is_file()
    assert len(_data(_parse(page.read_text()))["runs"][0]["trials"]["rows"]) == res.total
    assert check_manifest(config.out) == []


def test_only_the_runs_own_transcripts_are_embedded(tmp_path):
    root = make_run(tmp_path / "run", tasks=("m0_gravity",), report=False)
    secret = tmp_path / "secret.json"
    secret.write_text('{"private": true}')
    lines = (root / "trials.jsonl").read_text().splitlines()
    entry = json.loads(lines[0])
    entry["transcript"] = "../secret.json"
    (root / "trials.jsonl").write_text("\n".join([json.dumps(entry), *lines[1:]]) + "\n")
    (root / "trials.parquet").unlink()
    page = _parse(build_viewer(root).read_text())
    data = _data(page)["runs"][0]
    assert data["transcript"][0] is None and all(data["transcript"][1:])
    blobs = [t for a, t in page.scripts if a.get("type") == TRANSCRIPT_TYPE]
    assert all(b"private" not in zlib.decompress(base64.b64decode(b)) for b in blobs)
