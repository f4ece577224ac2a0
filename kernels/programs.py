"""Stack-machine evaluation of many compiled hypothesis programs over many points.

A *program* is a postfix sequence of integer opcodes with one integer argument each. Leaf opcodes push a value
(a column of ``X`` or a constant); unary opcodes replace the top of the stack; binary opcodes pop two values and
push one. A valid program leaves exactly one value. Many programs are packed into flat arrays so that one kernel
call evaluates a whole committee:

``ops[prog_start[p] : prog_start[p] + prog_len[p]]`` are the opcodes of program ``p``, ``args`` runs alongside,
and a ``CONST`` argument ``a`` of program ``p`` reads ``consts[const_start[p] + a]``.

Arithmetic follows NumPy float64 elementwise semantics: the value is NaN where an operation is undefined
(``log`` of a negative number, ``sqrt(-1)``, ``acos(2)``, a negative base to a fractional power), division by
zero gives a signed infinity or NaN, and nothing ever raises. ``sin cos tan asin acos atan exp log`` come from
:mod:`kernels._vecmath` (branch-free versions that vectorize, within 2 ulp of NumPy's, with NumPy's special
values), ``sqrt`` and ``abs`` are hardware instructions, and general powers, ``sinh cosh tanh asinh acosh atanh
expm1 log10 log2 log1p cbrt`` and the binary ``atan2`` (``atan2(y, x)``) and ``hypot`` call the C library point
by point (within a few ulp of NumPy's). The functions of the hypothesis language and their opcodes are listed
once, in :mod:`etc_fast.expr._functions`.
"""

import numpy as np
from numba import config as numba_config
from numba import njit

from kernels import _opcodes as _op
from kernels import _vecmath
from kernels._checks import as_packed_programs as _coerce  # the name other modules import
from kernels._checks import check_points_first, named_errors
from kernels._jit import JIT

__all__ = ["evaluate_programs", "check_programs", "OPCODES", "OP_ARITY"]

OPCODES, OP_ARITY = _op.OPCODES, _op.OP_ARITY  # re-exported: the names other code reads

_BLOCK = 1024  # points per block: a stack level of one block is 8 KiB, so shallow stacks stay in L1

_DEG_PER_RAD = 180.0 / np.pi  # 180/pi and pi/180 exactly as np.degrees / np.radians multiply by them
_RAD_PER_DEG = np.pi / 180.0


@njit(**JIT)
def _check_programs(ops, args, n_consts, prog_start, prog_len, const_start, n_total_consts, n_vars):
    """Validate packed programs and measure the stack depth they need.

    Parameters
    ----------
    ops, args : int64[L]
        Packed opcodes and their arguments.
    n_consts : int64[P]
        Number of constants owned by each program.
    prog_start, prog_len, const_start : int64[P]
        Offsets and lengths of each program in ``ops``/``args`` and in the constant table.
    n_total_consts : int
        Length of the packed constant table.
    n_vars : int
        Number of columns of ``X``.

    Returns
    -------
    code : int
        0 when every program is valid; otherwise an error code (see :func:`check_programs`).
    where_p : int
        The offending program (or -1).
    where_k : int
        The offending instruction inside that program (or -1).
    max_depth : int
        The largest stack depth any program reaches (at least 1).
    """
    n_prog = prog_start.shape[0]
    n_ops = ops.shape[0]
    max_depth = 1
    for p in range(n_prog):
        start = prog_start[p]
        length = prog_len[p]
        if length <= 0:
            return 1, p, -1, max_depth
        if start < 0 or start + length > n_ops:
            return 2, p, -1, max_depth
        c0 = const_start[p]
        nc = n_consts[p]
        if nc < 0 or c0 < 0 or c0 + nc > n_total_consts:
            return 3, p, -1, max_depth
        depth = 0
        for k in range(length):
            op = ops[start + k]
            a = args[start + k]
            if op < 0 or op >= _op.N_OPCODES:
                return 4, p, k, max_depth
            if op == _op.VAR:
                if a < 0 or a >= n_vars:
                    return 5, p, k, max_depth
                depth += 1
            elif op == _op.CONST:
                if a < 0 or a >= nc:
                    return 6, p, k, max_depth
                depth += 1
            else:
                need = _op.OP_ARITY[op]
                if depth < need:
                    return 7, p, k, max_depth
                depth -= need - 1
            if depth > max_depth:
                max_depth = depth
        if depth != 1:
            return 8, p, length - 1, max_depth
    return 0, -1, -1, max_depth




