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
:func:`_quantile_sorted` (sorted input) and :func:`_quartiles` (histogram select over order-preserving integer keys). Moments are plain sums, on the row divided by its largest
finite magnitude when that lies outside [1e-100, 1e100] (no overflow or underflow when squaring). A row whose
standard deviation is at most ``const_rel`` times its largest finite magnitude counts as constant,
which absorbs the rounding of the mean of identical values.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._jit import JIT
from kernels.rank_reg import _bit_length, _finite, _float_keys, _insertion_sort_pairs

__all__ = ["variance_scores", "pairwise_scores", "finite_fraction"]

CONST_REL = 1e-12
"""A row whose standard deviation is at most ``CONST_REL`` times its largest finite magnitude is constant."""

SAFE_LO = 1e-100
SAFE_HI = 1e100
"""Largest finite magnitudes outside [SAFE_LO, SAFE_HI] are rescaled before squaring."""

PAIRWISE_DIRECT_MAX = 16
"""Up to this many usable hypotheses the pairwise score sums pairs directly; above it, by sorting."""


@njit(**JIT)
def _quantile_sorted(v, n, q):
    """Quantile ``q`` of the first ``n`` entries of an ascending array (NumPy "linear" method).

    Parameters
    ----------
    v : float64[>= n]
        Ascending values; only ``v[:n]`` is read.
    n : int
        Number of values, ``n >= 1``.
    q : float
        Quantile in [0, 1].

    Returns
    -------
    float
        ``lerp(v[lo], v[lo + 1], t)`` with ``lo + t = q (n - 1)``, using NumPy's two-sided lerp
        (``b - (b - a)(1 - t)`` when ``t >= 0.5``) so results match ``np.percentile`` bit for bit.
    """
    idx = q * (n - 1)
    lo = int(np.floor(idx))
    if lo > n - 1:
        lo = n - 1
    hi = lo + 1 if lo + 1 < n else n - 1
    t = idx - lo
    a = v[lo]
    b = v[hi]
    diff = b - a
    if t >= 0.5:
        return b - diff * (1.0 - t)
    return a + diff * t


@njit(**JIT)
def _lerp(a, b, t):
    """NumPy's two-sided linear interpolation between ``a`` and ``b`` at ``t`` in [0, 1]."""
    diff = b - a
    if t >= 0.5:
        return b - diff * (1.0 - t)
    return a + diff * t


_SELECT_BITS = 9
"""The order-statistic select histograms the keys' range into ``2^_SELECT_BITS`` buckets."""
_SELECT_GROUP = 16
"""Buckets per group of the walk up the select's histogram."""
_SELECT_SUB = 3
"""Log-scale buckets split each octave of key offsets in ``2^_SELECT_SUB``."""
_SELECT_CROWD = 16
"""A target bucket holding more than ``1/_SELECT_CROWD`` of a segment is gathered through flags."""
_SELECT_SMALL = 32
"""Target buckets of at most this many keys are sorted directly; larger ones are selected from again."""


def _byte_tables():
    """Set-bit positions (ascending, padded with 0) and popcount of every byte value."""
    pos = np.zeros((256, 8), dtype=np.int64)
    cnt = np.zeros(256, dtype=np.int64)
    for b in range(256):
        bits = [t for t in range(8) if b >> t & 1]
        pos[b, : len(bits)] = bits
        cnt[b] = len(bits)
    return pos, cnt


_BYTE_POS, _BYTE_CNT = _byte_tables()
_B0, _B1, _B2, _B3, _B4, _B5, _B6, _B7 = (np.uint64(1 << t) for t in range(8))
_S7, _S14, _S21, _S28, _S35, _S42, _S49 = (np.uint64(7 * t) for t in range(1, 8))


@njit(**JIT)
def _flag_positions(flags, count):
    """Ascending positions of the 1 bytes of ``flags`` (uint8[8 w], 0/1), ``count`` of them: int64[count].

    Each 8-byte word is packed into a byte (shifts and masks) whose set bits are copied out through a
    256-entry position table: no per-entry branches, which flags set at random positions would
    otherwise mispredict.
    """
    words = flags.view(np.uint64)
    out = np.empty(count + 8, dtype=np.int64)
    q = 0
    for w in range(words.size):
        x = words[w]  # byte t's low bit (bit 8t) moves to bit t
        b = np.int64(
            (x & _B0) | ((x >> _S7) & _B1) | ((x >> _S14) & _B2) | ((x >> _S21) & _B3)
            | ((x >> _S28) & _B4) | ((x >> _S35) & _B5) | ((x >> _S42) & _B6) | ((x >> _S49) & _B7)
        )  # fmt: skip
        base = 8 * w
        for t in range(8):
            out[q + t] = base + _BYTE_POS[b, t]
        q += _BYTE_CNT[b]
    return out[:count]


