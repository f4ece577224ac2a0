"""Generic symbolic-regression search over a small grammar of laws with fitted constants.

Given observations ``X`` (n, d), ``y`` (n) and the input domains, :func:`search` returns ranked
candidate laws written in the hypothesis language (:mod:`etc_fast.expr`). Grammar (see
:mod:`._grammar` for atoms and outer transforms)::

    law   := outer(inner)
    inner := C * M                         (monomial)
           | C * M * exp(g * N)            (monomial times the exponential of a monomial)
           | C1 * M1 + C2 * M2 [+ C3 * M3] (sum of monomials; a constant term is M = 1)
    M, N  := prod_j atom_j ** p_j          (atoms: x, sin(x), cos(x), with degrees converted)

How each family is fitted (``z = outer.inverse(y)``):

* monomial: least squares of ``log|z|`` on ``log(atoms)``; each exponent is snapped to nearby simple
  values (integers, halves, thirds, quarters, fifths/tenths, e and e + 1 forms), the raw fit kept as
  the last resort; ``C`` by relative least squares.
* exponential: the same regression with one more column ``N(x)`` chosen from a library of
  monomials with half-integer exponents (projection scores rank all library columns at once).
* sums: relative least squares of ``z`` on library monomials around the power-law exponents;
  pairs by best-first completion of the top single columns, triples by extending the best pairs;
  exponents off the half-integer grid are found by a bounded continuous refinement
  (``scipy.optimize.least_squares``) and snapped again.

Every candidate is then evaluated on the original ``y`` scale: relative RMS error over the points
where ``y`` is finite (a non-finite prediction there counts as error 10), a description complexity,
and ``score = log10(max(error, floor)) + 0.35 * complexity`` with ``floor`` the noise level (1e-9
noiseless), so the simplest expression that explains the data to the noise level ranks first.

The work done is bounded by counts (library sizes, top-k), so results are deterministic; the time
budget is a safety net checked between families: when it runs out, the families not yet tried are
skipped and ``SearchResult.timed_out`` says so.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import time
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import least_squares

from etc_fast.policies.symbolic._grammar import (
    OUTERS,
    Atom,
    Outer,
    VariableDomain,
    exponent_cost,
    exponent_options,
    format_exponent,
    make_atoms,
)

__all__ = ["Candidate", "SearchResult", "search", "relative_errors", "COMPLEXITY_WEIGHT"]

COMPLEXITY_WEIGHT = 0.35
_ERR_CAP = 10.0
_HALVES = np.arange(-8, 9) / 2.0


# ----------------------------------------------------------------------------------------
# Forms
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class _Form:
    atoms: tuple[Atom, ...]
    outer: Outer
    kind: str  # mono | expmono | sum
    exps: tuple[tuple[float, ...], ...]
    params: tuple[float, ...]  # mono/sum: one coefficient per term; expmono: (C, g)
    exp_exps: tuple[float, ...] | None = None


def _mono(A: np.ndarray, p: Sequence[float]) -> np.ndarray:
    out = np.ones(A.shape[0])
    for j, pj in enumerate(p):
        if pj != 0.0:
            out = out * (A[:, j] if pj == 1.0 else A[:, j] ** pj)
    return out


def _inner(form: _Form, A: np.ndarray, params: Sequence[float] | None = None) -> np.ndarray:
    prm = form.params if params is None else params
    if form.kind == "expmono":
        return prm[0] * _mono(A, form.exps[0]) * np.exp(prm[1] * _mono(A, form.exp_exps))
    s = np.zeros(A.shape[0])
    for c, p in zip(prm, form.exps):
        s = s + c * _mono(A, p)
    return s


def _predict(form: _Form, A: np.ndarray, params: Sequence[float] | None = None) -> np.ndarray:
    with np.errstate(all="ignore"):
        return form.outer.forward(_inner(form, A, params))


def _fmt_const(c: float) -> str:
    return f"{c:.12g}"


def _render_mono(atoms: Sequence[Atom], p: Sequence[float], fn: Callable[[str], str], e_name: str) -> tuple[str, str]:
    num, den = [], []
    for a, pj in zip(atoms, p):
        if pj == 0.0:
            continue
        base = a.render(fn)
        q = abs(pj)
        txt = base if q == 1.0 else f"{base}**{format_exponent(q, e_name)}"
        (num if pj > 0 else den).append(txt)
    n = "*".join(num)
    d = den[0] if len(den) == 1 else ("(" + "*".join(den) + ")" if den else "")
    return n, d


def _render_term(c: str, atoms, p, fn, e_name, lead: bool) -> str:
    n, d = _render_mono(atoms, p, fn, e_name)
    body = c if not n else f"{c}*{n}"
    return f"{body}/{d}" if d else body


def _render(form: _Form, fn: Callable[[str], str] = lambda f: f, e_name: str = "e",
            const: Callable[[float], str] | None = None) -> str:
    """Expression text of a form; ``const`` formats fitted constants (``None``: numbers)."""
    fmt = const or _fmt_const
    if form.kind == "expmono":
        c, g = form.params
        head = _render_term(fmt(c), form.atoms, form.exps[0], fn, e_name, True)
        n, d = _render_mono(form.atoms, form.exp_exps, fn, e_name)
        arg = f"{fmt(g)}*{n}" if n else fmt(g)
        arg = f"{arg}/{d}" if d else arg
        inner = f"{head}*{fn('exp')}({arg})"
    else:
        parts = []
        order = sorted(range(len(form.exps)), key=lambda i: form.exps[i], reverse=True)
        for k, i in enumerate(order):
            c = form.params[i]
            if const is None:
                txt = _render_term(fmt(abs(c)), form.atoms, form.exps[i], fn, e_name, k == 0)
                sign = "-" if c < 0 else "+"
                parts.append((f"-{txt}" if sign == "-" else txt) if k == 0 else f" {sign} {txt}")
            else:
                txt = _render_term(fmt(c), form.atoms, form.exps[i], fn, e_name, k == 0)
                parts.append(txt if k == 0 else f" + {txt}")
        inner = "".join(parts)
    return form.outer.render(inner, fn)


def _complexity(form: _Form) -> float:
    def mono_cost(p):
        return sum(1.0 + exponent_cost(pj) + a.cost for a, pj in zip(form.atoms, p) if pj != 0.0)

    c = form.outer.cost + sum(1.0 + mono_cost(p) for p in form.exps) + 0.5 * (len(form.exps) - 1)
    if form.kind == "expmono":
        c += 2.0 + mono_cost(form.exp_exps)
    return c


def _n_params(form: _Form) -> int:
    n = len(form.params)
    for p in form.exps + ((form.exp_exps,) if form.exp_exps is not None else ()):
        n += sum(1 for pj in p if pj != 0.0)
    return n


# ----------------------------------------------------------------------------------------
# Results
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class Candidate:
    """One fitted law.

    Attributes:
        expression: The law in the hypothesis language, fitted constants included.
        structure: The same with every fitted constant written ``C`` (exponents kept): two
            candidates with the same structure differ only in constants.
        family: ``"<outer>/<inner kind>"`` (e.g. ``"id/mono"``, ``"acos_deg/mono"``, ``"sqrt/sum2"``).
        complexity: Description complexity (terms, exponents, functions).
        error: Relative RMS error on the observations with a finite output.
        max_error: Largest relative error there.
        n_params: Fitted constants plus non-zero exponents (what the data had to determine).
        n_used: Observations the error was computed on.
        score: ``log10(max(error, floor)) + COMPLEXITY_WEIGHT * complexity`` (lower is better).
        source: The law as a ``discovered_law`` function (NumPy functions, so undefined points give
            NaN instead of raising).
    """

    expression: str
    structure: str
    family: str
    complexity: float
    error: float
    max_error: float
    n_params: int
    n_used: int
    score: float
    source: str

    def validated(self, margin: int = 3) -> bool:
        """Whether the data had at least ``margin`` more points than the law has parameters."""
        return self.n_used >= self.n_params + margin


@dataclasses.dataclass(frozen=True)
class SearchResult:
    """Ranked candidates (best first) and bookkeeping."""

    candidates: tuple[Candidate, ...]
    tol: float
    n_used: int
    elapsed_s: float
    timed_out: bool
    families_tried: tuple[str, ...]

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None


def relative_errors(y_hat: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-point relative error ``|y_hat - y| / |y|`` (guarded), capped at 10; NaN prediction -> 10."""
    y_hat = np.asarray(y_hat, dtype=np.float64)
    scale = np.maximum(np.abs(y), 1e-12 * max(float(np.max(np.abs(y))) if y.size else 1.0, 1e-300))
    with np.errstate(all="ignore"):
        r = np.abs(y_hat - y) / scale
    return np.where(np.isfinite(r), np.minimum(r, _ERR_CAP), _ERR_CAP)


