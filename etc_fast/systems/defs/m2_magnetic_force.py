"""m2_magnetic_force: a wire pushed along x by a parallel wire's field (DC: simple; AC, one period: complex).

Law use: ``F(|I1|, |I2|, |x|)`` (force per length); the acceleration is ``-F/m`` for currents of the
same sign, ``+F/m`` otherwise, and 0 when the mass or x is 0. Facts: ``newtonbench_systems.md``,
"m2_magnetic_force".
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
from etc_fast.systems._simkit import MAX_RETURNED, Noise, steps
from etc_fast.systems.defs._shared import KINEMATICS, TRAJECTORY_FORMAT, pair_guard

__all__ = ["COMPLEX", "DEFINITIONS", "SIMPLE"]

MODULE = "m2_magnetic_force"


guard = pair_guard


def _accel(i1: Any, i2: Any, mass: Any, x: Any, law: Law) -> Any:
    if mass == 0 or x == 0:
        return 0.0
    force = law(abs(i1), abs(i2), abs(x))
    return -force / mass if np.sign(i1) == np.sign(i2) else force / mass


def simulate_simple(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """1-D velocity Verlet of wire 2, the old-position acceleration recomputed each step."""
    params = {
        "mass_wire": 1.0,
        "initial_velocity": 0.0,
        "duration": 1.0,
        "time_step": 0.05,
        **kw,
    }
    i1, i2, distance = params["current1"], params["current2"], params["distance"]
    duration, dt = params["duration"], params["time_step"]
    mass, v0 = params["mass_wire"], params["initial_velocity"]
    n = steps(duration, dt)
    if n <= 0:
        return {"time": [], "position": [], "velocity": []}
    n = min(n, MAX_RETURNED)
    times, pos, vel = np.arange(n) * dt, np.zeros(n), np.zeros(n)
    pos[0], vel[0] = distance, v0
    for i in range(1, n):
        a = _accel(i1, i2, mass, pos[i - 1], law)
        new_pos = pos[i - 1] + vel[i - 1] * dt + 0.5 * a * dt**2
        vel_half = vel[i - 1] + 0.5 * a * dt
        a_new = _accel(i1, i2, mass, new_pos, law)
        pos[i], vel[i] = new_pos, vel_half + 0.5 * a_new * dt
    pos, vel = noise(pos, 1e-9), noise(vel, 1e-9)
    return {
        "time": [f"{t:.3e}" for t in times.tolist()],
        "position": [f"{p:.6e}" for p in pos.tolist()],
        "velocity": [f"{v:.6e}" for v in vel.tolist()],
    }


def simulate_complex(kw: dict[str, Any], law: Law, noise: Noise, legacy: np.random.RandomState | None) -> object:
    """One 50 Hz period in 20 points; ``I1(t_{i-1})`` at both evaluations of step i."""
    params = {
        "current1": 1.0,
        "current2": 1.0,
        "mass_wire": 0.01,
        "distance": 0.1,
        "initial_velocity": 0.0,
        **kw,
    }
    frequency, points = 50.0, 20
    period = 1.0 / frequency
    i1, i2, mass = params["current1"], params["current2"], params["mass_wire"]
    distance, v0 = params["distance"], params["initial_velocity"]
    dt = period / (points - 1)
    times = np.linspace(0, period, points)
    pos, vel = np.zeros(points), np.zeros(points)
    pos[0], vel[0] = distance, v0
    for i in range(1, points):
        i1_t = i1 * np.sin(2 * np.pi * frequency * times[i - 1])
        a = _accel(i1_t, i2, mass, pos[i - 1], law)
        new_pos = pos[i - 1] + vel[i - 1] * dt + 0.5 * a * dt**2
        vel_half = vel[i - 1] + 0.5 * a * dt
        a_new = _accel(i1_t, i2, mass, new_pos, law)
        pos[i], vel[i] = new_pos, vel_half + 0.5 * a_new * dt
    pos, vel = noise(pos, 1e-9), noise(vel, 1e-9)
    return {
        "time": [f"{t:.6e}" for t in times.tolist()],
        "position": [f"{p:.6e}" for p in pos.tolist()],
        "velocity": [f"{v:.6e}" for v in vel.tolist()],
    }


SIMPLE = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "simple_system",
        "Two long parallel wires: wire 1 is fixed, wire 2 (free to move along x) starts at x = distance; a tracker records wire 2's position and velocity.",
        (
            control("current1", None, "current in wire 1 (signed)", "log", 1e-3, 1e-1),
            control("current2", None, "current in wire 2 (signed)", "log", 1e-3, 1e-1),
            control("mass_wire", 1.0, "mass per unit length of wire 2", "log", 1e-3, 1.0),
            control("distance", None, "starting distance between the wires", "log", 1e-3, 1e-1),
            control("initial_velocity", 0.0, "initial velocity of wire 2", "linear", 0.0, 0.0, pool=False),
            control("duration", 1.0, "time to track the motion", pool=False),
            control("time_step", 0.05, "time between recorded points", "log", 0.005, 0.05),
        ),
        ("position", "velocity"),
        20,
        TRAJECTORY_FORMAT.format(keys="time, position, velocity"),
        (
            "F = m a per unit length",
            KINEMATICS,
            "currents in the same direction attract, opposite directions repel; the law takes current magnitudes",
        ),
    ),
    simulator=simulate_simple,
    forward=TrajectoryKernel(
        "m2_magnetic_force/simple_system",
        ("current1", "current2", "mass_wire", "distance", "initial_velocity", "time_step"),
    ),
    guard=guard,
    points=points_from_steps,
)

COMPLEX = SystemDefinition(
    spec=SystemSpec(
        MODULE,
        "complex_system",
        "Wire 1 carries an alternating current current1 sin(2 pi 50 t); wire 2 carries the steady current2 and moves along x; a tracker records one 50 Hz period (20 points).",
        (
            control("current1", 1.0, "amplitude of the AC current in wire 1", "log", 1e-3, 1e-1),
            control("current2", 1.0, "DC current in wire 2", "log", 1e-3, 1e-1),
            control("mass_wire", 0.01, "mass per unit length of wire 2", "log", 1e-4, 1e-1),
            control("distance", 0.1, "starting distance between the wires", "log", 1e-3, 1e-1),
            control("initial_velocity", 0.0, "initial velocity of wire 2", pool=False),
        ),
        ("position", "velocity"),
        20,
        "a JSON object of 20-point lists: time, position, velocity (strings in scientific notation)",
        (
            "F = m a per unit length",
            KINEMATICS,
            "same direction attracts, opposite repels",
            "I(t) = I0 sin(2 pi f t), f = 50 Hz; the record spans exactly one period",
        ),
    ),
    simulator=simulate_complex,
    forward=TrajectoryKernel(
        "m2_magnetic_force/complex_system",
        ("current1", "current2", "mass_wire", "distance", "initial_velocity"),
    ),
    guard=guard,
)

DEFINITIONS = (SIMPLE, COMPLEX)
