"""A seeded suite of generated laws: development tasks drawn from a stated distribution.

Each law is named ``gen-s<seed>-<index>`` (``gen-s0-0042``) and is a function of ``(seed, index)``
alone: the same name gives the same task text on every machine, and the first ``n`` laws of a seed
are the same whatever ``n`` is asked for. A law is drawn as follows (docs/guide/generated.md states the
distribution in full):

1. its class, one of :data:`CLASSES`, with the probabilities given there;
2. its number of inputs, from :data:`INPUT_WEIGHTS` restricted to counts the class can fill
   (at least the smallest core of its shapes) and renormalised;
3. a shape of the class whose core uses at most that many inputs (uniformly among those);
4. the remaining inputs as factors raised to exponents from :data:`EXPONENTS`;
5. an overall factor: a named constant (``constants:``) or an inline literal, scaled so that the
   median of ``|y|`` over the domains lies in a stated band (tiny or huge for ``tiny_huge``).

A draw whose law is finite on less than 10% of the evaluation grid (the loader's check) is drawn
again from the same random stream, so redraws are deterministic too. The result is the text of an
ordinary custom task file (docs/tasks.md), loaded by the same loader as a file, so every policy,
judge, report and replay plays it unchanged. :data:`GENERATOR_VERSION` is written into that text,
so the SHA-256 a run records for each generated task changes when the generator does, and such a
run refuses to resume rather than mix laws of two generators.

Command line::

    python -m etc_fast.tasks.generate --seed 0 --n 20 --out DIR    # write the task files
    python -m etc_fast.tasks.generate --seed 0 --n 500 --summary   # class and input counts
    python -m etc_fast.tasks.generate --rates RUN_DIR              # credited rate by class and inputs
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import hashlib
import math
import re
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "CLASSES",
    "EXPONENTS",
    "GENERATOR_VERSION",
    "INPUT_WEIGHTS",
    "MAX_INDEX",
    "MAX_SEED",
    "GeneratedLaw",
    "generate",
    "generated_law",
    "generated_names",
    "is_generated_name",
    "main",
    "parse_generated_name",
]

#: Written into every generated task's text (and so into its SHA-256). Change it whenever a draw
#: can change: runs recorded with another version then refuse to resume.
GENERATOR_VERSION = "gen-1"
#: Largest seed and largest index of a generated law.
MAX_SEED = 2**32 - 1
MAX_INDEX = 99_999
#: Laws per seed the task source ``{generated: {seed, n}}`` may ask for.
MAX_N = MAX_INDEX + 1
#: Draws tried for one law before giving up (a redraw happens when the law is finite on too little
#: of the evaluation grid; none of the first 2000 laws of seeds 0 and 1 needs more than a few).
MAX_ATTEMPTS = 64

#: (class, probability). The probabilities sum to 1.
CLASSES: tuple[tuple[str, float], ...] = (
    ("power_product", 0.16),
    ("sum_of_terms", 0.14),
    ("exp_log", 0.12),
    ("trigonometry", 0.12),
    ("inverse_trig", 0.10),
    ("difference", 0.12),
    ("root_of_squares", 0.12),
    ("tiny_huge", 0.12),
)
#: Probability of each number of inputs, before the restriction to a class's smallest core.
INPUT_WEIGHTS: dict[int, float] = {1: 0.10, 2: 0.14, 3: 0.16, 4: 0.14, 5: 0.12, 6: 0.10, 7: 0.08, 8: 0.06, 9: 0.05, 10: 0.05}
#: (exponent, probability) of an input that enters as a factor.
EXPONENTS: tuple[tuple[float, float], ...] = (
    (1.0, 0.30), (-1.0, 0.20), (2.0, 0.15), (-2.0, 0.10), (0.5, 0.08), (-0.5, 0.05), (3.0, 0.05), (1.5, 0.04),
    (-3.0, 0.03),
)
#: Probability that an overall factor or a term's coefficient is a named constant (else a literal).
P_NAMED = 0.5
#: Probability that the overall factor is negative.
P_NEGATIVE = 0.1
#: Probability that an input entering as a factor has a log-scale domain (else linear).
P_LOG = 0.5
#: Median |y| band (powers of ten) of every class but tiny_huge, and of tiny and huge outputs.
REGULAR_BAND = (-1.0, 3.0)
TINY_BAND = (-14.0, -4.0)
HUGE_BAND = (7.0, 14.0)
#: Literal overall factors tried first (kept when the law's median |y| is already within
#: :data:`KEEP_BAND` with it).
NICE_LITERALS: tuple[str, ...] = ("1", "0.5", "2", "3", "0.25", "4", "1.5", "2*pi", "4*pi")
KEEP_BAND = (-2.0, 5.0)
#: Points of the sample the scaling uses.
SAMPLE = 2048

_NAME_RE = re.compile(r"^gen-s(\d{1,10})-(\d{4,5})$")

# Quantity kinds: stem, quantity, unit ("" = dimensionless), log10 range of a domain's low end.
_KINDS: tuple[tuple[str, str, str, tuple[float, float]], ...] = (
    ("m", "mass", "kg", (-3.0, 2.0)),
    ("L", "length", "m", (-3.0, 1.0)),
    ("r", "radius", "m", (-3.0, 0.0)),
    ("h", "height", "m", (-2.0, 1.0)),
    ("w", "width", "m", (-3.0, 0.0)),
    ("t", "elapsed time", "s", (-3.0, 2.0)),
    ("v", "speed", "m/s", (-1.0, 2.0)),
    ("a", "acceleration", "m/s^2", (-1.0, 1.5)),
    ("p", "pressure", "Pa", (3.0, 5.0)),
    ("V", "volume", "m^3", (-5.0, -1.0)),
    ("q", "charge", "C", (-9.0, -5.0)),
    ("I", "current", "A", (-3.0, 0.5)),
    ("U", "voltage", "V", (-1.0, 2.0)),
    ("R", "resistance", "ohm", (0.0, 4.0)),
    ("f", "frequency", "Hz", (0.0, 4.0)),
    ("F", "force", "N", (-2.0, 2.0)),
    ("E", "energy", "J", (-3.0, 2.0)),
    ("B", "field strength", "T", (-4.0, 0.0)),
    ("k", "stiffness", "N/m", (0.0, 3.0)),
    ("rho", "density", "kg/m^3", (-1.0, 3.5)),
    ("eta", "viscosity", "Pa s", (-4.0, 0.0)),
    ("A", "area", "m^2", (-5.0, 0.0)),
    ("P", "power", "W", (-2.0, 3.0)),
    ("D", "diffusivity", "m^2/s", (-9.0, -4.0)),
    ("kap", "conductivity", "W/(m K)", (-2.0, 2.0)),
    ("s", "strain", "", (-4.0, -1.0)),
    ("mu", "friction coefficient", "", (-2.0, -0.5)),
    ("T", "temperature", "K", (1.5, 2.7)),
    ("n", "number density", "1/m^3", (18.0, 24.0)),
    ("lam", "wavelength", "m", (-7.0, -3.0)),
    ("Om", "rotation rate", "rad/s", (-1.0, 2.0)),
    ("c", "heat capacity", "J/K", (-1.0, 3.0)),
)
_OBJECTS: tuple[str, ...] = (
    "cart", "rod", "plate", "bead", "cell", "coil", "probe", "sample", "film", "tube", "drum", "vane", "shell",
    "drop", "wire", "spring", "piston", "disk", "jet", "slab", "rotor", "sphere", "gap", "chamber", "channel",
    "membrane", "filament", "puck", "bar", "ring", "flap", "bulb",
)
_PAIRS: tuple[tuple[str, str], ...] = (
    ("in", "out"), ("a", "b"), ("1", "2"), ("start", "end"), ("left", "right"), ("up", "low"), ("hot", "cold"),
)
_CONSTANT_NAMES: tuple[str, ...] = (
    "K_rig", "C_cal", "alpha_0", "beta_0", "gamma_0", "kappa_0", "chi_0", "xi_0", "zeta_0", "nu_0", "sigma_0",
    "tau_0",
)
_OUTPUTS: tuple[tuple[str, str], ...] = (
    ("Y", "the reading of the rig's gauge"), ("S", "the signal at the detector"), ("W", "the measured response"),
    ("Q", "the recorded output quantity"), ("Z", "the value the instrument reports"),
    ("G", "the gauge reading at steady state"),
)


@dataclasses.dataclass(frozen=True)
class GeneratedLaw:
    """One generated law.

    Attributes:
        name: ``gen-s<seed>-<index>`` (index zero-padded to four digits).
        seed: The suite's seed.
        index: Its place in the suite.
        task_class: One of the names of :data:`CLASSES`.
        n_inputs: Number of inputs (1 to 10).
        shape: The class's shape it was drawn from (for reading only).
        text: The custom task file text (YAML), generator version and class in its header.
        sha256: SHA-256 (hex) of ``text`` encoded as UTF-8: what a run records for the task.
    """

    name: str
    seed: int
    index: int
    task_class: str
    n_inputs: int
    shape: str
    text: str
    sha256: str


def _name(seed: int, index: int) -> str:
    return f"gen-s{seed}-{index:04d}"


def parse_generated_name(name: str) -> tuple[int, int] | None:
    """``(seed, index)`` of a generated law's name, or ``None`` when ``name`` is not one.

    Only the canonical spelling counts (``gen-s0-0042``, not ``gen-s00-42``), so one law has one
    name."""
    if not isinstance(name, str):
        return None
    m = _NAME_RE.match(name)
    if m is None:
        return None
    seed, index = int(m.group(1)), int(m.group(2))
    if seed > MAX_SEED or index > MAX_INDEX or _name(seed, index) != name:
        return None
    return seed, index


def is_generated_name(name: object) -> bool:
    """Whether ``name`` is the name of a generated law (``gen-s<seed>-<index>``)."""
    return isinstance(name, str) and parse_generated_name(name) is not None


def generated_names(seed: int, n: int) -> list[str]:
    """The names of the first ``n`` laws of ``seed``, in order.

    Raises:
        ValueError: ``seed`` or ``n`` out of range (the message gives the range).
    """
    _check_seed_n(seed, n)
    return [_name(seed, i) for i in range(n)]


def _check_seed_n(seed: Any, n: Any) -> None:
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
        raise ValueError(f"seed must be an integer from 0 to {MAX_SEED}, got {seed!r}")
    if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
        raise ValueError(f"n must be an integer from 1 to {MAX_N}, got {n!r}")


# ----------------------------------------------------------------------------------------
# Drawing
# ----------------------------------------------------------------------------------------
def _fmt(x: float, digits: int = 3) -> float:
    """``x`` rounded to ``digits`` significant figures (the number written in the task)."""
    return float(f"{x:.{digits}g}")


def _lit(x: float) -> str:
    """A number as the law's text writes it."""
    text = repr(_fmt(x))
    return f"({text})" if text.startswith("-") else text


