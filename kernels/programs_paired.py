"""Each packed program at its own block of points: the diagonal blocks of :mod:`kernels.programs`'
product, at ``1 / P`` of its cost.

A forward model that gives each experiment its own candidate law (a derived table's constant-law
fit: experiment ``e`` under candidate ``e``) needs program ``p`` only at the rows of experiment
``p``. The product of every program with every row would compute ``P`` times that and keep the
diagonal. Here each program runs the same block loop (:func:`kernels.programs._evaluate_programs`)
over its own rows, so every value is the one the product has at that row, bit for bit.
"""

import numpy as np
from numba import njit

from kernels._checks import named_errors
from kernels._jit import JIT
from kernels.programs import _check_packed, _coerce, _evaluate_programs, _run, points_rows

__all__ = ["evaluate_programs_paired"]


@njit(**JIT)
def _check_and_evaluate_paired(ops, args, consts, prog_start, prog_len, const_start, XT, out):
    """Validate, then evaluate program ``p`` at its own points only: ``out[p, j]`` is program ``p``
    at point ``p * per + j`` of ``XT`` (``per = out.shape[1]``). Returns as
    :func:`kernels.programs._check_and_evaluate`.

    Each program runs the block loop of :func:`_evaluate_programs` over its ``per`` points, with
    the same per-point arithmetic, so a value is the one the full product gives at that point.
    """
    code, where_p, where_k, depth = _check_packed(ops, args, consts, prog_start, prog_len, const_start, XT)
    per = out.shape[1]
    if code == 0 and out.size > 0:
        for p in range(prog_start.shape[0]):
            _evaluate_programs(ops, args, consts, prog_start[p:p + 1], prog_len[p:p + 1], const_start[p:p + 1],
                               XT[:, p * per:(p + 1) * per], depth, out[p:p + 1])
    return code, where_p, where_k, depth


@named_errors
def evaluate_programs_paired(ops, args, consts, prog_start, prog_len, const_start, X, *, n_points: int | None = None):
    """Each program at its own block of points: program ``p`` at rows ``p * per .. (p + 1) * per``.

    The diagonal of :func:`evaluate_programs` when point block ``p`` belongs to program ``p`` (a
    forward model's rows of experiment ``p`` under that experiment's candidate), at ``1 / P`` of
    its cost: ``out[i]`` is ``evaluate_programs(...)[i // per, i]``, the same arithmetic.

    Args:
        ops, args, consts, prog_start, prog_len, const_start: Packed programs, as
            :func:`evaluate_programs` (``P`` programs).
        X: float64[P * per, d] input points, ``per`` consecutive rows per program.
        n_points: ``P * per``, when stated (the orientation check of :func:`evaluate_programs`).

    Returns:
        float64[P * per]: row ``i`` under program ``i // per`` (NaN where undefined).

    Raises:
        ValueError: on malformed arrays or programs, or when the rows do not split evenly.
    """
    X = np.asarray(X, dtype=np.float64)
    if X.ndim != 2:
        raise ValueError(f"X must be two-dimensional (n_points, d), got shape {X.shape}")
    packed = _coerce(ops, args, consts, prog_start, prog_len, const_start)
    n_prog = packed[3].shape[0]
    if (n_prog == 0 and X.shape[0]) or (n_prog and X.shape[0] % n_prog):
        raise ValueError(f"X must have the same number of rows for each of the {n_prog} programs, got {X.shape[0]} rows")
    points_rows(X, packed[0], packed[1], n_points)
    per = X.shape[0] // n_prog if n_prog else 0
    return _run(_check_and_evaluate_paired, packed, X, np.empty((n_prog, per), dtype=np.float64)).reshape(-1)
