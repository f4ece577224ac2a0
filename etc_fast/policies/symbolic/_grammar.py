"""Building blocks of the symbolic search: variable domains, atoms, exponents, outer transforms.

An *atom* is a positive function of one input that monomials are built from: the input itself,
or ``sin``/``cos`` of it when the input's description says it is an angle (converted with
``radians`` when the description says degrees). A *law form* is ``outer(inner)`` where ``inner`` is
a monomial, a monomial times ``exp(g * monomial)``, a sum of monomials or a ratio of sums, and
``outer`` is one of a few invertible unary transforms: identity, the powers 1/2, 2, -1 and -1/2,
``log``, the inverse trigonometric functions (their degree versions only when the output's
description says degrees) and the two statistical-physics families ``1/(exp(s) + 1)`` (logistic,
Fermi-Dirac) and ``1/(exp(s) - 1)`` (Bose-Einstein, Planck).
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
import math
from collections.abc import Callable, Mapping, Sequence
from fractions import Fraction

import numpy as np

from etc_fast.expr import EXPONENTS

__all__ = ["VariableDomain", "angle_unit_of", "Atom", "Outer", "OUTERS", "make_atoms", "exponent_options", "exponent_cost",
           "simple_exponent_values", "format_exponent"]

_TWO_PI = 2.0 * math.pi


def angle_unit_of(description: str, low: float = -_TWO_PI, high: float = _TWO_PI) -> str | None:
    """``"deg"``, ``"rad"`` or ``None``: the angle unit a quantity's description states."""
    text = description.lower()
    if "degree" in text and "celsius" not in text:
        return "deg"
    if "radian" in text:
        return "rad"
    if "angle" in text and -_TWO_PI - 1e-9 <= low and high <= _TWO_PI + 1e-9:
        return "rad"
    return None


@dataclasses.dataclass(frozen=True)
class VariableDomain:
    """Name and sampling domain of one input.

    Attributes:
        name: Variable name in the hypothesis language.
        scale: ``"log"`` or ``"linear"``.
        low: Lower end of the domain.
        high: Upper end of the domain.
    """

    name: str
    scale: str
    low: float
    high: float
    description: str = ""

    @classmethod
    def from_mapping(cls, d: Mapping) -> VariableDomain:
        """Build from a task-view variable dict (``name``, ``scale``, ``low``, ``high``, ``description``)."""
        try:
            return cls(str(d["name"]), str(d.get("scale", "log")), float(d["low"]), float(d["high"]),
                       str(d.get("description") or ""))
        except KeyError as exc:
            raise ValueError(f"variable description {dict(d)!r} lacks {exc.args[0]!r}") from None

    @property
    def angle_unit(self) -> str | None:
        """``"deg"``/``"rad"`` when the variable's description says it is an angle, else ``None``.

        Degrees only where the description says degrees; radians where it says radians, or names
        an angle without a unit and the domain lies within [-2 pi, 2 pi].
        """
        return angle_unit_of(self.description, self.low, self.high)

    def sample(self, n: int = 257) -> np.ndarray:
        """Evenly spread values over the domain (log-spaced for log scales)."""
        if self.scale == "log" and self.low > 0:
            return np.exp(np.linspace(math.log(self.low), math.log(self.high), n))
        return np.linspace(self.low, self.high, n)


@dataclasses.dataclass(frozen=True)
class Atom:
    """A function of one input: ``x``, ``sin(x)``, ``cos(x)`` (x in radians or degrees), ``log(x)``.

    The atoms of :func:`make_atoms` are non-negative on their input's domain; the signed family
    (:mod:`._signed`) also uses atoms that take both signs (with integer exponents only) and
    ``log(x)`` of positive inputs (exponent 1 only).
    """

    var: int
    name: str
    kind: str = "raw"  # raw | sin | cos | log
    degrees: bool = False

    def values(self, X: np.ndarray) -> np.ndarray:
        x = X[:, self.var]
        if self.kind == "raw":
            return x
        if self.kind == "log":
            with np.errstate(all="ignore"):
                return np.log(x)
        t = np.radians(x) if self.degrees else x
        return np.sin(t) if self.kind == "sin" else np.cos(t)

    def render(self, fn: Callable[[str], str]) -> str:
        if self.kind == "raw":
            return self.name
        if self.kind == "log":
            return f"{fn('log')}({self.name})"
        arg = f"{fn('radians')}({self.name})" if self.degrees else self.name
        return f"{fn(self.kind)}({arg})"

    @property
    def cost(self) -> float:
        if self.kind == "log":
            return 2.0
        return 0.0 if self.kind == "raw" else (2.0 if self.degrees else 1.0)

    @property
    def ident(self) -> tuple:
        """What distinguishes this atom in a law's structure."""
        return (self.var, self.kind, self.degrees)