@njit(error_model="numpy", **JIT)
def _pow(x, y):
    """``x**y`` as C99 ``pow`` and NumPy's array loops.

    ``-0.0`` and ``-inf`` to a non-integer power are spelled out: NumPy's scalar path (used when
    the JIT is disabled) returns ``-0.0`` and NaN there, while ``pow`` gives ``+0`` or ``+inf``.
    """
    if (x == 0.0 or x == -np.inf) and y != np.floor(y) and y == y:
        return np.inf if (y > 0.0) == (x != 0.0) else 0.0
    return np.power(x, y)


@njit(error_model="numpy", **JIT)
def _binary(op, left, right, m):
    """``left[:m] = left[:m] <op> right[:m]`` for a binary opcode."""
    if op == _op.ADD:
        for i in range(m):
            left[i] = left[i] + right[i]
    elif op == _op.SUB:
        for i in range(m):
            left[i] = left[i] - right[i]
    elif op == _op.MUL:
        for i in range(m):
            left[i] = left[i] * right[i]
    elif op == _op.DIV:
        for i in range(m):
            left[i] = left[i] / right[i]
    elif op == _op.POW:
        for i in range(m):
            left[i] = _pow(left[i], right[i])
    elif op == _op.ATAN2:
        for i in range(m):
            left[i] = np.arctan2(left[i], right[i])
    else:  # _op.HYPOT
        for i in range(m):
            left[i] = np.hypot(left[i], right[i])


@njit(error_model="numpy", **JIT)
def _small_power(left, c, m):
    """``left[:m] **= c`` by multiplication when ``2c`` is an integer with ``|c| <= 4``.

    Returns False (and does nothing) for any other exponent. Integer powers use repeated
    multiplication; half-integer powers multiply by ``sqrt``. Both agree with ``pow`` to an ulp or
    two on normal numbers, and the special cases where ``sqrt`` and ``pow`` differ (``-0.0``,
    ``-inf``) are set to ``pow``'s values.
    """
    if c == 0.0:
        for i in range(m):
            left[i] = 1.0
        return True
    a = abs(c)
    if a > 4.0 or 2.0 * a != np.floor(2.0 * a):
        return False
    n = int(a)  # integer part of |c|
    half = a != n
    for i in range(m):
        left[i] = power_by_multiplication(left[i], c, n, half)
    return True


@njit(inline="always", error_model="numpy", **JIT)
def power_by_multiplication(x, c, n, half):
    """``x ** c`` for ``|c| = n + 0.5 half`` with ``n <= 4``: repeated products, one ``sqrt`` for a
    half, ``pow``'s values where ``sqrt`` and ``pow`` differ (``+-0``, ``-inf``). Shared by the
    programs' and the row machine's small-power rules."""
    x2 = x * x
    if n == 0:
        r = 1.0
    elif n == 1:
        r = x
    elif n == 2:
        r = x2
    elif n == 3:
        r = x2 * x
    else:
        r = x2 * x2
    if half:
        r = r * np.sqrt(x)
    if c < 0.0:
        r = 1.0 / r
    if half:
        if x == 0.0:  # pow(+-0, c) for non-integer c
            r = 0.0 if c > 0.0 else np.inf
        elif x == -np.inf:
            r = np.inf if c > 0.0 else 0.0
    return r


