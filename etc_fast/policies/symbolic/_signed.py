"""The signed family: sums and ratios of monomials over atoms of any sign and logarithms of inputs.

The other families build monomials from atoms that are positive on their input's domain, so that
any real exponent is defined and log-log regressions apply. Many laws need more:

* inputs or atoms that take both signs (a velocity towards or away, a negative enthalpy, the
  cosine of an obtuse angle, a bias voltage): a monomial with *integer* exponents is defined for
  any sign, so such atoms enter with integer exponents (non-negative ones where the atom can be
  zero on its domain);
* logarithms of inputs inside a law (``a + b*T*log(Q)``, ``v*log(m0/mf) = v*log(m0) - v*log(mf)``):
  ``log(x)`` of a positive input is an atom with exponent 1, at most one per term;
* outputs that change sign inside the domain: sums and ratios fitted by linear least squares need
  no positivity, only an error weighting that does not explode at the crossing (each point is
  weighted relative to ``max(|z|, 1e-2 * median |z|)``, see :func:`error_scale`).

The *signed view* holds, per input: the input itself (any sign), ``sin``/``cos`` where the input's
description says angle (any sign), and ``log`` of a positive input. A library of monomials over it
(positive atoms: half-integer exponents in [-2, 2]; signed atoms: integers; ``log`` atoms: 0 or 1,
one per term; the ranges shrink until the library fits ``SearchLimits.signed_library``) feeds

* sums ``sum c_i M_i`` of up to four terms (best-first selection on the weighted least-squares
  residual: best single columns, each completed to its best pair, pairs extended to triples and
  quadruples), and
* ratios ``(sum c_i M_i) / (1 + sum d_j N_j)`` of up to four terms, linearised as
  ``z = sum c_i M_i - sum d_j z N_j`` (numerator-denominator pairs scored from one Gram matrix, then
  extended greedily),

each under the identity and the power outers whose inverse is defined on the outputs. The best
inexact sum or ratio then has the exponents of its positive atoms refined continuously (variable
projection, bounded evaluations) and snapped to simple values again, which reaches exponents off
the half-integer grid (a Hill exponent 2.7).
"""

from __future__ import annotations

import functools
import itertools
from collections.abc import Sequence
from fractions import Fraction

import numpy as np
from scipy.optimize import least_squares

from etc_fast.policies.symbolic._expfamilies import _gelsd_solve
from etc_fast.policies.symbolic._forms import Form, _complexity
from etc_fast.policies.symbolic._grammar import Atom, Outer, VariableDomain, _snap_combos
from etc_fast.policies.symbolic._lsq import BatchedJacobian, _best_third_columns, error_scale, project_out
from kernels.pairs import best_pairs as _best_pairs

__all__ = ["signed_view", "error_scale", "fit_signed", "POWER_OUTERS"]

_HALVES = np.arange(-4, 5) / 2.0


def _power_outer(q: Fraction) -> Outer:
    """``y = s**q`` for a rational ``q`` (inverse ``s = y**(1/q)`` on positive outputs)."""
    v = float(q)
    txt = str(v) if q.denominator in (1, 2) else f"({q.numerator}/{q.denominator})"
    return Outer(f"pow{q.numerator}_{q.denominator}", 2.0, lambda s: s ** v, lambda y: y ** (1.0 / v),
                 lambda y: bool(y.size) and bool(np.all(y > 0)), "({s})**" + txt, False, ((), (("const", v), ("pow",))))


POWER_OUTERS: tuple[Outer, ...] = tuple(_power_outer(Fraction(q)) for q in ("3/2", "2/3", "3", "1/3", "-2", "-3/2", "-2/3"))
"""Powers of a sum beyond the grammar's square root, square and reciprocals (sums only): the same
power-outer family with exponents 3/2, 2/3, 3, 1/3, -2, -3/2 and -2/3."""


