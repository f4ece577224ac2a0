"""Running a configuration: grid -> executor -> store -> report."""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import sys
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TextIO

from etc_fast._signals import interrupt_on_sigterm
from etc_fast.protocol import TrialSpec
from etc_fast.runner._config import RunConfig
from etc_fast.runner._executors import TrialWorker, _llm_stop, create_executor
from etc_fast.runner._grid import expand_grid
from etc_fast.runner._ledger import RunLedger, open_run_ledger
from etc_fast.runner._progress import Progress, format_duration
from etc_fast.runner._provenance import utc_now, write_provenance_end
from etc_fast.runner._store import RunStore
from etc_fast.store import RunDirError, write_manifest, writing

__all__ = ["PreflightError", "RunResult", "RunStopped", "interrupt_on_sigterm", "run_config"]


class PreflightError(RuntimeError):
    """A policy or the judge cannot be built from the configuration (nothing was run)."""


class RunStopped(RuntimeError):
    """The run stopped for an infrastructure reason: an endpoint failed its preflight check, or
    too many trials in a row got no reply (circuit breaker). Stored trials are kept; the message
    says what to fix, and the same command resumes.

    Attributes:
        result: What was done before stopping (``None`` when nothing ran).
    """

    def __init__(self, message: str, result: RunResult | None = None) -> None:
        super().__init__(message)
        self.result = result


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What one invocation did.

    Attributes:
        out: The run directory.
        total: Trials in the grid.
        skipped: Trials already finished before this invocation (resumed).
        ran: Trials run now.
        failed: Of those, trials recorded as failed (run again by the next run).
        wall_s: Seconds this invocation took.
        report: The Markdown report, or ``None`` when it was not written.
        report_error: Why the report could not be written, if it could not.
        unfinished: Trials of the grid stored as failed or with an unreachable judge after this
            run, by reason (``error_kind``, ``judge``, or ``error`` for other failures).
        first_problem: The message of one of them (the first met), for a one-line summary.
        rejudged: Trials whose judge was asked again in this run.
    """

    out: Path
    total: int
    skipped: int
    ran: int
    failed: int
    wall_s: float
    report: Path | None = None
    report_error: str | None = None
    unfinished: Mapping[str, int] = dataclasses.field(default_factory=dict)
    first_problem: str | None = None
    rejudged: int = 0

    @property
    def complete(self) -> bool:
        """Every trial of the grid is stored as a result."""
        return not self.unfinished and self.skipped + self.ran >= self.total


def _reason(summary: Mapping[str, Any]) -> str:
    if summary.get("status") == "failed":
        return str(summary.get("error_kind") or "error")
    return "judge"


def run_config(
    config: RunConfig,
    *,
    limit: int | None = None,
    worker: TrialWorker | None = None,
    stream: TextIO | None = None,
    tty: bool | None = None,
    report: bool = True,
) -> RunResult:
    """Run every pending trial of ``config`` and write the results (and the report).

    Args:
        config: The validated configuration (CLI overrides already applied).
        limit: Run at most this many pending trials (in grid order).
        worker: Trial worker (default: built from the config).
        stream: Progress output (default stderr).
        tty: Force the progress bar on/off (default: detect).
        report: Write ``OUT/report`` at the end.

    Returns:
        A :class:`RunResult`.

    Raises:
        PreflightError: A policy or the judge cannot be built (before anything runs).
        RunStopped: An endpoint failed its preflight check (nothing ran), or
            ``llm.max_consecutive_failures`` trials in a row got no reply (the run stopped; what
            finished is stored). Replay-cache misses do not count: they cost nothing and say
            nothing about the other trials.
        RunDirError: The output directory cannot be used.
    """
    t0 = time.perf_counter()
    began = utc_now()
    stream = stream if stream is not None else sys.stderr
    _llm_stop(False)  # calls stopped by an earlier run in this process may go again
    specs = expand_grid(config)
    worker = _preflight(config, worker)
    stopped: str | None = None
    grid_ids = {s.trial_id for s in specs}
    with RunStore.open(config, grid_ids=grid_ids) as store, writing(config.out, "store the results"):
        for note in store.notes:
            stream.write(f"warning: {note}\n")
        pending, rejudge, redo, skipped = _plan(store, specs, grid_ids, limit, stream)
        ledger, worker = _ledger(config, store, worker)
        rejudged = _rejudge(store, worker, rejudge, redo, stream)
        progress = Progress(
            len(specs), done=skipped + rejudged, todo=len(pending), stream=stream, tty=tty,
            show_model=len(config.models) > 1, ledger=ledger,
        )
        if pending:
            _estimate(config, pending, stream)
            stopped = _run_pending(config, pending, worker, store, progress)
        store.export_parquet()
        unfinished, first = _leftovers(store, grid_ids)
        _inputs_moved(store.inputs, stream)

    report_path, report_error = _write_report(config) if report else (None, None)
    with writing(config.out, "write manifest.sha256"):
        write_provenance_end(config.out, started_utc=began, trials_run=progress.ran, executor=config.executor,
                             workers=None if config.executor == "ray" and config.ray.address else config.workers)
        write_manifest(config.out)
    wall = time.perf_counter() - t0
    ran = progress.ran
    stream.write(
        f"{ran} trials run ({progress.failed} failed), {skipped} resumed, "
        f"{len(specs)} in the grid; {format_duration(wall)}; results in {config.out}\n"
    )
    result = RunResult(
        out=Path(config.out),
        total=len(specs),
        skipped=skipped,
        ran=ran,
        failed=progress.failed,
        wall_s=wall,
        report=report_path,
        report_error=report_error,
        unfinished=unfinished,
        first_problem=first,
        rejudged=rejudged,
    )
    if stopped is not None:
        raise RunStopped(stopped, result)
    return result


def _inputs_moved(recorded: Mapping[str, str], stream: TextIO) -> None:
    """Warn when a custom task file changed while the run was going (its trials may have read either
    version; the next resume refuses the directory until the file is as recorded)."""
    from etc_fast.runner._inputs import hash_inputs

    moved = [p for p, digest in hash_inputs(recorded).items() if digest != recorded[p]]
    if moved:
        stream.write(
            f"warning: custom task file {', '.join(moved)} changed while the run was going; trials that ran may "
            "have read either version, and resuming is refused until the file is restored. Run into a new --out "
            "to play the edited task\n"
        )


def _preflight(config: RunConfig, worker: TrialWorker | None) -> TrialWorker:
    """Before anything runs: the sandbox's isolation (when required), the worker built and its
    policies and judge constructed, the endpoints answering."""
    if config.require_isolation:
        from etc_fast.sandbox import IsolationError, require_isolation

        try:
            require_isolation()
        except IsolationError as exc:
            raise PreflightError(str(exc)) from None
    worker = worker if worker is not None else TrialWorker.from_config(config)
    try:
        worker.preflight(config.models)
    except Exception as exc:  # noqa: BLE001 - any construction error is a configuration problem
        raise PreflightError(f"{type(exc).__name__}: {exc}") from exc
    check = getattr(worker, "check_endpoints", None)
    if callable(check):
        from etc_fast.errors import InfrastructureError

        try:
            check(config.models)
        except InfrastructureError as exc:
            raise RunStopped(f"endpoint check failed ({exc.kind}): {exc.one_line()}") from None
    return worker


def _ledger(config: RunConfig, store: RunStore, worker: TrialWorker) -> tuple[RunLedger | None, TrialWorker]:
    """The run's paid-call ledger (named in ``OUT/ledger.json``; ``None`` for an offline run), and
    the worker set to record its trials' paid calls under the run's ledger id."""
    try:
        ledger = open_run_ledger(config, store.root, store.entries())
    except ValueError as exc:
        raise RunDirError(f"{exc}; remove the file to start a new ledger for this run") from None
    if ledger is not None and ledger.run is not None and dataclasses.is_dataclass(worker) and hasattr(worker, "ledger_run"):
        worker = dataclasses.replace(worker, ledger_run=ledger.run)
    return ledger, worker


def _estimate(config: RunConfig, pending: list[TrialSpec], stream: TextIO) -> None:
    """Write ``OUT/estimate.json`` for the LLM trials about to run (the report sets the actual beside it)."""
    from etc_fast.runner._estimate import write_estimate

    try:
        write_estimate(config, pending, config.out, progress=stream)
    except Exception as exc:  # noqa: BLE001 - an estimate is advice; the run does not depend on it
        stream.write(f"warning: no LLM estimate for this run ({type(exc).__name__}: {exc})\n")


def _plan(store: RunStore, specs: list[TrialSpec], grid_ids: set[str], limit: int | None,
          stream: TextIO) -> tuple[list[TrialSpec], list[str], dict[str, dict], int]:
    """What this run does with the store as it is: ``(pending, rejudge, redo, skipped)``: trials to
    play, stored trials whose judge alone is asked again, the unfinished entries, and how many
    grid trials are finished already."""
    finished = store.finished
    redo = store.unfinished()
    # A trial whose judge could not be reached keeps its play; only the judge is asked again. Its
    # transcript holds the play: a run unpacked from an archive has none, so it plays again.
    rejudge = [tid for tid, e in redo.items() if tid in grid_ids and e["summary"].get("status") != "failed"
               and (store.root / e["transcript"]).is_file()]
    pending = [s for s in specs if s.trial_id not in finished and s.trial_id not in rejudge]
    skipped = len(specs) - len(pending) - len(rejudge)
    if limit is not None:
        pending = pending[: max(0, limit)]
    if skipped:
        stream.write(f"resuming {store.root}: {skipped} of {len(specs)} trials already finished\n")
    retried = sum(1 for s in pending if s.trial_id in redo)
    if retried:
        stream.write(f"running again {retried} trial(s) that failed before\n")
    return pending, rejudge, redo, skipped


def _rejudge(store: RunStore, worker: TrialWorker, rejudge: list[str], redo: dict[str, dict],
             stream: TextIO) -> int:
    """Ask the judge again about each stored trial in ``rejudge``; returns how many got a verdict."""
    rejudged = 0
    for tid in rejudge:
        record = json.loads((store.root / redo[tid]["transcript"]).read_text())
        try:
            entry = store.append(worker.rejudge(record))
        except Exception as exc:  # noqa: BLE001 - the stored trial stays as it was
            stream.write(f"could not judge {tid} again: {type(exc).__name__}: {exc}\n")
            continue
        rejudged += 1
        stream.write(f"judged {tid} again: {entry['summary'].get('judge_reason', '')[:100]}\n")
    return rejudged


def _run_pending(config: RunConfig, pending: list[TrialSpec], worker: TrialWorker, store: RunStore,
                 progress: Progress) -> str | None:
    """Play ``pending`` on the configured executor, storing each record as it comes; returns why the
    run stopped early (``llm.max_consecutive_failures`` trials in a row got no reply) or None."""
    llm_bound = all(m not in ("symbolic", "scripted") for m in config.models)
    breaker = max(1, int(config.llm.max_consecutive_failures))
    executor = create_executor(
        config.executor, config.workers, ray_address=config.ray.address, llm_bound=llm_bound
    )
    in_a_row = 0
    warm_up = _start_warm_up(config, pending)
    records = executor.run(pending, worker)
    try:
        for _spec, record in records:
            entry = store.append(record)
            summary = entry["summary"]
            progress.update(summary)
            kind = summary.get("error_kind") if summary.get("status") == "failed" else None
            if kind == "cache_miss":
                pass  # a reply missing from a replay cache says nothing about the other trials
            elif kind:
                in_a_row += 1
                if in_a_row >= breaker:
                    return (
                        f"stopped after {in_a_row} trials in a row got no reply from the model "
                        f"(last: {summary.get('error_kind')}: {str(summary.get('error'))[:200]})"
                    )
            else:
                in_a_row = 0
    finally:
        records.close()
        progress.close()
        if warm_up is not None:
            with contextlib.suppress(OSError):
                warm_up.terminate()  # it finishes the kernel in hand (a few seconds at most) and exits
    return None


def _start_warm_up(config: RunConfig, pending: list[TrialSpec]) -> Any:
    """On a cold kernel cache, start compiling the kernels the trials will need in a background
    process (``kernels/warmup.py``); the process, or None (nothing to compile, no trial, or a Ray
    run, whose trials may run on other machines)."""
    if not pending or config.executor == "ray":
        return None
    try:
        from kernels.warmup import start
    except ImportError:
        return None
    return start()


def _leftovers(store: RunStore, grid_ids: set[str]) -> tuple[dict[str, int], str | None]:
    """The grid's unfinished trials counted by reason, and the first one's problem (or None)."""
    left = [e for tid, e in store.unfinished().items() if tid in grid_ids]
    unfinished = dict(collections.Counter(_reason(e["summary"]) for e in left))
    first = next(
        (str(e["summary"].get("error") or e["summary"].get("judge_reason") or "") for e in left), None
    )
    return unfinished, first


def _write_report(config: RunConfig) -> tuple[Path | None, str | None]:
    """``OUT/report`` and the viewer: ``(report path, None)``, or ``(None, why)`` when writing them
    failed for a reason other than the output directory itself (that one raises RunDirError)."""
    try:
        from etc_fast.report import write_report

        with writing(config.out, "write the report"):
            report_path = write_report(config.out)
            from etc_fast.report import build_viewer

            build_viewer(config.out)  # report/index.html: the run in one page (before the manifest)
    except RunDirError:  # the directory itself (read-only, full): an output-directory problem
        raise
    except Exception as exc:  # noqa: BLE001 - results are safe on disk; say why the report is missing
        return None, f"{type(exc).__name__}: {exc}"
    return report_path, None

