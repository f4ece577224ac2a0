"""Batch selection from regularized scores, random selection, and the whole planner step (paper S2.2).

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

**Whole step.** :func:`acquisition_step` runs calibration, fit filter, scores, rank regularization
and greedy selection on evaluated hypotheses in one compiled call (DESIGN "Planner step" 2-6).
:func:`committee_step` also evaluates packed programs and runs as two compiled calls around
NumPy's sort of packed rank keys (:func:`_committee_run`); it is the planner's path.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels._jit import JIT
from kernels.calibrate import DEGENERATE_REL, _calibrate, _fit_filter
from kernels.programs import _evaluate_programs
from kernels.rank_reg import (
    EDGE_HI, EDGE_LO, EDGE_POWER, _edge_weight, _finite, _first_outside_unit, _index_bits, _key_of_bits, _packed_keys, _packed_order,
    _radix_select, _weighted_rank,
)  # fmt: skip
from kernels.scores import (
    CONST_REL, PAIRWISE_DIRECT_MAX, _bits_as_float, _finite_fraction, _normalize_row, _pair_disagreement, _pairwise_scores,
    _flag_positions, _quartile_ranks, _quartiles_at, _row_quartile_stats, _select_ranks, _variance_fraction, _variance_scores,
)  # fmt: skip

__all__ = ["eligible_set", "select_batch", "select_random", "acquisition_step", "committee_step", "step_constants"]

METHODS = {"variance": 0, "pairwise": 1}
"""Scored acquisition methods and their kernel codes."""

TOP_FRACTION = 0.25
W_SCORE = 0.65
W_DIV = 0.35


_ELIG_BUCKETS = 1024
"""Value buckets of the fast eligibility cut (:func:`_eligible`)."""
_ELIG_SMALL = 64
"""Largest boundary bucket the fast eligibility cut sorts directly."""


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
    """Eligible set: the ``m`` highest finite scores (same result as :func:`_eligible_radix`).

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
    Regularized scores are non-negative, so a histogram of ``floor(s * B / max s)`` (monotone in
    ``s``) over ``B = _ELIG_BUCKETS`` buckets finds the bucket holding the cut; only that bucket's
    few scores are sorted to find the cut ``T`` exactly. Entries above ``T`` are all taken and
    entries equal to ``T`` fill the rest in index order. Negative scores, all-zero scores or a
    crowded boundary bucket (many equal scores) use :func:`_eligible_radix`.
    """
    n = s.size
    nf = 0
    smax = 0.0
    nonneg = True
    for j in range(n):
        x = s[j]
        if _finite(x):
            nf += 1
            smax = max(smax, x)
            nonneg = nonneg and x >= 0.0
    m = _eligible_count(nf, k, top_fraction)
    nb = _ELIG_BUCKETS
    scale = nb / smax if smax > 0.0 else 0.0
    if m == 0 or m == nf or not nonneg or not (scale > 0.0 and scale < np.inf):
        return _eligible_radix(s, k, top_fraction)
    hist = np.zeros(nb, dtype=np.int64)
    for j in range(n):
        x = s[j]
        if _finite(x):
            hist[min(int(x * scale), nb - 1)] += 1
    need = m  # entries still to take, from the top bucket down
    bt = nb - 1
    while hist[bt] < need:
        need -= hist[bt]
        bt -= 1
    c = hist[bt]
    if c > _ELIG_SMALL:
        return _eligible_radix(s, k, top_fraction)
    vals = np.empty(c)
    q = 0
    for j in range(n):
        x = s[j]
        if _finite(x) and min(int(x * scale), nb - 1) == bt:
            vals[q] = x
            q += 1
    cut, n_eq = _cut_among(vals, need)
    return _indices_at_or_above(s, cut, n_eq, m)


@njit(**JIT)
def _eligible_radix(s, k, top_fraction):
    """Eligible set: the ``m`` highest finite scores, for any finite scores.

    Parameters and result as in :func:`_eligible`.

    Notes
    -----
    The cut ``T`` (the ``m``-th largest) comes from a radix select on order-preserving integer keys
    of the scores (expected ``O(n)``, no data-dependent comparison branches); entries above ``T``
    are all taken and entries equal to ``T`` fill the rest in index order.
    """
    n = s.size
    bits = s.view(np.uint64)
    keys = np.empty(n, dtype=np.uint64)
    nf = 0
    for j in range(n):
        if _finite(s[j]):
            keys[nf] = _key_of_bits(bits[j])
            nf += 1
    m = _eligible_count(nf, k, top_fraction)
    out = np.empty(m, dtype=np.int64)
    if m == 0:
        return out
    cut = _radix_select(keys[:nf], nf - m)  # key of the m-th largest finite score
    n_above = 0
    for t in range(nf):
        n_above += 1 if keys[t] > cut else 0
    n_eq = m - n_above
    q = 0
    t = 0
    for j in range(n):
        if _finite(s[j]):
            key = keys[t]
            t += 1
            if key > cut:
                out[q] = j
                q += 1
            elif key == cut and n_eq > 0:
                out[q] = j
                q += 1
                n_eq -= 1
    return out




@njit(**JIT)
def _indices_at_or_above(s, cut, n_eq, m):
    """Ascending indices of the ``m`` finite entries of ``s`` above ``cut`` (finite) or among its first ``n_eq`` ties.

    A vectorized pass writes one 0/1 byte per entry; each 8-byte word is packed into a byte
    (a multiply) whose set bits are copied out through a 256-entry position table: no
    per-entry branches, which a quarter of the entries passing at random positions would
    otherwise mispredict.
    """
    n = s.size
    n8 = (n + 7) // 8
    flags = np.zeros(8 * n8, dtype=np.uint8)
    ties = 0
    for j in range(n):
        x = s[j]
        flags[j] = (x >= cut) & (x < np.inf)  # NaN fails both
        ties += x == cut
    if ties > n_eq:  # only the first n_eq ties are taken
        seen = 0
        for j in range(n):
            if s[j] == cut:
                seen += 1
                if seen > n_eq:
                    flags[j] = 0
    return _flag_positions(flags, m)


_ELIG_ROUNDS = 64
"""Most counting rounds :func:`_eligible_unit` spends bracketing the cut."""


@njit(**JIT)
def _count_at_least(s, t):
    """Number of entries of ``s`` at or above ``t`` (NaN never counts); vectorizes."""
    c = 0
    for j in range(s.size):
        c += s[j] >= t
    return c


@njit(**JIT)
def _eligible_unit(s, m):
    """The ``m`` highest finite scores of ``s`` (values in [0, 1] or NaN), as :func:`_eligible` defines them.

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
    midpoint (a vectorized pass); about seven rounds on the paper's pool. One pass collects the bracketed scores, which are sorted to find the cut
    exactly, and :func:`_indices_at_or_above` collects the eligible indices. When ties crowd the cut
    (more than ``_ELIG_SMALL`` equal scores) :func:`_eligible_radix` decides.
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
        return _eligible_radix(s, m, 0.0)  # crowded ties: top_fraction 0 gives exactly m (< n_finite)
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
    best = _order_key(np.int64(-0x10000000000000) )  # key of -inf
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
    Each pick is the first index of the largest objective: a vectorized maximum, then a scan for
    its first occurrence (same result as a strict ``>`` running argmax).
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


