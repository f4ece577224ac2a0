"""The run directory: append-only results, one transcript per trial, provenance files.

Layout of a run directory ``OUT``::

    OUT/trials.jsonl              one line per finished trial (append-only, fsynced per line)
    OUT/transcripts/<id>.json     the full TrialRecord of each trial (written before its line)
    OUT/trials.parquet            the results table (typed; rebuilt from trials.jsonl)
    OUT/config.resolved.yaml      the resolved run configuration
    OUT/versions.json             interpreter, package and platform versions
    OUT/manifest.sha256           SHA-256 of every file above (and the report), refreshed at the end
    OUT/report/                   tables and figures (:mod:`etc_fast.report`)

A ``trials.jsonl`` line is ``{"trial_id", "spec", "summary", "transcript", "transcript_sha256"}``
(``summary`` = the results-table row). Because the transcript is renamed into place before the
line is appended, a line always points at a complete transcript; a run killed at any moment
loses at most the trials in flight, and a line torn by the kill is dropped on the next open.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

from etc_fast.protocol import TrialRecord, to_jsonable
from etc_fast.runner._config import RunConfig, config_identity
from etc_fast.runner._schema import entries_frame

__all__ = [
    "RunDirError",
    "RunStore",
    "read_trials",
    "file_hashes",
    "write_manifest",
    "read_manifest",
    "check_manifest",
    "package_versions",
    "export_parquet",
]

TRIALS = "trials.jsonl"
TRANSCRIPTS = "transcripts"
PARQUET = "trials.parquet"
CONFIG = "config.resolved.yaml"
VERSIONS = "versions.json"
MANIFEST = "manifest.sha256"
_LOCK = ".lock"
_NOT_HASHED = {MANIFEST, _LOCK}

_PACKAGES = ("numpy", "numba", "scipy", "polars", "openai", "pyyaml", "matplotlib", "ray")


class RunDirError(RuntimeError):
    """A run directory cannot be used (different config, corrupt results, another run writing)."""


# ----------------------------------------------------------------------------------------
# trials.jsonl
# ----------------------------------------------------------------------------------------
def read_trials(path: str | os.PathLike[str], *, repair: bool = False) -> list[dict[str, Any]]:
    """Read ``trials.jsonl`` entries in file order.

    A torn last line (no trailing newline or not valid JSON: the writer was killed mid-line) is
    dropped with a :class:`RuntimeWarning`; with ``repair=True`` the file is also truncated to the
    end of the last good line. A bad line anywhere else means the file was damaged: error.
    A trial id seen twice keeps its first line (warning).

    Raises:
        RunDirError: A line other than the last is not a valid entry.
    """
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")  # ``tail`` is b"" when the file ends with a newline
    entries: list[dict[str, Any]] = []
    seen: set[str] = set()
    good_end = 0
    torn: bytes | None = tail or None
    for i, raw in enumerate(complete):
        entry = _parse_line(raw)
        if entry is None:
            if i == len(complete) - 1 and not tail:
                torn = raw
                break
            raise RunDirError(f"{path}: line {i + 1} is not a valid trial entry; the file is damaged")
        good_end += len(raw) + 1
        if entry["trial_id"] in seen:
            warnings.warn(f"{path}: trial {entry['trial_id']} appears twice; keeping the first", RuntimeWarning, stacklevel=2)
            continue
        seen.add(entry["trial_id"])
        entries.append(entry)
    if torn is not None:
        msg = f"{path}: dropped a torn last line ({len(torn)} bytes) left by an interrupted write"
        if repair:
            with open(path, "r+b") as fh:
                fh.truncate(good_end)
                fh.flush()
                os.fsync(fh.fileno())
            msg += "; file truncated to the last complete line"
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
    return entries


def _parse_line(raw: bytes) -> dict[str, Any] | None:
    try:
        entry = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        return None
    if not isinstance(entry, dict) or not isinstance(entry.get("trial_id"), str) or not isinstance(entry.get("summary"), dict):
        return None
    return entry


# ----------------------------------------------------------------------------------------
# Hashes and manifest
# ----------------------------------------------------------------------------------------
def _sha256_file(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_hashes(run_dir: str | os.PathLike[str]) -> dict[str, str]:
    """SHA-256 of every file in the run directory (relative POSIX path -> hex), manifest excluded."""
    root = Path(run_dir)
    out: dict[str, str] = {}
    for p in sorted(root.rglob("*")):
        if not p.is_file():
            continue
        rel = p.relative_to(root).as_posix()
        if rel in _NOT_HASHED or p.name.startswith(".tmp-"):
            continue
        out[rel] = _sha256_file(p)
    return out


def write_manifest(run_dir: str | os.PathLike[str]) -> dict[str, str]:
    """(Re)write ``manifest.sha256`` (``sha256sum`` format) for the run directory's current files."""
    hashes = file_hashes(run_dir)
    text = "".join(f"{h}  {rel}\n" for rel, h in hashes.items())
    _atomic_write(Path(run_dir) / MANIFEST, text.encode())
    return hashes


def read_manifest(run_dir: str | os.PathLike[str]) -> dict[str, str]:
    """The stored manifest (empty if there is none)."""
    path = Path(run_dir) / MANIFEST
    if not path.exists():
        return {}
    out: dict[str, str] = {}
    for line in path.read_text().splitlines():
        if line.strip():
            digest, _, rel = line.partition("  ")
            out[rel] = digest
    return out


