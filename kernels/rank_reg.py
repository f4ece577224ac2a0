"""Rank regularization of raw acquisition scores (paper S2.2, eq. S4).

``s~_j = rho_j * clip((e_j - edge_lo) / (edge_hi - edge_lo), 0, 1) ** power * v_j`` where

* ``rho_j`` is the ordinal rank of the finite raw score in [0, 1]: finite scores sorted ascending by
  a stable sort (equal scores: the earlier index ranks lower), ``rho = rank / (n_finite - 1)``, and
  ``rho = 1`` when only one score is finite;
* ``e_j = min_k min(u_jk, 1 - u_jk)`` is the distance of the point's unit coordinates to the nearest
  face of the unit cube (paper constants ``edge_lo = 0.08``, ``edge_hi = 0.5``, ``power = 1.5``);
* ``v_j`` is the fraction of finite hypothesis predictions at the point.

A non-finite raw score gives ``s~ = NaN`` (the point is not eligible for selection).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import as_float_array
from kernels._jit import JIT

__all__ = ["stable_argsort", "ordinal_rank", "edge_weight", "rank_regularize"]

EDGE_LO = 0.08
EDGE_HI = 0.5
EDGE_POWER = 1.5


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


_RADIX_SMALL = 32
"""Buckets of at most this many keys are left to the final insertion pass of :func:`_radix_sort_pairs`."""


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
def _radix_sort_pairs(keys, order):
    """Sort ``keys`` (uint64[n]) ascending in place, stably, moving ``order`` (int64[n]) along.

    Most-significant-digit radix sort: a segment is split stably into ``2^b`` buckets (``b`` one
    less than the bit length of its size, at most 11) by the top bits of its own key range; buckets
    of more than ``_RADIX_SMALL`` keys are split again. Small buckets stay where the split put them,
    already in key order relative to each other, and one insertion pass over the whole array
    finishes them. The two halves of a segment count and scatter through separate counters, which
    keeps runs of equal digits from serializing on one counter. Used by :func:`_prefix_sort_pairs`
    for long runs of keys sharing their prefix (tight clusters of nearly equal scores).
    """
    n = keys.size
    if n < 2:
        return
    tk = np.empty(n, dtype=np.uint64)
    to = np.empty(n, dtype=np.int64)
    dig = np.empty(n, dtype=np.int64)
    cnt = np.empty(4096, dtype=np.int64)
    # pending segments are disjoint and hold > _RADIX_SMALL keys each
    stack = np.empty((n // (_RADIX_SMALL + 1) + 2, 2), dtype=np.int64)
    stack[0, 0] = 0
    stack[0, 1] = n
    sp = 1
    while sp > 0:
        sp -= 1
        lo = stack[sp, 0]
        hi = stack[sp, 1]
        kmin = keys[lo]
        kmax = keys[lo]
        for t in range(lo + 1, hi):
            k = keys[t]
            kmin = min(kmin, k)
            kmax = max(kmax, k)
        if kmin == kmax:
            continue
        nb = _bit_length(kmax - kmin)
        digits = min(max(_bit_length(np.uint64(hi - lo)) - 1, 3), 11, nb)
        shift = np.uint64(nb - digits)
        nbk = 1 << digits
        cnt[: 2 * nbk] = 0
        # The segment's two halves keep separate counters (even / odd slots of ``cnt``): runs of
        # equal digits, common in clustered scores, then form two independent store-to-load
        # chains instead of one. The second half's bucket offsets follow the first half's, so
        # the scatter stays stable.
        half = (hi - lo) >> 1
        mid = lo + half
        for t in range(half):
            d0 = np.int64((keys[lo + t] - kmin) >> shift)
            d1 = np.int64((keys[mid + t] - kmin) >> shift)
            dig[lo + t] = d0
            dig[mid + t] = d1
            cnt[2 * d0] += 1
            cnt[2 * d1 + 1] += 1
        if (hi - lo) & 1:
            d1 = np.int64((keys[hi - 1] - kmin) >> shift)
            dig[hi - 1] = d1
            cnt[2 * d1 + 1] += 1
        pos = lo
        for b in range(nbk):  # bucket starts; large buckets are queued for another split
            c0 = cnt[2 * b]
            c = c0 + cnt[2 * b + 1]
            cnt[2 * b] = pos
            cnt[2 * b + 1] = pos + c0
            if c > _RADIX_SMALL:
                stack[sp, 0] = pos
                stack[sp, 1] = pos + c
                sp += 1
            pos += c
        for t in range(half):
            d0 = dig[lo + t]
            d1 = dig[mid + t]
            q0 = cnt[2 * d0]
            cnt[2 * d0] = q0 + 1
            q1 = cnt[2 * d1 + 1]
            cnt[2 * d1 + 1] = q1 + 1
            tk[q0] = keys[lo + t]
            to[q0] = order[lo + t]
            tk[q1] = keys[mid + t]
            to[q1] = order[mid + t]
        if (hi - lo) & 1:
            q1 = cnt[2 * dig[hi - 1] + 1]
            tk[q1] = keys[hi - 1]
            to[q1] = order[hi - 1]
        keys[lo:hi] = tk[lo:hi]
        order[lo:hi] = to[lo:hi]
    _insertion_sort_pairs(keys, order)  # only keys within a small bucket are out of order


_PREFIX_BITS = 33
"""Width of the key prefix sorted by the three 11-bit LSD passes of :func:`_prefix_sort_pairs`."""


@njit(**JIT)
def _prefix_sort_pairs(keys, order):
    """Sort ``keys`` (uint64[n]) ascending in place, stably, moving ``order`` (int64[n]) along.

    Parameters
    ----------
    keys : uint64[n]
        Order-preserving keys (:func:`_float_keys`); sorted in place.
    order : int64[n]
        Payload moved with the keys (indices ascending on entry for an argsort).

    Notes
    -----
    Least-significant-digit radix sort of a ``_PREFIX_BITS``-bit prefix: the window of bits just
    below the highest bit in which the keys differ (bits common to all keys carry no order). One
    pass over the keys fills the three 11-bit digit histograms; each scatter pass is stable, and a
    pass whose digit is the same for every key (its bits equal in the OR and the AND of all keys)
    is skipped. Keys sharing the whole prefix are then adjacent and in index order; each such run
    is finished on the full key: an insertion sort for short runs, :func:`_radix_sort_pairs` (MSD,
    adaptive to the run's own key range) for runs longer than ``_RADIX_SMALL``.
    """
    n = keys.size
    if n < 2:
        return
    kor = keys[0]
    kand = keys[0]
    for t in range(1, n):
        kor |= keys[t]
        kand &= keys[t]
    diff = kor ^ kand
    if diff == 0:
        return
    hb = _bit_length(diff)
    low = hb - _PREFIX_BITS if hb > _PREFIX_BITS else 0
    mask = np.uint64(0x7FF)
    s0 = np.uint64(low)
    s1 = np.uint64(low + 11)
    s2 = np.uint64(low + 22)
    cnt = np.zeros(3 * 2048, dtype=np.int64)
    for t in range(n):
        k = keys[t]
        cnt[np.int64((k >> s0) & mask)] += 1
        cnt[2048 + np.int64((k >> s1) & mask)] += 1
        cnt[4096 + np.int64((k >> s2) & mask)] += 1
    src_k = keys
    src_o = order
    dst_k = np.empty(n, dtype=np.uint64)
    dst_o = np.empty(n, dtype=np.int64)
    flipped = False
    for p in range(3):
        sh = np.uint64(low + 11 * p)
        if ((diff >> sh) & mask) == 0:
            continue
        base = 2048 * p
        pos = 0
        for b in range(2048):
            c = cnt[base + b]
            cnt[base + b] = pos
            pos += c
        for t in range(n):
            k = src_k[t]
            d = base + np.int64((k >> sh) & mask)
            q = cnt[d]
            cnt[d] = q + 1
            dst_k[q] = k
            dst_o[q] = src_o[t]
        src_k, dst_k = dst_k, src_k
        src_o, dst_o = dst_o, src_o
        flipped = not flipped
    if flipped:
        keys[:] = src_k
        order[:] = src_o
    if low == 0:
        return
    sl = np.uint64(low)
    t = 0
    while t < n:  # runs of equal prefix: order by the full key
        p0 = keys[t] >> sl
        u = t + 1
        while u < n and (keys[u] >> sl) == p0:
            u += 1
        if u - t > _RADIX_SMALL:
            _radix_sort_pairs(keys[t:u], order[t:u])
        elif u - t > 1:
            _insertion_sort_pairs(keys[t:u], order[t:u])
        t = u


@njit(**JIT)
def _index_bits(n):
    """Number of low bits that hold any index below ``n`` (0 for ``n <= 1``)."""
    return _bit_length(np.uint64(n - 1)) if n > 1 else 0


@njit(**JIT)
def _packed_keys(s, ib):
    """Sort keys of the finite entries of ``s`` with the entry's index in their low ``ib`` bits.

    Parameters
    ----------
    s : float64[n]
        Values (NaN/inf are left out).
    ib : int
        :func:`_index_bits` of ``n``.

    Returns
    -------
    packed : uint64[n_finite]
        ``(key >> ib) << ib | j`` per finite ``s[j]`` (``key`` from :func:`_float_keys`), in index
        order. The packed keys are distinct, and sorting them orders the entries by the top
        ``64 - ib`` key bits, then by index: the stable order except inside runs of equal top bits
        (values within ``2^ib`` units in the last place), which :func:`_packed_order` repairs.
    """
    n = s.size
    bits = s.view(np.uint64)
    sh = np.uint64(ib)
    out = np.empty(n, dtype=np.uint64)
    nf = 0
    for j in range(n):  # branch-free count: the common all-finite case needs no compaction
        nf += abs(s[j]) < np.inf
    if nf == n:
        for j in range(n):
            out[j] = ((_key_of_bits(bits[j]) >> sh) << sh) | np.uint64(j)
        return out
    nf = 0
    for j in range(n):
        if _finite(s[j]):
            out[nf] = ((_key_of_bits(bits[j]) >> sh) << sh) | np.uint64(j)
            nf += 1
    return out[:nf]


@njit(**JIT)
def _packed_order(packed, s, ib):
    """Stable ascending order of the finite entries of ``s`` from their sorted packed keys.

    Parameters
    ----------
    packed : uint64[n_finite]
        :func:`_packed_keys` of ``s``, sorted ascending.
    s : float64[n]
        The values.
    ib : int
        Index bits used for ``packed``.

    Returns
    -------
    order : int64[n_finite]
        Indices of the finite entries with ``s[order]`` ascending, equal values in index order
        (identical to ``np.argsort`` with ``kind="stable"`` on the finite entries).

    Notes
    -----
    Entries whose keys agree above the index bits are adjacent and in index order; each such run
    (rare: values within ``2^ib`` units in the last place) is re-sorted on the full key, stably.
    """
    nf = packed.size
    mask = (np.uint64(1) << np.uint64(ib)) - np.uint64(1)
    sh = np.uint64(ib)
    order = np.empty(nf, dtype=np.int64)
    for r in range(nf):
        order[r] = np.int64(packed[r] & mask)
    if ib == 0:
        return order
    t = nf
    for r in range(nf - 1):  # branch-free search for the first pair of equal prefixes: usually none
        t = min(t, r if (packed[r] >> sh) == (packed[r + 1] >> sh) else nf)
    while t < nf - 1:
        if (packed[t] >> sh) != (packed[t + 1] >> sh):
            t += 1
            continue
        u = t + 2
        while u < nf and (packed[u] >> sh) == (packed[t] >> sh):
            u += 1
        keys = _float_keys(s[order[t:u]])
        run = order[t:u]
        if u - t > _RADIX_SMALL:
            _radix_sort_pairs(keys, run)
        else:
            _insertion_sort_pairs(keys, run)
        t = u
    return order


@njit(**JIT)
def _rank_of_order(order, n):
    """``rho`` of :func:`_ordinal_rank` from the stable order of the finite entries (int64[n_finite])."""
    rho = np.full(n, np.nan)
    nf = order.size
    if nf == 1:
        rho[order[0]] = 1.0
    elif nf > 1:
        scale = 1.0 / (nf - 1)
        for r in range(nf):
            rho[order[r]] = r * scale
    return rho


def _sorted_order(s: np.ndarray) -> np.ndarray:
    """Stable ascending order of the finite entries of ``s`` (float64[n]): int64[n_finite].

    The packed keys are sorted by NumPy (a vectorized sort where the CPU has one), the rest is compiled.
    """
    ib = _index_bits(s.size)
    packed = _packed_keys(s, ib)
    packed.sort()
    return _packed_order(packed, s, ib)


@njit(**JIT)
def _radix_select(keys, r):
    """The ``r``-th smallest (0-based) of ``keys`` (uint64[n], ``0 <= r < n``) by MSD radix select.

    Each level histograms 11 bits of the remaining keys' range and keeps the bucket holding rank
    ``r``: a few branch-free passes, expected ``O(n)``. ``keys`` is left untouched.
    """
    cand = keys.copy()
    m = cand.size
    hist = np.zeros(2048, dtype=np.int64)
    while True:
        kmin = cand[0]
        kmax = cand[0]
        for t in range(1, m):
            k = cand[t]
            kmin = min(kmin, k)
            kmax = max(kmax, k)
        if kmin == kmax:
            return kmin
        nbits = _bit_length(kmax - kmin)
        shift = np.uint64(nbits - 11 if nbits > 11 else 0)
        hist[:] = 0
        for t in range(m):
            hist[(cand[t] - kmin) >> shift] += 1
        b = 0
        while r >= hist[b]:
            r -= hist[b]
            b += 1
        q = 0
        bb = np.uint64(b)
        for t in range(m):
            k = cand[t]
            if ((k - kmin) >> shift) == bb:
                cand[q] = k
                q += 1
        m = q


@njit(**JIT)
def _ordinal_rank(s):
    """Ordinal rank of the finite entries of ``s`` scaled to [0, 1].

    Parameters
    ----------
    s : float64[n]
        Raw scores (NaN/inf = missing).

    Returns
    -------
    rho : float64[n]
        ``rank / (n_finite - 1)`` for finite entries (stable ascending order; 1.0 if only one is
        finite); NaN elsewhere.
    """
    n = s.size
    rho = np.empty(n)
    idx = np.empty(n, dtype=np.int64)
    keys = np.empty(n, dtype=np.uint64)
    bits = s.view(np.uint64)
    nf = 0
    for j in range(n):  # keys of the finite scores, with their indices
        rho[j] = np.nan
        if _finite(s[j]):
            keys[nf] = _key_of_bits(bits[j])
            idx[nf] = j
            nf += 1
    if nf == 0:
        return rho
    if nf == 1:
        rho[idx[0]] = 1.0
        return rho
    _prefix_sort_pairs(keys[:nf], idx[:nf])
    scale = 1.0 / (nf - 1)
    for r in range(nf):
        rho[idx[r]] = r * scale
    return rho


@njit(**JIT)
def _edge_weight(U, edge_lo, edge_hi, power):
    """Boundary weight per point.

    Parameters
    ----------
    U : float64[n, d]
        Unit-cube coordinates of the points, in [0, 1].
    edge_lo, edge_hi : float
        Edge distance at which the weight starts rising from 0 and reaches 1.
    power : float
        Exponent of the clipped ramp.

    Returns
    -------
    w : float64[n]
        ``clip((e - edge_lo) / (edge_hi - edge_lo), 0, 1) ** power``,
        ``e = min_k min(u_k, 1 - u_k)``.
    """
    n, d = U.shape
    e = np.full(n, np.inf)
    for c in range(d):  # column by column: the inner loop vectorizes
        for j in range(n):
            u = U[j, c]
            e[j] = min(e[j], min(u, 1.0 - u))
    w = np.empty(n)
    inv = 1.0 / (edge_hi - edge_lo)
    if power == 1.5:
        for j in range(n):
            x = min(max((e[j] - edge_lo) * inv, 0.0), 1.0)
            w[j] = x * np.sqrt(x)  # x ** 1.5 without a pow call
    else:
        for j in range(n):
            x = min(max((e[j] - edge_lo) * inv, 0.0), 1.0)
            w[j] = x**power
    return w


@njit(**JIT)
def _rank_regularize(raw, U, v, edge_lo, edge_hi, power):
    """Regularized score ``s~ = rho * w * v`` (eq. S4).

    Parameters
    ----------
    raw : float64[n]
        Raw scores (NaN/inf = not scored).
    U : float64[n, d]
        Unit coordinates.
    v : float64[n]
        Fraction of finite hypothesis predictions per point.
    edge_lo, edge_hi, power : float
        Boundary ramp constants (paper: 0.08, 0.5, 1.5).

    Returns
    -------
    reg : float64[n]
        ``s~``; NaN where ``raw`` is not finite.
    """
    return _weighted_rank(raw, _edge_weight(U, edge_lo, edge_hi, power), v)


@njit(**JIT)
def _weighted_rank(raw, w, v):
    """``s~ = rho * w * v`` with the boundary weights ``w`` given (:func:`_edge_weight`).

    Parameters
    ----------
    raw : float64[n]
        Raw scores (NaN/inf = not scored).
    w : float64[n]
        Boundary weights of the points, in [0, 1].
    v : float64[n]
        Fraction of finite hypothesis predictions per point.

    Returns
    -------
    reg : float64[n]
        ``s~``; NaN where ``raw`` is not finite.
    """
    return _scale_rank(_ordinal_rank(raw), w, v)


@njit(**JIT)
def _scale_rank(rho, w, v):
    """``rho * w * v`` in place on ``rho`` (as :func:`_weighted_rank`); returns ``rho``."""
    for j in range(rho.size):
        rho[j] = rho[j] * w[j] * v[j]  # NaN propagates from rho
    return rho


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


def _check_unit(U) -> np.ndarray:
    U = np.asarray(U)
    if U.ndim != 2 or U.shape[1] < 1:
        raise ValueError(f"U must be a 2-D array [n, d] with d >= 1, got shape {U.shape}")
    if U.dtype.kind not in "fiu":
        raise TypeError(f"U must hold real numbers, got dtype {U.dtype}")
    U = np.ascontiguousarray(U, dtype=np.float64)
    bad = _first_outside_unit(U)
    if bad >= 0:
        j, c = divmod(int(bad), U.shape[1])
        raise ValueError(f"U must lie in [0, 1]; U[{j}, {c}] = {U[j, c]!r}")
    return U


def _check_edges(edge_lo: float, edge_hi: float, power: float) -> tuple[float, float, float]:
    lo, hi, pw = float(edge_lo), float(edge_hi), float(power)
    if not (np.isfinite(lo) and np.isfinite(hi) and hi > lo):
        raise ValueError(f"need finite edge_lo < edge_hi, got {edge_lo!r}, {edge_hi!r}")
    if not (np.isfinite(pw) and pw > 0):
        raise ValueError(f"power must be positive and finite, got {power!r}")
    return lo, hi, pw


def _as_vector(x, name: str) -> np.ndarray:
    return as_float_array(x, name, 1, kinds="fiu")


def stable_argsort(x) -> np.ndarray:
    """Stable ascending argsort of finite values (same result as ``np.argsort(kind="stable")``).

    Packed keys sorted by NumPy, runs of near-equal keys finished compiled (:func:`_sorted_order`).
    """
    x = _as_vector(x, "x")
    if not np.all(np.isfinite(x)):
        raise ValueError("stable_argsort needs finite values")
    return _sorted_order(x)


def ordinal_rank(scores) -> np.ndarray:
    """Stable ordinal rank of finite scores in [0, 1]; NaN for non-finite ones: float64[n]."""
    s = _as_vector(scores, "scores")
    return _rank_of_order(_sorted_order(s), s.size)


def edge_weight(U, *, edge_lo: float = EDGE_LO, edge_hi: float = EDGE_HI, power: float = EDGE_POWER) -> np.ndarray:
    """Boundary weight of points with unit coordinates ``U`` (float64[n, d]): float64[n]."""
    return _edge_weight(_check_unit(U), *_check_edges(edge_lo, edge_hi, power))


def rank_regularize(
    raw, U, v, *, edge_lo: float = EDGE_LO, edge_hi: float = EDGE_HI, power: float = EDGE_POWER
) -> np.ndarray:
    """Regularized acquisition score ``s~ = rho * w * v`` (eq. S4).

    Args:
        raw: float64[n] raw scores (NaN = not scored).
        U: float64[n, d] unit coordinates of the pool points, in [0, 1].
        v: float64[n] fraction of finite hypothesis predictions per point, in [0, 1].
        edge_lo: Edge distance below which the weight is 0 (paper 0.08).
        edge_hi: Edge distance at which the weight reaches 1 (paper 0.5).
        power: Exponent of the ramp (paper 1.5).

    Returns:
        float64[n]; NaN where ``raw`` is not finite.
    """
    r = _as_vector(raw, "raw")
    U = _check_unit(U)
    vv = _as_vector(v, "v")
    if U.shape[0] != r.shape[0] or vv.shape[0] != r.shape[0]:
        raise ValueError(f"raw ({r.shape[0]}), U ({U.shape[0]} rows) and v ({vv.shape[0]}) must have one entry per point")
    bad = _first_outside_unit(vv)
    if bad >= 0:
        raise ValueError(f"v must lie in [0, 1]; v[{bad}] = {vv[bad]!r}")
    w = _edge_weight(U, *_check_edges(edge_lo, edge_hi, power))
    return _scale_rank(_rank_of_order(_sorted_order(r), r.size), w, vv)
