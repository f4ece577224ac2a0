"""The built documentation site in a real headless Chromium, opened from disk (file://).

The browser is the system's, found and driven as the viewer's browser tests do
(tests/report/test_viewer_browser.py); in CI (``CI=true``) a missing browser fails these tests.
Every request that is not a file of the site is aborted and reported: the site must need no network.
"""

from __future__ import annotations

import re

import pytest

from tests.docs._site import DOCS, unavailable
from tests.report.test_viewer_browser import launch_chromium

#: (built page, its Markdown source): the home page, a guide page, the configuration reference, the API.
PAGES = [("index.html", "index.md"), ("guide/protocol.html", "guide/protocol.md"),
         ("reference/config.html", "reference/config.md"), ("reference/api.html", "reference/api.md")]


@pytest.fixture(scope="module")
def browser():
    yield from launch_chromium(unavailable)


class Tab:
    """One page of the site with its console errors and the requests that left the site (aborted)."""

    def __init__(self, browser, site) -> None:
        self.ctx = browser.new_context(viewport={"width": 1280, "height": 900})
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.ctx.route("**/*", self._route)
        self.page = self.ctx.new_page()
        self.page.on("pageerror", lambda e: self.errors.append(f"pageerror: {e}"))
        self.page.on("console", lambda m: self.errors.append(f"console: {m.text}") if m.type == "error" else None)
        self.site = site

    def _route(self, route) -> None:
        url = route.request.url
        if url.startswith(("file://", "data:", "blob:", "about:")):
            route.continue_()
        else:
            self.outside.append(url)
            route.abort()

    def open(self, path: str):
        self.page.goto((self.site / path).as_uri())
        self.page.wait_for_load_state("load")
        return self.page

    def close(self) -> None:
        self.ctx.close()
        assert self.errors == [], self.errors
        assert self.outside == [], f"the site made network requests: {self.outside}"


@pytest.fixture
def tab(browser, site):
    t = Tab(browser, site)
    yield t
    t.close()


def _title(source: str) -> str:
    """The first ``# `` heading of a Markdown page under docs/."""
    text = (DOCS / source).read_text(encoding="utf-8")
    return next(line[2:].strip() for line in text.splitlines() if line.startswith("# "))


@pytest.mark.parametrize(("path", "source"), PAGES, ids=[p for p, _ in PAGES])
def test_page_renders_from_disk(tab, path, source):
    page = tab.open(path)
    title = _title(source)
    assert page.locator("article h1").first.inner_text().replace("¶", "").strip() == title
    # the window title is the page's nav label, then the site's name
    assert (page.title() == "etc_fast") if path == "index.html" else page.title().endswith(" - etc_fast")
    nav = page.locator("nav.md-nav--primary")
    assert nav.count() >= 1
    labels = nav.first.locator("label, a").all_inner_texts()
    for section in ("Guide", "How-to", "Reference"):
        assert any(label.strip() == section for label in labels), f"no nav section {section!r} in {labels[:40]}"
    assert page.locator("article").first.inner_text().strip() != title  # the page has a body


def test_config_reference_lists_the_validator_keys(tab):
    from etc_fast.runner import CONFIG_KEYS

    page = tab.open("reference/config.html")
    codes = set(page.locator("article table td:first-child code").all_inner_texts())
    assert {k.name for k in CONFIG_KEYS} <= codes


def test_api_page_renders_docstrings(tab):
    page = tab.open("reference/api.html")
    headings = page.locator("article .doc-heading").all_inner_texts()
    assert len(headings) > 50
    assert any(re.search(r"\betc_fast\.runner\b", h) for h in headings)


def test_search_works_offline(tab):
    page = tab.open("index.html")
    page.wait_for_selector("input.md-search__input", state="attached")
    page.keyboard.press("s")  # the search shortcut focuses the search box
    page.keyboard.type("trial_timeout_s", delay=20)
    page.wait_for_selector(".md-search-result__item", timeout=20_000)
    hrefs = [a.get_attribute("href") or "" for a in page.locator(".md-search-result__item a").all()]
    assert any("reference/config.html" in h for h in hrefs), hrefs
