"""Size and load time of the viewer for a large synthetic LLM study (docs/guide/viewer.md).

    python -m tests.report.viewer_measure OUT_DIR [--trials-per-cell N]

Writes a 576-trial run (8 configurations x 12 modules x easy/medium x 3 rollouts, each with a
16-call chat of LLM-sized prompts and replies) with the real store and report, builds its viewer,
and opens it in the system's headless Chromium from file://: time to the study view, to the
trials table with every row, and to one opened trial (its transcript decompressed and drawn).
Prints one JSON line. Not a test: the numbers depend on the machine and its load.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import zlib
from pathlib import Path

CONFIGS = ("baseline_n", "baseline_c", "variance_n", "pairwise_n", "random_n", "variance_c", "pairwise_c", "random_c")
MODULES = ("m0_gravity", "m1_coulomb_force", "m2_magnetic_force", "m3_fourier_law", "m4_snell_law", "m5_radioactive_decay",
           "m6_underdamped_harmonic", "m7_malus_law", "m8_sound_speed", "m9_hooke_law", "m10_be_distribution", "m11_heat_transfer")


def main(argv=None) -> int:
    p = argparse.ArgumentParser()
    p.add_argument("out")
    p.add_argument("--rollouts", type=int, default=3)
    p.add_argument("--calls", type=int, default=16)
    p.add_argument("--chars", type=int, default=4000, help="characters of each prompt (replies: half)")
    args = p.parse_args(argv)
    from etc_fast.report._viewer import build_viewer
    from tests.report._viewer_run import make_run
    from tests.report.test_viewer_browser import FLAGS, _browser_path

    root = Path(args.out)
    t0 = time.perf_counter()
    if not (root / "trials.jsonl").exists():
        make_run(root, configs=CONFIGS, tasks=MODULES, difficulties=("easy", "medium"), rollouts=args.rollouts,
                 model="gpt41mini", chat_calls=args.calls, chat_chars=args.chars, n_draws=1000)
    t1 = time.perf_counter()
    page = build_viewer(root)
    t2 = time.perf_counter()
    blobs = [q.read_bytes() for q in (root / "transcripts").glob("*.json")]
    out = {"trials": len(blobs), "transcripts_mb": round(sum(map(len, blobs)) / 1e6, 2),
           "deflated_mb": round(sum(len(zlib.compress(b, 9)) for b in blobs) / 1e6, 2),
           "page_mb": round(page.stat().st_size / 1e6, 2), "build_s": round(t2 - t1, 2), "generate_s": round(t1 - t0, 1)}
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=_browser_path(), args=FLAGS)
        tab = b.new_page(viewport={"width": 1280, "height": 900})
        errors: list[str] = []
        tab.on("pageerror", lambda e: errors.append(str(e)))
        for view, ready in (("study", "#heatmap-0"), ("trials", "#trials-table tbody tr"), ("trial", "#trial-body[data-ready] svg.plot")):
            frag = "#view=" + view + (f"&run=0&id={json.loads(blobs[-1])['trial_id']}" if view == "trial" else "")
            tab.goto("about:blank")
            s = time.perf_counter()
            tab.goto(page.as_uri() + frag)
            tab.wait_for_selector(ready, timeout=120_000)
            out[f"load_{view}_s"] = round(time.perf_counter() - s, 2)
        tab.goto(page.as_uri() + "#view=trials")
        tab.wait_for_selector("#trials-table tbody tr")
        out["rows_shown"] = int(tab.locator("#trial-count").inner_text())
        out["page_errors"] = errors
        b.close()
    print(json.dumps(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
