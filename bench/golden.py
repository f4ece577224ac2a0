"""Compare two run directories trial by trial: every field of every record but ``wall_s`` and
``versions`` (and the summary's timing columns), so a refactor shows it moved nothing.

Usage::

    python -m bench.golden GOLDEN_RUN NEW_RUN [--drift NAME ...] [--show N]

Each trial's full record (``transcripts/<trial_id>.json``) and its ``trials.jsonl`` line are
compared as parsed JSON. ``--drift NAME`` applies one of the declared drift fixes of
:data:`DRIFT` to both sides before comparing (a change chosen openly, listed in docs/ with the
trials it changes); a trial that differs only there counts as "changed by drift" and is listed
apart from the ones that differ elsewhere. Exit status 1 when any trial differs outside the drift
applied (or is missing on one side), 0 otherwise.
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

#: Record fields that may differ between two runs of the same trial.
IGNORED = ("wall_s", "versions")
#: Summary columns that are timings or versions.
IGNORED_SUMMARY = ("wall_s", "started_at", "finished_at", "versions")


def _system_events(rec: dict[str, Any]) -> list[dict[str, Any]]:
    if rec.get("spec", {}).get("system", "vanilla_equation") == "vanilla_equation":
        return []
    return [e for e in rec.get("events", []) if isinstance(e, dict)]


def _drop_system_planner_fields(rec: dict[str, Any]) -> None:
    """One loop: a system planner's events carry the fields the equation planner's do (the
    committee's dropped list, the selection seed, the submission's reason, the begin error at the end
    of exploration, the bootstrap's rows as the first observation's new rows)."""
    for e in _system_events(rec):
        if "committee" in e:
            e["committee"].pop("dropped", None)
        e.pop("selection_seed", None)
        if e.get("event") == "submission":
            e.pop("reason", None)
        if e.get("event") == "exploration_end":
            e.pop("policy_begin_error", None)
        obs = e.get("observation")
        if isinstance(obs, dict) and e.get("phase") == "explore" and e.get("turn") == 0:
            obs.pop("new_rows", None)


#: Declared drift fixes: name -> a normaliser applied to both records before they are compared.
DRIFT: dict[str, Callable[[dict[str, Any]], None]] = {
    "system-planner-fields": _drop_system_planner_fields,
}


def _load(run: Path) -> dict[str, dict[str, Any]]:
    out: dict[str, dict[str, Any]] = {}
    lines = (run / "trials.jsonl").read_text().splitlines()
    for line in lines:
        row = json.loads(line)
        tid = row["trial_id"]
        path = run / "transcripts" / f"{tid}.json"
        record = json.loads(path.read_text()) if path.exists() else None
        summary = {k: v for k, v in row.get("summary", {}).items() if k not in IGNORED_SUMMARY}
        out[tid] = {"record": record, "summary": summary}
    return out


def _strip(rec: dict[str, Any] | None) -> dict[str, Any] | None:
    if rec is None:
        return None
    return {k: v for k, v in rec.items() if k not in IGNORED}


def _diff_paths(a: Any, b: Any, path: str = "", out: list[str] | None = None, limit: int = 8) -> list[str]:
    out = [] if out is None else out
    if len(out) >= limit:
        return out
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b), key=str):
            if k not in a or k not in b:
                out.append(f"{path}/{k} ({'only new' if k not in a else 'only golden'})")
            elif a[k] != b[k]:
                _diff_paths(a[k], b[k], f"{path}/{k}", out, limit)
    elif isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y:
                _diff_paths(x, y, f"{path}[{i}]", out, limit)
    else:
        out.append(f"{path}: {json.dumps(a)[:120]} -> {json.dumps(b)[:120]}")
    return out


def compare(golden: Path, new: Path, drift: list[str]) -> dict[str, Any]:
    """Counts and per-trial differences of ``new`` against ``golden``."""
    g, n = _load(golden), _load(new)
    result: dict[str, Any] = {"trials": len(g), "identical": 0, "drift_only": [], "differ": {}, "missing": []}
    for tid in sorted(set(g) | set(n)):
        if tid not in g or tid not in n:
            result["missing"].append(tid)
            continue
        a = {"record": _strip(g[tid]["record"]), "summary": g[tid]["summary"]}
        b = {"record": _strip(n[tid]["record"]), "summary": n[tid]["summary"]}
        if a == b:
            result["identical"] += 1
            continue
        a2, b2 = copy.deepcopy(a), copy.deepcopy(b)
        for name in drift:
            for side in (a2, b2):
                if side["record"] is not None:
                    DRIFT[name](side["record"])
        if a2 == b2:
            result["drift_only"].append(tid)
        else:
            result["differ"][tid] = _diff_paths(a2, b2)
    return result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("golden", type=Path)
    ap.add_argument("new", type=Path)
    ap.add_argument("--drift", action="append", default=[], choices=sorted(DRIFT))
    ap.add_argument("--show", type=int, default=10, help="differing trials to list")
    args = ap.parse_args(argv)
    for run in (args.golden, args.new):
        if not (run / "trials.jsonl").is_file():
            print(f"error: {run} is not a run directory (no trials.jsonl)", file=sys.stderr)
            return 2
    res = compare(args.golden, args.new, args.drift)
    print(f"{res['trials']} trials: {res['identical']} identical, {len(res['drift_only'])} changed only by "
          f"declared drift ({', '.join(args.drift) or 'none applied'}), {len(res['differ'])} differ, "
          f"{len(res['missing'])} missing on one side")
    for tid, paths in list(res["differ"].items())[: args.show]:
        print(f"  {tid}:")
        for p in paths:
            print(f"    {p}")
    return 1 if res["differ"] or res["missing"] else 0


if __name__ == "__main__":
    raise SystemExit(main())
