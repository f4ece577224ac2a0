"""What NewtonBench's system simulators share: noise, the step rule, number formatting, argument checks.

The simulators themselves are in :mod:`etc_fast.systems.defs` (one file per module); facts, with
NewtonBench file and line: ``/work/shared/newtonbench_systems.md`` §0.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np

__all__ = ["MAX_POINTS", "MAX_RETURNED", "Noise", "check_points", "e3", "e6", "required", "steps", "wrap_angle"]

#: NewtonBench returns at most this many points of a trajectory.
MAX_RETURNED = 20
#: Largest ``num_points`` a request may ask for (NewtonBench has no cap; we refuse past this).
MAX_POINTS = 100_000


class Noise:
    """NewtonBench's ``inject_noise``: ``sigma = max(|y * level|, floor)``, Gaussian, NaN stays NaN.

    At ``level == 0.0`` the value is returned unchanged and nothing is drawn. Arrays get
    elementwise sigma; scalars (Python or NumPy) are treated as NewtonBench's non-array branch.
    Draws come from ``rng`` (a NumPy Generator seeded by the caller) instead of NewtonBench's
    global generators: the same distribution, reproducible per trial.
    """

    def __init__(self, level: float, rng: np.random.Generator | None):
        self.level = level
        self.rng = rng

    def __call__(self, y: Any, floor: float) -> Any:
        if self.level == 0.0:
            return y
        if isinstance(y, np.ndarray):
            sigma = np.maximum(np.abs(y * self.level), floor)
            return y + sigma * self.rng.standard_normal(y.shape)
        scalar_sigma = max(abs(y * self.level), floor)
        return y + float(self.rng.standard_normal()) * scalar_sigma


def steps(duration: Any, time_step: Any) -> int:
    """NewtonBench's step rule: ``int(duration / time_step)`` (truncating; 0.3/0.1 -> 2)."""
    return int(duration / time_step)


def e3(values: Iterable[Any]) -> list[str]:
    """``"{:.3e}"`` of each value (NewtonBench's time stamps in m0, m1, m2-simple)."""
    return [f"{float(v):.3e}" for v in values]


def e6(values: Iterable[Any]) -> list[str]:
    """``"{:.6e}"`` of each value (NewtonBench's readings)."""
    return [f"{float(v):.6e}" for v in values]


def required(kw: Mapping[str, Any], names: tuple[str, ...]) -> tuple[Any, ...]:
    """The required keyword arguments, or the ``TypeError`` Python raises when some are missing."""
    missing = [n for n in names if n not in kw]
    if missing:
        quoted = " and ".join(repr(n) for n in missing)
        raise TypeError(
            f"run_experiment_for_module() missing {len(missing)} required positional argument"
            f"{'s' if len(missing) > 1 else ''}: {quoted}"
        )
    return tuple(kw[n] for n in names)


def check_points(num_points: Any) -> Any:
    """``num_points`` as given, refused past :data:`MAX_POINTS` (NewtonBench allocates without bound)."""
    if isinstance(num_points, int) and num_points > MAX_POINTS:
        raise ValueError(
            f"num_points = {num_points} exceeds this simulator's limit of {MAX_POINTS}"
        )
    return num_points


def wrap_angle(angle: Any) -> Any:
    """An angle in degrees folded into [0, 90] (NewtonBench's m4)."""
    angle = angle % 180
    if angle > 90:
        angle = 180 - angle
    return angle