def signed_view(domains: Sequence[VariableDomain]) -> tuple[tuple[Atom, ...], tuple[str, ...]]:
    """The signed view's atoms and, per atom, the kind of exponents it takes.

    Returns:
        ``(atoms, kinds)`` where ``kinds[j]`` is ``"pos"`` (positive on the domain: half-integer
        exponents), ``"nonzero"`` (one sign, not positive: integers), ``"signed"`` (can be zero:
        non-negative integers) or ``"log"`` (exponent 0 or 1).
    """
    atoms: list[Atom] = []
    kinds: list[str] = []
    for k, dom in enumerate(domains):
        xs = dom.sample()
        cand = [Atom(k, dom.name)]
        unit = dom.angle_unit
        if unit is not None:
            cand += [Atom(k, dom.name, "sin", unit == "deg"), Atom(k, dom.name, "cos", unit == "deg")]
        for a in cand:
            v = a.values(xs[:, None].repeat(k + 1, axis=1))
            if np.all(v > 0):
                kind = "pos"
            elif np.all(v < 0):
                kind = "nonzero"
            else:
                kind = "signed"
            atoms.append(a)
            kinds.append(kind)
        if dom.low > 0:
            atoms.append(Atom(k, dom.name, "log"))
            kinds.append("log")
    return tuple(atoms), tuple(kinds)


_LEVELS = {
    "pos": (tuple(_HALVES.tolist()), (-2.0, -1.0, 0.0, 1.0, 2.0), (-1.0, 0.0, 1.0)),
    "nonzero": ((-2.0, -1.0, 0.0, 1.0, 2.0), (-2.0, -1.0, 0.0, 1.0, 2.0), (-1.0, 0.0, 1.0)),
    "signed": ((0.0, 1.0, 2.0), (0.0, 1.0, 2.0), (0.0, 1.0)),
}


def _count(axes: Sequence[Sequence[float]], n_logs: int, max_atoms: int) -> int:
    """Monomials with at most ``max_atoms`` atoms: per-axis non-zero options, at most one log."""
    poly = np.zeros(max_atoms + 1, dtype=np.int64)
    poly[0] = 1
    for a in axes:
        nz = sum(1 for v in a if v != 0.0)
        new = poly.copy()
        new[1:] += poly[:-1] * nz
        poly = new
    total = int(poly.sum())
    if n_logs:
        total += n_logs * int(poly[:max_atoms].sum())
    return total


@functools.lru_cache(maxsize=64)
def _library(kinds: tuple[str, ...], max_size: int, max_atoms: int) -> np.ndarray:
    """Exponent vectors over the signed view, at most ``max_atoms`` atoms a term
    (``SearchLimits.signed_atoms``): the widest level whose size fits ``max_size``.

    A function of its arguments only, so it is built once per triple and shared (read-only).
    """
    plain = [j for j, k in enumerate(kinds) if k != "log"]
    logs = [j for j, k in enumerate(kinds) if k == "log"]
    m = len(kinds)
    for level in range(3):
        axes = [_LEVELS[kinds[j]][level] for j in plain]
        size = _count(axes, len(logs), max_atoms)
        if size <= max_size or level == 2:
            break
    E = _sparse_rows(axes, plain, logs, m, max_atoms)
    E = E[:max_size] if len(E) > max_size else E
    E.setflags(write=False)
    return E


def _sparse_rows(axes: Sequence[Sequence[float]], plain: Sequence[int], logs: Sequence[int], m: int,
                 max_atoms: int) -> np.ndarray:
    """Every exponent vector with at most ``max_atoms`` non-zero entries: the plain atoms take
    their axis's values, a log atom 0 or 1 (after its base vector, one log at a time).

    Only the sparse vectors are built (``O(p**max_atoms w**max_atoms)`` for ``p`` plain atoms of
    at most ``w`` non-zero values), never the whole grid, in the grid's own order: the order
    ``itertools.product(*axes)`` visits them in, each followed by its log rows.
    """
    p = len(plain)
    zero = [list(a).index(0.0) for a in axes]
    nonzero = [[i for i, v in enumerate(a) if v != 0.0] for a in axes]
    picks: list[list[int]] = []
    for k in range(min(max_atoms, p) + 1):
        for sub in itertools.combinations(range(p), k):
            for choice in itertools.product(*(nonzero[j] for j in sub)):
                row = list(zero)
                for j, i in zip(sub, choice):
                    row[j] = i
                picks.append(row)
    index = np.array(picks, dtype=np.int64).reshape(-1, p)
    if p:
        index = index[np.lexsort(index.T[::-1])]
    base = np.zeros((len(index), m))
    for col, j in enumerate(plain):
        base[:, j] = np.asarray(axes[col], dtype=np.float64)[index[:, col]]
    if not logs:
        return base
    rows = []
    room = np.count_nonzero(base, axis=1) < max_atoms
    for r in range(len(base)):
        rows.append(base[r])
        if room[r]:
            for j in logs:
                with_log = base[r].copy()
                with_log[j] = 1.0
                rows.append(with_log)
    return np.array(rows, dtype=np.float64).reshape(-1, m)


