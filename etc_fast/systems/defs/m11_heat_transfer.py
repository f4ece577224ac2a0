"""m11_heat_transfer: a heat amount's power split at random into three channels (simple) and a bulb count (complex).

Law use: ``Q = law(m, c, delta_T)``. NewtonBench draws from its global NumPy generator at every
call, even at noise 0 (``legacy_rng``): the loss, then the three split fractions; or ``c_alt``,
then the loss. The forward model predicts the expected reading over those draws (the loss's mean
0.2; for the bulbs, the mean over ``c_alt / c`` of ``|Q(c) - Q(c_alt)|`` by 8-point Gauss-Legendre
on each side of ``c_alt = c`` in [0.7, 1.2]), sums the simple system's three channels into one and
does not truncate the bulb count. Facts: ``newtonbench_systems.md``, "m11_heat_transfer".
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from etc_fast.systems._definition import (
    ForwardInput,
    Law,
    LawParts,
    SystemDefinition,
    SystemSpec,
    control,
    number,
)
from etc_fast.systems._forwardkit import GL8, eval_programs
from etc_fast.systems._simkit import Noise

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m11_heat_transfer"


def guard(p: LawParts) -> Law:
    """0.0 when an input is <= 0; easy laws are plain Python, medium and hard under errstate (NaN)."""
    value, errstate_float = p.value, p.errstate_float
    plain = p.difficulty == "easy"

    def law(m: Any, c: Any, delta_T: Any) -> Any:
        if m <= 0 or c <= 0 or delta_T <= 0:
            return 0.0
        return value((m, c, delta_T)) if plain else errstate_float((m, c, delta_T))

    return law


def _inputs(kw: dict[str, Any]) -> tuple[Any, Any, Any]:
    return kw.get("m", 1.0), kw.get("c", 1000.0), kw.get("delta_T", 1.0)


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """``P = Q / (m c / 100)``, less a U(0.18, 0.22) loss, split by three U(0.1, 0.8) fractions."""
    m, c, delta_T = _inputs(kw)
    q = law(m, c, delta_T)
    power = q / ((m * c) / 100.0)
    available = power * (1 - legacy.uniform(0.18, 0.22))
    f = [legacy.uniform(0.1, 0.8) for _ in range(3)]
    total = f[0] + f[1] + f[2]
    f = [fi / total for fi in f]
    return {
        "P_cond": noise(f[0] * available, 1e-9),
        "P_conv": noise(f[1] * available, 1e-9),
        "P_rad": noise(f[2] * available, 1e-9),
    }


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """``int(|Q(c) - Q(c r)| / (m c / 100) (1 - loss))`` bulbs, ``r ~ U(0.7, 1.2)``; 0 for NaN."""
    m, c, delta_T = _inputs(kw)
    q0 = law(m, c, delta_T)
    c_alt = c * legacy.uniform(0.7, 1.2)
    q1 = law(m, c_alt, delta_T)
    power = abs(q0 - q1) / ((m * c) / 100.0)
    available = power * (1 - legacy.uniform(0.18, 0.22))
    if math.isnan(available):  # pd.isna in NewtonBench
        return 0
    return int(noise(available, 1e-9) / 1.0)


def read_simple(row: np.ndarray, output: Any, sp: SystemSpec) -> None:
    """The three random channels summed: the only part that carries the law."""
    row[0, 0] = sum(number(output.get(k)) for k in ("P_cond", "P_conv", "P_rad"))


def _heat(f: ForwardInput) -> tuple[np.ndarray, ...]:
    m, c, dT = f.col("m"), f.col("c"), f.col("delta_T")
    return m, c, dT, m * c / 100.0, eval_programs(f.packed, np.column_stack([m, c, dT]))


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: the expected total power ``0.8 Q / (m c / 100)``: the three channels summed and
    the U(0.18, 0.22) loss at its mean.

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    _, _, _, t, q0 = _heat(f)
    return (0.8 * q0 / t)[:, :, None, None]


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: the expected (untruncated) bulb count, ``0.8 E|Q(c) - Q(c r)| / (m c / 100)`` over
    ``r ~ U(0.7, 1.2)``, by 8-point Gauss-Legendre on each side of the kink at ``r = 1``.

    Returns float64[P, n_exp, 1, 1] (candidate, experiment, channel, point), NaN where undefined.
    """
    m, c, dT, t, q0 = _heat(f)
    # E|Q(c) - Q(c r)| for r ~ U(0.7, 1.2): the integrand has a kink at r = 1 (c_alt = c),
    # so each side gets its own 8-point Gauss-Legendre rule.
    nodes, weights = GL8
    r = np.concatenate([0.85 + 0.15 * nodes, 1.1 + 0.1 * nodes])
    w = np.concatenate([0.15 * weights, 0.1 * weights]) / 0.5
    q1 = eval_programs(
        f.packed,
        np.column_stack(
            [np.repeat(m, 16), (c[:, None] * r[None, :]).ravel(), np.repeat(dT, 16)]
        ),
    ).reshape(f.P, f.n_exp, 16)
    mean_diff = (np.abs(q0[:, :, None] - q1) * w).sum(axis=2)
    return (0.8 * mean_diff / t)[:, :, None, None]


_CONTROLS = (
    control("m", 1.0, "mass of the sample", "log", 1e-3, 1e3),
    control("c", 1000.0, "specific heat capacity", "log", 1e2, 1e4),
    control("delta_T", 1.0, "temperature change", "log", 10.0, 1e3),
)

SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A heated sample delivers its heat over a time t = m c / 100; after an 18-22% loss the power splits at random among conduction, convection and radiation.",
        _CONTROLS,
        ("total_power",),
        1,
        "a JSON object of three bare numbers: P_cond, P_conv, P_rad (their sum is the available power)",
        (
            "energy conservation; Q_total = law(m, c, delta_T)",
            "t = m c / 100, power = Q / t",
            "18-22% is lost before the split; the split is random",
        ),
    ),
    simulator=simulate_simple,
    forward=forward_simple,
    guard=guard,
    read=read_simple,
    response={"P_cond": "...", "P_conv": "...", "P_rad": "..."},
    legacy_rng=True,
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "Two heat amounts are compared, with c and with a randomly rescaled c_alt; their difference, delivered over t = m c / 100 after an 18-22% loss, lights 1 W bulbs.",
        _CONTROLS,
        ("bulbs",),
        1,
        "a bare integer: the number of bulbs lit",
        (
            "Q_original = law(m, c, delta_T), Q_alt = law(m, c_alt, delta_T) with a random c_alt",
            "P = |Q_original - Q_alt| / t, t = m c / 100",
            "18-22% loss; 1 W per bulb",
        ),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
    response="...",
    legacy_rng=True,
)

DEFINITIONS = (SIMPLE, COMPLEX)
