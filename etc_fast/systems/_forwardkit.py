"""What the closed-form forward models share: candidate programs evaluated at many points, time axes.

The closed forms themselves are in :mod:`etc_fast.systems.defs` (one per system); each evaluates
the candidate laws with :func:`kernels.evaluate_programs`, one call per law stage, all experiments
and time points at once.
"""

from __future__ import annotations

import numpy as np

from etc_fast.expr import FamilyPacked, Packed
from etc_fast.systems._definition import PairedPrograms
from kernels.programs import evaluate_programs
from kernels.programs_family import MAX_FAMILY_CONSTS, evaluate_family
from kernels.programs_paired import evaluate_programs_paired
from kernels.systems import N_STEPS

__all__ = ["GL8", "GL16", "N_STEPS", "eval_each", "eval_programs", "series", "wrap"]

#: Gauss-Legendre nodes and weights on [-1, 1].
GL16 = np.polynomial.legendre.leggauss(16)
GL8 = np.polynomial.legendre.leggauss(8)


def eval_programs(packed: Packed | PairedPrograms, X: np.ndarray) -> np.ndarray:
    """Programs at points X[n, d] -> float64[P, n]; paired programs -> float64[1, n], each
    experiment's block of rows (``n / n_programs`` of them, experiment-major) under its program."""
    X = np.ascontiguousarray(X, dtype=np.float64)
    if isinstance(packed, PairedPrograms):
        return evaluate_programs_paired(*packed.packed, X, n_points=X.shape[0])[None, :]
    if isinstance(packed, FamilyPacked):  # one program's constant tables: shared steps computed once
        ops, args, consts = packed.family()
        if ops.size and consts.shape[1] <= MAX_FAMILY_CONSTS:
            return evaluate_family(ops, args, consts, X, n_points=X.shape[0], n_tables=consts.shape[0])
    return evaluate_programs(*packed, X, n_points=X.shape[0])


def eval_each(packed: Packed | PairedPrograms, X_each: np.ndarray) -> np.ndarray:
    """Each program p at its own points ``X_each[p]`` (a second law stage fed by the first):
    float64[P, n, d] -> float64[P, n], one kernel call (:func:`kernels.evaluate_programs_paired`,
    the values of a call per program)."""
    X_each = np.asarray(X_each, dtype=np.float64)
    if isinstance(packed, PairedPrograms):  # one row already holds each experiment under its program
        return eval_programs(packed, X_each[0])
    P, n, d = X_each.shape
    return evaluate_programs_paired(*packed, np.ascontiguousarray(X_each.reshape(P * n, d)), n_points=P * n).reshape(P, n)


def series(n_exp: int, n: np.ndarray, t_end: np.ndarray) -> np.ndarray:
    """linspace(0, t_end, n) per experiment, padded with NaN to 20 columns."""
    k = np.arange(N_STEPS)[None, :]
    with np.errstate(all="ignore"):
        frac = np.where(n[:, None] > 1, k / np.maximum(n[:, None] - 1, 1), 0.0)
    t = frac * t_end[:, None]
    return np.where(k < n[:, None], t, np.nan)


def wrap(a: np.ndarray) -> np.ndarray:
    """Angles in degrees folded into [0, 90] (the simulators' ``wrap_angle``, vectorized)."""
    a = np.mod(a, 180.0)
    return np.where(a > 90.0, 180.0 - a, a)
