"""Sums of products with a common factor (docs/guide/offline-agent.md, "The grammar").

The family covers laws of the shape ``y = M * (c1 T1 + c2 T2 [+ c3 T3])``: a monomial ``M`` of the
inputs every term shares, times a sum of two or three terms, each a product of simple powers of at
most two of a few *core* inputs (a kinetic plus a potential energy over a mass and a height, a
rate with a linear and a quadratic term, a conductance of several parallel paths). Over many inputs
the sum family of the search cannot write it: its library moves at most two exponents away from one
centre, and the terms of such a law differ from any single monomial in all their core inputs.

How it is fitted. Core sets ``S`` of 1, 2, ... inputs are taken, every set of a size, while the
work (``C(m, k)`` sets of ``k`` inputs times the square of their library's size, summed over the
sizes) stays within ``SearchLimits.common_sum_work``: cores of up to 3 inputs at 10 inputs, up to 4
at 7, all inputs at 6 or fewer. For each set, an input outside the core enters every term with the
same power, so ``log|y|`` is that power times the input's log plus a function of the core inputs
alone; fitted on the other inputs' logs beside a quadratic in the core inputs' logs (which takes up
that function; a linear one when the records are too few), their coefficients rounded to
half-integers are ``M``'s exponents. Then ``y / M`` is fitted, on the relative scale, by sums of a
library of products over ``S`` (exponents the half-integers from -3 to 3, at most two inputs a
product, the constant 1 included: 469 products for three inputs, 913 for four):

* every pair, scored at once from the library's Gram matrix;
* every triple with two products of at most one input (the separable sums of physics: a kinetic
  plus a potential plus a constant term), the third from the whole library, scored from the Gram
  matrix by Schur complements; and the ``SearchLimits.sum_triple_bases`` best pairs extended by
  their best third product.

A Gram-matrix score of a nearly collinear set is inexact (by a bound stated in
:func:`_gram_error`), so the best sets are confirmed by their exact residuals (batched QR,
:func:`_best_sets`). Over all sets, the ``SearchLimits.sum_pairs`` best pairs and
``SearchLimits.sum_triples`` best triples are queued as ordinary sums (each term ``M * T``), so
the collector scores them with the one criterion like every other law.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Sequence

import numpy as np

from etc_fast.policies.symbolic._forms import Form, mono_values
from etc_fast.policies.symbolic._grammar import OUTERS, Atom
from etc_fast.policies.symbolic._lsq import _best_third_columns, error_scale

__all__ = ["core_library", "fit_common_sums", "largest_core", "library_size", "probe_slopes"]

_IDENT = OUTERS[0]
#: The powers of a core input in one product: the nonzero half-integers from -3 to 3.
_TERM_POWERS = tuple(float(v) for v in np.arange(-6, 7) / 2.0 if v != 0)


def library_size(k: int) -> int:
    """Products in the library of a core of ``k`` inputs (:func:`core_library`)."""
    w = len(_TERM_POWERS)
    return 1 + k * w + math.comb(k, 2) * w * w


def largest_core(m: int, work: int) -> int:
    """The most core inputs searched among ``m`` inputs: the largest ``K`` with ``sum over k <= K of
    C(m, k) * library_size(k)**2`` (the Gram entries of every core set) at most ``work``."""
    total, out = 0, 0
    for k in range(1, m + 1):
        total += math.comb(m, k) * library_size(k) ** 2
        if total > work:
            break
        out = k
    return out


def core_library(core: Sequence[int], m: int) -> np.ndarray:
    """Products over the inputs ``core`` (float64[k, m] exponent vectors): the constant 1, each input
    alone and each pair of inputs at every power of :data:`_TERM_POWERS`."""
    rows = [np.zeros(m)]
    for i in core:
        for e in _TERM_POWERS:
            v = np.zeros(m)
            v[i] = e
            rows.append(v)
    for i, j in itertools.combinations(core, 2):
        for ei, ej in itertools.product(_TERM_POWERS, _TERM_POWERS):
            v = np.zeros(m)
            v[i], v[j] = ei, ej
            rows.append(v)
    return np.array(rows)


def _exact_rss(U: np.ndarray, t: np.ndarray, sets: np.ndarray) -> np.ndarray:
    """Residual sum of squares of ``t`` fitted by each set of columns of ``U`` (int[s, k]), from
    the residual vectors of batched QR factorizations (accurate to rounding, unlike the Gram
    shortcut)."""
    Q, _ = np.linalg.qr(np.transpose(U[:, sets], (1, 0, 2)))
    r = t[None, :] - np.einsum("snk,sk->sn", Q, np.einsum("snk,n->sk", Q, t))
    return np.einsum("sn,sn->s", r, r)


def _best_sets(U: np.ndarray, t: np.ndarray, sets: np.ndarray, rss: np.ndarray, err: np.ndarray,
               keep: int) -> list[tuple[float, tuple[int, ...]]]:
    """The ``keep`` sets of columns with the least exact residual, given their Gram-matrix residuals
    ``rss`` and those residuals' rounding-error bounds ``err``.

    A Gram residual of a nearly collinear set can be off by far more than an exact fit's residual
    (even below 0), so it only bounds the exact one from below (``rss - err``): sets are taken in
    that bound's order and their exact residuals computed (:func:`_exact_rss`) until the next
    bound exceeds the ``keep``-th best exact residual found. The result is the Gram order's where
    every set is well conditioned, and the exact order where not. ``[(rss, sorted set)]``, best first."""
    lower = np.maximum(rss - err, 0.0)
    chunk = max(4 * keep, 64)
    best: list[tuple[float, tuple[int, ...]]] = []

    def confirm(idx: np.ndarray, exact: np.ndarray) -> None:
        if len(best) == keep and np.isfinite(exact).all() and all(math.isfinite(f[0]) for f in best):
            # A set whose residual is not below the keep-th kept one lands after it in the stable
            # sort and is cut, so only those below are built: the same list, without a tuple for
            # every set of a large, ill-conditioned search.
            below = exact < best[-1][0]
            exact, idx = exact[below], idx[below]
        best.extend((float(v), tuple(sorted(int(c) for c in sets[i]))) for v, i in zip(exact, idx, strict=True))
        best.sort(key=lambda f: f[0])
        del best[keep:]

    first = np.arange(lower.size)
    if lower.size > chunk:  # a partial sort finds the first chunk
        first = np.argpartition(lower, chunk - 1)[:chunk]
    confirm(first, _exact_rss(U, t, sets[first]))
    if lower.size <= chunk:
        return best
    # only sets whose bound is below the keep-th exact residual can still enter
    rest = np.ones(lower.size, dtype=bool)
    rest[first] = False
    rest &= lower <= best[-1][0]
    cand = np.flatnonzero(rest)
    cand = cand[np.lexsort((cand, lower[cand]))]
    # The residuals are computed a block of chunks at a time, the block doubling while the search
    # goes on (each set's factorization is its own, so the values are those of chunk-sized calls,
    # and the stop is still checked chunk by chunk): a search that stops early computes at most
    # twice the chunks it needed; one that runs through many makes few calls.
    done, block, exact, lowest = 0, 1, np.empty(0), np.empty(0)
    for lo in range(0, cand.size, chunk):
        idx = cand[lo:lo + chunk]
        if lower[idx[0]] > best[-1][0]:
            break
        if lo >= done + exact.size:
            done, exact = lo, _exact_rss(U, t, sets[cand[lo:lo + block * chunk]])
            lowest = np.minimum.reduceat(exact, np.arange(0, exact.size, chunk))
            block = min(2 * block, 64)
        if lowest[(lo - done) // chunk] >= best[-1][0]:
            continue  # nothing in this chunk can enter (a NaN minimum does not compare, so it goes in)
        confirm(idx, exact[lo - done:lo - done + idx.size])
    return best


def _gram_error(n: int, tt: float, *conditioning: np.ndarray) -> np.ndarray:
    """A bound on the rounding error of a residual computed from the Gram matrix: each Gram entry
    is a sum of ``n`` products (relative error ``n * eps``), magnified by the reciprocal of each
    Schur complement the formula divides by; taken 8 times over for the few terms combined."""
    out = np.asarray(8.0 * n * np.finfo(float).eps * tt)
    for c in conditioning:
        out = out / c
    return out


def _pair_gram(U: np.ndarray, t: np.ndarray, a: np.ndarray, b: np.ndarray):
    """The Gram matrix ``G`` of the unit columns ``U``, ``g = U' t``, and the pairs ``(a, b)`` that
    are not collinear (``1 - G_ab**2 > 1e-9``) with ``G_ab`` and that determinant:
    ``(G, g, a, b, G_ab, det)``."""
    G = U.T @ U
    g = U.T @ t
    gab = G[a, b]
    det = 1.0 - gab * gab
    ok = det > 1e-9
    return G, g, a[ok], b[ok], gab[ok], det[ok]


def _best_pairs(U: np.ndarray, t: np.ndarray, keep: int) -> list[tuple[float, tuple[int, ...]]]:
    """The ``keep`` pairs of unit columns of ``U`` that fit ``t`` best: every pair scored from the
    Gram matrix, the best confirmed exactly (:func:`_best_sets`)."""
    G, g, a, b, gab, det = _pair_gram(U, t, *np.triu_indices(U.shape[1], 1))
    if not a.size:
        return []
    tt = float(t @ t)
    rss = tt - (g[a] ** 2 + g[b] ** 2 - 2.0 * g[a] * g[b] * gab) / det
    return _best_sets(U, t, np.column_stack([a, b]), rss, _gram_error(len(t), tt, det), keep)


def probe_slopes(L: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Each input's log-slope ``d log|y| / d log x`` from records that differ in that input alone
    (the bootstrap's one-at-a-time probes), the median over such pairs with outputs of one sign;
    NaN for an input no such pair moves. For an input outside a sum's core the slope is exactly
    its power in the common factor, however the sum behaves (even where it changes sign)."""
    n, m = L.shape
    out = np.full(m, np.nan)
    same = L[:, None, :] == L[None, :, :]  # [n, n, m]
    differ_in_one = (m - same.sum(axis=2)) == 1
    ia, ib = np.nonzero(np.triu(differ_in_one & (y[:, None] * y[None, :] > 0), 1))
    slopes: dict[int, list[float]] = {}
    for i, j in zip(ia, ib, strict=True):
        k = int(np.flatnonzero(~same[i, j])[0])
        slopes.setdefault(k, []).append(float((np.log(abs(y[j])) - np.log(abs(y[i]))) / (L[j, k] - L[i, k])))
    for k, v in slopes.items():
        out[k] = float(np.median(v))
    return out


