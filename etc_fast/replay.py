"""Score a law file on a task, or re-score a whole run directory.

Usage::

    python -m etc_fast.replay --law FILE --task NAME [--difficulty D] [--law-version V]
                              [--judge structural|llm|none] [--json]
    python -m etc_fast.replay RUN_DIR [--workers N] [--json]
    python -m etc_fast.replay RUN_DIR --play N [--play-seed S] [--json]

Exit status: 0 when the law was scored or rejected as invalid, or a run's stored values (with
``--play``, its records) are reproduced within the tolerance; 1 when some are not, or the judge
reaches no verdict on a law (its deadline passed, its model gave no reply); 2 for bad arguments or,
with ``--require-isolation``, a sandbox missing an isolation layer; 130 when interrupted.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
from pathlib import Path

from etc_fast._signals import interrupt_on_sigterm

__all__ = ["main", "build_parser"]


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m etc_fast.replay``."""
    p = argparse.ArgumentParser(prog="python -m etc_fast.replay", description=__doc__.split("\n\n")[0])
    p.add_argument("run_dir", nargs="?", help="a run directory to re-score (instead of --law)")
    p.add_argument("--law", help="file holding a discovered_law submission")
    p.add_argument("--task", help="task module (e.g. m0_gravity) or custom task YAML")
    p.add_argument("--difficulty", default="easy", help="easy | medium | hard (default easy)")
    p.add_argument("--law-version", default="v0", help="v0 | v1 | v2 (default v0)")
    p.add_argument("--wall-s", type=float, default=None, help="sandbox wall-clock limit in seconds")
    p.add_argument("--workers", type=int, default=1, help="submissions scored concurrently (run replay)")
    p.add_argument("--judge", default="none", help="judge of a --law: structural | llm | none (default none)")
    p.add_argument("--play", type=int, default=None, metavar="N",
                   help="play N stored offline trials again (a seeded draw), compare records")
    p.add_argument("--play-seed", type=int, default=0, help="seed of --play's draw")
    p.add_argument("--json", action="store_true", help="print JSON instead of a table")
    p.add_argument("--require-isolation", action="store_true",
                   help="refuse to run unless every sandbox isolation layer is available")
    return p


def _fail(message: str) -> int:
    print(f"etc_fast.replay: error: {message}", file=sys.stderr)
    return 2


def _limits(args):
    """Sandbox limits from ``--wall-s`` (``None`` = defaults); ``ValueError`` for a bad value."""
    if args.wall_s is None:
        return None
    from etc_fast.sandbox import SandboxLimits

    return SandboxLimits(wall_s=args.wall_s)


def _fmt(v) -> str:
    if isinstance(v, float):
        return f"{v:.6g}" if math.isfinite(v) else str(v)
    return str(v)


def _score_law(args) -> int:
    from etc_fast.evaluate import evaluate_submission
    from etc_fast.sandbox import clean_text
    from etc_fast.tasks import TaskError, get_task

    if not args.task:
        return _fail("--law needs --task")
    path = Path(args.law)
    if not path.is_file():
        return _fail(f"law file not found: {path}")
    try:
        source = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        return _fail(f"cannot read law file {path}: {exc}")
    try:
        task = get_task(args.task, args.difficulty, args.law_version)
    except (TaskError, ValueError, OSError) as exc:
        return _fail(str(exc))
    try:
        limits = _limits(args)
    except ValueError as exc:
        return _fail(str(exc))
    from etc_fast.errors import InfrastructureError
    from etc_fast.evaluate import JUDGES, create_judge

    if args.judge not in JUDGES:
        return _fail(f"unknown judge {args.judge!r}; expected one of {', '.join(JUDGES)}")
    try:
        judge = create_judge(args.judge)
    except (ValueError, RuntimeError, ImportError) as exc:
        return _fail(f"cannot build judge {args.judge!r}: {exc}")
    ev = evaluate_submission(source, task, limits=limits)
    try:
        verdict = judge.judge(source, task)
    except InfrastructureError as exc:  # no verdict is not a verdict: say so, score nothing as judged
        print(f"etc_fast.replay: error: the judge reached no verdict ({exc.kind}): {exc.one_line()}", file=sys.stderr)
        return 1
    record = {"task": task.key, "law": str(path), **ev.to_dict(), "judge": verdict.judge,
              "judge_version": getattr(judge, "version", None), "credited": verdict.credited,
              "judge_reason": verdict.reason}
    if args.json:
        print(json.dumps(record, indent=2))
    else:
        keys = ("task", "valid", "error", "rmsle", "n_points", "n_finite_target", "n_finite_pred", "complete",
                "sign_disagreements", "q", "predictions_sha256", "judge", "credited", "judge_reason")
        width = max(len(k) for k in keys)
        for k in keys:
            v = ev.rmsle if k == "rmsle" else record[k]
            print(f"{k:<{width}}  {clean_text(_fmt(v), 2048, newlines=False)}")
    return 0


def _replay_run(args) -> int:
    path = Path(args.run_dir)
    if not path.is_dir():
        return _fail(f"run directory not found: {path}")
    try:
        from etc_fast.runner import replay_run
    except ImportError as exc:
        return _fail(f"run replay is not available: {exc}")
    from etc_fast.runner import RunDirError

    if args.play is not None:
        from etc_fast.runner import play_again

        try:
            played = play_again(path, count=args.play, seed=args.play_seed)
        except (FileNotFoundError, ValueError, RunDirError) as exc:
            return _fail(str(exc))
        if args.json:
            from etc_fast.core import to_jsonable

            print(json.dumps({"counts": played.counts(), "trials": to_jsonable(played.trials)}, indent=2))
        else:
            print(played.to_text())
        return 0 if played.ok else 1
    try:
        report = replay_run(path, limits=_limits(args), workers=args.workers)
    except (FileNotFoundError, ValueError, RunDirError) as exc:  # RunDirError: a damaged trials.jsonl
        return _fail(str(exc))
    if args.json:
        from etc_fast.core import to_jsonable

        print(json.dumps(to_jsonable(report), indent=2))
    else:
        print(report.to_text())
    return 0 if report.ok else 1


def main(argv: list[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    if args.law and args.run_dir:
        return _fail("give either a RUN_DIR or --law, not both")
    if args.play is not None and not args.run_dir:
        return _fail("--play needs a RUN_DIR")
    if not (args.law or args.run_dir):
        return _fail("nothing to do: give --law FILE --task NAME, or a RUN_DIR")
    try:
        with interrupt_on_sigterm():  # SIGTERM unwinds like Ctrl-C: sandboxes killed, temporary directories removed
            return _run(args)
    except KeyboardInterrupt:
        print("etc_fast.replay: interrupted", file=sys.stderr)
        return 130


def _run(args: argparse.Namespace) -> int:
    if args.require_isolation:
        from etc_fast.sandbox import IsolationError, require_isolation

        try:
            require_isolation()
        except IsolationError as exc:
            return _fail(str(exc))
    return _score_law(args) if args.law else _replay_run(args)


if __name__ == "__main__":
    sys.exit(main())
