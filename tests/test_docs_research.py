"""The research-facing guide and how-to pages stay true: their examples run, their study configs
load, their links land in the site's page tree, their knob tables are the code's defaults, and they
stay within their size budget."""

from __future__ import annotations

import inspect
import re
import unicodedata
from pathlib import Path

import pytest
import yaml

from etc_fast.core import NOISE_KNOB_DEFAULTS
from etc_fast.policies.symbolic import SymbolicPolicy
from etc_fast.runner import parse_config

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [
    "guide/labs.md", "guide/offline-agent.md", "guide/acquisition.md", "guide/noise.md", "guide/statistics.md",
    "guide/fidelity.md", "howto/own-acquisition.md", "howto/new-lab.md", "howto/reproduce-paper.md",
    "howto/equal-budget.md",
]
#: The documentation site's pages (docs/ paths) that these pages may link to.
SITE = set(PAGES) | {
    "index.md", "getting-started.md", "guide/protocol.md", "guide/configs.md", "guide/tasks.md", "guide/generated.md",
    "guide/model-selection.md", "guide/llm.md", "guide/judge.md", "guide/sandbox.md", "guide/viewer.md",
    "guide/ray.md", "guide/reproducibility.md", "howto/own-law.md", "howto/own-llm.md", "howto/several-machines.md",
    "reference/config.md", "reference/cli.md", "reference/outputs.md", "reference/api.md", "reference/kernels.md",
    "results/index.md", "changelog.md", "contributing.md",
}
TEXT = {page: (DOCS / page).read_text(encoding="utf-8") for page in PAGES}
PYTHON = [(page, i, block) for page in PAGES
          for i, block in enumerate(re.findall(r"```python\n(.*?)```", TEXT[page], re.S))]
STUDIES = [(page, block) for page in PAGES for block in re.findall(r"```yaml\n(.*?)```", TEXT[page], re.S)
           if "grids:" in block]


def _slug(heading: str) -> str:
    """The anchor MkDocs gives a heading (Python-Markdown's default slugify of the rendered text)."""
    text = re.sub(r"[`*]", "", heading)
    text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    text = re.sub(r"[^\w\s-]", "", text).strip().lower()
    return re.sub(r"[-\s]+", "-", text)


def _anchors(page: str) -> set[str]:
    body = re.sub(r"```.*?```", "", TEXT[page], flags=re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6} (.+)$", body, re.M)}


def _table(page: str, heading: str) -> dict[str, list[str]]:
    """First cell (without backticks) -> the row's cells, for the first table under ``heading``."""
    section = TEXT[page].split(heading, 1)[1]
    rows: dict[str, list[str]] = {}
    for line in section.splitlines():
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set(cells[0]) <= {"-", ":"}:
                rows[cells[0].strip("`")] = cells
        elif rows:
            break
    return rows


def test_pages_exist_and_fit_the_budget():
    total = sum(len((DOCS / page).read_bytes()) for page in PAGES)
    assert total <= 90 * 1024, f"the research pages hold {total} bytes, over their 90 KB budget"


@pytest.mark.parametrize("page", PAGES)
def test_no_history_in_pages(page):
    for pattern in (r"\bstop \d+", r"\bissue\b", r"#\d+\b", r"\bused to\b", r"\bbefore this change\b"):
        hit = re.search(pattern, TEXT[page], re.I)
        assert hit is None, f"{page}: history in a what-is-true-now page: {hit.group(0)!r}"


@pytest.mark.parametrize("page", PAGES)
def test_links_land_in_the_site(page):
    for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", TEXT[page]):
        if "://" in target:
            continue
        resolved = (Path(page).parent / target).as_posix() if target else page
        parts: list[str] = []
        for part in resolved.split("/"):
            if part == "..":
                parts.pop()
            elif part != ".":
                parts.append(part)
        resolved = "/".join(parts)
        if resolved.endswith(".md"):
            assert resolved in SITE, f"{page}: link to {target} is not a page of the site"
            if anchor and resolved in TEXT:
                assert anchor in _anchors(resolved), f"{page}: no heading #{anchor} in {resolved}"
        else:
            assert (DOCS / resolved).is_file(), f"{page}: link to {target} does not resolve"


@pytest.mark.parametrize("index", range(len(PYTHON)))
def test_python_examples_run(index):
    page, i, block = PYTHON[index]
    exec(compile(block, f"{page} example {i}", "exec"), {})


