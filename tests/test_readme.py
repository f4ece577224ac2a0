"""The Python examples of the README and of docs/usage.md run as written; the README stays short."""

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", ROOT / "docs" / "usage.md"]
BLOCKS = [(page.name, block) for page in PAGES for block in re.findall(r"```python\n(.*?)```", page.read_text(), re.S)]


def test_docs_have_examples():
    assert len(BLOCKS) >= 3


def test_readme_is_short():
    assert len((ROOT / "README.md").read_bytes()) <= 12 * 1024


def test_readme_links_resolve():
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", page.read_text()):
            if "://" in target:
                continue
            assert (page.parent / target).exists(), f"{page.relative_to(ROOT)}: link to {target} does not resolve"


@pytest.mark.parametrize("index", range(len(BLOCKS)))
def test_example_runs(index):
    name, block = BLOCKS[index]
    exec(compile(block, f"{name} example {index}", "exec"), {})
