"""The documentation site's generated reference pages.

``python -m etc_fast.docs`` rewrites ``docs/reference/config.md``, ``cli.md`` and ``outputs.md`` from
the code they describe; ``python -m etc_fast.docs --check`` reports the pages that differ from it.
The site itself is built by MkDocs from ``mkdocs.yml`` at the repository root.
"""

from etc_fast.docs._reference import COMMAND, PAGES, attribute_docs, render_pages, stale_pages, write_pages

__all__ = ["COMMAND", "PAGES", "attribute_docs", "render_pages", "stale_pages", "write_pages"]