@dataclasses.dataclass
class _Var:
    name: str
    description: str
    scale: str
    low: float
    high: float

    def sample(self, u: np.ndarray) -> np.ndarray:
        if self.scale == "log":
            return np.exp(math.log(self.low) + u * (math.log(self.high) - math.log(self.low)))
        return self.low + u * (self.high - self.low)

    def doc(self) -> dict[str, Any]:
        return {"name": self.name, "description": self.description, "scale": self.scale, "low": self.low,
                "high": self.high}


class _Draw:
    """The state of one draw: the random stream, the inputs and constants chosen so far."""

    def __init__(self, rng: np.random.Generator):
        self.rng = rng
        self.vars: list[_Var] = []
        self.constants: dict[str, float] = {}
        self.objects: list[str] = []

    # -- primitive draws (only uniform doubles, so the stream is the same on every machine) --
    def u(self) -> float:
        return float(self.rng.random())

    def uniform(self, lo: float, hi: float) -> float:
        return lo + (hi - lo) * self.u()

    def index(self, n: int) -> int:
        return min(int(self.u() * n), n - 1)

    def pick(self, items: Sequence[Any]) -> Any:
        return items[self.index(len(items))]

    def weighted(self, pairs: Sequence[tuple[Any, float]]) -> Any:
        total = sum(w for _, w in pairs)
        x = self.u() * total
        acc = 0.0
        for item, w in pairs:
            acc += w
            if x < acc:
                return item
        return pairs[-1][0]

    # -- names --
    def _taken(self) -> set[str]:
        return {v.name for v in self.vars} | set(self.constants)

    def _object(self) -> str:
        free = [o for o in _OBJECTS if o not in self.objects] or list(_OBJECTS)
        obj = self.pick(free)
        self.objects.append(obj)
        return obj

    def constant_name(self) -> str:
        free = [c for c in _CONSTANT_NAMES if c not in self._taken()]
        return self.pick(free)

    def _kind(self, stems: Sequence[str] | None = None) -> tuple[str, str, str, tuple[float, float]]:
        kinds = [k for k in _KINDS if stems is None or k[0] in stems]
        return self.pick(kinds)

    def _describe(self, quantity: str, obj: str, unit: str) -> str:
        return f"{quantity} of the {obj} in {unit}" if unit else f"{quantity} of the {obj} (dimensionless)"

    def _unique(self, stem: str, obj: str) -> str:
        name = f"{stem}_{obj}"
        k = 2
        while name in self._taken():
            name = f"{stem}_{obj}{k}"
            k += 1
        return name

    # -- inputs --
    def positive(self, stems: Sequence[str] | None = None, scale: str | None = None) -> _Var:
        """A positive input of a random kind, on a log or linear domain."""
        stem, quantity, unit, (lo_e, hi_e) = self._kind(stems)
        obj = self._object()
        scale = scale or ("log" if self.u() < P_LOG else "linear")
        low = _fmt(10 ** self.uniform(lo_e, hi_e), 2)
        if scale == "log":
            high = _fmt(low * 10 ** self.pick((1.0, 2.0, 3.0)), 2)
        else:
            high = _fmt(low * self.pick((2.0, 4.0, 5.0, 10.0)), 2)
        var = _Var(self._unique(stem, obj), self._describe(quantity, obj, unit), scale, low, high)
        self.vars.append(var)
        return var

    def like_pair(self, *, signed: bool = False, scale: str = "linear") -> tuple[_Var, _Var]:
        """Two inputs of one kind and one domain (``x_in``, ``x_out``); ``signed``: a position
        domain around zero."""
        a, b = self.pick(_PAIRS)
        if signed:
            stem, quantity, unit = self.pick((("x", "position", "m"), ("y", "offset", "m"), ("z", "elevation", "m")))
            half = _fmt(10 ** self.uniform(-2.0, 1.0), 2)
            low, high = -half, half
        else:
            stem, quantity, unit, (lo_e, hi_e) = self._kind()
            low = _fmt(10 ** self.uniform(lo_e, hi_e), 2)
            high = _fmt(low * (10 ** self.pick((1.0, 2.0)) if scale == "log" else self.pick((2.0, 3.0, 5.0))), 2)
        obj = self._object()
        pair = []
        for tag in (a, b):
            name = self._unique(f"{stem}_{tag}", obj)
            pair.append(_Var(name, f"{quantity} of the {obj} at the {tag} end" + (f" in {unit}" if unit else ""),
                             scale, low, high))
        self.vars.extend(pair)
        return pair[0], pair[1]

    def angle(self) -> tuple[_Var, str]:
        """An angle input and how the law writes it (radians, or ``radians(theta)`` for degrees)."""
        obj = self._object()
        stem = self.pick(("theta", "phi", "psi"))
        if self.u() < 0.5:
            low, high = self.pick(((0.05, 1.5), (0.1, 1.2), (0.2, 3.0)))
            var = _Var(self._unique(stem, obj), f"angle of the {obj} in radians", "linear", low, high)
            written = var.name
        else:
            low, high = self.pick(((5.0, 85.0), (10.0, 60.0), (1.0, 170.0)))
            var = _Var(self._unique(stem, obj), f"angle of the {obj} in degrees", "linear", low, high)
            written = f"radians({var.name})"
        self.vars.append(var)
        return var, written

    def coefficient(self, value: float) -> str:
        """A positive coefficient: a named constant (probability :data:`P_NAMED`) or a literal."""
        if self.u() < P_NAMED:
            name = self.constant_name()
            self.constants[name] = _fmt(value)
            return name
        return _lit(value)