def _source(expr_np: str, names: Sequence[str]) -> str:
    return f"def discovered_law({', '.join(names)}):\n    import numpy as np\n    return {expr_np}\n"


# ----------------------------------------------------------------------------------------
# Search machinery
# ----------------------------------------------------------------------------------------
class _Collector:
    def __init__(self, X, y, names, floor, tol):
        self.X, self.y, self.names, self.floor, self.tol = X, y, names, floor, tol
        self.fin = np.isfinite(y)
        yf = y[self.fin]
        self.y_sd = float(np.std(yf)) if yf.size > 1 else 0.0
        self.entries: dict[tuple, tuple[float, float, float, float, int, _Form]] = {}
        self._A: dict[tuple[Atom, ...], np.ndarray] = {}
        self.best_exact_cx = np.inf

    def atoms_matrix(self, atoms: tuple[Atom, ...]) -> np.ndarray:
        if atoms not in self._A:
            self._A[atoms] = np.column_stack([a.values(self.X) for a in atoms]) if atoms else np.empty((self.X.shape[0], 0))
        return self._A[atoms]

    def add(self, form: _Form, tol: float | None = None) -> float | None:
        """Evaluate a form on the observations and keep it if it is the best of its structure; returns its error."""
        tol = self.tol if tol is None else tol
        if not all(np.isfinite(form.params)):
            return None
        A = self.atoms_matrix(form.atoms)
        y_hat = _predict(form, A)[self.fin]
        yf = self.y[self.fin]
        r = relative_errors(y_hat, yf)
        if r.size == 0:
            return None
        err = float(np.sqrt(np.mean(r * r)))
        if self.y_sd > 0:
            d = np.where(np.isfinite(y_hat), y_hat - yf, self.y_sd)
            err += 1e-3 * min(float(np.sqrt(np.mean(d * d))) / self.y_sd, 1.0)
        cx = _complexity(form)
        score = math.log10(max(err, self.floor)) + COMPLEXITY_WEIGHT * cx
        key = _structure_key(form)
        old = self.entries.get(key)
        if old is None or score < old[0]:
            self.entries[key] = (score, cx, err, float(np.max(r)), int(r.size), form)
        if err <= tol and r.size >= _n_params(form) + 3:
            self.best_exact_cx = min(self.best_exact_cx, cx)
        return err

    def ranked(self, limit: int) -> list[tuple[Candidate, _Form]]:
        items = sorted(self.entries.items(), key=lambda kv: (kv[1][0], kv[1][1], repr(kv[0])))[:limit]
        out = []
        for _key, (score, cx, err, mx, n, form) in items:
            kind = form.kind if form.kind != "sum" else f"sum{len(form.exps)}"
            cand = Candidate(_render(form), _render(form, const=lambda c: "C"), f"{form.outer.name}/{kind}", cx, err, mx,
                             _n_params(form), n, score,
                             _source(_render(form, fn=lambda f: f"np.{f}", e_name="np.e"), self.names))
            out.append((cand, form))
        return out


