"""The paid-call ledger: one row per answered (paid) call, kept in the reply cache.

A call the server answered is written to the cache's ``ledger`` table in the same SQLite
transaction that stores its reply (:meth:`etc_fast.llm.ResponseCache.put`), tagged with the run
and the trial it was made for. So a call is in the ledger exactly when its reply is in the cache:
a run interrupted after paying for some calls keeps them on record, and the resumed run, which
reads those replies back from the cache, does not pay (and is not charged) for them again.

The tag comes from :func:`ledger_tag`, which the runner's trial worker sets around each trial
(and around each judge retry): a context variable, so concurrent trials in threads each carry
their own. A call made outside any tag (a client used on its own) is recorded with no run.

A run directory that uses a reply cache names its ledger in ``OUT/ledger.json``: the run's ledger
id (a random hex string made once, kept across resumes), the cache files its calls go to, and the
trials already stored when the ledger began (``before``: trial id -> transcript SHA-256; a run
directory written before the ledger existed), whose paid calls only their own counts know.
"""

from __future__ import annotations

import contextlib
import contextvars
import dataclasses
import json
import os
import sqlite3
import uuid
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

__all__ = [
    "LEDGER_FILE",
    "LedgerTag",
    "PaidCall",
    "PaidTotals",
    "current_tag",
    "ledger_tag",
    "paid_usd",
    "read_ledger_file",
    "read_paid",
    "write_ledger_file",
]

#: The file in a run directory that names the run's ledger id and its cache files.
LEDGER_FILE = "ledger.json"

