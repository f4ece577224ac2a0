"""Elementary functions written in plain arithmetic, so LLVM can inline and vectorize them.

This Numba/llvmlite build has no SVML: a ``math.log1p`` inside a loop is a scalar libm call per
element and keeps the loop from vectorizing. :func:`log1p_nonneg` computes the same function from
bit manipulation, two divisions and a polynomial; once inlined into a loop body it becomes packed SIMD
code.

Floating-point flags
--------------------
The helpers here are compiled with :data:`MATH_JIT`, whose fast-math set leaves out ``reassoc``
(and ``afn``/``arcp``, which buy nothing here). The correction term ``x - ((1 + x) - 1)`` of
``log1p`` is zero in real arithmetic, so any reassociating optimizer folds it away and ``log1p``
loses all accuracy for small ``x``; the ``hi``/``lo`` split of ``k ln 2`` relies on evaluation order
the same way. Fast-math flags live on each LLVM instruction, so after LLVM inlines a helper into a
kernel compiled with the looser :data:`kernels._jit.JIT` set, the helper's instructions keep their
stricter flags while the kernel's own reductions may still be reassociated (and vectorized).
``contract`` stays on: fusing a multiply and an add into one FMA only removes a rounding.
``error_model="numpy"`` drops the zero-divisor checks Numba otherwise places before each division
(the divisors here are never zero); those checks are branches that stop vectorization.

Every helper also runs as plain Python (``NUMBA_DISABLE_JIT=1``): bit views go through NumPy scalars
and the float arithmetic through Python floats, which give the same results without warnings.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._jit import JitOptions

__all__ = ["MATH_JIT", "log1p_nonneg"]

MATH_JIT: JitOptions = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": {"nsz", "contract"}}

# ln 2 split so that k * _LN2_HI is exact for every binary exponent k (|k| < 2**20): _LN2_HI is
# ln 2 rounded to double with its 20 low significand bits cleared (0x3FE62E42FEF00000), _LN2_LO is
# ln 2 - _LN2_HI rounded to double.
_LN2_HI = 0.6931471804855391
_LN2_LO = 7.440617110012397e-11

# Bits of sqrt(1/2) (0x3FE6A09E667F3BCD): subtracting them before taking the exponent field puts the
# reduced argument in [sqrt(1/2), sqrt(2)).
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD
_TWO52 = 4503599627370496.0  # 2**52
_TWO52_BITS = 0x4330000000000000  # its bits; adding |k| < 2**51 to them gives the double 2**52 + k

# P(z), z = s**2, with 2 atanh(s) = 2 s + s z P(z) on z in [0, (3 - 2 sqrt 2)**2]: the degree-6
# Chebyshev fit (mpmath.chebyfit, 50 digits) of P(z) = (2 atanh(sqrt z) / sqrt z - 2) / z, relative
# error 4.7e-16 in P, i.e. below 5e-18 relative in the logarithm (P's term is under 1% of it).
_P0 = 0.666666666666667
_P1 = 0.39999999999899505
_P2 = 0.28571428625975487
_P3 = 0.2222221113479508
_P4 = 0.18182889125261723
_P5 = 0.15331721600556042
_P6 = 0.14616449685043406


@njit(**MATH_JIT)
def log1p_nonneg(x):
    """``log(1 + x)`` for ``x >= 0``, ``+inf`` or NaN, in branch-free arithmetic.

    Parameters
    ----------
    x : float64
        Non-negative value (``-0.0``, subnormals, ``+inf`` and NaN allowed; negative finite values
        are outside the contract).

    Returns
    -------
    float64
        ``log1p(x)`` within about one ulp; ``x`` itself when ``x`` is ``+inf`` or NaN.

    Notes
    -----
    ``u = 1 + x`` is written ``u = 2**k m`` with ``m`` in ``[sqrt(1/2), sqrt(2))`` by integer
    arithmetic on its bits. With ``f = m - 1`` and ``s = f / (2 + f)``,
    ``log m = 2 atanh(s) = f - f**2/2 + s (f**2/2 + s**2 P(s**2))``, the form that keeps the large
    terms exact. The rounding of ``u`` is undone to first order by adding ``(x - (u - 1)) / u``, so
    small ``x`` keep full relative accuracy. Inputs that are ``+inf`` or NaN are passed through by a
    final select, so the function is a straight line of arithmetic that vectorizes once inlined.
    """
    xf = float(x)
    u = 1.0 + xf
    ix = np.float64(u).view(np.int64)
    k = (ix - _SQRT_HALF_BITS) >> 52
    m = float(np.int64(ix - (k << 52)).view(np.float64))
    # float(k) through the bits of 2**52 + k: integer add and a float subtract, which vectorize on
    # every x86-64 level (a packed int64 -> float64 conversion needs AVX-512DQ)
    kd = float(np.int64(k + _TWO52_BITS).view(np.float64)) - _TWO52
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    r = z * (_P0 + z * (_P1 + z * (_P2 + z * (_P3 + z * (_P4 + z * (_P5 + z * _P6))))))
    hfsq = 0.5 * f * f
    c = (xf - (u - 1.0)) / u  # what rounding 1 + x lost, relative to u
    y = kd * _LN2_HI - ((hfsq - (s * (hfsq + r) + (kd * _LN2_LO + c))) - f)
    return y if u < np.inf else u
