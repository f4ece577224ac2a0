"""``python -m etc_fast.run CONFIG``: run a study grid, store its results, write its report.

Exit status: 0 when every trial of this invocation was stored (failed trials are results too),
1 when the report could not be written, 2 for configuration, policy-construction or output
directory problems (nothing was run), 130 when interrupted by Ctrl-C or SIGTERM (finished trials are
kept; run the same command again to resume).
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

def _terminate_as_interrupt() -> None:
    """SIGTERM unwinds like Ctrl-C: sandboxes are killed and temporary directories removed on the way out."""
    import signal

    def on_term(signum, frame):
        raise KeyboardInterrupt

    try:
        signal.signal(signal.SIGTERM, on_term)
    except ValueError:  # pragma: no cover - not the main thread (embedded use): keep the default
        pass


__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m etc_fast.run",
        description="Run an etc_fast study configuration (resumes an interrupted run in the same --out).",
    )
    p.add_argument("config", help="run configuration YAML (e.g. configs/full.yaml)")
    p.add_argument("--model", help="replace the model of every grid (e.g. gpt-4.1-mini, symbolic)")
    p.add_argument("--workers", type=int, help="parallel trials (default: the config's value, else all cores)")
    p.add_argument("--executor", choices=("local", "ray"), help="local process pool or Ray")
    p.add_argument("--out", help="run directory (default: the config's out, else runs/<name>)")
    p.add_argument("--limit", type=int, help="run at most N pending trials, in grid order")
    p.add_argument("--dry-run", action="store_true", help="print the trial count and the grid; run nothing")
    p.add_argument("--no-report", action="store_true", help="do not write OUT/report at the end")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    _terminate_as_interrupt()
    from etc_fast.runner import (
        ConfigError,
        PreflightError,
        RunDirError,
        describe_grid,
        expand_grid,
        load_config,
        run_config,
    )

    try:
        if args.limit is not None and args.limit < 0:
            raise ConfigError("command line", "--limit", f"{args.limit} must be >= 0")
        config = load_config(args.config).with_overrides(
            model=args.model, workers=args.workers, executor=args.executor, out=args.out
        )
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    if args.dry_run:
        specs = expand_grid(config)
        print(f"{config.name}: {len(specs)} trials -> {config.out} "
              f"(executor {config.executor}, {config.workers} workers, judge {config.judge})")
        print(describe_grid(specs))
        return 0

    try:
        result = run_config(config, limit=args.limit, report=not args.no_report)
    except PreflightError as exc:
        print(f"error: cannot start the run: {exc}", file=sys.stderr)
        return 2
    except RunDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("\ninterrupted: finished trials are stored; run the same command again to resume", file=sys.stderr)
        return 130
    if result.report_error:
        print(f"error: the report could not be written ({result.report_error}); "
              f"retry with: python -m etc_fast.report {result.out}", file=sys.stderr)
        return 1
    if result.report is not None:
        print(f"report: {result.report}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
