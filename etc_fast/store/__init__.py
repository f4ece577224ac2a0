"""A run directory on disk: its layout, reading it, its integrity, the results table's schema.

Below both the runner (which writes run directories through ``etc_fast.runner.RunStore``) and the
report (which reads them); nothing here needs a run configuration.
"""

from etc_fast.store._files import (
    CONFIG,
    LOCK,
    MANIFEST,
    PARQUET,
    REPORT,
    STOPPED_REASON,
    TRANSCRIPTS,
    TRIALS,
    VERSIONS,
    RunDirError,
    atomic_write,
    check_manifest,
    export_parquet,
    file_hashes,
    is_finished,
    no_verdict,
    parse_line,
    read_manifest,
    read_trials,
    replacing,
    verify_before_rewrite,
    write_manifest,
    write_parquet,
    writing,
)
from etc_fast.store._schema import TRIALS_SCHEMA, entries_frame, trials_frame

__all__ = [
    "CONFIG",
    "LOCK",
    "MANIFEST",
    "PARQUET",
    "REPORT",
    "STOPPED_REASON",
    "TRANSCRIPTS",
    "TRIALS",
    "TRIALS_SCHEMA",
    "VERSIONS",
    "RunDirError",
    "atomic_write",
    "check_manifest",
    "entries_frame",
    "export_parquet",
    "file_hashes",
    "is_finished",
    "no_verdict",
    "parse_line",
    "read_manifest",
    "read_trials",
    "replacing",
    "trials_frame",
    "verify_before_rewrite",
    "write_manifest",
    "write_parquet",
    "writing",
]