@njit(**JIT)
def _score_and_select(P, U, W, method, k, const_rel, direct_max, edge_lo, edge_hi, power, top_fraction, w_score, w_div):
    """Planner step 4-6 on the calibrated predictions of the kept hypotheses.

    Parameters
    ----------
    P : float64[n_keep, n_pool]
        Calibrated predictions ``a h + b`` of the kept hypotheses on the available pool.
    U : float64[n_pool, d]
        Unit coordinates (already checked to lie in [0, 1]).
    W : float64[n_pool] or float64[0]
        Boundary weights of the points (already checked), or empty: computed from ``U``.
    method, k, const_rel, direct_max, edge_lo, edge_hi, power, top_fraction, w_score, w_div
        As in :func:`_acquisition_step`.

    Returns
    -------
    raw, v, reg : float64[n_pool]
    eligible : int64[m]
    picks : int64[k']
    """
    if method == 0:
        raw = _variance_scores(P, const_rel)
    else:
        raw = _pairwise_scores(P, const_rel, direct_max)
    v = _finite_fraction(P)
    if W.size == 0:
        W = _edge_weight(U, edge_lo, edge_hi, power)
    reg = _weighted_rank(raw, W, v)
    picks, elig = _select_batch(reg, U, k, top_fraction, w_score, w_div)
    return raw, v, reg, elig, picks


