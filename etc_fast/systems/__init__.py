"""NewtonBench's ``simple_system`` and ``complex_system`` tiers: hidden laws inside simulated systems.

In these tiers an experiment does not return the law's value: the law drives a simulation (a
body falling under a force law, a cooling profile, a decay ratio, an oscillator...) and the
experiment returns what the apparatus records, in NewtonBench's own output format.

>>> from etc_fast.tasks import get_task
>>> task = get_task("m7_malus_law", "easy", "v0", system="simple_system")
>>> round(task.experiment([{"I_0": 500.0, "theta": 0.3}])[0], 6)
1.564642
>>> task.experiment([{"theta": 0.0}])[0]
nan

The hidden law is bound only inside :class:`SystemTask` (trusted side). :func:`simulate` is the
public forward model: the same apparatus with any candidate law in its place.

Each module's facts in a system (spec, simulator, forward model, points and observation rules,
hidden-law guard, prompt response shape) are one :class:`SystemDefinition`
(:mod:`etc_fast.systems.defs`, one file per module), looked up by ``(module, system)`` with
:func:`definition`. This package's public names below are what the protocol, the policies and
the LLM prompts use; its private modules are implementation.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Protocol

import numpy as np

from etc_fast.laws import LAW_ARGS
from etc_fast.systems._definition import SIM_SYSTEMS, SYSTEMS, Control, SystemDefinition, SystemSpec
from etc_fast.systems._derive import (
    CONSISTENT,
    PRECISION,
    DerivedTable,
    derive_law_table,
    fit_power_law,
    power_law_rms,
    record_times,
    refit_factor,
    refit_factors,
)
from etc_fast.systems._derive_cache import DerivedTableCache
from etc_fast.systems._forward import controls_matrix, observe, pack_family, predict, predict_paired
from etc_fast.systems._hidden import hidden_law
from etc_fast.systems._lm import LockstepFits, calibrate_each, calibrate_many
from etc_fast.systems._planning import Calibration, calibrate, constant_errors, series_disagreement
from etc_fast.systems._pool import system_pool
from etc_fast.systems._quiet import quiet
from etc_fast.systems._registry import definition, definitions, lookup
from etc_fast.systems._simkit import MAX_POINTS, MAX_RETURNED, Noise
from etc_fast.systems._spec import spec


class LawTask(Protocol):
    """What a system task needs of its law's vanilla task (``etc_fast.tasks.Task`` has it)."""

    @property
    def module(self) -> str: ...
    @property
    def difficulty(self) -> str: ...
    @property
    def law_version(self) -> str: ...
    @property
    def signature(self) -> str: ...

__all__ = [
    "CONSISTENT",
    "LAW_ARGS",
    "MAX_POINTS",
    "MAX_RETURNED",
    "PRECISION",
    "SIM_SYSTEMS",
    "SYSTEMS",
    "Calibration",
    "Control",
    "DerivedTable",
    "DerivedTableCache",
    "SystemDefinition",
    "SystemSpec",
    "SystemTask",
    "build_system_task",
    "calibrate",
    "LockstepFits",
    "calibrate_each",
    "calibrate_many",
    "constant_errors",
    "controls_matrix",
    "definition",
    "definitions",
    "derive_law_table",
    "fit_power_law",
    "is_error",
    "observe",
    "pack_family",
    "power_law_rms",
    "predict",
    "predict_paired",
    "quiet",
    "record_times",
    "refit_factor",
    "refit_factors",
    "series_disagreement",
    "simulate",
    "spec",
    "system_pool",
]

#: NewtonBench passes these as keywords next to the request's keys: a request carrying one of
#: them collides (``TypeError: got multiple values for keyword argument``).
_RESERVED = ("noise_level", "difficulty", "system", "law_version")


def is_error(output: object) -> bool:
    """Whether an experiment output is the error value (``{"error": "<Type>: <message>"}``)."""
    return isinstance(output, dict) and set(output) == {"error"}


def _check_noise(noise_level: float) -> float:
    if (
        isinstance(noise_level, bool)
        or not isinstance(noise_level, (int, float))
        or not np.isfinite(noise_level)
        or noise_level < 0
    ):
        raise ValueError(
            f"noise_level must be a finite number >= 0, got {noise_level!r}"
        )
    return float(noise_level)


