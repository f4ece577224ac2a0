"""Play stored trials again and compare the records: is a run reproducible here?

:func:`replay_run` re-scores the stored submissions; :func:`play_again` re-plays whole trials
(policy, planner, judge) from their stored specs with the run's own resolved config, and compares
each new record with the stored one: the ``trials.jsonl`` summary and, where the run kept it, the
transcript, both without their timings. A trial is

* ``same``: every field equal;
* ``close``: the same fields and texts, numbers within 1e-9 relative (1e-12 absolute), the
  tolerance across CPUs (docs/guide/reproducibility.md);
* ``differs``: anything else, named by its first differing field.

Only offline trials are played (a model of :data:`~etc_fast.runner.OFFLINE_MODELS`, judge
``structural`` or ``none``): an LLM trial would pay its model again, and a model's reply need not repeat. Nothing is
written to the run directory.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from etc_fast.runner._config import OFFLINE_MODELS
from etc_fast.runner._replay import _same
from etc_fast.store import CONFIG, TRIALS, read_trials

__all__ = ["PlayReport", "PlayedTrial", "play_again"]

#: Keys that hold timings (never compared).
_TIMING = frozenset({"wall_s", "elapsed_s", "seconds", "time_s", "cpu_s", "t"})


@dataclasses.dataclass(frozen=True)
class PlayedTrial:
    """One trial played again: ``verdict`` is ``same``, ``close`` or ``differs``; ``where`` the first
    differing field (``summary.rmsle``, ``transcript.events[4].action``), with both values."""

    trial_id: str
    task: str
    configuration: str
    verdict: str
    where: str = ""
    stored: Any = None
    played: Any = None

    def __str__(self) -> str:
        text = f"{self.trial_id} {self.task} {self.configuration}: {self.verdict}"
        if self.where:
            text += f" at {self.where}: stored {_short(self.stored)}, played {_short(self.played)}"
        return text


@dataclasses.dataclass(frozen=True)
class PlayReport:
    """Outcome of :func:`play_again`: every played trial, and the run's trial count."""

    run_dir: str
    n_trials: int
    trials: tuple[PlayedTrial, ...]

    @property
    def ok(self) -> bool:
        """No trial differs beyond the tolerance."""
        return all(t.verdict != "differs" for t in self.trials)

    def counts(self) -> dict[str, int]:
        return {v: sum(t.verdict == v for t in self.trials) for v in ("same", "close", "differs")}

    def to_text(self) -> str:
        c = self.counts()
        lines = [str(t) for t in self.trials if t.verdict != "same"]
        lines.append(f"{len(self.trials)} of {self.n_trials} trials of {self.run_dir} played again: {c['same']} the same, "
                     f"{c['close']} within 1e-9 relative, {c['differs']} different")
        return "\n".join(lines)


def _short(v: Any, limit: int = 160) -> str:
    text = repr(v)
    return text if len(text) <= limit else text[:limit] + "..."


def _strip(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _strip(v) for k, v in x.items() if k not in _TIMING}
    if isinstance(x, list):
        return [_strip(v) for v in x]
    return x


def _first_difference(a: Any, b: Any, path: str, tolerant: bool) -> tuple[str, Any, Any] | None:
    """The first place where ``a`` and ``b`` differ (``None``: equal; NaN equals NaN). With
    ``tolerant`` a value is compared as :func:`replay_run` compares a metric (:func:`._replay._same`)."""
    if isinstance(a, dict) and isinstance(b, dict):
        for k in sorted(set(a) | set(b)):
            where = f"{path}.{k}" if path else k
            if k not in a or k not in b:
                return where, a.get(k), b.get(k)
            found = _first_difference(a[k], b[k], where, tolerant)
            if found:
                return found
        return None
    if isinstance(a, list) and isinstance(b, list):
        if len(a) != len(b):
            return f"{path} (length)", len(a), len(b)
        for i, (u, v) in enumerate(zip(a, b, strict=True)):
            found = _first_difference(u, v, f"{path}[{i}]", tolerant)
            if found:
                return found
        return None
    both_nan = isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b)
    equal = _same(a, b) if tolerant else (a == b or both_nan)
    return None if equal else (path, a, b)