def make_atoms(domains: Sequence[VariableDomain]) -> list[list[Atom]]:
    """Per variable, the atoms usable in monomials (each positive on the variable's domain)."""
    out = []
    for k, dom in enumerate(domains):
        atoms = []
        if dom.low >= 0:
            atoms.append(Atom(k, dom.name))
        unit = dom.angle_unit
        if unit is not None:
            xs = dom.sample()
            for kind in ("sin", "cos"):
                a = Atom(k, dom.name, kind, unit == "deg")
                v = a.values(xs[:, None].repeat(k + 1, axis=1))
                if np.all(v >= -1e-12):
                    atoms.append(a)
        out.append(atoms)
    return out


# ----------------------------------------------------------------------------------------
# Exponents
# ----------------------------------------------------------------------------------------
#: Description cost of a simple exponent by its denominator (the exponent 1 and 0 cost nothing).
_EXPONENT_COST = {1: 0.5, 2: 1.0, 3: 1.5, 4: 1.5, 5: 2.0, 10: 2.0}


def _build_simple_exponents() -> list[tuple[float, float]]:
    """``(value, cost)`` of the exponents simple in :data:`etc_fast.expr.EXPONENTS`, each at the
    cost of its smallest denominator."""
    vals: dict[float, float] = {}
    bound = int(EXPONENTS.max_abs)
    for q in EXPONENTS.denominators:
        cost = _EXPONENT_COST[q]
        for k in range(-bound * q, bound * q + 1):
            v = k / q
            key = round(v, 12)
            if key not in vals:
                vals[key] = 0.0 if k == 0 else (0.0 if v == 1 else cost)
    return sorted(vals.items())


_SIMPLE = _build_simple_exponents()
_SIMPLE_V = np.array([v for v, _ in _SIMPLE])
_SIMPLE_C = np.array([c for _, c in _SIMPLE])


def simple_exponent_values() -> list[tuple[float, float]]:
    """``(value, cost)`` of every exponent the grammar writes without a fitted digit (cost below 4)."""
    return list(_SIMPLE)


@functools.lru_cache(maxsize=4096)
def exponent_cost(p: float) -> float:
    """Description cost of exponent ``p`` (1 -> 0, integers 0.5, halves 1, thirds and quarters 1.5,
    fifths and tenths 2, any other real 4)."""
    i = int(np.argmin(np.abs(_SIMPLE_V - p)))
    return float(_SIMPLE_C[i]) if abs(_SIMPLE_V[i] - p) < 1e-9 else 4.0


def exponent_options(p_hat: float, window: float, max_options: int = 3) -> list[float]:
    """Simple exponents near a fitted one, cheapest first, plus the nearest one and ``p_hat`` itself.

    Args:
        p_hat: Fitted exponent.
        window: Half-width around ``p_hat`` in which simple values are considered.
        max_options: Most options returned.
    """
    if not np.isfinite(p_hat):
        return [0.0]
    d = np.abs(_SIMPLE_V - p_hat)
    near = np.flatnonzero(d <= window)
    order = sorted(near.tolist(), key=lambda i: (_SIMPLE_C[i] + 4.0 * d[i] / max(window, 1e-12), d[i]))
    opts = [float(_SIMPLE_V[i]) for i in order[: max_options - 1]]
    nearest = float(_SIMPLE_V[int(np.argmin(d))])
    if nearest not in opts:
        opts.append(nearest)
    if all(abs(o - p_hat) > 1e-6 for o in opts):
        opts.append(float(p_hat))
    return opts[:max_options] if len(opts) > max_options else opts


@functools.lru_cache(maxsize=4096)
def format_exponent(p: float, e_name: str = "e") -> str:
    """Render an exponent: integers bare, simple decimals as decimals, thirds as fractions, others in full."""
    if abs(p - round(p)) < 1e-9:
        return str(int(round(p)))
    fr = Fraction(p).limit_denominator(12)
    if abs(float(fr) - p) < 1e-9:
        if fr.denominator in (2, 4, 5, 8, 10):
            return repr(float(fr))
        return f"({fr.numerator}/{fr.denominator})"
    return f"{p:.12g}"


# ----------------------------------------------------------------------------------------
# Outer transforms y = outer(s)
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Outer:
    """An invertible unary transform ``y = forward(s)`` with ``s = inverse(y)`` where valid."""

    name: str
    cost: float
    forward: Callable[[np.ndarray], np.ndarray]
    inverse: Callable[[np.ndarray], np.ndarray]
    valid: Callable[[np.ndarray], bool]
    template: str  # uses {s}; function names are passed through fn()
    # False where the outer of a monomial is again a monomial (a root, a square, a reciprocal, a power):
    # only sums are fitted inside it. Every outer states it; there is no default to fall back on.
    allows_monomial: bool
    code: tuple[tuple[tuple, ...], tuple[tuple, ...]] = ((), ())
    """Postfix instructions around the inner value, ``(before, after)``: each is ``(opname,)`` or
    ``("const", value)`` with ``opname`` a key of :data:`kernels.programs.OPCODES`."""
    degrees_output: bool = False  # used only when the output's description says degrees

    def render(self, s: str, fn: Callable[[str], str]) -> str:
        names = {k: fn(k) for k in ("sqrt", "exp", "log", "acos", "asin", "atan", "degrees")}
        return self.template.format(s=s, **names)