@njit(**JIT)
def _acquisition_step(
    H_obs, y_obs, H_pool, U, method, k,
    max_keep, threshold, min_keep, deg_rel, const_rel, direct_max,
    edge_lo, edge_hi, power, top_fraction, w_score, w_div,
):  # fmt: skip
    """Planner step 2-6 in one call: calibrate, filter, score, regularize, select.

    Parameters
    ----------
    H_obs : float64[n_hyp, n_obs]
        Hypothesis values at the observed inputs.
    y_obs : float64[n_obs]
        Observed outputs.
    H_pool : float64[n_hyp, n_pool]
        Hypothesis values on the available pool.
    U : float64[n_pool, d]
        Unit coordinates of the available pool.
    method : int
        0 = variance (eq. S2), 1 = pairwise (eq. S3).
    k : int
        Batch size.
    max_keep, threshold, min_keep : int, float, int
        Fit-filter constants.
    deg_rel, const_rel : float
        Degenerate-fit and constant-row thresholds.
    direct_max : int
        Pairwise direct-sum limit.
    edge_lo, edge_hi, power : float
        Boundary ramp constants.
    top_fraction, w_score, w_div : float
        Selection constants.

    Returns
    -------
    a, b : float64[n_hyp]
    n_pairs : int64[n_hyp]
    ok : bool[n_hyp]
    err : float64[n_hyp]
    keep : bool[n_hyp]
    fallback : bool
    raw : float64[n_pool]
    v : float64[n_pool]
    reg : float64[n_pool]
    eligible : int64[m]
    picks : int64[k']
    bad_u : int
        Flat index of the first ``U`` entry outside [0, 1], or -1 (then nothing else is computed
        beyond calibration and filtering).
    """
    a, b, n_pairs, ok, err = _calibrate(H_obs, y_obs, deg_rel)
    keep, fallback = _fit_filter(err, ok, max_keep, threshold, min_keep)
    n_hyp, n = H_pool.shape
    bad_u = _first_outside_unit(U)
    if bad_u >= 0:
        e = np.full(n, np.nan)
        return a, b, n_pairs, ok, err, keep, fallback, e, e.copy(), e.copy(), np.empty(0, np.int64), np.empty(0, np.int64), bad_u
    n_keep = 0
    for i in range(n_hyp):
        if keep[i]:
            n_keep += 1
    P = np.empty((n_keep, n))
    r = 0
    for i in range(n_hyp):
        if keep[i]:
            ai = a[i]
            bi = b[i]
            for j in range(n):
                P[r, j] = ai * H_pool[i, j] + bi  # h~ = a h + b
            r += 1
    raw, v, reg, elig, picks = _score_and_select(
        P, U, np.empty(0), method, k, const_rel, direct_max, edge_lo, edge_hi, power, top_fraction, w_score, w_div
    )
    return a, b, n_pairs, ok, err, keep, fallback, raw, v, reg, elig, picks, bad_u


N_CONSTANTS = 12
"""Length of the constants vector of :func:`_committee_step` (see :func:`step_constants`)."""


@njit(**JIT)
def _quartile_sources(H, a):
    """Positions of the quartiles' order statistics of each calibrated row ``a_i h_i + b_i``, read off ``h_i``.

    Parameters
    ----------
    H : float64[n_keep, n]
        Uncalibrated values of the kept hypotheses.
    a : float64[n_keep]
        Their calibration scales.

    Returns
    -------
    pos : int64[n_keep, 6]
        For an all-finite row, the positions of the six order statistics of
        :func:`kernels.scores._quartile_ranks` in the calibrated row; -1 otherwise.

    Notes
    -----
    ``a h + b`` rounded is a non-decreasing function of ``h`` for ``a >= 0`` and non-increasing
    for ``a < 0``, so the calibrated row's order statistics sit where ``h``'s (reversed for
    ``a < 0``) do. The uncalibrated values are usually spread over decades, while the calibrated
    ones can crowd around the offset ``b`` (a hypothesis that barely varies after the fit), which
    costs the histogram select extra levels.
    """
    n_keep, n = H.shape
    pos = np.full((n_keep, 6), -1, dtype=np.int64)
    if n == 0:
        return pos
    ranks, ts = _quartile_ranks(n)
    for r in range(n_keep):
        row = H[r]
        m = 0
        for j in range(n):
            m += abs(row[j]) < np.inf
        if m == n:
            pos[r] = _select_ranks(row, ranks if a[r] >= 0.0 else n - 1 - ranks)
    return pos


@njit(**JIT)
def _pairwise_calibrated(P, pos, const_rel, direct_max, raw, v):
    """Pairwise score (eq. S3) and finite fraction of the calibrated rows ``P`` into ``raw`` and ``v``.

    Quartile positions come from :func:`_quartile_sources`: a row whose positions are known and
    whose calibrated values are all finite takes its quartiles there; any other row is selected
    from directly (:func:`kernels.scores._row_quartile_stats`).
    """
    n_keep, n = P.shape
    R = np.empty((n_keep, n))
    buf = np.empty(n)
    ranks, ts = _quartile_ranks(n)
    v[:] = 0.0
    for r in range(n_keep):
        row = P[r]
        m = 0
        for j in range(n):  # finite count of the row and of each column
            f = abs(row[j]) < np.inf
            m += f
            v[j] += 1.0 if f else 0.0
        if pos[r, 0] >= 0 and m == n:
            q25, med, q75 = _quartiles_at(row, pos[r], ts)
            has, iqr = True, q75 - q25
        else:
            has, med, iqr = _row_quartile_stats(P, r, buf)
        _normalize_row(P, r, has, med, iqr, const_rel, R)
    if n_keep > 0:
        for j in range(n):
            v[j] /= n_keep  # as _finite_fraction
    raw[:] = _pair_disagreement(R, direct_max)