def _median_abs(text: str, draw: _Draw, X: np.ndarray) -> float:
    """Median of ``|text|`` over the sample ``X`` (columns: the draw's inputs, then its constants)."""
    from etc_fast.expr import parse

    names = [v.name for v in draw.vars] + list(draw.constants)
    program = parse(text, names)
    full = np.column_stack([X] + [np.full(X.shape[0], c) for c in draw.constants.values()]) if draw.constants else X
    with np.errstate(all="ignore"):
        y = np.abs(np.asarray(program.evaluate(full), dtype=np.float64))
    y = y[np.isfinite(y) & (y > 0)]
    return float(np.median(y)) if y.size else float("nan")


def _sample(draw: _Draw) -> np.ndarray:
    U = draw.rng.random((SAMPLE, len(draw.vars)))
    return np.column_stack([v.sample(U[:, j]) for j, v in enumerate(draw.vars)])


def _product(factors: Sequence[tuple[str, float]]) -> str:
    """``a * b**2 / (c * d**0.5)`` from ``[(a, 1), (b, 2), (c, -1), (d, -0.5)]``."""

    def power(name: str, e: float) -> str:
        e = abs(e)
        if e == 1:
            return name
        return f"{name}**{int(e) if e == int(e) else e}"

    num = [power(n, e) for n, e in factors if e > 0]
    den = [power(n, e) for n, e in factors if e < 0]
    text = " * ".join(num) if num else "1"
    if den:
        text += " / " + (den[0] if len(den) == 1 else "(" + " * ".join(den) + ")")
    return text


