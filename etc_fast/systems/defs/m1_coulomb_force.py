"""m1_coulomb_force: a charge pushed along a line by a fixed charge, both decaying over time.

Law use: the magnitude ``F(|q1(t)|, |q2(t)|, |x|)`` with ``q1(t) = q1 exp(-t/10)`` and
``q2(t) = q2 exp(-t/5)``; the sign comes from the product of the charges. The simple system records
the moving charge's velocity, the complex one its kinetic energy. Facts:
``newtonbench_systems.md``, "m1_coulomb_force".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from etc_fast.systems._definition import (
    Law,
    SystemDefinition,
    SystemSpec,
    TrajectoryKernel,
    control,
    points_from_steps,
)
from etc_fast.systems._simkit import MAX_RETURNED, Noise, e3, e6, steps
from etc_fast.systems.defs._shared import TRAJECTORY_FORMAT, pair_guard

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m1_coulomb_force"


guard = pair_guard


def _run(kw: dict[str, Any], law: Law, noise: Noise, *, energy: bool) -> object:
    """Semi-implicit Euler, the force at the old position and the new time."""
    q1, q2, distance = kw.get("q1", 1.0), kw.get("q2", 1.0), kw.get("distance", 1.0)
    kw.get("m1", 1.0)  # read, never used (NewtonBench)
    m2 = kw.get("m2", 1.0)
    duration, dt = (
        (kw.get("duration", 10.0), kw.get("time_step", 0.1))
        if energy
        else (
            kw.get("duration", 5.0),
            kw.get("time_step", 0.01),
        )
    )
    n = steps(duration, dt)
    if n <= 0:
        empty: dict[str, list[str]] = {"time": [], "position": [], "velocity": []}
        return {**empty, "kinetic_energy": []} if energy else empty
    n = min(n, MAX_RETURNED)
    times = np.arange(n) * dt
    pos, vel, ke = np.zeros(n), np.zeros(n), np.zeros(n)
    pos[0], vel[0] = distance, 0.0
    for i, t in enumerate(times):
        pos[i] = pos[i - 1] if i > 0 else distance
        vel[i] = vel[i - 1] if i > 0 else 0.0
        q1_t = q1 * np.exp(-t / 10.0)
        q2_t = q2 * np.exp(-t / 5.0)
        force = law(abs(q1_t), abs(q2_t), abs(pos[i]))
        a = force * (1 if q1_t * q2_t > 0 else -1) / m2
        if i > 0:
            vel[i] = vel[i - 1] + a * dt
            pos[i] = pos[i - 1] + vel[i] * dt
        if energy:
            ke[i] = 0.5 * m2 * (vel[i] ** 2)
    if energy:
        return {
            "time": e3(times.tolist()),
            "kinetic_energy": e6(noise(ke, 1e-9).tolist()),
        }
    return {"time": e3(times.tolist()), "velocity": e6(noise(vel, 1e-9).tolist())}


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """NewtonBench's simple system: the moving charge's velocity over time (see ``_run``).

    ``kw`` holds the requested controls (defaults filled in here), ``law`` the force law and ``noise`` the
    reading noise; ``legacy`` (NewtonBench's global generator) is not used by this system.
    """
    return _run(kw, law, noise, energy=False)


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """NewtonBench's complex system: the moving charge's kinetic energy over time (see ``_run``).

    Arguments as :func:`simulate_simple`.
    """
    return _run(kw, law, noise, energy=True)


_CHARGES = (
    control("q1", 1.0, "charge of the fixed particle (signed)", "log", 0.1, 10.0),
    control("q2", 1.0, "charge of the moving particle (signed)", "log", 0.1, 10.0),
    control("m1", 1.0, "mass of the first particle", pool=False),
    control("m2", 1.0, "mass of the moving particle", "log", 0.1, 10.0),
    control("distance", 1.0, "starting distance between the charges", "log", 0.1, 10.0),
)


def _spec(system: str, duration: float, time_step: float, high: float, channel: str, recorded: str,
          extra: tuple[str, ...]) -> SystemSpec:
    return SystemSpec(
        MODULE,
        system,
        "Two charges on a line: the charges decay over time as q(t) = q(0) exp(-t / rate); the second charge starts at rest at x = distance and a tracker records its "
        + recorded
        + " over time.",
        (
            *_CHARGES,
            control("duration", duration, "time to track the motion", pool=False),
            control("time_step", time_step, "time between recorded points", "log", 0.01, high),
        ),
        (channel,),
        20,
        TRAJECTORY_FORMAT.format(keys=f"time, {channel}"),
        (
            "motion along x only; F = m a",
            "v = v0 + a t, x = x0 + v t",
            "the sign of q1 q2 decides repulsion or attraction",
            "each charge decays as q(t) = q(0) exp(-t / rate)",
            *extra,
        ),
    )


_COLUMNS = ("q1", "q2", "m2", "distance", "time_step")

SIMPLE = SystemDefinition(
    spec=_spec("simple_system", 5.0, 0.01, 0.25, "velocity", "velocity", ()),
    simulator=simulate_simple,
    forward=TrajectoryKernel("m1_coulomb_force/simple_system", _COLUMNS),
    guard=guard,
    points=points_from_steps,
)

COMPLEX = SystemDefinition(
    spec=_spec("complex_system", 10.0, 0.1, 0.5, "kinetic_energy", "kinetic energy", ("kinetic energy KE = m v^2 / 2",)),
    simulator=simulate_complex,
    forward=TrajectoryKernel("m1_coulomb_force/complex_system", _COLUMNS),
    guard=guard,
    points=points_from_steps,
)

DEFINITIONS = (SIMPLE, COMPLEX)
