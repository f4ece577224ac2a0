"""Screenshots of the documentation site: the home page, a guide page and the configuration reference.

    python -m tests.docs.site_shots OUT_DIR [--site BUILT_SITE] [--width 1280] [--height 900]

Without ``--site`` the site is built first (``mkdocs build --strict`` into a temporary folder). The
browser is the system's Chromium, found as the browser tests find it. Writes ``OUT_DIR/home.png``,
``OUT_DIR/guide.png`` and ``OUT_DIR/config.png`` and prints each path with its size. Exit status: 0
when the three were written, 2 when the site cannot be built or no browser is found.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

#: (file name, page of the built site)
SHOTS = (("home.png", "index.html"), ("guide.png", "guide/protocol.html"), ("config.png", "reference/config.html"))


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m tests.docs.site_shots", description=__doc__.splitlines()[0])
    p.add_argument("out", type=Path, help="folder for the PNG files (created)")
    p.add_argument("--site", type=Path, default=None, help="an already built site (default: build one)")
    p.add_argument("--width", type=int, default=1280)
    p.add_argument("--height", type=int, default=900)
    args = p.parse_args(argv)
    from playwright.sync_api import sync_playwright

    from tests.docs._site import build
    from tests.report.test_viewer_browser import FLAGS, _browser_path

    browser_path = _browser_path()
    if browser_path is None:
        print("site_shots: error: no system Chromium found (set ETC_FAST_CHROMIUM)", file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory() as tmp:
        site = args.site
        if site is None:
            site = Path(tmp) / "site"
            proc = build(site)
            if proc.returncode != 0:
                print(f"site_shots: error: mkdocs build --strict failed:\n{proc.stderr[-4000:]}", file=sys.stderr)
                return 2
        args.out.mkdir(parents=True, exist_ok=True)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=browser_path, args=FLAGS)
            ctx = browser.new_context(viewport={"width": args.width, "height": args.height})
            page = ctx.new_page()
            for name, path in SHOTS:
                page.goto((site / path).as_uri())
                page.wait_for_load_state("load")
                page.screenshot(path=str(args.out / name))
                print(f"{args.out / name} ({(args.out / name).stat().st_size:,} bytes)")
            browser.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
