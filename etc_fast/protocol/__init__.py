"""Explore-then-commit planner and free-form baseline loops behind a policy interface."""

from etc_fast.core import (
    CONFIGURATIONS,
    PAPER_CONFIGURATIONS,
    Action,
    Diagnostics,
    Observation,
    Policy,
    ProtocolConfig,
    TaskView,
    TrialSpec,
    get_configuration,
    to_jsonable,
)
from etc_fast.protocol._record import SUMMARY_COLUMNS, TrialRecord
from etc_fast.protocol._submission import is_trivial_submission, precheck_submission
from etc_fast.protocol._trial import LOOPS, judge_submission, load_lab, package_versions, play, run_trial

__all__ = [
    "LOOPS",
    "CONFIGURATIONS",
    "PAPER_CONFIGURATIONS",
    "SUMMARY_COLUMNS",
    "Action",
    "Diagnostics",
    "Observation",
    "Policy",
    "ProtocolConfig",
    "TaskView",
    "TrialRecord",
    "TrialSpec",
    "get_configuration",
    "is_trivial_submission",
    "judge_submission",
    "load_lab",
    "package_versions",
    "play",
    "precheck_submission",
    "run_trial",
    "to_jsonable",
]