def _power_law_terms(kinds: Sequence[str], A: np.ndarray, z: np.ndarray, lim, count: int = 4) -> np.ndarray:
    """Exponent rows of the power law of ``z`` on the positive atoms, snapped to simple values.

    When ``z`` has one sign, the log-linear fit of ``log|z|`` on the logs of the positive atoms
    gives exponents that may lie off the half-integer grid (``k / m**1.3``); its ``count`` nearest
    simple roundings join the library, so a dominant term off the grid can pair with a small one.
    """
    pos = [j for j, k in enumerate(kinds) if k == "pos"]
    ok = np.isfinite(z) & (z != 0)
    if not pos or ok.sum() < len(pos) + 2 or not (np.all(z[ok] > 0) or np.all(z[ok] < 0)):
        return np.zeros((0, len(kinds)))
    with np.errstate(all="ignore"):
        L = np.log(A[ok][:, pos])
    B = np.column_stack([np.ones(L.shape[0]), L])
    beta, *_ = np.linalg.lstsq(B, np.log(np.abs(z[ok])), rcond=None)
    if not np.all(np.isfinite(beta)):
        return np.zeros((0, len(kinds)))
    rows = []
    for combo in _snap_combos(beta[1:], 0.1, count, lim.snap_product):
        r = np.zeros(len(kinds))
        r[pos] = combo
        rows.append(r)
    return np.array(rows).reshape(-1, len(kinds))


def _values(A: np.ndarray, E: np.ndarray, term_by_term: int) -> np.ndarray:
    """Monomial values ``prod_j A[:, j] ** E[i, j]`` (float64[n, len(E)]), any sign of ``A``.

    At most ``term_by_term`` rows (``SearchLimits.signed_term_by_term``: the refinements) are
    computed term by term; more go grouped by exponent, whose products :func:`_values_rows` does
    not reproduce.
    """
    V = np.ones((A.shape[0], E.shape[0]))
    if E.shape[0] <= term_by_term:  # a few terms (refinement): term by term
        with np.errstate(all="ignore"):
            for i, row in enumerate(E):
                for j, p in enumerate(row):
                    if p != 0.0:
                        V[:, i] *= A[:, j] if p == 1.0 else A[:, j] ** p
        return V
    with np.errstate(all="ignore"):
        for j in range(A.shape[1]):
            for p in np.unique(E[:, j]):
                if p == 0.0:
                    continue
                sel = E[:, j] == p
                V[:, sel] *= (A[:, j] ** p)[:, None]
    return V


def _values_rows(A: np.ndarray, PB: np.ndarray) -> np.ndarray:
    """``_values(A, PB[b])`` for every ``b`` of a stack of few-term exponent rows ``PB`` [B, terms,
    atoms] -> [B, n, terms], each with the bits of the single call (the same scalar powers, the same
    order of products)."""
    B, T, m = PB.shape
    V = np.ones((B, A.shape[0], T))
    with np.errstate(all="ignore"):
        for i in range(T):
            for j in range(m):
                col = PB[:, i, j]
                nan = np.isnan(col)
                for p in dict.fromkeys(col[~nan].tolist()):
                    if p != 0.0:
                        V[col == p, :, i] *= A[:, j] if p == 1.0 else A[:, j] ** np.float64(p)
                if nan.any():
                    V[nan, :, i] *= A[:, j] ** np.float64(np.nan)
    return V


def _pairs_after(U: np.ndarray, t: np.ndarray, base: tuple[int, ...], keep: int) -> list[tuple[int, ...]]:
    """``base`` plus each of the ``keep`` best pairs of columns once ``base`` is projected out."""
    Ut, tr, nn, valid = project_out(U, t, base)
    idx = np.flatnonzero(valid)
    if len(idx) < 2:
        return []
    return [tuple(sorted((*base, int(idx[i]), int(idx[j])))) for i, j in _best_pairs(Ut[:, idx] / nn[idx], tr, keep)]


