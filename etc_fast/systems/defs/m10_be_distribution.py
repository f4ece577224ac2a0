"""m10_be_distribution: a spectrometer's radiance at one frequency (simple) and a band-pass calorimeter (complex).

Law use: the occupation number ``n = law(omega, T)``; radiance ``n omega^3``; the calorimeter
integrates it over the band with QUADPACK (NewtonBench), the forward model with 16-point
Gauss-Legendre. Facts: ``newtonbench_systems.md``, "m10_be_distribution".
"""

from __future__ import annotations

import warnings
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
from etc_fast.systems._forwardkit import GL16, eval_programs
from etc_fast.systems._simkit import Noise

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m10_be_distribution"
_NAN = float("nan")
_RAISE: dict[str, Any] = {"over": "raise", "divide": "raise", "invalid": "raise", "under": "ignore"}


def guard(p: LawParts) -> Law:
    """Under ``np.errstate(raise)``: the value when finite and > 0, else NaN (errors -> NaN)."""
    value = p.value

    def law(*args: Any) -> Any:
        try:
            with np.errstate(**_RAISE):
                v = value(args)
            if v > 0 and np.isfinite(v):
                return v
            return _NAN
        except (ValueError, ZeroDivisionError, OverflowError, FloatingPointError):
            return _NAN

    return law


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """``n omega^3`` printed to 12 decimals."""
    p = {"temperature": 1e3, "probe_frequency": 1e8, **kw}
    omega = p["probe_frequency"]
    radiance = law(omega, p["temperature"]) * (omega**3)
    return {"spectral_radiance": f"{float(noise(radiance, 1e-12)):.12e}"}


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """``quad(n(w, T) w^3, c - bw/2, c + bw/2, limit=100)``."""
    from scipy.integrate import quad

    p = {"temperature": 1e3, "center_frequency": 1e9, "bandwidth": 1e1, **kw}
    T, c, bw = p["temperature"], p["center_frequency"], p["bandwidth"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        power, _ = quad(lambda w: law(w, T) * (w**3), c - bw / 2, c + bw / 2, limit=100)
    return {"total_power": f"{float(noise(power, 1e-12)):.6e}"}


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate's radiance ``n(omega, T) omega^3`` at the probed frequency.

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    T, w = f.col("temperature"), f.col("probe_frequency")
    return (eval_programs(f.packed, np.column_stack([w, T])) * w**3)[:, :, None, None]


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate's power ``n omega^3`` integrated over the band
    ``center +- bandwidth/2`` by 16-point Gauss-Legendre (NewtonBench integrates with QUADPACK).

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    T, c, bw = f.col("temperature"), f.col("center_frequency"), f.col("bandwidth")
    nodes, weights = GL16
    w = (c[:, None] + 0.5 * bw[:, None] * nodes[None, :]).ravel()
    r = (eval_programs(f.packed, np.column_stack([w, np.repeat(T, 16)])) * w**3).reshape(
        f.P, f.n_exp, 16
    )
    return (0.5 * bw[None, :] * (r * weights).sum(axis=2))[:, :, None, None]


_TEMPERATURE = control("temperature", 1e3, "temperature of the source", "log", 10.0, 1e3)

SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A spectrometer reads the spectral radiance of a thermal source at one angular frequency.",
        (
            _TEMPERATURE,
            control("probe_frequency", 1e8, "angular frequency probed", "log", 1e8, 1e16),
        ),
        ("spectral_radiance",),
        1,
        "a JSON object: spectral_radiance (string, 12 decimals)",
        (
            "spectral radiance R is proportional to n omega^3",
            "radiated power per area is proportional to T^4",
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
        "A band-pass calorimeter reads the power of a thermal source integrated over a band of angular frequencies.",
        (
            _TEMPERATURE,
            control("center_frequency", 1e9, "band centre (angular frequency)", "log", 1e8, 1e14),
            control("bandwidth", 1e1, "band width", pool=False),
        ),
        ("total_power",),
        1,
        "a JSON object: total_power (string)",
        (
            "P = integral of R d omega over [centre - width / 2, centre + width / 2]",
            "R proportional to n omega^3",
            "a narrow band gives P close to R(centre) x width",
        ),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
)

DEFINITIONS = (SIMPLE, COMPLEX)
