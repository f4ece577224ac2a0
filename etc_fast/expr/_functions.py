"""The elementary functions of the law language: the one table every reader of a law consults.

The parser (:func:`etc_fast.expr.parse`), the stack machine (:mod:`kernels.programs`, one opcode per
entry), a custom task's ``law:`` (:mod:`etc_fast.tasks._custom`), NewtonBench's scalar law
semantics (:mod:`etc_fast.tasks._pysem`), the structural judge (:mod:`etc_fast.evaluate._translate`)
and the symbolic policy's law comparison all read :data:`FUNCTIONS`, so a function is accepted
by all of them or by none. A name outside the table (``erf``, ``gamma``, ``floor``, ``sign``) is
refused with :func:`refusal`, which names it and lists the accepted set.

Each function's values are those of its NumPy ufunc (:attr:`ElementaryFunction.ufunc`): NaN
outside its domain (``log(-1)``, ``arccosh(0.5)``, ``arctanh(2)``), a signed infinity at a pole
(``arctanh(1)``, ``log(0)``), never an exception.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

__all__ = ["ElementaryFunction", "FUNCTIONS", "NAMES", "BARE_NAMES", "MODULE_ONLY", "MODULES", "lookup", "refusal", "accepted_text",
           "sympy_functions"]

#: Module prefixes a law may write before a function name (``np.tanh``, ``math.log``).
MODULES: tuple[str, ...] = ("math", "np", "numpy")


@dataclass(frozen=True)
class ElementaryFunction:
    """One function of the law language.

    Attributes:
        name: Canonical name: the name in a program's text and of its opcode in
            :data:`kernels.programs.OPCODES` (``"asinh"``).
        arity: Number of arguments (1, or 2 for ``atan2``, ``hypot`` and ``pow``).
        ufunc: The NumPy function whose float64 values define it.
        aliases: Other names accepted for it, bare or after a module prefix (``"arcsinh"``).
        numpy_name: Its name in NumPy (``np.<numpy_name>``).
        math_name: Its name in Python's :mod:`math`, or None where :mod:`math` has none.
        domain: Where it is real, in words (for docs and errors).
    """

    name: str
    arity: int
    ufunc: Callable
    aliases: tuple[str, ...]
    numpy_name: str
    math_name: str | None
    domain: str

    @property
    def python(self) -> str:
        """How a ``discovered_law`` source calls it: ``math.<name>`` where :mod:`math` has it, else
        ``np.<name>`` (``abs`` is the builtin)."""
        if self.name == "abs":
            return "abs"
        return f"math.{self.math_name}" if self.math_name else f"np.{self.numpy_name}"


def _f(name, arity, ufunc, aliases, numpy_name, math_name, domain) -> ElementaryFunction:
    return ElementaryFunction(name, arity, ufunc, tuple(aliases), numpy_name, math_name, domain)


#: Canonical name -> function, in the order docs list them.
FUNCTIONS: dict[str, ElementaryFunction] = {f.name: f for f in (
    _f("sin", 1, np.sin, (), "sin", "sin", "all reals"),
    _f("cos", 1, np.cos, (), "cos", "cos", "all reals"),
    _f("tan", 1, np.tan, (), "tan", "tan", "all reals"),
    _f("asin", 1, np.arcsin, ("arcsin",), "arcsin", "asin", "[-1, 1]"),
    _f("acos", 1, np.arccos, ("arccos",), "arccos", "acos", "[-1, 1]"),
    _f("atan", 1, np.arctan, ("arctan",), "arctan", "atan", "all reals"),
    _f("atan2", 2, np.arctan2, ("arctan2",), "arctan2", "atan2", "all reals (the angle of the point (x, y) "
                                                                  "for atan2(y, x))"),
    _f("sinh", 1, np.sinh, (), "sinh", "sinh", "all reals"),
    _f("cosh", 1, np.cosh, (), "cosh", "cosh", "all reals"),
    _f("tanh", 1, np.tanh, (), "tanh", "tanh", "all reals"),
    _f("asinh", 1, np.arcsinh, ("arcsinh",), "arcsinh", "asinh", "all reals"),
    _f("acosh", 1, np.arccosh, ("arccosh",), "arccosh", "acosh", "[1, inf)"),
    _f("atanh", 1, np.arctanh, ("arctanh",), "arctanh", "atanh", "(-1, 1)"),
    _f("exp", 1, np.exp, (), "exp", "exp", "all reals"),
    _f("expm1", 1, np.expm1, (), "expm1", "expm1", "all reals (exp(x) - 1)"),
    _f("log", 1, np.log, (), "log", "log", "(0, inf)"),
    _f("log10", 1, np.log10, (), "log10", "log10", "(0, inf)"),
    _f("log2", 1, np.log2, (), "log2", "log2", "(0, inf)"),
    _f("log1p", 1, np.log1p, (), "log1p", "log1p", "(-1, inf) (log(1 + x))"),
    _f("sqrt", 1, np.sqrt, (), "sqrt", "sqrt", "[0, inf)"),
    _f("cbrt", 1, np.cbrt, (), "cbrt", "cbrt", "all reals (the real cube root)"),
    _f("hypot", 2, np.hypot, (), "hypot", "hypot", "all reals (sqrt(x**2 + y**2))"),
    _f("abs", 1, np.abs, ("fabs", "absolute"), "abs", "fabs", "all reals"),
    _f("degrees", 1, np.degrees, ("rad2deg",), "degrees", "degrees", "all reals (radians to degrees)"),
    _f("radians", 1, np.radians, ("deg2rad",), "radians", "radians", "all reals (degrees to radians)"),
    _f("pow", 2, np.power, ("power",), "power", "pow", "as x**y"),
)}

_BY_NAME: dict[str, ElementaryFunction] = {}
for _fn in FUNCTIONS.values():
    for _n in (_fn.name, *_fn.aliases):
        _BY_NAME[_n] = _fn

#: Every accepted name: canonical names and aliases.
NAMES: frozenset[str] = frozenset(_BY_NAME)
#: Aliases accepted only after a module prefix (``np.power``, ``math.fabs``): written bare they
#: stay ordinary names (a law's constant may be called ``power``).
MODULE_ONLY: frozenset[str] = frozenset({"power", "fabs", "absolute", "rad2deg", "deg2rad"})
#: Names a law may call without a module prefix.
BARE_NAMES: frozenset[str] = NAMES - MODULE_ONLY


def lookup(name: str) -> ElementaryFunction | None:
    """The function a name (canonical or alias, without a module prefix) stands for, or None."""
    return _BY_NAME.get(name)


def accepted_text() -> str:
    """The accepted set in words: ``"sin, cos, ..., asin (arcsin), ..."``."""
    parts = []
    for f in FUNCTIONS.values():
        parts.append(f"{f.name} ({', '.join(f.aliases)})" if f.aliases else f.name)
    return ", ".join(parts)


def refusal(shown: str) -> str:
    """The message for a call of a function outside the table, e.g. ``refusal("np.erf")``."""
    return f"call to {shown} is not allowed: {shown} is not a function of the law language (accepted: {accepted_text()})"


def sympy_functions() -> dict[str, Callable]:
    """Canonical name -> a builder of its SymPy expression (``f(*args) -> sympy.Expr``).

    Built on each call (SymPy is imported here, on use): the judge and the symbolic policy read
    them; a test checks every table entry has one.
    """
    import sympy as sp

    builders: dict[str, Callable] = {
        "sin": sp.sin, "cos": sp.cos, "tan": sp.tan, "asin": sp.asin, "acos": sp.acos, "atan": sp.atan,
        "atan2": sp.atan2, "sinh": sp.sinh, "cosh": sp.cosh, "tanh": sp.tanh, "asinh": sp.asinh,
        "acosh": sp.acosh, "atanh": sp.atanh, "exp": sp.exp, "expm1": lambda x: sp.exp(x) - 1,
        "log": sp.log, "log10": lambda x: sp.log(x) / sp.log(10), "log2": lambda x: sp.log(x) / sp.log(2),
        "log1p": lambda x: sp.log(1 + x), "sqrt": sp.sqrt,
        # the real cube root: x**(1/3) is complex for x < 0
        "cbrt": lambda x: sp.sign(x) * sp.Abs(x) ** sp.Rational(1, 3) if not x.is_nonnegative
        else x ** sp.Rational(1, 3),
        "hypot": lambda a, b: sp.sqrt(a ** 2 + b ** 2), "abs": sp.Abs,
        "degrees": lambda x: x * 180 / sp.pi, "radians": lambda x: x * sp.pi / 180,
        "pow": lambda a, b: a ** b,
    }
    return builders
