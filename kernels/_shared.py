"""Compiled helpers shared by several kernel files (private: nothing here is re-exported).

* **Finiteness, range, bits** -- :func:`_finite` (robust to the fast-math flags),
  :func:`_first_outside_unit`, :func:`_bits_as_float`.
* **Quantiles** -- NumPy's "linear" percentile: :func:`_lerp`, :func:`_quantile_sorted` (sorted
  input), :func:`_quartiles` (the 25th/50th/75th percentiles of unsorted finite values).
* **Order keys** -- :func:`_key_of_bits` / :func:`_float_keys` map float64 values to unsigned
  integers that order like the floats; :func:`_insertion_sort_pairs`, :func:`_bit_length`.
* **Linear algebra** -- :func:`_cholesky`, an in-place lower Cholesky factor (the GP surrogate's
  kernel matrices, the Levenberg-Marquardt steps of ``kernels.lm``).
* **Order statistics** -- :func:`_select_ranks`, a histogram select over order keys that finds
  several ranks of 2048 values in a few branch-free passes. It is the one optimization of the
  pairwise step kept on purpose: a plain ``np.partition`` of each row costs about ten times as
  much and would put the planner step below ten times its NumPy twin.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels._jit import JIT


@njit(**JIT)
def _finite(x):
    """``x`` is neither NaN nor infinite, robust to the JIT's fastmath flags.

    Numba lowers ``np.isfinite(x)`` as "``x - x`` is not NaN"; with ``reassoc`` + ``nsz`` LLVM folds
    that to true whenever ``x`` is itself computed (e.g. ``_finite(a - b)``). An ordered
    comparison of ``|x|`` with infinity cannot be folded without ``nnan``/``ninf``.
    """
    return abs(x) < np.inf


_SIGN = np.uint64(0x8000000000000000)


@njit(**JIT)
def _key_of_bits(b):
    """Order-preserving unsigned key of the float64 with bit pattern ``b`` (uint64).

    Negative values get all bits flipped, non-negative ones the sign bit set, so unsigned key order
    is float order; ``-0.0`` maps like ``+0.0`` (they compare equal).
    """
    b = np.uint64(0) if b == _SIGN else b
    return ~b if (b & _SIGN) else (b | _SIGN)


@njit(**JIT)
def _float_keys(x):
    """Order-preserving unsigned keys of finite float64 values.

    Negative values get all bits flipped, non-negative ones the sign bit set, so unsigned key order
    is float order; ``-0.0`` maps like ``+0.0`` (they compare equal).

    Parameters
    ----------
    x : float64[n]
        Finite values.

    Returns
    -------
    keys : uint64[n]
    """
    n = x.size
    bits = x.view(np.uint64)
    keys = np.empty(n, dtype=np.uint64)
    for j in range(n):  # vectorizes: selects only
        keys[j] = _key_of_bits(bits[j])
    return keys


@njit(**JIT)
def _bit_length(v):
    """Number of significant bits of the uint64 ``v`` (0 for 0), by binary search."""
    nb = 0
    for half in (32, 16, 8, 4, 2, 1):
        h = np.uint64(half)
        if v >> h:
            v >>= h
            nb += half
    return nb + (1 if v else 0)


@njit(**JIT)
def _insertion_sort_pairs(keys, payload):
    """Stable ascending insertion sort of ``keys`` in place, moving ``payload`` along (nearly sorted or short input)."""
    for a in range(1, keys.size):
        k = keys[a]
        if keys[a - 1] > k:
            p = payload[a]
            u = a
            while u > 0 and keys[u - 1] > k:
                keys[u] = keys[u - 1]
                payload[u] = payload[u - 1]
                u -= 1
            keys[u] = k
            payload[u] = p


@njit(**JIT)
def _bits_as_float(b):
    """The float64 with bit pattern ``b`` (uint64)."""
    out = np.empty(1, dtype=np.uint64)
    out[0] = b
    return out.view(np.float64)[0]


@njit(**JIT)
def _first_outside_unit(a):
    """Flat index of the first entry of ``a`` (any shape, C order) outside [0, 1] (NaN included), or -1.

    A branch-free count of the entries inside (vectorizes) decides whether the scan is needed.
    """
    flat = a.ravel()
    inside = 0
    for t in range(flat.size):
        u = flat[t]
        inside += (u >= 0.0) & (u <= 1.0)
    if inside == flat.size:
        return -1
    for t in range(flat.size):
        u = flat[t]
        if not (u >= 0.0 and u <= 1.0):
            return t
    return -1


@njit(**JIT)
def _lerp(a, b, t):
    """NumPy's two-sided linear interpolation between ``a`` and ``b`` at ``t`` in [0, 1]."""
    diff = b - a
    if t >= 0.5:
        return b - diff * (1.0 - t)
    return a + diff * t


@njit(**JIT)
def _quantile_sorted(v, n, q):
    """Quantile ``q`` in [0, 1] of the first ``n >= 1`` entries of the ascending array ``v`` (NumPy "linear").

    ``lerp(v[lo], v[lo + 1], t)`` with ``lo + t = q (n - 1)``; NumPy's two-sided lerp
    (:func:`_lerp`) makes the result match ``np.percentile`` bit for bit.
    """
    idx = q * (n - 1)
    lo = int(np.floor(idx))
    if lo > n - 1:
        lo = n - 1
    hi = lo + 1 if lo + 1 < n else n - 1
    return _lerp(v[lo], v[hi], idx - lo)


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


@njit(**JIT)
def _cholesky(A):  # pragma: no cover - compiled
    """Lower Cholesky factor of ``A`` in place (upper part left as is); False when a pivot is not positive."""
    n = A.shape[0]
    for j in range(n):
        s = A[j, j]
        for q in range(j):
            s -= A[j, q] * A[j, q]
        if not (s > 0.0 and s < math.inf):
            return False
        piv = math.sqrt(s)
        A[j, j] = piv
        for i in range(j + 1, n):
            t = A[i, j]
            for q in range(j):
                t -= A[i, q] * A[j, q]
            A[i, j] = t / piv
    return True