# Shapes: each takes the draw and returns the core's text (or "" for none); ``core`` inputs each.
def _shape_none(d: _Draw) -> str:
    return ""


def _terms(d: _Draw, k: int) -> str:
    """A sum of 2 or 3 products of powers over ``k`` inputs, each term's size balanced."""
    inputs = [d.positive() for _ in range(k)]
    m = 2 if k < 3 else (2 if d.u() < 0.5 else 3)
    groups: list[list[_Var]] = [[] for _ in range(m)]
    for i, v in enumerate(inputs):
        groups[i if i < m else d.index(m)].append(v)
    if d.u() < 0.3:  # one input shared by two terms
        j = d.index(m)
        extra = d.pick([v for v in inputs if v not in groups[j]])
        groups[j].append(extra)
    X = _sample(d)
    cols = {v.name: j for j, v in enumerate(d.vars)}
    term_texts, sizes = [], []
    for g in groups:
        factors = [(v.name, d.pick((1.0, 1.0, 2.0, -1.0, 0.5))) for v in g]
        term_texts.append(_product(factors))
        with np.errstate(all="ignore"):
            vals = np.prod([np.abs(X[:, cols[n]]) ** e for n, e in factors], axis=0)
        sizes.append(float(np.median(vals)))
    parts = [term_texts[0]]
    for text, size in zip(term_texts[1:], sizes[1:], strict=True):
        coef = d.coefficient(sizes[0] / size * 10 ** d.uniform(-0.5, 0.5))
        sign = " - " if d.u() < 0.2 else " + "
        parts.append(f"{sign}{coef} * {text}")
    return "(" + "".join(parts) + ")"


def _scale_for(d: _Draw, v: _Var) -> float:
    """1 / the typical size of ``v`` (a rate constant that makes ``K * v`` of order one)."""
    return 1.0 / math.sqrt(abs(v.low * v.high)) if v.low > 0 else 1.0 / max(abs(v.low), abs(v.high))


