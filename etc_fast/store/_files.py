"""The run directory: append-only results, one transcript per trial, provenance files.

Layout of a run directory ``OUT``::

    OUT/trials.jsonl              one line per finished trial (append-only, fsynced per line)
    OUT/transcripts/<id>.json     the full TrialRecord of each trial (written before its line)
    OUT/trials.parquet            the results table (typed; rebuilt from trials.jsonl)
    OUT/config.resolved.yaml      the resolved run configuration
    OUT/versions.json             interpreter, package and platform versions; the sandbox's
                                  active isolation layers (sandbox_layers) and what
                                  its zygote runs (sandbox_zygote)
    OUT/provenance.json           the code's git commit (and whether it was modified), the first
                                  start and the last end (UTC), the machine (etc_fast.runner)
    OUT/ledger.json               LLM runs with a reply cache: the run's ledger id and the cache
                                  files whose ledger holds its paid calls (etc_fast.llm)
    OUT/manifest.sha256           SHA-256 of every file above (and the report), refreshed at the end
    OUT/report/                   tables and figures (:mod:`etc_fast.report`)

A ``trials.jsonl`` line is ``{"trial_id", "spec", "summary", "transcript", "transcript_sha256"}``
(``summary`` = the results-table row). Because the transcript is renamed into place before the
line is appended, a line always points at a complete transcript; a run killed at any moment
loses at most the trials in flight, and a line torn by the kill is dropped on the next open.

A trial stored with status ``failed`` (no reply from the model, a crash, a timeout) or whose judge
could not be reached (``judge_status: error``) is not finished: the next run does it again and
appends a new line for it, which supersedes the old one.

Integrity: before anything in a directory is rewritten, its files are checked against
``manifest.sha256`` (:func:`verify_before_rewrite`); a mismatch stops the invocation and says
which files differ. While a run writes, the directory has no manifest (it is removed once the
check has passed and the lock is held, and written again at the end), so a run killed half-way
leaves no stale manifest behind that would later read as "edited". Every stored line must
belong to the run's grid and its spec must hash to its trial id; a line from another grid is
refused, never adopted.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import stat
import tempfile
import warnings
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import polars as pl

from etc_fast.errors import JUDGE_STOPPED
from etc_fast.store._schema import entries_frame

TRIALS = "trials.jsonl"
TRANSCRIPTS = "transcripts"
PARQUET = "trials.parquet"
CONFIG = "config.resolved.yaml"
VERSIONS = "versions.json"
MANIFEST = "manifest.sha256"
REPORT = "report"
LOCK = ".lock"
_NOT_HASHED = {MANIFEST, LOCK}

class RunDirError(RuntimeError):
    """A run directory cannot be used (different config, corrupt results, another run writing,
    or it cannot be written: read-only, full)."""


@contextlib.contextmanager
def writing(root: str | os.PathLike[str], doing: str, *, started: bool = True) -> Iterator[None]:
    """Turn an ``OSError`` raised while ``doing`` something in the run directory ``root`` into a
    :class:`RunDirError` that names the directory, the file and the cause (read-only, full, ...).
    ``started``: whether trials may already be stored (the advice differs)."""
    try:
        yield
    except OSError as exc:
        what = exc.strerror or type(exc).__name__
        where = f" ({exc.filename})" if exc.filename else ""
        advice = (
            "Trials stored so far are kept; free space or fix permissions and run the same command again to resume"
            if started else "Nothing was run; choose a writable --out"
        )
        raise RunDirError(f"{root}: cannot {doing}: {what}{where}. {advice}.") from None


# ----------------------------------------------------------------------------------------
# trials.jsonl
# ----------------------------------------------------------------------------------------
def read_trials(path: str | os.PathLike[str], *, repair: bool = False) -> list[dict[str, Any]]:
    """Read ``trials.jsonl`` entries in file order.

    A torn last line (no trailing newline or not valid JSON: the writer was killed mid-line) is
    dropped with a :class:`RuntimeWarning`; with ``repair=True`` the file is also truncated to the
    end of the last good line. A bad line anywhere else means the file was damaged: error.
    A trial id seen twice keeps the later line when the earlier one is unfinished (see
    :func:`is_finished`: the later is its re-run), else the first line (warning). Entries keep the
    position of their trial's first line.

    Raises:
        RunDirError: A line other than the last is not a valid entry.
    """
    path = Path(path)
    if not path.exists():
        return []
    data = path.read_bytes()
    *complete, tail = data.split(b"\n")  # ``tail`` is b"" when the file ends with a newline
    entries: dict[str, dict[str, Any]] = {}
    good_end = 0
    torn: bytes | None = tail or None
    for i, raw in enumerate(complete):
        entry = parse_line(raw)
        if entry is None:
            if i == len(complete) - 1 and not tail:
                torn = raw
                break
            raise RunDirError(f"{path}: line {i + 1} is not a valid trial entry; the file is damaged")
        good_end += len(raw) + 1
        old = entries.get(entry["trial_id"])
        if old is not None and is_finished(old):
            warnings.warn(f"{path}: trial {entry['trial_id']} appears twice; keeping the first", RuntimeWarning, stacklevel=2)
            continue
        entries[entry["trial_id"]] = entry
    if torn is not None:
        msg = f"{path}: dropped a torn last line ({len(torn)} bytes) left by an interrupted write"
        if repair:
            with open(path, "r+b") as fh:
                fh.truncate(good_end)
                fh.flush()
                os.fsync(fh.fileno())
            msg += "; file truncated to the last complete line"
        warnings.warn(msg, RuntimeWarning, stacklevel=2)
    return list(entries.values())


#: How a structural judge before deadlines were failures stored a submission it reached no verdict
#: on in time: as not credited, with ``judge_status`` ``ok``, its reason beginning so (the judge's
#: own text, :data:`etc_fast.errors.JUDGE_STOPPED`). Such a line is no result either.
STOPPED_REASON = JUDGE_STOPPED


def no_verdict(summary: Mapping[str, Any]) -> bool:
    """Whether a stored trial's judge reached no verdict: ``judge_status`` ``error``, or a deadline
    stored as not credited by an older structural judge (:data:`STOPPED_REASON`)."""
    return summary.get("judge_status") == "error" or str(summary.get("judge_reason") or "").startswith(STOPPED_REASON)


def no_verdict_expr(columns: Iterable[str]) -> pl.Expr:
    """:func:`no_verdict` as a Polars expression over a results table with ``columns`` (the same
    rule, read column-wise; a missing column reads as the key missing from a summary)."""
    columns = set(columns)
    status = (pl.col("judge_status") == "error").fill_null(False) if "judge_status" in columns else pl.lit(False)
    stopped = (pl.col("judge_reason").str.starts_with(STOPPED_REASON).fill_null(False) if "judge_reason" in columns
               else pl.lit(False))
    return status | stopped


def is_finished(entry: Mapping[str, Any]) -> bool:
    """Whether a stored trial is a result: not ``failed`` and its judge reached a verdict."""
    summary = entry.get("summary") or {}
    return summary.get("status") != "failed" and not no_verdict(summary)


def parse_line(raw: bytes) -> dict[str, Any] | None:
    """One ``trials.jsonl`` line as its entry, or None when it is not one.

    An entry is a JSON object with a string ``trial_id`` and an object ``summary``; undecodable bytes,
    invalid JSON or another shape give None (the caller decides whether that is a torn last line or
    damage).
    """
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
    atomic_write(Path(run_dir) / MANIFEST, text.encode())
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


def verify_before_rewrite(run_dir: str | os.PathLike[str]) -> None:
    """Check a run directory against its manifest before anything in it is rewritten.

    Nothing to check when the directory holds no manifest (a new directory, or a run that was
    interrupted: the manifest is removed while a run writes). Files under ``report/`` are not
    checked here: the report is derived from the results and rewritten whole.

    Raises:
        RunDirError: The files differ from the manifest (the message lists the differences).
    """
    root = Path(run_dir)
    if not (root / MANIFEST).is_file():
        return
    # report/ is derived from the verified results and rewritten whole; a removed or edited report
    # file is no reason to stop, an edited result is
    problems = [p for p in check_manifest(root) if not p.startswith(f"{REPORT}/")]
    if problems:
        shown = "; ".join(problems[:4]) + (f"; and {len(problems) - 4} more" if len(problems) > 4 else "")
        raise RunDirError(
            f"{root / MANIFEST}: the run directory no longer matches its manifest ({shown}); nothing was "
            f"changed. Restore the files (python -m etc_fast.replay {root} shows the details), or use a new --out"
        )


def _umask() -> int:
    """The process's umask, read without changing it (``os.umask`` sets it, racing other threads)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("Umask:"):
                    return int(line.split()[1], 8)
    except (OSError, ValueError):
        pass
    return 0o022


