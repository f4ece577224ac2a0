"""Time a fixed 48-trial subset of ``configs/systems.yaml`` in this process, one trial after another.

Usage: ``python -m bench.study_subset_systems OUT.json [--profile PROF]``. The subset: for each of the
12 modules four trials, (simple, easy), (simple, medium), (complex, easy), (complex, medium), with the
configuration cycling through all eight and the rollout alternating every eight trials, so every
module, system, difficulty and configuration appears. Writes each trial's wall time and a
fingerprint of its outcome (status, measurements, submission, credit, RMSLE, a hash of the
observations) so two runs (before / after a change) compare trial by trial.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from bench.study_subset import fingerprint, run_in_process
from etc_fast.runner import load_config
from etc_fast.runner._grid import expand_grid

CONFIG = Path(__file__).resolve().parents[1] / "configs" / "systems.yaml"


def subset(specs):
    """The 48 specs described in the module docstring, in a fixed order."""
    names = sorted({s.config.name for s in specs}, key=[s.config.name for s in specs].index)
    modules = sorted({s.task for s in specs}, key=[s.task for s in specs].index)
    index = {(s.task, s.system, s.difficulty, s.config.name, s.rollout): s for s in specs}
    out = []
    for i in range(4 * len(modules)):
        module = modules[i // 4]
        system = ("simple_system", "complex_system")[(i % 4) // 2]
        diff = ("easy", "medium")[i % 2]
        out.append(index[(module, system, diff, names[i % len(names)], (i // len(names)) % 2)])
    return out


def main(argv: list[str]) -> int:
    out_path = Path(argv[0])
    prof = argv[argv.index("--profile") + 1] if "--profile" in argv else None
    config = load_config(CONFIG)
    specs = subset(expand_grid(config))
    rows = []

    def on_trial(spec, wall, rec):
        row = {"trial": spec.trial_id, "task": spec.task, "system": spec.system,
               "difficulty": spec.difficulty, "config": spec.config.name, "rollout": spec.rollout,
               "wall_s": round(wall, 3), **fingerprint(rec)}
        rows.append(row)
        print(f"{wall:7.2f}s {spec.task:24s} {spec.system:15s} {spec.difficulty:6s} {spec.config.name:11s} "
              f"{row['status']} credited={row['credited']}", flush=True)

    _, total = run_in_process(config, specs, prof, on_trial)
    out_path.write_text(json.dumps({"total_s": total, "trials": rows}, indent=1))
    print(f"total {total:.1f}s for {len(rows)} trials")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
