"""The whole planner step, compiled (DESIGN "Planner step" 1-6; paper S2).

One step on a committee of hypotheses, each stage the kernel of its own file:

1. evaluate the programs on the observations (:mod:`kernels.programs`);
2. calibrate ``h~ = a h + b`` to the observations and 3. filter the fits (:mod:`kernels.calibrate`);
4. evaluate the kept programs on the available pool, calibrated, and score each point: variance
   (eq. S2) or pairwise (eq. S3) disagreement and the finite fraction ``v`` (:mod:`kernels.scores`);
5. regularize, ``s~ = rho * w * v`` (eq. S4, :mod:`kernels.rank_reg`);
6. cut the eligible set and pick a greedy diverse batch (:mod:`kernels.select`).

:func:`committee_step` starts from packed programs (the planner's path, ``Committee.step``);
:func:`acquisition_step` from hypothesis values already evaluated (steps 2-6). Both are two
compiled calls around NumPy's sort of packed rank keys (:func:`_packed_keys`): NumPy sorts 64-bit
integers with a vectorized sort (a few microseconds for 2048 keys), several times faster than a
compiled merge sort of the scores, which would be the largest part of the step. The eligibility cut
of scores in [0, 1] counts by bisection (:func:`kernels.select._eligible_unit`) for the same reason.

This file composes the other kernel files: it imports their compiled stages (the kernels behind
their public wrappers, and selection's eligible count and [0, 1] cut), no other helpers; helpers
several files share are in :mod:`kernels._shared`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import as_packed_programs, check_fraction, check_k, check_keep_edges, named_errors
from kernels._jit import JIT
from kernels._shared import _bit_length, _finite, _first_outside_unit, _key_of_bits
from kernels.calibrate import DEGENERATE_REL, _calibrate, _fit_filter
from kernels.programs import _evaluate_programs, check_programs
from kernels.rank_reg import EDGE_HI, EDGE_LO, EDGE_POWER, _edge_weight
from kernels.scores import CONST_REL, PAIRWISE_DIRECT_MAX, _finite_fraction, _pairwise_scores, _variance_scores
from kernels.select import TOP_FRACTION, W_DIV, W_SCORE, _eligible, _eligible_count, _eligible_unit, _greedy

__all__ = ["acquisition_step", "committee_step", "step_constants"]

METHODS = {"variance": 0, "pairwise": 1}
"""Scored acquisition methods and their kernel codes."""

N_CONSTANTS = 12
"""Length of the constants vector (see :func:`step_constants`)."""


# ---------------------------------------------------------------------------------------------
# Rank keys: the raw scores' stable order through one NumPy sort
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def _index_bits(n):
    """Number of low bits that hold any index below ``n`` (0 for ``n <= 1``)."""
    return _bit_length(np.uint64(n - 1)) if n > 1 else 0


@njit(**JIT)
def _packed_keys(s, ib):
    """Sort keys of the finite entries of ``s`` (float64[n]) with the entry's index in their low ``ib`` bits.

    ``(key >> ib) << ib | j`` per finite ``s[j]`` (uint64[n_finite], in index order; ``key`` from
    :func:`kernels._shared._key_of_bits`, ``ib`` = :func:`_index_bits` of ``n``). The packed keys
    are distinct, and sorting them orders the entries by the top ``64 - ib`` key bits, then by
    index: the stable order except inside runs of equal top bits (values within ``2^ib`` units in
    the last place), which :func:`_packed_order` repairs.
    """
    n = s.size
    bits = s.view(np.uint64)
    sh = np.uint64(ib)
    out = np.empty(n, dtype=np.uint64)
    nf = 0
    for j in range(n):  # branch-free count: the usual all-finite case is one vectorized pass
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

    Returns int64[n_finite], the indices of the finite entries with ``s[order]`` ascending and equal
    values in index order (identical to ``np.argsort(kind="stable")`` on the finite entries).
    Entries whose keys agree above the ``ib`` index bits are adjacent and in index order; each such
    run (rare: values within ``2^ib`` units in the last place) is re-sorted by value, stably.
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
        u = t + 1
        while u < nf and (packed[u] >> sh) == (packed[t] >> sh):
            u += 1
        if u - t > 1:
            run = order[t:u].copy()
            order[t:u] = run[np.argsort(s[run], kind="mergesort")]
        t = u
    return order


# ---------------------------------------------------------------------------------------------
# The step's compiled halves
# ---------------------------------------------------------------------------------------------


@njit(**JIT)
def _fit_block(H_obs, y_obs, C):
    """Steps 2-3: calibrate and filter; ``(fit, a, b, keep, fallback)``.

    ``fit`` is float64[6, n_hyp] with rows ``a``, ``b``, ``err``, ``n_pairs``, ``ok``, ``keep``
    (counts and 0/1 flags as floats: one array to hand back instead of six).
    """
    a, b, n_pairs, ok, err = _calibrate(H_obs, y_obs, C[3])
    keep, fallback = _fit_filter(err, ok, int(C[0]), C[1], int(C[2]))
    fit = np.empty((6, a.size))
    for i in range(a.size):
        fit[0, i] = a[i]
        fit[1, i] = b[i]
        fit[2, i] = err[i]
        fit[3, i] = n_pairs[i]
        fit[4, i] = 1.0 if ok[i] else 0.0
        fit[5, i] = 1.0 if keep[i] else 0.0
    return fit, a, b, keep, fallback


@njit(**JIT)
def _scores_and_keys(P, method, C):
    """Step 4 on the calibrated kept rows ``P`` (float64[n_keep, n_pool]).

    Returns ``scores`` (float64[3, n_pool]: rows ``raw``, ``v`` and a NaN ``reg`` row) and the
    :func:`_packed_keys` of ``raw``, to be sorted.
    """
    n = P.shape[1]
    scores = np.empty((3, n))
    if method == 0:
        scores[0] = _variance_scores(P, C[4])
    else:
        scores[0] = _pairwise_scores(P, C[4], int(C[5]))
    scores[1] = _finite_fraction(P)
    scores[2] = np.nan  # reg stays NaN where the raw score is not finite
    return scores, _packed_keys(scores[0], _index_bits(n))


@njit(**JIT)
def _committee_prepare(ops, args, consts, prog_start, prog_len, const_start, depth, XT_obs, y_obs, XT_pool, U, W, method, C):
    """Steps 1-4 for a packed committee: evaluate, calibrate, filter, score.

    Parameters are those of :func:`_committee_run` less ``k``. Returns ``(fit, scores, keys,
    fallback, bad_u)``: ``fit`` as in :func:`_fit_block`, ``scores`` and ``keys`` as in
    :func:`_scores_and_keys` (all NaN and no keys when ``bad_u != -1``).
    """
    n_prog = prog_start.size
    n = XT_pool.shape[1]
    H_obs = np.empty((n_prog, y_obs.size))
    if y_obs.size > 0:
        _evaluate_programs(ops, args, consts, prog_start, prog_len, const_start, XT_obs, depth, H_obs)
    fit, a, b, keep, fallback = _fit_block(H_obs, y_obs, C)
    bad_u = _first_outside_unit(U)
    if bad_u < 0:
        bad_w = _first_outside_unit(W)
        if bad_w >= 0:
            bad_u = -2 - bad_w
    if bad_u != -1:
        return fit, np.full((3, n), np.nan), np.empty(0, dtype=np.uint64), fallback, bad_u
    kept = np.flatnonzero(keep)
    P = np.empty((kept.size, n))  # only the kept programs take part in steps 4-6
    if n > 0 and kept.size > 0:
        _evaluate_programs(ops, args, consts, prog_start[kept], prog_len[kept], const_start[kept], XT_pool, depth, P)
    for r in range(kept.size):
        ai = a[kept[r]]
        bi = b[kept[r]]
        row = P[r]
        for j in range(n):
            row[j] = ai * row[j] + bi  # h~ = a h + b
    scores, keys = _scores_and_keys(P, method, C)
    return fit, scores, keys, fallback, bad_u


@njit(**JIT)
def _hypotheses_prepare(H_obs, y_obs, H_pool, U, method, C):
    """Steps 2-4 from evaluated hypotheses (``H_obs`` float64[n_hyp, n_obs], ``H_pool`` float64[n_hyp, n_pool]).

    Returns as :func:`_committee_prepare` (``bad_u``: flat index of the first ``U`` entry outside
    [0, 1], or -1).
    """
    fit, a, b, keep, fallback = _fit_block(H_obs, y_obs, C)
    n = H_pool.shape[1]
    bad_u = _first_outside_unit(U)
    if bad_u >= 0:
        return fit, np.full((3, n), np.nan), np.empty(0, dtype=np.uint64), fallback, bad_u
    kept = np.flatnonzero(keep)
    P = np.empty((kept.size, n))
    for r in range(kept.size):
        i = kept[r]
        ai = a[i]
        bi = b[i]
        for j in range(n):
            P[r, j] = ai * H_pool[i, j] + bi  # h~ = a h + b
    scores, keys = _scores_and_keys(P, method, C)
    return fit, scores, keys, fallback, bad_u


@njit(**JIT)
def _committee_select(packed, scores, U, W, k, C):
    """Planner step 5-6 from the sorted packed keys of the raw scores: regularize, cut, pick.

    ``packed`` (uint64[n_finite]) is :func:`_packed_keys` of ``scores[0]``, sorted ascending;
    ``scores``, ``U``, ``W``, ``k`` and ``C`` are as in :func:`_committee_run` (``U`` and ``W``
    checked). Fills ``scores[2]`` with ``reg`` (NaN where ``raw`` is not finite) and returns
    ``(eligible, picks, chosen)`` as :func:`_committee_run` does.

    Regularized scores lie in [0, 1] (rank, weight and finite fraction all do), so the eligibility
    cut brackets the cut by bisection of [0, 1] (:func:`kernels.select._eligible_unit`).
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
        elig = _eligible(reg, k_, C[9])
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
    ops, args, consts, prog_start, prog_len, const_start, depth
        The committee's programs, packed and validated, and the stack depth they need
        (:mod:`kernels.programs`).
    XT_obs, y_obs : float64[d, n_obs], float64[n_obs]
        Observed inputs (one row per variable) and outputs.
    XT_pool, U : float64[d, n_pool], float64[n_pool, d]
        Available pool points (one row per variable) and their unit coordinates.
    W : float64[n_pool] or float64[0]
        Their boundary weights (:func:`kernels.rank_reg.edge_weight` with the edge constants of
        ``C``), prepared once per pool, or empty: computed here from ``U``.
    method, k : int
        0 = variance, 1 = pairwise; batch size.
    C : float64[N_CONSTANTS]
        :func:`step_constants`.

    Returns
    -------
    fit : float64[6, n_prog]
        Rows ``a``, ``b``, ``err``, ``n_pairs``, ``ok``, ``keep`` (1/0) (:func:`_unpack_fit`).
    scores : float64[3, n_pool]
        Rows ``raw``, ``v`` (finite fraction), ``reg`` (regularized score).
    eligible, picks, chosen : int64[m], int64[k'], float64[k', d]
        Eligible set, picks, the picks' unit coordinates.
    fallback : bool
    bad_u : int
        Flat index of the first ``U`` entry outside [0, 1]; ``-2 - j`` for the first ``W[j]``
        outside [0, 1]; -1 when both are fine (otherwise the scores are NaN and nothing is
        selected).

    Notes
    -----
    :func:`_committee_prepare`, NumPy's sort of the packed keys, :func:`_committee_select`.
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
    fit6, scores, elig, picks, _chosen, fallback, bad_u = _committee_run(
        ops, args, consts, prog_start, prog_len, const_start, depth, XT_obs, y_obs, XT_pool, U, W, method, k, C
    )
    return (*_unpack_fit(fit6), scores, elig, picks, fallback, bad_u)


