"""A run's trial lines, packed so they can travel where its directory cannot (``results pack`` and
``results unpack``).

A run made in parts may outlive the machine that holds its directory. Its trial lines are what a
resume and the report need: ``pack`` appends the complete lines not yet packed to an archive
folder as one xz-compressed shard, beside copies of the run's config, versions and provenance;
``unpack`` rebuilds ``trials.jsonl`` and those files in a run directory, where ``python -m
etc_fast.run`` resumes and the report reads them as it reads a run that never moved.

The archive folder::

    DIR/archive.json            {"schema", "shards": [{"file", "lines", "sha256"}], "sha256"}
    DIR/trials.NNNN.jsonl.xz    the lines of one pack, in file order (sha256: of its decompressed bytes)
    DIR/config.resolved.yaml    the run's, as of the last pack (so are versions.json, provenance.json)

``archive.json``'s ``sha256`` is that of all packed lines together: a pack refuses a run whose first
lines are not exactly the archive's (another run, or an edited one), and an unpack refuses shards
that do not hash to what the archive says. Lines only ever append (a trial run again supersedes its
old line by a later one), so packing is safe while a run writes: it takes the complete lines.

Transcripts are not packed (about five times the lines' compressed size): an unpacked run's
viewer and trial table leave out what they would read from them, and a trial's transcript comes
back by running the trial again (records are deterministic).
"""

from __future__ import annotations

import hashlib
import json
import lzma
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from etc_fast.results._summary import ResultsError

__all__ = ["ARCHIVE", "Packed", "pack_run", "unpack_run"]

#: The archive folder's index file.
ARCHIVE = "archive.json"
_SCHEMA = 1
_TRIALS = "trials.jsonl"
#: Run files copied beside the shards (the newest pack's copy wins).
_RUN_FILES = ("config.resolved.yaml", "versions.json", "provenance.json")


@dataclass(frozen=True)
class Packed:
    """What a pack or unpack did: ``lines`` moved now, ``total`` lines in the archive, ``shard``
    the file written (pack; None when there was nothing new)."""

    lines: int
    total: int
    shard: str | None = None


def _complete_lines(path: Path) -> bytes:
    """The bytes of ``path`` up to and including its last newline (a line being written is left)."""
    if not path.is_file():
        raise ResultsError(f"{path}: no such file; the run directory holds no trials")
    data = path.read_bytes()
    return data[: data.rfind(b"\n") + 1]


def _read_index(folder: Path) -> dict[str, Any]:
    path = folder / ARCHIVE
    if not path.exists():
        return {"schema": _SCHEMA, "shards": [], "sha256": hashlib.sha256(b"").hexdigest()}
    try:
        index = json.loads(path.read_text())
        shards = index["shards"]
        if index.get("schema") != _SCHEMA or not isinstance(shards, list):
            raise ValueError(f"schema {index.get('schema')!r}, expected {_SCHEMA}")
        for s in shards:
            if not (isinstance(s["file"], str) and "/" not in s["file"] and int(s["lines"]) > 0):
                raise ValueError(f"bad shard entry {s!r}")
        if not isinstance(index["sha256"], str):
            raise ValueError("its sha256 is not a string")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ResultsError(f"{path}: not an archive index ({exc})") from None
    return index


def _packed_bytes(folder: Path, index: dict[str, Any]) -> bytes:
    """All packed lines, each shard checked against its hash and line count."""
    parts = []
    for s in index["shards"]:
        path = folder / s["file"]
        try:
            data = lzma.decompress(path.read_bytes())
        except (OSError, lzma.LZMAError) as exc:
            raise ResultsError(f"{path}: cannot read the shard ({exc})") from None
        if hashlib.sha256(data).hexdigest() != s.get("sha256") or data.count(b"\n") != int(s["lines"]):
            raise ResultsError(f"{path}: does not match {folder / ARCHIVE} (hash or line count); the archive is damaged")
        parts.append(data)
    data = b"".join(parts)
    if hashlib.sha256(data).hexdigest() != index["sha256"]:
        raise ResultsError(f"{folder / ARCHIVE}: its shards do not add up to its sha256; the archive is damaged")
    return data


def _same_config(a: Path, b: Path) -> None:
    if a.exists() and b.exists() and a.read_bytes() != b.read_bytes():
        import yaml

        from etc_fast.runner import config_identity

        if config_identity(yaml.safe_load(a.read_text()) or {}) != config_identity(yaml.safe_load(b.read_text()) or {}):
            raise ResultsError(f"{a} and {b} are runs of different configurations; nothing was written")


def pack_run(run: str | Path, folder: str | Path) -> Packed:
    """Append ``run``'s complete trial lines not yet in the archive ``folder`` as a new shard.

    Raises:
        ResultsError: ``run`` has no trials, is not a continuation of the archive (its first lines
            differ from the packed ones, or it has fewer), is of another configuration, or the
            archive is damaged. Nothing is written then.
    """
    run, folder = Path(run), Path(folder)
    lines = _complete_lines(run / _TRIALS)
    index = _read_index(folder)
    packed = _packed_bytes(folder, index)
    if not lines.startswith(packed):
        raise ResultsError(
            f"{run / _TRIALS} does not begin with the {len(packed.splitlines()):,} lines packed in {folder}: "
            f"it is another run, or an edited one; nothing was written"
        )
    _same_config(run / _RUN_FILES[0], folder / _RUN_FILES[0])
    new = lines[len(packed):]
    total = lines.count(b"\n")
    if not new:
        return Packed(0, total)
    folder.mkdir(parents=True, exist_ok=True)
    name = f"trials.{len(index['shards']) + 1:04d}.jsonl.xz"
    from etc_fast.store import atomic_write

    atomic_write(folder / name, lzma.compress(new))
    for f in _RUN_FILES:
        if (run / f).exists():
            atomic_write(folder / f, (run / f).read_bytes())
    index["shards"].append({"file": name, "lines": new.count(b"\n"), "sha256": hashlib.sha256(new).hexdigest()})
    index["sha256"] = hashlib.sha256(lines).hexdigest()
    atomic_write(folder / ARCHIVE, (json.dumps(index, indent=1) + "\n").encode())
    return Packed(new.count(b"\n"), total, name)


def unpack_run(folder: str | Path, run: str | Path) -> Packed:
    """Rebuild ``run``'s trial lines and run files from the archive ``folder``, into a new or empty
    directory (a run that already holds exactly the archive's lines is left as it is).

    Raises:
        ResultsError: The archive is damaged or empty, or ``run`` holds other trial lines. Nothing
            is written then.
    """
    folder, run = Path(folder), Path(run)
    if not (folder / ARCHIVE).exists():
        raise ResultsError(f"{folder}: no {ARCHIVE}; not an archive made by `results pack`")
    index = _read_index(folder)
    packed = _packed_bytes(folder, index)
    if not packed:
        raise ResultsError(f"{folder}: the archive holds no lines")
    total = packed.count(b"\n")
    if (run / _TRIALS).exists():
        if (run / _TRIALS).read_bytes() == packed:
            return Packed(0, total)
        raise ResultsError(f"{run} already holds trials other than the archive's; unpack into a new directory")
    from etc_fast.store import atomic_write

    run.mkdir(parents=True, exist_ok=True)
    for f in _RUN_FILES:
        if (folder / f).exists():
            shutil.copyfile(folder / f, run / f)
    atomic_write(run / _TRIALS, packed)
    return Packed(total, total)
