"""m7_malus_law: a photometer behind one polarizer (simple) and behind two at the same angle (complex).

Law use: ``I = law(I_0, theta)``, theta in radians; both systems return a RAW float, NaN (before the
law is called) when ``I_0 <= 0``, ``theta <= 0`` or ``theta > pi/2``. Facts:
``newtonbench_systems.md``, "m7_malus_law".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from etc_fast.systems._definition import (
    ForwardInput,
    Law,
    SystemDefinition,
    SystemSpec,
    control,
)
from etc_fast.systems._forwardkit import eval_each, eval_programs
from etc_fast.systems._simkit import Noise
from etc_fast.systems.defs._shared import errstate_guard

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m7_malus_law"


guard = errstate_guard


def _inputs(kw: dict[str, Any]) -> tuple[Any, Any]:
    return kw.get("I_0", 1000.0), kw.get("theta", 0.785)


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """The transmission ratio ``law(I_0, theta) / I_0``."""
    I_0, theta = _inputs(kw)
    if I_0 <= 0 or theta <= 0 or theta > np.pi / 2:
        return float("nan")
    return noise(law(I_0, theta) / I_0, 1e-12)


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """Two stages at the same angle, minus the INITIAL intensity: ``law(law(I_0, theta), theta) - I_0``."""
    I_0, theta = _inputs(kw)
    if I_0 <= 0 or theta <= 0 or theta > np.pi / 2:
        return float("nan")
    return noise(law(law(I_0, theta), theta) - I_0, 1e-9)


def _stage1(f: ForwardInput) -> tuple[np.ndarray, ...]:
    I0, th = f.col("I_0"), f.col("theta")
    ok = (I0 > 0) & (th > 0) & (th <= np.pi / 2)
    return I0, th, ok, eval_programs(f.packed, np.column_stack([I0, th]))


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate's transmission ratio ``law(I_0, theta) / I_0``, NaN outside
    ``I_0 > 0, 0 < theta <= pi/2``.

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    I0, th, ok, i1 = _stage1(f)
    y = i1 / I0
    return np.where(ok[None], y, np.nan)[:, :, None, None]


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate applied twice at the same angle, less the initial intensity, NaN
    outside the same domain.

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    I0, th, ok, i1 = _stage1(f)
    y = eval_each(f.packed, np.stack(np.broadcast_arrays(i1, th[None, :]), axis=-1)) - I0
    return np.where(ok[None], y, np.nan)[:, :, None, None]


_CONTROLS = (
    control("I_0", 1000.0, "intensity of the incident light", "log", 100.0, 2000.0),
    control(
        "theta",
        0.785,
        "angle between polarization and polarizer axis (radians, in (0, pi/2])",
        "linear",
        1e-6,
        np.pi / 2,
    ),
)

SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A photometer behind one polarizer reads the transmission ratio I / I_0.",
        _CONTROLS,
        ("ratio",),
        1,
        "a bare number (NaN outside the allowed inputs)",
        (
            "energy conservation",
            "a polarizer passes the aligned component; transmission depends on the angle",
        ),
    ),
    simulator=simulate_simple,
    forward=forward_simple,
    guard=guard,
    response="...",
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "Two polarizers in a row at the same angle; a photometer reads I_1 - I_0 (after both, minus the incident intensity).",
        _CONTROLS,
        ("difference",),
        1,
        "a bare number (NaN outside the allowed inputs)",
        (
            "energy conservation",
            "both polarizers apply the same law",
            "the difference depends on I_0 and theta",
        ),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
    response="...",
)

DEFINITIONS = (SIMPLE, COMPLEX)
