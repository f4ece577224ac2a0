"""``python -m etc_fast.report RUN_DIR``: (re)write a run's report and refresh its manifest."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence

__all__ = ["main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    p = argparse.ArgumentParser(prog="python -m etc_fast.report", description="Write RUN_DIR/report from a run's results.")
    p.add_argument("run_dir", help="a run directory (holds trials.parquet or trials.jsonl)")
    p.add_argument("--draws", type=int, default=None, help="module-resampling draws for Table S2 (default 10000)")
    p.add_argument("--seed", type=int, default=None, help="seed of those draws (default 0)")
    p.add_argument("--rejudge", default=None, metavar="JUDGE",
                   help="judge every stored submission again (structural | llm | none) before writing the report")
    args = p.parse_args(argv)

    from etc_fast.report import N_DRAWS, SEED, write_report
    from etc_fast.runner import write_manifest

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
    except FileNotFoundError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    write_manifest(args.run_dir)
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