def _exp_decay(d: _Draw) -> str:
    v = d.positive()
    return f"exp(-{d.coefficient(_scale_for(d, v) * 10 ** d.uniform(-0.3, 0.4))} * {v.name})"


def _exp_ratio(d: _Draw) -> str:
    v = d.positive()
    w = _Var(d._unique(v.name.split("_")[0] + "_ref", d._object()), "reference " + v.description, v.scale,
             _fmt(v.low * 10 ** d.uniform(-0.3, 0.3), 2), _fmt(v.high * 10 ** d.uniform(-0.3, 0.3), 2))
    d.vars.append(w)
    return f"exp(-{v.name} / {w.name})"


def _log_one_plus(d: _Draw) -> str:
    v = d.positive()
    return f"log(1 + {d.coefficient(_scale_for(d, v) * 10 ** d.uniform(-1.0, 1.0))} * {v.name})"


def _saturation(d: _Draw) -> str:
    v = d.positive()
    return f"(1 - exp(-{d.coefficient(_scale_for(d, v) * 10 ** d.uniform(-0.3, 0.4))} * {v.name}))"


def _log_ratio_const(d: _Draw) -> str:
    v = d.positive()
    return f"log({v.name} / {d.coefficient(v.low * 10 ** -d.uniform(0.3, 1.0))})"


def _trig1(d: _Draw) -> str:
    _, a = d.angle()
    return d.pick((f"sin({a})", f"cos({a})", f"sin({a})**2", f"cos({a})**2", f"(1 - cos({a}))", f"sin(2*{a})"))


def _tan(d: _Draw) -> str:
    obj = d._object()
    var = _Var(d._unique("theta", obj), f"tilt of the {obj} in radians", "linear", 0.05, _fmt(d.uniform(0.8, 1.4), 2))
    d.vars.append(var)
    return f"tan({var.name})"


def _trig2(d: _Draw) -> str:
    _, a = d.angle()
    _, b = d.angle()
    return d.pick((f"sin({a}) * cos({b})", f"cos({a} - {b})", f"sin({a}) / sin({b})"))


def _phase(d: _Draw) -> str:
    w = d.positive(stems=("Om",))
    obj = d._object()
    span = d.pick((3.0, 10.0, 30.0))
    t = _Var(d._unique("t", obj), f"time since the {obj} was released in s", "linear", _fmt(0.1 / _scale_for(d, w) / span, 2),
             _fmt(span / _scale_for(d, w), 2))
    d.vars.append(t)
    return d.pick((f"sin({w.name} * {t.name})", f"cos({w.name} * {t.name})"))


def _asin_refraction(d: _Draw) -> str:
    _, a = d.angle()
    obj = d._object()
    n1 = _Var(d._unique("n", obj), f"index ratio of the {obj} (dimensionless)", "linear", _fmt(d.uniform(0.2, 0.5), 2),
              _fmt(d.uniform(0.9, 1.6), 2))
    d.vars.append(n1)
    return f"asin({n1.name} * sin({a}))"


def _asin_ratio3(d: _Draw) -> str:
    _, a = d.angle()
    lo = _fmt(d.uniform(1.0, 1.5), 2)
    p, q = d.like_pair(scale="linear")
    for v in (p, q):
        v.low, v.high, v.description = lo, _fmt(lo * d.uniform(1.3, 2.0), 2), v.description.split(" in ")[0]
    return f"asin({p.name} * sin({a}) / {q.name})"


def _atan_ratio(d: _Draw) -> str:
    y = d.positive(stems=("h", "L", "w"))
    x = _Var(d._unique("L", d._object()), "run of the base in m", y.scale, _fmt(y.low * 10 ** d.uniform(-0.5, 0.5), 2),
             _fmt(y.high * 10 ** d.uniform(-0.5, 0.5), 2))
    if x.high <= x.low:
        x.high = _fmt(x.low * 10, 2)
    d.vars.append(x)
    return f"atan({y.name} / {x.name})"


def _atan_scaled(d: _Draw) -> str:
    v = d.positive()
    return f"atan({d.coefficient(_scale_for(d, v) * 10 ** d.uniform(-0.5, 0.5))} * {v.name})"


def _acos_ratio(d: _Draw) -> str:
    x, r = d.like_pair(scale="linear")
    r.low, r.high = x.low * 1.5, _fmt(x.high * 1.2, 2)
    r.low = _fmt(r.low, 2)
    return d.pick((f"acos({x.name} / {r.name})", f"asin({x.name} / {r.name})"))


def _diff_linear(d: _Draw) -> str:
    a, b = d.like_pair(signed=d.u() < 0.5)
    return f"({b.name} - {a.name})"


def _diff_log_ratio(d: _Draw) -> str:
    a, b = d.like_pair(scale="log")
    return f"log({b.name} / {a.name})"


def _diff_temperature(d: _Draw) -> str:
    a, b = d.like_pair(scale="linear")
    return f"({a.name} - {b.name})"