def _structure_key(form: _Form) -> tuple:
    def mono(p):
        return tuple(sorted((a.var, a.kind, a.degrees, float(pj)) for a, pj in zip(form.atoms, p) if pj != 0.0))

    terms = tuple(sorted(mono(p) for p in form.exps))
    return (form.outer.name, form.kind, terms, mono(form.exp_exps) if form.exp_exps is not None else None)


def _views(atoms_per_var: list[list[Atom]], max_views: int = 12) -> list[tuple[Atom, ...]]:
    per_var = []
    for atoms in atoms_per_var:
        raw = [a for a in atoms if a.kind == "raw"]
        trig = [a for a in atoms if a.kind != "raw"]
        opts = []
        if raw:
            opts.append(tuple(raw))
        for a in trig:
            opts.append((a,))
        if len(trig) == 2:
            opts.append(tuple(trig))
        per_var.append(opts or [()])
    views = [tuple(itertools.chain.from_iterable(c)) for c in itertools.product(*per_var)]
    views.sort(key=lambda v: (sum(a.cost for a in v), len(v)))
    return views[:max_views]


def _positive_rows(A: np.ndarray) -> np.ndarray:
    return np.all(A > 0, axis=1) & np.all(np.isfinite(A), axis=1)


def _snap_combos(p_hat: np.ndarray, window: float, max_combos: int) -> list[tuple[float, ...]]:
    opts = [exponent_options(float(p), window) for p in p_hat]
    combos = list(itertools.product(*opts)) if np.prod([len(o) for o in opts]) <= 4096 else [tuple(o[0] for o in opts)]
    combos.sort(key=lambda c: (sum(exponent_cost(v) if v != 0 else 0.0 for v in c)
                               + 8.0 * sum(abs(v - p) for v, p in zip(c, p_hat)) / max(window, 1e-12)))
    return combos[:max_combos]


