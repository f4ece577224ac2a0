"""m3_fourier_law: a slab's temperature profile (simple) and heat flux (complex) from the conducted power.

Law use: ONE call ``P = law(k, A, delta_T, d)`` per experiment; probes at ``num_points`` positions
(uncapped in NewtonBench, refused past ``MAX_POINTS`` here). The stamps returned with a record are
the positions ``x``. Facts: ``newtonbench_systems.md``, "m3_fourier_law".
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
    points_from_num_points,
)
from etc_fast.systems._forwardkit import eval_programs, series
from etc_fast.systems._simkit import Noise, check_points, e6

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m3_fourier_law"
_NAN = float("nan")


def guard(p: LawParts) -> Law:
    """0.0 when d <= 0 or delta_T <= 0; ``ValueError``/``ZeroDivisionError`` -> NaN."""
    value = p.value

    def law(k: Any, A: Any, delta_T: Any, d: Any) -> Any:
        try:
            if d <= 0 or delta_T <= 0:
                return 0.0
            return value((k, A, delta_T, d))
        except (ValueError, ZeroDivisionError):
            return _NAN

    return law


def _inputs(kw: dict[str, Any]) -> tuple[Any, ...]:
    return (
        kw.get("k", 1.0),
        kw.get("A", 1.0),
        kw.get("delta_T", 1.0),
        kw.get("d", 1.0),
        check_points(kw.get("num_points", 20)),
    )


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """The linear profile ``T(x) = delta_T - (P / (k A)) x`` on ``linspace(0, d, num_points)``."""
    k, A, delta_T, d, num_points = _inputs(kw)
    P = law(k, A, delta_T, d)
    x = np.linspace(0, d, num_points)
    T = noise(delta_T - (P / (k * A)) * x, 1e-9)
    return {"x": e6(x), "T": e6(T.tolist())}


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """The flux ``-k dT/dx`` (``np.gradient``) of ``T(x) = delta_T exp(-x P / (k A delta_T))``."""
    k, A, delta_T, d, num_points = _inputs(kw)
    P = law(k, A, delta_T, d)
    x = np.linspace(0, d, num_points)
    T = delta_T * np.exp(-x * P / (k * A * delta_T))
    q = noise(-k * np.gradient(T, x), 1e-9)
    return {"x": e6(x), "heat_flux": e6(q.tolist())}


def _power(f: ForwardInput) -> tuple[np.ndarray, ...]:
    k, A, dT, d = f.col("k"), f.col("A"), f.col("delta_T"), f.col("d")
    Pw = eval_programs(f.packed, np.column_stack([k, A, dT, d]))[:, :, None]  # [P, n_exp, 1]
    return k, A, dT, d, Pw


def forward_simple(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate's linear temperature profile at the record's probe positions.

    Returns float64[P, n_exp, 1, 20] (candidate, experiment, channel, point), NaN where undefined and past an
    experiment's points.
    """
    k, A, dT, d, Pw = _power(f)
    x = series(f.n_exp, f.n_points(), d)  # [n_exp, 20]
    return (dT[None, :, None] - Pw / (k * A)[None, :, None] * x[None])[:, :, None, :]


def forward_complex(f: ForwardInput) -> np.ndarray:
    """Closed-form forward model: each candidate's heat flux ``-k dT/dx`` of the exponential profile, differentiated
    the way ``np.gradient`` does, experiments of one length at a time.

    Returns float64[P, n_exp, 1, 20] (candidate, experiment, channel, point), NaN where undefined and past an
    experiment's points.
    """
    k, A, dT, d, Pw = _power(f)
    n = f.n_points()
    x = series(f.n_exp, n, d)  # [n_exp, 20]
    Tx = dT[None, :, None] * np.exp(-x[None] * Pw / (k * A * dT)[None, :, None])
    q = np.full_like(Tx, np.nan)
    for m in np.unique(n[n >= 2]).tolist():  # the experiments of one length together
        e = np.flatnonzero(n == m)
        q[:, e, :m] = -k[e][None, :, None] * gradient_rows(Tx[:, e, :m], x[e, :m])
    return q[:, :, None, :]


def gradient_rows(F: np.ndarray, x: np.ndarray) -> np.ndarray:
    """``np.gradient(F[:, j], x[j], axis=1)`` for every row ``j`` of ``x`` at once, with NumPy's
    arithmetic (so its bits): ``F`` float64[P, J, m], ``x`` float64[J, m], ``m >= 2``.

    NumPy's rule for coordinates: second-order central differences inside, first-order at the
    ends; a row whose steps are all equal uses the uniform formulas with that step.
    """
    dx = np.diff(x, axis=1)  # [J, m - 1]
    uniform = np.all(dx == dx[:, :1], axis=1)
    out = np.empty_like(F)
    d0 = dx[:, 0][None, :]
    dn = dx[:, -1][None, :]
    with np.errstate(all="ignore"):
        out[:, :, 0] = (F[:, :, 1] - F[:, :, 0]) / d0
        out[:, :, -1] = (F[:, :, -1] - F[:, :, -2]) / dn
        if F.shape[2] > 2:
            u = np.flatnonzero(uniform)
            if u.size:
                out[:, u, 1:-1] = (F[:, u, 2:] - F[:, u, :-2]) / (2.0 * dx[u, :1])[None]
            v = np.flatnonzero(~uniform)
            if v.size:
                dx1, dx2 = dx[v, :-1], dx[v, 1:]
                a = (-dx2 / (dx1 * (dx1 + dx2)))[None]
                b = ((dx2 - dx1) / (dx1 * dx2))[None]
                c = (dx1 / (dx2 * (dx1 + dx2)))[None]
                out[:, v, 1:-1] = a * F[:, v, :-2] + b * F[:, v, 1:-1] + c * F[:, v, 2:]
    return out


_CONTROLS = (
    control("k", 1.0, "k_constant of the material", "log", 0.1, 10.0),
    control("A", 1.0, "cross-sectional area", "log", 1e-4, 1e-2),
    control("delta_T", 1.0, "temperature difference across the slab", "log", 10.0, 1e3),
    control("d", 1.0, "thickness of the slab", "log", 1e-2, 1.0),
    control("num_points", 20, "number of positions sampled across the slab", pool=False),
)

SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A slab of thickness d between two regions: probes at num_points evenly spaced positions x in [0, d] record the steady temperature.",
        _CONTROLS,
        ("T",),
        20,
        "a JSON object: x (positions) and T (temperatures), strings in scientific notation",
        (
            "energy conservation",
            "heat diffuses by the heat equation",
            "the steady profile is linear: T(x) = T0 - (P / (k A)) x, P the conducted power",
        ),
    ),
    simulator=simulate_simple,
    forward=forward_simple,
    guard=guard,
    points=points_from_num_points,
    time_key="x",
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "A slab of thickness d: probes at num_points positions x in [0, d] record the heat flux of an exponential temperature profile.",
        _CONTROLS,
        ("heat_flux",),
        20,
        "a JSON object: x (positions) and heat_flux, strings in scientific notation",
        (
            "energy conservation",
            "heat diffuses by the heat equation",
            "flux q = -k dT/dx by finite differences",
            "T(x) = delta_T exp(-x P / (k A delta_T)), P the conducted power",
        ),
    ),
    simulator=simulate_complex,
    forward=forward_complex,
    guard=guard,
    points=points_from_num_points,
    time_key="x",
)

DEFINITIONS = (SIMPLE, COMPLEX)
