"""``python -m etc_fast.run CONFIG``: run a study grid, store its results, write its report and its
viewer (``OUT/report/index.html``, one page that opens from disk).

Exit status: 0 when every trial of the grid is stored as a result, 1 when the report could not be
written, 2 for configuration, policy-construction or output directory problems (nothing was run),
3 when the run stopped for an infrastructure reason (an endpoint failed its check before any trial:
bad key, unknown model, unreachable host; or the circuit breaker: too many trials in a row got no
reply), 4 when the run went through but some trials are not finished (failed, or their judge could
not be reached), 130 when interrupted (SIGINT or SIGTERM). In every case but 2 finished trials are
kept, and running the same command again resumes: failed trials are run again, unreachable judges
asked again, finished trials never repeated.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m etc_fast.run`` (the config path and its command-line overrides)."""
    p = argparse.ArgumentParser(
        prog="python -m etc_fast.run",
        description="Run an etc_fast study configuration (resumes an interrupted run in the same --out).",
    )
    p.add_argument("config", help="run configuration YAML (e.g. configs/full.yaml)")
    p.add_argument("--model", help="replace the model of every grid (e.g. gpt-4.1-mini, symbolic)")
    p.add_argument("--workers", type=int, help="parallel trials (default: the config's value, else all cores)")
    p.add_argument("--executor", choices=("local", "threads", "processes", "ray"),
                   help="local: process pool, or threads when every model is an LLM; threads; processes; or Ray")
    p.add_argument("--ray-address", metavar="ADDRESS",
                   help="with the Ray executor: an existing cluster (auto: the one `ray start` joined on this "
                        "machine; ray://host:10001) instead of a local instance")
    p.add_argument("--out", help="run directory (default: the config's out, else runs/<name>)")
    p.add_argument("--limit", type=int, help="run at most N pending trials, in grid order")
    p.add_argument("--dry-run", action="store_true", help="print the trial count and the grid; run nothing")
    p.add_argument("--prices", metavar="input=USD,output=USD|FILE.yaml",
                   help="token prices in USD per 1M tokens for the LLM estimate and the report: for every LLM model "
                        "of the run, or per model from a YAML file {MODEL: {prompt: USD, completion: USD}}")
    p.add_argument("--no-report", action="store_true", help="do not write OUT/report (tables, figures, viewer) at the end")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    from etc_fast._signals import interrupt_on_sigterm
    from etc_fast.runner import (
        OFFLINE_MODELS,
        ConfigError,
        PreflightError,
        RunDirError,
        RunStopped,
        describe_grid,
        expand_grid,
        load_config,
        run_config,
        with_prices,
    )

    try:
        if args.limit is not None and args.limit < 0:
            raise ConfigError("command line", "--limit", f"{args.limit} must be >= 0")
        config = load_config(args.config).with_overrides(
            model=args.model, workers=args.workers, executor=args.executor, out=args.out,
            ray_address=args.ray_address,
        )
        config = with_prices(config, args.prices)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2

    if args.dry_run:
        specs = expand_grid(config)
        print(f"{config.name}: {len(specs)} trials -> {config.out} "
              f"(executor {config.executor}, {config.workers} workers, judge {config.judge})")
        print(describe_grid(specs))
        if any(m not in OFFLINE_MODELS for m in config.models):
            from etc_fast.runner import estimate_run, stored_finished

            try:
                estimate = estimate_run(config, specs, finished=stored_finished(config.out), progress=sys.stderr)
            except Exception as exc:  # noqa: BLE001 - e.g. a policy that cannot be built: a config problem
                print(f"error: cannot estimate the LLM calls: {type(exc).__name__}: {exc}", file=sys.stderr)
                return 2
            print("\n".join(estimate.lines()))
        return 0

    try:
        with interrupt_on_sigterm():
            result = run_config(config, limit=args.limit, report=not args.no_report)
    except RunStopped as exc:
        print(f"error: {exc}; fix it and run the same command again to resume", file=sys.stderr)
        return 3
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
        viewer = result.report.parent / "index.html"
        if viewer.is_file():
            print(f"viewer: {viewer} (open it in a browser; no server needed)", file=sys.stderr)
    if result.unfinished:
        n = sum(result.unfinished.values())
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(result.unfinished.items()))
        print(f"error: {n} trial(s) not finished ({kinds}); first: {(result.first_problem or '')[:300]}; "
              f"run the same command again to retry them", file=sys.stderr)
        return 4
    return 0


if __name__ == "__main__":
    sys.exit(main())