def _rng(lo: float, hi: float) -> Callable[[np.ndarray], bool]:
    return lambda y: bool(y.size) and bool(np.all((y >= lo) & (y <= hi)))


_DEG = math.pi / 180.0
_ONE = (("const", 1.0),)
OUTERS: tuple[Outer, ...] = (
    Outer("id", 0.0, lambda s: s, lambda y: y, lambda y: True, "{s}", True),
    Outer("sqrt", 1.5, np.sqrt, lambda y: y * y, _rng(0.0, np.inf), "{sqrt}({s})", False, ((), (("sqrt",),))),
    Outer("square", 1.5, lambda s: s * s, np.sqrt, _rng(0.0, np.inf), "({s})**2", False, ((), (("const", 2.0), ("pow",)))),
    Outer("log", 2.0, np.log, np.exp, _rng(-700.0, 700.0), "{log}({s})", True, ((), (("log",),))),
    Outer("inv_exp_p1", 3.0, lambda s: 1.0 / (np.exp(s) + 1.0), lambda y: np.log(1.0 / y - 1.0), _rng(1e-300, 1.0 - 1e-16),
          "1/({exp}({s}) + 1)", True, (_ONE, (("exp",), ("const", 1.0), ("add",), ("div",)))),
    Outer("inv_exp_m1", 3.0, lambda s: 1.0 / (np.exp(s) - 1.0), lambda y: np.log(1.0 / y + 1.0), _rng(1e-300, np.inf),
          "1/({exp}({s}) - 1)", True, (_ONE, (("exp",), ("const", 1.0), ("sub",), ("div",)))),
    Outer("recip", 1.5, lambda s: 1.0 / s, lambda y: 1.0 / y, lambda y: bool(y.size) and bool(np.all(y != 0)), "1/({s})",
          False, (_ONE, (("div",),))),
    Outer("rsqrt", 2.0, lambda s: 1.0 / np.sqrt(s), lambda y: 1.0 / (y * y), _rng(1e-300, np.inf), "1/{sqrt}({s})",
          False, (_ONE, (("sqrt",), ("div",)))),
    Outer("acos_deg", 2.5, lambda s: np.degrees(np.arccos(s)), lambda y: np.cos(y * _DEG), _rng(0.0, 180.0), "{degrees}({acos}({s}))",
          True, ((), (("acos",), ("degrees",))), True),
    Outer("asin_deg", 2.5, lambda s: np.degrees(np.arcsin(s)), lambda y: np.sin(y * _DEG), _rng(-90.0, 90.0), "{degrees}({asin}({s}))",
          True, ((), (("asin",), ("degrees",))), True),
    Outer("atan_deg", 2.5, lambda s: np.degrees(np.arctan(s)), lambda y: np.tan(y * _DEG), _rng(-89.999999, 89.999999),
          "{degrees}({atan}({s}))", True, ((), (("atan",), ("degrees",))), True),
    Outer("acos", 2.5, np.arccos, np.cos, _rng(0.0, math.pi), "{acos}({s})", True, ((), (("acos",),))),
    Outer("asin", 2.5, np.arcsin, np.sin, _rng(-math.pi / 2, math.pi / 2), "{asin}({s})", True, ((), (("asin",),))),
    Outer("atan", 2.5, np.arctan, np.tan, _rng(-math.pi / 2 + 1e-9, math.pi / 2 - 1e-9), "{atan}({s})", True, ((), (("atan",),))),
)


def _snap_combos(p_hat: np.ndarray, window, max_combos: int, max_product: int = 4096,
                 max_options: int = 3) -> list[tuple[float, ...]]:
    """Exponent vectors near ``p_hat`` (each entry from :func:`exponent_options` within its window),
    simplest and closest first, at most ``max_combos``."""
    wins = np.broadcast_to(np.asarray(window, dtype=np.float64), np.shape(p_hat))  # one window per exponent
    opts = [exponent_options(float(p), float(w), max_options) for p, w in zip(p_hat, wins)]
    combos = list(itertools.product(*opts)) if np.prod([len(o) for o in opts]) <= max_product else [tuple(o[0] for o in opts)]
    if np.ndim(window) == 0:
        combos.sort(key=lambda c: (sum(exponent_cost(v) if v != 0 else 0.0 for v in c)
                                   + 8.0 * sum(abs(v - p) for v, p in zip(c, p_hat)) / max(window, 1e-12)))
    else:
        combos.sort(key=lambda c: (sum(exponent_cost(v) if v != 0 else 0.0 for v in c)
                                   + 8.0 * sum(abs(v - p) / max(float(w), 1e-12) for v, p, w in zip(c, p_hat, wins))))
    return combos[:max_combos]