@njit(**JIT)
def _committee_prepare(ops, args, consts, prog_start, prog_len, const_start, depth, XT_obs, y_obs, XT_pool, U, W, method, C):
    """Planner step 1-4 for a packed committee: evaluate, calibrate, filter, score.

    Parameters are those of :func:`_committee_step` less ``k``.

    Returns
    -------
    fit : float64[6, n_prog]
        Rows ``a``, ``b``, ``err``, ``n_pairs``, ``ok``, ``keep`` (counts and 0/1 flags as floats:
        one array to hand back instead of three).
    scores : float64[3, n_pool]
        Rows ``raw``, ``v`` and a NaN ``reg`` row.
    keys : uint64[n_finite]
        :func:`kernels.rank_reg._packed_keys` of the raw scores, to be sorted.
    fallback, bad_u
        As for :func:`_committee_step`.
    """
    n_prog = prog_start.size
    n_obs = y_obs.size
    n = XT_pool.shape[1]
    H_obs = np.empty((n_prog, n_obs))
    if n_obs > 0:
        _evaluate_programs(ops, args, consts, prog_start, prog_len, const_start, XT_obs, depth, H_obs)
    fit = np.empty((6, n_prog))
    a, b, n_pairs, ok, err = _calibrate(H_obs, y_obs, C[3])
    keep, fallback = _fit_filter(err, ok, int(C[0]), C[1], int(C[2]))
    for i in range(n_prog):
        fit[0, i] = a[i]
        fit[1, i] = b[i]
        fit[2, i] = err[i]
        fit[3, i] = n_pairs[i]
        fit[4, i] = 1.0 if ok[i] else 0.0
        fit[5, i] = 1.0 if keep[i] else 0.0
    scores = np.empty((3, n))
    scores[2] = np.nan  # reg stays NaN where the raw score is not finite
    bad_u = _first_outside_unit(U)
    if bad_u < 0:
        bad_w = _first_outside_unit(W)
        if bad_w >= 0:
            bad_u = -2 - bad_w
    if bad_u != -1:
        scores[:] = np.nan
        return fit, scores, np.empty(0, dtype=np.uint64), fallback, bad_u
    n_keep = 0
    for i in range(n_prog):
        n_keep += 1 if keep[i] else 0
    ps = np.empty(n_keep, dtype=np.int64)
    pl = np.empty(n_keep, dtype=np.int64)
    cs = np.empty(n_keep, dtype=np.int64)
    r = 0
    for i in range(n_prog):
        if keep[i]:
            ps[r] = prog_start[i]
            pl[r] = prog_len[i]
            cs[r] = const_start[i]
            r += 1
    P = np.empty((n_keep, n))
    if n > 0 and n_keep > 0:
        _evaluate_programs(ops, args, consts, ps, pl, cs, XT_pool, depth, P)
    if method == 1:
        pos = _quartile_sources(P, a[keep])
    r = 0
    for i in range(n_prog):
        if keep[i]:
            ai = a[i]
            bi = b[i]
            row = P[r]
            for j in range(n):
                row[j] = ai * row[j] + bi  # h~ = a h + b
            r += 1
    if method == 0:
        _variance_fraction(P, C[4], scores[0], scores[1])
    else:
        _pairwise_calibrated(P, pos, C[4], int(C[5]), scores[0], scores[1])
    return fit, scores, _packed_keys(scores[0], _index_bits(n)), fallback, bad_u


