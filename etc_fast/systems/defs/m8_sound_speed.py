"""m8_sound_speed: an echo time (simple) and a resonance tube's first two lengths (complex).

Law use: ``v = law(adiabatic_index, temperature, molar_mass)``; a non-finite or non-positive speed
reads "invalid". Facts: ``newtonbench_systems.md``, "m8_sound_speed".
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

MODULE = "m8_sound_speed"
_NAN = float("nan")


def guard(p: LawParts) -> Law:
    """``ValueError``/``ZeroDivisionError`` -> NaN."""
    value = p.value

    def law(*args: Any) -> Any:
        try:
            return value(args)
        except (ValueError, ZeroDivisionError):
            return _NAN

    return law


_GAS = {"adiabatic_index": 1.4, "molar_mass": 0.02897, "temperature": 293.15}


def _speed(p: dict[str, Any], law: Law) -> Any:
    return law(p["adiabatic_index"], p["temperature"], p["molar_mass"])


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """The echo time ``2 distance / v``."""
    p = {**_GAS, "distance": 100.0, **kw}
    v = _speed(p, law)
    if not np.isfinite(v) or v <= 0:
        return {"time": "invalid"}
    return {"time": f"{float(noise(2 * p['distance'] / v, 1e-9)):.6e}"}


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """``L1 = lambda/4 - e``, ``L2 = 3 lambda/4 - e`` (clamped at 0), ``e = 0.3 D``."""
    p = {**_GAS, "driving_frequency": 440.0, "tube_diameter": 0.1, **kw}
    v = _speed(p, law)
    if not np.isfinite(v) or v <= 0:
        return {
            "first_resonance_length": "invalid",
            "second_resonance_length": "invalid",
        }
    f, diameter = p["driving_frequency"], p["tube_diameter"]
    if f <= 0 or v <= 0:
        l1, l2 = float("nan"), float("nan")
    else:
        wavelength = v / f
        e = 0.3 * diameter
        l1, l2 = wavelength / 4 - e, 3 * wavelength / 4 - e
        l1 = max(l1, 0)
        l2 = max(l2, 0)
    l1, l2 = noise(l1, 1e-9), noise(l2, 1e-9)
    return {
        "first_resonance_length": f"{float(l1):.6e}",
        "second_resonance_length": f"{float(l2):.6e}",
    }


def _speeds(f: ForwardInput) -> np.ndarray:
    v = eval_programs(f.packed, np.column_stack([f.col("adiabatic_index"), f.col("temperature"), f.col("molar_mass")]))
    return np.where(np.isfinite(v) & (v > 0), v, np.nan)


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: the echo time ``2 distance / v`` of each candidate's speed (NaN where the speed is
    not finite and positive).

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    v = _speeds(f)
    return (2 * f.col("distance")[None] / v)[:, :, None, None]


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: the first two resonance lengths ``lambda/4 - e`` and ``3 lambda/4 - e`` (clamped at
    0, ``e = 0.3 D``) in channels 0 and 1.

    Returns float64[P, n_exp, 2, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    v = _speeds(f)
    freq, e = f.col("driving_frequency")[None], 0.3 * f.col("tube_diameter")[None]
    lam = np.where(freq > 0, v / freq, np.nan)
    l1, l2 = np.maximum(lam / 4 - e, 0.0), np.maximum(3 * lam / 4 - e, 0.0)
    l1, l2 = (
        np.where(np.isnan(lam), np.nan, l1),
        np.where(np.isnan(lam), np.nan, l2),
    )
    return np.stack([l1, l2], axis=2)[:, :, :, None]


_CONTROLS = (
    control("adiabatic_index", 1.4, "adiabatic index of the gas", "linear", 1.3, 1.7),
    control("molar_mass", 0.02897, "molar mass of the gas", "log", 1e-3, 1e-1),
    control("temperature", 293.15, "temperature of the gas", "log", 10.0, 1e3),
)

SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A sound pulse travels to a wall at the given distance and back; a timer reads the echo time.",
        (*_CONTROLS, control("distance", 100.0, "distance to the wall", pool=False)),
        ("time",),
        1,
        'a JSON object: time (string) or "invalid"',
        ("v = f lambda", "intensity I = P / (4 pi r^2)", "the Doppler formula"),
    ),
    simulator=simulate_simple,
    forward=forward_simple,
    guard=guard,
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "A resonance tube closed at one end is driven at a frequency; the first two resonance lengths are read.",
        (
            *_CONTROLS,
            control("driving_frequency", 440.0, "driving frequency (Hz)", pool=False),
            control("tube_diameter", 0.1, "tube diameter", pool=False),
        ),
        ("first_resonance_length", "second_resonance_length"),
        1,
        'a JSON object: first_resonance_length, second_resonance_length (strings) or "invalid"',
        (
            "v = f lambda",
            "resonances at odd multiples of lambda / 4 of the effective length",
            "effective length = L + e, e = 0.3 d",
        ),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
)

DEFINITIONS = (SIMPLE, COMPLEX)
