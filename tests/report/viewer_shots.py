"""Screenshots of the viewer for docs/img/ (from a run of configs/full.yaml).

    python -m tests.report.viewer_shots RUN_DIR docs/img

Writes viewer-study.png, viewer-trials.png, viewer-trial.png, viewer-trial-turn.png and
viewer-compare.png (256-colour PNGs, to keep them small). Not a test.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import polars as pl


def _shrink(path: Path) -> None:
    from PIL import Image

    img = Image.open(path).convert("RGB")
    img.quantize(colors=128, method=Image.Quantize.MEDIANCUT, dither=Image.Dither.NONE).save(path, optimize=True)


@contextmanager
def viewer_page(width: int, height: int) -> Iterator[tuple[Any, list[str]]]:
    """A headless Chromium page (the browser tests' binary and flags) and the list its page errors
    are appended to; the browser is closed on exit."""
    from playwright.sync_api import sync_playwright

    from tests.report.test_viewer_browser import FLAGS, _browser_path

    errors: list[str] = []
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=_browser_path(), args=FLAGS)
        page = b.new_page(viewport={"width": width, "height": height})
        page.on("pageerror", lambda e: errors.append(str(e)))
        try:
            yield page, errors
        finally:
            b.close()


def saved_shot(path: Path) -> None:
    """Shrink a screenshot to 128 colours and say where it went and its size."""
    _shrink(path)
    print(path, path.stat().st_size)


def page_errors_status(errors: list[str]) -> int:
    """The exit status of a screenshot script: 1 (and the errors on stderr) when the page erred."""
    if errors:
        print("page errors:", errors, file=sys.stderr)
        return 1
    return 0


def main(argv=None) -> int:
    run, docs = (Path(a) for a in (argv or sys.argv[1:]))
    from etc_fast.report._viewer import VIEWER_FILE

    df = pl.read_parquet(run / "trials.parquet")
    planner = df.filter((pl.col("configuration") == "variance_c") & (pl.col("task") == "m4_snell_law") & (pl.col("difficulty") == "medium"))
    tid = planner.sort("rollout").get_column("trial_id")[0]
    keys = ["task", "difficulty", "law_version", "noise", "rollout"]
    base = df.filter(pl.col("configuration") == "baseline_n").join(df.filter(pl.col("configuration") == "variance_c"), on=keys, suffix="_b")
    base = base.filter(~pl.col("credited") & pl.col("credited_b"))
    pair = None
    if base.height:
        r = base.sort("task", "difficulty", "rollout").row(0, named=True)
        pair = "|".join([r["task"], r["difficulty"], r["law_version"], repr(r["noise"]).rstrip("0").rstrip(".") if r["noise"] else "0", str(r["rollout"])])
    url = (run / "report" / VIEWER_FILE).as_uri()
    shots = {
        "viewer-study.png": ("#view=study", None),
        "viewer-trials.png": ("#view=trials&c.configuration=baseline_n&c.credited=false&sort=-rmsle", None),
        "viewer-trial.png": (f"#view=trial&run=0&id={tid}", None),
        "viewer-trial-turn.png": (f"#view=trial&run=0&id={tid}", ".turn-detail"),
        "viewer-compare.png": ("#view=compare&a=0|symbolic|baseline_n&b=0|symbolic|variance_c&show=changed" + (f"&pair={pair}" if pair else ""), None),
    }
    with viewer_page(1280, 820) as (page, errors):
        for name, (frag, anchor) in shots.items():
            page.goto("about:blank")
            page.goto(url + frag)
            page.wait_for_selector("#app[data-view]")
            page.wait_for_timeout(400)
            if name == "viewer-compare.png":
                page.set_viewport_size({"width": 1280, "height": 1500})
                page.wait_for_timeout(300)
                page.evaluate("window.scrollTo(0, 0)")
            if anchor:
                page.locator(anchor).first.evaluate("e => e.scrollIntoView({block: 'start'})")
                page.mouse.wheel(0, -40)
                page.wait_for_timeout(200)
            page.screenshot(path=str(docs / name))
            saved_shot(docs / name)
    return page_errors_status(errors)


if __name__ == "__main__":
    sys.exit(main())
