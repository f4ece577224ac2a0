"""The stack machine of :mod:`kernels.programs` on the rows of one scratch matrix (for loop kernels).

A kernel that evaluates a program many times inside its own loop (an integrator: once per step)
keeps the law's inputs and the stack in the rows of one float64 matrix ``S`` allocated once:
rows ``0 .. IN-1`` hold the inputs (the caller writes them), the stack starts at row ``IN``, and
the value is left in row ``IN``. Every instruction is a loop over ``S[row, :m]`` with row indices
as plain integers, so an evaluation creates no array views and allocates nothing. The arithmetic
is instruction for instruction that of :func:`kernels.programs._evaluate_programs` (same leaf
fusion, same small-power rule, same elementary functions), with one exception: a power with a
constant exponent outside the small-power rule is ``exp(c log x)`` on a row of positive values
(vectorized; within about 1e-14 relative of libm's ``pow``, see :func:`_general_power`).
"""

import numpy as np
from numba import njit

from kernels import _vecmath
from kernels._jit import JIT
from kernels._opcodes import (
    ABS,
    ACOS,
    ADD,
    ASIN,
    ATAN,
    ATAN2,
    CONST,
    COS,
    DEGREES,
    DIV,
    EXP,
    LOG,
    MUL,
    NEG,
    OP_ARITY,
    POW,
    RADIANS,
    SIN,
    SQRT,
    SUB,
    TAN,
    VAR,
)
from kernels._vecmath import VEC_JIT
from kernels.programs import (
    _libm_unary,
    _pow,
    power_by_multiplication,
)

__all__ = ["IN", "law_rows"]

IN = 3  # rows of law inputs; the stack starts here
_DEG_PER_RAD = 180.0 / np.pi
_RAD_PER_DEG = np.pi / 180.0


@njit(error_model="numpy", **JIT)
def _binary(op, S, t, u, m):
    """``S[t, :m] = S[t, :m] <op> S[u, :m]``."""
    if op == ADD:
        for i in range(m):
            S[t, i] = S[t, i] + S[u, i]
    elif op == SUB:
        for i in range(m):
            S[t, i] = S[t, i] - S[u, i]
    elif op == MUL:
        for i in range(m):
            S[t, i] = S[t, i] * S[u, i]
    elif op == DIV:
        for i in range(m):
            S[t, i] = S[t, i] / S[u, i]
    elif op == POW:
        for i in range(m):
            S[t, i] = _pow(S[t, i], S[u, i])
    elif op == ATAN2:
        for i in range(m):
            S[t, i] = np.arctan2(S[t, i], S[u, i])
    else:  # HYPOT
        for i in range(m):
            S[t, i] = np.hypot(S[t, i], S[u, i])


@njit(error_model="numpy", **JIT)
def _small_power(S, t, c, m):
    """``S[t, :m] **= c`` by multiplication when ``2c`` is an integer with ``|c| <= 4`` (else False).

    The rule and the special values of :func:`kernels.programs._small_power`.
    """
    if c == 0.0:
        for i in range(m):
            S[t, i] = 1.0
        return True
    a = abs(c)
    if a > 4.0 or 2.0 * a != np.floor(2.0 * a):
        return False
    n = int(a)
    half = a != n
    for i in range(m):
        S[t, i] = power_by_multiplication(S[t, i], c, n, half)
    return True


@njit(**VEC_JIT)
def _general_power(S, t, c, m):
    """``S[t, :m] **= c`` for any other constant ``c``: ``exp(c log x)`` where ``x > 0``, ``pow`` elsewhere.

    The branch-free ``exp``/``log`` of :mod:`kernels._vecmath` vectorize where libm's ``pow`` runs
    one element at a time (a committee's ``r**2.6`` cost more than the rest of its integration).
    The log's rounding is scaled by ``|c log x|``: within ``2e-16 (|c log x| + 2)`` relative of
    ``pow`` (about 1e-14 at the law inputs of NewtonBench's systems). Rows with a value ``<= 0``
    or NaN (signs, zeros, odd powers) keep ``pow`` for every element, so its special values hold.
    """
    plain = True
    for i in range(m):
        plain &= S[t, i] > 0.0
    if plain:
        for i in range(m):
            S[t, i] = _vecmath._exp(c * _vecmath._log(S[t, i]))
    else:
        for i in range(m):
            S[t, i] = _pow(S[t, i], c)


