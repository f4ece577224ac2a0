"""m5_radioactive_decay: a detector reading of a decaying sample (simple) and the ratio of two samples (complex).

Law use: ``N(N0, lambda, t)`` at each of ``num_points`` times ``linspace(0, t, num_points)`` (the
law's time input is the record's time axis). Facts: ``newtonbench_systems.md``,
"m5_radioactive_decay".
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
    points_from_num_points,
)
from etc_fast.systems._forwardkit import N_STEPS, eval_programs, series
from etc_fast.systems._simkit import Noise, check_points, e6
from etc_fast.systems.defs._shared import errstate_guard

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m5_radioactive_decay"


guard = errstate_guard


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """70 % of the remaining count at each time (NewtonBench calls it the measured activity)."""
    N0, lam, t = kw.get("N0", 1.0), kw.get("lambda_constant", 1.0), kw.get("t", 1.0)
    times = np.linspace(0, t, check_points(kw.get("num_points", 20)))
    activity = np.array([0.7 * float(law(N0, lam, tp)) for tp in times])
    activity = noise(activity, 1e-9)
    return {"time": e6(times), "measured_activity": e6(activity)}


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """``N_A(t) / N_B(t)``; NaN where ``|N_B| < 1e-10`` or the ratio is not finite."""
    N0a, N0b = kw.get("N0a", 1.0), kw.get("N0b", 1.0)
    la, lb, t = kw.get("lambda_a", 1.0), kw.get("lambda_b", 1.0), kw.get("t", 1.0)
    times = np.linspace(0, t, check_points(kw.get("num_points", 20)))
    ratios = []
    for tp in times:
        na, nb = float(law(N0a, la, tp)), float(law(N0b, lb, tp))
        if abs(nb) < 1e-10:
            r = np.nan
        else:
            r = na / nb
            if not np.isfinite(r):
                r = np.nan
        ratios.append(r)
    noisy = noise(np.array(ratios), 1e-12)
    return {"time": e6(times), "ratio": e6(noisy)}


def _at_times(f: ForwardInput) -> tuple[np.ndarray, np.ndarray]:
    """The record's times (NaN past its points) and the same times flattened with NaN as 0."""
    t = series(f.n_exp, f.n_points(), f.col("t"))
    return t, np.where(np.isnan(t), 0.0, t).ravel()


def _count(f: ForwardInput, n0: str, lam: str, tt: np.ndarray) -> np.ndarray:
    """float64[P, n_exp, 20]: each candidate's count of sample (n0, lam) at the record's times."""
    X = np.column_stack([np.repeat(f.col(n0), N_STEPS), np.repeat(f.col(lam), N_STEPS), tt])
    return eval_programs(f.packed, X).reshape(f.P, f.n_exp, N_STEPS)


def _finish(y: np.ndarray, t: np.ndarray) -> np.ndarray:
    y = np.where(np.isfinite(y) & ~np.isnan(t)[None], y, np.nan)
    return y[:, :, None, :]


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: 70 % of each candidate's count ``N(N0, lambda, t)`` at the record's times.

    Returns float64[P, n_exp, 1, 20] (candidate, experiment, channel, point), NaN where undefined and past an
    experiment's points.
    """
    t, tt = _at_times(f)
    return _finish(0.7 * _count(f, "N0", "lambda_constant", tt), t)


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: the ratio of the two samples' counts at the record's times, NaN
    where ``|N_B| < 1e-10``.

    Returns float64[P, n_exp, 1, 20] (candidate, experiment, channel, point), NaN where undefined and past an
    experiment's points.
    """
    t, tt = _at_times(f)
    na = _count(f, "N0a", "lambda_a", tt)
    nb = _count(f, "N0b", "lambda_b", tt)
    return _finish(np.where(np.abs(nb) < 1e-10, np.nan, na / nb), t)


SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A detector with 70% efficiency records a decaying sample at num_points evenly spaced times from 0 to t.",
        (
            control("N0", 1.0, "initial amount of the sample", "log", 1.0, 1e2),
            control("lambda_constant", 1.0, "decay constant", "log", 1e-3, 1e-1),
            control("t", 1.0, "end time of the record", "log", 0.1, 10.0),
            control("num_points", 20, "number of recorded times", pool=False),
        ),
        ("measured_activity",),
        20,
        "a JSON object: time and measured_activity, strings in scientific notation",
        (
            "energy conservation",
            "the detector has 70% efficiency: it scales the magnitude, not the shape",
        ),
    ),
    simulator=simulate_simple,
    forward=forward_simple,
    guard=guard,
    points=points_from_num_points,
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "Two independent samples A and B decay side by side; the ratio N_A(t) / N_B(t) is recorded at num_points times from 0 to t.",
        (
            control("N0a", 1.0, "initial amount of A", "log", 1.0, 1e2),
            control("N0b", 1.0, "initial amount of B", "log", 1.0, 1e2),
            control("lambda_a", 1.0, "decay constant of A", "log", 1e-3, 1e-1),
            control("lambda_b", 1.0, "decay constant of B", "log", 1e-3, 1e-1),
            control("t", 1.0, "end time of the record", "log", 0.1, 10.0),
            control("num_points", 20, "number of recorded times", pool=False),
        ),
        ("ratio",),
        20,
        "a JSON object: time and ratio, strings in scientific notation (NaN where B is exhausted)",
        (
            "energy conservation",
            "the samples decay independently (not a chain)",
            "R(t) = N_A(t) / N_B(t)",
        ),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
    points=points_from_num_points,
)

DEFINITIONS = (SIMPLE, COMPLEX)
