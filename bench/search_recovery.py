"""How often the offline agent's search alone recovers generated laws from clean records.

The development loop of the search (docs/guide/generated.md): for each of the first ``--n`` laws of a
generated seed, ``--records`` inputs are drawn uniformly over the law's domains (log-uniformly on a
log domain; a fixed stream), the noiseless outputs are searched, and the search's best law counts as
recovered when its relative RMS error on 400 fresh points is below 1e-6. No planner, no judge: a
quick check of the grammar and the ranking by class. ``--complexity-weight`` sets the ranking's
weight of complexity for this process only (the measurement of ``COMPLEXITY_WEIGHT`` in
docs/guide/model-selection.md)::

    PYTHONPATH=$PWD python bench/search_recovery.py --seed 2 --n 40 --records 14 --complexity-weight 0.5

It prints one line per law and a total.
"""

from __future__ import annotations

import argparse
import sys

import numpy as np

#: Relative RMS error on fresh points below which a law counts as recovered.
RECOVERED_BELOW = 1e-6


def draw(task, k: int, rng: np.random.Generator) -> np.ndarray:
    """``k`` input rows over ``task``'s domains: uniform, or log-uniform on a positive log domain."""
    cols = []
    for v in task.variables:
        u = rng.random(k)
        if v.scale == "log" and v.low > 0:
            cols.append(np.exp(np.log(v.low) + u * (np.log(v.high) - np.log(v.low))))
        else:
            cols.append(v.low + u * (v.high - v.low))
    return np.stack(cols, 1)


def recovered(name: str, records: int) -> bool:
    """Whether the search's best law on ``records`` clean records of law ``name`` is the law."""
    from etc_fast.policies.symbolic import _search
    from etc_fast.policies.symbolic._grammar import VariableDomain, angle_unit_of
    from etc_fast.tasks import get_task

    task = get_task(name)
    X = draw(task, records, np.random.default_rng(1))
    y = task.truth(X)
    domains = [VariableDomain(v.name, v.scale, v.low, v.high, v.description) for v in task.variables]
    unit = "deg" if angle_unit_of(task.output_description) == "deg" else None
    best = _search.search(X, y, domains, output_unit=unit).best
    if best is None:
        return False
    namespace: dict = {}
    exec(best.source, namespace)  # the search's own law text, written by the search
    Xt = draw(task, 400, np.random.default_rng(2))
    yt = task.truth(Xt)
    with np.errstate(all="ignore"):
        yh = np.broadcast_to(np.asarray(namespace["discovered_law"](*Xt.T), dtype=float), yt.shape)
    ok = np.isfinite(yt)
    err = float(np.sqrt(np.nanmean(((yh[ok] - yt[ok]) / yt[ok]) ** 2)))
    return err < RECOVERED_BELOW


def main(argv: list[str] | None = None) -> int:
    """Search each law, print a line per law and the total."""
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seed", type=int, default=0, help="generated seed (default 0)")
    ap.add_argument("--n", type=int, default=40, help="first N laws of the seed (default 40)")
    ap.add_argument("--records", type=int, default=14, help="clean records per law (default 14)")
    ap.add_argument("--complexity-weight", type=float, default=None,
                    help="the ranking's weight of complexity for this run (default: the agent's)")
    args = ap.parse_args(argv)
    from etc_fast.policies.symbolic import _criterion, _search
    from etc_fast.tasks.generate import generated_names, law_by_name

    if args.complexity_weight is not None:
        if not args.complexity_weight > 0:
            print(f"error: --complexity-weight must be positive, got {args.complexity_weight}", file=sys.stderr)
            return 2
        _search.COMPLEXITY_WEIGHT = _criterion.COMPLEXITY_WEIGHT = args.complexity_weight
    total = 0
    names = generated_names(args.seed, args.n)
    for name in names:
        law = law_by_name(name)
        good = recovered(name, args.records)
        total += good
        print(f"{name} {law.task_class} {law.n_inputs} {'recovered' if good else 'missed'}", flush=True)
    print(f"recovered {total}/{len(names)} (seed {args.seed}, {args.records} records, "
          f"complexity weight {_search.COMPLEXITY_WEIGHT})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
