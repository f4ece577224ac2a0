"""Batch selection from regularized scores, and random selection (paper S2.2).

**Eligibility.** With ``n_f`` finite regularized scores, the ``m = max(ceil(top_fraction * n_f),
min(k, n_f))`` highest are eligible (order: score descending, then index ascending, so equal scores
at the cut are admitted lowest index first).

**Greedy batch** (DESIGN "Planner step" 6). ``s'`` = min-max normalized eligible score (all equal ->
1). The first pick is the highest score (ties: lowest index); each next pick maximizes
``w_score * s'_j + w_div * delta_j``, ``delta_j`` = Euclidean distance in unit coordinates to the
nearest point already picked, divided by ``sqrt(d)`` (ties: lowest index). ``min(k, m)`` picks.

**Random batch** (step 7). Partial Fisher-Yates over the available indices in ascending order,
driven by pre-drawn uniforms ``r_t`` in [0, 1): at step ``t`` swap position ``t`` with
``t + floor(r_t (n - t))`` (clamped to ``n - 1``) and take position ``t``. The public wrapper draws
``np.random.default_rng(seed).random(min(k, n))``.

The whole planner step (evaluate, calibrate, filter, score, regularize, select) is
:mod:`kernels.step`, which imports this file's compiled stages; this file imports no other kernel
file.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels._checks import as_unit_coordinates, check_fraction, check_k, named_errors
from kernels._jit import JIT
from kernels._shared import _bits_as_float, _finite

__all__ = ["eligible_set", "select_batch", "select_random"]

TOP_FRACTION = 0.25
W_SCORE = 0.65
W_DIV = 0.35


@njit(**JIT)
def _eligible_count(nf, k, top_fraction):
    """Size of the eligible set: ``m = max(ceil(top_fraction nf), min(k, nf))`` capped at ``nf``.

    Parameters
    ----------
    nf : int
        Number of finite scores.
    k : int
        Batch size.
    top_fraction : float
        Fraction of finite scores eligible (paper: 0.25).

    Returns
    -------
    m : int
    """
    m = int(math.ceil(nf * top_fraction))
    kk = k if k < nf else nf
    if m < kk:
        m = kk
    if m > nf:
        m = nf
    return m


@njit(**JIT)
def _eligible(s, k, top_fraction):
    """Eligible set: the ``m`` highest finite scores.

    Parameters
    ----------
    s : float64[n]
        Regularized scores (NaN = not eligible).
    k : int
        Batch size.
    top_fraction : float
        Fraction of finite scores eligible (paper: 0.25).

    Returns
    -------
    eligible : int64[m]
        Ascending indices; ``m = max(ceil(top_fraction n_f), min(k, n_f))`` capped at ``n_f``.

    Notes
    -----
    The cut ``T`` (the ``m``-th largest finite score) comes from ``np.partition``; entries above
    ``T`` are all taken and entries equal to ``T`` fill the rest in index order.
    """
    n = s.size
    vals = np.empty(n)
    nf = 0
    for j in range(n):
        if _finite(s[j]):
            vals[nf] = s[j]
            nf += 1
    m = _eligible_count(nf, k, top_fraction)
    if m == 0:
        return np.empty(0, dtype=np.int64)
    cut = np.partition(vals[:nf], nf - m)[nf - m]
    n_above = 0
    for t in range(nf):
        n_above += vals[t] > cut
    return _indices_at_or_above(s, cut, m - n_above, m)


@njit(**JIT)
def _indices_at_or_above(s, cut, n_eq, m):
    """Ascending indices of the ``m`` finite entries of ``s`` above ``cut`` (finite) or among its first ``n_eq`` ties."""
    out = np.empty(m, dtype=np.int64)
    q = 0
    for j in range(s.size):
        x = s[j]
        if x > cut and x < np.inf:
            out[q] = j
            q += 1
        elif x == cut and n_eq > 0:
            out[q] = j
            q += 1
            n_eq -= 1
    return out


@njit(**JIT)
def _cut_among(vals, need):
    """The ``need``-th largest of the boundary values ``vals`` (sorted descending in place) and how
    many entries equal to it are taken: ``(cut, n_eq)``."""
    for t in range(1, vals.size):  # descending insertion sort: a few values
        x = vals[t]
        u = t
        while u > 0 and vals[u - 1] < x:
            vals[u] = vals[u - 1]
            u -= 1
        vals[u] = x
    cut = vals[need - 1]
    n_eq = need
    for t in range(need):
        n_eq -= 1 if vals[t] > cut else 0
    return cut, n_eq


_ELIG_ROUNDS = 64
"""Most counting rounds :func:`_eligible_unit` spends bracketing the cut."""
_ELIG_SMALL = 64
"""Most scores :func:`_eligible_unit` sorts directly to find the cut."""


@njit(**JIT)
def _count_at_least(s, t):
    """Number of entries of ``s`` at or above ``t`` (NaN never counts); vectorizes."""
    c = 0
    for j in range(s.size):
        c += s[j] >= t
    return c


@njit(**JIT)
def _eligible_unit(s, m):
    """The ``m`` highest finite scores of ``s`` (values in [0, 1] or NaN), as :func:`_eligible` defines them, for the planner step.

    Parameters
    ----------
    s : float64[n]
        Scores in [0, 1]; NaN = not eligible.
    m : int
        Eligible count, ``0 < m < n_finite``.

    Returns
    -------
    eligible : int64[m]
        Ascending indices.

    Notes
    -----
    The cut (the ``m``-th largest score) is bracketed by an interval ``[lo, hi)`` that holds at most
    ``_ELIG_SMALL`` scores, by bisection of [0, 1]: each round counts the scores at or above the
    midpoint (a vectorized pass); about seven rounds on the paper's pool. One pass collects the
    bracketed scores, which are sorted to find the cut exactly, and :func:`_indices_at_or_above` collects the eligible indices. When ties crowd the cut
    (more than ``_ELIG_SMALL`` equal scores) :func:`_eligible` decides.
    """
    n = s.size
    lo = 0.0  # invariant: at least m scores >= lo, fewer than m >= hi
    hi = np.inf
    c_lo = _count_at_least(s, 0.0)
    c_hi = 0
    for _ in range(_ELIG_ROUNDS):
        if c_lo - c_hi <= _ELIG_SMALL:
            break
        mid = 0.5 * (lo + min(hi, 1.0))
        if not (lo < mid < hi):
            break
        c = _count_at_least(s, mid)
        if c >= m:
            lo, c_lo = mid, c
        else:
            hi, c_hi = mid, c
    c = c_lo - c_hi  # scores in [lo, hi): the cut is among them
    if c > _ELIG_SMALL:
        return _eligible(s, m, 0.0)  # crowded ties: top_fraction 0 gives exactly m (< n_finite)
    need = m - c_hi
    vals = np.empty(c)
    qv = 0
    for j in range(n):  # few match: the branch is well predicted (NaN never matches)
        x = s[j]
        if (x >= lo) & (x < hi):  # one rarely taken branch
            vals[qv] = x
            qv += 1
    cut, n_eq = _cut_among(vals, need)
    return _indices_at_or_above(s, cut, n_eq, m)


_MAG = np.int64(0x7FFFFFFFFFFFFFFF)


@njit(**JIT)
def _order_key(b):
    """Signed-integer key of the float64 bits ``b`` (int64) that orders like the float (NaN aside); an involution."""
    return b if b >= 0 else b ^ _MAG


@njit(**JIT)
def _max_of(x):
    """Largest entry of a contiguous float64 vector without NaN (-inf for an empty one).

    An integer reduction over order-preserving keys of the bit patterns: it vectorizes, which a
    floating-point ``max`` reduction does not without the ``nnan`` flag.
    """
    bits = x.view(np.int64)
    best = _order_key(np.int64(-0x10000000000000))  # key of -inf
    for q in range(bits.size):
        best = max(best, _order_key(bits[q]))
    return _bits_as_float(np.uint64(_order_key(best)))


@njit(**JIT)
def _min_of(x):
    """Smallest entry of a contiguous float64 vector without NaN (+inf for an empty one); see :func:`_max_of`."""
    bits = x.view(np.int64)
    best = np.int64(0x7FF0000000000000)  # key of +inf
    for q in range(bits.size):
        best = min(best, _order_key(bits[q]))
    return _bits_as_float(np.uint64(_order_key(best)))


@njit(**JIT)
def _first_equal(x, value):
    """Index of the first entry of ``x`` equal to ``value`` (``x.size`` if none)."""
    for q in range(x.size):
        if x[q] == value:
            return q
    return x.size


@njit(**JIT)
def _greedy(s, U, elig, k, w_score, w_div):
    """Greedy diverse batch from the eligible set.

    Parameters
    ----------
    s : float64[n]
        Regularized scores (finite at the eligible indices).
    U : float64[n, d]
        Unit coordinates.
    elig : int64[m]
        Ascending eligible indices.
    k : int
        Batch size.
    w_score, w_div : float
        Weights of the normalized score and of the diversity term (paper: 0.65, 0.35).

    Returns
    -------
    picks : int64[min(k, m)]
        Pool indices in pick order.

    Notes
    -----
    Each pick is the first index of the largest objective, ``np.argmax``, written as a vectorized
    maximum (:func:`_max_of`) and a scan for its first occurrence: it runs once per pick.
    """
    m = elig.size
    kk = k if k < m else m
    picks = np.empty(kk, dtype=np.int64)
    if kk == 0:
        return picks
    d = U.shape[1]
    UeT = np.empty((d, m))  # eligible coordinates, one contiguous row per dimension
    se = np.empty(m)
    for q in range(m):
        se[q] = s[elig[q]]
    for c in range(d):  # one dimension at a time: the gathers vectorize
        row = UeT[c]
        for q in range(m):
            row[q] = U[elig[q], c]
    smax = _max_of(se)
    smin = _min_of(se)
    first = _first_equal(se, smax)
    span = smax - smin
    sp = np.empty(m)
    if span > 0.0:
        for q in range(m):
            sp[q] = (se[q] - smin) / span
    else:
        sp[:] = 1.0
    taken = np.zeros(m, dtype=np.bool_)
    dist = np.full(m, np.inf)  # distance to the nearest pick
    acc = np.empty(m)
    val = np.empty(m)
    inv_sqrt_d = 1.0 / np.sqrt(d)
    cur = first
    for t in range(kk):
        taken[cur] = True
        picks[t] = elig[cur]
        if t + 1 == kk:
            break
        row = UeT[0]
        pc = row[cur]
        for q in range(m):
            diff = row[q] - pc
            acc[q] = diff * diff
        for c in range(1, d):
            row = UeT[c]
            pc = row[cur]
            for q in range(m):
                diff = row[q] - pc
                acc[q] += diff * diff
        for q in range(m):  # distance to the nearest pick, and the next pick's objective
            dq = min(dist[q], np.sqrt(acc[q]))
            dist[q] = dq
            val[q] = -np.inf if taken[q] else w_score * sp[q] + w_div * dq * inv_sqrt_d
        cur = _first_equal(val, _max_of(val))
    return picks


@njit(**JIT)
def _select_batch(s, U, k, top_fraction, w_score, w_div):
    """Eligible set and greedy batch (see module docstring).

    Parameters
    ----------
    s : float64[n]
    U : float64[n, d]
    k : int
    top_fraction, w_score, w_div : float

    Returns
    -------
    picks : int64[k']
    eligible : int64[m]
    """
    elig = _eligible(s, k, top_fraction)
    return _greedy(s, U, elig, k, w_score, w_div), elig


@njit(**JIT)
def _select_random(pool_idx, uniforms):
    """Partial Fisher-Yates draw without replacement.

    Parameters
    ----------
    pool_idx : int64[n]
        Candidate indices (ascending).
    uniforms : float64[k]
        Pre-drawn uniforms in [0, 1).

    Returns
    -------
    picks : int64[min(k, n)]
    """
    arr = pool_idx.copy()
    n = arr.size
    kk = uniforms.size if uniforms.size < n else n
    for t in range(kk):
        j = t + int(uniforms[t] * (n - t))
        if j > n - 1:
            j = n - 1
        tmp = arr[t]
        arr[t] = arr[j]
        arr[j] = tmp
    return arr[:kk].copy()


# ---------------------------------------------------------------------------------------------
# Public wrappers
# ---------------------------------------------------------------------------------------------


def _check_scores_unit(s, U) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(s)
    if s.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {s.shape}")
    if s.dtype.kind not in "fiu":
        raise TypeError(f"scores must hold real numbers, got dtype {s.dtype}")
    return np.ascontiguousarray(s, dtype=np.float64), as_unit_coordinates(U, "U", s.shape[0])


@named_errors
def eligible_set(scores, k: int, *, top_fraction: float = TOP_FRACTION) -> np.ndarray:
    """Ascending indices of the eligible points: int64[m] (module docstring)."""
    s = np.asarray(scores)
    if s.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {s.shape}")
    return _eligible(np.ascontiguousarray(s, dtype=np.float64), check_k(k), check_fraction(top_fraction))


@named_errors
def select_batch(
    scores, U, k: int, *, top_fraction: float = TOP_FRACTION, w_score: float = W_SCORE, w_div: float = W_DIV
) -> tuple[np.ndarray, np.ndarray]:
    """Pick a diverse batch of high-scoring pool points (DESIGN "Planner step" 6).

    Args:
        scores: float64[n] regularized scores (NaN = not eligible).
        U: float64[n, d] unit coordinates in [0, 1].
        k: Batch size (>= 0).
        top_fraction: Eligible fraction of the finite scores.
        w_score: Weight of the min-max normalized score.
        w_div: Weight of the distance to the nearest pick (divided by sqrt(d)).

    Returns:
        ``(picks, eligible)``: int64[min(k, m)] unique indices in pick order, int64[m] ascending.
    """
    s, U = _check_scores_unit(scores, U)
    return _select_batch(s, U, check_k(k), check_fraction(top_fraction), float(w_score), float(w_div))


@named_errors
def select_random(available, k: int, *, seed: int | None = None, uniforms=None) -> np.ndarray:
    """Uniform draw of ``min(k, #available)`` available pool indices without replacement (step 7).

    Args:
        available: bool[n_pool] mask of unused pool points.
        k: Batch size.
        seed: Seed of ``np.random.default_rng``; used when ``uniforms`` is None.
        uniforms: float64[>= min(k, #available)] pre-drawn uniforms in [0, 1) (overrides ``seed``).

    Returns:
        int64[min(k, #available)] pool indices in draw order.
    """
    mask = np.asarray(available)
    if mask.ndim != 1 or mask.dtype != np.bool_:
        raise ValueError(f"available must be a 1-D boolean mask, got shape {mask.shape} dtype {mask.dtype}")
    k = check_k(k)
    pool_idx = np.flatnonzero(mask).astype(np.int64)
    kk = min(k, pool_idx.size)
    if uniforms is None:
        if seed is None:
            raise ValueError("needs a seed or pre-drawn uniforms")
        r = np.random.default_rng(seed).random(kk)
    else:
        r = np.ascontiguousarray(uniforms, dtype=np.float64)
        if r.ndim != 1 or r.size < kk:
            raise ValueError(f"uniforms must be 1-D with at least {kk} values, got shape {r.shape}")
        if not np.all((r >= 0.0) & (r < 1.0)):
            raise ValueError("uniforms must lie in [0, 1)")
        r = r[:kk]
    return _select_random(pool_idx, r)
