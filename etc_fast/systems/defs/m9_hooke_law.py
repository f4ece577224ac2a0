"""m9_hooke_law: a spring-launched mass's net kinetic energy (simple) and its damped maximum velocity (complex).

Law use: ``U = law(x)``, the elastic energy; both systems return a RAW ``numpy.float64`` (or a
Python NaN). Facts: ``newtonbench_systems.md``, "m9_hooke_law".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from etc_fast.systems._definition import (
    ForwardInput,
    Law,
    LawParts,
    SystemDefinition,
    SystemSpec,
    control,
)
from etc_fast.systems._forwardkit import eval_programs
from etc_fast.systems._simkit import Noise

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m9_hooke_law"
_NAN = float("nan")


def guard(p: LawParts) -> Law:
    """``x < 0`` -> NaN, then ``x = float(x)``; ``ValueError``/``ZeroDivisionError`` -> NaN."""
    value = p.value

    def law(x: Any) -> Any:
        try:
            if x < 0:
                return _NAN
            return value((float(x),))
        except (ValueError, ZeroDivisionError):
            return _NAN

    return law


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """``KE - KE_loss`` with ``v = sqrt(2U/m)``, ``KE_loss = -0.2 x v^2``, in NewtonBench's order."""
    x, m = kw.get("x", 1.0), kw.get("m", 1.0)
    if m <= 0:
        return float("nan")
    v = np.sqrt(2 * law(x) / m)
    ke = 0.5 * m * (v**2)
    ke_loss = -0.2 * x * (v**2)
    return noise(ke - ke_loss, 1e-9)


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """``exp(-x / 0.02) sqrt(2U/m)`` (no guard on m)."""
    x, m = kw.get("x", 1.0), kw.get("m", 1.0)
    v = np.sqrt(2 * law(x) / m)
    return noise(np.exp(-x / 0.02) * v, 1e-9)


def _energy(f: ForwardInput) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    x, m = f.col("x"), f.col("m")
    U = eval_programs(f.packed, x[:, None])
    return x, m, 2 * U / m


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: the net kinetic energy ``KE - KE_loss`` from each candidate's elastic energy,
    NaN where ``m <= 0``.

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    x, m, v2 = _energy(f)
    y = np.where(m > 0, 0.5 * m * v2 + 0.2 * x * v2, np.nan)
    return y[:, :, None, None]


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: the damped maximum velocity ``exp(-x / 0.02) sqrt(2U/m)``.

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    x, m, v2 = _energy(f)
    y = np.exp(-x / 0.02) * np.sqrt(v2)
    return y[:, :, None, None]


_CONTROLS = (
    control("x", 1.0, "displacement of the spring", "log", 1e-3, 1.0),
    control("m", 1.0, "mass on the spring", "log", 0.1, 10.0),
)

SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A spring released from displacement x launches a mass m; a sensor reads the net kinetic energy after air losses.",
        _CONTROLS,
        ("net_kinetic_energy",),
        1,
        "a bare number",
        (
            "energy conservation; U is the stored elastic energy",
            "U = m v_max^2 / 2",
            "air loss U_loss = -k_air x v_max^2 with k_air = 0.2",
            "Net_KE = U - U_loss",
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
        "A spring released from displacement x launches a mass m; a sensor reads the realistic maximum velocity after a displacement-dependent loss.",
        _CONTROLS,
        ("max_velocity",),
        1,
        "a bare number",
        (
            "energy conservation; U the stored elastic energy",
            "U = m v_max^2 / 2",
            "energy retention exp(-x / x_scale), x_scale fixed and not revealed",
        ),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
    response="...",
)

DEFINITIONS = (SIMPLE, COMPLEX)