def _compare(stored: dict[str, Any], played: dict[str, Any]) -> tuple[str, tuple[str, Any, Any] | None]:
    exact = _first_difference(stored, played, "", tolerant=False)
    if exact is None:
        return "same", None
    loose = _first_difference(stored, played, "", tolerant=True)
    return ("close", exact) if loose is None else ("differs", loose)


def _sample(entries: list[dict[str, Any]], count: int | None, seed: int, ids: Sequence[str] | None) -> list[dict[str, Any]]:
    if ids:
        by_id = {e["trial_id"]: e for e in entries}
        missing = [i for i in ids if i not in by_id]
        if missing:
            raise ValueError(f"no trial {', '.join(missing[:5])} in the run")
        wanted = set(ids)
        return [e for e in entries if e["trial_id"] in wanted]
    if count is None or count >= len(entries):
        return list(entries)
    import numpy as np

    order = sorted(range(len(entries)), key=lambda i: entries[i]["trial_id"])  # not the run's order
    picked = np.random.default_rng(seed).choice(len(order), size=count, replace=False)
    return [entries[i] for i in sorted(order[int(p)] for p in picked)]  # played in the run's order


def play_again(run_dir: str | os.PathLike[str], *, count: int | None = None, seed: int = 0,
               ids: Sequence[str] | None = None) -> PlayReport:
    """Play stored trials of ``run_dir`` again and compare their records (module docstring).

    Args:
        run_dir: A run directory.
        count: How many trials, drawn with ``seed`` (the same on every machine; ``None``: all).
        seed: The draw's seed.
        ids: Play these trial ids instead of a draw.

    Raises:
        FileNotFoundError: not a run directory, or its ``config.resolved.yaml`` is missing.
        ValueError: an unknown trial id, a count below 1, or a trial that is not offline.
    """
    from etc_fast.core import TrialSpec
    from etc_fast.runner._config import load_config
    from etc_fast.runner._executors import TrialWorker

    root = Path(run_dir)
    if not (root / TRIALS).exists():
        raise FileNotFoundError(f"{root}: no {TRIALS}; not a run directory")
    if not (root / CONFIG).exists():
        raise FileNotFoundError(f"{root}: no {CONFIG}; the trials cannot be played without the run's config")
    if count is not None and count < 1:
        raise ValueError(f"the number of trials to play must be at least 1, got {count}")
    entries = [e for e in read_trials(root / TRIALS) if e.get("spec")]
    config = load_config(root / CONFIG)
    if config.judge not in ("structural", "none"):
        raise ValueError(f"{root} is judged by {config.judge!r}: playing it again would call that judge's model; "
                         "re-score its submissions with python -m etc_fast.replay RUN_DIR instead")
    chosen = _sample(entries, count, seed, ids)
    online = sorted({str(e["spec"].get("model")) for e in chosen} - set(OFFLINE_MODELS))
    if online:
        raise ValueError(f"trials of model {', '.join(online)} would call that model again (and pay for it); only "
                         f"trials of the offline models ({', '.join(OFFLINE_MODELS)}) are played")
    worker = TrialWorker.from_config(config)
    played: list[PlayedTrial] = []
    for entry in chosen:
        spec = entry["spec"]
        record = worker.run_trial(TrialSpec.from_dict(spec))
        stored: dict[str, Any] = {"summary": _strip(entry.get("summary") or {})}
        new: dict[str, Any] = {"summary": _strip(record.summary())}
        transcript = root / str(entry.get("transcript") or "")
        if entry.get("transcript") and transcript.is_file():
            stored["transcript"] = _strip(json.loads(transcript.read_text()))
            new["transcript"] = _strip(json.loads(record.to_json()))
        verdict, where = _compare(stored, new)
        name = (spec.get("config") or {}).get("name", "?")
        played.append(PlayedTrial(entry["trial_id"], str(spec.get("task")), str(name), verdict, *(where or ())))
    return PlayReport(run_dir=str(root), n_trials=len(entries), trials=tuple(played))