def check_manifest(run_dir: str | os.PathLike[str], *, hashes: Mapping[str, str] | None = None) -> list[str]:
    """Differences between the files and the manifest (empty list = every file matches).

    Args:
        run_dir: The run directory.
        hashes: Its :func:`file_hashes`, when the caller has just taken them (else they are taken here).
    """
    stored = read_manifest(run_dir)
    if not stored:
        return [f"{Path(run_dir) / MANIFEST}: missing"]
    now = file_hashes(run_dir) if hashes is None else hashes
    problems = []
    for rel, digest in stored.items():
        if rel not in now:
            problems.append(f"{rel}: listed in the manifest but missing")
        elif now[rel] != digest:
            problems.append(f"{rel}: SHA-256 differs from the manifest")
    problems.extend(f"{rel}: not in the manifest" for rel in now if rel not in stored)
    return problems


@contextlib.contextmanager
def _replacing(path: Path) -> Iterator[str]:
    """Yield a temporary path beside ``path``; renamed onto ``path`` when the block succeeds, removed if not.

    Temporary names start with ``.tmp-``, which :func:`file_hashes` skips.
    """
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory (fsynced) + rename."""
    with _replacing(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


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
    from etc_fast.evaluate._structural import JUDGE_VERSION

    out["structural_judge"] = JUDGE_VERSION
    out["platform"] = platform.platform()
    out["machine"] = platform.machine()
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
        self._entries: dict[str, dict[str, Any]] = {}
        for entry in read_trials(self.trials_path, repair=True):
            self._entries[entry["trial_id"]] = entry
        self._fh = open(self.trials_path, "ab")

    # -- opening ------------------------------------------------------------------------------
    @classmethod
    def open(cls, config: RunConfig, out: str | os.PathLike[str] | None = None) -> RunStore:
        """Open (or create) the run directory for ``config``.

        Resuming is refused when the directory's stored config differs in a field that changes
        trial results (:func:`etc_fast.runner.config_identity`).

        Raises:
            RunDirError: Different stored config, damaged results, or another run holds the lock.
        """
        root = Path(out if out is not None else config.out)
        stored_path = root / CONFIG
        if stored_path.exists():
            try:
                stored = yaml.safe_load(stored_path.read_text()) or {}
            except yaml.YAMLError as exc:
                raise RunDirError(f"{stored_path}: unreadable ({exc}); use a new --out") from None
            old, new = config_identity(stored), config.identity()
            if old != new:
                diff = _first_difference(old, new)
                raise RunDirError(
                    f"{root} holds a run of a different configuration ({diff}); "
                    f"resume only with the same grid, or pass a new --out"
                )
        elif (root / TRIALS).exists() and (root / TRIALS).stat().st_size > 0:
            raise RunDirError(f"{root} holds trials.jsonl but no {CONFIG}; pass a new --out")
        store = cls(root)
        store.write_config(config)
        store.write_versions()
        return store

    def _lock(self):
        fh = open(self.root / _LOCK, "a+b")
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
    def write_config(self, config: RunConfig) -> None:
        text = "# Resolved configuration of this run (defaults < YAML < command line).\n"
        text += yaml.safe_dump(config.to_dict(), sort_keys=False, default_flow_style=None, width=110)
        _atomic_write(self.root / CONFIG, text.encode())

    def write_versions(self) -> None:
        _atomic_write(self.root / VERSIONS, (json.dumps(package_versions(), indent=2) + "\n").encode())

    def append(self, record: Mapping[str, Any]) -> dict[str, Any]:
        """Store one finished trial: transcript first (atomic), then its fsynced line.

        Args:
            record: ``TrialRecord.to_dict()`` of the trial.

        Returns:
            The ``trials.jsonl`` entry written.

        Raises:
            RunDirError: The trial is already stored (a run never repeats a finished trial).
        """
        rec = TrialRecord.from_dict(dict(record))
        trial_id = rec.trial_id
        if trial_id in self._entries:
            raise RunDirError(f"trial {trial_id} is already stored in {self.trials_path}")
        blob = json.dumps(to_jsonable(dict(record)), sort_keys=True, allow_nan=False).encode()
        path = self.transcript_path(trial_id)
        _atomic_write(path, blob)
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
        """Trial ids already stored."""
        return set(self._entries)

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
        return _write_parquet(self.root, self._entries.values())

    def write_manifest(self) -> dict[str, str]:
        """(Re)write ``manifest.sha256`` (see :func:`write_manifest`)."""
        return write_manifest(self.root)


def export_parquet(run_dir: str | os.PathLike[str]) -> Path:
    """Write ``RUN_DIR/trials.parquet`` from ``RUN_DIR/trials.jsonl`` (typed, file order)."""
    root = Path(run_dir)
    return _write_parquet(root, read_trials(root / TRIALS))


def _write_parquet(root: Path, entries: Iterable[Mapping[str, Any]]) -> Path:
    frame = entries_frame(entries)
    with _replacing(root / PARQUET) as tmp:
        frame.write_parquet(tmp)
    return root / PARQUET


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
