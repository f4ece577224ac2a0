"""NumPy twin of :mod:`kernels.programs`: one whole-array NumPy operation per instruction."""

import numpy as np

from kernels.programs import OPCODES

_UNARY = {
    OPCODES["neg"]: np.negative,
    OPCODES["sin"]: np.sin,
    OPCODES["cos"]: np.cos,
    OPCODES["tan"]: np.tan,
    OPCODES["asin"]: np.arcsin,
    OPCODES["acos"]: np.arccos,
    OPCODES["atan"]: np.arctan,
    OPCODES["exp"]: np.exp,
    OPCODES["log"]: np.log,
    OPCODES["sqrt"]: np.sqrt,
    OPCODES["abs"]: np.abs,
    OPCODES["degrees"]: np.degrees,
    OPCODES["radians"]: np.radians,
    OPCODES["sinh"]: np.sinh,
    OPCODES["cosh"]: np.cosh,
    OPCODES["tanh"]: np.tanh,
    OPCODES["asinh"]: np.arcsinh,
    OPCODES["acosh"]: np.arccosh,
    OPCODES["atanh"]: np.arctanh,
    OPCODES["expm1"]: np.expm1,
    OPCODES["log10"]: np.log10,
    OPCODES["log2"]: np.log2,
    OPCODES["log1p"]: np.log1p,
    OPCODES["cbrt"]: np.cbrt,
}
_BINARY = {
    OPCODES["add"]: np.add,
    OPCODES["sub"]: np.subtract,
    OPCODES["mul"]: np.multiply,
    OPCODES["div"]: np.divide,
    OPCODES["pow"]: np.power,
    OPCODES["atan2"]: np.arctan2,
    OPCODES["hypot"]: np.hypot,
}


def evaluate_programs_ref(ops, args, consts, prog_start, prog_len, const_start, X, jitter=None):
    """Evaluate packed programs with a Python stack of whole NumPy arrays.

    ``jitter`` (a ``np.random.Generator`` or None) multiplies every intermediate result by
    ``1 + k * 2**-52`` with a random integer ``k`` in [-4, 4] per element. Tests use it to find the
    points where a few units in the last place change the answer (cancellation, branch cuts).
    """
    X = np.asarray(X, dtype=np.float64)
    n = X.shape[0]
    out = np.empty((len(prog_start), n))
    with np.errstate(all="ignore"):
        for p in range(len(prog_start)):
            stack = []
            for k in range(prog_start[p], prog_start[p] + prog_len[p]):
                op, a = int(ops[k]), int(args[k])
                if op == OPCODES["var"]:
                    value = X[:, a].copy()
                elif op == OPCODES["const"]:
                    value = np.full(n, consts[const_start[p] + a])
                elif op in _BINARY:
                    right = stack.pop()
                    left = stack.pop()
                    value = _BINARY[op](left, right)
                else:
                    value = _UNARY[op](stack.pop())
                if jitter is not None and op not in (OPCODES["var"], OPCODES["const"]):
                    value = value * (1.0 + jitter.integers(-4, 5, size=n) * 2.0**-52)
                stack.append(value)
            assert len(stack) == 1
            out[p] = stack[0]
    return out


def evaluate_programs_paired_ref(ops, args, consts, prog_start, prog_len, const_start, X, jitter=None):
    """Each program at its own block of rows: program ``p`` at rows ``p * per .. (p + 1) * per``,
    float64[P * per] (the twin of :func:`kernels.evaluate_programs_paired`)."""
    P = len(prog_start)
    if P == 0:
        return np.zeros(0)
    per = X.shape[0] // P
    return np.concatenate([
        evaluate_programs_ref(ops, args, consts, prog_start[p:p + 1], prog_len[p:p + 1], const_start[p:p + 1],
                              X[p * per:(p + 1) * per], jitter=jitter)[0]
        for p in range(P)
    ])
