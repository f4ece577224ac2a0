"""Sums of products with a common factor (docs/guide/offline-agent.md, "The grammar").

The family covers laws of the shape ``y = M * (c1 T1 + c2 T2 [+ c3 T3])``: a monomial ``M`` of the
inputs every term shares, times a sum of two or three terms, each a product of simple powers of at
most two of a few *core* inputs (a kinetic plus a potential energy over a mass and a height, a
rate with a linear and a quadratic term, a conductance of several parallel paths). Over many inputs
the sum family of the search cannot write it: its library moves at most two exponents away from one
centre, and the terms of such a law differ from any single monomial in all their core inputs.

How it is fitted. For each core set ``S`` of one to ``SearchLimits.common_sum_core`` (3) inputs
(``O(m**3)`` sets for ``m`` inputs): an input outside the core enters every term with the same
power, so ``log|y|`` is that power times the input's log plus a function of the core inputs alone;
fitted on the other inputs' logs beside a quadratic in the core inputs' logs (which takes up that
function), their coefficients rounded to half-integers are ``M``'s exponents. Then ``y / M`` is
fitted, on the relative scale, by every pair of a library of products over ``S`` (exponents the
half-integers from -3 to 3, at most two inputs a product, the constant 1 included: at most 469
products), all pairs scored at once from their Gram matrix; the ``SearchLimits.sum_triple_bases``
best pairs of a set are extended by their best third product. Over all sets, the
``SearchLimits.sum_pairs`` best pairs and ``SearchLimits.sum_triples`` best triples are queued as
ordinary sums (each term ``M * T``), so the collector scores them with the one criterion like
every other law.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

import numpy as np

from etc_fast.policies.symbolic._forms import Form, mono_values
from etc_fast.policies.symbolic._grammar import OUTERS, Atom
from etc_fast.policies.symbolic._lsq import _best_third_columns, error_scale

__all__ = ["core_library", "fit_common_sums"]

_IDENT = OUTERS[0]
#: The powers of a core input in one product: the nonzero half-integers from -3 to 3.
_TERM_POWERS = tuple(float(v) for v in np.arange(-6, 7) / 2.0 if v != 0)


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


def _pair_residuals(U: np.ndarray, t: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Residual sum of squares of ``t`` fitted by each pair of unit columns of ``U``: ``(a, b, rss)``."""
    G = U.T @ U
    g = U.T @ t
    a, b = np.triu_indices(U.shape[1], 1)
    gab = G[a, b]
    det = 1.0 - gab * gab
    ok = det > 1e-9
    a, b, gab, det = a[ok], b[ok], gab[ok], det[ok]
    explained = (g[a] ** 2 + g[b] ** 2 - 2.0 * g[a] * g[b] * gab) / det
    return a, b, float(t @ t) - explained


def _common_exponents(L: np.ndarray, t: np.ndarray, core: tuple[int, ...]) -> np.ndarray | None:
    """``M``'s exponents for the core set ``core``: the log-linear coefficients of the other inputs,
    fitted beside a quadratic in the core inputs' logs (which absorbs ``log|sum|``), rounded to
    half-integers; 0 on the core. ``None`` when the records are too few for that fit."""
    n, m = L.shape
    rest = [j for j in range(m) if j not in core]
    Lc = L[:, list(core)]
    quad = [Lc[:, i] * Lc[:, j] for i, j in itertools.combinations_with_replacement(range(len(core)), 2)]
    D = np.column_stack([np.ones(n), Lc, *quad, L[:, rest]])
    if n < D.shape[1] + 2:
        return None
    beta, *_ = np.linalg.lstsq(D, t, rcond=None)
    out = np.zeros(m)
    out[rest] = np.round(2.0 * beta[D.shape[1] - len(rest):]) / 2.0
    return out


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
    found: list[tuple[float, tuple[int, ...], tuple[int, ...]]] = []  # (relative rss, core, columns)
    libs: dict[tuple[int, ...], tuple[np.ndarray, np.ndarray]] = {}
    for k in range(1, min(lim.common_sum_core, m) + 1):
        for core in itertools.combinations(range(m), k):
            mexp = _common_exponents(L, t_log, core)
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
            a, b, rss = _pair_residuals(U, t)
            if not rss.size:
                continue
            libs[core] = (mexp, E)
            order = np.argsort(rss, kind="stable")
            for i in order[:lim.sum_pairs]:
                found.append((max(float(rss[i]), 0.0) / tt, core, (int(a[i]), int(b[i]))))
            if n >= 7:
                for i in order[:lim.sum_triple_bases]:
                    for cols, r in _best_third_columns(U, t, (int(a[i]), int(b[i]))).items():
                        found.append((max(r, 0.0) / tt, core, cols))
    pairs = sorted((f for f in found if len(f[2]) == 2), key=lambda f: f[0])[:lim.sum_pairs]
    triples = sorted((f for f in found if len(f[2]) == 3), key=lambda f: f[0])[:lim.sum_triples]
    for _r, core, cols in pairs + triples:
        mexp, E = libs[core]
        exps = [mexp + E[c] for c in cols]
        with np.errstate(all="ignore"):
            V = np.stack([mono_values(Af, e) for e in exps], axis=1)
            w = 1.0 / error_scale(yf, 1.0)
            c, *_ = np.linalg.lstsq(V * w[:, None], yf * w, rcond=None)
        if not np.all(np.isfinite(c)) or np.any(np.max(np.abs(V * c) * w[:, None], axis=0) < 1e-7):
            continue
        col.add(Form(atoms, _IDENT, "sum", tuple(tuple(float(v) for v in e) for e in exps),
                     tuple(float(v) for v in c)))
