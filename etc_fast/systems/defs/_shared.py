"""Texts the trajectory modules' specs share (m0, m1, m2)."""

from __future__ import annotations

__all__ = ["KINEMATICS", "TRAJECTORY_FORMAT"]

#: The output format of a trajectory record; ``{keys}`` lists the returned series.
TRAJECTORY_FORMAT = "a JSON object of lists (at most 20 points each): {keys}; numbers as strings in scientific notation"
#: The kinematics equations, an assisting law of every trajectory system.
KINEMATICS = "kinematics: v = v0 + a t, x = x0 + v0 t + a t^2 / 2, v^2 = v0^2 + 2 a (x - x0)"
