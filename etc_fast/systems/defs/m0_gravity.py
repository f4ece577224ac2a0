"""m0_gravity: a mass falling toward a fixed mass on a line (simple) and orbiting it in a plane (complex).

Law use: the force magnitude ``F(mass1, mass2, r)`` with r the current distance; ``mass1``,
``mass2`` and ``distance`` are required. Facts: ``newtonbench_systems.md``, "m0_gravity".
"""

from __future__ import annotations

from typing import Any

import numpy as np

from etc_fast.systems._definition import (
    Law,
    LawParts,
    SystemDefinition,
    SystemSpec,
    TrajectoryKernel,
    control,
    number,
    points_from_steps,
)
from etc_fast.systems._simkit import MAX_RETURNED, Noise, e3, e6, required, steps
from etc_fast.systems.defs._shared import KINEMATICS, TRAJECTORY_FORMAT
from kernels.systems import N_STEPS

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m0_gravity"


def guard(p: LawParts) -> Law:
    """The laws return 0.0 when r <= 0 or either mass is <= 0; nothing is caught."""
    value = p.value

    def law(mass1: Any, mass2: Any, distance: Any) -> Any:
        if distance <= 0 or mass1 <= 0 or mass2 <= 0:
            return 0.0
        return value((mass1, mass2, distance))

    return law


_MASSES = (
    control("mass1", None, "mass of the fixed object at the origin", "log", 1.0, 1e3),
    control("mass2", None, "mass of the moving object", "log", 1.0, 1e3),
    control("distance", None, "starting distance of the moving object from the origin", "log", 1.0, 10.0),
)
_COLUMNS = ("mass1", "mass2", "distance", "initial_velocity", "time_step")


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """1-D velocity Verlet toward the fixed mass: ``a(x) = -sign(x) F(m1, m2, |x|) / m2``."""
    mass1, mass2, distance = required(kw, ("mass1", "mass2", "distance"))
    v0 = kw.get("initial_velocity", 0.0)
    duration, dt = kw.get("duration", 5.0), kw.get("time_step", 0.01)
    n = steps(duration, dt)
    if n <= 0:
        return {"time": [], "position": [], "velocity": []}
    n = min(n, MAX_RETURNED)
    times = np.arange(n) * dt
    pos, vel, acc = np.zeros(n), np.zeros(n), np.zeros(n)
    pos[0], vel[0] = distance, v0

    def accel(x: Any) -> Any:
        force = law(mass1, mass2, abs(x))
        force *= np.sign(x)
        return -force / mass2

    acc[0] = accel(pos[0])
    for i in range(1, n):
        new_pos = pos[i - 1] + vel[i - 1] * dt + 0.5 * acc[i - 1] * dt**2
        vel_half = vel[i - 1] + 0.5 * acc[i - 1] * dt
        a_new = accel(new_pos)
        pos[i], vel[i], acc[i] = new_pos, vel_half + 0.5 * a_new * dt, a_new
    pos, vel = noise(pos, 1e-9), noise(vel, 1e-9)
    return {
        "time": e3(times.tolist()),
        "position": e6(pos.tolist()),
        "velocity": e6(vel.tolist()),
    }


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """2-D velocity Verlet around the fixed mass: ``a = -(F(m1, m2, |r|) / m2) r / |r|`` (0 at r = 0)."""
    mass1, mass2, distance = required(kw, ("mass1", "mass2", "distance"))
    v0 = kw.get("initial_velocity", 0.0)
    duration, dt = kw.get("duration", 10.0), kw.get("time_step", 0.1)
    n = steps(duration, dt)
    if n <= 0:
        return {"time": [], "position": [], "velocity": []}
    n = min(n, MAX_RETURNED)
    times = np.arange(n) * dt
    pos, vel = np.zeros((n, 2)), np.zeros((n, 2))
    pos[0], vel[0] = np.array([distance, 0.0]), np.array([0.0, v0])
    origin = np.array([0.0, 0.0])

    def accel(p: np.ndarray) -> Any:
        r = p - origin
        d = np.linalg.norm(r)
        if d == 0:
            return np.zeros(2)
        r_hat = r / d
        force = law(mass1, mass2, d)
        _ = (
            force / mass1
        ) * r_hat  # the fixed mass's acceleration: NewtonBench computes it (0/0 raises)
        return -(force / mass2) * r_hat

    for i in range(1, n):
        a = accel(pos[i - 1])
        new_pos = pos[i - 1] + vel[i - 1] * dt + 0.5 * a * dt**2
        vel_half = vel[i - 1] + 0.5 * a * dt
        a_new = accel(new_pos)
        pos[i], vel[i] = new_pos, vel_half + 0.5 * a_new * dt
    pos, vel = noise(pos, 1e-9), noise(vel, 1e-9)
    return {
        "time": e3(times.tolist()),
        "position": [e6(p) for p in pos.tolist()],
        "velocity": [e6(v) for v in vel.tolist()],
    }


def read_complex(row: np.ndarray, output: Any, sp: SystemSpec) -> None:
    """Positions and velocities are [x, y] pairs: channels x, y, vx, vy."""
    for c, (key, axis) in enumerate((("position", 0), ("position", 1), ("velocity", 0), ("velocity", 1))):
        vals = [number(p[axis]) for p in output.get(key, [])][:N_STEPS]
        row[c, : len(vals)] = vals


SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "A 1-D track: mass1 is fixed at x = 0, mass2 starts at x = distance with initial_velocity along x, and a tracker records mass2's position and velocity over time.",
        (
            *_MASSES,
            control("initial_velocity", 0.0, "initial velocity of mass2 along x", "linear", -0.5, 0.5),
            control("duration", 5.0, "time to track the motion", pool=False),
            control("time_step", 0.01, "time between recorded points", "log", 0.01, 0.25),
        ),
        ("position", "velocity"),
        20,
        TRAJECTORY_FORMAT.format(keys="time, position, velocity"),
        (
            "Newton's second law F = m a (1-D, signed along x)",
            KINEMATICS,
            "work-energy theorem: F d = change of m v^2 / 2; mechanical energy is conserved",
        ),
    ),
    simulator=simulate_simple,
    forward=TrajectoryKernel("m0_gravity/simple_system", _COLUMNS),
    guard=guard,
    points=points_from_steps,
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "A 2-D plane: mass1 is fixed at the origin, mass2 starts at (distance, 0) with velocity (0, initial_velocity), and a tracker records mass2's position and velocity vectors over time.",
        (
            *_MASSES,
            control("initial_velocity", 0.0, "initial speed of mass2, perpendicular to the radius", "linear", 0.0, 1.0),
            control("duration", 10.0, "time to track the motion", pool=False),
            control("time_step", 0.1, "time between recorded points", "log", 0.01, 0.5),
        ),
        ("x", "y", "vx", "vy"),
        20,
        TRAJECTORY_FORMAT.format(keys="time, position [x, y], velocity [vx, vy]"),
        (
            "the force acts along the line joining the masses; F = m a with a parallel to F",
            "energy E = m v^2 / 2 + V(r) is conserved (V unknown)",
            "circular orbit: F = m v^2 / r, period T = 2 pi r / v",
            KINEMATICS,
        ),
    ),
    simulator=simulate_complex,
    forward=TrajectoryKernel("m0_gravity/complex_system", _COLUMNS),
    guard=guard,
    points=points_from_steps,
    read=read_complex,
    response={"time": ["..."], "position": [["...", "..."]], "velocity": [["...", "..."]]},
)

DEFINITIONS = (SIMPLE, COMPLEX)
