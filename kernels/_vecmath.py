"""Vectorizable float64 elementary functions for the block loops of the program machine.

This Numba/llvmlite build has no SVML, so ``np.sin`` inside a compiled loop is one scalar libm call
per element and the loop cannot vectorize. The functions here compute ``sin cos tan asin acos atan
exp log`` from plain arithmetic, integer bit manipulation, ``sqrt`` and selects (no data-dependent
branches), so that a loop applying one of them to a row of values compiles to packed SIMD code.

Each function comes in two forms:

* a scalar core ``_sin(x)``, ..., compiled ``inline="always"``, so Numba pastes its body into the
  loop that calls it (inlining at Numba's level, not LLVM's, so it never depends on LLVM's
  inlining heuristics);
* an in-place row operation ``sin_inplace(x, m)``, ..., that applies the core to ``x[:m]``. These
  are what the program machine calls, once per instruction and block of points.

Accuracy and special values
---------------------------
Every function agrees with NumPy to within 2 ulp on finite inputs (about 1 ulp from the exact
value; the measured maxima are listed in ``tests/kernels/test_vecmath.py``), and NaN, infinities
and domain errors behave as in NumPy: ``sin(inf)``, ``asin(2)``, ``log(-1)`` are NaN, ``exp``
overflows to ``inf`` and underflows through the subnormals to ``0``, ``log(0)`` is ``-inf``, NaN
propagates, and odd functions keep the sign of zero.

``sin``, ``cos`` and ``tan`` reduce the argument by ``k pi/2`` with a four-part ``pi/2`` (three
33-bit parts, so that ``k * part`` is exact for ``k < 2**20``, and a full-precision tail) summed in
double-double arithmetic; the reduced argument is ``rh + rl`` with ``|rh| <= pi/4``. That is
accurate for ``|x| <= TRIG_MAX``; the row operations send the (rare) finite arguments above it to
libm in a second, scalar pass. ``asin``/``acos`` use ``asin(x) = pi/2 - 2 asin(sqrt((1 - x)/2))``
for ``|x| >= 1/2``; ``atan`` reduces ``|x|`` to ``|t| <= 7/16`` by ``atan(c)`` for
``c`` in ``{1/2, 1, 3/2}`` or by ``pi/2 - atan(1/x)``. The polynomials are Chebyshev fits
(``mpmath.chebyfit``, 60 digits) on the reduced intervals; each stated error is the fit's maximum
error, relative to the polynomial's own small term.

Floating-point flags
--------------------
The helpers are compiled with :data:`VEC_JIT`, whose fast-math set is only ``contract``.
Double-double range reduction computes rounding errors such as ``(a - (s - bb)) + (b - bb)`` that
are zero in real arithmetic, so ``reassoc`` would fold them away (and ``k*P1 + k*P2`` into
``k*(P1 + P2)``), destroying the reduction; ``nsz`` would let LLVM drop the sign of a zero result
(``sin(-0.0)`` is ``-0.0``); ``nnan``/``ninf`` would break the NaN/inf selects; ``afn``/``arcp``
would let LLVM replace the divisions of ``tan``/``atan`` by approximate reciprocals. ``contract``
stays on: it fuses ``a*b + c`` into one FMA, which only removes a rounding, and it makes the
residuals ``z - s*s`` and ``n - q*d`` exact. The row operations are compiled here with the same
flags because the cores are inlined at Numba's level and then take the flags of their caller; the
elementwise loops need no reassociation to vectorize. ``error_model="numpy"`` removes Numba's
zero-divisor checks, whose branches would stop vectorization.

Every function also runs as plain Python (``NUMBA_DISABLE_JIT=1``): the cores convert their
argument to ``np.float64`` so that division by zero and ``sqrt`` of a negative give IEEE results
(with NumPy warnings) rather than Python exceptions. Without a fused multiply-add there the
residual terms are less exact, so that mode is accurate to a few ulp rather than one or two.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._jit import JitOptions

__all__ = ["VEC_JIT", "TRIG_MAX", "sin_inplace", "cos_inplace", "tan_inplace", "asin_inplace",
           "acos_inplace", "atan_inplace", "exp_inplace", "log_inplace"]

VEC_JIT: JitOptions = {"cache": True, "nogil": True, "error_model": "numpy", "fastmath": {"contract"}}
"""Options of every function here (see the module notes for why the fast-math set is so small)."""

_CORE: JitOptions = {**VEC_JIT, "inline": "always"}

TRIG_MAX = 262144.0
"""Largest ``|x|`` that ``sin``/``cos``/``tan`` reduce themselves (2**18); libm takes the rest."""

_INF = np.inf
_NAN = np.nan

# x*c + _SHIFT rounds x*c to an integer k held in the low significand bits: the bits of the sum
# minus _SHIFT_BITS are k as an int64 and (sum - _SHIFT) is k as a double, for |k| < 2**51.
_SHIFT = 6755399441055744.0  # 1.5 * 2**52
_SHIFT_BITS = 0x4338000000000000
_TWO52 = 4503599627370496.0  # 2**52, to scale subnormals into the normal range
_EXP_BIAS_BITS = 1023

# pi/2 = _P1 + _P2 + _P3 + _P4 (to about 2**-150): _P1.._P3 carry 33 significant bits each.
_TWO_OVER_PI = 0.6366197723675814
_P1 = 1.5707963267341256
_P2 = 6.077100506303966e-11
_P3 = 2.0222662487111665e-21
_P4 = 8.4784276603689e-32

# hi + lo splits of constants (hi = the nearest double, lo = the rest rounded)
_PIO2_HI = 1.5707963267948966
_PIO2_LO = 6.123233995736766e-17
_PI_HI = 3.141592653589793
_PI_LO = 1.2246467991473532e-16
_ATAN_HALF_HI = 0.4636476090008061
_ATAN_HALF_LO = 2.2698777452961687e-17
_ATAN_ONE_HI = 0.7853981633974483
_ATAN_ONE_LO = 3.061616997868383e-17
_ATAN_3HALF_HI = 0.982793723247329
_ATAN_3HALF_LO = 1.3903311031230998e-17

# ln 2 = _LN2_HI + _LN2_LO with 33 significant bits in _LN2_HI, so k * _LN2_HI is exact for
# every exponent k that occurs (|k| < 1100).
_LN2_HI = 0.6931471806019545
_LN2_LO = -4.2009150726810846e-11
_LOG2E = 1.4426950408889634
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD  # bits of sqrt(1/2)

# Below these magnitudes sin, tan, asin, atan round to x itself (the next term is under half an
# ulp): passing them through keeps subnormals exact and the sign of -0.0.
_ODD_TINY = 2.0**-27

# sin r = r + r z S(z), z = r*r, |r| <= 1.001 pi/4: fit error 2.1e-17 in S.
_S0 = -0.16666666666666666
_S1 = 0.008333333333330925
_S2 = -0.00019841269836722418
_S3 = 2.755731608381636e-06
_S4 = -2.5051127944014188e-08
_S5 = 1.5917848524808262e-10

# cos r = 1 - z/2 + z**2 C(z): fit error 1.3e-18 in C.
_C0 = 0.041666666666666664
_C1 = -0.0013888888888887382
_C2 = 2.480158729874307e-05
_C3 = -2.7557317260008837e-07
_C4 = 2.0876143827993133e-09
_C5 = -1.1382456778061306e-11

# asin s = s + s z A(z), z = s*s <= 1/4: fit error 1.5e-17 in A.
_A0 = 0.16666666666666669
_A1 = 0.07499999999998433
_A2 = 0.04464285714635543
_A3 = 0.030381944138531247
_A4 = 0.02237217294214989
_A5 = 0.017352392720869973
_A6 = 0.013971212973552933
_A7 = 0.011479177415184906
_A8 = 0.01032281435018578
_A9 = 0.005457506718640358
_A10 = 0.01740087944269402
_A11 = -0.014851887071247204
_A12 = 0.028757851367421566

# atan t = t + t z T(z), z = t*t <= (7/16)**2: fit error 9.6e-17 in T.
_T0 = -0.33333333333333326
_T1 = 0.1999999999998777
_T2 = -0.1428571428314864
_T3 = 0.11111110900560475
_T4 = -0.09090900195560148
_T5 = 0.07692087348767168
_T6 = -0.06663239299107136
_T7 = 0.05847724720645106
_T8 = -0.05033942776485848
_T9 = 0.03782521866106712
_T10 = -0.017547235157290005

# exp r = 1 + r + r**2 E(r), |r| <= 1.001 ln2/2: fit error 1.4e-18 in E.
_E0 = 0.5
_E1 = 0.1666666666666667
_E2 = 0.04166666666666667
_E3 = 0.008333333333326084
_E4 = 0.0013888888888883711
_E5 = 0.0001984126987500228
_E6 = 2.480158732567746e-05
_E7 = 2.755725517000089e-06
_E8 = 2.755727347871858e-07
_E9 = 2.5105312729622103e-08
_E10 = 2.09147553258932e-09

# 2 atanh s = 2 s + s z L(z), z = s*s <= 1.001 (3 - 2 sqrt 2)**2: fit error 3.1e-16 in L.
_L0 = 0.666666666666667
_L1 = 0.3999999999989889
_L2 = 0.28571428626253836
_L3 = 0.22222211089379496
_L4 = 0.1818289243253687
_L5 = 0.15331611722055008
_L6 = 0.14617807153417325

# exp: arguments are clamped to [_EXP_LO, _EXP_HI] before reduction (the result is 0 or inf
# beyond them anyway), which keeps every exponent in the two-step scaling in range.
_EXP_LO = -746.0
_EXP_HI = 710.0


@njit(**_CORE)
def _bits(x):
    return np.float64(x).view(np.int64)


@njit(**_CORE)
def _from_bits(i):
    return np.float64(np.int64(i).view(np.float64))


@njit(**_CORE)
def _two_sum_err(a, b, s):
    """The rounding error of ``s = a + b`` (Knuth's TwoSum), exactly."""
    bb = s - a
    return (a - (s - bb)) + (b - bb)


@njit(**_CORE)
def _reduce_pio2(x):
    """``x = k pi/2 + rh + rl`` for ``|x| <= TRIG_MAX``; returns ``(rh, rl, k)``.

    ``|rh| <= pi/4 (1 + 2**-50)`` and ``|rl| <= ulp(rh)``; inputs above ``TRIG_MAX``, infinities and
    NaN are reduced as 0 (callers select their own result for those).
    """
    xc = x if np.abs(x) <= TRIG_MAX else 0.0
    t = xc * _TWO_OVER_PI + _SHIFT
    kd = t - _SHIFT
    k = _bits(t) - _SHIFT_BITS
    r1 = xc - kd * _P1  # exact: kd * _P1 is exact and r1 is small
    a2 = kd * _P2  # exact
    s = r1 - a2
    e = _two_sum_err(r1, -a2, s)
    a3 = kd * _P3  # exact
    s2 = s - a3
    e2 = _two_sum_err(s, -a3, s2)
    lo = (e + e2) - kd * _P4
    rh = s2 + lo
    rl = lo - (rh - s2)
    return rh, rl, k


@njit(**_CORE)
def _sin_cos_parts(rh, rl):
    """``sin(rh + rl) = sh + sl`` and ``cos(rh + rl) = ch + cl`` for ``|rh| <= pi/4``."""
    z = rh * rh
    sp = _S1 + z * (_S2 + z * (_S3 + z * (_S4 + z * _S5)))
    sl = rh * z * (_S0 + z * sp) + rl * (1.0 - 0.5 * z)
    cp = _C0 + z * (_C1 + z * (_C2 + z * (_C3 + z * (_C4 + z * _C5))))
    hz = 0.5 * z
    ch = 1.0 - hz
    cl = ((1.0 - ch) - hz) + (z * z * cp - rh * rl)
    return rh, sl, ch, cl


@njit(**_CORE)
def _sin(x):
    """``sin(x)`` for ``|x| <= TRIG_MAX``, infinities and NaN (NaN for those)."""
    x = np.float64(x)
    rh, rl, k = _reduce_pio2(x)
    sh, sl, ch, cl = _sin_cos_parts(rh, rl)
    v = (ch + cl) if (k & 1) != 0 else (sh + sl)
    v = -v if (k & 2) != 0 else v
    v = v if np.abs(x) <= TRIG_MAX else x - x
    return x if np.abs(x) < _ODD_TINY else v


@njit(**_CORE)
def _cos(x):
    """``cos(x)`` for ``|x| <= TRIG_MAX``, infinities and NaN (NaN for those)."""
    x = np.float64(x)
    rh, rl, k = _reduce_pio2(x)
    sh, sl, ch, cl = _sin_cos_parts(rh, rl)
    v = (sh + sl) if (k & 1) != 0 else (ch + cl)
    v = -v if ((k + 1) & 2) != 0 else v
    return v if np.abs(x) <= TRIG_MAX else x - x


@njit(**_CORE)
def _tan(x):
    """``tan(x)`` for ``|x| <= TRIG_MAX``, infinities and NaN (NaN for those).

    ``sin/cos`` (even ``k``) or ``-cos/sin`` (odd ``k``) with numerator and denominator held as
    unevaluated sums, divided once and corrected by the exact (FMA) residual.
    """
    x = np.float64(x)
    rh, rl, k = _reduce_pio2(x)
    sh, sl, ch, cl = _sin_cos_parts(rh, rl)
    odd = (k & 1) != 0
    nh = ch if odd else sh
    nl = cl if odd else sl
    dh = sh if odd else ch
    dl = sl if odd else cl
    n = nh + nl
    d = dh + dl
    q = n / d
    res = (nh - q * dh) + (nl - q * dl)
    q = q + res / d
    v = -q if odd else q
    v = v if np.abs(x) <= TRIG_MAX else x - x
    return x if np.abs(x) < _ODD_TINY else v


@njit(**_CORE)
def _asin_parts(x):
    """Shared by asin and acos: ``(a, big, s, ds, p)``.

    ``a = |x|``; for ``a < 1/2`` (``big`` false) ``s = a`` and ``asin(a) = s + s p``; otherwise
    ``s + ds = sqrt((1 - a)/2)`` (``ds`` the rounding error of the square root) and
    ``asin(a) = pi/2 - 2 (s + ds + s p)``. ``a > 1`` gives a NaN ``s``.
    """
    a = np.abs(x)
    big = a >= 0.5
    z = (0.5 - 0.5 * a) if big else a * a  # 1 - a is exact for a in [1/2, 1]
    r = np.sqrt(z)
    s = r if big else a
    ds = (z - r * r) / (r + r) if z > 0.0 else 0.0
    ds = ds if big else 0.0
    p = z * (_A0 + z * (_A1 + z * (_A2 + z * (_A3 + z * (_A4 + z * (_A5 + z * (
        _A6 + z * (_A7 + z * (_A8 + z * (_A9 + z * (_A10 + z * (_A11 + z * _A12))))))))))))
    return a, big, s, ds, p


@njit(**_CORE)
def _asin(x):
    """``asin(x)``; NaN outside ``[-1, 1]``."""
    x = np.float64(x)
    a, big, s, ds, p = _asin_parts(x)
    # big: pi/2 - 2 s as an exact sum h + e, then the small terms
    b = -2.0 * s
    h = _PIO2_HI + b
    e = _two_sum_err(_PIO2_HI, b, h)
    v_big = h + (e + (_PIO2_LO - 2.0 * (ds + s * p)))
    v = v_big if big else a + a * p
    v = -v if x < 0.0 else v
    return x if a < _ODD_TINY else v


@njit(**_CORE)
def _acos(x):
    """``acos(x)``; NaN outside ``[-1, 1]``."""
    x = np.float64(x)
    a, big, s, ds, p = _asin_parts(x)
    neg = x < 0.0
    # small:  pi/2 - x - x p;  big, x > 0:  2 s + 2 (ds + s p);  big, x < 0:  pi - that
    hi = (_PI_HI if neg else 0.0) if big else _PIO2_HI
    lo = (_PI_LO if neg else 0.0) if big else _PIO2_LO
    u = 2.0 * s if big else x
    w = 2.0 * (ds + s * p) if big else x * p
    sgn = -1.0 if (neg | (not big)) else 1.0
    b = sgn * u
    h = hi + b
    e = _two_sum_err(hi, b, h)
    return h + (e + (lo + sgn * w))


@njit(**_CORE)
def _atan(x):
    """``atan(x)``; ``+-pi/2`` at ``+-inf``."""
    x = np.float64(x)
    a = np.abs(x)
    # t = (a - c)/(1 + a c) for c in {0, 1/2, 1, 3/2}, or -1/a (c = inf); numerators are exact
    r0 = a < 0.4375
    r1 = a < 0.6875
    r2 = a < 1.1875
    r3 = a < 2.4375
    num = a if r0 else ((2.0 * a - 1.0) if r1 else ((a - 1.0) if r2 else (
        (a - 1.5) if r3 else -1.0)))
    den = 1.0 if r0 else ((2.0 + a) if r1 else ((a + 1.0) if r2 else (
        (1.0 + 1.5 * a) if r3 else a)))
    hi = 0.0 if r0 else (_ATAN_HALF_HI if r1 else (_ATAN_ONE_HI if r2 else (
        _ATAN_3HALF_HI if r3 else _PIO2_HI)))
    lo = 0.0 if r0 else (_ATAN_HALF_LO if r1 else (_ATAN_ONE_LO if r2 else (
        _ATAN_3HALF_LO if r3 else _PIO2_LO)))
    t = num / den
    z = t * t
    q = z * (_T0 + z * (_T1 + z * (_T2 + z * (_T3 + z * (_T4 + z * (_T5 + z * (
        _T6 + z * (_T7 + z * (_T8 + z * (_T9 + z * _T10))))))))))
    v = hi + (t + (t * q + lo))
    v = -v if x < 0.0 else v
    return x if a < _ODD_TINY else v


@njit(**_CORE)
def _exp(x):
    """``exp(x)``: ``inf`` above ~709.78, subnormal then ``0`` below ~-708.4, NaN kept."""
    x = np.float64(x)
    xc = x if x > _EXP_LO else _EXP_LO  # NaN -> _EXP_LO, selected away at the end
    xc = xc if xc < _EXP_HI else _EXP_HI
    t = xc * _LOG2E + _SHIFT
    kd = t - _SHIFT
    k = _bits(t) - _SHIFT_BITS
    hi = xc - kd * _LN2_HI  # exact
    lo = kd * _LN2_LO
    r = hi - lo
    e = _E0 + r * (_E1 + r * (_E2 + r * (_E3 + r * (_E4 + r * (_E5 + r * (_E6 + r * (
        _E7 + r * (_E8 + r * (_E9 + r * _E10)))))))))
    p = 1.0 + (hi + (r * r * e - lo))
    # 2**k in two normal factors (k in [-1077, 1024]): p * 2**k1 is exact, the second product
    # rounds once, into the subnormals or to inf where the result lies there
    k1 = k >> 1
    k2 = k - k1
    y = p * _from_bits((k1 + _EXP_BIAS_BITS) << 52) * _from_bits((k2 + _EXP_BIAS_BITS) << 52)
    return y if x == x else x


@njit(**_CORE)
def _log(x):
    """``log(x)``: ``-inf`` at 0, NaN below 0 and at NaN, ``inf`` at ``inf``."""
    x = np.float64(x)
    sub = x < 2.2250738585072014e-308  # subnormal (or not positive): scale up by 2**52
    xs = x * _TWO52 if sub else x
    ix = _bits(xs)
    k = (ix - _SQRT_HALF_BITS) >> 52
    m = _from_bits(ix - (k << 52))  # in [sqrt(1/2), sqrt(2))
    k = k - 52 if sub else k
    kd = _from_bits(k + _SHIFT_BITS) - _SHIFT
    f = m - 1.0
    s = f / (2.0 + f)
    z = s * s
    r = z * (_L0 + z * (_L1 + z * (_L2 + z * (_L3 + z * (_L4 + z * (_L5 + z * _L6))))))
    hfsq = 0.5 * f * f
    y = kd * _LN2_HI - ((hfsq - (s * (hfsq + r) + kd * _LN2_LO)) - f)
    special = -_INF if x == 0.0 else (x if x > 0.0 else _NAN)
    return y if ((x > 0.0) & (x < _INF)) else special


# -- row operations ----------------------------------------------------------------------------


@njit(**VEC_JIT)
def _n_beyond_trig(x, m):
    """How many of ``x[:m]`` are finite with ``|x| > TRIG_MAX``."""
    n = 0
    for i in range(m):
        v = np.abs(x[i])
        n += np.int64((v > TRIG_MAX) & (v < _INF))
    return n


@njit(**VEC_JIT)
def sin_inplace(x, m):
    """``x[:m] = sin(x[:m])``.

    Parameters
    ----------
    x : float64[>= m]
        Values, overwritten.
    m : int
        Number of leading elements to transform.
    """
    if _n_beyond_trig(x, m) == 0:
        for i in range(m):
            x[i] = _sin(x[i])
    else:
        for i in range(m):
            v = x[i]
            x[i] = np.sin(v) if np.abs(v) > TRIG_MAX else _sin(v)


@njit(**VEC_JIT)
def cos_inplace(x, m):
    """``x[:m] = cos(x[:m])`` (float64[>= m], in place)."""
    if _n_beyond_trig(x, m) == 0:
        for i in range(m):
            x[i] = _cos(x[i])
    else:
        for i in range(m):
            v = x[i]
            x[i] = np.cos(v) if np.abs(v) > TRIG_MAX else _cos(v)


@njit(**VEC_JIT)
def tan_inplace(x, m):
    """``x[:m] = tan(x[:m])`` (float64[>= m], in place)."""
    if _n_beyond_trig(x, m) == 0:
        for i in range(m):
            x[i] = _tan(x[i])
    else:
        for i in range(m):
            v = x[i]
            x[i] = np.tan(v) if np.abs(v) > TRIG_MAX else _tan(v)


@njit(**VEC_JIT)
def asin_inplace(x, m):
    """``x[:m] = arcsin(x[:m])`` (float64[>= m], in place)."""
    for i in range(m):
        x[i] = _asin(x[i])


@njit(**VEC_JIT)
def acos_inplace(x, m):
    """``x[:m] = arccos(x[:m])`` (float64[>= m], in place)."""
    for i in range(m):
        x[i] = _acos(x[i])


@njit(**VEC_JIT)
def atan_inplace(x, m):
    """``x[:m] = arctan(x[:m])`` (float64[>= m], in place)."""
    for i in range(m):
        x[i] = _atan(x[i])


@njit(**VEC_JIT)
def exp_inplace(x, m):
    """``x[:m] = exp(x[:m])`` (float64[>= m], in place)."""
    for i in range(m):
        x[i] = _exp(x[i])


@njit(**VEC_JIT)
def log_inplace(x, m):
    """``x[:m] = log(x[:m])`` (float64[>= m], in place)."""
    for i in range(m):
        x[i] = _log(x[i])
