"""The ground floor: the plain types every other package shares, importing no other etc_fast package.

What a trial runs (:class:`ProtocolConfig`, :class:`TrialSpec`, the named configurations), what a
policy sees and answers (:class:`TaskView`, :class:`Diagnostics`, :class:`Observation`,
:class:`SystemObservation`, :class:`Action`, :class:`Policy`), the JSON encoding of records
(:func:`to_jsonable`, :func:`from_json_float`) and seeds derived from integers (:func:`derive_seed`).
"""

from etc_fast.core._config import (
    CONFIGURATIONS,
    GP_ACQUISITIONS,
    ID_OMITTED_WHEN_NONE,
    KNOB_RANGES,
    NOISE_KNOB_DEFAULTS,
    OWN_NOISE_ACQUISITIONS,
    PAPER_CONFIGURATIONS,
    PLANNER_ACQUISITIONS,
    Acquisition,
    Family,
    ProtocolConfig,
    TrialSpec,
    config_dict,
    get_configuration,
    scores_committee,
)
from etc_fast.core._json import MAX_RECORDED_CHARS, clip_text, from_json_float, to_jsonable
from etc_fast.core._seeds import derive_seed
from etc_fast.core._types import (
    Action,
    ActionKind,
    Diagnostics,
    Observation,
    Phase,
    Policy,
    SystemObservation,
    TaskView,
)

__all__ = [
    "CONFIGURATIONS",
    "GP_ACQUISITIONS",
    "OWN_NOISE_ACQUISITIONS",
    "MAX_RECORDED_CHARS",
    "ID_OMITTED_WHEN_NONE",
    "KNOB_RANGES",
    "NOISE_KNOB_DEFAULTS",
    "PAPER_CONFIGURATIONS",
    "PLANNER_ACQUISITIONS",
    "Acquisition",
    "Action",
    "ActionKind",
    "Diagnostics",
    "Family",
    "Observation",
    "Phase",
    "Policy",
    "ProtocolConfig",
    "SystemObservation",
    "TaskView",
    "TrialSpec",
    "clip_text",
    "config_dict",
    "derive_seed",
    "from_json_float",
    "get_configuration",
    "scores_committee",
    "to_jsonable",
]