def _common_exponents(L: np.ndarray, t: np.ndarray, core: tuple[int, ...],
                      slopes: np.ndarray | None = None) -> np.ndarray | None:
    """``M``'s exponents for the core set ``core``, rounded to half-integers, 0 on the core: an
    input's probe slope where it has one (:func:`probe_slopes`), else its log-linear coefficient,
    fitted beside a quadratic in the core inputs' logs (which absorbs ``log|sum|``; a linear one
    when the records are too few for the quadratic). ``None`` when the records are too few."""
    n, m = L.shape
    out = np.zeros(m)
    if slopes is None:
        slopes = np.full(m, np.nan)
    probed = [j for j in range(m) if j not in core and np.isfinite(slopes[j])]
    out[probed] = np.round(2.0 * slopes[probed]) / 2.0
    rest = [j for j in range(m) if j not in core and j not in probed]
    if not rest:
        return out
    t = t - L[:, probed] @ out[probed]
    Lc = L[:, list(core)]
    quad = [Lc[:, i] * Lc[:, j] for i, j in itertools.combinations_with_replacement(range(len(core)), 2)]
    for D in (np.column_stack([np.ones(n), Lc, *quad, L[:, rest]]), np.column_stack([np.ones(n), Lc, L[:, rest]])):
        if n >= D.shape[1] + 2:
            beta, *_ = np.linalg.lstsq(D, t, rcond=None)
            out[rest] = np.round(2.0 * beta[D.shape[1] - len(rest):]) / 2.0
            return out
    return None