def _diff_inverse(d: _Draw) -> str:
    a, b = d.like_pair(scale=d.pick(("log", "linear")))
    return f"(1/{a.name} - 1/{b.name})"


def _diff_squares(d: _Draw) -> str:
    a, b = d.like_pair(scale="linear")
    return f"({b.name}**2 - {a.name}**2)"


def _hypot(d: _Draw) -> str:
    a = d.positive(stems=("L", "w", "h", "r"))
    b = _Var(d._unique(a.name.split("_")[0] + "_side", d._object()), "side " + a.description, a.scale,
             _fmt(a.low * 10 ** d.uniform(-0.3, 0.3), 2), _fmt(a.high * 10 ** d.uniform(-0.3, 0.3), 2))
    if b.high <= b.low:
        b.high = _fmt(b.low * 10, 2)
    d.vars.append(b)
    return f"sqrt({a.name}**2 + {b.name}**2)"


def _distance(d: _Draw, dims: int) -> str:
    parts = []
    for _ in range(dims):
        a, b = d.like_pair(signed=True)
        parts.append(f"({b.name} - {a.name})**2")
    return f"sqrt({' + '.join(parts)})"


def _lorentz_input(d: _Draw) -> str:
    obj = d._object()
    c_low = _fmt(10 ** d.uniform(1.0, 8.0), 2)
    c = _Var(d._unique("c", obj), f"signal speed in the {obj} in m/s", "linear", c_low, _fmt(c_low * 2, 2))
    v = _Var(d._unique("v", obj), f"speed of the {obj} in m/s", "linear", _fmt(c_low * 0.01, 2), _fmt(c_low * 1.5, 2))
    d.vars.extend([v, c])
    return f"1/sqrt(1 - {v.name}**2/{c.name}**2)"


def _lorentz_const(d: _Draw) -> str:
    obj = d._object()
    c0 = 10 ** d.uniform(1.0, 8.0)
    v = _Var(d._unique("v", obj), f"speed of the {obj} in m/s", "linear", _fmt(c0 * 0.01, 2), _fmt(c0 * 0.98, 2))
    d.vars.append(v)
    return f"1/sqrt(1 - {v.name}**2/{d.coefficient(c0)}**2)"


def _root_difference(d: _Draw) -> str:
    a, b = d.like_pair(scale="linear")
    a.high = _fmt(a.high * 1.5, 2)
    return f"sqrt({a.name}**2 - {b.name}**2)"


#: Per class: (shape name, inputs in the core, draw). A power product has no core: every input is a factor.
_SHAPES: dict[str, tuple[tuple[str, int, Callable[[_Draw], str]], ...]] = {
    "power_product": (("product", 0, _shape_none),),
    "sum_of_terms": (("two_inputs", 2, lambda d: _terms(d, 2)), ("three_inputs", 3, lambda d: _terms(d, 3)),
                     ("four_inputs", 4, lambda d: _terms(d, 4))),
    "exp_log": (("exp_decay", 1, _exp_decay), ("exp_ratio", 2, _exp_ratio), ("log_one_plus", 1, _log_one_plus),
                ("saturation", 1, _saturation), ("log_ratio_const", 1, _log_ratio_const)),
    "trigonometry": (("one_angle", 1, _trig1), ("tan", 1, _tan), ("two_angles", 2, _trig2), ("phase", 2, _phase)),
    "inverse_trig": (("asin_index", 2, _asin_refraction), ("asin_ratio", 3, _asin_ratio3), ("atan_ratio", 2, _atan_ratio),
                     ("atan_scaled", 1, _atan_scaled), ("arc_of_ratio", 2, _acos_ratio)),
    "difference": (("linear", 2, _diff_linear), ("log_ratio", 2, _diff_log_ratio), ("temperature", 2, _diff_temperature),
                   ("inverse", 2, _diff_inverse), ("squares", 2, _diff_squares)),
    "root_of_squares": (("hypot", 2, _hypot), ("distance_2d", 4, lambda d: _distance(d, 2)),
                        ("distance_3d", 6, lambda d: _distance(d, 3)), ("lorentz_input", 2, _lorentz_input),
                        ("lorentz_constant", 1, _lorentz_const), ("root_difference", 2, _root_difference)),
    "tiny_huge": (("product", 0, _shape_none), ("two_terms", 2, lambda d: _terms(d, 2))),
}


def class_minimum(task_class: str) -> int:
    """Fewest inputs a law of ``task_class`` has (its smallest core, and at least one input)."""
    return max(1, min(core for _, core, _ in _SHAPES[task_class]))