@contextlib.contextmanager
def replacing(path: Path) -> Iterator[str]:
    """Yield a temporary path beside ``path``; renamed onto ``path`` when the block succeeds, removed if not.

    Temporary names start with ``.tmp-``, which :func:`file_hashes` skips.
    """
    fd, tmp = tempfile.mkstemp(prefix=".tmp-", dir=path.parent)
    try:
        # mkstemp makes the file private (0600); the result gets the mode a plain open() would give
        # (0666 less the umask), or that of the file it replaces
        try:
            mode = stat.S_IMODE(os.stat(path).st_mode)
        except OSError:
            mode = 0o666 & ~_umask()
        os.fchmod(fd, mode)
    finally:
        os.close(fd)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise


def atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same directory (fsynced) + rename."""
    with replacing(path) as tmp, open(tmp, "wb") as fh:
        fh.write(data)
        fh.flush()
        os.fsync(fh.fileno())


def export_parquet(run_dir: str | os.PathLike[str]) -> Path:
    """Write ``RUN_DIR/trials.parquet`` from ``RUN_DIR/trials.jsonl`` (typed, file order)."""
    root = Path(run_dir)
    return write_parquet(root, read_trials(root / TRIALS))


def write_parquet(root: Path, entries: Iterable[Mapping[str, Any]]) -> Path:
    """Write ``entries`` (trial entries, in order) as ``root/trials.parquet``, replacing the file atomically,
    and return its path.
    """
    frame = entries_frame(entries)
    with replacing(root / PARQUET) as tmp:
        frame.write_parquet(tmp)
    return root / PARQUET