def test_there_are_examples_and_studies():
    assert len(PYTHON) >= 5 and len(STUDIES) >= 3


@pytest.mark.parametrize("index", range(len(STUDIES)))
def test_study_configs_load(index):
    page, block = STUDIES[index]
    cfg = parse_config(yaml.safe_load(block), source=f"{page} study")
    assert cfg.grids, page


def test_noise_knob_table_is_the_code():
    rows = _table("guide/noise.md", "## The knobs")
    assert set(rows) - {"knob"} == set(NOISE_KNOB_DEFAULTS)
    for name, default in NOISE_KNOB_DEFAULTS.items():
        assert rows[name][1].strip("`").split()[0] == str(default).lower(), name


def test_symbolic_knob_table_is_the_code():
    rows = _table("guide/offline-agent.md", "`symbolic:` block")
    params = inspect.signature(SymbolicPolicy.__init__).parameters
    documented = set(rows) - {"key"}
    assert documented == {n for n in params if n not in ("self", "seed", "limits", "removed")}
    for name in documented:
        default = params[name].default
        want = {None: "null", True: "true", False: "false"}.get(default, str(default))
        if name == "memory_limit_mb":  # None means the SearchLimits default
            from etc_fast.policies.symbolic._search import SearchLimits

            want = str(SearchLimits().memory_limit_mb)
        elif isinstance(default, float) and default.is_integer():
            want = str(int(default))
        assert rows[name][1].strip("`") == want, name


def test_constants_quoted_are_the_code():
    from etc_fast import acquisition as acq
    from etc_fast.policies.symbolic import _policy, _search
    from etc_fast.report import _budget
    from kernels import gp

    quoted = [
        ("guide/noise.md", "`KAPPA_FIT σ̂` (3 σ̂)", acq.KAPPA_FIT == 3.0),
        ("guide/noise.md", "(2 σ̂: a gap", acq.KAPPA_DISAGREE == 2.0),
        ("guide/noise.md", "`NOISE_FLOOR` (1e-6)", acq.NOISE_FLOOR == 1e-6),
        ("guide/noise.md", "`EXPLORE_MARGIN` = 0.08", acq.EXPLORE_MARGIN == 0.08),
        ("guide/noise.md", "`MIN_REPLICATE_PAIRS` (2)", acq.MIN_REPLICATE_PAIRS == 2),
        ("guide/acquisition.md", "`KAPPA_UCB` = 2.0", acq.KAPPA_UCB == 2.0),
        ("guide/acquisition.md", "12 values of\n`LENGTH_GRID` (log-spaced 1/8 to 8)",
         len(gp.LENGTH_GRID) == 12 and gp.LENGTH_GRID[0] == 1 / 8 and gp.LENGTH_GRID[-1] == 8),
        ("guide/acquisition.md", "(`FIT_PASSES`)", gp.FIT_PASSES == 2),
        ("guide/acquisition.md", "`NUGGET_GRID` (1e-6 to 0.1, one per decade)",
         len(gp.NUGGET_GRID) == 6 and abs(gp.NUGGET_GRID[0] - 1e-6) < 1e-18 and abs(gp.NUGGET_GRID[-1] - 0.1) < 1e-15),
        ("guide/acquisition.md", "(`MIN_GP_OBSERVATIONS`)", acq.MIN_GP_OBSERVATIONS == 2),
        ("guide/offline-agent.md", "0.35 · complexity` (`COMPLEXITY_WEIGHT`)", _search.COMPLEXITY_WEIGHT == 0.35),
        ("guide/offline-agent.md", "9 decimals (`SCORE_DIGITS`)", _search.SCORE_DIGITS == 9),
        ("guide/offline-agent.md", "1% relative noise (`ASSUMED_NOISE`)", _policy.ASSUMED_NOISE == 0.01),
        ("guide/offline-agent.md", "has 3 records more than its parameters", _policy.SymbolicPolicy(seed=0).margin == 3),
        ("guide/statistics.md", "target SA (0.5, 0.7, 0.9)", _budget.TARGETS == (0.5, 0.7, 0.9)),
        ("guide/statistics.md", "(0.05, 0.1 and 0.2 are tabulated)", _budget.DELTAS == (0.05, 0.1, 0.2)),
    ]
    for page, phrase, true in quoted:
        assert phrase in TEXT[page], f"{page} no longer says {phrase!r}: update this test with the page"
        assert true, f"{page} says {phrase!r}, which the code no longer holds"
