"""m6_underdamped_harmonic: a damped oscillator's period (simple) and its amplitude over two periods (complex).

Law use: ``omega = law(k, m, b)``; ``T = 2 pi / omega``; the complex record is
``A0 exp(-3 t) cos(omega t)`` at 20 times spanning two periods. Facts: ``newtonbench_systems.md``,
"m6_underdamped_harmonic".
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
from etc_fast.systems._forwardkit import N_STEPS, eval_programs
from etc_fast.systems._simkit import Noise
from etc_fast.systems.defs._shared import precheck_guard

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m6_underdamped_harmonic"
_NAN = float("nan")


guard = precheck_guard


_DEFAULTS = {
    "k_constant": 10.0,
    "mass": 1.0,
    "b_constant": 0.5,
    "initial_amplitude": 1.0,
}


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """NewtonBench's simple system: the period ``2 pi / omega`` with ``omega = law(k, m, b)``.

    Returns ``{"period": text}``, ``"invalid"`` when omega is zero or not finite.
    """
    p = {**_DEFAULTS, **kw}
    omega = law(p["k_constant"], p["mass"], p["b_constant"])
    if not np.isfinite(omega) or omega == 0:
        return {"period": "invalid"}
    return {"period": f"{float(noise(2 * np.pi / omega, 1e-9)):.6e}"}


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """NewtonBench's complex system: ``A0 exp(-3 t) cos(omega t)`` at 20 times over two periods.

    Returns the time and amplitude columns as text, both empty when omega is zero or not finite.
    """
    p = {**_DEFAULTS, **kw}
    omega = law(p["k_constant"], p["mass"], p["b_constant"])
    if not np.isfinite(omega) or omega == 0:
        return {"time": [], "amplitude": []}
    period = 2 * np.pi / omega
    times = np.linspace(0, 2 * period, 20)
    amplitude = noise(
        p["initial_amplitude"] * np.exp(-3 * times) * np.cos(omega * times), 1e-9
    )
    return {
        "time": [f"{t:.6e}" for t in times.tolist()],
        "amplitude": [f"{a:.6e}" for a in amplitude.tolist()],
    }


def _omega(f: ForwardInput) -> np.ndarray:
    w = eval_programs(f.packed, np.column_stack([f.col("k_constant"), f.col("mass"), f.col("b_constant")]))
    return np.where(np.isfinite(w) & (w != 0), w, np.nan)


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate's period ``2 pi / omega`` (NaN where omega is zero or not finite).

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    period = 2 * np.pi / _omega(f)
    return period[:, :, None, None]


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate's 20 sample times over two of its periods (channel 0) and the
    amplitude ``A0 exp(-3 t) cos(omega t)`` there (channel 1).

    Returns float64[P, n_exp, 2, 20] (candidate, experiment, channel, point), NaN where undefined.
    """
    w = _omega(f)
    period = 2 * np.pi / w
    t = period[:, :, None] * 2 * (np.arange(N_STEPS) / (N_STEPS - 1))[None, None, :]
    amp = (
        f.col("initial_amplitude")[None, :, None]
        * np.exp(-3 * t)
        * np.cos(w[:, :, None] * t)
    )
    return np.stack([t, amp], axis=2)


_CONTROLS = (
    control("k_constant", 10.0, "spring constant", "log", 1e2, 1e4),
    control("mass", 1.0, "mass of the oscillator", "log", 0.1, 10.0),
    control("b_constant", 0.5, "damping constant", "log", 1e-2, 1.0),
)

SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A damped oscillator; a timer reads the period of its oscillation.",
        _CONTROLS,
        ("period",),
        1,
        'a JSON object: period (string) or "invalid"',
        ("T = 2 pi / omega", "the net force is the vector sum of the forces"),
    ),
    simulator=simulate_simple,
    forward=forward_simple,
    guard=guard,
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "A damped oscillator; an amplitude record of 20 points spans two periods.",
        (*_CONTROLS, control("initial_amplitude", 1.0, "initial amplitude", pool=False)),
        ("time", "amplitude"),
        20,
        "a JSON object: time and amplitude, 20 strings each (empty lists when no oscillation)",
        ("x(t) = A0 exp(-3 t) cos(omega t)", "T = 2 pi / omega", "forces superpose"),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
)

DEFINITIONS = (SIMPLE, COMPLEX)