@njit(error_model="numpy", **JIT)
def _binary_const(op, left, c, m):
    """``left[:m] = left[:m] <op> c`` for a binary opcode and a constant right operand."""
    if op == _op.POW:
        if not _small_power(left, c, m):
            for i in range(m):
                left[i] = _pow(left[i], c)
    elif op == _op.ADD:
        for i in range(m):
            left[i] = left[i] + c
    elif op == _op.SUB:
        for i in range(m):
            left[i] = left[i] - c
    elif op == _op.MUL:
        for i in range(m):
            left[i] = left[i] * c
    elif op == _op.DIV:
        for i in range(m):
            left[i] = left[i] / c
    elif op == _op.ATAN2:
        for i in range(m):
            left[i] = np.arctan2(left[i], c)
    else:  # _op.HYPOT
        for i in range(m):
            left[i] = np.hypot(left[i], c)


@njit(error_model="numpy", **JIT)
def _unary(op, x, m):
    """``x[:m] = f(x[:m])`` for a unary opcode."""
    if op == _op.NEG:
        for i in range(m):
            x[i] = -x[i]
    elif op == _op.SIN:
        _vecmath.sin_inplace(x, m)
    elif op == _op.COS:
        _vecmath.cos_inplace(x, m)
    elif op == _op.TAN:
        _vecmath.tan_inplace(x, m)
    elif op == _op.ASIN:
        _vecmath.asin_inplace(x, m)
    elif op == _op.ACOS:
        _vecmath.acos_inplace(x, m)
    elif op == _op.ATAN:
        _vecmath.atan_inplace(x, m)
    elif op == _op.EXP:
        _vecmath.exp_inplace(x, m)
    elif op == _op.LOG:
        _vecmath.log_inplace(x, m)
    elif op == _op.SQRT:
        for i in range(m):
            x[i] = np.sqrt(x[i])
    elif op == _op.ABS:
        for i in range(m):
            x[i] = np.abs(x[i])
    elif op == _op.DEGREES:
        for i in range(m):
            x[i] = x[i] * _DEG_PER_RAD
    elif op == _op.RADIANS:
        for i in range(m):
            x[i] = x[i] * _RAD_PER_DEG
    else:
        _libm_unary(op, x, m)


@njit(error_model="numpy", **JIT)
def _libm_unary(op, x, m):
    """``x[:m] = f(x[:m])`` for the opcodes computed by the C library, one point at a time:
    ``sinh cosh tanh asinh acosh atanh expm1 log10 log2 log1p cbrt``."""
    if op == _op.SINH:
        for i in range(m):
            x[i] = np.sinh(x[i])
    elif op == _op.COSH:
        for i in range(m):
            x[i] = np.cosh(x[i])
    elif op == _op.TANH:
        for i in range(m):
            x[i] = np.tanh(x[i])
    elif op == _op.ASINH:
        for i in range(m):
            x[i] = np.arcsinh(x[i])
    elif op == _op.ACOSH:
        for i in range(m):
            x[i] = np.arccosh(x[i])
    elif op == _op.ATANH:
        for i in range(m):
            x[i] = np.arctanh(x[i])
    elif op == _op.EXPM1:
        for i in range(m):
            x[i] = np.expm1(x[i])
    elif op == _op.LOG10:
        for i in range(m):
            x[i] = np.log10(x[i])
    elif op == _op.LOG2:
        for i in range(m):
            x[i] = np.log2(x[i])
    elif op == _op.LOG1P:
        for i in range(m):
            x[i] = np.log1p(x[i])
    else:  # _op.CBRT
        for i in range(m):
            x[i] = np.cbrt(x[i])


