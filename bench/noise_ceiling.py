"""What noisy records can show: an oracle's best case for a task at a noise level (docs/guide/noise.md).

Not an agent and not a benchmark of one: it reads the hidden law, which no agent may. It asks how
much any agent could find inside the pool's domain with the trial's measurement cap, so that a
credit rate can be read against what the records allow.

For each task it reports

- the law's largest relative departure from its own best power law (a log-linear fit of the
  noiseless law over the whole pool), in units of the noise: the signal that a term beyond the
  power law leaves anywhere a planner could measure;
- for ``--seeds`` noise draws of records made of the bootstrap probes, ``--fill`` maximin points
  and ``--oracle`` points where that departure is largest (the oracle's choice), how often the
  grammar search, told the true noise level, ranks a law first that the structural judge credits.

Usage::

    python -m bench.noise_ceiling m6_underdamped_harmonic:medium m10_be_distribution:easy \
        --noise 0.001 --fill 4 --oracle 8 --seeds 8
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

from etc_fast.acquisition._split import explore
from etc_fast.evaluate._structural import StructuralJudge
from etc_fast.policies.symbolic._grammar import VariableDomain
from etc_fast.policies.symbolic._search import search
from etc_fast.sampling import bootstrap_probes, candidate_pool, pool_unit
from etc_fast.tasks import get_task


def departure(task, X: np.ndarray) -> np.ndarray:
    """Relative departure of the noiseless law at ``X`` from its log-linear power-law fit over ``X``."""
    y = task.truth(X)
    ok = np.isfinite(y) & (y > 0)
    A = np.column_stack([np.ones(int(ok.sum())), np.log(X[ok])])
    coef, *_ = np.linalg.lstsq(A, np.log(y[ok]), rcond=None)
    out = np.full(y.shape, np.nan)
    out[ok] = np.expm1(np.log(y[ok]) - A @ coef)
    return out


def ceiling(name: str, difficulty: str, noise: float, fill: int, oracle: int, seeds: int, pool_seed: int = 0) -> dict:
    task = get_task(name, difficulty, "v0")
    pool_X = candidate_pool(task, pool_seed)
    pool_U = pool_unit(task.d, pool_seed)
    dev = departure(task, pool_X)
    U0, X0 = bootstrap_probes(task)
    cols = np.arange(pool_X.shape[0], dtype=np.int64)
    taken = np.zeros(pool_X.shape[0], dtype=bool)
    fills = explore(U0, pool_U, cols, taken, [], fill)
    taken[fills] = True
    order = np.argsort(-np.nan_to_num(np.abs(dev), nan=-1.0), kind="stable")
    picks = [int(i) for i in order if not taken[i]][:oracle]
    X = np.vstack([X0, pool_X[fills + picks]])
    y_true = task.truth(X)
    domains = [VariableDomain(v.name, v.scale, v.low, v.high) for v in task.variables]
    judge = StructuralJudge(timeout_s=None)
    credited, firsts = 0, []
    for s in range(seeds):
        rng = np.random.default_rng(1000 + s)
        y = y_true + np.maximum(np.abs(y_true * noise), 1e-18) * rng.standard_normal(y_true.size)
        res = search(X, y, domains, noise=noise)
        best = res.candidates[0].source if res.candidates else ""
        ok = bool(best) and judge.judge_here(best, task).credited
        credited += ok
        firsts.append(best.strip().splitlines()[-1].strip() if best else "(none)")
    return {"task": f"{name}:{difficulty}", "max_departure_sigma": float(np.nanmax(np.abs(dev)) / noise),
            "records": int(X.shape[0]), "credited": credited, "seeds": seeds, "first": firsts[0]}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("tasks", nargs="+", help="module:difficulty (v0)")
    ap.add_argument("--noise", type=float, default=0.001)
    ap.add_argument("--fill", type=int, default=4, help="maximin points after the bootstrap probes")
    ap.add_argument("--oracle", type=int, default=8, help="points where the law departs most from its power law")
    ap.add_argument("--seeds", type=int, default=8)
    a = ap.parse_args(argv)
    for spec in a.tasks:
        name, _, diff = spec.partition(":")
        if diff not in ("easy", "medium", "hard"):
            print(f"error: task {spec!r}: write module:difficulty, e.g. m6_underdamped_harmonic:medium", file=sys.stderr)
            return 2
        r = ceiling(name, diff, a.noise, a.fill, a.oracle, a.seeds)
        print(f"{r['task']}: largest departure from its power law {r['max_departure_sigma']:.3g} sigma; "
              f"{r['records']} records, top law credited {r['credited']}/{r['seeds']} (first draw: {r['first']})",
              flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