@njit(**JIT)
def _select_ranks(x, ranks):
    """Positions of order statistics of finite values at several 0-based ranks, by histogram select.

    Parameters
    ----------
    x : float64[m]
        Finite values (contiguous; not modified).
    ranks : int64[r]
        Ranks in ``[0, m)`` (any order, repeats allowed).

    Returns
    -------
    pos : int64[r]
        ``x[pos[t]]`` is the value of rank ``ranks[t]`` (any of equal values).

    Notes
    -----
    Works on the values' order-preserving integer keys (:func:`_select_key_ranks`): no
    comparison branches, ``O(m)`` passes whatever the clustering.
    """
    m = x.size
    pos = np.empty(ranks.size, dtype=np.int64)
    _select_key_ranks(_float_keys(x), np.arange(m), ranks, pos)
    return pos


@njit(**JIT)
def _grown(a, used, cap):
    """A copy of ``a`` (1-D, or 2-D by rows) with room for ``cap`` entries, its first ``used`` kept."""
    b = np.empty((cap,) + a.shape[1:], dtype=a.dtype)
    b[:used] = a[:used]
    return b


@njit(**JIT)
def _select_level(seg, kmin, kmax, log_scale, bid):
    """Bucket of each key of ``seg`` (uint64[L] in ``[kmin, kmax]``, ``kmin < kmax``) into ``bid``; returns the bucket count.

    Linear: ``2^_SELECT_BITS`` buckets over ``[kmin, kmax]``. Log scale: by octave of the offset
    from ``kmin``, ``2^_SELECT_SUB`` buckets per octave. Both are monotone in the key.
    """
    L = seg.size
    if log_scale:
        off = np.empty(L)
        for j in range(L):
            off[j] = np.float64(seg[j] - kmin)  # rounding keeps the order (ties allowed)
        ob = off.view(np.uint64)
        base = np.uint64((1023 << _SELECT_SUB) - 1)  # offset 1.0 -> bucket 1; offset 0 -> bucket 0
        top = np.int64(0)
        for j in range(L):
            e = ob[j] >> np.uint64(52 - _SELECT_SUB)
            b = np.int64(e - base) if e > base else 0
            bid[j] = b
            top = max(top, b)
        return top + 1
    nbits = _bit_length(kmax - kmin)
    shift = np.uint64(nbits - _SELECT_BITS if nbits > _SELECT_BITS else 0)
    for j in range(L):
        bid[j] = np.int64((seg[j] - kmin) >> shift)
    return np.int64((kmax - kmin) >> shift) + 1