@njit(**JIT)
def _committee_select(packed, scores, U, W, k, C):
    """Planner step 5-6 from the sorted packed keys of the raw scores: regularize, cut, pick.

    Parameters
    ----------
    packed : uint64[n_finite]
        :func:`kernels.rank_reg._packed_keys` of ``scores[0]``, sorted ascending.
    scores : float64[3, n_pool]
        Rows ``raw``, ``v`` and ``reg``; ``reg`` is filled in (NaN where ``raw`` is not finite).
    U : float64[n_pool, d]
        Unit coordinates (checked).
    W : float64[n_pool] or float64[0]
        Boundary weights (checked), or empty: computed from ``U``.
    k : int
        Batch size.
    C : float64[N_CONSTANTS]
        Step constants.

    Returns
    -------
    eligible : int64[m]
    picks : int64[k']
    chosen : float64[k', d]
        Unit coordinates of the picks.

    Notes
    -----
    Regularized scores lie in [0, 1] (rank, weight and finite fraction all do), so the eligibility
    cut brackets the cut by bisection of [0, 1] (:func:`_eligible_unit`).
    """
    raw = scores[0]
    v = scores[1]
    reg = scores[2]
    n = raw.size
    nf = packed.size
    order = _packed_order(packed, raw, _index_bits(n))
    if W.size == 0:
        W = _edge_weight(U, C[6], C[7], C[8])
    scale = 1.0 / (nf - 1) if nf > 1 else 1.0
    for r in range(nf):  # reg holds NaN where raw is not finite; rho first
        reg[order[r]] = r * scale if nf > 1 else 1.0
    for j in range(n):
        reg[j] = reg[j] * W[j] * v[j]  # rho * w * v, as _weighted_rank
    k_ = int(k)
    m = _eligible_count(nf, k_, C[9])
    if m == 0 or m == nf:
        elig = _eligible_radix(reg, k_, C[9])
    else:
        elig = _eligible_unit(reg, m)
    picks = _greedy(reg, U, elig, k_, C[10], C[11])
    d = U.shape[1]
    chosen = np.empty((picks.size, d))
    for t in range(picks.size):
        for c in range(d):
            chosen[t, c] = U[picks[t], c]
    return elig, picks, chosen


def _committee_run(ops, args, consts, prog_start, prog_len, const_start, depth, XT_obs, y_obs, XT_pool, U, W, method, k, C):
    """Planner step 1-6 for a packed committee: evaluate, calibrate, filter, score, regularize, select.

    Parameters
    ----------
    ops, args, consts, prog_start, prog_len, const_start : arrays
        The committee's programs, packed and validated (:mod:`kernels.programs`).
    depth : int
        Stack depth the programs need.
    XT_obs : float64[d, n_obs]
        Observed inputs, one row per variable.
    y_obs : float64[n_obs]
        Observed outputs.
    XT_pool : float64[d, n_pool]
        Available pool points, one row per variable.
    U : float64[n_pool, d]
        Unit coordinates of the available pool points.
    W : float64[n_pool] or float64[0]
        Their boundary weights (:func:`kernels.rank_reg._edge_weight` with the edge constants of
        ``C``), prepared once per pool, or empty: computed here from ``U``.
    method : int
        0 = variance, 1 = pairwise.
    k : int
        Batch size.
    C : float64[N_CONSTANTS]
        ``max_keep, threshold, min_keep, deg_rel, const_rel, direct_max, edge_lo, edge_hi, power,
        top_fraction, w_score, w_div`` (:func:`step_constants`).

    Returns
    -------
    fit : float64[6, n_prog]
        Rows ``a``, ``b``, ``err``, ``n_pairs``, ``ok`` (valid fit, 1/0), ``keep`` (kept by the
        filter, 1/0) of the calibration (:func:`_unpack_fit` splits it).
    scores : float64[3, n_pool]
        Rows ``raw``, ``v`` (finite fraction), ``reg`` (regularized score).
    eligible : int64[m]
    picks : int64[k']
    chosen : float64[k', d]
        Unit coordinates of the picks.
    fallback : bool
    bad_u : int
        Flat index of the first ``U`` entry outside [0, 1]; ``-2 - j`` for the first ``W[j]``
        outside [0, 1]; -1 when both are fine (otherwise the scores are NaN and nothing is
        selected).

    Notes
    -----
    Two compiled calls around one NumPy sort. :func:`_committee_prepare` evaluates (only the kept
    hypotheses on the pool: the others take no part in steps 4-6), calibrates, filters, scores
    and packs the raw scores' rank keys (:func:`kernels.rank_reg._packed_keys`); NumPy sorts the
    keys; :func:`_committee_select` turns the order into ranks, regularizes, cuts and picks.
    NumPy sorts 64-bit integers with a vectorized sort on x86 CPUs with AVX2/AVX-512: about 4 us
    for 2048 keys, where a compiled LSD radix sort of these clustered scores took about 19 us.
    """
    fit, scores, keys, fallback, bad_u = _committee_prepare(
        ops, args, consts, prog_start, prog_len, const_start, depth, XT_obs, y_obs, XT_pool, U, W, method, C
    )
    if bad_u != -1:
        return fit, scores, _NO_INDEX, _NO_INDEX, U[:0], fallback, bad_u
    keys.sort()
    elig, picks, chosen = _committee_select(keys, scores, U, W, k, C)
    return fit, scores, elig, picks, chosen, fallback, bad_u