def _draw_law(d: _Draw, seed: int, index: int) -> tuple[dict[str, Any], str, int, str]:
    """One draw: (task document, class, inputs, shape)."""
    task_class = d.weighted(CLASSES)
    least = class_minimum(task_class)
    n = d.weighted([(k, w) for k, w in INPUT_WEIGHTS.items() if k >= least])
    shape, _, make = d.pick([s for s in _SHAPES[task_class] if s[1] <= n])
    core = make(d)
    core_names = {v.name for v in d.vars} if core else set()
    for _ in range(n - len(d.vars)):
        d.positive()
    factors = [(v.name, d.weighted(EXPONENTS)) for v in d.vars if v.name not in core_names]
    prod = _product(factors) if factors else ""
    body = " * ".join(p for p in (prod, core) if p) or "1"
    X = _sample(d)
    size = _median_abs(body, d, X)
    if not math.isfinite(size):
        raise _Redraw
    negative = d.u() < P_NEGATIVE
    band = REGULAR_BAND
    if task_class == "tiny_huge":
        band = TINY_BAND if d.u() < 0.5 else HUGE_BAND
    target = 10 ** d.uniform(*band)
    if d.u() < P_NAMED:
        name = d.constant_name()
        d.constants[name] = _fmt(-target / size if negative else target / size)
        prefix = name
    else:
        nice = d.pick(NICE_LITERALS)
        value = eval(nice, {"pi": math.pi})  # noqa: S307 - one of NICE_LITERALS
        kept = task_class != "tiny_huge" and KEEP_BAND[0] <= math.log10(value * size) <= KEEP_BAND[1]
        prefix = nice if kept else _lit(target / size)
        if negative:
            prefix = f"-{prefix}" if prefix != "1" else "-1"
    if prefix == "1":
        law = body
    elif prefix == "-1":
        law = f"-{body}"
    elif body.startswith("1 / "):
        law = f"{prefix}{body[1:]}"
    else:
        law = f"{prefix} * {body}"
    final = abs(float(eval_factor(prefix, d.constants))) * size if prefix not in ("1", "-1") else size
    out_name, out_desc = d.pick(_OUTPUTS)
    if out_name in {v.name for v in d.vars} | set(d.constants):
        out_name = out_name + "_out"
    name = _name(seed, index)
    listing = "; ".join(v.description for v in d.vars)
    doc: dict[str, Any] = {
        "name": name,
        "title": f"a bench rig ({name})",
        "description": f"A bench rig whose inputs can be set: {listing}. An instrument reads one output.",
        "output": {"name": out_name, "description": out_desc},
        "variables": [v.doc() for v in d.vars],
        "law": law,
    }
    if d.constants:
        doc["constants"] = dict(d.constants)
    if final < 1e-3:
        doc["noise_floor"] = _fmt(10 ** (math.floor(math.log10(final)) - 6), 1)
    return doc, task_class, n, shape


def eval_factor(prefix: str, constants: dict[str, float]) -> float:
    """The value of an overall factor's text (a literal, a nice literal, or a constant's name)."""
    text = prefix.lstrip("-")
    if text in constants:
        return constants[text]
    return float(eval(text, {"pi": math.pi}))  # noqa: S307 - text is one this module wrote


class _Redraw(Exception):
    """This draw cannot be used; draw again from the same stream."""


def _text(doc: dict[str, Any], seed: int, index: int, task_class: str, n: int, shape: str) -> str:
    import yaml

    header = (f"# A generated law (etc_fast.tasks.generate): generator {GENERATOR_VERSION}, seed {seed}, index {index}.\n"
              f"# class: {task_class}; inputs: {n}; shape: {shape}\n")
    return header + yaml.safe_dump(doc, sort_keys=False, width=100_000, allow_unicode=False, default_flow_style=False)


@functools.lru_cache(maxsize=4096)
def generated_law(seed: int, index: int) -> GeneratedLaw:
    """The law ``index`` of suite ``seed`` (deterministic; cached).

    Raises:
        ValueError: ``seed`` or ``index`` out of range, or no usable draw in :data:`MAX_ATTEMPTS`.
    """
    from etc_fast.tasks._custom import TaskError, load_custom_text

    _check_seed_n(seed, 1)
    if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index <= MAX_INDEX:
        raise ValueError(f"index must be an integer from 0 to {MAX_INDEX}, got {index!r}")
    rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence([seed, index])))
    for _ in range(MAX_ATTEMPTS):
        d = _Draw(rng)
        try:
            doc, task_class, n, shape = _draw_law(d, seed, index)
            text = _text(doc, seed, index, task_class, n, shape)
            load_custom_text(text, _name(seed, index), _name(seed, index))
        except (_Redraw, TaskError):
            continue
        return GeneratedLaw(_name(seed, index), seed, index, task_class, n, shape, text,
                            hashlib.sha256(text.encode("utf-8")).hexdigest())
    raise ValueError(f"{_name(seed, index)}: no usable law in {MAX_ATTEMPTS} draws")  # pragma: no cover


def law_by_name(name: str) -> GeneratedLaw:
    """The generated law called ``name``.

    Raises:
        ValueError: ``name`` is not a generated law's name.
    """
    parsed = parse_generated_name(name)
    if parsed is None:
        raise ValueError(f"{name!r} is not a generated law's name (gen-s<seed>-<index>, index of four or five digits)")
    return generated_law(*parsed)