def simulate(
    module: str,
    system: str,
    requests: Sequence[Mapping[str, object]],
    law: Callable[..., object],
    *,
    noise_level: float = 0.0,
    rng_seed: int | None = None,
) -> list[object]:
    """Run experiments on a system with ``law`` in place of the hidden law (the public forward model).

    Args:
        module: NewtonBench module (``"m0_gravity"``).
        system: ``simple_system`` or ``complex_system``.
        requests: One dict of controls per experiment (NewtonBench's JSON objects; unknown keys
            are ignored, missing keys take NewtonBench's defaults).
        law: Scalar function of the module's law arguments (:data:`LAW_ARGS`, NewtonBench's
            order) returning the law's value.
        noise_level: NewtonBench's relative noise level (``sigma = max(|y| level, floor)``).
        rng_seed: Seeds the noise draws and, for m11, NumPy's legacy ``RandomState`` that
            NewtonBench's m11 draws from at every call (even at noise 0), consumed across the
            batch in NewtonBench's order. ``None`` = fresh entropy.

    Returns:
        One output per request, as NewtonBench returns it (dicts of formatted strings; raw
        floats for m7/m9; m11-simple raw floats in a dict, m11-complex an int), or
        ``{"error": "<ExceptionType>: <message>"}`` where NewtonBench would raise.
    """
    defn = lookup(module, system)
    if defn is None:
        raise ValueError(
            f"no simulator for module {module!r} in system {system!r}; systems: {', '.join(SIM_SYSTEMS)}"
        )
    noise = Noise(_check_noise(noise_level), np.random.default_rng(rng_seed))
    legacy = np.random.RandomState(rng_seed) if defn.legacy_rng else None
    out: list[object] = []
    for i, request in enumerate(requests):
        out.append(_one(defn, request, law, noise, legacy, i))
    return out


def _one(
    defn: SystemDefinition,
    request: object,
    law: Callable[..., object],
    noise: Noise,
    legacy: np.random.RandomState | None,
    index: int,
) -> object:
    if not isinstance(request, Mapping):
        return {
            "error": f"TypeError: experiment {index} must be an object of controls, got {type(request).__name__}"
        }
    for key in _RESERVED:
        if key in request:
            return {
                "error": f"TypeError: run_experiment_for_module() got multiple values for keyword argument {key!r}"
            }
    try:
        with np.errstate(all="ignore"):
            return defn.simulator(dict(request), law, noise, legacy)
    except Exception as exc:  # NewtonBench raises here; the agent gets the error value  # noqa: BLE001
        return {"error": f"{type(exc).__name__}: {exc}"}


@dataclasses.dataclass(frozen=True, eq=False)
class SystemTask:
    """One NewtonBench law inside one simulated system.

    Attributes:
        module: NewtonBench module name.
        difficulty: ``easy``/``medium``/``hard``.
        law_version: ``v0``/``v1``/``v2``.
        system: ``simple_system`` or ``complex_system``.
        law: The same law's ``vanilla_equation`` task: its signature is what an agent submits,
            its 5000-point grid and truth are what scoring replays (as NewtonBench scores all
            three systems).
    """

    module: str
    difficulty: str
    law_version: str
    system: str
    law: LawTask = dataclasses.field(repr=False)
    _hidden: Callable[..., object] = dataclasses.field(repr=False, default=None)

    @property
    def name(self) -> str:
        return self.module

    @property
    def key(self) -> str:
        """``module/difficulty/law_version/system``."""
        return f"{self.module}/{self.difficulty}/{self.law_version}/{self.system}"

    @property
    def signature(self) -> str:
        return self.law.signature

    def experiment(
        self,
        requests: Sequence[Mapping[str, object]],
        *,
        noise_level: float = 0.0,
        rng_seed: int | None = None,
    ) -> list[object]:
        """NewtonBench's output for each request, with the hidden law (see :func:`simulate`)."""
        return simulate(
            self.module,
            self.system,
            requests,
            self._hidden,
            noise_level=noise_level,
            rng_seed=rng_seed,
        )


def build_system_task(law_task: LawTask, system: str) -> SystemTask:
    """Wrap a NewtonBench vanilla task's law in one of the simulated systems (arguments validated)."""
    if system not in SIM_SYSTEMS:
        raise ValueError(f"unknown system {system!r}; valid: {', '.join(SYSTEMS)}")
    return SystemTask(
        module=law_task.module,
        difficulty=law_task.difficulty,
        law_version=law_task.law_version,
        system=system,
        law=law_task,
        _hidden=hidden_law(law_task.module, law_task.difficulty, law_task.law_version),
    )
