"""The documentation stays within its size budget and states what is true, not how it came to be:
no history markers outside CHANGELOG.md (which docs/changelog.md only includes)."""

from __future__ import annotations

import re

import pytest

from tests.docs._site import DOCS

#: The written pages (docs/**/*.md outside docs/results/), in bytes.
MAX_BYTES = 226_000
#: The generated results pages (docs/results/*.md): tables whose size the stored studies set, held
#: apart so that a large study's page never pushes prose out.
MAX_GENERATED_BYTES = 64_000

_MARKERS = {
    "stop N": re.compile(r"\bstop \d+", re.I),
    "issue N": re.compile(r"\bissue #?\d+", re.I),
    # a commit hash: 7-40 hex digits, at least one a digit and one a letter, in backticks or
    # parentheses, or after the word "commit"
    "commit hash": re.compile(r"(?:[`(]|\bcommit )(?=[0-9a-f]*[a-f])(?=[0-9a-f]*[0-9])[0-9a-f]{7,40}(?:[`)]|\b)", re.I),
}
#: Commits of NewtonBench (the anchor the tasks follow, named by its commits because it has no
#: releases): facts about another project's version, not this project's history.
NEWTONBENCH_COMMITS = frozenset({"912a4ba", "8ad4404", "a2acbec"})
#: The generated results pages state the commit each stored run was made on (its provenance).
PROVENANCE_PAGES = "results/"
_FENCE = re.compile(r"^(```|~~~).*?^\1\s*$", re.M | re.S)


def _pages():
    return sorted(DOCS.rglob("*.md"))


@pytest.mark.parametrize("generated", [False, True], ids=["written", "generated"])
def test_docs_fit_their_size_budget(generated):
    sizes = {p.relative_to(DOCS).as_posix(): p.stat().st_size for p in _pages()}
    sizes = {k: v for k, v in sizes.items() if k.startswith(PROVENANCE_PAGES) == generated}
    total, limit = sum(sizes.values()), MAX_GENERATED_BYTES if generated else MAX_BYTES
    largest = sorted(sizes.items(), key=lambda kv: -kv[1])[:5]
    what = "docs/results/*.md" if generated else "docs/**/*.md outside docs/results/"
    assert sizes and total <= limit, f"{what} is {total:,} bytes, over {limit:,}; largest: {largest}"


def test_no_history_markers_outside_code_blocks():
    found = []
    for page in _pages():
        text = _FENCE.sub(lambda m: "\n" * m.group(0).count("\n"), page.read_text(encoding="utf-8"))
        for line_no, line in enumerate(text.splitlines(), 1):
            for name, pattern in _MARKERS.items():
                for m in pattern.finditer(line):
                    if name == "commit hash" and (m.group(0).strip("`() ").removeprefix("commit ").strip()
                                                  in NEWTONBENCH_COMMITS
                                                  or page.relative_to(DOCS).as_posix().startswith(PROVENANCE_PAGES)):
                        continue
                    found.append(f"docs/{page.relative_to(DOCS).as_posix()}:{line_no}: {name}: {m.group(0)!r}")
    assert found == [], f"{len(found)} history markers (history goes to changelog.d/):\n" + "\n".join(found[:60])


def test_markers_are_found():
    """The patterns catch what they are for, and leave ordinary words and code blocks alone."""
    def hits(text: str) -> list[str]:
        text = _FENCE.sub("", text)
        return [name for name, p in _MARKERS.items() if p.search(text)]

    assert hits("measured at stop 53") == ["stop N"]
    assert hits("see Issue #25 and issue 7") == ["issue N"]
    assert hits("old kernels (commit 5f3f4c0)") == ["commit hash"]
    assert hits("at `774c74d17080`") == ["commit hash"]
    assert hits("the `deadbeef` word, `facade`, (decade) and 1234567 are not hashes; nor is `12345678`") == []
    assert hits("```text\nrefused: sha256 774c74d17080 differs\n```\n") == []
