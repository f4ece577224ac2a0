"""``python -m etc_fast.results``: store a run's summary, (re)write or check the results pages, print
the README's tables, name this machine, read a study design before its run (power and time), pack a run's trial lines into an archive
folder and unpack them elsewhere. Exit status: 0 done, 1 pages stale (``pages --check``), 2 bad
input (the message says what and where; nothing is written)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["build_parser", "main"]

_FIX = "python -m etc_fast.results pages"


def build_parser() -> argparse.ArgumentParser:
    """The command line of ``python -m etc_fast.results`` (its subcommands and their flags)."""
    p = argparse.ArgumentParser(prog="python -m etc_fast.results",
                                description="Results pages generated from stored run summaries (results/*.json).")
    p.add_argument("--root", default=".", metavar="DIR",
                   help="the checkout holding results/ and docs/results/ (default: the current directory)")
    sub = p.add_subparsers(dest="command", required=True, help="store, pages, readme, machine, pack, unpack or design (below)")
    s = sub.add_parser("store", help="store a finished run's summary as results/NAME.json")
    s.add_argument("run", help="the run directory (with its report/)")
    s.add_argument("--as", dest="name", default=None, help="the study's name (default: the config's name)")
    s.add_argument("--main", default=None, help="the configuration the study's headline names (default variance_c)")
    s.add_argument("--commit", default=None, help="for a run without provenance.json: its code's git commit")
    s.add_argument("--machine", default=None, help="for a run without provenance.json: the machine, one line")
    s.add_argument("--date", default=None, help="for a run without provenance.json: the day it was made, YYYY-MM-DD")
    g = sub.add_parser("pages", help="write docs/results/ from results/*.json")
    g.add_argument("studies", nargs="*", help="only these studies' pages (and the index); default: every stored study")
    g.add_argument("--check", action="store_true", help="write nothing; exit 1 naming the pages that differ")
    sub.add_parser("readme", help="print the README's 'Results in brief' tables (from results/full.json, noise.json, systems.json)")
    sub.add_parser("machine", help="print the line naming this machine, as provenance.json records it")
    k = sub.add_parser("pack", help="add a run's new trial lines to an archive folder")
    k.add_argument("run", help="the run directory (may be running)")
    k.add_argument("archive", help="the archive folder (made at the first pack)")
    u = sub.add_parser("unpack", help="rebuild a run directory from an archive folder")
    u.add_argument("archive", help="the archive folder made by pack")
    u.add_argument("run", help="the run directory to write (new or empty)")
    d = sub.add_parser("design", help="print a study design's power per cell and time per part, from results/*.json")
    d.add_argument("config", help="the study's config (e.g. configs/answer.yaml), read before its run")
    d.add_argument("--hours", type=float, default=2.0, help="longest part, in estimated hours (default 2)")
    d.add_argument("--workers", type=int, default=2, help="workers the run has: trials at once (default 2)")
    d.add_argument("--run", default=None, metavar="RUN_DIR",
                   help="a run of this config: time what is left of it from its own finished trials")
    d.add_argument("--target", type=float, default=0.05, help="the paired difference equation cells must detect (default 0.05)")
    return p


def _store(args: argparse.Namespace, root: Path) -> int:
    from etc_fast.results import ResultsError, StatedProvenance, dump_summary, summarise_run

    given = {"--commit": args.commit, "--machine": args.machine, "--date": args.date}
    try:
        stated = None
        if any(v is not None for v in given.values()):
            missing = [k for k, v in given.items() if v is None]
            if missing:
                raise ResultsError(f"{', '.join(missing)} missing: --commit, --machine and --date go together")
            stated = StatedProvenance(args.commit, args.machine, args.date)
        summary = summarise_run(args.run, args.name, stated=stated, main=args.main, repo=root)
    except ResultsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    from etc_fast.store import atomic_write

    out = root / "results" / f"{summary['name']}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    text = dump_summary(summary)
    atomic_write(out, text.encode())
    print(f"stored {args.run} as {out} ({len(text.encode()):,} bytes); regenerate the pages with {_FIX}")
    return 0


def _pages(args: argparse.Namespace, root: Path) -> int:
    from etc_fast.results import ResultsError, load_summaries, render_pages, stale_pages

    try:
        if args.studies:
            load_summaries(root / "results", args.studies)  # an unknown name is refused
        summaries = load_summaries(root / "results")
    except ResultsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    pages = render_pages(summaries)
    if args.studies:
        pages = {n: t for n, t in pages.items() if n == "index.md" or n[:-3] in args.studies}
    folder = root / "docs" / "results"
    differing, orphans = stale_pages(folder, pages)
    if args.studies:
        orphans = []
    if args.check:
        if not differing and not orphans:
            print(f"{folder}: {len(pages)} pages up to date")
            return 0
        names = [str(folder / n) for n in differing] + [f"{folder / n} (its study is no longer stored)" for n in orphans]
        print(f"stale: {', '.join(names)}; regenerate them with {_FIX}", file=sys.stderr)
        return 1
    from etc_fast.store import atomic_write

    folder.mkdir(parents=True, exist_ok=True)
    for name in differing:
        atomic_write(folder / name, pages[name].encode())
    for name in orphans:
        (folder / name).unlink()
    print(f"{folder}: {len(differing)} written, {len(orphans)} removed, {len(pages) - len(differing)} unchanged")
    return 0


def _readme(root: Path) -> int:
    from etc_fast.results import ResultsError, load_summaries, readme_tables

    try:
        found = load_summaries(root / "results", ["full", "noise", "systems"])
    except ResultsError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(readme_tables(found["full"], found["noise"], found["systems"]))
    return 0


def _design(args: argparse.Namespace, root: Path) -> int:
    from etc_fast.results import ResultsError, design_report
    from etc_fast.runner import ConfigError

    if args.hours <= 0 or not 0 < args.target < 1 or args.workers < 1:
        print("error: --hours must be > 0, --target in (0, 1) and --workers at least 1", file=sys.stderr)
        return 2
    try:
        print(design_report(args.config, root, hours=args.hours, target=args.target, run=args.run,
                            workers=args.workers), end="")
    except (ResultsError, ConfigError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


def _pack(args: argparse.Namespace) -> int:
    from etc_fast.results import ResultsError, pack_run, unpack_run
    from etc_fast.store import RunDirError

    try:
        if args.command == "pack":
            done = pack_run(args.run, args.archive)
            where = f"as {Path(args.archive) / done.shard}" if done.shard else "(nothing new)"
            print(f"packed {done.lines:,} new lines of {args.run} {where}; the archive holds {done.total:,}")
        else:
            done = unpack_run(args.archive, args.run)
            print(f"unpacked {done.lines:,} of the archive's {done.total:,} lines into {args.run}; "
                  f"resume it with python -m etc_fast.run CONFIG --out {args.run}")
    except (ResultsError, RunDirError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"error: cannot write {exc.filename or ''}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    root = Path(args.root)
    if not root.is_dir():
        print(f"error: --root {root}: not a directory", file=sys.stderr)
        return 2
    if args.command == "store":
        return _store(args, root)
    if args.command == "pages":
        return _pages(args, root)
    if args.command == "readme":
        return _readme(root)
    if args.command == "design":
        return _design(args, root)
    if args.command in ("pack", "unpack"):
        return _pack(args)
    from etc_fast.runner import machine_info, machine_text

    print(machine_text(machine_info()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
