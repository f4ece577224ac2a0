"""Run-directory replay: re-score every stored submission and compare with the stored metrics.

The stored data are only read. Their SHA-256 hashes are taken before and after the replay and
compared (and checked against ``manifest.sha256``), so the report says whether anything changed.
"""

from __future__ import annotations

import concurrent.futures as cf
import dataclasses
import hashlib
import json
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

from etc_fast.core import from_json_float
from etc_fast.protocol import TrialRecord, TrialSpec, to_jsonable
from etc_fast.runner._inputs import changed_inputs, hash_inputs, input_paths, stored_inputs
from etc_fast.store import CONFIG, TRIALS, check_manifest, file_hashes, read_trials

__all__ = ["Difference", "ReplayReport", "replay_run"]

#: Evaluation fields compared between the transcript and the replay.
_EVAL_FIELDS = ("valid", "rmsle", "n_finite_target", "n_finite_pred", "complete", "sign_disagreements", "q")
#: Results-table columns compared between ``trials.jsonl`` and the replay.
_SUMMARY_FIELDS = (
    "valid", "rmsle", "n_finite_target", "n_finite_pred", "complete", "sign_disagreements", "q_0_01", "q_0_1", "q_1",
)


@dataclasses.dataclass(frozen=True)
class Difference:
    """One stored value that the replay does not reproduce.

    Attributes:
        trial_id: The trial.
        where: ``transcript`` (its ``evaluation``) or ``trials.jsonl`` (its summary row).
        field: The metric.
        stored: The stored value.
        replayed: The value the replay computed.
    """

    trial_id: str
    where: str
    field: str
    stored: Any
    replayed: Any

    def __str__(self) -> str:
        return f"{self.trial_id} {self.where} {self.field}: stored {self.stored!r}, replayed {self.replayed!r}"


@dataclasses.dataclass(frozen=True)
class ReplayReport:
    """Outcome of :func:`replay_run`.

    Attributes:
        run_dir: The run directory.
        n_trials: Trials stored.
        n_replayed: Submissions re-scored (failed trials without an evaluation are skipped).
        differences: Stored values the replay does not reproduce.
        errors: Trials that could not be replayed (missing transcript, unknown task, ...).
        manifest_problems: Files that did not match ``manifest.sha256`` before the replay.
        unchanged: Every file's SHA-256 was the same after the replay as before it.
        inputs: Custom task files that differ from the SHA-256 the run recorded (or are missing), each
            with the trials that read it, or a note that the run recorded no hashes; a difference in
            such a trial may come from the edited file rather than from the scoring.
    """

    run_dir: str
    n_trials: int
    n_replayed: int
    differences: tuple[Difference, ...]
    errors: tuple[str, ...]
    manifest_problems: tuple[str, ...]
    unchanged: bool
    inputs: tuple[str, ...] = ()

    @property
    def ok(self) -> bool:
        """No differences, no errors, the manifest matched, nothing changed."""
        return not self.differences and not self.errors and not self.manifest_problems and self.unchanged

    def to_text(self) -> str:
        """A human-readable summary."""
        lines = [
            f"replayed {self.n_replayed} of {self.n_trials} stored submissions in {self.run_dir}",
        ]
        lines += [f"input: {note}" for note in self.inputs]
        lines.append(f"differences: {len(self.differences)}")
        lines += [f"  {d}" for d in self.differences[:50]]
        if len(self.differences) > 50:
            lines.append(f"  ... and {len(self.differences) - 50} more")
        if self.errors:
            lines.append(f"trials not replayed: {len(self.errors)}")
            lines += [f"  {e}" for e in self.errors[:50]]
        if self.manifest_problems:
            lines.append("manifest check before the replay found:")
            lines += [f"  {p}" for p in self.manifest_problems]
        else:
            lines.append("manifest check before the replay: every file matches manifest.sha256")
        lines.append(
            "stored data unchanged by the replay (SHA-256 of every file equal before and after)"
            if self.unchanged
            else "WARNING: files changed during the replay"
        )
        return "\n".join(lines)


def _load_task(spec: TrialSpec) -> Any:
    from etc_fast.tasks import get_task

    return get_task(spec.task, difficulty=spec.difficulty, law_version=spec.law_version)


def _evaluate(source: str, task: Any, limits: Any) -> dict[str, Any]:
    from etc_fast.evaluate import evaluate_submission

    return evaluate_submission(source, task, limits=limits).to_dict()


def _same(a: Any, b: Any) -> bool:
    if isinstance(a, Mapping) or isinstance(b, Mapping):
        if not (isinstance(a, Mapping) and isinstance(b, Mapping)) or set(a) != set(b):
            return False
        return all(_same(a[k], b[k]) for k in a)
    if isinstance(a, bool) or isinstance(b, bool) or a is None or b is None:
        return a == b
    if isinstance(a, (int, float, str)) and isinstance(b, (int, float, str)):
        try:
            fa, fb = from_json_float(a), from_json_float(b)
        except ValueError:
            return a == b
        if math.isnan(fa) or math.isnan(fb):
            return math.isnan(fa) and math.isnan(fb)
        if math.isinf(fa) or math.isinf(fb):
            return fa == fb
        return math.isclose(fa, fb, rel_tol=1e-9, abs_tol=1e-12)
    return a == b


