"""Labs: what differs between NewtonBench's tiers, behind one interface (:class:`Lab`).

A trial picks its lab by the spec's system from :data:`LABS`; the protocol's loops are written
once against the interface. Adding a kind of lab means one class here and one registry entry.
"""

from __future__ import annotations

from typing import Any

from etc_fast.core import ProtocolConfig, TaskView, TrialSpec
from etc_fast.labs._base import Lab, Pool, RequestError, noise_knobs_on
from etc_fast.labs._equations import MAX_EXPERIMENT_POINTS, EquationLab, format_experiment_output
from etc_fast.labs._systems import SystemLab, format_system_output

#: Lab class by the task's system (``TrialSpec.system``).
LABS: dict[str, type[Lab]] = {
    "vanilla_equation": EquationLab,
    "simple_system": SystemLab,
    "complex_system": SystemLab,
}


def lab_refusal(system: str, config: ProtocolConfig) -> str | None:
    """Why ``system``'s lab cannot run ``config`` (see :meth:`Lab.refusal`), or ``None``."""
    cls = LABS.get(system)
    return None if cls is None else cls.refusal(config)


def make_lab(spec: TrialSpec, task: Any, view: TaskView) -> Lab:
    """The lab of ``spec``'s system around ``task`` (the vanilla task, or the system task).

    Raises:
        KeyError: no lab is registered for the system.
    """
    try:
        cls = LABS[spec.system]
    except KeyError:
        raise KeyError(f"no lab for system {spec.system!r}; known: {', '.join(LABS)}") from None
    return cls(spec, task, view)


__all__ = [
    "LABS",
    "MAX_EXPERIMENT_POINTS",
    "EquationLab",
    "Lab",
    "Pool",
    "RequestError",
    "SystemLab",
    "format_experiment_output",
    "format_system_output",
    "lab_refusal",
    "make_lab",
    "noise_knobs_on",
]