def _rel_coef(M: np.ndarray, z: np.ndarray) -> float:
    """argmin_c sum(((c M - z) / z)^2)."""
    with np.errstate(all="ignore"):
        w = M / z
    ok = np.isfinite(w)
    den = float(np.dot(w[ok], w[ok]))
    return float(np.sum(w[ok]) / den) if den > 0 else float("nan")


def _loglinear(A: np.ndarray, z: np.ndarray):
    """Power-law fit of z on atoms: (ok rows, sign, p_hat, intercept, residual rms) or None."""
    ok = np.isfinite(z) & (z != 0) & _positive_rows(A)
    if ok.sum() < 2:
        return None
    zs = z[ok]
    if np.all(zs > 0):
        sign = 1.0
    elif np.all(zs < 0):
        sign = -1.0
    else:
        return None
    L = np.log(A[ok])
    t = np.log(sign * zs)
    B = np.column_stack([np.ones(L.shape[0]), L])
    beta, *_ = np.linalg.lstsq(B, t, rcond=None)
    res = t - B @ beta
    return ok, sign, beta[1:], beta[0], float(np.sqrt(np.mean(res * res))), L, t


def _fit_mono(col: _Collector, atoms, outer: Outer, A, z, p_hint=None, max_combos=48):
    fit = _loglinear(A, z)
    if fit is None:
        return None
    ok, sign, p_hat, _b0, rms, _L, _t = fit
    if p_hint is not None:
        p_hat = np.asarray(p_hint, dtype=np.float64)
    window = min(1.0, max(0.03, 4.0 * rms))
    for combo in _snap_combos(p_hat, window, max_combos):
        c = _rel_coef(_mono(A[ok], combo), z[ok])
        col.add(_Form(atoms, outer, "mono", (tuple(combo),), (c,)))
    return fit


def _library(m: int, center: np.ndarray | None, half_width: float, max_size: int) -> np.ndarray:
    """Exponent vectors (L, m) on the half-integer grid around ``center`` (within [-4, 4])."""
    while True:
        axes = []
        for j in range(m):
            c = 0.0 if center is None else float(np.clip(np.round(center[j] * 2) / 2, -4, 4))
            axes.append(_HALVES[(_HALVES >= c - half_width - 1e-9) & (_HALVES <= c + half_width + 1e-9)])
        size = int(np.prod([len(a) for a in axes]))
        if size <= max_size or half_width <= 0.5:
            break
        half_width -= 0.5
    grids = np.meshgrid(*axes, indexing="ij")
    return np.column_stack([g.ravel() for g in grids]) if m else np.zeros((1, 0))


