"""Time and peak memory of one planner trial against the number of inputs (1..10).

For each input count ``d`` the script writes custom task files under ``--dir`` (see
docs/guide/tasks.md) and plays one ``variance_c`` trial of each with the offline ``symbolic`` agent,
every trial in a fresh Python process, and records its wall time and the process's peak resident
memory (``ru_maxrss``), and the CPU seconds the trial itself used (user + system, threads included: the
measure that does not grow when other work shares the cores). The laws (no task is special-cased; exponents are drawn from a fixed list):

* ``prod_log``: ``C * x1**p1 * ... * xd**pd`` with log-uniform domains (a product of powers);
* ``prod_lin``: the same law on linear domains;
* ``sum2_log``: ``C1 * (product of the first half) + C2 * (product of the second half)``, log domains.

Run from the repository root::

    PYTHONPATH=$PWD python bench/bench_inputs.py --inputs 1-10 --laws prod_log,sum2_log --dir /tmp/bench_inputs

and it prints one row per trial (a Markdown table) and writes ``results.json`` into ``--dir``.

``--generated SEED`` plays laws of the generated suite instead (docs/guide/generated.md): for each input
count, the first ``--per-inputs`` laws of that seed with that many inputs, whatever their class::

    PYTHONPATH=$PWD python bench/bench_inputs.py --generated 0 --per-inputs 2 --dir /tmp/bench_gen

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


def generated_picks(seed: int, inputs: list[int], per_inputs: int, scan: int = 2000) -> list[tuple[int, str, str]]:
    """``(inputs, name, class)`` of the first ``per_inputs`` laws of ``seed`` with each input count.

    Laws are read in index order up to ``scan``; an input count with fewer laws there gets fewer."""
    from etc_fast.tasks.generate import generated_names, law_by_name

    want = {d: per_inputs for d in inputs}
    picks: list[tuple[int, str, str]] = []
    for name in generated_names(seed, scan):
        law = law_by_name(name)
        if want.get(law.n_inputs, 0) > 0:
            want[law.n_inputs] -= 1
            picks.append((law.n_inputs, name, law.task_class))
            if not any(want.values()):
                break
    return sorted(picks)


def run_one(task_path: str, config: str, options: dict) -> dict:
    """Play one trial of ``task_path`` (a task file or a generated law's name) in this process; its
    time, peak memory and outcome."""
    from etc_fast.evaluate import create_judge
    from etc_fast.policies import create_policy
    from etc_fast.protocol import TrialSpec, get_configuration, run_trial

    spec = TrialSpec(model="symbolic", config=get_configuration(config), task=task_path)
    policy = create_policy("symbolic", **options)
    before = resource.getrusage(resource.RUSAGE_SELF)
    cpu0 = before.ru_utime + before.ru_stime
    t0 = time.perf_counter()
    rec = run_trial(spec, policy, judge=create_judge("structural"))
    wall = time.perf_counter() - t0
    use = resource.getrusage(resource.RUSAGE_SELF)
    return {"wall_s": round(wall, 2), "cpu_s": round(use.ru_utime + use.ru_stime - cpu0, 2), "peak_rss_mb": round(use.ru_maxrss / 1024, 1),
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
    ap.add_argument("--generated", type=int, help="play generated laws of this seed instead of --laws")
    ap.add_argument("--per-inputs", type=int, default=2, help="generated laws per input count (default 2)")
    ap.add_argument("--one", help=argparse.SUPPRESS)  # internal: play this task file here
    args = ap.parse_args(argv)
    options = json.loads(args.options)
    if args.one:
        print(json.dumps(run_one(args.one, args.config, options)))
        return 0
    out = Path(args.dir)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    print("| law | inputs | wall s | CPU s | peak RSS MiB | status | credited | measurements |")
    print("|---|---|---|---|---|---|---|---|")
    if args.generated is not None:
        plays = [(cls, d, name) for d, name, cls in generated_picks(args.generated, _range(args.inputs), args.per_inputs)]
    else:
        plays = []
        for law in args.laws.split(","):
            for d in _range(args.inputs):
                path = out / f"{law}_{d}.yaml"
                path.write_text(task_text(law, d))
                plays.append((law, d, str(path)))
    for law, d, task in plays:
        proc = subprocess.run([sys.executable, __file__, "--one", task, "--config", args.config,
                               "--options", args.options], capture_output=True, text=True, env=dict(os.environ))
        if proc.returncode != 0:
            row = {"law": law, "inputs": d, "task": task, "status": f"crashed (exit {proc.returncode})",
                   "stderr": proc.stderr[-2000:]}
        else:
            row = {"law": law, "inputs": d, "task": task, **json.loads(proc.stdout.strip().splitlines()[-1])}
        rows.append(row)
        print(f"| {law} | {d} | {row.get('wall_s', '-')} | {row.get('cpu_s', '-')} | {row.get('peak_rss_mb', '-')} | {row['status']}"
              f"{' (' + row['error_kind'] + ')' if row.get('error_kind') else ''} | {row.get('credited', '-')} | "
              f"{row.get('measurements', '-')} |", flush=True)
        (out / "results.json").write_text(json.dumps(rows, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
