"""Best pairs of columns for a two-term least-squares fit (the symbolic search's subset selection).

For unit-norm columns ``u_a``, ``u_b`` and a target ``t``, the least-squares fit of ``t`` on both
reduces the residual sum of squares by

    gain(a, b) = ((u_a . t)^2 + (u_b . t)^2 - 2 g (u_a . t)(u_b . t)) / (1 - g^2),   g = u_a . u_b

(nearly collinear pairs, ``|g| >= 1 - 1e-9``, are skipped). :func:`best_pairs` scores every pair of
one column from ``left`` and one from ``right`` (or every unordered pair of ``left``) in one pass
over the columns, keeping the ``keep`` largest gains; the work is ``len(left) * len(right) * n``
multiply-adds and no ``L x L`` matrix is stored.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import named_errors
from kernels._jit import JIT

__all__ = ["best_pairs"]


@njit(**JIT)
def _best_pairs(UT, b, left, right, same, keep):  # pragma: no cover - compiled
    n = UT.shape[1]
    top_g = np.full(keep, -np.inf)
    top_i = np.full(keep, -1, dtype=np.int64)
    top_j = np.full(keep, -1, dtype=np.int64)
    # A pair enters the list only if gain = num / den beats the last kept gain; den > 0, so a
    # pair with num <= lim * den, lim a hair below that gain, cannot, and is passed over
    # without the division (the gain itself is computed exactly as before for the rest).
    lim = -np.inf
    R = right.shape[0]
    ascending = True  # unordered pairs over ascending columns: each row starts past its own column
    for jj in range(1, R):
        if right[jj] <= right[jj - 1]:
            ascending = False
            break
    for ii in range(left.shape[0]):
        a = left[ii]
        ba = b[a]
        # the first jj with right[jj] > a (the pairs before it are skipped below)
        start = np.searchsorted(right, a, side="right") if same and ascending else 0
        for jj in range(start, R):
            c = right[jj]
            if same and c <= a:
                continue
            g = 0.0
            for k in range(n):
                g += UT[a, k] * UT[c, k]
            if not (abs(g) < 1.0 - 1e-9):
                continue
            bc = b[c]
            num = ba * ba + bc * bc - 2.0 * g * ba * bc
            den = 1.0 - g * g
            if not (num > lim * den):  # cannot enter the list (den > 0): no division
                continue
            gain = num / den
            if not (gain > top_g[keep - 1]):
                continue
            p = keep - 1
            while p > 0 and gain > top_g[p - 1]:
                top_g[p] = top_g[p - 1]
                top_i[p] = top_i[p - 1]
                top_j[p] = top_j[p - 1]
                p -= 1
            top_g[p] = gain
            top_i[p] = a
            top_j[p] = c
            lim = top_g[keep - 1] - 1e-9 * abs(top_g[keep - 1])
    return top_i, top_j, top_g


@named_errors
def best_pairs(U: np.ndarray, t: np.ndarray, keep: int, left: np.ndarray | None = None,
               right: np.ndarray | None = None) -> list[tuple[int, int]]:
    """The ``keep`` pairs of columns of ``U`` whose joint least-squares fit of ``t`` leaves the least residual.

    Args:
        U: float64[n, L] columns of unit norm (finite).
        t: float64[n] target.
        keep: Pairs returned at most (positive).
        left: Column indices of the first member (default: all columns).
        right: Column indices of the second member; without it, unordered pairs of ``left``.

    Returns:
        ``(a, b)`` column pairs, largest gain first (ties: the pair found first, in the order of
        ``left`` then ``right``).
    """
    U = np.asarray(U, dtype=np.float64)
    t = np.asarray(t, dtype=np.float64)
    if t.ndim != 1 and not (t.ndim == 2 and t.shape[1] == 1):
        raise ValueError(f"best_pairs: t must be one-dimensional (n,), got shape {t.shape}")
    t = t.reshape(-1)
    if U.ndim != 2 or U.shape[0] != t.shape[0]:
        raise ValueError(f"best_pairs: U must be (n, L) with n = len(t) = {t.shape[0]}, got {U.shape}")
    if not (isinstance(keep, (int, np.integer)) and keep >= 1):
        raise ValueError(f"best_pairs: keep must be a positive integer, got {keep!r}")
    L = U.shape[1]
    same = right is None
    left_a = np.arange(L, dtype=np.int64) if left is None else np.asarray(left, dtype=np.int64).reshape(-1)
    right_a = left_a if right is None else np.asarray(right, dtype=np.int64).reshape(-1)
    for name, idx in (("left", left_a), ("right", right_a)):
        if idx.size and (idx.min() < 0 or idx.max() >= L):
            raise ValueError(f"best_pairs: {name} holds a column index outside [0, {L})")
    UT = np.ascontiguousarray(U.T)
    b = UT @ t
    ti, tj, tg = _best_pairs(UT, b, left_a, right_a, same, int(keep))
    return [(int(i), int(j)) for i, j, g in zip(ti, tj, tg) if i >= 0 and np.isfinite(g)]