def _lib_values(A: np.ndarray, E: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.exp(np.log(A) @ E.T) if A.size else np.ones((A.shape[0], E.shape[0]))


def _fit_expmono(col: _Collector, atoms, outer: Outer, A, z, max_lib=3000, top=5):
    fit = _loglinear(A, z)
    if fit is None:
        return
    ok, sign, _p, _b0, _rms, L, t = fit
    n, m = L.shape
    if n < m + 3:
        return
    E = _library(m, None, 3.0, max_lib)
    E = E[np.any(E != 0, axis=1)]
    N = np.exp(L @ E.T)
    good = np.all(np.isfinite(N), axis=0) & (np.ptp(N, axis=0) > 0)
    E, N = E[good], N[:, good]
    if not len(E):
        return
    B = np.column_stack([np.ones(n), L])
    Q, _ = np.linalg.qr(B)
    rt = t - Q @ (Q.T @ t)
    R = N - Q @ (Q.T @ N)
    nr = np.linalg.norm(R, axis=0)
    usable = nr > 1e-9 * np.maximum(np.linalg.norm(N, axis=0), 1e-300)
    sc = np.full(len(E), -np.inf)
    sc[usable] = (R[:, usable].T @ rt / nr[usable]) ** 2
    for j in np.argsort(-sc, kind="stable")[:top]:
        if not np.isfinite(sc[j]):
            continue
        Bj = np.column_stack([B, N[:, j]])
        beta, *_ = np.linalg.lstsq(Bj, t, rcond=None)
        p_hat = beta[1:-1]
        for combo in _snap_combos(p_hat, 0.05, 12):
            tt = t - L @ np.asarray(combo)
            C2 = np.column_stack([np.ones(n), N[:, j]])
            b, *_ = np.linalg.lstsq(C2, tt, rcond=None)
            if np.max(np.abs(b[1] * N[:, j])) < 1e-7:
                continue  # the exponential is numerically 1: a plain monomial says the same
            col.add(_Form(atoms, outer, "expmono", (tuple(combo),), (sign * math.exp(b[0]) if b[0] < 700 else np.nan, float(b[1])),
                          tuple(float(v) for v in E[j])))


def _fit_sums(col: _Collector, atoms, outer: Outer, A, z, center, *, max_terms=3, max_lib=4000, refine=True, clock=None):
    ok = np.isfinite(z) & _positive_rows(A)
    zo, Ao = z[ok], A[ok]
    n = zo.size
    if n < 3:
        return
    az = np.abs(zo)
    wscale = np.maximum(az, 1e-12 * max(float(az.max()), 1e-300))
    E = _library(A.shape[1], center, 2.5, max_lib)
    V = _lib_values(Ao, E)
    good = np.all(np.isfinite(V), axis=0)
    E, V = E[good], V[:, good]
    if not len(E):
        return
    Vw = V / wscale[:, None]
    t = zo / wscale
    nrm = np.linalg.norm(Vw, axis=0)
    keep = nrm > 0
    E, V, Vw, nrm = E[keep], V[:, keep], Vw[:, keep], nrm[keep]
    U = Vw / nrm
    tt2 = float(t @ t)
    proj = U.T @ t
    res1 = tt2 - proj**2
    K = int(min(len(E), max(6, min(24, 200000 // max(len(E) * max(n, 1), 1) * 10))))
    firsts = np.argsort(res1, kind="stable")[:K]
    pairs: dict[tuple[int, int], float] = {}
    for a in firsts:
        ua = U[:, a]
        Ut = U - np.outer(ua, ua @ U)
        tr = t - ua * (ua @ t)
        nn = np.linalg.norm(Ut, axis=0)
        valid = nn > 1e-6
        valid[a] = False
        if not valid.any():
            continue
        s = np.full(len(E), -np.inf)
        s[valid] = (Ut[:, valid].T @ tr / nn[valid]) ** 2
        b = int(np.argmax(s))
        key = (min(a, b), max(a, b))
        pairs[key] = float(tr @ tr - s[b])
    best_pairs = sorted(pairs, key=lambda k: pairs[k])[:6]
    fits = []

    def emit(idx):
        cols = Vw[:, list(idx)]
        c, *_ = np.linalg.lstsq(cols, t, rcond=None)
        contrib = np.max(np.abs(V[:, list(idx)] * c) / wscale[:, None], axis=0)
        if np.any(contrib < 1e-7):
            return None
        form = _Form(atoms, outer, "sum", tuple(tuple(float(v) for v in E[i]) for i in idx), tuple(float(v) for v in c))
        err = col.add(form)
        if err is not None:
            fits.append((err, form))
        return err

    for pr in best_pairs:
        emit(pr)
    if max_terms >= 3 and n >= 6:
        triples = {}
        for pr in best_pairs[:4]:
            Qp, _ = np.linalg.qr(U[:, list(pr)])
            Ut = U - Qp @ (Qp.T @ U)
            tr = t - Qp @ (Qp.T @ t)
            nn = np.linalg.norm(Ut, axis=0)
            valid = nn > 1e-6
            valid[list(pr)] = False
            if not valid.any():
                continue
            s = np.full(len(E), -np.inf)
            s[valid] = (Ut[:, valid].T @ tr / nn[valid]) ** 2
            for c3 in np.argsort(-s, kind="stable")[:2]:
                if np.isfinite(s[c3]):
                    triples[tuple(sorted((*pr, int(c3))))] = float(tr @ tr - s[c3])
        for tr_idx in sorted(triples, key=lambda k: triples[k])[:4]:
            emit(tr_idx)
    if refine and fits and (clock is None or not clock()):
        fits.sort(key=lambda f: f[0])
        err, form = fits[0]
        if col.tol < err < 3e-2:  # close but not exact: exponents may lie off the half-integer grid
            _refine_sum(col, form, Ao, zo, wscale)


def _refine_sum(col: _Collector, form: _Form, A, z, wscale):
    """Continuous refinement of a sum's exponents (variable projection), then snapping."""
    k, m = len(form.exps), A.shape[1]
    if z.size <= k * (m + 1):
        return
    L = np.log(A)
    t = z / wscale

    def solve(pv):
        P = pv.reshape(k, m)
        with np.errstate(all="ignore"):
            V = np.exp(L @ P.T) / wscale[:, None]
        if not np.all(np.isfinite(V)):
            return None, None
        c, *_ = np.linalg.lstsq(V, t, rcond=None)
        return c, V @ c - t

    def resid(pv):
        _, r = solve(pv)
        return r if r is not None else np.full(t.size, 1e3)

    p0 = np.array(form.exps, dtype=np.float64).ravel()
    try:
        sol = least_squares(resid, p0, max_nfev=15 * p0.size, method="lm" if t.size >= p0.size else "trf")
    except Exception:  # noqa: BLE001 - an optimizer failure only loses this refinement
        return
    p_hat = sol.x
    for combo in _snap_combos(p_hat, 0.05, 8):
        c, r = solve(np.asarray(combo))
        if c is None:
            continue
        col.add(_Form(form.atoms, form.outer, "sum", tuple(tuple(combo[i * m:(i + 1) * m]) for i in range(k)),
                      tuple(float(v) for v in c)))


def _refine_constants(col: _Collector, form: _Form, tol: float, max_nfev: int = 40) -> None:
    """Refit a form's constants (exponents fixed) by least squares on relative y errors."""
    A = col.atoms_matrix(form.atoms)
    fin = col.fin
    y = col.y[fin]
    scale = np.maximum(np.abs(y), 1e-12 * max(float(np.max(np.abs(y))), 1e-300))
    Af = A[fin]

    def resid(prm):
        r = (_predict(form, Af, prm) - y) / scale
        return np.where(np.isfinite(r), r, 1e3)

    p0 = np.asarray(form.params, dtype=np.float64)
    if y.size < p0.size:
        return
    try:
        sol = least_squares(resid, p0, max_nfev=max_nfev, x_scale="jac")
    except Exception:  # noqa: BLE001
        return
    col.add(dataclasses.replace(form, params=tuple(float(v) for v in sol.x)))


# ----------------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------------
def search(
    X: np.ndarray,
    y: np.ndarray,
    domains: Sequence[VariableDomain],
    *,
    noise: float = 0.0,
    time_budget_s: float = 0.5,
    mode: str = "full",
    exponent_hint: Sequence[float] | None = None,
    max_candidates: int = 30,
) -> SearchResult:
    """Search the grammar for laws explaining ``y`` from ``X``.

    Args:
        X: float64[n, d] inputs, columns in the order of ``domains``.
        y: float64[n] outputs (non-finite entries are ignored when fitting).
        domains: Name and domain of each input.
        noise: Relative noise level of ``y`` (sets the error floor and the exact-fit tolerance).
        time_budget_s: Safety limit on wall time; families not reached are skipped.
        mode: ``"full"`` (all families) or ``"diagnostic"`` (only the power law given by
            ``exponent_hint`` or the log-linear fit, its exponent roundings, an added term and an
            offset).
        exponent_hint: Power-law exponents per input (e.g. from planner diagnostics).
        max_candidates: Most candidates returned.

    Returns:
        A :class:`SearchResult` with candidates best first.
    """
    t0 = time.perf_counter()
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[0] != y.shape[0] or X.shape[1] != len(domains):
        raise ValueError(f"search: X must be (n, {len(domains)}) with n = len(y) = {y.shape[0]}, got {X.shape}")
    if mode not in ("full", "diagnostic"):
        raise ValueError(f"search: mode must be 'full' or 'diagnostic', got {mode!r}")
    floor = max(1e-12, 1.5 * float(noise))
    tol = max(1e-10, 3.0 * float(noise))
    names = [d.name for d in domains]
    col = _Collector(X, y, names, floor, tol)
    fin = np.isfinite(y)
    tried: list[str] = []
    timed_out = False

    def expired() -> bool:
        return time.perf_counter() - t0 > time_budget_s

    def exact_simple(max_cx: float) -> bool:
        return col.best_exact_cx <= max_cx

    if fin.sum() >= 1:
        atoms_per_var = make_atoms(domains)
        raw_view = tuple(a for atoms in atoms_per_var for a in atoms if a.kind == "raw")
        views = _views(atoms_per_var) if mode == "full" else [raw_view]
        yf = y[fin]
        steps: list[tuple[str, Callable[[], None]]] = []
        centers: dict[tuple, np.ndarray | None] = {}

        def z_of(outer):
            with np.errstate(all="ignore"):
                z = np.full(y.shape, np.nan)
                z[fin] = outer.inverse(yf)
            return z

        outers = [o for o in OUTERS if o.valid(yf)] if mode == "full" else [OUTERS[0]]
        ident = OUTERS[0]

        # 1. monomials, every outer and view
        def mono_step(outer, view):
            def run():
                A = col.atoms_matrix(view)
                hint = exponent_hint if (mode == "diagnostic" and exponent_hint is not None and view == raw_view) else None
                if hint is not None:
                    hint = [exponent_hint[a.var] for a in view]
                fit = _fit_mono(col, view, outer, A, z_of(outer), p_hint=hint) if outer.allows_monomial else None
                if fit is None:
                    f2 = _loglinear(A, z_of(outer))
                    centers[(outer.name, view)] = f2[2] if f2 is not None else None
                else:
                    centers[(outer.name, view)] = np.asarray(hint, dtype=np.float64) if hint is not None else fit[2]
            return run

        for outer in outers:
            for view in views:
                steps.append((f"mono:{outer.name}", mono_step(outer, view)))

        def sum_step(outer, view, max_terms):
            def run():
                A = col.atoms_matrix(view)
                c = centers.get((outer.name, view))
                _fit_sums(col, view, outer, A, z_of(outer), c, max_terms=max_terms, clock=expired)
            return run

        def exp_step(view):
            def run():
                _fit_expmono(col, view, ident, col.atoms_matrix(view), z_of(ident))
            return run

        if mode == "full":
            for view in views:
                steps.append(("sum:id", sum_step(ident, view, 3)))
                steps.append(("exp:id", exp_step(view)))
            for outer in outers[1:]:
                for view in views:
                    steps.append((f"sum:{outer.name}", sum_step(outer, view, 2)))
        else:
            steps.append(("sum:id", sum_step(ident, raw_view, 2)))

        for name, run in steps:
            if expired():
                timed_out = True
                break
            # a validated exact fit already found: skip families that can only be more complex
            if name.startswith(("sum", "exp")) and exact_simple(12.0):
                continue
            run()
            if name not in tried:
                tried.append(name)

        # constant refinement of the best inexact candidates on the y scale
        if not expired():
            for cand, form in col.ranked(4):
                if cand.error > tol:
                    _refine_constants(col, form, tol)

    ranked = [c for c, _ in col.ranked(max_candidates)]
    return SearchResult(tuple(ranked), tol, int(fin.sum()), time.perf_counter() - t0, timed_out, tuple(tried))
