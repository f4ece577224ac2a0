"""Raw acquisition scores over a candidate pool (paper S2.1, eqs. S2 and S3).

Both scores measure how much a committee of calibrated hypotheses disagrees at each pool point:

* **variance** (eq. S2): each hypothesis is standardized over the pool by the mean and population
  standard deviation of its finite predictions (a constant finite hypothesis becomes zeros); the
  score is the population variance of the finite standardized predictions at the point, NaN when
  fewer than two are finite.
* **pairwise** (eq. S3): each hypothesis is centred by its median and scaled by its interquartile
  range (its population standard deviation when the IQR is 0); a hypothesis whose scale is not
  positive and finite is dropped. The score is the mean ``|r_i - r_k|`` over finite pairs ``i < k``,
  NaN when there is none.

Medians and quartiles use NumPy's default ("linear") percentile definition, reproduced exactly by
:func:`kernels._shared._quartiles` (an order-statistic select, no sort). Moments are plain sums, on the row divided by its largest
finite magnitude when that lies outside [1e-100, 1e100] (no overflow or underflow when squaring). A row whose
standard deviation is at most ``const_rel`` times its largest finite magnitude counts as constant,
which absorbs the rounding of the mean of identical values.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import check_points_last, named_errors
from kernels._jit import JIT
from kernels._shared import _bits_as_float, _finite, _quartiles

__all__ = ["variance_scores", "pairwise_scores", "finite_fraction"]

CONST_REL = 1e-12
"""A row whose standard deviation is at most ``CONST_REL`` times its largest finite magnitude is constant."""

SAFE_LO = 1e-100
SAFE_HI = 1e100
"""Largest finite magnitudes outside [SAFE_LO, SAFE_HI] are rescaled before squaring."""

PAIRWISE_DIRECT_MAX = 16
"""Up to this many usable hypotheses the pairwise score sums pairs directly; above it, by sorting."""


_ABS_BITS = np.uint64(0x7FFFFFFFFFFFFFFF)
_INF_BITS = np.uint64(0x7FF0000000000000)


@njit(**JIT)
def _row_moments(P, i):
    """Finite count, scale factor, mean and population sd of row ``i`` of ``P`` in scaled units.

    Returns ``(cnt, inv, mu, sd, maxabs)`` with ``z = (p * inv - mu) / sd``. ``inv = 1`` while the
    largest finite magnitude ``maxabs`` lies in [SAFE_LO, SAFE_HI]; outside it the row is
    multiplied by ``inv = 1 / maxabs`` so squares neither overflow nor underflow.

    Loops are written as selects (``x if finite else 0``) rather than ``if`` blocks: LLVM
    vectorizes the select form and not the branch form.
    """
    row = P[i]
    n = row.size
    bits = row.view(np.uint64)
    cnt = 0
    s = 0.0
    mb = np.uint64(0)
    for j in range(n):  # count, sum and largest magnitude in one pass; the magnitude as an unsigned
        # integer reduction on the bits (they order like the value for non-negative doubles), which
        # vectorizes where a floating-point max without nnan does not
        p = row[j]
        f = abs(p) < np.inf
        cnt += f
        s += p if f else 0.0
        b = bits[j] & _ABS_BITS
        mb = max(mb, b if b < _INF_BITS else np.uint64(0))
    maxabs = _bits_as_float(mb)
    if cnt == 0:
        return 0, 1.0, np.nan, np.nan, 0.0
    inv = 1.0
    if maxabs > SAFE_HI or (maxabs < SAFE_LO and maxabs > 0.0):
        inv = 1.0 / maxabs
        if not _finite(inv):
            inv = 1.0
        s = 0.0
        for j in range(n):
            p = row[j]
            s += p * inv if abs(p) < np.inf else 0.0
    mu = s / cnt
    s2 = 0.0
    for j in range(n):
        p = row[j]
        dv = p * inv - mu
        s2 += dv * dv if abs(p) < np.inf else 0.0
    return cnt, inv, mu, np.sqrt(s2 / cnt), maxabs


@njit(**JIT)
def _variance_scores(P, const_rel):
    """Variance acquisition score (eq. S2).

    Parameters
    ----------
    P : float64[n_hyp, n_pool]
        Calibrated predictions of the committee on the available pool (NaN/inf = undefined).
    const_rel : float
        Relative standard deviation at or below which a hypothesis counts as constant.

    Returns
    -------
    score : float64[n_pool]
        ``(1/|I_j|) sum_{i in I_j} (z_ij - zbar_j)^2`` with ``z_ij = (p_ij - mu_i) / sigma_i``
        (zeros for a constant finite row); NaN where ``|I_j| < 2``.

    Notes
    -----
    Two passes over the committee per point (mean, then squared deviations), row by row so every
    loop runs over contiguous memory and vectorizes.
    """
    n = P.shape[1]
    out = np.empty(n)
    _variance_fraction(P, const_rel, out, np.empty(n))
    return out


@njit(**JIT)
def _variance_fraction(P, const_rel, out, cnt):
    """:func:`_variance_scores` and :func:`_finite_fraction` of ``P`` from one set of passes.

    Writes the scores into ``out`` and the finite fractions into ``cnt`` (float64[n_pool] each).
    """
    n_hyp, n = P.shape
    cnt[:] = 0.0
    s1 = np.zeros(n)
    Z = np.empty((n_hyp, n))
    for i in range(n_hyp):
        c, inv, mu, sd, maxabs = _row_moments(P, i)
        if c == 0:
            Z[i, :] = np.nan
            continue
        constant = sd <= const_rel * maxabs * inv
        isd = 0.0 if constant else 1.0 / sd
        row = P[i]
        zrow = Z[i]
        for j in range(n):
            p = row[j]
            f = abs(p) < np.inf
            z = (p * inv - mu) * isd  # z = (p - mu_i) / sigma_i
            zrow[j] = z if f else np.nan
            cnt[j] += 1.0 if f else 0.0
            s1[j] += z if f else 0.0
    s2 = np.zeros(n)
    for i in range(n_hyp):
        zrow = Z[i]
        if i == 0:  # the first pass also turns the sums into means
            for j in range(n):
                mean = s1[j] / cnt[j] if cnt[j] > 0 else 0.0
                s1[j] = mean
                dz = zrow[j] - mean
                s2[j] += dz * dz if abs(dz) < np.inf else 0.0
        else:
            for j in range(n):
                dz = zrow[j] - s1[j]
                s2[j] += dz * dz if abs(dz) < np.inf else 0.0
    for j in range(n):
        c = cnt[j]
        out[j] = s2[j] / c if c >= 2 else np.nan
        cnt[j] = c / n_hyp if n_hyp > 0 else c  # finite fraction, as _finite_fraction computes it


@njit(**JIT)
def _compact_finite(v, out):
    """Copy the finite entries of ``v`` to the front of ``out`` in order.

    Parameters
    ----------
    v : float64[n]
        Values (any stride).
    out : float64[>= n]
        Receives the finite values in ``out[:m]``.

    Returns
    -------
    m : int
        Number of finite values.
    """
    m = 0
    for t in range(v.size):
        x = v[t]
        if _finite(x):
            out[m] = x
            m += 1
    return m


@njit(**JIT)
def _normalize_row(P, i, has, med, iqr, const_rel, R):
    """Row ``i`` of ``R`` = row ``i`` of ``P`` centred by ``med`` and scaled by ``iqr`` (sd fallback).

    ``has``: the row has a finite value (else it is dropped). Where the IQR is not positive and
    finite the population sd is the scale; a row whose scale is still not positive and finite is
    dropped (all NaN).
    """
    scale = iqr if has else 0.0
    if has and not (scale > 0.0 and _finite(scale)):
        c, inv, mu, sd, maxabs = _row_moments(P, i)
        scale = 0.0 if sd <= const_rel * maxabs * inv else sd / inv
    rrow = R[i]
    if not (scale > 0.0 and _finite(scale)):
        rrow[:] = np.nan
        return
    iscale = 1.0 / scale
    row = P[i]
    for j in range(row.size):
        p = row[j]
        rrow[j] = (p - med) * iscale if abs(p) < np.inf else np.nan  # (p - median) / scale


@njit(**JIT)
def _row_quartile_stats(P, i, buf):
    """``(has, median, iqr)`` of the finite entries of row ``i`` (``buf``: float64[n] work space)."""
    row = P[i]
    n = row.size
    m = 0
    for j in range(n):  # branch-free count: an all-finite row needs no copy
        m += abs(row[j]) < np.inf
    if m == 0:
        return False, 0.0, 0.0
    vals = row if m == n else buf[: _compact_finite(row, buf)]
    q25, med, q75 = _quartiles(vals)
    return True, med, q75 - q25


@njit(**JIT)
def _pairwise_normalize(P, const_rel):
    """Rows of ``P`` centred by median and scaled by IQR (sd fallback); dropped rows are all NaN."""
    n_hyp, n = P.shape
    R = np.empty((n_hyp, n))
    buf = np.empty(n)
    for i in range(n_hyp):
        has, med, iqr = _row_quartile_stats(P, i, buf)
        _normalize_row(P, i, has, med, iqr, const_rel, R)
    return R


@njit(**JIT)
def _pairwise_scores(P, const_rel, direct_max):
    """Pairwise acquisition score (eq. S3).

    Parameters
    ----------
    P : float64[n_hyp, n_pool]
        Calibrated predictions of the committee on the available pool.
    const_rel : float
        Relative standard deviation at or below which the sd fallback scale counts as 0.
    direct_max : int
        With at most this many hypotheses the pairs are summed directly (``O(n_hyp^2)`` per
        point); above it each point's finite values are sorted and
        ``sum_{i<k} |r_i - r_k| = sum_t r_(t) (2t - m + 1)`` (``O(n_hyp log n_hyp)``).

    Returns
    -------
    score : float64[n_pool]
        ``(1/|P_j|) sum_{(i,k) in P_j} |r_ij - r_kj|`` over finite pairs ``i < k``; NaN if none.
        ``r_ij = (p_ij - median_i) / scale_i``, ``scale_i`` = IQR, else population sd.
    """
    return _pair_disagreement(_pairwise_normalize(P, const_rel), direct_max)


@njit(**JIT)
def _pair_disagreement(R, direct_max):
    """Mean ``|r_i - r_k|`` over the finite pairs of each column of the normalized rows ``R`` (NaN if none)."""
    n_hyp, n = R.shape
    out = np.empty(n)
    if n_hyp <= direct_max:
        acc = np.zeros(n)
        cnt = np.zeros(n, dtype=np.int64)
        for i in range(n_hyp):
            ri = R[i]
            for k in range(i + 1, n_hyp):
                rk = R[k]
                for j in range(n):
                    d = abs(ri[j] - rk[j])
                    f = d < np.inf
                    acc[j] += d if f else 0.0
                    cnt[j] += 1 if f else 0
        for j in range(n):
            out[j] = acc[j] / cnt[j] if cnt[j] > 0 else np.nan
        return out
    col = np.empty(n_hyp)
    for j in range(n):
        m = _compact_finite(R[:, j], col)
        if m < 2:
            out[j] = np.nan
            continue
        srt = np.sort(col[:m])
        s = 0.0
        for t in range(m):
            s += srt[t] * (2 * t - m + 1)
        out[j] = s / (0.5 * m * (m - 1))
    return out


@njit(**JIT)
def _finite_fraction(P):
    """Fraction of finite predictions per pool point.

    Parameters
    ----------
    P : float64[n_hyp, n_pool]

    Returns
    -------
    v : float64[n_pool]
        ``#{i : p_ij finite} / n_hyp`` (0 when ``n_hyp == 0``).
    """
    n_hyp, n = P.shape
    cnt = np.zeros(n)
    for i in range(n_hyp):
        row = P[i]
        for j in range(n):
            cnt[j] += 1.0 if abs(row[j]) < np.inf else 0.0
    if n_hyp > 0:
        for j in range(n):
            cnt[j] /= n_hyp
    return cnt


def _as_matrix(P, n_points, name: str = "P") -> np.ndarray:
    P = np.asarray(P)
    if P.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array (n_hyp, n_pool), got shape {P.shape}")
    if P.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, got dtype {P.dtype}")
    check_points_last(P, name, n_points)
    return np.ascontiguousarray(P, dtype=np.float64)


@named_errors
def variance_scores(P, *, const_rel: float = CONST_REL, n_points: int | None = None) -> np.ndarray:
    """Variance acquisition score per pool point (eq. S2).

    Args:
        P: float64[n_hyp, n_pool] calibrated committee predictions on the available pool.
        const_rel: Relative sd at or below which a hypothesis counts as constant (zeros).
        n_points: The pool size, when stated: ``P`` must have that many columns. Needed only when
            the committee is larger than the pool.

    Returns:
        float64[n_pool]; NaN where fewer than two finite standardized predictions exist.

    Raises:
        ValueError: when ``P`` is not 2-D, or looks transposed: with ``n_points`` left out, ``P``
            must not have more rows (hypotheses) than columns (pool points).
        TypeError: when ``P`` does not hold real numbers.
    """
    return _variance_scores(_as_matrix(P, n_points), float(const_rel))


@named_errors
def pairwise_scores(
    P, *, const_rel: float = CONST_REL, direct_max: int = PAIRWISE_DIRECT_MAX, n_points: int | None = None
) -> np.ndarray:
    """Pairwise acquisition score per pool point (eq. S3).

    Args:
        P: float64[n_hyp, n_pool] calibrated committee predictions on the available pool.
        const_rel: Relative sd at or below which the sd fallback scale counts as 0 (row dropped).
        direct_max: Committee size up to which pairs are summed directly (else by sorting).
        n_points: The pool size, when stated (as for :func:`variance_scores`).

    Returns:
        float64[n_pool]; NaN where no finite pair exists.

    Raises:
        ValueError: as :func:`variance_scores`, or on a negative ``direct_max``.
    """
    if int(direct_max) < 0:
        raise ValueError(f"direct_max must be >= 0, got {direct_max}")
    return _pairwise_scores(_as_matrix(P, n_points), float(const_rel), int(direct_max))


@named_errors
def finite_fraction(P, *, n_points: int | None = None) -> np.ndarray:
    """Fraction of finite predictions per pool point: float64[n_pool] in [0, 1].

    ``P`` is float64[n_hyp, n_pool], checked as by :func:`variance_scores` (``n_points`` the same).
    """
    return _finite_fraction(_as_matrix(P, n_points))
