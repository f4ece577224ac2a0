"""The run viewer: one self-contained HTML page per run (``RUN_DIR/report/index.html``).

The page holds everything it shows: the report's tables and figures (read back from
``RUN_DIR/report/``, whatever tables it has), every results-table column of every trial, each
trial's task facts (its hidden law, its variables and their scales), and every transcript exactly
as stored, deflate-compressed and base64-encoded in its own inert ``<script>`` element, decompressed
in the page only when the trial is opened (``DecompressionStream``, which needs no server).

Safety: the Content-Security-Policy forbids every network access (``default-src 'none'``) and runs
only the page's own script and stylesheet (by their SHA-256); embedded JSON has ``<``, ``>``, ``&``, U+2028 and
U+2029 escaped so that no stored text can close its script element; the page's script inserts
model-written text with ``textContent`` only. Builds are deterministic: the same run directory
gives the same bytes (no clock, no random, sorted inputs).

``build_viewer(run_dir)`` writes one run's page; ``build_compare(run_a, run_b, out)`` writes a page
holding two runs, opened on the compare view.
"""

from __future__ import annotations

import base64
import hashlib
import json
import math
import os
import re
import zlib
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from typing import Any

import polars as pl

__all__ = ["build_viewer", "build_compare", "compare_table", "PAIR_KEYS", "run_data", "render_page", "embed_json", "VIEWER_FILE", "TRANSCRIPT_TYPE"]

#: The page's file name inside ``RUN_DIR/report/``.
VIEWER_FILE = "index.html"
#: MIME type of the inert script elements that hold the compressed transcripts.
TRANSCRIPT_TYPE = "application/x-etc-fast-transcript+deflate"
#: Format version of the embedded data (bumped when the page's expectations change).
DATA_VERSION = 1

_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}
_ESCAPE_RE = re.compile("[<>&\u2028\u2029]")


def embed_json(value: Any) -> str:
    """JSON for an HTML ``<script type="application/json">`` element: ``<``, ``>``, ``&``, U+2028
    and U+2029 are written as ``\\uXXXX`` escapes (valid JSON, same value), so the text can neither
    close the element nor open a comment or a CDATA section. Non-finite floats must already be
    strings (:func:`_jsonable`)."""
    text = json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":"))
    return _ESCAPE_RE.sub(lambda m: _ESCAPES[m.group(0)], text)