def _simple_columns(E: np.ndarray) -> np.ndarray:
    """Indices of the library's products of at most one input (the constant 1 included)."""
    return np.flatnonzero(np.count_nonzero(E, axis=1) <= 1)


def _anchored_triples(U: np.ndarray, t: np.ndarray, anchors: np.ndarray, keep: int) -> list[tuple[float, tuple[int, ...]]]:
    """The ``keep`` best triples of unit columns of ``U`` fitting ``t`` among those with two columns
    from ``anchors``: every pair of anchors with every third column, scored from the Gram matrix
    (the third column's gain after the pair is projected out, by Schur complements) and the best
    confirmed exactly (:func:`_best_sets`). ``[(residual sum of squares, sorted columns)]``."""
    p = U.shape[1]
    if anchors.size < 2 or p < 3:
        return []
    ia, ib = np.triu_indices(anchors.size, 1)
    G, g, a, b, gab, det = _pair_gram(U, t, anchors[ia], anchors[ib])
    if not a.size:
        return []
    alpha = (g[a] - gab * g[b]) / det  # the pair's coefficients on t
    beta = (g[b] - gab * g[a]) / det
    Ga, Gb = G[a], G[b]
    num = g[None, :] - Ga * alpha[:, None] - Gb * beta[:, None]
    den = 1.0 - (Ga * Ga + Gb * Gb - 2.0 * gab[:, None] * Ga * Gb) / det[:, None]
    rows = np.arange(a.size)
    den[rows, a] = 0.0
    den[rows, b] = 0.0
    r, c = np.nonzero(den > 1e-9)
    tt = float(t @ t)
    rss = tt - (g[a] * alpha + g[b] * beta)[r] - num[r, c] ** 2 / den[r, c]
    sets = np.column_stack([a[r], b[r], c])
    return _best_sets(U, t, sets, rss, _gram_error(len(t), tt, det[r], den[r, c]), keep)


