"""A/B a study subset between two checkouts, trial by trial, in one run.

Usage::

    python -m bench.ab_subset BASE_CHECKOUT CONFIG OUT.json [--where KEY=V1,V2 ...] [--rounds 1]

Two worker processes, one importing etc_fast from ``BASE_CHECKOUT`` (``PYTHONPATH``) and one from
this checkout, run the same trials alternately (A then B for each trial, then B then A for the next),
so a machine whose load drifts slows both sides alike. Each side's wall time is summed over its
trials; the ratio B / A is the speed-up. Outcomes (status, measurements, submission, credit, error)
are compared trial by trial. ``OUT.json`` holds both sides' rows and the totals.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parents[1]
_FIELDS = ("status", "measurements", "final_source", "credited", "error")

_CHILD = r"""
import json, sys, time
from bench.study_subset import fingerprint
from etc_fast.runner import load_config
from etc_fast.runner._executors import TrialWorker
from etc_fast.protocol import TrialSpec
config = load_config(sys.argv[1])
worker = TrialWorker.from_config(config)
first = True
for line in sys.stdin:
    spec = json.loads(line)
    if first:
        worker.warm_up(TrialSpec.from_dict(spec))
        first = False
    t0 = time.perf_counter()
    rec = worker(spec)
    wall = time.perf_counter() - t0
    print(json.dumps({"wall_s": wall, **fingerprint(rec)}, default=str), flush=True)
"""


def _start(checkout: Path, config: str) -> subprocess.Popen:
    env = dict(os.environ, PYTHONPATH=str(checkout))
    return subprocess.Popen([sys.executable, "-c", _CHILD, config], cwd=str(checkout), env=env, text=True,
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def main(argv: list[str]) -> int:
    base, config_path, out = Path(argv[0]).resolve(), argv[1], Path(argv[2])
    sys.path.insert(0, str(HERE))
    from bench.study_subset import _select
    from etc_fast.runner import load_config
    from etc_fast.runner._grid import expand_grid

    where: dict[str, set[str]] = {}
    i = 3
    while i < len(argv):
        if argv[i] == "--where":
            key, _, vals = argv[i + 1].partition("=")
            where[key] = set(vals.split(","))
        else:
            raise SystemExit(f"ab_subset: unknown argument {argv[i]!r}")
        i += 2
    specs = _select(expand_grid(load_config(config_path)), where)
    sides = {"A": _start(base, str(Path(config_path).resolve())), "B": _start(HERE, str(Path(config_path).resolve()))}
    rows: dict[str, list] = {"A": [], "B": []}
    try:
        for k, spec in enumerate(specs):
            order = ("A", "B") if k % 2 == 0 else ("B", "A")
            for side in order:
                p = sides[side]
                assert p.stdin is not None and p.stdout is not None
                p.stdin.write(json.dumps(spec.to_dict()) + "\n")
                p.stdin.flush()
                line = p.stdout.readline()
                if not line:
                    raise SystemExit(f"ab_subset: side {side} died")
                r = json.loads(line)
                r.update(trial=spec.trial_id, task=spec.task, system=spec.system, difficulty=spec.difficulty,
                         noise=spec.noise, config=spec.config.name, rollout=spec.rollout)
                rows[side].append(r)
            a, b = rows["A"][-1], rows["B"][-1]
            same = all(a.get(f) == b.get(f) for f in _FIELDS)
            print(f"{a['wall_s']:7.2f}s {b['wall_s']:7.2f}s {'  ' if same else '!='} {spec.task:24s} {spec.system:15s} "
                  f"{spec.difficulty:6s} {spec.noise:<6g} {spec.config.name:11s} r{spec.rollout} "
                  f"{a['credited']}->{b['credited']}", flush=True)
    finally:
        for p in sides.values():
            if p.stdin:
                p.stdin.close()
            p.wait(timeout=60)
    ta = sum(r["wall_s"] for r in rows["A"])
    tb = sum(r["wall_s"] for r in rows["B"])
    diff = [(a, b) for a, b in zip(rows["A"], rows["B"]) if any(a.get(f) != b.get(f) for f in _FIELDS)]
    summary = {"trials": len(specs), "base_s": ta, "new_s": tb, "ratio": tb / ta if ta else None,
               "identical": len(specs) - len(diff),
               "credited_base": sum(bool(r["credited"]) for r in rows["A"]),
               "credited_new": sum(bool(r["credited"]) for r in rows["B"]),
               "measurements_base": sum(r["measurements"] or 0 for r in rows["A"]) / max(len(specs), 1),
               "measurements_new": sum(r["measurements"] or 0 for r in rows["B"]) / max(len(specs), 1),
               "when": time.strftime("%Y-%m-%d %H:%M:%S")}
    out.write_text(json.dumps({"summary": summary, "A": rows["A"], "B": rows["B"]}, indent=1))
    for a, b in diff:
        print(f"  differs: {a['task']} {a['system']} {a['difficulty']} {a['noise']} {a['config']} r{a['rollout']}: "
              + "; ".join(f"{f}: {a.get(f)!r} -> {b.get(f)!r}" for f in _FIELDS if a.get(f) != b.get(f)))
    print(json.dumps(summary))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
