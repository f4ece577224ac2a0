"""One program under many constant tables: :mod:`kernels.programs`' product for a family, with the
work a row shares with the row before it done once.

A scan through a simulator or a lockstep fit evaluates one program at many constant tables (a grid
of exponents and rates; a Jacobian's steps, each moving one constant). Consecutive tables mostly
agree: a grid's fastest axis moves one factor, a Jacobian step one constant. Every step of the
program whose operands read no constant that changed since the previous table has the previous
table's value, so it is not computed again.

The program is translated once into the steps the stack machine of
:func:`kernels.programs._evaluate_programs` takes (a leaf pushed, a leaf fused into the binary
instruction after it, a binary or a unary instruction), each step keeping its own row of values per
block of points. A step runs the machine's own row operations (``_binary``, ``_binary_const``,
``_unary``) on a copy of its operands' rows, over the same blocks, so every value is the one the
machine gives for that table, bit for bit (``tests/kernels/test_programs_family.py``). Step ``s``
of table ``p`` is recomputed when ``p`` is the first table of the block or when a constant its
operands read differs from table ``p - 1`` (compared as bits, so a NaN constant always counts as
changed).
"""

import numpy as np
from numba import njit

from kernels._checks import as_int64, check_count, named_errors
from kernels._jit import JIT, JitOptions
from kernels._opcodes import (
    CONST,
    OP_ARITY,
    VAR,
)
from kernels.programs import (
    _BLOCK,
    _binary,
    _binary_const,
    _check_programs,
    _run,
    _unary,
    points_rows,
)

__all__ = ["evaluate_family", "MAX_FAMILY_CONSTS"]

_JIT_NP: JitOptions = {**JIT, "error_model": "numpy"}  # NumPy's float semantics, as the machine's

#: Most constants a family's program may read (one bit of a step's mask each).
MAX_FAMILY_CONSTS = 63

# step kinds
_PUSH_VAR = 0
_PUSH_CONST = 1
_FUSED_VAR = 2  # operand row <op> X column
_FUSED_CONST = 3  # operand row <op> constant
_BINARY = 4  # left row <op> right row
_UNARY = 5


@njit(**JIT)
def _steps(ops, args):
    """The machine's steps of one valid program: ``kind, op, arg, left, right, mask`` per step
    (``left``/``right`` the steps whose rows are the operands, -1 for none; ``mask`` the bits of
    the constants the step's value reads) and the number of steps."""
    L = ops.shape[0]
    kind = np.empty(L, np.int64)
    sop = np.empty(L, np.int64)
    sarg = np.empty(L, np.int64)
    left = np.full(L, -1, np.int64)
    right = np.full(L, -1, np.int64)
    mask = np.zeros(L, np.int64)
    stack = np.empty(L, np.int64)
    sp = 0
    n = 0
    k = 0
    while k < L:
        op = ops[k]
        a = args[k]
        fuse = sp > 0 and k + 1 < L and OP_ARITY[ops[k + 1]] == 2
        if op == VAR or op == CONST:
            bit = np.int64(1) << a if op == CONST else np.int64(0)
            sarg[n] = a
            if fuse:
                top = stack[sp - 1]
                kind[n] = _FUSED_VAR if op == VAR else _FUSED_CONST
                sop[n] = ops[k + 1]
                left[n] = top
                mask[n] = mask[top] | bit
                stack[sp - 1] = n
                k += 2
            else:
                kind[n] = _PUSH_VAR if op == VAR else _PUSH_CONST
                sop[n] = op
                mask[n] = bit
                stack[sp] = n
                sp += 1
                k += 1
        elif OP_ARITY[op] == 2:
            kind[n] = _BINARY
            sop[n] = op
            sarg[n] = 0
            left[n] = stack[sp - 2]
            right[n] = stack[sp - 1]
            mask[n] = mask[stack[sp - 2]] | mask[stack[sp - 1]]
            sp -= 1
            stack[sp - 1] = n
            k += 1
        else:
            kind[n] = _UNARY
            sop[n] = op
            sarg[n] = 0
            left[n] = stack[sp - 1]
            mask[n] = mask[stack[sp - 1]]
            stack[sp - 1] = n
            k += 1
        n += 1
    return kind, sop, sarg, left, right, mask, n


