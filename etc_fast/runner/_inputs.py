"""The files a run's trials read by path, and their SHA-256: part of a run's identity.

A trial spec names a custom task by the path of its YAML file (``grids[].tasks``); the trial reads
that file when it plays. The configuration holds the path, not the law, so a file edited after
trials were stored would make a resumed run keep results of the old law beside results of the new
one. The run therefore stores each such file's SHA-256 in ``config.resolved.yaml`` under
``inputs`` (path as the grid names it -> hex digest), and a resume compares them with the files as
they are now (:func:`check_inputs`). :func:`changed_inputs` is the same comparison for
``etc_fast.replay``.

Other inputs a run reads are covered elsewhere: the NewtonBench checkout of ``llm.prompts:
newtonbench`` through ``llm.newtonbench_version`` (the commit and the hash of every file read),
which is part of :func:`etc_fast.runner.config_identity`; the LLM response cache is keyed by the
request it answers, so it holds no input a trial could read stale.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

__all__ = [
    "INPUTS", "ChangedInput", "changed_inputs", "check_inputs", "checkout_changes", "hash_inputs", "input_paths",
    "prompt_sources", "stored_inputs",
]

#: Key of the input hashes in ``config.resolved.yaml``.
INPUTS = "inputs"
#: Hex digits of a SHA-256 shown in messages.
_SHORT = 12
#: Trial ids named in one message.
_SHOWN = 3


def input_paths(tasks: Iterable[str]) -> list[str]:
    """The custom task files among a grid's task names (as written there), each once, in order."""
    from etc_fast.tasks import is_custom_task

    return list(dict.fromkeys(t for t in tasks if is_custom_task(t)))