def _replay_one(root: Path, entry: Mapping[str, Any], limits: Any, tasks: dict) -> tuple[list[Difference], str | None, bool]:
    trial_id = entry["trial_id"]
    tpath = root / entry.get("transcript", f"transcripts/{trial_id}.json")
    try:
        blob = tpath.read_bytes()
    except OSError as exc:
        return [], f"{trial_id}: transcript unreadable ({exc.strerror or exc})", False
    diffs: list[Difference] = []
    digest = hashlib.sha256(blob).hexdigest()
    if entry.get("transcript_sha256") not in (None, digest):
        diffs.append(Difference(trial_id, "trials.jsonl", "transcript_sha256", entry["transcript_sha256"], digest))
    record = json.loads(blob)
    stored_eval = record.get("evaluation") or {}
    if not stored_eval:
        return diffs, None, False  # never scored (failed trial): nothing to replay
    try:
        spec = TrialSpec.from_dict(record["spec"])
        key = (spec.task, spec.difficulty, spec.law_version)
        if key not in tasks:
            tasks[key] = _load_task(spec)
        replayed = _evaluate(record.get("final_source") or "", tasks[key], limits)
    except Exception as exc:  # noqa: BLE001 - report and go on with the other trials
        return diffs, f"{trial_id}: cannot replay ({type(exc).__name__}: {exc})", False
    for field in _EVAL_FIELDS:
        if not _same(stored_eval.get(field), replayed.get(field)):
            diffs.append(Difference(trial_id, "transcript", field, stored_eval.get(field), replayed.get(field)))
    summary = entry.get("summary") or {}
    replayed_summary = to_jsonable(TrialRecord(spec=spec, evaluation=replayed).summary())  # as the store writes it
    for col in _SUMMARY_FIELDS:
        want = replayed_summary[col]
        if not _same(summary.get(col), want):
            diffs.append(Difference(trial_id, "trials.jsonl", col, summary.get(col), want))
    return diffs, None, True


def _input_notes(root: Path, entries: list[dict[str, Any]]) -> list[str]:
    """What the replay says about the run's custom task files: each one changed or missing since the
    run recorded its SHA-256, or that the run recorded none (a run written before they were)."""
    try:
        resolved = yaml.safe_load((root / CONFIG).read_text())
    except (OSError, yaml.YAMLError):
        resolved = None
    recorded = stored_inputs(resolved)
    if recorded is None:
        paths = input_paths(str((e.get("spec") or {}).get("task", "")) for e in entries)
        if not paths:
            return []
        return [f"this run did not record its custom task files' SHA-256 ({', '.join(paths)}); whether one was "
                "edited since cannot be told, and an edit would show as differences below"]
    changed = changed_inputs(recorded, hash_inputs(recorded), entries)
    return [f"{c.describe()}; differences in {'those trials' if len(c.trials) != 1 else 'that trial'} may come "
            "from the edit" if c.trials else c.describe() for c in changed]


def replay_run(run_dir: str | os.PathLike[str], *, limits: Any = None, workers: int = 1) -> ReplayReport:
    """Re-score every stored submission of a run in the sandbox and compare with the stored metrics.

    Each transcript's ``final_source`` is evaluated with
    :func:`etc_fast.evaluate.evaluate_submission` on its task; every evaluation field and every
    metric column of ``trials.jsonl`` is compared (NaN equals NaN; floats to 1e-9 relative).
    Nothing is written: file hashes are compared before and after.

    Args:
        run_dir: A run directory written by :func:`etc_fast.runner.run_config`.
        limits: ``etc_fast.sandbox.SandboxLimits`` for the submissions (default limits if ``None``).
        workers: Submissions scored concurrently (each runs in its own sandbox process).

    Returns:
        A :class:`ReplayReport`.

    Raises:
        FileNotFoundError: ``run_dir`` has no ``trials.jsonl``.
    """
    root = Path(run_dir)
    if not (root / TRIALS).exists():
        raise FileNotFoundError(f"{root}: no {TRIALS}; not a run directory")
    before = file_hashes(root)
    manifest_problems = tuple(check_manifest(root, hashes=before))
    entries = read_trials(root / TRIALS)
    tasks: dict = {}
    diffs: list[Difference] = []
    errors: list[str] = []
    n_replayed = 0
    if workers <= 1:
        results = [_replay_one(root, e, limits, tasks) for e in entries]
    else:
        with cf.ThreadPoolExecutor(max_workers=workers) as pool:
            results = list(pool.map(lambda e: _replay_one(root, e, limits, tasks), entries))
    for d, err, replayed in results:
        diffs.extend(d)
        if err:
            errors.append(err)
        n_replayed += replayed
    after = file_hashes(root)
    return ReplayReport(
        inputs=tuple(_input_notes(root, entries)),
        run_dir=str(root),
        n_trials=len(entries),
        n_replayed=n_replayed,
        differences=tuple(diffs),
        errors=tuple(errors),
        manifest_problems=manifest_problems,
        unchanged=before == after,
    )