LEDGER_SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    run TEXT,
    trial TEXT,
    role TEXT NOT NULL,
    name TEXT NOT NULL,
    model TEXT NOT NULL,
    key TEXT NOT NULL,
    prompt_tokens INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    attempts INTEGER NOT NULL,
    created REAL NOT NULL
)
"""
LEDGER_INDEX = "CREATE INDEX IF NOT EXISTS ledger_run ON ledger (run)"


@dataclasses.dataclass(frozen=True)
class LedgerTag:
    """Who a call is made for.

    Attributes:
        run: The run's ledger id (``OUT/ledger.json``), or ``None`` outside a run.
        trial: The trial id, or ``None``.
    """

    run: str | None = None
    trial: str | None = None


_TAG: contextvars.ContextVar[LedgerTag | None] = contextvars.ContextVar("etc_fast_ledger_tag", default=None)
_UNTAGGED = LedgerTag()


def current_tag() -> LedgerTag:
    """The tag set by the innermost :func:`ledger_tag` of this thread (an empty one when none)."""
    return _TAG.get() or _UNTAGGED


@contextlib.contextmanager
def ledger_tag(run: str | None, trial: str | None) -> Iterator[LedgerTag]:
    """Record every paid call made inside the block as made for ``run`` and ``trial``."""
    tag = LedgerTag(run, trial)
    token = _TAG.set(tag)
    try:
        yield tag
    finally:
        _TAG.reset(token)


@dataclasses.dataclass(frozen=True)
class PaidCall:
    """One answered call, as the ledger stores it beside its reply.

    Attributes:
        tag: The run and trial it was made for.
        role: ``policy`` or ``judge``.
        name: The model name as configured (a grid's model, the judge's model).
        model: The model id sent.
        prompt_tokens / completion_tokens: The usage the server reported.
        attempts: Requests it took (retries included).
    """

    tag: LedgerTag
    role: str
    name: str
    model: str
    prompt_tokens: int
    completion_tokens: int
    attempts: int

    def row(self, key: str, created: float) -> tuple[Any, ...]:
        """The ``ledger`` row (columns after ``id``) for the reply stored under ``key``."""
        return (
            self.tag.run, self.tag.trial, self.role, self.name, self.model, key, int(self.prompt_tokens),
            int(self.completion_tokens), int(self.attempts), float(created),
        )


@dataclasses.dataclass(frozen=True)
class PaidTotals:
    """Paid calls of one run for one role and model.

    Attributes:
        role / name / model: As in :class:`PaidCall`.
        calls: Answered calls.
        prompt_tokens / completion_tokens: Their reported usage.
        trials: Distinct trials they were made for.
        trial: The trial, when totals are kept per trial (``read_paid(..., by_trial=True)``).
    """

    role: str
    name: str
    model: str
    calls: int
    prompt_tokens: int
    completion_tokens: int
    trials: int
    trial: str | None = None

    @property
    def tokens(self) -> int:
        """Prompt and completion tokens together."""
        return self.prompt_tokens + self.completion_tokens


def read_paid(cache_path: str | os.PathLike[str], run: str, *, by_trial: bool = False) -> list[PaidTotals] | None:
    """The paid calls ``run`` recorded in the cache at ``cache_path``, per role and model (and per
    trial with ``by_trial``).

    Opens the file read-only (never creates or changes it). Returns ``None`` when the file holds
    no ledger (a cache written before the ledger existed, or no such file).

    Raises:
        sqlite3.Error: The file exists but cannot be read as a SQLite database.
    """
    path = os.fspath(cache_path)
    if not os.path.exists(path):
        return None
    conn = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=30.0)
    try:
        has = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'ledger'").fetchone()
        if has is None:
            return None
        group = "role, name, model" + (", trial" if by_trial else "")
        rows = conn.execute(
            "SELECT role, name, model, COUNT(*), SUM(prompt_tokens), SUM(completion_tokens), COUNT(DISTINCT trial), "
            f"{'trial' if by_trial else 'NULL'} FROM ledger WHERE run = ? GROUP BY {group} ORDER BY role DESC, {group}",
            (run,),
        ).fetchall()
    finally:
        conn.close()
    return [PaidTotals(str(r[0]), str(r[1]), str(r[2]), int(r[3]), int(r[4] or 0), int(r[5] or 0), int(r[6]),
                       None if r[7] is None else str(r[7])) for r in rows]


def paid_usd(totals: Iterable[PaidTotals], prices: Mapping[str, Mapping[str, float]]) -> float | None:
    """What ``totals`` cost at ``prices`` (``{model name or id: {prompt, completion}}``, USD per 1M
    tokens), or ``None`` when a model with paid calls has no price."""
    usd = 0.0
    for t in totals:
        rate = prices.get(t.name) or prices.get(t.model)
        if not rate:
            if t.calls:
                return None
            continue
        usd += t.prompt_tokens / 1e6 * float(rate["prompt"]) + t.completion_tokens / 1e6 * float(rate["completion"])
    return usd


def write_ledger_file(run_dir: str | os.PathLike[str], caches: Iterable[str | os.PathLike[str]],
                      stored: Mapping[str, str] | None = None) -> str:
    """Make sure ``run_dir/ledger.json`` names the run's ledger id and ``caches`` (absolute paths);
    returns the id. An existing id is kept (a resumed run goes on counting under it); cache files
    named before are kept beside the new ones. ``stored`` (trial id -> transcript SHA-256 of the
    trials already in the run directory) is kept as ``before`` only when the file is made.

    Raises:
        OSError: The file cannot be written.
        ValueError: An existing ``ledger.json`` is not one this function wrote.
    """
    path = Path(run_dir) / LEDGER_FILE
    known = read_ledger_file(run_dir)
    if known is None:
        known_before: dict[str, str] = {str(k): str(v) for k, v in (stored or {}).items()}
        run, names = uuid.uuid4().hex, []
    else:
        known_before, run, names = known["before"], known["run"], list(known["caches"])
    for c in caches:
        full = os.path.abspath(os.fspath(c))
        if full not in names:
            names.append(full)
    data = {"run": run, "caches": names, "before": known_before}
    if data != known:
        tmp = path.with_name(f".{LEDGER_FILE}.{os.getpid()}.tmp")
        with open(tmp, "wb") as fh:
            fh.write((json.dumps(data, indent=1, sort_keys=True) + "\n").encode())
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    return run


def read_ledger_file(run_dir: str | os.PathLike[str]) -> dict[str, Any] | None:
    """``{"run": id, "caches": [paths], "before": {trial id: transcript sha256}}`` from
    ``run_dir/ledger.json``, or ``None`` when the run directory has none (written before the
    ledger existed, or a run without a reply cache).

    Raises:
        ValueError: The file exists but is not a ledger file (says where and what is wrong).
    """
    path = Path(run_dir) / LEDGER_FILE
    try:
        text = path.read_text()
    except FileNotFoundError:
        return None
    try:
        data = json.loads(text)
    except ValueError as exc:
        raise ValueError(f"{path}: not JSON ({exc})") from None
    before = data.get("before", {}) if isinstance(data, dict) else None
    if (not isinstance(data, dict) or not isinstance(data.get("run"), str) or not data["run"]
            or not isinstance(data.get("caches"), list) or not all(isinstance(c, str) for c in data["caches"])
            or not isinstance(before, dict) or not all(isinstance(v, str) for v in before.values())):
        raise ValueError(f"{path}: expected {{\"run\": <id>, \"caches\": [<paths>], \"before\": {{<trial id>: "
                         f"<sha256>}}}}, got {text[:200]!r}")
    return {"run": data["run"], "caches": list(data["caches"]), "before": dict(before)}