def _sha256(path: Path) -> str | None:
    """The file's SHA-256 (hex), or ``None`` when it cannot be read."""
    h = hashlib.sha256()
    try:
        with open(path, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
    except OSError:
        return None
    return h.hexdigest()


def hash_inputs(paths: Iterable[str]) -> dict[str, str | None]:
    """SHA-256 of each file (``None``: missing or unreadable); relative paths from the working directory.

    A generated law's name (``gen-s0-0042``) stands for the text the generator gives it now
    (:mod:`etc_fast.tasks.generate`; its generator version is part of the text), hashed as the
    file ``--out`` would write."""
    return {p: _generated_sha256(p) if _is_generated(p) else _sha256(Path(p).expanduser()) for p in paths}


def _is_generated(name: str) -> bool:
    from etc_fast.tasks import is_generated_task

    return is_generated_task(name)


def _generated_sha256(name: str) -> str | None:
    from etc_fast.tasks.generate import law_by_name

    try:
        return law_by_name(name).sha256
    except ValueError:
        return None


def stored_inputs(resolved: Any) -> dict[str, str] | None:
    """The input hashes a stored resolved config holds; ``None`` when it holds none (a run written
    before they were recorded, or an entry that is not a mapping of path to hex digest)."""
    raw = resolved.get(INPUTS) if isinstance(resolved, Mapping) else None
    if not isinstance(raw, Mapping):
        return None
    return {str(k): str(v) for k, v in raw.items() if isinstance(v, str)}


@dataclasses.dataclass(frozen=True)
class ChangedInput:
    """A file whose content differs from the hash stored with the run.

    Attributes:
        path: The path as the grid names it.
        stored: SHA-256 stored with the run.
        now: SHA-256 of the file now; ``None`` when it is missing or unreadable.
        trials: Stored trials that read it and whose results depend on it (trial ids, file order).
    """

    path: str
    stored: str
    now: str | None
    trials: tuple[str, ...]

    def describe(self) -> str:
        """One clause: the file, what changed, the trials that read it."""
        if self.now is None:
            what = (f"is missing or unreadable (SHA-256 recorded {self.stored[:_SHORT]}; relative paths are taken "
                    "from the working directory)")
        else:
            what = f"changed since this run recorded it (SHA-256 recorded {self.stored[:_SHORT]}, now {self.now[:_SHORT]})"
        n = len(self.trials)
        shown = ", ".join(self.trials[:_SHOWN]) + (f" and {n - _SHOWN} more" if n > _SHOWN else "")
        read = f"; {n} stored trial{'s' if n != 1 else ''} read it ({shown})" if n else ""
        if _is_generated(self.path):
            from etc_fast.tasks.generate import GENERATOR_VERSION

            what = (f"is not the law this version of the generator ({GENERATOR_VERSION}) draws (SHA-256 recorded "
                    f"{self.stored[:_SHORT]}, now {(self.now or 'none')[:_SHORT]})")
            return f"generated task {self.path} {what}{read}"
        return f"custom task file {self.path} {what}{read}"


def _readers(entries: Iterable[Mapping[str, Any]], path: str) -> tuple[str, ...]:
    """Stored trials whose results came from ``path``: every entry naming it, except failed trials
    (the next run plays those again from the start, reading the file as it is then)."""
    out = []
    for e in entries:
        spec = e.get("spec")
        if isinstance(spec, Mapping) and spec.get("task") == path and (e.get("summary") or {}).get("status") != "failed":
            out.append(str(e["trial_id"]))
    return tuple(out)


def changed_inputs(
    stored: Mapping[str, str], now: Mapping[str, str | None], entries: Sequence[Mapping[str, Any]]
) -> list[ChangedInput]:
    """The files of ``now`` whose hash differs from ``stored`` (files not stored are not compared).

    Args:
        stored: Hashes stored with the run (:func:`stored_inputs`).
        now: Hashes of the files as they are (:func:`hash_inputs`).
        entries: The run's ``trials.jsonl`` entries (to name the trials that read each file).
    """
    return [
        ChangedInput(path, stored[path], digest, _readers(entries, path))
        for path, digest in now.items()
        if path in stored and stored[path] != digest
    ]


def check_inputs(
    root: Path, resolved: Mapping[str, Any] | None, config_tasks: Iterable[str], entries: Sequence[Mapping[str, Any]]
) -> tuple[dict[str, str], list[str]]:
    """Compare the files a resumed run's trials read with the hashes stored with it.

    Args:
        root: The run directory (for messages).
        resolved: Its stored ``config.resolved.yaml`` (``None``: a new run).
        config_tasks: Every task name of the run's grids.
        entries: The stored ``trials.jsonl`` entries.

    Returns:
        ``(hashes to store, notes)``: the hash of every input file now, and warnings to show (a run
        that did not record its inputs, whose hashes are recorded from now on).

    Raises:
        RunDirError: A file that stored trials read differs from its stored hash, or is missing
            (nothing has been written; the message names the file, both hashes, the trials and
            what to do).
    """
    from etc_fast.store import RunDirError

    paths = input_paths(config_tasks)
    now = hash_inputs(paths)
    missing = [p for p, d in now.items() if d is None]
    stored = stored_inputs(resolved) if resolved is not None else None
    stale = [c for c in changed_inputs(stored or {}, now, entries) if c.trials]
    if stale:
        shown = "; ".join(c.describe() for c in stale)
        raise RunDirError(
            f"{root}: {shown}. Resuming would keep results of the old file beside new ones, so nothing was run "
            f"or changed. Restore the file as it was, or run into a new --out to play the edited task "
            f"(no option accepts an edited input into this directory)"
        )
    if missing:  # no stored trial read them: the trials about to run could not
        raise RunDirError(
            f"{root}: custom task file {', '.join(missing)} is missing or unreadable (relative paths are taken "
            f"from the working directory, {Path.cwd()}); nothing was run or changed. Restore it, or run from the "
            f"directory the run was started in"
        )
    notes: list[str] = []
    if stored is None and resolved is not None and paths and any(_readers(entries, p) for p in paths):
        notes.append(
            f"{root} was written by a version of etc_fast that did not record its custom task files' SHA-256 "
            f"({', '.join(paths)}); they are recorded now and checked on every later resume, but an edit made "
            f"before now goes unnoticed (python -m etc_fast.replay {root} re-scores the stored trials)"
        )
    return {p: d for p, d in now.items() if d is not None}, notes


def prompt_sources(config: Any) -> dict[str, Any]:
    """Where the baselines' and the judge's texts come from (``prompts: newtonbench``): the
    checkout, its commit, the SHA-256 of each file read."""
    from etc_fast.llm import NewtonBenchTexts

    texts = NewtonBenchTexts(config.llm.newtonbench_path)
    from etc_fast.tasks import is_custom_task

    names = sorted({t for g in config.grids for t in g.tasks if not is_custom_task(t)})
    try:
        texts.check_tasks(names)
    except ValueError:
        pass  # custom or absent modules: recorded is what could be read
    return {**texts.identity(), "newtonbench_version": config.llm.newtonbench_version}


def checkout_changes(root: Path, config: Any) -> str | None:
    """The NewtonBench checkout files (``llm.prompts: newtonbench``) that differ from those recorded in
    the run's ``versions.json``, as one clause; ``None`` when none can be named (nothing recorded, or
    the difference lies elsewhere)."""
    import json

    from etc_fast.store import VERSIONS

    try:
        before = json.loads((root / VERSIONS).read_text()).get("prompts") or {}
        after = prompt_sources(config)
    except Exception:  # noqa: BLE001 - an unreadable record or checkout: the caller's generic message stands
        return None
    old, new = before.get("newtonbench_files") or {}, after.get("newtonbench_files") or {}
    parts = []
    if before.get("newtonbench_commit") != after.get("newtonbench_commit"):
        parts.append(f"commit recorded {before.get('newtonbench_commit') or 'none'}, now {after.get('newtonbench_commit') or 'none'}")
    for rel in sorted(set(old) | set(new)):
        if old.get(rel) != new.get(rel):
            was = str(old[rel])[:_SHORT] if rel in old else "not read"
            now = str(new[rel])[:_SHORT] if rel in new else "missing"
            parts.append(f"{rel}: SHA-256 recorded {was}, now {now}")
    if not parts:
        return None
    return f"the NewtonBench checkout {after.get('newtonbench_path')} changed since this run recorded it ({'; '.join(parts)})"
