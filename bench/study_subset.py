"""Run a filtered subset of any study config in this process, one trial after another.

Usage::

    python -m bench.study_subset CONFIG OUT.json [--where KEY=V1,V2 ...] [--profile PROF] [--jobs N]

``--where`` keeps the trials whose spec field ``KEY`` (``config`` for the configuration name, or
``task``, ``system``, ``difficulty``, ``noise``, ``rollout``, ``law_version``) is one of the listed
values. Writes each trial's wall time and a fingerprint of its outcome (status, measurements,
submission, credit, RMSLE, a hash of the observations), so two runs of the same subset (before and
after a change, idle and loaded, on two CPUs) compare trial by trial with ``--compare A.json B.json``.
``--jobs N`` runs the subset in N worker processes (each its own trial worker); wall times are then
per trial, and the total is the elapsed time of the whole subset.
"""

from __future__ import annotations

import cProfile
import hashlib
import json
import multiprocessing
import sys
import time
from pathlib import Path

from etc_fast.runner import load_config
from etc_fast.runner._executors import TrialWorker
from etc_fast.runner._grid import expand_grid

_FIELDS = ("status", "measurements", "final_source", "credited", "error")


def _select(specs, where: dict[str, set[str]]):
    def value(spec, key):
        return spec.config.name if key == "config" else getattr(spec, key)

    return [s for s in specs if all(str(value(s, k)) in vs for k, vs in where.items())]


_WORKER: TrialWorker | None = None


def _init(config_path: str) -> None:
    global _WORKER
    _WORKER = TrialWorker.from_config(load_config(config_path))


def _run_one(spec_dict: dict) -> tuple[float, dict]:
    assert _WORKER is not None
    t0 = time.perf_counter()
    rec = _WORKER(spec_dict)
    return time.perf_counter() - t0, rec


def run_in_process(config, specs, prof: str | None, on_trial) -> tuple[float, float]:
    """Run ``specs`` one after another in one warmed-up trial worker, calling
    ``on_trial(spec, wall_s, record)`` for each; with ``prof``, a cProfile of the trials is written
    there. Returns ``(start, total_s)`` (the start after the warm-up)."""
    worker = TrialWorker.from_config(config)
    worker.warm_up(specs[0])
    t_all = time.perf_counter()
    profiler = cProfile.Profile() if prof else None
    for spec in specs:
        t0 = time.perf_counter()
        if profiler:
            profiler.enable()
        rec = worker(spec.to_dict())
        if profiler:
            profiler.disable()
        on_trial(spec, time.perf_counter() - t0, rec)
    if profiler:
        profiler.dump_stats(prof)
    return t_all, time.perf_counter() - t_all


def fingerprint(rec: dict) -> dict:
    """What two runs of a trial are compared on: status, measurements, submission, credit, RMSLE,
    a hash of the observations, the error."""
    obs = json.dumps(rec.get("observations"), sort_keys=True, default=str)
    return {
        "status": rec.get("status"),
        "measurements": rec.get("measurements"),
        "final_source": rec.get("final_source"),
        "credited": (rec.get("judge") or {}).get("credited"),
        "rmsle": (rec.get("evaluation") or {}).get("rmsle"),
        "observations_sha": hashlib.sha256(obs.encode()).hexdigest()[:16],
        "error": rec.get("error"),
    }


def compare(a_path: str, b_path: str) -> int:
    a = {r["trial"]: r for r in json.loads(Path(a_path).read_text())["trials"]}
    b = {r["trial"]: r for r in json.loads(Path(b_path).read_text())["trials"]}
    common = sorted(set(a) & set(b))
    diff = [t for t in common if any(a[t].get(f) != b[t].get(f) for f in _FIELDS)]
    print(f"{len(common)} common trials, {len(common) - len(diff)} identical in {', '.join(_FIELDS)}")
    for t in diff:
        ra, rb = a[t], b[t]
        print(f"  {ra['task']} {ra['system']} {ra['difficulty']} noise={ra.get('noise')} {ra['config']} r{ra['rollout']}: "
              + "; ".join(f"{f}: {ra.get(f)!r} -> {rb.get(f)!r}" for f in _FIELDS if ra.get(f) != rb.get(f)))
    ta = json.loads(Path(a_path).read_text())["total_s"]
    tb = json.loads(Path(b_path).read_text())["total_s"]
    print(f"total {ta:.1f}s -> {tb:.1f}s ({tb / ta:.2f}x)")
    return 0


def main(argv: list[str]) -> int:
    if argv and argv[0] == "--compare":
        return compare(argv[1], argv[2])
    config_path, out_path = argv[0], Path(argv[1])
    where: dict[str, set[str]] = {}
    prof = None
    jobs = 1
    i = 2
    while i < len(argv):
        if argv[i] == "--where":
            key, _, vals = argv[i + 1].partition("=")
            where[key] = set(vals.split(","))
        elif argv[i] == "--profile":
            prof = argv[i + 1]
        elif argv[i] == "--jobs":
            jobs = int(argv[i + 1])
        else:
            raise SystemExit(f"study_subset: unknown argument {argv[i]!r}")
        i += 2
    config = load_config(config_path)
    specs = _select(expand_grid(config), where)
    if not specs:
        raise SystemExit("study_subset: no trial matches")
    rows = []

    def row_of(spec, wall, rec):
        row = {"trial": spec.trial_id, "task": spec.task, "system": spec.system, "difficulty": spec.difficulty,
               "noise": spec.noise, "config": spec.config.name, "rollout": spec.rollout, "wall_s": round(wall, 3),
               **fingerprint(rec)}
        print(f"{wall:7.2f}s {spec.task:24s} {spec.system:15s} {spec.difficulty:6s} {spec.noise:<6g} "
              f"{spec.config.name:11s} r{spec.rollout} {row['status']} credited={row['credited']}", flush=True)
        return row

    t_all = time.perf_counter()
    if jobs > 1:
        ctx = multiprocessing.get_context("forkserver")
        with ctx.Pool(jobs, initializer=_init, initargs=(config_path,)) as pool:
            for spec, (wall, rec) in zip(specs, pool.imap(_run_one, [s.to_dict() for s in specs])):
                rows.append(row_of(spec, wall, rec))
    else:
        t_all, _ = run_in_process(config, specs, prof, lambda spec, wall, rec: rows.append(row_of(spec, wall, rec)))
    total = time.perf_counter() - t_all
    out_path.write_text(json.dumps({"total_s": total, "trials": rows}, indent=1))
    print(f"total {total:.1f}s for {len(rows)} trials")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