def _greedy(U: np.ndarray, t: np.ndarray, pairs: int, max_terms: int, extend: int, best_more, pair_budget: int = 0):
    """Subsets of columns of ``U`` (unit norm) for least squares of ``t``.

    The best ``pairs`` pairs (all pairs scored); triples: each of the best single columns (three,
    or as many as ``pair_budget`` pair evaluations allow, at most 32) with its best pairs in the
    complement, and the best pairs extended by their best columns;
    quadruples: the two best pairs with their best pairs in the complement, and the best triples
    extended by their best columns (``extend`` subsets kept per size); plus the two best singles.
    """
    res1 = float(t @ t) - (U.T @ t) ** 2
    n_seeds = int(min(32, max(3, pair_budget // max(U.shape[1] ** 2, 1))))
    singles: list[tuple[int, ...]] = [(int(a),) for a in np.argsort(res1, kind="stable")[:n_seeds]]
    subsets: dict[tuple[int, ...], None] = dict.fromkeys(_best_pairs(U, t, pairs))
    frontier = list(subsets)[:extend]
    seeds: dict[int, list[tuple[int, ...]]] = {3: singles, 4: list(subsets)[:2]}
    for size in range(3, max_terms + 1):
        grown: dict[tuple[int, ...], float] = {}
        for base in frontier:
            grown.update(best_more(U, t, base))
        for base in seeds[size]:
            for sub in _pairs_after(U, t, base, 2):
                grown[sub] = 0.0
        ranked = []
        for sub in grown:
            c, *_ = np.linalg.lstsq(U[:, list(sub)], t, rcond=None)
            r = U[:, list(sub)] @ c - t
            ranked.append((float(r @ r), sub))
        ranked.sort()
        frontier = [sub for _r, sub in ranked[:extend]]
        subsets.update(dict.fromkeys(frontier))
    return list(subsets) + singles[:2]


def fit_signed(col, atoms: tuple[Atom, ...], kinds: Sequence[str], outer: Outer, z: np.ndarray, lim, *,
               ratios: bool = True) -> None:
    """Queue sums and ratios over the signed view for ``z = outer.inverse(y)`` (see module docstring).

    Args:
        col: The search's collector (``add``, ``flush``, ``atoms_matrix``, ``tol``).
        atoms: The signed view.
        kinds: Per atom, its exponent kind (:func:`signed_view`).
        outer: Outer transform the forms use.
        z: float64[n] targets (NaN where undefined).
        lim: :class:`._search.SearchLimits`.
        ratios: Also fit ratios of sums.
    """
    with np.errstate(all="ignore"):
        _fit_signed(col, atoms, kinds, outer, z, lim, ratios)


def _fit_signed(col, atoms, kinds, outer, z, lim, ratios) -> None:
    A = col.atoms_matrix(atoms)
    ok = np.isfinite(z) & np.all(np.isfinite(A), axis=1)
    zo, Ao = z[ok], A[ok]
    n = zo.size
    if n < 4:
        return
    ws = error_scale(zo, 1.0)
    E = _library(tuple(kinds), int(lim.signed_library), int(lim.signed_atoms))
    E = np.vstack([E, _power_law_terms(kinds, Ao, zo, lim)])
    V = _values(Ao, E, lim.signed_term_by_term)
    good = np.all(np.isfinite(V), axis=0) & (np.max(np.abs(V), axis=0) < 1e150) & (np.max(np.abs(V), axis=0) > 0)
    E, V = E[good], V[:, good]
    if not len(E):
        return
    t = zo / ws
    fits: list[tuple[float, int, Form]] = []  # (weighted residual, terms, form)

    # sums
    Vw = V / ws[:, None]
    nrm = np.linalg.norm(Vw, axis=0)
    U = Vw / nrm
    max_terms = int(min(4, n - 3))
    if max_terms >= 2:
        for idx in _greedy(U, t, lim.sum_pairs, max_terms, lim.ratio_extend, _best_third_columns,
                           lim.signed_pair_evals):
            idx = list(idx)
            c, *_ = np.linalg.lstsq(Vw[:, idx], t, rcond=None)
            if not np.all(np.isfinite(c)) or np.any(np.max(np.abs(Vw[:, idx] * c), axis=0) < 1e-7):
                continue
            f = Form(atoms, outer, "sum", tuple(tuple(float(v) for v in E[i]) for i in idx), tuple(float(v) for v in c))
            col.add(f)
            r = Vw[:, idx] @ c - t
            fits.append((float(np.sqrt(np.mean(r * r))), len(idx), f))

    # ratios (numerator, then denominator terms; the denominator's constant is 1)
    if ratios and n >= 5:
        Er = _library(tuple(kinds), int(max(1, min(lim.ratio_library, lim.signed_library // 3))), int(lim.signed_atoms))
        Vr = _values(Ao, Er, lim.signed_term_by_term)
        okr = np.all(np.isfinite(Vr), axis=0) & (np.max(np.abs(Vr), axis=0) < 1e150) & (np.max(np.abs(Vr), axis=0) > 0)
        Er, Vr = Er[okr], Vr[:, okr]
        nz = np.any(Er != 0, axis=1)
        cols = np.column_stack([Vr / ws[:, None], -(Vr[:, nz] * zo[:, None]) / ws[:, None]])
        exps = np.vstack([Er, Er[nz]])
        is_den = np.concatenate([np.zeros(len(Er), dtype=bool), np.ones(int(nz.sum()), dtype=bool)])
        cn = np.linalg.norm(cols, axis=0)
        keep = np.isfinite(cn) & (cn > 0)
        cols, exps, is_den, cn = cols[:, keep], exps[keep], is_den[keep], cn[keep]
        Ur = cols / cn
        if is_den.any() and (~is_den).any():
            subsets = _greedy(Ur, t, lim.ratio_pairs, int(min(4, n - 3)), lim.ratio_extend, _best_third_columns,
                              lim.signed_pair_evals)
            for idx in subsets:
                idx = list(idx)
                c, *_ = np.linalg.lstsq(cols[:, idx], t, rcond=None)
                if not np.all(np.isfinite(c)) or np.any(np.max(np.abs(cols[:, idx] * c), axis=0) < 1e-7):
                    continue
                order = sorted(range(len(idx)), key=lambda i: bool(is_den[idx[i]]))
                n_num = int(sum(1 for i in idx if not is_den[i]))
                if n_num == 0 or n_num == len(idx):
                    continue
                f = Form(atoms, outer, "ratio", tuple(tuple(float(v) for v in exps[idx[i]]) for i in order),
                         tuple(float(c[i]) for i in order), n_num=n_num)
                col.add(f)
                r = cols[:, idx] @ c - t
                fits.append((float(np.sqrt(np.mean(r * r))), len(idx), f))

    col.flush()
    # no exact fit on the library: the best two- and three-term fits (weighted residual in z), with
    # and without log atoms, may have exponents off the half-integer grid
    if fits and col.tol < min(p[0] for p in fits) < lim.signed_refine_below:
        logs = [j for j, k in enumerate(kinds) if k == "log"]
        chosen: list[Form] = []
        for size in (2, 3):
            same = [p for p in fits if p[1] == size and p[0] < lim.signed_refine_below]
            plain = [p for p in same if not any(e[j] for e in p[2].exps for j in logs)]
            for group in (same, plain):  # a log term can mimic an exponent off the grid
                if group:
                    f = min(group, key=lambda p: (p[0], _complexity(p[2])))[2]
                    if f not in chosen:
                        chosen.append(f)
        for f in chosen:
            _refine_exponents(col, f, kinds, Ao, zo, ws, lim)


def _refine_exponents(col, form: Form, kinds: Sequence[str], A: np.ndarray, z: np.ndarray, ws: np.ndarray, lim) -> None:
    """Refine the exponents of a sum's or ratio's positive atoms continuously, then snap them.

    The coefficients are solved linearly for each exponent vector (variable projection; a ratio
    through its linearisation); ``scipy.optimize.least_squares`` moves the exponents with at most
    ``lim.refine_nfev_per_param`` evaluations per exponent.
    """
    P0 = np.array(form.exps, dtype=np.float64)  # [terms, atoms]
    pos = [j for j, k in enumerate(kinds) if k == "pos"]
    free = [(i, j) for i in range(P0.shape[0]) for j in pos if P0[i, j] != 0.0]
    if not free or z.size <= len(free) + len(form.params) + 1:
        return
    k = form.n_num if form.kind == "ratio" else P0.shape[0]
    t = z / ws

    def design(P):
        V = _values(A, P, lim.signed_term_by_term)
        cols = V[:, :k] / ws[:, None]
        if form.kind == "ratio":
            cols = np.column_stack([cols, -(V[:, k:] * z[:, None]) / ws[:, None]])
        return cols

    def solve(P):
        M = design(P)
        if not np.all(np.isfinite(M)):
            return None, None
        c, *_ = np.linalg.lstsq(M, t, rcond=None)
        return c, M @ c - t

    def with_free(v):
        P = P0.copy()
        for (i, j), x in zip(free, v):
            P[i, j] = x
        return P

    def resid(v):
        _c, r = solve(with_free(v))
        return r if r is not None else np.full(t.size, 1e3)

    def resid_rows(X):  # resid at every row of X [B, len(free)], each row with resid's bits
        B = X.shape[0]
        if P0.shape[0] > lim.signed_term_by_term:  # _values' grouped path: row by row
            return np.stack([resid(x) for x in X])
        PB = np.repeat(P0[None], B, axis=0)
        for col, (i, j) in enumerate(free):
            PB[:, i, j] = X[:, col]
        V = _values_rows(A, PB)  # [B, n, terms]
        cols = V[:, :, :k] / ws[None, :, None]
        if form.kind == "ratio":
            cols = np.concatenate([cols, -(V[:, :, k:] * z[None, :, None]) / ws[None, :, None]], axis=2)
        out = np.full((B, t.size), 1e3)
        fin = np.all(np.isfinite(cols), axis=(1, 2))
        c = _gelsd_solve(cols[fin], np.repeat(t[None], int(fin.sum()), axis=0)) if fin.any() else None
        if c is None:  # a solve failed (or none is finite): row by row, as resid does
            return np.stack([resid(x) for x in X])
        out[fin] = np.stack([M @ ci - t for M, ci in zip(cols[fin], c)])
        return out

    v0 = np.array([P0[i, j] for i, j in free])
    fd = BatchedJacobian(resid, resid_rows)
    try:
        sol = least_squares(fd.fun, v0, jac=fd.jac, max_nfev=lim.refine_nfev_per_param * v0.size,
                            method="lm" if t.size >= v0.size else "trf")
    except Exception:  # noqa: BLE001 - an optimizer failure only loses this refinement
        return
    for combo in _snap_combos(sol.x, 0.05, lim.refine_snap_combos, lim.snap_product):
        P = with_free(combo)
        c, r = solve(P)
        if c is None or not np.all(np.isfinite(c)):
            continue
        col.add(Form(form.atoms, form.outer, form.kind, tuple(tuple(float(x) for x in row) for row in P),
                     tuple(float(x) for x in c), n_num=form.n_num))
        # a term the refined fit no longer needs (negligible contribution): the law without it
        small = np.max(np.abs(design(P) * c), axis=0) < 1e-9
        n_num = form.n_num - int(small[:k].sum()) if form.kind == "ratio" else 0
        if small.any() and (~small).any() and (form.kind != "ratio" or 0 < n_num < int((~small).sum())):
            P2 = P[~small]
            k2 = n_num if form.kind == "ratio" else int((~small).sum())
            M = design(P2) if form.kind != "ratio" else None
            if M is None:  # ratio: the design of the kept terms
                V = _values(A, P2, lim.signed_term_by_term)
                M = np.column_stack([V[:, :k2] / ws[:, None], -(V[:, k2:] * z[:, None]) / ws[:, None]])
            c2, *_ = np.linalg.lstsq(M, t, rcond=None)
            if np.all(np.isfinite(c2)):
                col.add(Form(form.atoms, form.outer, form.kind, tuple(tuple(float(x) for x in row) for row in P2),
                             tuple(float(x) for x in c2), n_num=n_num))
    col.flush()