@njit(error_model="numpy", **JIT)
def _evaluate_programs(ops, args, consts, prog_start, prog_len, const_start, XT, max_depth, out):
    """Evaluate packed postfix programs at every point, one block of points at a time.

    Parameters
    ----------
    ops, args : int64[L]
        Packed opcodes and arguments (validated by :func:`_check_programs`).
    consts : float64[C]
        Packed constant table.
    prog_start, prog_len, const_start : int64[P]
        Per-program offsets into ``ops``/``args`` and into ``consts``.
    XT : float64[d, n]
        Input points, one row per variable (the transpose of ``X``, contiguous per variable).
    max_depth : int
        Stack depth the programs need.
    out : float64[P, n]
        Receives ``out[p, i]`` = program ``p`` at point ``i``.

    Notes
    -----
    The machine interprets each instruction once per block of ``_BLOCK`` points and applies it
    with a tight loop over the block, so the dispatch cost is shared by the whole block and the
    arithmetic loops vectorize. Elementary functions run as vectorized row operations from
    :mod:`kernels._vecmath` (compiled with their own, stricter floating-point flags; see there).
    The stack holds ``max_depth`` rows of one block each (L1 resident).
    A leaf followed by a binary instruction is applied directly to the top row, without a push.
    """
    n = XT.shape[1]
    n_prog = prog_start.shape[0]
    B = _BLOCK
    stack = np.empty((max_depth, B))
    for p in range(n_prog):
        start = prog_start[p]
        stop = start + prog_len[p]
        c0 = const_start[p]
        for lo in range(0, n, B):
            m = min(B, n - lo)
            sp = 0  # number of occupied stack rows
            k = start
            while k < stop:
                op = ops[k]
                a = args[k]
                fuse = sp > 0 and k + 1 < stop and _op.OP_ARITY[ops[k + 1]] == 2
                if op == _op.VAR:
                    xrow = XT[a, lo:lo + m]
                    if fuse:  # top <op> x
                        _binary(ops[k + 1], stack[sp - 1], xrow, m)
                        k += 2
                        continue
                    row = stack[sp]
                    for i in range(m):
                        row[i] = xrow[i]
                    sp += 1
                elif op == _op.CONST:
                    c = consts[c0 + a]
                    if fuse:  # top <op> c
                        _binary_const(ops[k + 1], stack[sp - 1], c, m)
                        k += 2
                        continue
                    row = stack[sp]
                    for i in range(m):
                        row[i] = c
                    sp += 1
                elif _op.OP_ARITY[op] == 2:
                    _binary(op, stack[sp - 2], stack[sp - 1], m)
                    sp -= 1
                else:
                    _unary(op, stack[sp - 1], m)
                k += 1
            row = stack[0]
            dst = out[p, lo:lo + m]
            for i in range(m):
                dst[i] = row[i]
    return out


@njit(**JIT)
def _check_and_evaluate(ops, args, consts, prog_start, prog_len, const_start, XT, out):
    """Validate, then evaluate: one compiled call for the public wrapper.

    Parameters are as in :func:`_evaluate_programs` (``out`` : float64[P, n] is filled only when
    the programs are valid). A program may read constants from its ``const_start`` to the end
    of the table, since packed constant ranges may be shared.

    Returns
    -------
    code, where_p, where_k : int
        As returned by :func:`_check_programs`; ``code == 0`` means ``out`` holds the values.
    """
    code, where_p, where_k, depth = _check_packed(ops, args, consts, prog_start, prog_len, const_start, XT)
    if code == 0 and out.size > 0:
        _evaluate_programs(ops, args, consts, prog_start, prog_len, const_start, XT, depth, out)
    return code, where_p, where_k, depth


@njit(**JIT)
def _check_packed(ops, args, consts, prog_start, prog_len, const_start, XT):
    """:func:`_check_programs` for programs about to run on ``XT`` (its rows are the variables)."""
    n_consts = consts.shape[0] - const_start
    return _check_programs(ops, args, n_consts, prog_start, prog_len, const_start, consts.shape[0], XT.shape[0])


_JIT_OFF = numba_config.DISABLE_JIT  # type: ignore[attr-defined]  # numba.config sets its options at import; the stubs omit them