# ---------------------------------------------------------------------------------------------
# Public wrappers
# ---------------------------------------------------------------------------------------------


@named_errors
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
    lo, hi, pw = check_keep_edges(max_keep, min_keep, edge_lo, edge_hi, power)
    if int(direct_max) < 0:
        raise ValueError(f"direct_max must be >= 0, got {direct_max}")
    C = np.array(
        [int(max_keep), float(threshold), int(min_keep), float(deg_rel), float(const_rel), int(direct_max),
         lo, hi, pw, check_fraction(top_fraction), float(w_score), float(w_div)],
        dtype=np.float64,
    )  # fmt: skip
    C.flags.writeable = False
    return C


DEFAULT_CONSTANTS = step_constants()
"""The paper's constants as a :func:`step_constants` vector."""


@named_errors
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
    code = METHODS.get(method)
    if code is None:
        raise ValueError(f"method must be one of {sorted(METHODS)}, got {method!r}")
    packed = as_packed_programs(ops, args, consts, prog_start, prog_len, const_start)
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
    out = _committee_step(*packed, depth, XT_obs, y_obs, XT_pool, U_pool, W, code, check_k(k), C)
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


@named_errors
def acquisition_step(
    H_obs, y_obs, H_pool, U_pool, method: str, k: int, *,
    max_keep: int = 4, threshold: float = 0.75, min_keep: int = 2,
    edge_lo: float = EDGE_LO, edge_hi: float = EDGE_HI, power: float = EDGE_POWER,
    top_fraction: float = TOP_FRACTION, w_score: float = W_SCORE, w_div: float = W_DIV,
    deg_rel: float = DEGENERATE_REL, const_rel: float = CONST_REL, direct_max: int = PAIRWISE_DIRECT_MAX,
):  # fmt: skip
    """Planner step 2-6 (calibrate, filter, score, regularize, select), compiled.

    Args:
        H_obs: float64[n_hyp, n_obs] hypothesis values at the observed inputs.
        y_obs: float64[n_obs] observed outputs.
        H_pool: float64[n_hyp, n_pool] hypothesis values on the available pool.
        U_pool: float64[n_pool, d] unit coordinates of the available pool, in [0, 1].
        method: ``"variance"`` or ``"pairwise"``.
        k: Batch size.
        max_keep, ..., direct_max: The step's constants, as for :func:`step_constants`.

    Returns:
        Tuple ``(a, b, n_pairs, ok, err, keep, fallback, raw, v, reg, eligible, picks)``: float64[n_hyp]
        ``a``, ``b``; int64[n_hyp] ``n_pairs``; bool[n_hyp] ``ok``; float64[n_hyp] ``err``;
        bool[n_hyp] ``keep``; bool ``fallback``; float64[n_pool] ``raw``, ``v``, ``reg``; int64[m]
        ``eligible``; int64[k'] ``picks`` (indices refer to columns of ``H_pool``).
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
    k = check_k(k)
    C = step_constants(
        max_keep=max_keep, threshold=threshold, min_keep=min_keep, edge_lo=edge_lo, edge_hi=edge_hi, power=power,
        top_fraction=top_fraction, w_score=w_score, w_div=w_div, deg_rel=deg_rel, const_rel=const_rel, direct_max=direct_max,
    )  # fmt: skip
    fit6, scores, keys, fallback, bad_u = _hypotheses_prepare(H_obs, y_obs, H_pool, U_pool, code, C)
    _raise_bad_unit(int(bad_u), U_pool, _NO_EDGE)
    keys.sort()
    elig, picks, _ = _committee_select(keys, scores, U_pool, _NO_EDGE, k, C)
    fit, n_pairs, flags = _unpack_fit(fit6)
    return fit[0], fit[1], n_pairs, flags[0], fit[2], flags[1], fallback, scores[0], scores[1], scores[2], elig, picks
