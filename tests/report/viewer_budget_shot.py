"""A screenshot of the study view's first budget-curve section, for docs/ (from a run with budgets,
such as configs/followups.yaml). It also fails when the section is missing or the page errs.

    python -m tests.report.viewer_budget_shot RUN_DIR OUT_PNG

Not a test: tests/report/test_viewer_browser.py tests the section itself.
"""

from __future__ import annotations

import sys
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    run, out = (Path(a) for a in (argv or sys.argv[1:]))
    from playwright.sync_api import sync_playwright

    from etc_fast.report._viewer import VIEWER_FILE
    from tests.report.test_viewer_browser import FLAGS, _browser_path
    from tests.report.viewer_shots import _shrink

    url = (run / "report" / VIEWER_FILE).as_uri() + "#view=study"
    errors: list[str] = []
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=_browser_path(), args=FLAGS)
        page = b.new_page(viewport={"width": 1280, "height": 900})
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.goto(url)
        page.wait_for_selector("#app[data-view]")
        sections = page.locator("[id^='budget-curves-']")
        n = sections.count()
        if n == 0:
            print("no budget-curve section in the study view", file=sys.stderr)
            return 1
        print(f"{n} budget-curve sections; points per section:",
              [sections.nth(i).locator("svg.budget-plot circle.pt").count() for i in range(n)])
        # the sticky page header would be drawn over the middle of a tall element screenshot
        # (the page's CSP refuses a style tag; the CSSOM is allowed)
        page.evaluate("document.querySelector('header#top').style.position = 'static'")
        sections.first.screenshot(path=str(out))
        b.close()
    _shrink(out)
    print(out, out.stat().st_size)
    if errors:
        print("page errors:", errors, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
