"""m4_snell_law: a refraction angle read by a goniometer (simple: two media; complex: three layers).

Law use: ``theta2 = law(n1, n2, theta1)`` in degrees; the complex system feeds the first
interface's angle into the second. Facts: ``newtonbench_systems.md``, "m4_snell_law".
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
from etc_fast.systems._forwardkit import eval_each, eval_programs, wrap
from etc_fast.systems._simkit import Noise, wrap_angle
from etc_fast.systems.defs._shared import precheck_guard

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m4_snell_law"
_NAN = float("nan")


guard = precheck_guard


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """NewtonBench's simple system: the refraction angle (degrees) between two media given by their speeds.

    The indices are ``3e8 / speed``; the incidence angle is wrapped as NewtonBench does. Returns
    ``{"refraction_angle": text}``, ``"invalid"`` when the law gives a non-finite angle.
    """
    s1, s2 = kw.get("speed_medium1", 3.0e8), kw.get("speed_medium2", 2.0e8)
    theta1 = wrap_angle(wrap_angle(kw.get("incidence_angle", 30.0)))
    n1, n2 = 3.0e8 / s1, 3.0e8 / s2
    theta2 = float(law(n1, n2, theta1))
    if not np.isfinite(theta2):
        return {"refraction_angle": "invalid"}
    return {"refraction_angle": f"{float(noise(theta2, 1e-6)):.6e}"}


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """NewtonBench's complex system: the angle after three layers, the first interface's angle fed to the second.

    Returns ``{"final_refraction_angle": text}``, ``"invalid"`` when either interface gives a non-finite angle.
    """
    n1 = kw.get("refractive_index_1", 1.0)
    n2 = kw.get("refractive_index_2", 1.5)
    n3 = kw.get("refractive_index_3", 1.33)
    theta1 = wrap_angle(kw.get("incidence_angle", 30.0))
    theta2 = float(law(n1, n2, theta1))
    if not np.isfinite(theta2):
        return {"final_refraction_angle": "invalid"}
    theta3 = float(law(n2, n3, theta2))
    if not np.isfinite(theta3):
        return {"final_refraction_angle": "invalid"}
    return {"final_refraction_angle": f"{float(noise(theta3, 1e-6)):.6e}"}


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate's refraction angle from the speeds' indices and the
    wrapped incidence angle.

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    n1, n2 = 3.0e8 / f.col("speed_medium1"), 3.0e8 / f.col("speed_medium2")
    out = eval_programs(f.packed, np.column_stack([n1, n2, wrap(wrap(f.col("incidence_angle")))]))
    return np.where(np.isfinite(out), out, np.nan)[:, :, None, None]


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate applied twice, its own first-interface angle fed to the second
    interface (:func:`eval_each`).

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    n1, n2, n3 = f.col("refractive_index_1"), f.col("refractive_index_2"), f.col("refractive_index_3")
    th2 = eval_programs(f.packed, np.column_stack([n1, n2, wrap(f.col("incidence_angle"))]))
    out = eval_each(f.packed, np.stack(np.broadcast_arrays(n2[None, :], n3[None, :], th2), axis=-1))
    return np.where(np.isfinite(out), out, np.nan)[:, :, None, None]


_INCIDENCE = control("incidence_angle", 30.0, "angle of incidence in degrees", "linear", 0.0, 90.0)

SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "Light passes from medium 1 into medium 2, each given by the speed of light in it; a goniometer reads the refraction angle (degrees).",
        (
            control("speed_medium1", 3.0e8, "speed of light in medium 1 (m/s)", "linear", 2.0e8, 3.0e8),
            control("speed_medium2", 2.0e8, "speed of light in medium 2 (m/s)", "linear", 2.0e8, 3.0e8),
            _INCIDENCE,
        ),
        ("refraction_angle",),
        1,
        'a JSON object: refraction_angle (string, degrees) or "invalid"',
        (
            "refractive index n = c / v with c = 3.0e8 m/s",
            "light travels in straight lines in a uniform medium",
        ),
    ),
    simulator=simulate_simple,
    forward=forward_simple,
    guard=guard,
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "Light crosses three layers of given refractive indices; the final refraction angle (degrees) after the second interface is read.",
        (
            control("refractive_index_1", 1.0, "index of layer 1", "linear", 1.0, 1.5),
            control("refractive_index_2", 1.5, "index of layer 2", "linear", 1.0, 1.5),
            control("refractive_index_3", 1.33, "index of layer 3", "linear", 1.0, 1.5),
            _INCIDENCE,
        ),
        ("final_refraction_angle",),
        1,
        'a JSON object: final_refraction_angle (string, degrees) or "invalid"',
        (
            "refraction at each interface follows the same law",
            "each interface's output angle is the next interface's input angle",
        ),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
)

DEFINITIONS = (SIMPLE, COMPLEX)
