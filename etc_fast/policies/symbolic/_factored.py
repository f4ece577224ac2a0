"""Factored laws: a monomial times one elementary function of a scaled monomial (docs/guide/offline-agent.md, "The grammar").

The family covers laws of the shape ``y = c0 * M * F(u)`` with ``M`` a monomial of every input,
``u = c1 * N`` (or ``u = N``) and ``N`` a monomial of at most three atoms with simple exponents.
``F`` is one of the elementary functions or one-parameter shapes of general physics:

=============  =================  =====================================================
``F``          ``F(u)``           laws it writes (``N`` in brackets)
=============  =================  =====================================================
``asin``       ``asin(u)``        refraction ``asin(n sin t)`` [``n sin t``, ``n1 sin t / n2``]
``acos``       ``acos(u)``        an angle from a ratio of like inputs [``x / r``]
``atan``       ``atan(u)``        an angle from two lengths [``h / L``], ``atan(K x)``
``tanh``,      ``tanh(u)``, ...   saturations and hyperbolic laws of a monomial
``sinh``,
``cosh``
``log``        ``log(u)``         ``log(x / x0)``, ``log`` of a ratio of like inputs
``log1p``      ``log(1 + u)``     ``log(1 + K x)``
``one_minus``  ``1 - u``          a difference of like inputs ``x_b - x_a = x_b (1 - x_a / x_b)``
``sqrt1m``     ``sqrt(1 - u)``    ``sqrt(a**2 - b**2) = a sqrt(1 - b**2 / a**2)``
``rsqrt1m``    ``1/sqrt(1 - u)``  Lorentz factors [``v**2 / c**2``, ``v**2`` with ``c1 = 1 / c**2``]
``sqrt1p``     ``sqrt(1 + u)``    ``sqrt(a**2 + b**2) = a sqrt(1 + b**2 / a**2)``
``one_minus_   ``1 - exp(-u)``    saturations: a charging capacitor, an absorbed fraction
exp``
``sin``,       ``sin(N)``, ...    oscillations ``sin(w t)``, waves ``cos(k x)`` (``c1 = 1`` only: ``N``
``cos``                           is its own phase)
``one_minus_   ``1 - cos(N)``     a height fallen through an arc ``L (1 - cos t)``, a Compton shift
cos``                             (``c1 = 1`` only)
=============  =================  =====================================================

*Like inputs* are inputs whose descriptions name the same quantity in the same unit (``strain of
the rotor at the start end`` and ``... at the end end``; ``temperature of the hot cell in K`` and
``temperature of the cold cell in K``) or that share a domain: what a reader of the task's variable
list would pair. ``N`` is taken from a library of, in this order: each atom alone (exponents
1, -1, 2, -2, 1/2, -1/2), each pair of atoms (exponents +-1 each, and 2/-2, -2/2), and each ratio of
like inputs times one more atom (exponents +-1). The library holds ``O(m**2 + l m)`` monomials for
``m`` atoms and ``l`` like pairs and is cut at ``SearchLimits.ratio_library`` entries.

How it is fitted (variable projection on ``log|y|``): for a fixed ``F``, ``N`` and ``c1``,
``log|y| - log|F(c1 N)|`` is linear in the logs of the atoms, so one projection onto the span of
``[1, log atoms]`` (computed once) gives the residual of every candidate, all of a function's
candidates at once. ``c1`` is screened on a log grid of ``SearchLimits.cexp_rates`` magnitudes per
sign, scaled to ``N``'s values (for ``asin``, ``acos``, ``sqrt1m`` and ``rsqrt1m`` so that
``|u| <= 1``, with as many more values close to that edge), and at 1 (``N`` with its own scale).
For each function the ``SearchLimits.cexp_top`` best candidates are refined: ``c1`` is rescanned
over the same range on a grid four times finer (the residual can have several basins, and the
screening grid's best point need not lie in the deepest), and the ``SearchLimits.cexp_refine``
best local minima of that scan are refined by a bounded one-dimensional minimisation of the
residual. ``M``'s exponents are rounded to simple values (``SearchLimits.cexp_snaps`` roundings),
``c1`` is also tried at exactly 1 when the fit lands there, and the constants are polished on the
relative ``y`` error.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import minimize_scalar

from etc_fast.policies.symbolic._expfamilies import Template, _polish, _snaps, _t
from etc_fast.policies.symbolic._forms import Form, mono_values
from etc_fast.policies.symbolic._grammar import OUTERS, Atom

__all__ = ["DIFFERENCE_POWERS", "FUNCTIONS", "like_pairs", "n_library", "fit_factored", "fit_differences"]

_IDENT = OUTERS[0]

# name -> (postfix text of F over the token U, NumPy F, whether |u| must stay at most 1, signs of a
# fitted c1: none for c1 = 1 only)
_F: dict[str, tuple[str, Callable[[np.ndarray], np.ndarray], bool, tuple[float, ...]]] = {
    "asin": ("U asin", np.arcsin, True, (1.0,)),
    "acos": ("U acos", np.arccos, True, (1.0, -1.0)),
    "atan": ("U atan", np.arctan, False, (1.0,)),
    "tanh": ("U tanh", np.tanh, False, (1.0,)),
    "sinh": ("U sinh", np.sinh, False, (1.0,)),
    "cosh": ("U cosh", np.cosh, False, (1.0,)),
    "log": ("U log", np.log, False, (1.0,)),
    "log1p": ("1 U add log", lambda u: np.log(1.0 + u), False, (1.0, -1.0)),
    "one_minus": ("1 U sub", lambda u: 1.0 - u, False, (1.0, -1.0)),
    "sqrt1m": ("1 U sub sqrt", lambda u: np.sqrt(1.0 - u), True, (1.0,)),
    "rsqrt1m": ("1 1 U sub sqrt div", lambda u: 1.0 / np.sqrt(1.0 - u), True, (1.0,)),
    "sqrt1p": ("1 U add sqrt", lambda u: np.sqrt(1.0 + u), False, (1.0,)),
    "one_minus_exp": ("1 0 U sub exp sub", lambda u: 1.0 - np.exp(-u), False, (1.0, -1.0)),
    # N unscaled only (c1 = 1: a phase w t or k x of its own scale); a fitted c1 would let a sine's
    # first terms u - u**3/6 fit a noisy record's scatter
    "sin": ("U sin", np.sin, False, ()),
    "cos": ("U cos", np.cos, False, ()),
    "one_minus_cos": ("1 U cos sub", lambda u: 1.0 - np.cos(u), False, ()),
}
FUNCTIONS: tuple[str, ...] = tuple(_F)


def _template(name: str, scaled: bool) -> Template:
    u = "c1 m1 mul" if scaled else "m1"
    return _t(f"{name}" if scaled else f"{name}:1", f"c0 m0 mul {_F[name][0].replace('U', u)} mul")


_TEMPLATES: dict[tuple[str, bool], Template] = {(f, s): _template(f, s) for f in _F for s in (True, False)}


def _quantity(description: str) -> tuple[str, str]:
    """``(quantity, unit)`` a description names: the words before `` of `` and after the last `` in ``."""
    text = description.strip().lower()
    quantity = text.split(" of ", 1)[0] if " of " in text else text
    unit = text.rsplit(" in ", 1)[1] if " in " in text else ""
    return quantity, unit


def like_pairs(domains: Sequence) -> list[tuple[int, int]]:
    """Pairs ``(i, j)``, ``i < j``, of like inputs: the same quantity in the same unit by their
    descriptions, or the same domain (scale, low and high)."""
    out = []
    for i, j in itertools.combinations(range(len(domains)), 2):
        a, b = domains[i], domains[j]
        same_desc = bool(a.description and b.description) and _quantity(a.description) == _quantity(b.description)
        same_dom = (a.scale, a.low, a.high) == (b.scale, b.low, b.high)
        if same_desc or same_dom:
            out.append((i, j))
    return out


def n_library(atoms: Sequence[Atom], pairs: Sequence[tuple[int, int]], max_size: int) -> np.ndarray:
    """The monomials ``N`` tried inside ``F`` (float64[k, len(atoms)], at most ``max_size`` rows).

    Args:
        atoms: The atoms (a column each).
        pairs: Like pairs of *atom columns* (``i < j``).
        max_size: Most monomials kept (singles first, then pairs, then like ratios times an atom).
    """
    m = len(atoms)
    rows: list[np.ndarray] = []
    seen: set[tuple[float, ...]] = set()

    def put(entries: dict[int, float]) -> None:
        v = np.zeros(m)
        for k, e in entries.items():
            v[k] = e
        key = tuple(v)
        if key not in seen and any(v):
            seen.add(key)
            rows.append(v)

    for k in range(m):
        for e in (1.0, -1.0, 2.0, -2.0, 0.5, -0.5):
            put({k: e})
    for i, j in itertools.combinations(range(m), 2):
        if atoms[i].var == atoms[j].var:
            continue
        for ei, ej in ((1.0, 1.0), (1.0, -1.0), (-1.0, 1.0), (-1.0, -1.0), (2.0, -2.0), (-2.0, 2.0)):
            put({i: ei, j: ej})
    for i, j in pairs:
        for k in range(m):
            if atoms[k].var in (atoms[i].var, atoms[j].var):
                continue
            for s, ek in itertools.product((1.0, -1.0), (1.0, -1.0)):
                put({i: s, j: -s, k: ek})
    return np.array(rows[:max_size]) if rows else np.zeros((0, m))


def _grid(f: str, Nv: np.ndarray, n_rates: int) -> np.ndarray:
    """Candidate ``c1`` values for function ``f`` and monomial values ``Nv`` (float64[n])."""
    _text, _fn, bounded, signs = _F[f]
    a = np.abs(Nv)
    if bounded:
        top = 1.0 / np.max(a)  # |u| <= 1 on every record: spread from 1% of the edge, and close to it
        mags = top * np.concatenate([np.logspace(-2.0, 0.0, n_rates)[:-1], 1.0 - np.logspace(-4.0, -0.5, n_rates)])
    else:
        mags = np.logspace(-2.0, 2.0, n_rates) / np.median(a)
    return np.concatenate([s * mags for s in signs]) if signs else np.zeros(0)


def fit_factored(col, atoms: tuple[Atom, ...], A: np.ndarray, y: np.ndarray, like: Sequence[tuple[int, int]],
                 lim) -> None:
    """Queue the best ``c0 * M * F(c1 * N)`` laws on ``col`` (see the module docstring).

    Args:
        col: The search's collector.
        atoms: Every atom (raw inputs, and sin/cos of angles).
        A: float64[n, len(atoms)] their values on the records.
        y: float64[n] outputs (finite rows only are used).
        like: Like pairs of atom columns.
        lim: The search's :class:`~._search.SearchLimits`.
    """
    fin = np.isfinite(y) & np.all(np.isfinite(A), axis=1) & np.all(A > 0, axis=1)
    n = int(fin.sum())
    m = A.shape[1]
    if n < m + 4 or not np.all(y[fin] != 0):
        return
    Af, yf = A[fin], y[fin]
    t0 = np.log(np.abs(yf))
    B = np.column_stack([np.ones(n), np.log(Af)])
    Q, _r = np.linalg.qr(B)
    lib = n_library(atoms, like, lim.ratio_library)
    if not len(lib):
        return
    NV = np.stack([mono_values(Af, p) for p in lib])  # [k, n]
    sy = np.sign(yf)
    best: list[tuple[float, str, int, float]] = []
    for f, (_text, fn, _bounded, _signs) in _F.items():
        scored: list[tuple[float, str, int, float]] = []
        for k in range(len(lib)):
            Nv = NV[k]
            cs = np.append(_grid(f, Nv, lim.cexp_rates), 1.0)  # and N unscaled (its own scale: sin(w t))
            with np.errstate(all="ignore"):
                Fv = fn(cs[:, None] * Nv[None, :])  # [g, n]
                T = t0[None, :] - np.log(np.abs(Fv))
            ok = np.all(np.isfinite(T), axis=1) & np.all(Fv != 0, axis=1)
            ok &= np.all(np.sign(Fv) * sy == np.sign(Fv[:, :1]) * sy[:1], axis=1)
            if not np.any(ok):
                continue
            T = T[ok]
            R = T - (T @ Q) @ Q.T
            ss = np.einsum("ij,ij->i", R, R)
            i = int(np.argmin(ss))
            scored.append((float(ss[i]), f, k, float(cs[ok][i])))
        scored.sort(key=lambda r: (r[0], r[2]))
        best.extend(scored[:lim.cexp_top])
    for _ss, f, k, c in best:
        _emit(col, atoms, A, y, fin, Q, B, t0, lib[k], NV[k], f, c, lim)


def _emit(col, atoms, A, y, fin, Q, B, t0, pn, Nv, f, c, lim) -> None:
    fn = _F[f][1]

    def resid(cv: float) -> float:
        with np.errstate(all="ignore"):
            t = t0 - np.log(np.abs(fn(cv * Nv)))
        if not np.all(np.isfinite(t)):
            return float(t0 @ t0) + 1.0  # above any candidate's residual, and finite for the minimiser
        r = t - Q @ (Q.T @ t)
        return float(r @ r)

    # the residual over c1 can have several minima (a function saturating, a log of c1 N crossing
    # zero), and the screening grid's best point need not lie in the deepest one: rescan the whole
    # range of c's sign four times finer, then refine the best local minima of that scan
    cs = _grid(f, Nv, 4 * lim.cexp_rates)
    cs = cs[np.sign(cs) == np.sign(c)]
    rs = np.array([resid(float(v)) for v in cs])
    interior = [i for i in range(len(cs)) if (i == 0 or rs[i] <= rs[i - 1]) and (i == len(cs) - 1 or rs[i] <= rs[i + 1])]
    cbest, rbest = c, resid(c)
    for i in sorted(interior, key=lambda i: (rs[i], i))[:lim.cexp_refine]:
        a, b = sorted((float(cs[max(i - 1, 0)]), float(cs[min(i + 1, len(cs) - 1)])))
        try:
            sol = minimize_scalar(resid, bounds=(a, b), method="bounded", options={"xatol": 1e-14 * abs(cs[i])})
            cand = float(sol.x)
        except Exception:  # noqa: BLE001
            cand = float(cs[i])
        for v in (cand, float(cs[i])):
            r = resid(v)
            if r < rbest:
                cbest, rbest = v, r
    with np.errstate(all="ignore"):
        t = t0 - np.log(np.abs(fn(cbest * Nv)))
    if not np.all(np.isfinite(t)):
        return
    beta, *_ = np.linalg.lstsq(B, t, rcond=None)
    yf = y[fin]
    Af = A[fin]
    choices = ([(cbest, True)] if _F[f][3] else []) + ([(1.0, False)] if abs(cbest - 1.0) <= 1e-3 else [])
    for combo in _snaps(beta[1:], lim.cexp_snaps):
        pm = np.asarray(combo, dtype=np.float64)
        Mv = mono_values(Af, pm)
        for cv, scaled in choices:
            with np.errstate(all="ignore"):
                g = Mv * fn(cv * Nv)
                c0 = float(np.sum(g * yf / yf ** 2) / np.sum(g * g / yf ** 2))
            if not math.isfinite(c0) or c0 == 0:
                continue
            params = (c0, cv) if scaled else (c0,)
            form = Form(atoms, _IDENT, "compound", (tuple(float(v) for v in pm), tuple(float(v) for v in pn)),
                        params, spec=_TEMPLATES[(f, scaled)])
            col.add(_polish(form, Af, yf, lim.cexp_nfev))


#: The powers ``g(x) = x**p`` of a difference of like inputs ``g(x_b) - g(x_a)``: the simple
#: exponents of ``N``'s library and +-3/2 (kinetic energies ``v**2``, potentials ``1/r``, ``x**1.5``);
#: "log" stands for ``log(x_b / x_a)``, the difference of their logarithms.
DIFFERENCE_POWERS: tuple[float | str, ...] = (1.0, -1.0, 2.0, -2.0, 0.5, -0.5, 1.5, -1.5, "log")


def _difference_template(k: int, log: bool = False) -> Template:
    """``c0 * M * (b - a)`` (``k = 0``; ``b`` and ``a`` monomials, powers of like inputs),
    ``c0 * M * log(b / a)`` (``log``) or ``c0 * M * sqrt(sum of k squared differences)``."""
    if log:
        return _t("log_ratio", "c0 m0 mul m1 m2 div log mul")
    if k == 0:
        return _t("difference", "c0 m0 mul m1 m2 sub mul")
    parts = [f"m{2 * i + 1} m{2 * i + 2} sub m{2 * i + 1} m{2 * i + 2} sub mul" for i in range(k)]
    return _t(f"root_of_squares{k}", "c0 m0 mul " + " ".join(parts) + " add" * (k - 1) + " sqrt mul")


def _pair_difference(Af: np.ndarray, i: int, j: int, g: float | str) -> np.ndarray | None:
    """``g(x_j) - g(x_i)`` on the records (``log(x_j / x_i)`` for ``g = "log"``), or ``None`` unless
    both inputs are positive (only ``x`` and ``x**2`` are taken of any sign)."""
    a, b = Af[:, i], Af[:, j]
    if g not in (1.0, 2.0) and not (np.all(a > 0) and np.all(b > 0)):
        return None
    with np.errstate(all="ignore"):
        return np.log(b / a) if g == "log" else b ** g - a ** g


def fit_differences(col, atoms: tuple[Atom, ...], A: np.ndarray, y: np.ndarray, like: Sequence[tuple[int, int]],
                    lim) -> None:
    """Queue the best ``c0 * M * (g(x_b) - g(x_a))`` and ``c0 * M * sqrt(sum of (x_b - x_a)**2)`` laws on ``col``.

    The differences are of like inputs: of powers ``g(x) = x**p`` (:data:`DIFFERENCE_POWERS`;
    ``p = 1`` of either sign, as positions about an origin, other powers of positive inputs) or of
    logarithms (``log(x_b / x_a)``); a root of squares sums over two or three like pairs with no
    input in common (the distance of two points in the plane or in space). ``M`` is a monomial of
    the positive atoms, fitted on ``log|y| - log|D|`` as in :func:`fit_factored`.

    Args:
        col: The search's collector.
        atoms: The positive atoms, then one raw atom per input of a like pair that has none there.
        A: float64[n, len(atoms)] their values on the records.
        y: float64[n] outputs.
        like: Like pairs of atom columns (raw atoms of like inputs).
        lim: The search's :class:`~._search.SearchLimits`.
    """
    if not like:
        return
    positive = np.array([bool(np.all(A[np.isfinite(A[:, j]), j] > 0)) for j in range(A.shape[1])])
    fin = np.isfinite(y) & (y != 0) & np.all(np.isfinite(A), axis=1)
    cols = np.flatnonzero(positive)
    n = int(fin.sum())
    if n < cols.size + 4:
        return
    Af, yf = A[fin], y[fin]
    t0 = np.log(np.abs(yf))
    B = np.column_stack([np.ones(n), np.log(Af[:, cols])])
    Q, _r = np.linalg.qr(B)
    # a group: one like pair with a power or the logarithm, or two or three disjoint pairs under a root
    groups: list[tuple[tuple[tuple[int, int], ...], float | str]] = [((p,), g) for p in like for g in DIFFERENCE_POWERS]
    groups += [((p,), "root") for p in like]
    for k in (2, 3):
        for pg in itertools.combinations(like, k):
            if len(groups) >= lim.ratio_library:
                break
            if len({c for p in pg for c in p}) == 2 * k:
                groups.append((pg, "root"))

    def values(gi: int) -> np.ndarray | None:
        pg, g = groups[gi]
        if g == "root":
            return np.sqrt(sum((Af[:, j] - Af[:, i]) ** 2 for i, j in pg))
        return _pair_difference(Af, pg[0][0], pg[0][1], g)

    scored = []
    for gi in range(min(len(groups), lim.ratio_library)):
        D = values(gi)
        if D is None or not np.all(np.isfinite(D) & (D != 0)):
            continue
        t = t0 - np.log(np.abs(D))
        r = t - Q @ (Q.T @ t)
        scored.append((float(r @ r), gi))
    scored.sort()
    m = A.shape[1]
    for _ss, gi in scored[:lim.cexp_top]:
        pg, g = groups[gi]
        D = values(gi)
        assert D is not None  # scored above
        t = t0 - np.log(np.abs(D))
        beta, *_ = np.linalg.lstsq(B, t, rcond=None)
        power = 1.0 if g in ("root", "log") else float(g)
        unit = []
        for i, j in pg:
            for c in (j, i):
                e = np.zeros(m)
                e[c] = power
                unit.append(tuple(float(v) for v in e))
        tmpl = _difference_template(len(pg) if g == "root" else 0, log=g == "log")
        for combo in _snaps(beta[1:], lim.cexp_snaps):
            pm = np.zeros(m)
            pm[cols] = combo
            g_v = mono_values(Af, pm) * D
            with np.errstate(all="ignore"):
                c0 = float(np.sum(g_v / yf) / np.sum(g_v * g_v / yf ** 2))
            if not math.isfinite(c0) or c0 == 0:
                continue
            form = Form(atoms, _IDENT, "compound", (tuple(float(v) for v in pm), *unit), (c0,), spec=tmpl)
            col.add(_polish(form, Af, yf, lim.cexp_nfev))
