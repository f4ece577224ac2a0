"""``python -m etc_fast.docs``: write the generated reference pages into the docs folder.

Exit status: 0 when the pages were written (or, with ``--check``, are current); 1 with ``--check``
when a page is missing or differs from what the code gives (each is named); 2 when the docs folder
does not exist or cannot be written.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["build_parser", "main"]

_DEFAULT_DOCS = Path(__file__).resolve().parents[2] / "docs"


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``python -m etc_fast.docs``."""
    p = argparse.ArgumentParser(prog="python -m etc_fast.docs",
                                description="Write the reference pages that are generated from the code.")
    p.add_argument("--docs", metavar="DIR", default=None,
                   help="the docs folder to write into (default: docs/ of the checkout this package is in)")
    p.add_argument("--check", action="store_true", help="write nothing; exit 1 if a page is missing or out of date")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    """Command-line entry point; returns the exit status."""
    args = build_parser().parse_args(argv)
    from etc_fast.docs._reference import COMMAND, stale_pages, write_pages

    docs = Path(args.docs) if args.docs is not None else _DEFAULT_DOCS
    if not docs.is_dir():
        print(f"etc_fast.docs: error: {docs}: not a directory (give the docs folder with --docs)", file=sys.stderr)
        return 2
    if args.check:
        stale = stale_pages(docs)
        for rel in stale:
            print(f"{docs / rel}: out of date; run `{COMMAND}`", file=sys.stderr)
        return 1 if stale else 0
    try:
        changed = write_pages(docs)
    except OSError as exc:
        print(f"etc_fast.docs: error: cannot write under {docs}: {exc.strerror or exc}", file=sys.stderr)
        return 2
    for path in changed:
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