@njit(**JIT)
def _gather_members(bid, child, seg, segw, pool_k, pool_w, tasks, t0, t1, hist):
    """Copy the keys (and positions) of the target buckets into their child segments (tasks ``t0:t1``).

    One pass with a rarely taken branch when every target bucket is small; a crowded bucket (more
    than ``1/_SELECT_CROWD`` of the keys) would mispredict that branch, so then each bucket's
    members are found through 0/1 flags (:func:`_flag_positions`).
    """
    L = bid.size
    crowded = False
    for tk in range(t0, t1):
        crowded = crowded or hist[tasks[tk, 5]] * _SELECT_CROWD > L
    if not crowded:
        for j in range(L):
            tk = child[bid[j]]
            if tk >= 0:
                dst = tasks[tk, 0] + tasks[tk, 1]
                pool_k[dst] = seg[j]
                pool_w[dst] = segw[j]
                tasks[tk, 1] += 1
        return
    flags = np.zeros(8 * ((L + 7) // 8), dtype=np.uint8)
    for tk in range(t0, t1):
        b = tasks[tk, 5]
        for j in range(L):
            flags[j] = bid[j] == b
        dst = tasks[tk, 0]
        for p in _flag_positions(flags, hist[b]):
            pool_k[dst] = seg[p]
            pool_w[dst] = segw[p]
            dst += 1
        tasks[tk, 1] = hist[b]


@njit(**JIT)
def _count_buckets(bid, hist):
    """``hist[b] +=`` the number of entries of ``bid`` equal to ``b``."""
    for j in range(bid.size):
        hist[bid[j]] += 1


@njit(**JIT)
def _select_key_ranks(keys, where, ranks, out):
    """Positions (from ``where``) of the keys at several 0-based ranks of ``keys``.

    Parameters
    ----------
    keys : uint64[m]
        Keys (not modified).
    where : int64[m]
        Position carried with each key.
    ranks : int64[r]
        Ranks in ``[0, m)`` (any order, repeats allowed).
    out : int64[r]
        Receives ``where`` of the key at each rank.

    Notes
    -----
    A segment of keys is histogrammed over its own range (:func:`_select_level`); a walk up the
    counts (by groups of ``_SELECT_GROUP`` buckets, then by bucket) gives the bucket and local rank
    of each requested rank, and one pass gathers the members of those few buckets into new
    segments. A segment of at most ``_SELECT_SMALL`` keys is sorted; a larger one is bucketed
    again with the other scale: values clustered near one number with a tail spread over decades
    (a calibrated hypothesis that barely varies) crowd one linear bucket but spread over the
    octaves, and values spread evenly crowd the top octave but spread linearly. Segments wait on
    an explicit stack (Numba cannot cache recursive functions), ``O(m)`` passes in all.
    """
    m = keys.size
    nr = ranks.size
    cap = 64 * nr + 64  # gathered segments, appended (task -1 is the input itself); grows when crowded
    pool_k = np.empty(cap, dtype=np.uint64)
    pool_w = np.empty(cap, dtype=np.int64)
    used = 0
    rcap = 16 * nr + 16
    rl = np.empty(rcap, dtype=np.int64)  # local rank and output slot of each pending request
    ro = np.empty(rcap, dtype=np.int64)
    for t in range(nr):
        rl[t] = ranks[t]
        ro[t] = t
    rused = nr
    tasks = np.empty((64, 6), dtype=np.int64)  # start, length, log scale, first request, request count, bucket
    tasks[0, 0] = -1
    tasks[0, 1] = m
    tasks[0, 2] = 0
    tasks[0, 3] = 0
    tasks[0, 4] = nr
    ntask = 1
    bid = np.empty(m, dtype=np.int64)
    G = _SELECT_GROUP
    while ntask > 0:
        ntask -= 1
        s0, L, log_scale, q0, nq = tasks[ntask, 0], tasks[ntask, 1], tasks[ntask, 2], tasks[ntask, 3], tasks[ntask, 4]
        if s0 < 0:
            seg = keys
            segw = where
        else:
            seg = pool_k[s0:s0 + L]
            segw = pool_w[s0:s0 + L]
        kmin = seg[0]
        kmax = seg[0]
        for j in range(L):  # vectorizes: integer min/max
            kmin = min(kmin, seg[j])
            kmax = max(kmax, seg[j])
        if L <= _SELECT_SMALL or kmin == kmax:
            if s0 < 0 and kmin != kmax:  # the input is not sorted in place
                seg = seg.copy()
                segw = segw.copy()
            if kmin != kmax:
                _insertion_sort_pairs(seg, segw)  # a small segment
            for u in range(q0, q0 + nq):
                out[ro[u]] = segw[rl[u]]
            continue
        nb = _select_level(seg, kmin, kmax, log_scale == 1, bid[:L])
        ng = (nb + G - 1) // G
        hist = np.zeros(ng * G + nb, dtype=np.int64)  # bucket counts, then each bucket's child task
        _count_buckets(bid[:L], hist)
        group = np.zeros(ng, dtype=np.int64)
        for g in range(ng):
            for b in range(g * G, g * G + G):
                group[g] += hist[b]
        for a in range(q0 + 1, q0 + nq):  # requests in ascending local rank (few: insertion sort)
            r = rl[a]
            o = ro[a]
            u = a
            while u > q0 and rl[u - 1] > r:
                rl[u] = rl[u - 1]
                ro[u] = ro[u - 1]
                u -= 1
            rl[u] = r
            ro[u] = o
        child = hist[ng * G:]
        child[:] = -1
        if used + L > cap or rused + nq > rcap or ntask + nq > tasks.shape[0]:  # grow the stores
            cap = 2 * (used + L)
            pool_k = _grown(pool_k, used, cap)
            pool_w = _grown(pool_w, used, cap)
            if s0 >= 0:
                seg = pool_k[s0:s0 + L]
                segw = pool_w[s0:s0 + L]
            rcap = 2 * (rused + nq)
            rl = _grown(rl, rused, rcap)
            ro = _grown(ro, rused, rcap)
            tasks = _grown(tasks, ntask, 2 * (ntask + nq) + 8)
        cum = 0
        g = 0
        first_task = ntask
        for u in range(q0, q0 + nq):
            r = rl[u]
            while cum + group[g] <= r:
                cum += group[g]
                g += 1
            bk = g * G
            c = cum
            while c + hist[bk] <= r:
                c += hist[bk]
                bk += 1
            if child[bk] < 0:  # a new child segment for this bucket, at the end of the pool
                child[bk] = ntask
                tasks[ntask, 0] = used
                tasks[ntask, 1] = 0
                tasks[ntask, 2] = 1 - log_scale
                tasks[ntask, 3] = rused
                tasks[ntask, 4] = 0
                tasks[ntask, 5] = bk
                used += hist[bk]
                ntask += 1
            tk = child[bk]
            rl[rused] = r - c  # requests of one child are contiguous: ranks ascend, buckets ascend
            ro[rused] = ro[u]
            rused += 1
            tasks[tk, 4] += 1
        _gather_members(bid[:L], child, seg, segw, pool_k, pool_w, tasks, first_task, ntask, hist)
        for tk in range(first_task, ntask):  # the next level rebuckets with the other scale
            tasks[tk, 2] = 1 - log_scale


@njit(**JIT)
def _quartile_ranks(m):
    """The six ranks ``(lo, hi)`` of the 25th, 50th and 75th percentiles of ``m`` values, and the three weights."""
    ranks = np.empty(6, dtype=np.int64)
    ts = np.empty(3)
    for t in range(3):
        idx = (0.25 * (t + 1)) * (m - 1)
        lo = int(np.floor(idx))
        ranks[2 * t] = lo
        ranks[2 * t + 1] = lo + 1 if lo + 1 < m else m - 1
        ts[t] = idx - lo
    return ranks, ts


@njit(**JIT)
def _quartiles_at(vals, pos, ts):
    """``(q25, median, q75)`` from the positions of the six order statistics in ``vals``."""
    q25 = _lerp(vals[pos[0]], vals[pos[1]], ts[0])
    med = _lerp(vals[pos[2]], vals[pos[3]], ts[1])
    q75 = _lerp(vals[pos[4]], vals[pos[5]], ts[2])
    return q25, med, q75


@njit(**JIT)
def _quartiles(vals):
    """``(q25, median, q75)`` of finite values (NumPy "linear" percentiles) without sorting.

    The six order statistics the three interpolations need come from one histogram select
    (:func:`_select_ranks`), ``O(n)``. ``vals`` is not modified.
    """
    ranks, ts = _quartile_ranks(vals.size)
    return _quartiles_at(vals, _select_ranks(vals, ranks), ts)


_ABS_BITS = np.uint64(0x7FFFFFFFFFFFFFFF)
_INF_BITS = np.uint64(0x7FF0000000000000)


@njit(**JIT)
def _bits_as_float(b):
    """The float64 with bit pattern ``b`` (uint64)."""
    out = np.empty(1, dtype=np.uint64)
    out[0] = b
    return out.view(np.float64)[0]


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


def _as_matrix(P, name: str = "P") -> np.ndarray:
    P = np.asarray(P)
    if P.ndim != 2:
        raise ValueError(f"{name} must be a 2-D array [n_hyp, n_pool], got shape {P.shape}")
    if P.dtype.kind not in "fiub":
        raise TypeError(f"{name} must hold real numbers, got dtype {P.dtype}")
    return np.ascontiguousarray(P, dtype=np.float64)


def variance_scores(P, *, const_rel: float = CONST_REL) -> np.ndarray:
    """Variance acquisition score per pool point (eq. S2).

    Args:
        P: float64[n_hyp, n_pool] calibrated committee predictions on the available pool.
        const_rel: Relative sd at or below which a hypothesis counts as constant (zeros).

    Returns:
        float64[n_pool]; NaN where fewer than two finite standardized predictions exist.
    """
    return _variance_scores(_as_matrix(P), float(const_rel))


def pairwise_scores(P, *, const_rel: float = CONST_REL, direct_max: int = PAIRWISE_DIRECT_MAX) -> np.ndarray:
    """Pairwise acquisition score per pool point (eq. S3).

    Args:
        P: float64[n_hyp, n_pool] calibrated committee predictions on the available pool.
        const_rel: Relative sd at or below which the sd fallback scale counts as 0 (row dropped).
        direct_max: Committee size up to which pairs are summed directly (else by sorting).

    Returns:
        float64[n_pool]; NaN where no finite pair exists.
    """
    if int(direct_max) < 0:
        raise ValueError(f"direct_max must be >= 0, got {direct_max}")
    return _pairwise_scores(_as_matrix(P), float(const_rel), int(direct_max))


def finite_fraction(P) -> np.ndarray:
    """Fraction of finite predictions per pool point: float64[n_pool] in [0, 1]."""
    return _finite_fraction(_as_matrix(P))
