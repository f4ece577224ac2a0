"""Time a study's first run on a cold Numba cache, and say where the compile time went.

Usage::

    python -m bench.first_run [CONFIG] [--warm] [--workers N] [--limit N] [--cache DIR] [--keep DIR]
                              [--json OUT.json] [--top N] [--report]

Runs ``python -m etc_fast.run CONFIG --no-report`` (``--report``: with its report) in a fresh process with ``NUMBA_CACHE_DIR``
pointed at an empty folder (``--cache`` names one to reuse instead), so every kernel the run uses
is compiled as in a fresh virtual environment. ``--warm`` then runs the same study again, into a
new run directory, on the cache the first run left. Every Python process of the run (the run
itself, its pool workers, the sandbox and judge helpers) records each Numba compilation it does
through a ``sitecustomize`` module this script places first on ``PYTHONPATH``; the report gives
per run:

* ``wall_s``: the elapsed time of the whole command;
* ``compile_s``: seconds spent compiling, summed over processes (top-level compilations only, so a
  kernel compiled while compiling another is not counted twice), and ``compile_wall_s``: the time
  from the first compilation's start to the last one's end, over all processes;
* ``specializations``: compiled (function, signature) pairs, and the cache's ``.nbi`` (functions)
  and ``.nbc`` (specializations) files after the run;
* the functions that took longest, by their own compile seconds (a callee's time is its own, not
  its caller's) and by how many processes compiled them.

The machine's load changes the wall time from one run to the next; the compile seconds and the
specialization counts change much less, so compare those first.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

#: ``sitecustomize`` placed first on the run's ``PYTHONPATH``: when a process imports Numba's event
#: module, a listener is registered that appends one JSON line per finished compilation to
#: ``$ETC_FAST_COMPILE_LOG``. Nothing is imported before Numba is.
SITECUSTOMIZE = r'''
import importlib.abc
import importlib.util
import os
import sys


def _register(event):
    import json
    import threading
    import time

    log = os.environ.get("ETC_FAST_COMPILE_LOG")
    local = threading.local()

    class _Recorder(event.Listener):
        def on_start(self, ev):
            stack = getattr(local, "stack", None)
            if stack is None:
                stack = local.stack = []
            stack.append([time.time(), 0.0])

        def on_end(self, ev):
            stack = local.stack
            start, children = stack.pop()
            end = time.time()
            took = end - start
            if stack:
                stack[-1][1] += took
            disp = ev.data["dispatcher"]
            func = getattr(disp, "py_func", None)
            name = f"{getattr(func, '__module__', '?')}.{getattr(func, '__qualname__', repr(disp))}"
            line = json.dumps({
                "pid": os.getpid(), "func": name, "args": str(ev.data.get("args")), "start": start,
                "end": end, "inclusive_s": took, "own_s": took - children, "depth": len(stack),
            })
            with open(log, "a") as fh:
                fh.write(line + "\n")

    event.register("numba:compile", _Recorder())


class _Hook(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name != "numba.core.event":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            _register(module)

        spec.loader.exec_module = exec_module
        return spec


if os.environ.get("ETC_FAST_COMPILE_LOG"):
    sys.meta_path.insert(0, _Hook())
'''


def cache_files(cache: Path) -> dict[str, int]:
    """Count the Numba cache's index (``.nbi``, one per cached function) and data (``.nbc``, one per
    cached specialization) files under ``cache``."""
    nbi = sum(1 for _ in cache.rglob("*.nbi"))
    nbc = sum(1 for _ in cache.rglob("*.nbc"))
    return {"nbi": nbi, "nbc": nbc}


def read_log(path: Path) -> list[dict[str, Any]]:
    """The compilation records of a run's log (one JSON object per line; none if the file is absent)."""
    if not path.is_file():
        return []
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def summarize(records: Sequence[Mapping[str, Any]], top: int = 15) -> dict[str, Any]:
    """Sum a run's compilation records: total and per-function compile seconds, specializations.

    ``compile_s`` adds the top-level (depth 0) compilations of every process, so nested ones are
    not counted twice; ``per_function`` gives each function's own seconds (its callees' compile
    time taken out), the number of specializations it got and how many processes compiled it,
    longest first (``top`` of them).
    """
    if not records:
        return {"compile_s": 0.0, "compile_wall_s": 0.0, "specializations": 0, "compilations": 0,
                "processes": 0, "per_process_s": {}, "per_function": []}
    top_level = [r for r in records if r["depth"] == 0]
    per_process: dict[int, float] = collections.defaultdict(float)
    for r in top_level:
        per_process[r["pid"]] += r["inclusive_s"]
    own: dict[str, float] = collections.defaultdict(float)
    sigs: dict[str, set[str]] = collections.defaultdict(set)
    pids: dict[str, set[int]] = collections.defaultdict(set)
    for r in records:
        own[r["func"]] += r["own_s"]
        sigs[r["func"]].add(r["args"])
        pids[r["func"]].add(r["pid"])
    ranked = sorted(own, key=lambda f: -own[f])
    return {
        "compile_s": round(sum(per_process.values()), 2),
        "compile_wall_s": round(max(r["end"] for r in records) - min(r["start"] for r in records), 2),
        "specializations": sum(len(s) for s in sigs.values()),
        "compilations": len(records),
        "processes": len(per_process),
        "per_process_s": {str(pid): round(s, 2) for pid, s in sorted(per_process.items(), key=lambda kv: -kv[1])},
        "per_function": [
            {"func": f, "own_s": round(own[f], 2), "specializations": len(sigs[f]), "processes": len(pids[f])}
            for f in ranked[:top]
        ],
    }


