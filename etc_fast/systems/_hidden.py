"""NewtonBench's hidden laws as scalar Python functions, with each module's guards and error handling.

Trusted side only: the simulators call these one point at a time, exactly as NewtonBench's
systems call ``LAW_REGISTRY[difficulty][version]``. What kind of number a law receives (a
Python float, a NumPy float64 from an array, an int from JSON) decides whether a division by zero
raises or gives inf, so the law is evaluated on the values as they come, by Python itself, from
the same expression text the judge sees (:data:`etc_fast.laws.LAWS`). What differs per
module is the wrapper around the expression (the facts file, ``newtonbench_facts.md`` §1):

* m0, m1, m2, m11-easy: an input guard returns ``0.0``; nothing is caught.
* m3: the guard, then ``ValueError``/``ZeroDivisionError`` -> NaN.
* m4, m6: ``ValueError`` -> NaN (m6 hard v0 first returns NaN when its base is negative).
* m5, m7, m11 medium/hard: evaluated under ``np.errstate(over/divide/invalid='raise')``;
  ``FloatingPointError`` or a non-finite value -> NaN, else ``float(value)``.
* m8: ``ValueError``/``ZeroDivisionError`` -> NaN.
* m9: ``x < 0`` -> NaN, then ``x = float(x)``; ``ValueError``/``ZeroDivisionError`` -> NaN.
* m10: errstate as m5; the value is returned only when ``> 0`` and finite, else NaN; also catches
  ``ValueError``/``ZeroDivisionError``/``OverflowError``.

Everything not caught propagates, as in NewtonBench, and becomes the experiment's error value.
The wrappers are the modules' hidden-law guards (``guard`` in each file of
:mod:`etc_fast.systems.defs`); this module compiles the expression and hands it to the guard.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from etc_fast.laws import CONSTANTS, LAW_ARGS, LAWS, NAN_IF_NEGATIVE
from etc_fast.systems._definition import Law, LawParts
from etc_fast.systems._registry import module_definitions

__all__ = ["hidden_law"]


_NAN = float("nan")
_RAISE: dict[str, Any] = {"over": "raise", "divide": "raise", "invalid": "raise", "under": "ignore"}


def hidden_law(module: str, difficulty: str, law_version: str) -> Law:
    """The NewtonBench law ``module/difficulty/law_version`` as a scalar function.

    Args:
        module: A NewtonBench module name (``"m0_gravity"``).
        difficulty: ``easy``/``medium``/``hard``.
        law_version: ``v0``/``v1``/``v2``.

    Returns:
        ``law(*args)`` taking the module's :data:`LAW_ARGS` positionally and returning what
        NewtonBench's law returns for the same values (raising what it raises).
    """
    source = LAWS[module][(difficulty, law_version)]
    code = compile(source, f"<{module} {difficulty} {law_version}>", "eval")
    names = LAW_ARGS[module]
    env = {"__builtins__": {}, "np": np, "math": math, **CONSTANTS[module]}
    precheck_src = NAN_IF_NEGATIVE.get((module, difficulty, law_version))
    precheck_code = compile(precheck_src, "<precheck>", "eval") if precheck_src else None

    def value(args: tuple[Any, ...]) -> Any:
        return eval(code, env, dict(zip(names, args)))

    def errstate_float(args: tuple[Any, ...]) -> Any:
        try:
            with np.errstate(**_RAISE):
                v = value(args)
            if not np.isfinite(v):
                return _NAN
            return float(v)
        except FloatingPointError:
            return _NAN

    def precheck(args: tuple[Any, ...]) -> Any:
        return eval(precheck_code, env, dict(zip(names, args)))

    systems = module_definitions(module)
    if not systems:  # pragma: no cover - every module with laws has definitions
        raise KeyError(f"no hidden law for module {module!r}")
    parts = LawParts(difficulty, law_version, value, errstate_float, precheck if precheck_code is not None else None)
    return systems[0].guard(parts)
