"""What several modules' definitions share: the trajectory texts (m0, m1, m2) and the hidden-law
guards that more than one module uses."""

from __future__ import annotations

from typing import Any

from etc_fast.systems._definition import Law, LawParts

__all__ = ["KINEMATICS", "TRAJECTORY_FORMAT", "errstate_guard", "pair_guard", "precheck_guard"]

_NAN = float("nan")

#: The output format of a trajectory record; ``{keys}`` lists the returned series.
TRAJECTORY_FORMAT = "a JSON object of lists (at most 20 points each): {keys}; numbers as strings in scientific notation"
#: The kinematics equations, an assisting law of every trajectory system.
KINEMATICS = "kinematics: v = v0 + a t, x = x0 + v0 t + a t^2 / 2, v^2 = v0^2 + 2 a (x - x0)"


def errstate_guard(p: LawParts) -> Law:
    """Under ``np.errstate(raise)``: an error or a non-finite value -> NaN, else ``float(value)`` (m5, m7)."""
    errstate_float = p.errstate_float

    def law(*args: Any) -> Any:
        return errstate_float(args)

    return law


def precheck_guard(p: LawParts) -> Law:
    """``ValueError`` -> NaN (a NaN-if-negative base first, where the law has one) (m4, m6)."""
    value, precheck = p.value, p.precheck

    def law(*args: Any) -> Any:
        try:
            if precheck is not None and precheck(args) < 0:
                return _NAN
            return value(args)
        except ValueError:
            return _NAN

    return law


def pair_guard(p: LawParts) -> Law:
    """0 at a non-positive distance or a zero charge or current; the law otherwise (m1, m2)."""
    value = p.value

    def law(a: Any, b: Any, distance: Any) -> Any:
        if distance <= 0 or a == 0 or b == 0:
            return 0.0
        return value((a, b, distance))

    return law
