"""Many LLM trials at once: wall time against the critical path, and memory of the whole run.

A stand-in model server (``tests.llm._server``, its own process) answers every chat request after
``--delay`` seconds; each free-form baseline trial makes ``--experiments`` experiment calls and one
final call, strictly one after another, so no schedule can finish faster than the critical path
``(experiments + 1) * delay``. ``python -m etc_fast.run`` then runs ``--trials`` such trials with
as many workers, and this script samples the summed RSS of the run's process tree every 0.1 s.

    PYTHONPATH=. python bench/bench_llm_concurrency.py [--trials 64] [--delay 2] [--experiments 9]
        [--executor local]

Prints one Markdown table row. Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[1]


def _tree(root: int) -> list[int]:
    """``root`` and all its descendants (from /proc)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if d.name.isdigit():
            try:
                ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
            children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo.extend(children.get(pid, []))
    return out


def _rss_bytes(pids: list[int]) -> int:
    total = 0
    for pid in pids:
        try:
            for line in Path(f"/proc/{pid}/status").read_text().splitlines():
                if line.startswith("VmRSS:"):
                    total += int(line.split()[1]) * 1024
        except OSError:
            pass
    return total


def _seconds(text: str) -> float:
    """Seconds of a ``format_duration`` text (``45s``, ``3m12s``)."""
    text = text.strip()
    minutes, _, rest = text.rpartition("m")
    return (float(minutes) * 60 if minutes else 0.0) + float(rest.rstrip("s") or 0)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--trials", type=int, default=64)
    p.add_argument("--delay", type=float, default=2.0)
    p.add_argument("--experiments", type=int, default=9)
    p.add_argument("--executor", default="local")
    p.add_argument("--workers", type=int, help="default: --trials")
    args = p.parse_args(argv)
    workers = args.workers or args.trials
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    with tempfile.TemporaryDirectory() as tmp:
        port_file = Path(tmp) / "url"
        server = subprocess.Popen(
            [sys.executable, "-m", "tests.llm._server", "--delay", str(args.delay), "--experiments", str(args.experiments),
             "--port-file", str(port_file), "--lifetime", "1800"],
            cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
        )
        try:
            while not port_file.exists():
                if server.poll() is not None:
                    raise SystemExit("the stand-in server did not start")
                time.sleep(0.05)
            cfg = {
                "name": "bench-llm",
                "workers": workers,
                "executor": args.executor,
                "judge": "structural",
                "llm": {"base_url": port_file.read_text().strip(), "timeout_s": 30, "cache": {"mode": "off"}},
                "grids": [{"model": "test-model", "configurations": ["baseline_n"], "tasks": ["m0_gravity"],
                           "rollouts": args.trials}],
            }
            cfg_path = Path(tmp) / "bench.yaml"
            cfg_path.write_text(yaml.safe_dump(cfg))
            t0 = time.perf_counter()
            run = subprocess.Popen(
                [sys.executable, "-m", "etc_fast.run", str(cfg_path), "--out", str(Path(tmp) / "out"), "--no-report"],
                cwd=REPO, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
            )
            peak, peak_procs = 0, 0
            while run.poll() is None:
                pids = _tree(run.pid)
                rss = _rss_bytes(pids)
                if rss > peak:
                    peak, peak_procs = rss, len(pids)
                time.sleep(0.1)
            wall = time.perf_counter() - t0
            err = run.stderr.read() if run.stderr else ""
            if run.returncode != 0:
                print(err[-3000:], file=sys.stderr)
                raise SystemExit(f"the run exited {run.returncode}")
            line = [ln for ln in err.splitlines() if " trials run " in ln][-1]
            trials_wall = _seconds(line.split("; ")[1])
            rows = [json.loads(x)["summary"] for x in (Path(tmp) / "out" / "trials.jsonl").read_text().splitlines()]
            slowest = max(r["wall_s"] for r in rows)
            waits = []
            for tr in (Path(tmp) / "out" / "transcripts").iterdir():
                chat = json.loads(tr.read_text())["chat"]
                waits.append(sum(m["call"]["latency_s"] for m in chat if "call" in m))
            print(f"per trial: model calls {sum(waits) / len(waits):.1f} s on average (max {max(waits):.1f} s), "
                  f"whole trial {sum(r['wall_s'] for r in rows) / len(rows):.1f} s on average", file=sys.stderr)
            completed = sum(r["status"] == "completed" for r in rows)
        finally:
            server.terminate()
            server.wait(timeout=10)
    critical = (args.experiments + 1) * args.delay
    print("| trials (completed) | executor | calls/trial x delay = critical path | command wall (with start-up) "
          "| run_config wall | slowest trial | peak RSS, all processes | processes |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| {args.trials} ({completed}) | {args.executor}, {workers} workers | {args.experiments + 1} x {args.delay:g} s "
          f"= {critical:.0f} s | {wall:.1f} s ({wall / critical:.2f}x) | {trials_wall:.0f} s ({trials_wall / critical:.2f}x) "
          f"| {slowest:.1f} s ({slowest / critical:.2f}x) | {peak / 2**20:.0f} MiB | {peak_procs} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
