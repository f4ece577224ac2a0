"""MkDocs hooks of the documentation site (``hooks:`` in mkdocs.yml).

The results pages are generated (``python -m etc_fast.results pages``), one per stored study, so the
navigation lists them from the folder instead of by hand: the ``Results`` section of the nav keeps
its overview first and gains every other ``docs/results/*.md``, sorted by name.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

__all__ = ["on_config", "results_nav"]

#: The nav section the generated results pages are listed under.
SECTION = "Results"


def results_nav(docs_dir: str | Path, listed: list[Any]) -> list[Any]:
    """``listed`` (the section's entries in mkdocs.yml) followed by every results page it lacks."""
    present = {next(iter(e.values())) if isinstance(e, dict) else e for e in listed}
    extra = [f"results/{p.name}" for p in sorted(Path(docs_dir, "results").glob("*.md"))
             if f"results/{p.name}" not in present]
    return [*listed, *({p.removeprefix("results/").removesuffix(".md"): p} for p in extra)]


def on_config(config: Any) -> Any:
    """Fill the nav's results section from docs/results/ (MkDocs calls this once per build)."""
    for entry in config["nav"] or []:
        if isinstance(entry, dict) and SECTION in entry:
            entry[SECTION] = results_nav(config["docs_dir"], list(entry[SECTION]))
    return config
