"""Runner: configuration, grid expansion, executors, the run directory and its replay.

* :func:`load_config` / :func:`parse_config` — YAML -> validated, frozen :class:`RunConfig`.
* :func:`expand_grid` — a config -> ``list[TrialSpec]`` (deduplicated, fixed order).
* :func:`run_config` — run the pending trials (local process pool or Ray), store them, write the report.
* :class:`RunStore` — ``trials.jsonl`` + transcripts + Parquet + provenance; resume after a kill.
* :func:`replay_run` — re-score every stored submission and compare with the stored metrics.
* :func:`play_again` — play stored offline trials again and compare the records.
"""

from etc_fast.runner._config import (
    ABLATION_KNOBS,
    CONFIG_KEYS,
    OFFLINE_MODELS,
    AnalysisConfig,
    ConfigError,
    ConfigKey,
    GridConfig,
    LLMSettings,
    RayConfig,
    RunConfig,
    config_identity,
    default_workers,
    load_config,
    parse_config,
)
from etc_fast.runner._estimate import ESTIMATE_FILE, estimate_run, stored_finished
from etc_fast.runner._executors import (
    LocalExecutor,
    RayExecutor,
    ThreadExecutor,
    TrialTimeout,
    TrialWorker,
    create_executor,
    failed_record,
)
from etc_fast.runner._grid import describe_grid, expand_grid
from etc_fast.runner._play_again import PlayReport, play_again
from etc_fast.runner._prices import with_prices
from etc_fast.runner._progress import Progress, format_duration
from etc_fast.runner._provenance import PROVENANCE, code_state, machine_info, machine_text, read_provenance
from etc_fast.runner._replay import Difference, ReplayReport, replay_run
from etc_fast.runner._run import PreflightError, RunResult, RunStopped, run_config
from etc_fast.runner._store import RunStore, package_versions
from etc_fast.store import (
    TRIALS_SCHEMA,
    RunDirError,
    check_manifest,
    export_parquet,
    file_hashes,
    read_manifest,
    read_trials,
    trials_frame,
    verify_before_rewrite,
    write_manifest,
)

__all__ = [
    "ABLATION_KNOBS",
    "CONFIG_KEYS",
    "ConfigKey",
    "ESTIMATE_FILE",
    "OFFLINE_MODELS",
    "PROVENANCE",
    "code_state",
    "machine_info",
    "machine_text",
    "read_provenance",
    "estimate_run",
    "stored_finished",
    "with_prices",
    "TRIALS_SCHEMA",
    "ConfigError",
    "Difference",
    "GridConfig",
    "LLMSettings",
    "LocalExecutor",
    "PreflightError",
    "Progress",
    "AnalysisConfig",
    "RayConfig",
    "RayExecutor",
    "PlayReport",
    "ReplayReport",
    "RunConfig",
    "RunDirError",
    "RunResult",
    "RunStore",
    "RunStopped",
    "ThreadExecutor",
    "TrialTimeout",
    "TrialWorker",
    "check_manifest",
    "config_identity",
    "create_executor",
    "default_workers",
    "describe_grid",
    "expand_grid",
    "export_parquet",
    "failed_record",
    "file_hashes",
    "format_duration",
    "load_config",
    "package_versions",
    "parse_config",
    "read_manifest",
    "read_trials",
    "play_again",
    "replay_run",
    "run_config",
    "trials_frame",
    "verify_before_rewrite",
    "write_manifest",
]