def run_once(config: str, out: Path, cache: Path, log: Path, site: Path, extra: Iterable[str] = ()) -> float:
    """Run ``python -m etc_fast.run config`` once with the given cache and compile log; its wall seconds."""
    env = dict(os.environ)
    env["NUMBA_CACHE_DIR"] = str(cache)
    env["ETC_FAST_COMPILE_LOG"] = str(log)
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)] + ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    cmd = [sys.executable, "-m", "etc_fast.run", config, "--out", str(out), *extra]
    t0 = time.perf_counter()
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        raise SystemExit(f"first_run: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-4000:]}")
    return wall


def main(argv: Sequence[str] | None = None) -> int:
    """Run the cold (and with ``--warm`` the warm) study and print the JSON report."""
    ap = argparse.ArgumentParser(prog="python -m bench.first_run", description=__doc__.split("\n\n")[0])
    ap.add_argument("config", nargs="?", default="configs/full.yaml")
    ap.add_argument("--warm", action="store_true", help="run again on the cache the first run left")
    ap.add_argument("--report", action="store_true", help="also write the run's report (default: --no-report)")
    ap.add_argument("--workers", type=int, help="parallel trials (default: the config's)")
    ap.add_argument("--limit", type=int, help="run at most N trials")
    ap.add_argument("--cache", type=Path, help="Numba cache folder (default: a new empty one)")
    ap.add_argument("--keep", type=Path, help="keep the run directories and logs here (default: a temp folder)")
    ap.add_argument("--json", type=Path, help="also write the report here")
    ap.add_argument("--top", type=int, default=15, help="functions listed per run (default 15)")
    args = ap.parse_args(argv)
    extra = [] if args.report else ["--no-report"]
    if args.workers:
        extra += ["--workers", str(args.workers)]
    if args.limit:
        extra += ["--limit", str(args.limit)]
    with tempfile.TemporaryDirectory(prefix="first_run-") as tmp:
        work = args.keep or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        cache = args.cache or work / "numba-cache"
        cache.mkdir(parents=True, exist_ok=True)
        site = work / "site"
        site.mkdir(exist_ok=True)
        (site / "sitecustomize.py").write_text(SITECUSTOMIZE)
        report: dict[str, Any] = {"config": args.config, "cpus": os.cpu_count(), "load_before": os.getloadavg()}
        for label in ["cold", "warm"] if args.warm else ["cold"]:
            log = work / f"{label}.compile.jsonl"
            log.unlink(missing_ok=True)
            wall = run_once(args.config, work / f"run-{label}", cache, log, site, extra)
            report[label] = {"wall_s": round(wall, 2), **summarize(read_log(log), args.top),
                             "cache_files": cache_files(cache)}
        report["load_after"] = os.getloadavg()
    text = json.dumps(report, indent=1)
    print(text)
    if args.json:
        args.json.write_text(text + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