def _unpack_fit(fit6: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split the float64[6, n] fit block of :func:`_committee_prepare` into ``(fit[3, n], n_pairs, flags[2, n])``."""
    return fit6[:3], fit6[3].astype(np.int64), fit6[4:] != 0.0


_NO_INDEX = np.zeros(0, dtype=np.int64)
_NO_INDEX.flags.writeable = False


def _committee_step(ops, args, consts, prog_start, prog_len, const_start, depth, XT_obs, y_obs, XT_pool, U, W, method, k, C):
    """:func:`_committee_run` as ``(fit[3, n], n_pairs, flags[2, n], scores, eligible, picks, fallback, bad_u)``."""
    fit6, scores, elig, picks, chosen, fallback, bad_u = _committee_run(
        ops, args, consts, prog_start, prog_len, const_start, depth, XT_obs, y_obs, XT_pool, U, W, method, k, C
    )
    return (*_unpack_fit(fit6), scores, elig, picks, fallback, bad_u)


# ---------------------------------------------------------------------------------------------
# Public wrappers
# ---------------------------------------------------------------------------------------------


def _check_k(k) -> int:
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 0:
        raise ValueError(f"k must be a non-negative integer, got {k!r}")
    return int(k)


def _check_scores_unit(s, U) -> tuple[np.ndarray, np.ndarray]:
    s = np.asarray(s)
    if s.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {s.shape}")
    if s.dtype.kind not in "fiu":
        raise TypeError(f"scores must hold real numbers, got dtype {s.dtype}")
    U = np.asarray(U)
    if U.ndim != 2 or U.shape[1] < 1 or U.shape[0] != s.shape[0]:
        raise ValueError(f"U must have shape [{s.shape[0]}, d >= 1] (one row per score), got {U.shape}")
    if U.dtype.kind not in "fiu":
        raise TypeError(f"U must hold real numbers, got dtype {U.dtype}")
    U = np.ascontiguousarray(U, dtype=np.float64)
    bad = _first_outside_unit(U)
    if bad >= 0:
        j, c = divmod(bad, U.shape[1])
        raise ValueError(f"U must lie in [0, 1]; U[{j}, {c}] = {U[j, c]!r}")
    return np.ascontiguousarray(s, dtype=np.float64), U


def _check_fraction(top_fraction) -> float:
    f = float(top_fraction)
    if not (0.0 < f <= 1.0):
        raise ValueError(f"top_fraction must be in (0, 1], got {top_fraction!r}")
    return f


def _check_keep_edges(max_keep, min_keep, edge_lo, edge_hi, power) -> tuple[float, float, float]:
    """Check the fit-filter counts and the boundary ramp; returns ``(edge_lo, edge_hi, power)`` as floats."""
    if int(min_keep) < 1 or int(max_keep) < int(min_keep):
        raise ValueError(f"need 1 <= min_keep <= max_keep, got min_keep={min_keep}, max_keep={max_keep}")
    lo, hi, pw = float(edge_lo), float(edge_hi), float(power)
    if not (hi > lo and pw > 0):
        raise ValueError(f"need edge_lo < edge_hi and power > 0, got {edge_lo}, {edge_hi}, {power}")
    return lo, hi, pw


def eligible_set(scores, k: int, *, top_fraction: float = TOP_FRACTION) -> np.ndarray:
    """Ascending indices of the eligible points: int64[m] (module docstring)."""
    s = np.asarray(scores)
    if s.ndim != 1:
        raise ValueError(f"scores must be 1-D, got shape {s.shape}")
    return _eligible(np.ascontiguousarray(s, dtype=np.float64), _check_k(k), _check_fraction(top_fraction))


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
    return _select_batch(s, U, _check_k(k), _check_fraction(top_fraction), float(w_score), float(w_div))


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
    k = _check_k(k)
    pool_idx = np.flatnonzero(mask).astype(np.int64)
    kk = min(k, pool_idx.size)
    if uniforms is None:
        if seed is None:
            raise ValueError("select_random needs a seed or pre-drawn uniforms")
        r = np.random.default_rng(seed).random(kk)
    else:
        r = np.ascontiguousarray(uniforms, dtype=np.float64)
        if r.ndim != 1 or r.size < kk:
            raise ValueError(f"uniforms must be 1-D with at least {kk} values, got shape {r.shape}")
        if not np.all((r >= 0.0) & (r < 1.0)):
            raise ValueError("uniforms must lie in [0, 1)")
        r = r[:kk]
    return _select_random(pool_idx, r)


def step_constants(
    *,
    max_keep: int = 4,
    threshold: float = 0.75,
    min_keep: int = 2,
    edge_lo: float = EDGE_LO,
    edge_hi: float = EDGE_HI,
    power: float = EDGE_POWER,
    top_fraction: float = TOP_FRACTION,
    w_score: float = W_SCORE,
    w_div: float = W_DIV,
    deg_rel: float = DEGENERATE_REL,
    const_rel: float = CONST_REL,
    direct_max: int = PAIRWISE_DIRECT_MAX,
) -> np.ndarray:
    """The checked constants of a planner step as the float64[N_CONSTANTS] vector :func:`committee_step` takes.

    Args:
        max_keep, threshold, min_keep: Fit-filter constants (paper 4, 0.75, 2).
        edge_lo, edge_hi, power: Boundary ramp constants (paper 0.08, 0.5, 1.5).
        top_fraction, w_score, w_div: Selection constants (paper 0.25, 0.65, 0.35).
        deg_rel, const_rel, direct_max: Numerical thresholds (see the kernel modules).

    Raises:
        ValueError: on inconsistent constants.
    """
    lo, hi, pw = _check_keep_edges(max_keep, min_keep, edge_lo, edge_hi, power)
    if int(direct_max) < 0:
        raise ValueError(f"direct_max must be >= 0, got {direct_max}")
    C = np.array(
        [int(max_keep), float(threshold), int(min_keep), float(deg_rel), float(const_rel), int(direct_max),
         lo, hi, pw, _check_fraction(top_fraction), float(w_score), float(w_div)],
        dtype=np.float64,
    )  # fmt: skip
    C.flags.writeable = False
    return C


DEFAULT_CONSTANTS = step_constants()
"""The paper's constants as a :func:`step_constants` vector."""


def committee_step(
    ops, args, consts, prog_start, prog_len, const_start, XT_obs, y_obs, XT_pool, U_pool, method: str, k: int,
    constants=None, *, edge=None,
):  # fmt: skip
    """Planner step 1-6 for packed programs, compiled (evaluate, calibrate, filter, score, select).

    Args:
        ops, args, consts, prog_start, prog_len, const_start: Packed programs (:mod:`kernels.programs`).
        XT_obs: float64[d, n_obs] observed inputs, one row per variable.
        y_obs: float64[n_obs] observed outputs.
        XT_pool: float64[d, n_pool] available pool points, one row per variable.
        U_pool: float64[n_pool, d] their unit coordinates, in [0, 1].
        method: ``"variance"`` or ``"pairwise"``.
        k: Batch size.
        constants: float64[N_CONSTANTS] from :func:`step_constants` (default: the paper's).
        edge: float64[n_pool] boundary weights of the pool points, ``kernels.edge_weight(U_pool)``
            with the edge constants of ``constants``, when prepared once for a pool (default:
            computed in the call).

    Returns:
        ``(fit, n_pairs, flags, scores, eligible, picks, fallback)`` as documented on
        :func:`_committee_step` (indices refer to columns of ``XT_pool``).

    Raises:
        ValueError: on malformed programs or arrays, naming what is wrong.
    """
    from kernels.programs import _coerce, check_programs

    code = METHODS.get(method)
    if code is None:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    packed = _coerce(ops, args, consts, prog_start, prog_len, const_start)
    XT_obs = np.ascontiguousarray(XT_obs, dtype=np.float64)
    y_obs = np.ascontiguousarray(y_obs, dtype=np.float64)
    XT_pool = np.ascontiguousarray(XT_pool, dtype=np.float64)
    U_pool = np.ascontiguousarray(U_pool, dtype=np.float64)
    if XT_obs.ndim != 2 or y_obs.ndim != 1 or XT_obs.shape[1] != y_obs.shape[0]:
        raise ValueError(f"XT_obs must be [d, n_obs] matching y_obs [n_obs]; got {XT_obs.shape} and {y_obs.shape}")
    d = XT_obs.shape[0]
    if XT_pool.ndim != 2 or XT_pool.shape[0] != d:
        raise ValueError(f"XT_pool must be [d={d}, n_pool]; got {XT_pool.shape}")
    if U_pool.ndim != 2 or U_pool.shape[0] != XT_pool.shape[1] or U_pool.shape[1] < 1:
        raise ValueError(f"U_pool must be [n_pool={XT_pool.shape[1]}, d >= 1]; got {U_pool.shape}")
    depth = check_programs(*packed, d)
    C = DEFAULT_CONSTANTS if constants is None else np.ascontiguousarray(constants, dtype=np.float64)
    if C.shape != (N_CONSTANTS,):
        raise ValueError(f"constants must be a vector of {N_CONSTANTS} values from step_constants(), got shape {C.shape}")
    W = _check_edge(edge, U_pool.shape[0])
    out = _committee_step(*packed, depth, XT_obs, y_obs, XT_pool, U_pool, W, code, _check_k(k), C)
    _raise_bad_unit(int(out[-1]), U_pool, W)
    return out[:-1]


_NO_EDGE = np.zeros(0)
_NO_EDGE.flags.writeable = False


def _check_edge(edge, n: int) -> np.ndarray:
    """Prepared boundary weights as float64[n] (checked for range in the kernel), or the empty marker."""
    if edge is None:
        return _NO_EDGE
    W = edge
    if not (type(W) is np.ndarray and W.dtype == np.float64 and W.flags.c_contiguous):
        W = np.ascontiguousarray(W, dtype=np.float64)
    if W.shape != (n,):
        raise ValueError(f"edge must hold one boundary weight per pool point, shape ({n},), got {W.shape}")
    return W


def _raise_bad_unit(bad: int, U: np.ndarray, W: np.ndarray) -> None:
    """Raise for the ``bad_u`` code of :func:`_committee_step` (-1: nothing to raise)."""
    if bad >= 0:
        j, c = divmod(bad, U.shape[1])
        raise ValueError(f"U_pool must lie in [0, 1]; U_pool[{j}, {c}] = {U[j, c]!r}")
    if bad <= -2:
        j = -2 - bad
        raise ValueError(f"edge weights must lie in [0, 1]; edge[{j}] = {W[j]!r}")


def acquisition_step(
    H_obs,
    y_obs,
    H_pool,
    U_pool,
    method: str,
    k: int,
    *,
    max_keep: int = 4,
    threshold: float = 0.75,
    min_keep: int = 2,
    edge_lo: float = EDGE_LO,
    edge_hi: float = EDGE_HI,
    power: float = EDGE_POWER,
    top_fraction: float = TOP_FRACTION,
    w_score: float = W_SCORE,
    w_div: float = W_DIV,
    deg_rel: float = DEGENERATE_REL,
    const_rel: float = CONST_REL,
    direct_max: int = PAIRWISE_DIRECT_MAX,
):
    """Planner step 2-6 (calibrate, filter, score, regularize, select) in one compiled call.

    Args:
        H_obs: float64[n_hyp, n_obs] hypothesis values at the observed inputs.
        y_obs: float64[n_obs] observed outputs.
        H_pool: float64[n_hyp, n_pool] hypothesis values on the available pool.
        U_pool: float64[n_pool, d] unit coordinates of the available pool, in [0, 1].
        method: ``"variance"`` or ``"pairwise"``.
        k: Batch size.
        max_keep, threshold, min_keep: Fit-filter constants (paper 4, 0.75, 2).
        edge_lo, edge_hi, power: Boundary ramp constants (paper 0.08, 0.5, 1.5).
        top_fraction, w_score, w_div: Selection constants (paper 0.25, 0.65, 0.35).
        deg_rel, const_rel, direct_max: Numerical thresholds (see the kernel modules).

    Returns:
        Tuple ``(a, b, n_pairs, ok, err, keep, fallback, raw, v, reg, eligible, picks)`` as
        documented on :func:`_acquisition_step` (indices refer to columns of ``H_pool``).
    """
    code = METHODS.get(method)
    if code is None:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    H_obs = np.ascontiguousarray(H_obs, dtype=np.float64)
    y_obs = np.ascontiguousarray(y_obs, dtype=np.float64)
    H_pool = np.ascontiguousarray(H_pool, dtype=np.float64)
    U_pool = np.ascontiguousarray(U_pool, dtype=np.float64)
    if H_obs.ndim != 2 or y_obs.ndim != 1 or H_obs.shape[1] != y_obs.shape[0]:
        raise ValueError(f"H_obs must be [n_hyp, n_obs] matching y_obs [n_obs]; got {H_obs.shape} and {y_obs.shape}")
    if H_pool.ndim != 2 or H_pool.shape[0] != H_obs.shape[0]:
        raise ValueError(f"H_pool must be [n_hyp={H_obs.shape[0]}, n_pool]; got {H_pool.shape}")
    if U_pool.ndim != 2 or U_pool.shape[0] != H_pool.shape[1] or U_pool.shape[1] < 1:
        raise ValueError(f"U_pool must be [n_pool={H_pool.shape[1]}, d >= 1]; got {U_pool.shape}")
    k = _check_k(k)
    lo, hi, pw = _check_keep_edges(max_keep, min_keep, edge_lo, edge_hi, power)
    out = _acquisition_step(
        H_obs, y_obs, H_pool, U_pool, code, k,
        int(max_keep), float(threshold), int(min_keep), float(deg_rel), float(const_rel), int(direct_max),
        lo, hi, pw, _check_fraction(top_fraction), float(w_score), float(w_div),
    )  # fmt: skip
    _raise_bad_unit(int(out[-1]), U_pool, _NO_EDGE)
    return out[:-1]