def fit_common_sums(col, atoms: tuple[Atom, ...], A: np.ndarray, y: np.ndarray, lim) -> None:
    """Queue the best ``M * (c1 T1 + c2 T2 [+ c3 T3])`` laws on ``col`` (see the module docstring).

    Args:
        col: The search's collector.
        atoms: The raw atoms (one per input).
        A: float64[n, len(atoms)] their values on the records.
        y: float64[n] outputs.
        lim: The search's :class:`~._search.SearchLimits`.
    """
    m = A.shape[1]
    fin = np.isfinite(y) & (y != 0) & np.all(np.isfinite(A), axis=1) & np.all(A > 0, axis=1)
    n = int(fin.sum())
    if n < max(6, m + 2):
        return
    Af, yf = A[fin], y[fin]
    L, t_log = np.log(Af), np.log(np.abs(yf))
    slopes = probe_slopes(L, yf)
    found: list[tuple[float, tuple[int, ...], tuple[int, ...]]] = []  # (relative rss, core, columns)
    libs: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
    for k in range(1, largest_core(m, lim.common_sum_work) + 1):
        for core in itertools.combinations(range(m), k):
            mexp = _common_exponents(L, t_log, core, slopes)
            if mexp is None:
                continue
            with np.errstate(all="ignore"):
                t_raw = yf / mono_values(Af, mexp)
                E = core_library(core, m)
                V = np.stack([mono_values(Af, e) for e in E], axis=1)
            if not (np.all(np.isfinite(t_raw)) and np.all(np.isfinite(V))):
                continue
            w = 1.0 / error_scale(t_raw, 1.0)
            Vw, t = V * w[:, None], t_raw * w
            nrm = np.linalg.norm(Vw, axis=0)
            keep = nrm > 0
            if keep.sum() < 2:
                continue
            E, Vw, nrm = E[keep], Vw[:, keep], nrm[keep]
            U = Vw / nrm
            tt = float(t @ t)
            best = _best_pairs(U, t, lim.sum_pairs)
            if not best:
                continue
            libs[core] = (mexp, E)
            found.extend((r / tt, core, cols) for r, cols in best)
            if n >= 7:
                grown = sorted({cols for _r, base in best[:lim.sum_triple_bases]
                                for cols in _best_third_columns(U, t, base)})
                if grown:
                    exact = _exact_rss(U, t, np.array(grown))
                    found.extend((float(r) / tt, core, cols) for r, cols in zip(exact, grown, strict=True))
                found.extend((r / tt, core, cols) for r, cols in _anchored_triples(U, t, _simple_columns(E), lim.sum_triples))
    found = sorted(dict.fromkeys(found), key=lambda f: f[0])
    pairs = [f for f in found if len(f[2]) == 2][:lim.sum_pairs]
    triples = [f for f in found if len(f[2]) == 3][:lim.sum_triples]
    w = 1.0 / error_scale(yf, 1.0)
    for _r, core, cols in pairs + triples:
        mexp, E = libs[core]
        exps = [mexp + E[c] for c in cols]
        with np.errstate(all="ignore"):
            V = np.stack([mono_values(Af, e) for e in exps], axis=1)
            Vw = V * w[:, None]
            nrm = np.linalg.norm(Vw, axis=0)  # unit columns: terms of very unequal size keep their place
            c, *_ = np.linalg.lstsq(Vw / nrm, yf * w, rcond=None)
            c = c / nrm
        if not np.all(np.isfinite(c)) or np.any(np.max(np.abs(V * c) * w[:, None], axis=0) < 1e-7):
            continue
        col.add(Form(atoms, _IDENT, "sum", tuple(tuple(float(v) for v in e) for e in exps),
                     tuple(float(v) for v in c)))