@njit(**_JIT_NP)
def _evaluate_family(ops, args, consts, XT, out):
    """``out[p, i]`` = the program with constants ``consts[p]`` at point ``i`` (see module doc).

    Parameters
    ----------
    ops, args : int64[L]
        One valid program (at most :data:`MAX_FAMILY_CONSTS` constants).
    consts : float64[P, C]
        One constant table per row.
    XT : float64[d, n]
        Input points, one row per variable.
    out : float64[P, n]
        Receives the values.

    Returns
    -------
    int
        Steps computed (a table's step counted once per block; the tests read it).
    """
    kind, sop, sarg, left, right, mask, n_steps = _steps(ops, args)
    n = XT.shape[1]
    P = consts.shape[0]
    C = consts.shape[1]
    B = _BLOCK
    rows = np.empty((n_steps, B))
    bits = consts.view(np.int64)
    root = n_steps - 1
    computed = 0
    for lo in range(0, n, B):
        m = min(B, n - lo)
        for p in range(P):
            changed = np.int64(-1)
            if p > 0:
                changed = np.int64(0)
                for j in range(C):
                    if bits[p, j] != bits[p - 1, j] or consts[p, j] != consts[p, j]:
                        changed |= np.int64(1) << j
            for s in range(n_steps):
                if p > 0 and (kind[s] == _PUSH_VAR or (mask[s] & changed) == 0):
                    continue  # a column of X, or the value the previous table left in this row
                computed += 1
                row = rows[s]
                ks = kind[s]
                if ks == _PUSH_VAR:
                    xrow = XT[sarg[s], lo:lo + m]
                    for i in range(m):
                        row[i] = xrow[i]
                elif ks == _PUSH_CONST:
                    c = consts[p, sarg[s]]
                    for i in range(m):
                        row[i] = c
                else:
                    src = rows[left[s]]
                    for i in range(m):
                        row[i] = src[i]
                    if ks == _FUSED_VAR:
                        _binary(sop[s], row, XT[sarg[s], lo:lo + m], m)
                    elif ks == _FUSED_CONST:
                        _binary_const(sop[s], row, consts[p, sarg[s]], m)
                    elif ks == _BINARY:
                        _binary(sop[s], row, rows[right[s]], m)
                    else:
                        _unary(sop[s], row, m)
            src = rows[root]
            dst = out[p, lo:lo + m]
            for i in range(m):
                dst[i] = src[i]
    return computed


@njit(**JIT)
def _check_and_evaluate_family(ops, args, consts, XT, out):
    """Validate the program against ``consts``' width and ``XT``'s variables, then evaluate.
    Returns ``code, where_p, where_k, computed`` (``code`` as :func:`kernels.programs._check_programs`)."""
    C = consts.shape[1]
    starts = np.zeros(1, np.int64)
    code, where_p, where_k, _ = _check_programs(ops, args, np.full(1, C, np.int64), starts,
                                                np.full(1, ops.shape[0], np.int64), starts, C, XT.shape[0])
    computed = 0
    if code == 0 and out.size > 0:
        computed = _evaluate_family(ops, args, consts, XT, out)
    return code, where_p, where_k, computed


def _tables_rows(consts: np.ndarray, ops: np.ndarray, args: np.ndarray, n_tables) -> None:
    """``consts`` [P, C] holds one table per row: ``n_tables`` rows when stated; otherwise not wider
    than tall with columns the program never reads (a transposed table)."""
    n = check_count(n_tables, "n_tables")
    if n is not None:
        if consts.shape[0] != n:
            raise ValueError(f"consts must have shape (n_tables={n}, C), got {consts.shape}")
    elif 0 < consts.shape[0] < consts.shape[1]:
        const_args = args[ops == CONST]
        read = int(const_args.max()) + 1 if const_args.size else 0
        if read < consts.shape[1]:
            raise ValueError(
                f"consts must have shape (n_tables, C) with C the program's {read} constants, got {consts.shape}: "
                f"looks transposed (pass consts.T), or state n_tables={consts.shape[0]}"
            )


@named_errors
def evaluate_family(ops, args, consts, X, *, n_points: int | None = None, n_tables: int | None = None):
    """One program at every row of a constant table, at many points.

    The values of :func:`kernels.evaluate_programs` on ``P`` copies of the program, copy ``p``
    with the constants ``consts[p]``, bit for bit; a step of the program whose constants did not
    change from the row before is not computed again (module doc).

    Args:
        ops, args: int64[L] one program's opcodes and arguments (see :data:`kernels.OPCODES`).
        consts: float64[P, C] its constants, one table per row (``C`` at most
            :data:`MAX_FAMILY_CONSTS`).
        X: float64[n, d] input points.
        n_points: ``n``, when stated (the orientation check of :func:`kernels.evaluate_programs`).
        n_tables: ``P``, when stated: ``consts`` must have that many rows. Without it, a
            ``consts`` with more columns than rows whose last columns the program never reads is
            refused as transposed.

    Returns:
        float64[P, n] (NaN where undefined).

    Raises:
        ValueError: on malformed arrays or a malformed program, or more than
            :data:`MAX_FAMILY_CONSTS` constants.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional (n_points, d), got shape {X.shape}")
    consts = np.ascontiguousarray(consts, dtype=np.float64)
    if consts.ndim != 2:
        raise ValueError(f"consts must be two-dimensional (n_tables, C), got shape {consts.shape}")
    if consts.shape[1] > MAX_FAMILY_CONSTS:
        raise ValueError(f"consts must have shape (n_tables, C) with at most {MAX_FAMILY_CONSTS} constants C, got {consts.shape}")
    ops, args = as_int64("ops", ops), as_int64("args", args)
    if ops.shape != args.shape:
        raise ValueError(f"ops and args differ in length: {ops.shape[0]} vs {args.shape[0]}")
    points_rows(X, ops, args, n_points)
    _tables_rows(consts, ops, args, n_tables)
    return _run(_check_and_evaluate_family, (ops, args, consts), X,
                np.empty((consts.shape[0], X.shape[0]), dtype=np.float64))
