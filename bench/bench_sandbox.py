"""Sandbox start-up cost: a sandboxed evaluation through the zygote against a bare Python start.

Three things are timed in one run, alternating round by round so that the machine's load falls on
all of them alike:

* ``bare``: ``python -I -c "import numpy"`` as a fresh process (what every evaluation cost before
  the zygote, without any isolation);
* ``numpy law``: ``call_law`` of a NumPy law on a 5,000-point, 3-variable grid (every layer of
  docs/guide/sandbox.md; the zygote is started before timing);
* ``scipy law``: the same with a law that imports ``scipy.special`` and calls ``gamma``.

    PYTHONPATH=. python bench/bench_sandbox.py [--rounds 30]

Prints the medians, the interquartile ranges and the ratios to ``bare`` as Markdown rows (targets:
``numpy law`` <= 0.25x, ``scipy law`` <= 0.3x). Not a test: nothing here asserts a time.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

NUMPY_LAW = "def discovered_law(a, b, c):\n    return np.sqrt(a) * b / c ** 2 + np.log(a)\n"
SCIPY_LAW = ("def discovered_law(a, b, c):\n    import scipy.special\n"
             "    return scipy.special.gamma(a) * b / c ** 2\n")


def _bare() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-I", "-c", "import numpy"], check=True, cwd="/",
                   env={"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "1"})
    return time.perf_counter() - t0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--rounds", type=int, default=30)
    args = p.parse_args(argv)
    from etc_fast.sandbox import call_law

    rng = np.random.default_rng(0)
    X = rng.uniform(0.5, 5.0, size=(5000, 3))
    names = ["a", "b", "c"]

    def law(src: str) -> float:
        t0 = time.perf_counter()
        r = call_law(src, X, arg_names=names)
        took = time.perf_counter() - t0
        if not r.ok:
            raise SystemExit(f"bench law failed: {r.error}")
        return took

    law(NUMPY_LAW)  # starts the zygote (once per process) and checks both laws work
    law(SCIPY_LAW)
    times: dict[str, list[float]] = {"bare": [], "numpy law": [], "scipy law": []}
    for _ in range(args.rounds):
        times["bare"].append(_bare())
        times["numpy law"].append(law(NUMPY_LAW))
        times["scipy law"].append(law(SCIPY_LAW))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    bare = float(np.median(times["bare"]))
    print(f"| what | median ms | IQR ms | ratio to bare | (rounds {args.rounds}, load {load:.1f}, {os.cpu_count()} cores) |")
    print("|---|---|---|---|---|")
    for name, ts in times.items():
        a = np.asarray(ts) * 1e3
        q1, med, q3 = np.percentile(a, [25, 50, 75])
        print(f"| {name} | {med:.1f} | {q1:.1f}-{q3:.1f} | {med / (bare * 1e3):.2f}x | |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