def _raise_invalid(code, where_p, where_k):
    where = f"program {where_p}" + (f", instruction {where_k}" if where_k >= 0 else "")
    raise ValueError(f"{where} {_op._CHECK_MESSAGES[code]}")


@named_errors
def check_programs(ops, args, consts, prog_start, prog_len, const_start, n_vars):
    """Validate packed programs; return the stack depth they need.

    Args:
        ops, args: int64[L] packed opcodes and arguments.
        consts: float64[C] packed constant table.
        prog_start, prog_len, const_start: int64[P] per-program offsets.
        n_vars: number of input columns the programs may read.

    Returns:
        The largest stack depth reached (at least 1).

    Raises:
        ValueError: naming the first bad program and instruction.
    """
    ops, args, consts, prog_start, prog_len, const_start = _coerce(
        ops, args, consts, prog_start, prog_len, const_start
    )
    n_consts = consts.shape[0] - const_start
    code, where_p, where_k, depth = _check_programs(
        ops, args, n_consts, prog_start, prog_len, const_start, consts.shape[0], int(n_vars)
    )
    if code:
        _raise_invalid(code, where_p, where_k)
    return int(depth)


def columns_read(ops: np.ndarray, args: np.ndarray) -> int:
    """How many leading columns of ``X`` packed opcodes read: one more than the largest ``var`` argument."""
    var_args = args[ops == _op.VAR]
    return int(var_args.max()) + 1 if var_args.size else 0


def points_rows(X: np.ndarray, ops: np.ndarray, args: np.ndarray, n_points) -> None:
    """Check that ``X`` holds points along its rows (``kernels._checks.check_points_first``): with
    ``n_points`` stated, that it has that many rows; without it, that it is not wider than tall with
    columns the programs never read, which is what a transposed ``X`` looks like."""
    check_points_first(X, "X", n_points, lambda: columns_read(ops, args))


@named_errors
def evaluate_programs(ops, args, consts, prog_start, prog_len, const_start, X, *, n_points: int | None = None):
    """Evaluate many packed postfix programs at many points in one call.

    Args:
        ops: int64[L] packed opcodes (see :data:`OPCODES`).
        args: int64[L] the argument of each opcode: the column of ``X`` for ``var``, the
            program-local constant index for ``const``, ignored otherwise.
        consts: float64[C] packed constant table.
        prog_start: int64[P] first instruction of each program in ``ops``.
        prog_len: int64[P] number of instructions of each program.
        const_start: int64[P] offset of each program's constants in ``consts``.
        X: float64[n, d] input points, one column per variable.
        n_points: The number of points ``n``, when stated: ``X`` must have that many rows.
            Without it, an ``X`` with more columns than rows whose last columns no program reads
            is refused as transposed (see :func:`points_rows`).

    Returns:
        float64[P, n]: ``out[p, i]`` is program ``p`` at point ``X[i]`` (NaN where undefined).

    Raises:
        ValueError: on malformed arrays or programs (the message names the program and
            instruction), or an ``X`` that looks transposed; evaluation itself never raises.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional (n_points, d), got shape {X.shape}")
    packed = _coerce(ops, args, consts, prog_start, prog_len, const_start)
    points_rows(X, packed[0], packed[1], n_points)
    out = np.empty((packed[3].shape[0], X.shape[0]), dtype=np.float64)
    return _run(_check_and_evaluate, packed, X, out)


def _run(kernel, packed, X, out):
    """``kernel(*packed, X.T, out)`` (NumPy's warnings off where the JIT is), raising its verdict on
    malformed programs; returns ``out``."""
    XT = np.ascontiguousarray(X.T)
    if _JIT_OFF:  # NumPy scalars warn where compiled code is silent
        with np.errstate(all="ignore"):
            code, where_p, where_k, _ = kernel(*packed, XT, out)
    else:
        code, where_p, where_k, _ = kernel(*packed, XT, out)
    if code:
        _raise_invalid(code, where_p, where_k)
    return out