def generate(seed: int, n: int) -> list[GeneratedLaw]:
    """The first ``n`` laws of suite ``seed``."""
    _check_seed_n(seed, n)
    return [generated_law(seed, i) for i in range(n)]


# ----------------------------------------------------------------------------------------
# Command line
# ----------------------------------------------------------------------------------------
def rates(run_dir: str | Path) -> str:
    """Credited rate of a run's generated tasks by class and by number of inputs, per configuration,
    as Markdown tables, from the run's ``trials.parquet`` (trials of other tasks are left out).

    Raises:
        FileNotFoundError: the run directory holds no trials table.
    """
    import polars as pl

    path = Path(run_dir) / "trials.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"{run_dir}: no trials.parquet (is it a run directory?)")
    df = pl.read_parquet(path, columns=["task", "configuration", "credited", "measurements"])
    df = df.filter(pl.col("task").map_elements(is_generated_name, return_dtype=pl.Boolean))
    if df.height == 0:
        return "no trials of generated tasks in this run\n"
    laws = {t: law_by_name(t) for t in df.get_column("task").unique().to_list()}
    df = df.with_columns(
        pl.col("task").replace_strict({t: g.task_class for t, g in laws.items()}, return_dtype=pl.String).alias("task_class"),
        pl.col("task").replace_strict({t: g.n_inputs for t, g in laws.items()}, return_dtype=pl.Int64).alias("n_inputs"),
        pl.col("credited").fill_null(False).cast(pl.Int64).alias("_credited"),
    )
    out = []
    for by in ("task_class", "n_inputs"):
        table = (df.group_by(["configuration", by]).agg(pl.len().alias("trials"), pl.col("_credited").sum().alias("credited"),
                                                         pl.col("measurements").mean().alias("mean_measurements"))
                 .sort(["configuration", by]))
        out.append(f"| configuration | {by} | credited | trials | rate | mean measurements |\n|---|---|---|---|---|---|")
        for r in table.iter_rows(named=True):
            mm = r["mean_measurements"]
            out.append(f"| {r['configuration']} | {r[by]} | {r['credited']} | {r['trials']} | "
                       f"{r['credited'] / r['trials']:.0%} | {'–' if mm is None else f'{mm:.1f}'} |")
        out.append("")
    return "\n".join(out)


def _summary(laws: Sequence[GeneratedLaw]) -> str:
    from collections import Counter

    classes = Counter(g.task_class for g in laws)
    inputs = Counter(g.n_inputs for g in laws)
    lines = [f"{len(laws)} laws (generator {GENERATOR_VERSION})", "class: count (share; stated probability)"]
    for name, p in CLASSES:
        lines.append(f"  {name}: {classes[name]} ({classes[name] / len(laws):.1%}; {p:.0%})")
    lines.append("inputs: count")
    for k in sorted(INPUT_WEIGHTS):
        lines.append(f"  {k}: {inputs[k]}")
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m etc_fast.tasks.generate``: write a seed's laws as task files, summarise them,
    or tabulate a run's rates by class and inputs. Bad arguments exit 2 with the reason."""
    parser = argparse.ArgumentParser(prog="python -m etc_fast.tasks.generate", description=(
        "Generated laws from a stated distribution (docs/guide/generated.md). A run config plays them with "
        "tasks: [{generated: {seed: 0, n: 20}}]."))
    parser.add_argument("--seed", type=int, default=0, help="the suite's seed (default 0)")
    parser.add_argument("--n", type=int, default=None, help="how many laws, from index 0")
    parser.add_argument("--out", default=None, help="write each law as DIR/<name>.yaml (a task file)")
    parser.add_argument("--summary", action="store_true", help="print the counts by class and by inputs")
    parser.add_argument("--rates", metavar="RUN_DIR", default=None,
                        help="print a run's credited rate on generated tasks by class and by inputs")
    args = parser.parse_args(argv)
    if args.rates is not None:
        if args.n is not None or args.out is not None or args.summary:
            parser.error("--rates takes no --n, --out or --summary")
        try:
            sys.stdout.write(rates(args.rates))
        except (FileNotFoundError, OSError, ValueError) as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.n is None:
        parser.error("--n is required (how many laws to generate)")
    try:
        _check_seed_n(args.seed, args.n)
    except ValueError as exc:
        parser.error(str(exc))
    if args.out is None and not args.summary:
        parser.error("give --out DIR (write the task files) or --summary (print counts)")
    laws = generate(args.seed, args.n)
    if args.out is not None:
        out = Path(args.out)
        if out.exists() and not out.is_dir():
            print(f"error: --out {out}: exists and is not a directory", file=sys.stderr)
            return 2
        try:
            out.mkdir(parents=True, exist_ok=True)
            for g in laws:
                (out / f"{g.name}.yaml").write_text(g.text, encoding="utf-8")
        except OSError as exc:
            print(f"error: --out {out}: {exc.strerror or exc}", file=sys.stderr)
            return 2
        print(f"wrote {len(laws)} task files to {out}")
    if args.summary:
        print(_summary(laws))
    return 0


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
