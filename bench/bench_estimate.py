"""How long ``python -m etc_fast.run CONFIG --dry-run`` takes for every shipped config, as shipped
and with ``--model gpt-4.1-mini``, and how close its sampled token estimate is to playing every
distinct trial.

``python -m bench.bench_estimate [--repeats N] [--compare]`` prints a Markdown table (the dry-run times of every
shipped config). Each command runs once untimed first (a warm Numba cache), then ``N`` times (default 2);
the table gives the slowest wall time and its CPU time (user + system of the child), with the load
average, since the wall time on a shared machine is mostly waiting. The run directory is a fresh
temporary path, so no stored trial is left out. ``--compare`` adds, per LLM config, the estimate with
every distinct trial played (in this process) beside the sampled one: calls and prompt tokens.
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODEL = "gpt-4.1-mini"


def timed(argv: list[str]) -> tuple[float, float, int, str]:
    """Run ``argv``; returns (wall s, child CPU s, exit status, stdout)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    proc = subprocess.run(argv, cwd=ROOT, capture_output=True, text=True, env={**os.environ, "PYTHONPATH": str(ROOT)},
                          check=False)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.returncode, proc.stdout + proc.stderr


def compare(config: Path) -> str:
    """Sampled against every-distinct-trial estimate of ``config`` with ``--model gpt-4.1-mini``."""
    from etc_fast.runner import _estimate, expand_grid, load_config

    cfg = load_config(config).with_overrides(model=MODEL)
    specs = expand_grid(cfg)
    sampled = _estimate.estimate_run(cfg, specs)
    if sampled.played == sampled.distinct:
        return "all played"
    budget = _estimate.PLAY_BUDGET
    _estimate.PLAY_BUDGET = 10**9
    try:
        exact = _estimate.estimate_run(cfg, specs)
    finally:
        _estimate.PLAY_BUDGET = budget
    s, e = sampled.models[0], exact.models[0]
    bounds = "identical" if (s.calls_min, s.calls) == (e.calls_min, e.calls) else "DIFFER"
    every = "identical" if s.calls_every_turn == e.calls_every_turn else f"{s.calls_every_turn:,} vs {e.calls_every_turn:,}"
    return (f"call bounds {bounds}, every-turn calls {every}; prompt tokens every turn {s.prompt_tokens_every_turn:,} vs "
            f"{e.prompt_tokens_every_turn:,} ({s.prompt_tokens_every_turn / e.prompt_tokens_every_turn - 1:+.1%}), "
            f"fewest calls {s.prompt_tokens_min / e.prompt_tokens_min - 1:+.1%}")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--compare", action="store_true")
    args = ap.parse_args(argv)
    out = Path(tempfile.mkdtemp(prefix="bench-estimate-")) / "no-run"
    configs = sorted((ROOT / "configs").glob("*.yaml"))
    rows = []
    for config in configs:
        for model in (None, MODEL):
            cmd = [sys.executable, "-m", "etc_fast.run", str(config.relative_to(ROOT)), "--dry-run", "--out", str(out)]
            if model:
                cmd += ["--model", model]
            timed(cmd)  # warm-up
            runs = [timed(cmd) for _ in range(args.repeats)]
            wall, cpu, code, text = max(runs)
            trials = re.search(r": (\d+) trials ->", text)
            basis = re.search(r"Basis: ([\d,]+) distinct trial\(s\) \((\d+) of them played|Basis: ([\d,]+) distinct trial\(s\) \(each played", text)
            if basis and basis.group(1):
                played = f"{basis.group(2)} of {basis.group(1)}"
            elif basis:
                played = f"all {basis.group(3)}"
            else:
                played = "no LLM" if code == 0 else f"exit {code}: {text.strip().splitlines()[-1][:80]}"
            extra = compare(config) if args.compare and model and code == 0 else ""
            rows.append((config.name, model or "as shipped", trials.group(1) if trials else "-", played, wall, cpu, extra))
            print(f"{rows[-1]}", file=sys.stderr, flush=True)
    load = os.getloadavg()
    print(f"Load average during the bench (1/5/15 min) at the end: {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}; "
          f"{os.cpu_count()} CPUs; slowest of {args.repeats} after a warm-up.\n")
    head = "| config | model | trials | distinct trials played | wall s | CPU s |" + (" sampled vs every trial played |" if args.compare else "")
    print(head)
    print("|" + "---|" * head.count(" |"))
    for name, model, trials, played, wall, cpu, extra in rows:
        print(f"| {name} | {model} | {trials} | {played} | {wall:.1f} | {cpu:.1f} |" + (f" {extra} |" if args.compare else ""))
    return 0


if __name__ == "__main__":
    sys.exit(main())
