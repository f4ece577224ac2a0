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
    from etc_fast.report._viewer import VIEWER_FILE
    from tests.report.viewer_shots import page_errors_status, saved_shot, viewer_page

    url = (run / "report" / VIEWER_FILE).as_uri() + "#view=study"
    with viewer_page(1280, 900) as (page, errors):
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
    saved_shot(out)
    return page_errors_status(errors)

if __name__ == "__main__":
    sys.exit(main())
