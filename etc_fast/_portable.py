"""Arithmetic that gives the same bits on every CPU and every supported NumPy version.

NumPy's vectorized ``exp``/``log``/``power`` take different code paths on AVX-512, AVX2 and ARM64
(and between NumPy releases), so their results may differ in the last bits from machine to machine.
The evaluation grids and candidate pools are part of a run's identity, so they are built here only
from operations IEEE 754 rounds exactly: integer generator output, ``+``, ``-``, ``*``, ``/``,
``rint``, ``ldexp`` and comparisons, each done as a separate NumPy ufunc (no fused multiply-add),
plus Python's ``decimal`` module (a software library, correctly rounded) for the few scalar
logarithms of domain bounds.

:func:`portable_exp` is within 1 ulp of the correctly rounded ``exp`` (checked against ``decimal``
in the tests); what matters here is not the last ulp but that it is the same ulp everywhere.
"""

from __future__ import annotations

from decimal import Context, Decimal
from fractions import Fraction
from math import factorial

import numpy as np

__all__ = ["portable_exp", "exact_log", "unit_doubles", "log_uniform", "linear_uniform"]

# ln 2 split in two: _LN2_HI keeps 32 significant bits, so k * _LN2_HI is exact for |k| < 2**21.
_LN2_HI = 0.6931471803691238
_LN2_LO = 1.9082149292705877e-10
_INV_LN2 = float.fromhex("0x1.71547652b82fep+0")
# Taylor coefficients 1/k!, k = 0..13: on |r| <= ln(2)/2 the remainder is below 5e-18.
_EXP_COEF = tuple(float(Fraction(1, factorial(k))) for k in range(14))
_DECIMAL = Context(prec=40)
_TWO_M53 = 2.0**-53


def portable_exp(x: np.ndarray) -> np.ndarray:
    """``exp(x)`` from ``+``, ``-``, ``*``, ``rint`` and ``ldexp`` only: the same bits on every machine.

    For ``|x| < 700``; within 1 ulp of the correctly rounded value.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.size and not np.all(np.abs(x) < 700.0):
        raise ValueError("portable_exp: arguments must satisfy |x| < 700")
    k = np.rint(x * _INV_LN2)
    r = (x - k * _LN2_HI) - k * _LN2_LO
    p = np.full_like(r, _EXP_COEF[-1])
    for c in _EXP_COEF[-2::-1]:  # Horner, one rounding per step
        p = p * r
        p = p + c
    return np.ldexp(p, k.astype(np.int32))


def exact_log(v: float) -> float:
    """Natural logarithm of a positive float, correctly rounded (software ``decimal``, 40 digits)."""
    if not v > 0:
        raise ValueError(f"exact_log: argument must be positive, got {v!r}")
    return float(Decimal(float(v)).ln(_DECIMAL))


def unit_doubles(bitgen: np.random.PCG64, n: int) -> np.ndarray:
    """``n`` doubles in [0, 1) from a bit generator's raw 64-bit output: ``(raw >> 11) * 2**-53``.

    Raw output of a NumPy bit generator is stable across NumPy versions (the Generator methods built
    on it are not promised to be); this is the same mapping ``Generator.random`` uses.
    """
    raw = bitgen.random_raw(int(n))
    return (raw >> np.uint64(11)).astype(np.float64) * _TWO_M53


def log_uniform(u: np.ndarray, low: float, high: float) -> np.ndarray:
    """Map ``u`` in [0, 1] to ``exp(ln a + u (ln b - ln a))``, clipped to ``[low, high]``."""
    la, lb = exact_log(low), exact_log(high)
    t = np.asarray(u, dtype=np.float64) * (lb - la)
    x = portable_exp(t + la)
    return np.minimum(np.maximum(x, low), high)


def linear_uniform(u: np.ndarray, low: float, high: float) -> np.ndarray:
    """Map ``u`` in [0, 1] to ``a + u (b - a)``, clipped to ``[low, high]``."""
    t = np.asarray(u, dtype=np.float64) * (float(high) - float(low))
    return np.minimum(np.maximum(t + low, low), high)
