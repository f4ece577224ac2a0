"""Simple numbers: the values a law may carry without fitted digits, in named ranges.

A law's text mixes two kinds of number. Some are part of its form (the ``2`` of ``2*k*x**2``, the
``1.5`` of ``d**1.5``, the ``1/3`` of a cube root); others are constants someone fitted to data
(``1.00227``, ``6.674e-5``). Several parts of the project have to tell them apart: the offline
agent snaps a fitted constant to a simple number when the data allow it, its grammar prices
exponents by how simple they are, its synthesis prefers the law with fewer fitted numbers, and the
noise-aware planner corrects a law's residuals for the constants its proposer fitted. They use one
definition here, with the range each needs:

A number is **simple in a range** when it is ``0`` or ``+-p/q`` with ``p >= 1`` an integer, ``q``
one of the range's :attr:`SimpleRange.denominators`, and ``|p/q| <= max_abs`` (equality within a
relative ``1e-9``, so ``0.3333333333333333`` is ``1/3``). A magnitude below ``1/q`` is never simple:
``1.04e-14`` is a fitted constant, however close it is to ``0``.

The ranges:

* :data:`CONSTANTS` (``q`` in 1, 2, 3, 4, ``|v| <= 10``): what a fitted constant may be snapped to
  and what the planner does not count as fitted;
* :data:`LITERALS` (``q`` in 1, 2, 3, 4, 5, 10, ``|v| <= 10``): the numbers the offline agent writes
  without fitted digits (its constants and its exponents, ``1.2`` included);
* :data:`EXPONENTS` (the same denominators, ``|v| <= 6``): the exponents the grammar writes as
  simple values (its cost table, :mod:`etc_fast.policies.symbolic._grammar`).
"""

from __future__ import annotations

import dataclasses
import math
import re

__all__ = ["SimpleRange", "CONSTANTS", "LITERALS", "EXPONENTS", "LITERAL", "literals", "fitted_numbers"]

#: A numeric literal in a law's text (``2``, ``0.5``, ``.5``, ``1.04e-14``), not the digits of a
#: name (``n1``, ``I_0``) nor part of an attribute (``np.e``).
LITERAL = re.compile(r"(?<![\w.])(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?(?![\w.])")

_REL_TOL = 1e-9


@dataclasses.dataclass(frozen=True)
class SimpleRange:
    """The simple numbers of one use: ``0`` and ``+-p/q`` with ``q`` in ``denominators``, ``p >= 1``
    and ``|p/q| <= max_abs``."""

    name: str
    denominators: tuple[int, ...]
    max_abs: float

    def contains(self, v: float) -> bool:
        """Whether ``v`` is simple in this range (``0`` is; a non-finite number is not)."""
        a = abs(float(v))
        if a == 0.0:
            return True
        if not math.isfinite(a) or a > self.max_abs:
            return False
        return any(round(a * q) >= 1 and abs(a * q - round(a * q)) <= _REL_TOL * a * q for q in self.denominators)


CONSTANTS = SimpleRange("constants", (1, 2, 3, 4), 10.0)
LITERALS = SimpleRange("literals", (1, 2, 3, 4, 5, 10), 10.0)
EXPONENTS = SimpleRange("exponents", (1, 2, 3, 4, 5, 10), 6.0)


def literals(text: str) -> list[float]:
    """The numeric literals of ``text``, in order (magnitudes: a sign is an operator)."""
    return [float(tok) for tok in LITERAL.findall(text)]


def fitted_numbers(text: str, simple: SimpleRange) -> int:
    """How many numeric literals of ``text`` are not simple in ``simple``: the constants it
    carries that were fitted, not chosen."""
    return sum(not simple.contains(v) for v in literals(text))
