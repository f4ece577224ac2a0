"""The run store: :class:`RunStore` writes a run directory (its layout: :mod:`etc_fast.store`).

It needs the run configuration (provenance, the grid a stored line must belong to), so it lives in the
runner; reading a run directory needs only :mod:`etc_fast.store`.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from etc_fast.protocol import TrialRecord, to_jsonable
from etc_fast.runner._config import RunConfig, config_identity
from etc_fast.runner._inputs import INPUTS, check_inputs, checkout_changes, prompt_sources
from etc_fast.runner._provenance import write_provenance_start
from etc_fast.store import (
    CONFIG,
    LOCK,
    MANIFEST,
    TRANSCRIPTS,
    TRIALS,
    VERSIONS,
    RunDirError,
    atomic_write,
    is_finished,
    parse_line,
    read_trials,
    verify_before_rewrite,
    write_manifest,
    write_parquet,
    writing,
)

__all__ = ["RunStore", "package_versions", "prompt_sources"]

_PACKAGES = ("numpy", "numba", "scipy", "polars", "openai", "pyyaml", "matplotlib", "ray")


def _describe_spec(spec: Any) -> str:
    if not isinstance(spec, Mapping):
        return "no spec"
    cfg = spec.get("config") if isinstance(spec.get("config"), Mapping) else {}
    parts = [spec.get("model"), cfg.get("name"), spec.get("task"), spec.get("difficulty"), spec.get("law_version")]
    text = " ".join(str(p) for p in parts if p is not None)
    if spec.get("noise"):
        text += f" noise {spec.get('noise')}"
    return text + f" rollout {spec.get('rollout')}"


def check_grid_entries(path: Path, entries: Iterable[Mapping[str, Any]], grid_ids: set[str]) -> None:
    """Refuse stored lines that are not trials of this run's grid, or whose spec does not hash to
    their trial id (an edited or foreign line).

    Raises:
        RunDirError: Naming the file, the line and the trial.
    """
    from etc_fast.protocol import TrialSpec

    lines = _line_numbers(path)
    for entry in entries:
        tid = entry["trial_id"]
        where = f"{path}: line {lines.get(tid, '?')}: trial {tid} ({_describe_spec(entry.get('spec'))})"
        spec = entry.get("spec")
        if _raw_spec_id(spec) != tid:
            raise RunDirError(f"{where}: its spec is missing or does not hash to its trial id (the line was edited); "
                              "nothing was changed. Remove the line, or use a new --out")
        if tid in grid_ids:
            continue
        try:
            spec_id = TrialSpec.from_dict(spec).trial_id
        except (TypeError, ValueError, KeyError):
            spec_id = None
        if spec_id != tid and spec_id in grid_ids:
            raise RunDirError(f"{where}: written by an earlier version of etc_fast whose trial specs lack fields this "
                              "version records; its results cannot be mixed with this version's. Use a new --out")
        raise RunDirError(f"{where}: this trial is not in the run's grid (the line comes from another run) and is "
                          "never adopted; nothing was changed. Remove the line, or use a new --out")


def _raw_spec_id(spec: Any) -> str | None:
    """The trial id of a stored spec exactly as written (the hash :attr:`TrialSpec.trial_id` takes)."""
    if not isinstance(spec, Mapping):
        return None
    try:
        blob = json.dumps(spec, sort_keys=True, separators=(",", ":"))
    except (TypeError, ValueError):
        return None
    return hashlib.sha256(blob.encode()).hexdigest()[:16]


def _line_numbers(path: Path) -> dict[str, int]:
    """The first line (1-based) of each trial id in ``trials.jsonl``."""
    out: dict[str, int] = {}
    with contextlib.suppress(OSError):
        for i, raw in enumerate(path.read_bytes().split(b"\n"), 1):
            entry = parse_line(raw)
            if entry is not None:
                out.setdefault(entry["trial_id"], i)
    return out


def package_versions() -> dict[str, str]:
    """Versions of Python, the numeric stack, etc_fast and the platform."""
    import etc_fast

    out = {"python": sys.version.split()[0], "implementation": platform.python_implementation()}
    for pkg in _PACKAGES:
        try:
            out[pkg] = importlib.metadata.version(pkg)
        except importlib.metadata.PackageNotFoundError:
            out[pkg] = "not installed"
    out["etc_fast"] = etc_fast.__version__
    from etc_fast.evaluate import JUDGE_VERSION

    out["structural_judge"] = JUDGE_VERSION
    out["platform"] = platform.platform()
    out["machine"] = platform.machine()
    out.update(_cpu_paths())
    return out


def _cpu_paths() -> dict[str, str]:
    """The SIMD code paths NumPy dispatches to and the CPU Numba compiles for.

    Grids and pools do not depend on them (etc_fast._portable); truths and kernel outputs may differ
    in their last bits between two runs whose entries here differ.
    """
    from etc_fast.runner._provenance import numpy_simd

    out = {"numpy_simd": numpy_simd()}
    if os.environ.get("NPY_DISABLE_CPU_FEATURES"):
        out["numpy_simd_disabled"] = os.environ["NPY_DISABLE_CPU_FEATURES"]
    try:
        from numba.core import config as numba_config

        out["numba_cpu"] = numba_config.CPU_NAME or "host"  # type: ignore[attr-defined]  # numba.config sets its options at import; the stubs omit them
    except ImportError:
        out["numba_cpu"] = "unknown"
    return out


# ----------------------------------------------------------------------------------------
# The store
# ----------------------------------------------------------------------------------------
class RunStore:
    """Writes one run directory; the only writer while it is open (a file lock enforces it).

    Args:
        out: The run directory (created if missing).
    """

    def __init__(self, out: str | os.PathLike[str]) -> None:
        self.root = Path(out)
        self.root.mkdir(parents=True, exist_ok=True)
        (self.root / TRANSCRIPTS).mkdir(exist_ok=True)
        self._lock_fh = self._lock()
        #: Warnings about the directory found when it was opened (shown by the run).
        self.notes: list[str] = []
        #: SHA-256 of each custom task file the trials read, as recorded when the directory was opened.
        self.inputs: dict[str, str] = {}
        self._entries: dict[str, dict[str, Any]] = {}
        for entry in read_trials(self.trials_path, repair=True):
            self._entries[entry["trial_id"]] = entry
        self._fh = open(self.trials_path, "ab")

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open(cls, config: RunConfig, out: str | os.PathLike[str] | None = None, *, grid_ids: set[str] | None = None) -> RunStore:
        """Open (or create) the run directory for ``config``.

        Resuming is refused when the directory's stored config differs in a field that changes
        trial results (:func:`etc_fast.runner.config_identity`), when its files no longer match
        its manifest, when a stored line is not a trial of the grid (``grid_ids``: the trial
        ids of ``expand_grid(config)``, computed here when not given), or when a custom task file
        that stored trials read differs from the SHA-256 stored with the run (or is missing).
        Nothing is written before these checks pass. The files' hashes are then stored in
        ``config.resolved.yaml`` (``inputs``); a directory written before they were recorded gets
        them now, with a warning in :attr:`notes`.

        Raises:
            RunDirError: Different stored config, edited or foreign results, damaged results, a
                changed or missing input file, or another run holds the lock.
        """
        root = Path(out if out is not None else config.out)
        verify_before_rewrite(root)
        stored_path = root / CONFIG
        stored: dict[str, Any] | None = None
        if stored_path.exists():
            try:
                stored = yaml.safe_load(stored_path.read_text()) or {}
            except yaml.YAMLError as exc:
                raise RunDirError(f"{stored_path}: unreadable ({exc}); use a new --out") from None
            old, new = config_identity(stored), config.identity()
            if old != new:
                diff = _first_difference(old, new)
                changed = checkout_changes(root, config) if diff.startswith("llm.newtonbench_version") else None
                if changed:
                    raise RunDirError(
                        f"{root}: {changed}; its texts are part of the trials, so nothing was run or changed. "
                        f"Restore the checkout as it was ({root / VERSIONS} lists its commit and files), or run "
                        f"into a new --out"
                    )
                raise RunDirError(
                    f"{root} holds a run of a different configuration ({diff}); "
                    f"resume only with the same grid, or pass a new --out"
                )
        elif (root / TRIALS).exists() and (root / TRIALS).stat().st_size > 0:
            raise RunDirError(f"{root} holds trials.jsonl but no {CONFIG}; pass a new --out")
        entries: list[dict[str, Any]] = []
        if (root / TRIALS).exists():
            if grid_ids is None:
                from etc_fast.runner._grid import expand_grid

                grid_ids = {s.trial_id for s in expand_grid(config)}
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # the store's own read reports them
                entries = read_trials(root / TRIALS)
                check_grid_entries(root / TRIALS, entries, grid_ids)
        inputs, notes = check_inputs(root, stored, [t for g in config.grids for t in g.tasks], entries)
        with writing(root, "open the run directory", started=False):
            store = cls(root)
        store.notes, store.inputs = notes, inputs
        # The manifest described the directory as the last invocation left it; from here on it
        # changes, so the manifest goes until the run writes a new one at its end.
        try:
            with writing(root, "write to the run directory"):
                with contextlib.suppress(FileNotFoundError):
                    (root / MANIFEST).unlink()
                store.write_config(config, inputs)
                store.write_versions(config)
                write_provenance_start(root)
        except BaseException:
            store.close()
            raise
        return store

    def _lock(self):
        fh = open(self.root / LOCK, "a+b")
        try:
            import fcntl
        except ImportError:  # pragma: no cover - no advisory locks on this platform
            return fh
        try:
            fcntl.flock(fh.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            fh.close()
            raise RunDirError(f"{self.root}: another run is writing to this directory") from None
        return fh

    def close(self) -> None:
        """Close the results file and release the lock."""
        if not self._fh.closed:
            self._fh.close()
        if not self._lock_fh.closed:
            self._lock_fh.close()

    def __enter__(self) -> RunStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- paths --------------------------------------------------------------------------------
    @property
    def trials_path(self) -> Path:
        return self.root / TRIALS

    def transcript_path(self, trial_id: str) -> Path:
        return self.root / TRANSCRIPTS / f"{trial_id}.json"

    # -- writing ------------------------------------------------------------------------------
    def write_config(self, config: RunConfig, inputs: Mapping[str, str] | None = None) -> None:
        """Write ``config.resolved.yaml``: the resolved config and, under ``inputs``, the SHA-256 of
        each custom task file its trials read (path as the grid names it; left out when there is none)."""
        text = "# Resolved configuration of this run (defaults < YAML < command line).\n"
        text += yaml.safe_dump(config.to_dict(), sort_keys=False, default_flow_style=None, width=110)
        if inputs:
            text += "# SHA-256 of the files the trials read (custom task files); a resume refuses a changed one.\n"
            text += yaml.safe_dump({INPUTS: dict(inputs)}, sort_keys=False, default_flow_style=False, width=110)
        atomic_write(self.root / CONFIG, text.encode())

    def write_versions(self, config: RunConfig | None = None) -> None:
        from etc_fast.sandbox import probe_layers, zygote_versions

        versions = {**package_versions(), "sandbox_layers": probe_layers(), "sandbox_zygote": zygote_versions()}
        if config is not None and config.llm.prompts != "etc_fast":
            versions["prompts"] = prompt_sources(config)
        atomic_write(self.root / VERSIONS, (json.dumps(versions, indent=2) + "\n").encode())

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Store one finished trial: transcript first (atomic), then its fsynced line.

        Args:
            record: ``TrialRecord.to_dict()`` of the trial.

        Returns:
            The ``trials.jsonl`` entry written.

        Raises:
            RunDirError: The trial is already stored as finished (a run never repeats a result;
                an unfinished trial's new line supersedes its old one).
        """
        rec = TrialRecord.from_dict(dict(record))
        trial_id = rec.trial_id
        if trial_id in self._entries and is_finished(self._entries[trial_id]):
            raise RunDirError(f"trial {trial_id} is already stored in {self.trials_path}")
        blob = json.dumps(to_jsonable(dict(record)), sort_keys=True, allow_nan=False).encode()
        path = self.transcript_path(trial_id)
        atomic_write(path, blob)
        entry = {
            "trial_id": trial_id,
            "spec": rec.spec.to_dict(),
            "summary": to_jsonable(rec.summary()),
            "transcript": path.relative_to(self.root).as_posix(),
            "transcript_sha256": hashlib.sha256(blob).hexdigest(),
        }
        line = json.dumps(entry, sort_keys=True, allow_nan=False).encode() + b"\n"
        self._fh.write(line)
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._entries[trial_id] = entry
        return entry

    # -- reading ------------------------------------------------------------------------------
    @property
    def finished(self) -> set[str]:
        """Trial ids stored as results (failed trials and judge errors are not finished)."""
        return {tid for tid, e in self._entries.items() if is_finished(e)}

    def unfinished(self) -> dict[str, dict[str, Any]]:
        """Stored entries that the next run does again, by trial id."""
        return {tid: e for tid, e in self._entries.items() if not is_finished(e)}

    def entries(self) -> list[dict[str, Any]]:
        """Stored entries in file order."""
        return list(self._entries.values())

    def iter_records(self) -> Iterator[dict[str, Any]]:
        """Full stored records (from the transcripts), in file order."""
        for entry in self._entries.values():
            yield json.loads((self.root / entry["transcript"]).read_text())

    # -- exports ------------------------------------------------------------------------------
    def export_parquet(self) -> Path:
        """Rebuild ``trials.parquet`` from the stored summaries (typed, file order)."""
        return write_parquet(self.root, self._entries.values())

    def write_manifest(self) -> dict[str, str]:
        """(Re)write ``manifest.sha256`` (see :func:`write_manifest`)."""
        return write_manifest(self.root)


def _first_difference(old: Any, new: Any, path: str = "") -> str:
    if isinstance(old, Mapping) and isinstance(new, Mapping):
        for k in list(old) + [k for k in new if k not in old]:
            if k not in old:
                return f"{path}{k}: not in the stored config"
            if k not in new:
                return f"{path}{k}: only in the stored config"
            if old[k] != new[k]:
                return _first_difference(old[k], new[k], f"{path}{k}.")
    if isinstance(old, list) and isinstance(new, list):
        if len(old) != len(new):
            return f"{path.rstrip('.')}: {len(old)} entries stored, {len(new)} now"
        for i, (a, b) in enumerate(zip(old, new)):
            if a != b:
                return _first_difference(a, b, f"{path.rstrip('.')}[{i}].")
    return f"{path.rstrip('.')}: stored {old!r}, now {new!r}"
