"""A deterministic stand-in trial worker, importable by worker processes (spawn/forkserver, Ray)."""

from __future__ import annotations

import dataclasses
import hashlib
import os
import time

from etc_fast.protocol import TrialRecord, TrialSpec
from etc_fast.runner import TrialWorker


def fake_evaluation(source: str) -> dict:
    """Metrics computed from a submission's text (so a replay can recompute them)."""
    k = int(source.split("return ")[1].split(" *")[0])
    rmsle = (k % 40) / 16.0 if k % 7 else float("nan")
    complete = k % 7 != 0 and k % 5 != 0
    return {
        "valid": k % 7 != 0,
        "error": None if k % 7 else "boom",
        "rmsle": rmsle,
        "n_points": 5000,
        "n_finite_target": 5000,
        "n_finite_pred": 5000 if complete else 4000,
        "complete": complete,
        "sign_disagreements": k % 2,
        "q": {"0.01": complete and rmsle <= 0.01, "0.1": complete and rmsle <= 0.1, "1": complete and rmsle <= 1.0},
    }


def fake_metrics(spec: TrialSpec) -> dict:
    """A record's contents derived from the trial id only (every executor and rerun agree)."""
    h = int(hashlib.sha256(spec.trial_id.encode()).hexdigest()[:8], 16)
    planner = spec.config.family == "planner"
    source = f"def discovered_law(x):\n    return {h % 97} * x\n"
    return {
        "measurements": (4 + h % 8) if planner else (15 + h % 30),
        "credited": bool(h % 3 == 0),
        "evaluation": fake_evaluation(source),
        "source": source,
    }


@dataclasses.dataclass(frozen=True)
class FakeWorker(TrialWorker):
    """Runs no protocol: builds a record from the spec's hash.

    Attributes:
        sleep_s: Seconds each trial takes.
        raise_on: Tasks whose trials raise inside the worker.
        crash_on: Tasks whose trials kill their worker process.
        hang_on: Tasks whose trials sleep for an hour (for the timeout).
        marker_dir: If set, each trial touches ``<marker_dir>/<trial_id>.<pid>.<n>`` when it starts.
        real: Run the real protocol, policy and judge (the failure knobs still apply).
    """

    sleep_s: float = 0.0
    raise_on: tuple[str, ...] = ()
    crash_on: tuple[str, ...] = ()
    hang_on: tuple[str, ...] = ()
    marker_dir: str | None = None
    real: bool = False

    def make_policy(self, model):
        return super().make_policy(model) if self.real else None

    def make_judge(self):
        return super().make_judge() if self.real else None

    def run_trial(self, spec: TrialSpec) -> TrialRecord:
        if self.marker_dir:
            n = len([p for p in os.listdir(self.marker_dir) if p.startswith(spec.trial_id)])
            open(os.path.join(self.marker_dir, f"{spec.trial_id}.{os.getpid()}.{n}"), "w").close()
        if spec.task in self.crash_on:
            os._exit(3)
        if spec.task in self.raise_on:
            raise RuntimeError(f"policy exploded on {spec.task}")
        if spec.task in self.hang_on:
            time.sleep(3600)
        time.sleep(self.sleep_s)
        if self.real:
            return super().run_trial(spec)
        m = fake_metrics(spec)
        return TrialRecord(
            spec=spec,
            status="completed",
            measurements=m["measurements"],
            observations={"X": [[1.0]], "y": [2.0], "source": ["bootstrap"]},
            events=[{"phase": "fake", "turn": 0}],
            final_source=m["source"],
            submission_origin="synthesis",
            evaluation=m["evaluation"],
            judge={"judge": "structural", "credited": m["credited"], "reason": "fake"},
            wall_s=0.001 + self.sleep_s,
        )
