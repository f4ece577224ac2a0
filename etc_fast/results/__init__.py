"""Results pages generated from stored run summaries.

* ``python -m etc_fast.results store RUN [--as NAME]`` — a finished run's provenance, identity and
  report tables into ``results/NAME.json`` (:func:`summarise_run`, :func:`dump_summary`).
* ``python -m etc_fast.results pages [--check]`` — ``docs/results/`` from ``results/*.json`` only
  (:func:`render_pages`).
* ``python -m etc_fast.results readme`` — the README's "Results in brief" tables
  (:func:`readme_tables`).
* ``python -m etc_fast.results machine`` — the line naming this machine, as a run records it.
* ``python -m etc_fast.results design CONFIG`` — a design's power per cell and time per part, from
  the stored studies (:func:`design_report`).
* ``python -m etc_fast.results pack RUN DIR`` / ``unpack DIR RUN`` — a run's trial lines into an
  archive folder that can be committed or copied, and back into a run directory that resumes
  (:func:`pack_run`, :func:`unpack_run`).
"""

from etc_fast.results._archive import Packed, pack_run, unpack_run
from etc_fast.results._design import design_report
from etc_fast.results._pages import (
    GENERATED,
    generated_tables,
    load_summaries,
    main_numbers,
    readme_full_table,
    readme_noise_table,
    readme_systems_table,
    readme_tables,
    render_pages,
    stale_pages,
)
from etc_fast.results._summary import SCHEMA, ResultsError, StatedProvenance, dump_summary, summarise_run

__all__ = [
    "GENERATED",
    "Packed",
    "SCHEMA",
    "ResultsError",
    "StatedProvenance",
    "design_report",
    "dump_summary",
    "generated_tables",
    "load_summaries",
    "main_numbers",
    "pack_run",
    "readme_full_table",
    "readme_noise_table",
    "readme_systems_table",
    "readme_tables",
    "render_pages",
    "stale_pages",
    "summarise_run",
    "unpack_run",
]
