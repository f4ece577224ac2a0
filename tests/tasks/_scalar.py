"""Slow scalar twin of the NewtonBench truth: each law evaluated point by point on Python floats.

The law expressions (data) come from :mod:`etc_fast.laws`; everything else is written
out here the plain way NewtonBench does it: ``eval`` of the expression on Python floats, the
module's guard, ``np.errstate`` where the module uses it, and its post-processing. Any exception
gives NaN, and so does a complex result the module would return as such.
"""

from __future__ import annotations

import math
import warnings

import numpy as np

from etc_fast.laws import CONSTANTS, LAWS

SIGNATURES = {
    "m0_gravity": ("mass1", "mass2", "distance"),
    "m1_coulomb_force": ("q1", "q2", "distance"),
    "m2_magnetic_force": ("current1", "current2", "distance"),
    "m3_fourier_law": ("k", "A", "delta_T", "d"),
    "m4_snell_law": ("n1", "n2", "angle1"),
    "m5_radioactive_decay": ("N0", "lambda_constant", "t"),
    "m6_underdamped_harmonic": ("k", "m", "b"),
    "m7_malus_law": ("I_0", "theta"),
    "m8_sound_speed": ("gamma", "T", "M"),
    "m9_hooke_law": ("x",),
    "m10_be_distribution": ("omega", "T"),
    "m11_heat_transfer": ("m", "c", "delta_T"),
}

_ERRSTATE_RAISE = dict(over="raise", divide="raise", invalid="raise", under="ignore")


def _guard(module: str, a: dict) -> float | None:
    """The module's early return, or None to go on."""
    if module == "m0_gravity" and (a["distance"] <= 0 or a["mass1"] <= 0 or a["mass2"] <= 0):
        return 0.0
    if module == "m1_coulomb_force" and (a["distance"] <= 0 or a["q1"] == 0 or a["q2"] == 0):
        return 0.0
    if module == "m2_magnetic_force" and (a["distance"] <= 0 or a["current1"] == 0 or a["current2"] == 0):
        return 0.0
    if module == "m3_fourier_law" and (a["d"] <= 0 or a["delta_T"] <= 0):
        return 0.0
    if module == "m9_hooke_law" and a["x"] < 0:
        return math.nan
    if module == "m11_heat_transfer" and (a["m"] <= 0 or a["c"] <= 0 or a["delta_T"] <= 0):
        return 0.0
    return None


def newtonbench_scalar(module: str, difficulty: str, version: str, point) -> float:
    """NewtonBench's value of one law at one point (NaN where it raises)."""
    args = {name: float(v) for name, v in zip(SIGNATURES[module], point)}
    early = _guard(module, args)
    if early is not None:
        return early
    env = {"np": np, "math": math, **CONSTANTS[module], **args}
    source = LAWS[module][(difficulty, version)]
    errstate_raise = module in ("m5_radioactive_decay", "m7_malus_law", "m10_be_distribution") or (
        module == "m11_heat_transfer" and difficulty != "easy"
    )
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            if module == "m6_underdamped_harmonic" and (difficulty, version) == ("hard", "v0"):
                k, m, b = args["k"], args["m"], args["b"]
                if k / m - (b / (2 * m**2)) < 0:
                    return math.nan
            with np.errstate(**_ERRSTATE_RAISE) if errstate_raise else np.errstate(all="ignore"):
                value = eval(source, env)  # noqa: S307 - fixed law text from the package tables
            if module in ("m5_radioactive_decay", "m7_malus_law", "m11_heat_transfer") and errstate_raise:
                if not np.isfinite(value):
                    return math.nan
                return float(value)  # NumPy complex -> real part; Python complex -> TypeError
            if module == "m10_be_distribution":
                if isinstance(value, complex):  # a complex result is no measurement
                    return math.nan
                return float(value) if value > 0 and np.isfinite(value) else math.nan
            if isinstance(value, complex):
                return math.nan
            return float(value)
        except Exception:  # every exception NewtonBench lets escape or catches -> NaN
            return math.nan


def newtonbench_scalar_many(module: str, difficulty: str, version: str, X) -> np.ndarray:
    return np.array([newtonbench_scalar(module, difficulty, version, row) for row in np.asarray(X, dtype=float)])