@njit(error_model="numpy", **JIT)
def _binary_const(op, S, t, c, m):
    """``S[t, :m] = S[t, :m] <op> c``."""
    if op == POW:
        if not _small_power(S, t, c, m):
            _general_power(S, t, c, m)
    elif op == ADD:
        for i in range(m):
            S[t, i] = S[t, i] + c
    elif op == SUB:
        for i in range(m):
            S[t, i] = S[t, i] - c
    elif op == MUL:
        for i in range(m):
            S[t, i] = S[t, i] * c
    elif op == DIV:
        for i in range(m):
            S[t, i] = S[t, i] / c
    elif op == ATAN2:
        for i in range(m):
            S[t, i] = np.arctan2(S[t, i], c)
    else:  # HYPOT
        for i in range(m):
            S[t, i] = np.hypot(S[t, i], c)


@njit(error_model="numpy", **JIT)
def _unary(op, S, t, m):
    """``S[t, :m] = f(S[t, :m])``."""
    if op == NEG:
        for i in range(m):
            S[t, i] = -S[t, i]
    elif op == SQRT:
        for i in range(m):
            S[t, i] = np.sqrt(S[t, i])
    elif op == ABS:
        for i in range(m):
            S[t, i] = np.abs(S[t, i])
    elif op == DEGREES:
        for i in range(m):
            S[t, i] = S[t, i] * _DEG_PER_RAD
    elif op == SIN:
        _vecmath.sin_inplace(S[t], m)
    elif op == COS:
        _vecmath.cos_inplace(S[t], m)
    elif op == TAN:
        _vecmath.tan_inplace(S[t], m)
    elif op == ASIN:
        _vecmath.asin_inplace(S[t], m)
    elif op == ACOS:
        _vecmath.acos_inplace(S[t], m)
    elif op == ATAN:
        _vecmath.atan_inplace(S[t], m)
    elif op == EXP:
        _vecmath.exp_inplace(S[t], m)
    elif op == LOG:
        _vecmath.log_inplace(S[t], m)
    elif op == RADIANS:
        for i in range(m):
            S[t, i] = S[t, i] * _RAD_PER_DEG
    else:  # the C library's functions, as the programs' machine computes them
        _libm_unary(op, S[t], m)


@njit(error_model="numpy", **JIT)
def law_rows(ops, args, consts, start, stop, c0, S, m):
    """Evaluate the program ``ops[start:stop]`` (constants from ``consts[c0]``) on ``S[:IN, :m]``.

    ``S`` is float64[IN + depth, >= m]; the value lands in ``S[IN, :m]``. The program must be
    valid (:func:`kernels.programs.check_programs`) with variables ``0 .. IN-1``.
    """
    sp = IN  # next free row
    k = start
    while k < stop:
        op = ops[k]
        a = args[k]
        fuse = sp > IN and k + 1 < stop and OP_ARITY[ops[k + 1]] == 2
        if op == VAR:
            if fuse:  # top <op> x
                _binary(ops[k + 1], S, sp - 1, a, m)
                k += 2
                continue
            for i in range(m):
                S[sp, i] = S[a, i]
            sp += 1
        elif op == CONST:
            c = consts[c0 + a]
            if fuse:  # top <op> c
                _binary_const(ops[k + 1], S, sp - 1, c, m)
                k += 2
                continue
            for i in range(m):
                S[sp, i] = c
            sp += 1
        elif OP_ARITY[op] == 2:
            _binary(op, S, sp - 2, sp - 1, m)
            sp -= 1
        else:
            _unary(op, S, sp - 1, m)
        k += 1
