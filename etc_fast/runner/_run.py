"""Running a configuration: grid -> executor -> store -> report."""

from __future__ import annotations

import contextlib
import dataclasses
import sys
import time
from pathlib import Path
from typing import TextIO

from etc_fast.runner._config import RunConfig
from etc_fast.runner._executors import TrialWorker, create_executor
from etc_fast.runner._grid import expand_grid
from etc_fast.runner._progress import Progress, format_duration
from etc_fast.runner._store import RunDirError, RunStore, write_manifest, writing

__all__ = ["PreflightError", "RunResult", "run_config"]


class PreflightError(RuntimeError):
    """A policy or the judge cannot be built from the configuration (nothing was run)."""


@dataclasses.dataclass(frozen=True)
class RunResult:
    """What one invocation did.

    Attributes:
        out: The run directory.
        total: Trials in the grid.
        skipped: Trials already finished before this invocation (resumed).
        ran: Trials run now.
        failed: Of those, trials recorded as failed.
        wall_s: Seconds this invocation took.
        report: The Markdown report, or ``None`` when it was not written.
        report_error: Why the report could not be written, if it could not.
    """

    out: Path
    total: int
    skipped: int
    ran: int
    failed: int
    wall_s: float
    report: Path | None = None
    report_error: str | None = None


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
        RunDirError: The output directory cannot be used.
    """
    t0 = time.perf_counter()
    stream = stream if stream is not None else sys.stderr
    specs = expand_grid(config)
    worker = worker if worker is not None else TrialWorker.from_config(config)
    try:
        worker.preflight(config.models)
    except Exception as exc:  # noqa: BLE001 - any construction error is a configuration problem
        raise PreflightError(f"{type(exc).__name__}: {exc}") from exc

    with RunStore.open(config, grid_ids={s.trial_id for s in specs}) as store, writing(config.out, "store the results"):
        finished = store.finished
        pending = [s for s in specs if s.trial_id not in finished]
        skipped = len(specs) - len(pending)
        if limit is not None:
            pending = pending[: max(0, limit)]
        if skipped:
            stream.write(f"resuming {store.root}: {skipped} of {len(specs)} trials already finished\n")
        progress = Progress(
            len(specs), done=skipped, todo=len(pending), stream=stream, tty=tty, show_model=len(config.models) > 1
        )
        if pending:
            executor = create_executor(config.executor, config.workers, ray_address=config.ray.address)
            try:
                # closing(): a failed append (full disk) stops the executor at once, not at garbage collection
                with contextlib.closing(executor.run(pending, worker)) as results:
                    for _spec, record in results:
                        entry = store.append(record)
                        progress.update(entry["summary"])
            finally:
                progress.close()
        store.export_parquet()

    report_path, report_error = None, None
    if report:
        try:
            from etc_fast.report import write_report

            with writing(config.out, "write the report"):
                report_path = write_report(config.out)
        except RunDirError:  # the directory itself (read-only, full): an output-directory problem
            raise
        except Exception as exc:  # noqa: BLE001 - results are safe on disk; say why the report is missing
            report_error = f"{type(exc).__name__}: {exc}"
    with writing(config.out, "write manifest.sha256"):
        write_manifest(config.out)
    wall = time.perf_counter() - t0
    stream.write(
        f"{len(pending)} trials run ({progress.failed} failed), {skipped} resumed, "
        f"{len(specs)} in the grid; {format_duration(wall)}; results in {config.out}\n"
    )
    return RunResult(
        out=Path(config.out),
        total=len(specs),
        skipped=skipped,
        ran=len(pending),
        failed=progress.failed,
        wall_s=wall,
        report=report_path,
        report_error=report_error,
    )

