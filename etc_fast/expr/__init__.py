"""The hypothesis language: text -> postfix programs evaluated by :mod:`kernels.programs`.

A hypothesis is a Python expression over the task's variables, or a ``discovered_law`` source
with straight-line assignments. :func:`parse` compiles it without executing anything;
:meth:`Program.evaluate` and :func:`evaluate_many` run it with NumPy float64 semantics (NaN where
undefined, never raising).

>>> p = parse("C*m1*m2/r**2", ["m1", "m2", "r"])
>>> p.nuisance
('C',)
>>> float(p.evaluate([[2.0, 3.0, 2.0]])[0])
1.5
"""

from etc_fast.expr._errors import ExprError
from etc_fast.expr._functions import BARE_NAMES, FUNCTIONS, accepted_text, refusal, sympy_functions
from etc_fast.expr._numbers import CONSTANTS, EXPONENTS, LITERALS, SimpleRange, fitted_numbers
from etc_fast.expr._parse import MAX_DEPTH, MAX_LENGTH, MAX_OPS, parse
from etc_fast.expr._program import FamilyPacked, Packed, Program, evaluate_many, pack

__all__ = [
    "BARE_NAMES",
    "FUNCTIONS",
    "accepted_text",
    "refusal",
    "sympy_functions",
    "ExprError",
    "Program",
    "FamilyPacked",
    "Packed",
    "parse",
    "pack",
    "evaluate_many",
    "MAX_DEPTH",
    "MAX_LENGTH",
    "MAX_OPS",
    "SimpleRange",
    "CONSTANTS",
    "LITERALS",
    "EXPONENTS",
    "fitted_numbers",
]