def _jsonable(v: Any) -> Any:
    """A table cell as JSON: non-finite floats as the strings ``NaN``, ``Infinity``, ``-Infinity``
    (the page reads them back with ``Number``)."""
    if isinstance(v, float) and not math.isfinite(v):
        return "NaN" if math.isnan(v) else ("Infinity" if v > 0 else "-Infinity")
    if isinstance(v, dict):
        return {str(k): _jsonable(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [_jsonable(x) for x in v]
    return v


def _kind(dtype: pl.DataType) -> str:
    if dtype == pl.Boolean:
        return "bool"
    if dtype.is_numeric():
        return "num"
    return "str"


def _frame(df: pl.DataFrame) -> dict[str, Any]:
    """A table as ``{"columns": [{"name", "kind"}], "rows": [[...]]}`` (every column, in order)."""
    return {
        "columns": [{"name": c, "kind": _kind(t)} for c, t in df.schema.items()],
        "rows": [_jsonable(list(r)) for r in df.iter_rows()],
    }


# ----------------------------------------------------------------------------------------
# The report's tables and figures, read back from RUN_DIR/report
# ----------------------------------------------------------------------------------------
_SECTION_RE = re.compile(r"^## (.+)$", re.M)
_FILES_RE = re.compile(r"^Files: \[([^\]]+)\.csv\]", re.M)
_FIGURE_RE = re.compile(r"^!\[([^\]]*)\]\(([^)]+\.png)\)", re.M)


def _report_sections(report_md: str) -> dict[str, tuple[str, str]]:
    """``{stem: (title, caption)}`` of every table section of ``report.md`` (the report's own words)."""
    out: dict[str, tuple[str, str]] = {}
    heads = list(_SECTION_RE.finditer(report_md))
    for i, head in enumerate(heads):
        body = report_md[head.end(): heads[i + 1].start() if i + 1 < len(heads) else len(report_md)]
        files = _FILES_RE.search(body)
        if files is None:
            continue
        caption = " ".join(line.strip() for line in body[: files.start()].splitlines() if line.strip())
        out[files.group(1)] = (head.group(1).strip(), caption)
    return out


def _report_parts(report_dir: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The report's tables (every ``*.parquet`` in ``report/``: those ``report.md`` describes first,
    in its order, then any others by name) and figures (every ``*.png``, as base64)."""
    md_path = report_dir / "report.md"
    md = md_path.read_text(encoding="utf-8") if md_path.is_file() else ""
    sections = _report_sections(md)
    stems = [s for s in sections if (report_dir / f"{s}.parquet").is_file()]
    stems += sorted(p.stem for p in report_dir.glob("*.parquet") if p.stem not in sections)
    tables = []
    for stem in stems:
        title, caption = sections.get(stem, (stem, ""))
        tables.append({"stem": stem, "title": title, "caption": caption, **_frame(pl.read_parquet(report_dir / f"{stem}.parquet"))})
    alts = {m.group(2): m.group(1) for m in _FIGURE_RE.finditer(md)}
    figures = []
    for png in sorted(report_dir.glob("*.png")):
        figures.append({"name": png.name, "title": alts.get(png.name, png.stem.replace("_", " ")),
                        "png": base64.b64encode(png.read_bytes()).decode("ascii")})
    return tables, figures


# ----------------------------------------------------------------------------------------
# Tasks (the hidden law next to the submission; the variables' scales for the domain plot)
# ----------------------------------------------------------------------------------------
def _task_facts(task: str, difficulty: str, law_version: str) -> dict[str, Any]:
    from etc_fast.tasks import get_task

    try:
        t = get_task(task, difficulty, law_version)
    except Exception as exc:  # noqa: BLE001 - a custom task file moved away: the page says so
        return {"error": f"task not available here ({type(exc).__name__}: {exc})"}
    return _jsonable({
        "title": t.title,
        "signature": t.signature,
        "hidden_law": t.ground_truth_text,
        "law_expression": t.law_expression,
        "constants": {k: float(v) for k, v in sorted((t.constants or {}).items())},
        "output": t.output_name,
        "variables": [{"name": v.name, "scale": v.scale, "low": float(v.low), "high": float(v.high),
                       "description": v.description} for v in t.variables],
    })


# ----------------------------------------------------------------------------------------
# One run
# ----------------------------------------------------------------------------------------
def _compress(blob: bytes) -> str:
    """zlib (RFC 1950: the page's ``DecompressionStream("deflate")``), level 9, base64."""
    return base64.b64encode(zlib.compress(blob, 9)).decode("ascii")


#: The most transcript text (deflated, base64) one run embeds in a page. Past it, trials in table order
#: keep their row, final law and SHA-256 but not their transcript, and the page says so: a study of
#: tens of thousands of trials would otherwise write a page no browser opens.
EMBED_LIMIT_BYTES = 64 * 2**20


def run_data(run_dir: str | os.PathLike[str], *, run_index: int = 0,
             embed_limit: int = EMBED_LIMIT_BYTES) -> tuple[dict[str, Any], list[tuple[str, str]]]:
    """The page's data for one run and its compressed transcripts.

    At most ``embed_limit`` bytes of transcripts are embedded (:data:`EMBED_LIMIT_BYTES`); the
    data's ``transcripts_left_out`` counts the stored transcripts past it.

    Returns:
        ``(data, transcripts)``: ``data`` is the run's JSON object (name, judge, trials with every
        results column, final laws, task facts, report tables and figures); ``transcripts`` is a
        list of ``(element id, base64 of the deflated transcript bytes)``, one per trial whose
        transcript is stored.
    """
    from etc_fast.report._load import load_trials
    from etc_fast.report._rejudge import judge_label
    from etc_fast.store import TRIALS, read_trials

    root = Path(run_dir)
    df = load_trials(root)
    entries = {e["trial_id"]: e for e in read_trials(root / TRIALS)} if (root / TRIALS).exists() else {}
    trials = _frame(df)
    ids = df.get_column("trial_id").to_list() if "trial_id" in df.columns else [None] * df.height
    transcripts: list[tuple[str, str]] = []
    tx_ids: list[str | None] = []
    shas: list[str | None] = []
    finals: list[str | None] = []
    origins: list[str | None] = []
    embedded = left_out = 0
    for i, tid in enumerate(ids):
        entry = entries.get(tid) if tid is not None else None
        blob = None
        if entry is not None:
            path = (root / str(entry.get("transcript", f"transcripts/{tid}.json"))).resolve()
            # only a file of the run's transcripts/ is embedded (an edited line cannot pull in another file)
            if path.parent == (root / "transcripts").resolve():
                try:
                    blob = path.read_bytes()
                except OSError:
                    blob = None
        if blob is None:
            tx_ids.append(None)
            shas.append(None)
            finals.append(None)
            origins.append(None)
            continue
        packed = _compress(blob)
        if embedded + len(packed) > embed_limit:
            left_out += 1
            tx_ids.append(None)
        else:
            element = f"tx-{run_index}-{i}"
            transcripts.append((element, packed))
            tx_ids.append(element)
            embedded += len(packed)
        shas.append(hashlib.sha256(blob).hexdigest())
        try:
            record = json.loads(blob)
        except ValueError:
            record = {}
        finals.append(str(record.get("final_source") or ""))
        origins.append(str(record.get("submission_origin") or ""))
    judged = df.filter(pl.col("status") != "failed") if "status" in df.columns else df
    judges = list(dict.fromkeys(j for j in judged.get_column("judge").to_list() if j)) if judged.height and "judge" in df.columns else []
    keys = ("task", "difficulty", "law_version")
    tasks = {}
    if all(k in df.columns for k in keys):
        for task, difficulty, version in sorted(set(df.select(keys).iter_rows())):
            tasks[f"{task}|{difficulty}|{version}"] = _task_facts(task, difficulty, version)
    from etc_fast.report._tables import condition_keys
    from etc_fast.report._write import CLUSTER_WORDS, run_analysis

    tables, figures = _report_parts(root / "report") if (root / "report").is_dir() else ([], [])
    n_failed = int(df.filter(pl.col("status") == "failed").height) if "status" in df.columns else 0
    data = {
        "name": root.resolve().name,
        "judge": judge_label(root, judges),
        "cluster": CLUSTER_WORDS[run_analysis(root)["cluster"]],
        "models": list(dict.fromkeys(df.get_column("model").to_list())) if "model" in df.columns else [],
        "n_trials": df.height,
        "n_failed": n_failed,
        "transcripts_left_out": left_out,
        "embed_limit_mib": embed_limit / 2**20,
        "condition_keys": condition_keys(df) if df.height else [],
        "trials": trials,
        "transcript": tx_ids,
        "sha256": shas,
        "final_source": finals,
        "submission_origin": origins,
        "tasks": tasks,
        "tables": tables,
        "figures": figures,
    }
    return data, transcripts


# ----------------------------------------------------------------------------------------
# The page
# ----------------------------------------------------------------------------------------
def _static(name: str) -> str:
    return resources.files("etc_fast.report").joinpath("viewer", name).read_text(encoding="utf-8")


def _csp_hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def render_page(runs: Sequence[tuple[dict[str, Any], list[tuple[str, str]]]], *, title: str, mode: str) -> str:
    """The HTML of a page holding ``runs`` (``run_data`` results); ``mode`` = ``run`` or ``compare``
    (the view the page opens on)."""
    import jinja2

    script, style = _static("viewer.js"), _static("viewer.css")
    env = jinja2.Environment(autoescape=True, undefined=jinja2.StrictUndefined, keep_trailing_newline=True)
    template = env.from_string(_static("page.html.j2"))
    data = {"version": DATA_VERSION, "mode": mode, "title": title, "runs": [r for r, _ in runs]}
    transcripts = [t for _, ts in runs for t in ts]
    return template.render(
        title=title,
        style=_markup(style),
        style_hash=_csp_hash(style),
        script=_markup(script),
        script_hash=_csp_hash(script),
        data=_markup(embed_json(data)),
        transcripts=transcripts,
        transcript_type=TRANSCRIPT_TYPE,
    )


def _markup(text: str):
    from markupsafe import Markup

    return Markup(text)


def _write(path: Path, html: str) -> Path:
    from etc_fast.store import atomic_write

    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write(path, html.encode("utf-8"))
    os.chmod(path, 0o644)  # a page to open and share (the temporary file it was written as is private)
    return path


def build_viewer(run_dir: str | os.PathLike[str], *, embed_limit: int = EMBED_LIMIT_BYTES) -> Path:
    """Write ``RUN_DIR/report/index.html`` (the report's tables and figures must already be there,
    as :func:`etc_fast.report.write_report` leaves them; without them the page has trials only).
    ``embed_limit``: bytes of transcripts the page embeds (:func:`run_data`).

    Raises:
        FileNotFoundError: The run has no results table.
    """
    root = Path(run_dir)
    data = run_data(root, embed_limit=embed_limit)
    return _write(root / "report" / VIEWER_FILE, render_page([data], title=f"etc_fast run {data[0]['name']}", mode="run"))


#: What pairs two trials in the compare view (and in :func:`compare_table`).
PAIR_KEYS = ("task", "difficulty", "law_version", "noise", "rollout")


def compare_table(run_a: str | os.PathLike[str], run_b: str | os.PathLike[str]) -> pl.DataFrame:
    """Per configuration that both runs ran: trials paired on :data:`PAIR_KEYS`, credits B gained
    and lost, and the mean B - A of RMSLE (pairs with both finite) and of measurements."""
    from etc_fast.report._load import load_trials

    cols = ["configuration", *PAIR_KEYS, "credited", "rmsle", "measurements"]
    a, b = load_trials(run_a).select(cols), load_trials(run_b).select(cols)
    pairs = a.join(b, on=["configuration", *PAIR_KEYS], suffix="_b")
    finite = pl.col("rmsle").is_finite() & pl.col("rmsle_b").is_finite()
    order = list(dict.fromkeys(a.get_column("configuration").to_list()))
    return (
        pairs.group_by("configuration")
        .agg(
            pairs=pl.len(),
            gained=(~pl.col("credited") & pl.col("credited_b")).sum(),
            lost=(pl.col("credited") & ~pl.col("credited_b")).sum(),
            credited_a=pl.col("credited").sum(),
            credited_b=pl.col("credited_b").sum(),
            rmsle_delta_mean=(pl.col("rmsle_b") - pl.col("rmsle")).filter(finite).mean(),
            measurements_delta_mean=(pl.col("measurements_b") - pl.col("measurements")).cast(pl.Float64).mean(),
        )
        .sort(pl.col("configuration").replace_strict(order, list(range(len(order))), return_dtype=pl.Int64))
    )


def build_compare(run_a: str | os.PathLike[str], run_b: str | os.PathLike[str], out: str | os.PathLike[str]) -> Path:
    """Write ``OUT/index.html``: one page holding both runs, opened on the compare view (each
    configuration of one run against each of the other, trials paired by task, difficulty, law
    version, noise and rollout)."""
    a, b = run_data(run_a, run_index=0), run_data(run_b, run_index=1)
    if a[0]["name"] == b[0]["name"]:
        a[0]["name"], b[0]["name"] = f"A: {a[0]['name']}", f"B: {b[0]['name']}"
    title = f"etc_fast compare {a[0]['name']} vs {b[0]['name']}"
    return _write(Path(out) / VIEWER_FILE, render_page([a, b], title=title, mode="compare"))
