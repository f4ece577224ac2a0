"""Explore-then-commit planner and free-form baseline loops behind a policy interface."""

from etc_fast.protocol._record import SUMMARY_COLUMNS, TrialRecord
from etc_fast.protocol._types import (
    CONFIGURATIONS,
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

__all__ = [
    "CONFIGURATIONS",
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
    "to_jsonable",
]
