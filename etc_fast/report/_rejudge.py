"""Re-judge a stored run: every stored submission judged again, no policy called.

Each transcript's ``final_source`` is judged on its task as a run judges it
(:func:`etc_fast.protocol.judge_submission`: a submission that fails the pre-check is not sent to
the judge, as NewtonBench sends none); the ``credited``, ``judge`` and
``judge_reason`` columns of ``trials.jsonl`` are rewritten (transcripts stay as stored),
``trials.parquet`` is rebuilt, and ``judge.json`` records the judge's name and version and how many
verdicts changed.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

__all__ = ["rejudge_run", "judge_label", "JUDGE_FILE"]

#: File recording the judge that produced the run's ``credited`` column.
JUDGE_FILE = "judge.json"


def rejudge_run(run_dir: str | os.PathLike[str], judge_name: str) -> dict[str, Any]:
    """Judge every stored submission of ``run_dir`` again with ``judge_name``.

    A submission the judge reaches no verdict on (:class:`~etc_fast.errors.InfrastructureError`: a
    structural judge past its deadline, an LLM judge with no reply) is stored with ``judge_status:
    error``: not a result (the report counts it with the failed trials) until a later re-judge, or
    a resumed run, reaches a verdict.

    Returns:
        ``{"judge", "version", "n_judged", "n_changed", "credited_before", "credited_after"}``, and
        ``"n_unreached"`` when some submissions got no verdict.

    Raises:
        FileNotFoundError: not a run directory.
        ValueError: unknown judge name.
    """
    from etc_fast.core import TrialSpec
    from etc_fast.evaluate import create_judge
    from etc_fast.protocol import judge_submission
    from etc_fast.store import TRIALS, atomic_write, read_trials, write_parquet
    from etc_fast.tasks import get_task

    root = Path(run_dir)
    path = root / TRIALS
    if not path.exists():
        raise FileNotFoundError(f"{root}: no {TRIALS}; not a run directory")
    judge = create_judge(judge_name)
    entries = read_trials(path)
    tasks: dict = {}
    n_judged = n_changed = n_unreached = before = after = 0
    for entry in entries:
        summary = entry.get("summary") or {}
        before += bool(summary.get("credited"))
        try:
            record = json.loads((root / entry.get("transcript", f"transcripts/{entry['trial_id']}.json")).read_text())
        except (OSError, ValueError):
            after += bool(summary.get("credited"))
            continue
        if not record.get("evaluation"):
            after += bool(summary.get("credited"))
            continue  # a failed trial was never judged
        spec = TrialSpec.from_dict(record["spec"])
        key = (spec.task, spec.difficulty, spec.law_version)
        if key not in tasks:
            tasks[key] = get_task(spec.task, difficulty=spec.difficulty, law_version=spec.law_version)
        out = judge_submission(record.get("final_source") or "", tasks[key], judge)
        if out["status"] == "error":  # no verdict: the trial is no result until it gets one
            n_unreached += 1
            summary.update(credited=False, judge=out["judge"], judge_reason=out["reason"], judge_status="error")
            entry["summary"] = summary
            continue
        n_judged += 1
        n_changed += bool(summary.get("credited")) != out["credited"]
        after += out["credited"]
        summary.update(credited=out["credited"], judge=out["judge"], judge_reason=out["reason"])
        if summary.get("judge_status") == "error":
            summary["judge_status"] = "ok"
        entry["summary"] = summary
    lines = b"".join(json.dumps(e, sort_keys=True, allow_nan=False).encode() + b"\n" for e in entries)
    atomic_write(path, lines)
    write_parquet(root, entries)
    info = {"judge": judge.name, "version": getattr(judge, "version", None), "n_judged": n_judged,
            "n_changed": n_changed, "credited_before": before, "credited_after": after,
            **({"n_unreached": n_unreached} if n_unreached else {})}
    atomic_write(root / JUDGE_FILE, (json.dumps(info, indent=2) + "\n").encode())
    return info


def judge_label(run_dir: str | os.PathLike[str], judges: list[str]) -> str:
    """The judge(s) behind a run's ``credited`` column, with the version when it is recorded."""
    root = Path(run_dir)
    version = None
    try:
        version = json.loads((root / JUDGE_FILE).read_text()).get("version")
    except (OSError, ValueError, AttributeError):
        try:
            version = json.loads((root / "versions.json").read_text()).get("structural_judge")
        except (OSError, ValueError, AttributeError):
            version = None
    names = [j for j in judges if j] or ["unknown"]
    out = []
    for j in names:
        if j == "structural":
            out.append(f"structural v{version}" if version else "structural (version not recorded)")
        else:
            out.append(j)
    return ", ".join(out)
