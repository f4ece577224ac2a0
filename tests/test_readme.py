"""The Python examples of the README and of every page under docs/ run as written; the README stays
short; every relative link of the docs resolves."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
PAGES = [ROOT / "README.md", *sorted(DOCS.rglob("*.md"))]
#: A block right after this comment needs the example task file on disk; tests/tasks/test_tasks_doc.py
#: writes that file and runs the block there.
RUN_ELSEWHERE = "<!-- example python -->"


def _blocks(page: Path) -> list[str]:
    """The ```python blocks of ``page`` that run on their own."""
    text = page.read_text(encoding="utf-8")
    return [m.group(2) for m in re.finditer(r"(<!-- [^>]*-->\s*)?```python\n(.*?)```", text, re.S)
            if (m.group(1) or "").strip() != RUN_ELSEWHERE]


#: Each page with examples, and its blocks in page order: a page's blocks run one after another in one
#: namespace, as a reader would type them, so a later block may use what an earlier one defined.
EXAMPLES = [(page.relative_to(ROOT).as_posix(), blocks) for page in PAGES if (blocks := _blocks(page))]


def test_docs_have_examples():
    assert sum(len(blocks) for _, blocks in EXAMPLES) >= 3


def test_readme_is_short():
    assert len((ROOT / "README.md").read_bytes()) <= 12 * 1024


def test_readme_links_resolve():
    for page in PAGES:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: link to {target} does not resolve"


@pytest.mark.parametrize("page", range(len(EXAMPLES)), ids=[name for name, _ in EXAMPLES])
def test_examples_run(page, tmp_path, monkeypatch):
    name, blocks = EXAMPLES[page]
    monkeypatch.chdir(tmp_path)  # files an example writes land in a temporary directory
    namespace: dict = {}
    for index, block in enumerate(blocks):
        exec(compile(block, f"{name} example {index}", "exec"), namespace)
