"""``python -m etc_fast.report RUN_DIR``: (re)write a run's report (and its viewer, ``report/index.html``)
and refresh its manifest; ``python -m etc_fast.report --compare RUN_A RUN_B --out DIR``: one viewer
page holding two runs, opened on the compare view.

Exit status: 0 when the report (or the compare page) was written; 2 when it could not be (a missing or
unreadable run directory, files edited since its manifest was written, an unknown ``--rejudge`` judge,
a report directory that cannot be written) or for bad arguments.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path

import polars as pl

__all__ = ["main", "build_parser"]


def _one_line_warning(message, category, filename, lineno, file=None, line=None) -> None:  # noqa: ARG001
    print(f"warning: {message}", file=sys.stderr)


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m etc_fast.report``."""
    p = argparse.ArgumentParser(prog="python -m etc_fast.report", description="Write RUN_DIR/report from a run's results.")
    p.add_argument("run_dir", nargs="?", help="a run directory (holds trials.parquet or trials.jsonl)")
    p.add_argument("--compare", nargs=2, metavar=("RUN_A", "RUN_B"), default=None,
                   help="write one viewer page comparing two run directories (needs --out; RUN_DIR not given)")
    p.add_argument("--out", default=None, metavar="DIR", help="with --compare: the directory to write index.html in")
    p.add_argument("--no-viewer", action="store_true", help="do not write report/index.html")
    p.add_argument("--draws", type=int, default=None, help="module-resampling draws for Table S2 (default 10000)")
    p.add_argument("--seed", type=int, default=None, help="seed of those draws (default 0)")
    p.add_argument("--rejudge", default=None, metavar="JUDGE",
                   help="judge every stored submission again (structural | llm | none) before writing the report")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = build_parser()
    args = p.parse_args(argv)
    if args.compare is not None:
        if args.run_dir is not None or args.out is None:
            p.error("--compare RUN_A RUN_B needs --out DIR and no RUN_DIR")
        return _compare(args.compare, args.out)
    if args.run_dir is None:
        p.error("give RUN_DIR, or --compare RUN_A RUN_B --out DIR")
    if args.out is not None:
        p.error("--out only goes with --compare (the report of RUN_DIR is written to RUN_DIR/report)")
    with warnings.catch_warnings():  # restores the warning display when done
        warnings.showwarning = _one_line_warning
        return _write(args)


def _write(args: argparse.Namespace) -> int:
    from etc_fast.report import N_DRAWS, SEED, write_report
    from etc_fast.store import RunDirError, verify_before_rewrite, write_manifest

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
        if info.get("n_unreached"):
            print(f"warning: {info['n_unreached']} submission(s) got no verdict (judge_status error): they count as "
                  "failed trials until a later --rejudge, or the run's own command, judges them", file=sys.stderr)
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
    if not args.no_viewer:
        from etc_fast.report._viewer import build_viewer

        try:
            build_viewer(args.run_dir)
        except (OSError, RunDirError) as exc:
            print(f"error: {args.run_dir}: cannot write the viewer (report/index.html): {exc}", file=sys.stderr)
            return 2
    try:
        write_manifest(args.run_dir)
    except OSError as exc:
        print(f"error: {args.run_dir}: cannot write the manifest: {exc.strerror or exc}", file=sys.stderr)
        return 2
    print(path)
    return 0


def _compare(runs: Sequence[str], out: str) -> int:
    from etc_fast.report._viewer import build_compare, compare_table
    from etc_fast.store import RunDirError

    for run in runs:
        root = Path(run)
        if not root.is_dir() or not ((root / "trials.parquet").exists() or (root / "trials.jsonl").exists()):
            print(f"error: {run}: not a run directory (no trials.parquet or trials.jsonl)", file=sys.stderr)
            return 2
    try:
        with warnings.catch_warnings():
            warnings.showwarning = _one_line_warning
            path = build_compare(runs[0], runs[1], out)
            table = compare_table(runs[0], runs[1])
            table.write_csv(Path(out) / "compare.csv")
    except RunDirError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        where = f" ({exc.filename})" if exc.filename else ""
        print(f"error: cannot write the comparison in {out}{where}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    except pl.exceptions.PolarsError as exc:
        print(f"error: a results table cannot be read ({type(exc).__name__})", file=sys.stderr)
        return 2
    # the same configuration in both runs, in a few lines (the page compares any two sides)
    for row in table.iter_rows(named=True):
        rm = row["rmsle_delta_mean"]
        print(f"{row['configuration']}: {row['pairs']} pairs, B gained {row['gained']} and lost {row['lost']} credits "
              f"({row['credited_a']} -> {row['credited_b']}); mean B-A RMSLE {'n/a' if rm is None else f'{rm:.3g}'}, "
              f"measurements {row['measurements_delta_mean']:+.1f}", file=sys.stderr)
    if table.height == 0:
        print("no configuration ran in both runs on the same tasks; the page still compares any two", file=sys.stderr)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
