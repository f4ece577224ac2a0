"""Time and peak memory of one planner trial against the number of inputs (1..10).

For each input count ``d`` the script writes custom task files under ``--dir`` (see
docs/tasks.md) and plays one ``variance_c`` trial of each with the offline ``symbolic`` agent,
every trial in a fresh Python process, and records its wall time and the process's peak resident
memory (``ru_maxrss``). The laws (no task is special-cased; exponents are drawn from a fixed list):

* ``prod_log``: ``C * x1**p1 * ... * xd**pd`` with log-uniform domains (a product of powers);
* ``prod_lin``: the same law on linear domains;
* ``sum2_log``: ``C1 * (product of the first half) + C2 * (product of the second half)``, log domains.

Run from the repository root::

    PYTHONPATH=$PWD python bench/bench_inputs.py --inputs 1-10 --laws prod_log,sum2_log --dir /tmp/bench_inputs

and it prints one row per trial (a Markdown table) and writes ``results.json`` into ``--dir``.
The first trial of a fresh checkout also compiles the kernels: run a small one first.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

#: Exponents cycled through by the laws (simple physical exponents: integers and halves).
EXPONENTS = (1.0, -2.0, 0.5, 2.0, -1.0, 1.5, -0.5, 3.0, -1.5, 1.0)
LAWS = ("prod_log", "prod_lin", "sum2_log")


def _power(name: str, p: float) -> str:
    return name if p == 1.0 else f"{name}**({p:g})"


def task_text(law: str, d: int) -> str:
    """The task file (YAML text) of law family ``law`` with ``d`` inputs."""
    if law not in LAWS:
        raise ValueError(f"unknown law {law!r}; expected one of {', '.join(LAWS)}")
    names = [f"x{i + 1}" for i in range(d)]
    scale = "linear" if law == "prod_lin" else "log"
    low, high = (1.0, 5.0) if scale == "linear" else (0.1, 10.0)
    terms = [_power(n, EXPONENTS[i]) for i, n in enumerate(names)]
    if law == "sum2_log" and d >= 2:
        h = d // 2
        expr = f"C * {' * '.join(terms[:h])} + K * {' * '.join(terms[h:])}"
    else:
        expr = f"C * {' * '.join(terms)}"
    lines = [f"name: bench_{law}_{d}", f"description: An apparatus with {d} settings measures one quantity y.",
             "output:", "  name: y", "  description: the measured quantity", "variables:"]
    for n in names:
        lines += [f"  - name: {n}", f"    description: setting {n}", f"    scale: {scale}",
                  f"    low: {low}", f"    high: {high}"]
    lines += ["constants:", "  C: 2.5", "  K: 0.7", f"law: {expr}"] if "K *" in expr else \
             ["constants:", "  C: 2.5", f"law: {expr}"]
    return "\n".join(lines) + "\n"


def run_one(task_path: str, config: str, options: dict) -> dict:
    """Play one trial of ``task_path`` in this process; its time, peak memory and outcome."""
    from etc_fast.evaluate import create_judge
    from etc_fast.policies import create_policy
    from etc_fast.protocol import TrialSpec, get_configuration, run_trial

    spec = TrialSpec(model="symbolic", config=get_configuration(config), task=task_path)
    policy = create_policy("symbolic", **options)
    t0 = time.perf_counter()
    rec = run_trial(spec, policy, judge=create_judge("structural"))
    wall = time.perf_counter() - t0
    return {"wall_s": round(wall, 2), "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
            "status": rec.status, "error_kind": rec.error_kind, "credited": bool(rec.judge.get("credited")),
            "measurements": rec.measurements, "law": (rec.final_source or "").strip().splitlines()[-1:]}


def _range(text: str) -> list[int]:
    out: list[int] = []
    for part in text.split(","):
        a, _, b = part.partition("-")
        out += list(range(int(a), int(b or a) + 1))
    return out


def main(argv: list[str] | None = None) -> int:
    """Write the task files, play each in a fresh process, print and store the table."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--inputs", default="1-10", help="input counts, e.g. 1-10 or 2,4,8")
    ap.add_argument("--laws", default="prod_log,sum2_log", help=f"comma-separated, of {', '.join(LAWS)}")
    ap.add_argument("--config", default="variance_c", help="protocol configuration (default variance_c)")
    ap.add_argument("--dir", default="/tmp/bench_inputs", help="where task files and results.json go")
    ap.add_argument("--options", default="{}", help="symbolic policy options as JSON")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: play this task file here
    args = ap.parse_args(argv)
    options = json.loads(args.options)
    if args.one:
        print(json.dumps(run_one(args.one, args.config, options)))
        return 0
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    print("| law | inputs | wall s | peak RSS MiB | status | credited | measurements |")
    print("|---|---|---|---|---|---|---|")
    for law in args.laws.split(","):
        for d in _range(args.inputs):
            path = out / f"{law}_{d}.yaml"
            path.write_text(task_text(law, d))
            proc = subprocess.run([sys.executable, __file__, "--one", str(path), "--config", args.config,
                                   "--options", args.options], capture_output=True, text=True, env=dict(os.environ))
            if proc.returncode != 0:
                row = {"law": law, "inputs": d, "status": f"crashed (exit {proc.returncode})",
                       "stderr": proc.stderr[-2000:]}
            else:
                row = {"law": law, "inputs": d, **json.loads(proc.stdout.strip().splitlines()[-1])}
            rows.append(row)
            print(f"| {law} | {d} | {row.get('wall_s', '-')} | {row.get('peak_rss_mb', '-')} | {row['status']}"
                  f"{' (' + row['error_kind'] + ')' if row.get('error_kind') else ''} | {row.get('credited', '-')} | "
                  f"{row.get('measurements', '-')} |", flush=True)
            (out / "results.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
