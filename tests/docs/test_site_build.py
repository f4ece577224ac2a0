"""The documentation site builds with ``mkdocs build --strict``, every internal link and anchor of
the built HTML resolves, the changelog is one source, and no page loads anything from outside."""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import unquote, urlsplit

from tests.docs._site import DOCS, ROOT, parse


def _nav_pages() -> list[str]:
    text = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    nav = text[text.index("\nnav:"):]
    listed = re.findall(r"([\w/.-]+\.md)\s*$", nav, re.M)
    # the generated results pages join the nav at build time (etc_fast/docs/_hooks.py)
    from etc_fast.docs._hooks import results_nav

    results = [e for e in results_nav(DOCS, []) if isinstance(e, dict)]
    return listed + [p for e in results for p in e.values() if p not in listed]


def test_nav_lists_every_page_once():
    nav = _nav_pages()
    assert len(nav) == len(set(nav)), f"pages listed twice in mkdocs.yml: {sorted(p for p in nav if nav.count(p) > 1)}"
    pages = sorted(p.relative_to(DOCS).as_posix() for p in DOCS.rglob("*.md"))
    assert sorted(set(pages) - set(nav)) == [], "pages under docs/ missing from the nav of mkdocs.yml"
    assert sorted(set(nav) - set(pages)) == [], "pages in the nav of mkdocs.yml that docs/ does not have"


def test_strict_build_succeeds_without_warnings(site_build):
    _, proc = site_build
    warnings = [line for line in proc.stderr.splitlines() if re.match(r"^(WARNING|ERROR)\b", line)]
    assert proc.returncode == 0 and warnings == [], f"exit {proc.returncode}:\n" + "\n".join(warnings or [proc.stderr[-4000:]])


def test_changelog_page_is_the_changelog(site):
    first = next(line for line in (ROOT / "CHANGELOG.md").read_text(encoding="utf-8").splitlines() if line.startswith("## "))
    assert (DOCS / "changelog.md").read_text(encoding="utf-8").strip() == '--8<-- "CHANGELOG.md"'
    html = (site / "changelog.html").read_text(encoding="utf-8")
    assert first[3:].strip() in html


def test_pages_load_nothing_from_outside_the_site(site):
    outside = {}
    for page in site.rglob("*.html"):
        for src in parse(page).assets:
            if urlsplit(src).scheme or src.startswith("//"):
                outside.setdefault(src, page.relative_to(site).as_posix())
    assert outside == {}, f"assets from outside the site (asset: first page): {outside}"


def test_every_internal_link_and_anchor_resolves(site):
    parsed: dict[Path, object] = {}

    def links(path: Path):
        if path not in parsed:
            parsed[path] = parse(path)
        return parsed[path]

    broken: list[str] = []
    pages = sorted(site.rglob("*.html"))
    n_links = 0
    for page in pages:
        for href in links(page).hrefs:
            parts = urlsplit(href)
            if parts.scheme or href.startswith("//"):
                continue
            n_links += 1
            if not parts.path:
                target = page
            elif parts.path.startswith("/"):  # the 404 page's links are from the site's root
                target = site / unquote(parts.path).lstrip("/")
            else:
                target = (page.parent / unquote(parts.path)).resolve()
            if target.is_dir():
                target = target / "index.html"
            where = f"{page.relative_to(site)}: {href}"
            if not target.is_file():
                broken.append(f"{where} (no file {target})")
                continue
            if parts.fragment and target.suffix == ".html" and unquote(parts.fragment) not in links(target).ids:
                broken.append(f"{where} (no anchor #{parts.fragment})")
    assert len(pages) >= 30 and n_links > 1000
    assert broken == [], f"{len(broken)} broken internal links:\n" + "\n".join(broken[:50])
