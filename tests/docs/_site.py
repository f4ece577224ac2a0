"""Building the documentation site for the tests, and reading the built HTML.

The site is built with the ``docs`` extra (``pip install -e '.[docs]'``). Where MkDocs, Material
or mkdocstrings is missing the tests that need the site are skipped with the reason, except in CI
(``CI=true``), where they fail: CI installs the extra and must build the site.
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
#: The modules the build needs (the ``docs`` extra).
NEEDS = ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python")


def unavailable(why: str) -> None:
    """Skip with ``why``, or fail under ``CI=true`` (as the viewer's browser tests do)."""
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI must build and open the documentation site: {why}")
    pytest.skip(why)


def missing_packages() -> list[str]:
    """The modules of :data:`NEEDS` that cannot be imported here."""
    out = []
    for name in NEEDS:
        try:
            found = importlib.util.find_spec(name) is not None
        except ModuleNotFoundError:
            found = False
        if not found:
            out.append(name)
    return out


def build(dest: Path) -> subprocess.CompletedProcess[str]:
    """``mkdocs build --strict`` of the checkout into ``dest``; its output is returned, not checked."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1", "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--config-file", str(ROOT / "mkdocs.yml"),
         "--site-dir", str(dest)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900, check=False,
    )


class PageLinks(HTMLParser):
    """The ``href`` of every ``<a>``, and every ``id`` and ``name``, of one HTML page."""

    def __init__(self) -> None:
        super().__init__()
        self.hrefs: list[str] = []
        self.ids: set[str] = set()
        self.assets: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = dict(attrs)
        for key in ("id", "name"):
            if a.get(key):
                self.ids.add(a[key] or "")
        if tag == "a" and a.get("href"):
            self.hrefs.append(a["href"] or "")
        if tag in ("script", "img", "iframe", "source") and a.get("src"):
            self.assets.append(a["src"] or "")
        if tag == "link" and a.get("href") and "stylesheet" in (a.get("rel") or "") + (a.get("as") or ""):
            self.assets.append(a["href"] or "")


def parse(path: Path) -> PageLinks:
    """The links, anchors and assets of the HTML page ``path``."""
    p = PageLinks()
    p.feed(path.read_text(encoding="utf-8"))
    return p
