"""``python -m etc_fast.report RUN_DIR``: (re)write a run's report and refresh its manifest."""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import polars as pl

__all__ = ["main"]


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG001
    print(f"warning: {message}", file=sys.stderr)


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m etc_fast.report", description="Write RUN_DIR/report from a run's results.")
    p.add_argument("run_dir", help="a run directory (holds trials.parquet or trials.jsonl)")
    p.add_argument("--draws", type=int, default=None, help="module-resampling draws for Table S2 (default 10000)")
    p.add_argument("--seed", type=int, default=None, help="seed of those draws (default 0)")
    p.add_argument("--rejudge", default=None, metavar="JUDGE",
                   help="judge every stored submission again (structural | llm | none) before writing the report")
    args = p.parse_args(argv)
    with warnings.catch_warnings():  # restores the warning display when done
        warnings.showwarning = _one_line_warning
        return _write(args)


def _write(args: argparse.Namespace) -> int:
    from etc_fast.report import N_DRAWS, SEED, write_report
    from etc_fast.runner import RunDirError, verify_before_rewrite, write_manifest

    try:
        if not Path(args.run_dir).is_dir():
            raise FileNotFoundError(f"{args.run_dir}: not a directory (no trials.parquet or trials.jsonl)")
        verify_before_rewrite(args.run_dir)  # never rewrite results or refresh the manifest over edited files
    except (FileNotFoundError, RunDirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.rejudge is not None:
        from etc_fast.evaluate import JUDGES
        from etc_fast.report._rejudge import rejudge_run

        if args.rejudge not in JUDGES:
            print(f"error: unknown judge {args.rejudge!r}; expected one of {', '.join(JUDGES)}", file=sys.stderr)
            return 2
        try:
            info = rejudge_run(args.run_dir, args.rejudge)
        except (FileNotFoundError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        print(f"re-judged {info['n_judged']} submissions with {info['judge']} v{info['version']}: "
              f"{info['n_changed']} verdicts changed, credited {info['credited_before']} -> {info['credited_after']}",
              file=sys.stderr)
    try:
        path = write_report(
            args.run_dir,
            n_draws=args.draws if args.draws is not None else N_DRAWS,
            seed=args.seed if args.seed is not None else SEED,
        )
    except (FileNotFoundError, RunDirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:  # an unreadable table, a read-only or full report directory
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"error: {args.run_dir}: cannot write the report{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except pl.exceptions.PolarsError as exc:
        print(f"error: {args.run_dir}: the results table cannot be read ({type(exc).__name__}: "
              f"{str(exc).splitlines()[0] if str(exc) else ''}); rebuild it from trials.jsonl by removing trials.parquet",
              file=sys.stderr)
        return 2
    try:
        write_manifest(args.run_dir)
    except OSError as exc:
        print(f"error: {args.run_dir}: cannot write the manifest: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
