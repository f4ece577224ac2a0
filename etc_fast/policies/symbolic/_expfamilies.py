"""Compound-exponential families of the symbolic search (docs/guide/offline-agent.md, "The grammar").

Each family is a law with few nonlinear parameters (a rate ``g`` or two, the exponents of the
monomial ``N`` inside the exponential and of the prefactor monomial ``M``) and a few constants that
enter linearly once those are fixed. With ``E = exp(g * N)``:

=============  =============================================  ======================================
family         law                                            general physics it covers
=============  =============================================  ======================================
``expoff``     ``M * (c0 + c1 * E)``                          relaxation to an asymptote: charging,
                                                              Newton cooling, saturating growth
``biexp``      ``M * (c0 * E1 + c1 * E2) [+ c2 * M]``         two parallel or consecutive
                                                              first-order processes (Bateman)
``logistic``   ``c0 * M / (1 + c1 * E)``                      logistic growth, dose-response
``bose``       ``c0 * M / (E - 1)``, ``fermi``: ``/(E + 1)``  occupation numbers times a density
                                                              of states (Planck, Fermi-Dirac)
``mobius``     ``M * (c0 + c1 / (1 + c2 * E))``               ratios of exponentials: tanh, coth,
                                                              Langevin-like and two-level laws
``gompertz``   ``c0 * M * exp(c1 * E)``                       Gompertz growth, double exponentials
``expmono``    ``C * M * exp(g * N)`` with real exponents     the existing family, its exponents
                                                              fitted continuously (stretched decay)
=============  =============================================  ======================================

How they are fitted (variable projection): for every candidate ``(N, g, M)`` of a data-driven
screen (``N`` from a half-integer library of monomials of at most two inputs; ``g`` on a log grid
scaled so that ``g * N`` spans 0.02 to 30 at the median observation, then a finer grid around the
best; ``M`` from the constant, the power laws of all data and of each input alone, and the log-log
slopes at the low and high end of each input) the linear constants come from one least-squares
solve (relative; linearised for ``logistic``/``mobius``; in log space for ``bose``, ``fermi`` and
``gompertz``, where ``M``'s exponents are linear too), all candidates of a family at once. The best
few starts are refined by Levenberg-Marquardt over the nonlinear parameters only (the constants
re-solved at each step), their exponents rounded to simple values (the refined real values kept as
a last resort), the rates refitted and the constants polished on the relative ``y`` error. Every
count is bounded by :class:`~._search.SearchLimits` (``cexp_*``).

A form of these families is a :class:`~._forms.Form` of kind ``"compound"`` whose ``spec`` is a
:class:`Template`: a postfix program over constants, literals and the monomials ``M`` and ``N``,
which gives its compiled code, NumPy values, text, complexity and structure.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import warnings
from collections.abc import Callable, Sequence

import numpy as np
from scipy.optimize import least_squares

from etc_fast.policies.symbolic._forms import Form, mono_values
from etc_fast.policies.symbolic._grammar import OUTERS, exponent_cost, exponent_options
from etc_fast.policies.symbolic._lsq import BatchedJacobian, batched_lm
from kernels.cexp import KINDS as CEXP_KINDS
from kernels.cexp import screen_errors as cexp_screen_errors

try:  # the gufunc np.linalg.lstsq calls (LAPACK gelsd), which also solves a stack problem by problem
    from numpy.linalg import _umath_linalg

    _gelsd: Callable | None = _umath_linalg.lstsq
except (ImportError, AttributeError):  # pragma: no cover - another NumPy layout: np.linalg.lstsq itself
    _gelsd = None

__all__ = ["Template", "TEMPLATES", "fit_compound"]

_IDENT = OUTERS[0]


# ----------------------------------------------------------------------------------------
# Templates: postfix programs over constants ("c", i), literals ("lit", v) and monomials ("m", k)
# ----------------------------------------------------------------------------------------
_BIN = {"add": "+", "sub": "-", "mul": "*", "div": "/"}
#: The one-argument functions a template may apply, by opcode name (each is a law-language function).
_UNARY: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "exp": np.exp, "log": np.log, "sqrt": np.sqrt, "asin": np.arcsin, "acos": np.arccos, "atan": np.arctan,
    "sinh": np.sinh, "cosh": np.cosh, "tanh": np.tanh, "sin": np.sin, "cos": np.cos}


@dataclasses.dataclass(frozen=True)
class Template:
    """A compound law as a postfix program.

    Attributes:
        name: Family name (``expoff``, ``biexp``, ...).
        code: Tokens ``("c", i)`` (constant ``params[i]``, in increasing order of ``i``),
            ``("lit", v)``, ``("m", k)`` (monomial with exponents ``exps[k]``), the operations
            ``("add",)``, ``("sub",)``, ``("mul",)``, ``("div",)`` and the one-argument functions of
            :data:`_UNARY` (``("exp",)``, ``("asin",)``, ``("tanh",)``, ...).
    """

    name: str
    code: tuple[tuple, ...]

    @property
    def n_params(self) -> int:
        return sum(1 for t in self.code if t[0] == "c")

    @property
    def n_exp(self) -> int:
        return sum(1 for t in self.code if t[0] == "exp")

    def values(self, A: np.ndarray, exps, prm) -> np.ndarray:
        """NumPy values on the atom matrix ``A``: float64[n], or [B, n] for constants ``prm`` [B, P].

        Each row of a batch is computed with the same element-wise operations as a single vector
        of constants (a constant becomes a column that broadcasts), so it has the same bits.
        """
        batch = np.ndim(prm) == 2
        st: list = []
        with np.errstate(all="ignore"):
            for t in self.code:
                if t[0] == "c":
                    st.append(prm[:, t[1], None] if batch else prm[t[1]])
                elif t[0] == "lit":
                    st.append(t[1])
                elif t[0] == "m":
                    st.append(mono_values(A, exps[t[1]]))
                elif t[0] in _UNARY:
                    st.append(_UNARY[t[0]](st.pop()))
                else:
                    b, a = st.pop(), st.pop()
                    st.append({"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide}[t[0]](a, b))
        v = st.pop()
        shape = (len(prm), A.shape[0]) if batch else (A.shape[0],)
        return np.broadcast_to(np.asarray(v, dtype=np.float64), shape).copy()

    def emit(self, exps, params, const: Callable, factors: Callable, op: Callable) -> None:
        """Write the postfix code (``const(v, is_param)``, ``factors(p)``, ``op(name)``)."""
        for t in self.code:
            if t[0] == "c":
                const(params[t[1]], True)
            elif t[0] == "lit":
                const(t[1])
            elif t[0] == "m":
                const(1.0)
                factors(exps[t[1]])
            else:
                op(t[0])

    def render(self, exps, params, fmt: Callable[[float], str], fn: Callable[[str], str],
               mono: Callable[[Sequence[float]], str]) -> str:
        """Infix text; ``mono(p)`` renders a monomial (``""`` for the constant 1)."""
        st: list[tuple[str, int]] = []  # (text, precedence: 3 atom, 2 product, 1 sum)
        for t in self.code:
            if t[0] == "c":
                st.append((fmt(params[t[1]]), 3))
            elif t[0] == "lit":
                st.append((repr(float(t[1])) if t[1] != int(t[1]) else str(int(t[1])), 3))
            elif t[0] == "m":
                m = mono(exps[t[1]])
                st.append((m or "1", 3 if not m else 2))
            elif t[0] in _UNARY:
                s, _ = st.pop()
                st.append((f"{fn(t[0])}({s})", 3))
            else:
                (b, pb), (a, pa) = st.pop(), st.pop()
                if t[0] == "mul" and b == "1":
                    st.append((a, pa))
                    continue
                if t[0] == "mul" and a == "1":
                    st.append((b, pb))
                    continue
                if t[0] == "sub" and a == "0":  # a negation: -b
                    st.append((f"-{b}" if pb >= 2 else f"-({b})", 1))
                    continue
                if t[0] in ("add", "sub"):
                    bt = f"({b})" if (t[0] == "sub" and pb < 2) else b
                    st.append((f"{a} {_BIN[t[0]]} {bt}", 1))
                else:
                    at = a if pa >= 2 else f"({a})"
                    bt = b if (pb >= 3 or (t[0] == "mul" and pb >= 2)) else f"({b})"
                    st.append((f"{at}{_BIN[t[0]]}{bt}", 2))
        return st.pop()[0]

    def complexity(self, exps, mono_cost: Callable[[Sequence[float]], float]) -> float:
        """Constants 1 each, exponentials 2, operations 0.5, plus the cost of each monomial use."""
        c = 0.0
        for t in self.code:
            if t[0] == "c":
                c += 1.0
            elif t[0] == "m":
                c += mono_cost(exps[t[1]])
            elif t[0] in _UNARY:
                c += 2.0
            elif t[0] in ("add", "sub", "div"):
                c += 0.5
        return c


def _t(name: str, text: str) -> Template:
    code: list[tuple] = []
    for tok in text.split():
        if tok[0] == "c" and tok[1:].isdigit():
            code.append(("c", int(tok[1:])))
        elif tok[0] == "m" and tok[1:].isdigit():
            code.append(("m", int(tok[1:])))
        elif tok in ("add", "sub", "mul", "div") or tok in _UNARY:
            code.append((tok,))
        else:
            code.append(("lit", float(tok)))
    idx = [t[1] for t in code if t[0] == "c"]
    assert idx == list(range(len(idx))), name  # constants appear once, in order
    return Template(name, tuple(code))


# m0 = M (prefactor monomial), m1 = N (monomial inside the exponential)
TEMPLATES: dict[str, Template] = {
    "expoff": _t("expoff", "c0 m0 mul c1 m0 mul c2 m1 mul exp mul add"),
    "biexp": _t("biexp", "c0 m0 mul c1 m1 mul exp mul c2 m0 mul c3 m1 mul exp mul add"),
    "biexpoff": _t("biexpoff", "c0 m0 mul c1 m1 mul exp mul c2 m0 mul c3 m1 mul exp mul add c4 m0 mul add"),
    "logistic": _t("logistic", "c0 m0 mul 1 c1 c2 m1 mul exp mul add div"),
    "bose": _t("bose", "c0 m0 mul c1 m1 mul exp 1 sub div"),
    "fermi": _t("fermi", "c0 m0 mul c1 m1 mul exp 1 add div"),
    "mobius": _t("mobius", "c0 c1 1 c2 c3 m1 mul exp mul add div add m0 mul"),
    "gompertz": _t("gompertz", "c0 m0 mul c1 c2 m1 mul exp mul exp mul"),
}


# ----------------------------------------------------------------------------------------
# Linear constants for fixed nonlinear parameters (batched over candidates)
# ----------------------------------------------------------------------------------------
def _gelsd_solve(C: np.ndarray, t: np.ndarray) -> np.ndarray | None:
    """``np.linalg.lstsq(C[b], t[b])[0]`` for every problem of a stack ``C`` [B, n, k] (finite),
    through the gufunc that function calls, with its ``rcond`` and its error test (None when a
    solve fails, where it raises); the wrapper's Python checks are what is saved."""
    if _gelsd is None:
        return None
    n, k = C.shape[-2:]
    try:
        with np.errstate(invalid="raise", over="ignore", divide="ignore", under="ignore"):
            x = _gelsd(C, t[..., None], np.finfo(np.float64).eps * max(n, k), signature="ddd->ddid")[0]
    except FloatingPointError:
        return None
    return x[..., 0]


def _lstsq_rows(C: np.ndarray, t: np.ndarray) -> np.ndarray:
    """Each problem of a stack (``C`` [B, n, k], ``t`` [B, n] -> [B, k]) solved exactly as the
    single-problem path of :func:`_batched_lstsq` solves it (``np.linalg.lstsq``, NaN where an input
    is not finite or the solve fails), so each row has that path's bits."""
    out = np.full((C.shape[0], C.shape[2]), np.nan)
    ok = np.all(np.isfinite(C), axis=(1, 2)) & np.all(np.isfinite(t), axis=1)
    if ok.all():
        x = _gelsd_solve(C, t)
        if x is not None:
            return x
    for b in np.flatnonzero(ok):  # some problem is not finite or failed: one by one
        out[b] = _batched_lstsq(C[b:b + 1], t[b:b + 1])[0]
    return out


def _batched_lstsq(C: np.ndarray, t: np.ndarray, exact: bool = False) -> np.ndarray:
    """Least squares per batch: ``C`` [B, n, k], ``t`` [B, n] -> [B, k] (NaN where singular).

    One problem, or ``exact``: each solved as ``np.linalg.lstsq`` does (SVD); otherwise the
    column-scaled normal equations of all problems at once (the screens, where speed matters more).
    """
    if exact and C.shape[0] > 1:
        return _lstsq_rows(C, t)
    if C.shape[0] == 1:  # one problem (inside an optimizer): a plain solve is cheaper
        C1, t1 = C[0], t[0]
        if not (np.all(np.isfinite(C1)) and np.all(np.isfinite(t1))):
            return np.full((1, C.shape[2]), np.nan)
        x = _gelsd_solve(C[:1], t[:1])
        if x is not None:
            return x
        try:
            return np.linalg.lstsq(C1, t1, rcond=None)[0][None, :]
        except np.linalg.LinAlgError:
            return np.full((1, C.shape[2]), np.nan)
    with np.errstate(all="ignore"):
        s = np.sqrt(np.sum(C * C, axis=1))  # column scaling
        s = np.where(s > 0, s, 1.0)
        Cs = C / s[:, None, :]
        G = np.einsum("bnk,bnj->bkj", Cs, Cs)
        r = np.einsum("bnk,bn->bk", Cs, t)
        k = C.shape[2]
        G = G + 1e-13 * np.eye(k)[None]
        ok = np.all(np.isfinite(G), axis=(1, 2)) & np.all(np.isfinite(r), axis=1)
        out = np.full(r.shape, np.nan)
        if ok.any():
            out[ok] = np.linalg.solve(G[ok], r[ok][..., None])[..., 0]
        return out / s


def _solve(name: str, y: np.ndarray, M: np.ndarray, E: np.ndarray, E2: np.ndarray | None = None,
           exact: bool = False):
    """Constants of a family for fixed ``M``, ``E`` (arrays [B, n] or [n]); ``(params, prediction)``.

    ``params`` [B, n_params - n_rates] are the linear constants in the template's order (the rates
    are filled in by the caller); ``prediction`` [B, n] the law's values. ``exact``: every problem
    of the batch solved as a single one is (see :func:`_batched_lstsq`).
    """
    w = 1.0 / np.abs(y)
    lsq = _batched_lstsq if not exact else _exact_lstsq
    with np.errstate(all="ignore"):
        if name == "expoff":
            c = lsq(np.stack([M, M * E], -1) * w[:, None], np.broadcast_to(y * w, M.shape))
            pred = c[:, :1] * M + c[:, 1:2] * M * E
        elif name in ("biexp", "biexpoff"):
            cols = [M * E, M * E2] + ([M] if name == "biexpoff" else [])
            c = lsq(np.stack(cols, -1) * w[:, None], np.broadcast_to(y * w, M.shape))
            pred = np.einsum("bnk,bk->bn", np.stack(cols, -1), c)
        elif name in ("bose", "fermi"):
            col = M / (E - 1.0) if name == "bose" else M / (E + 1.0)
            c = lsq((col * w)[..., None], np.broadcast_to(y * w, M.shape))
            pred = c[:, :1] * col
        elif name == "logistic":  # y = c0 M - c1 y E
            c = lsq(np.stack([M, -y * E], -1) * w[:, None], np.broadcast_to(y * w, M.shape))
            pred = c[:, :1] * M / (1.0 + c[:, 1:2] * E)
        elif name == "mobius":  # y (1 + c2 E) = M (a + b E): y = a M + b M E - c2 y E
            c3 = lsq(np.stack([M, M * E, -y * E], -1) * w[:, None], np.broadcast_to(y * w, M.shape))
            a, b, c2 = c3[:, 0], c3[:, 1], c3[:, 2]
            c0 = b / c2
            c = np.column_stack([c0, a - c0, c2])
            pred = M * (c[:, :1] + c[:, 1:2] / (1.0 + c[:, 2:3] * E))
        elif name == "gompertz":  # log y = log c0 + log M + c1 E
            t = np.log(y)[None, :] - np.log(M)
            c = lsq(np.stack([np.ones_like(E), E], -1), t)
            c = np.column_stack([np.exp(c[:, 0]), c[:, 1]])
            pred = c[:, :1] * M * np.exp(c[:, 1:2] * E)
        else:  # pragma: no cover - programming error
            raise ValueError(name)
    return c, pred


_LOG_FAMILIES = ("bose", "fermi", "gompertz")
_OFFSET = {"expoff": 0, "biexpoff": 4, "mobius": 0}  # the constant of the term c * M


def _exact_lstsq(C: np.ndarray, t: np.ndarray) -> np.ndarray:
    return _batched_lstsq(C, t, exact=True)


def _solve_log(name: str, y: np.ndarray, L: np.ndarray, E: np.ndarray, exact: bool = False):
    """Log-space constants of ``bose``/``fermi``/``gompertz`` for fixed ``E`` [B, n].

    ``log y = log c0 + sum_j p_j log x_j + h(E)`` with ``h = -log(E - 1)``, ``-log(E + 1)`` or
    ``c1 E``: linear in ``log c0``, the prefactor exponents ``p`` (columns ``L`` [n, k] of the logs of
    the positive inputs) and ``c1``. Returns ``(lin [B, 1 or 2], p [B, k], prediction [B, n])``.
    """
    Bn, n = E.shape
    k = L.shape[1]
    ly = np.log(y)
    with np.errstate(all="ignore"):
        base = np.concatenate([np.ones((Bn, n, 1)), np.broadcast_to(L, (Bn, n, k))], axis=2)
        if name == "gompertz":
            C = np.concatenate([base, E[..., None]], axis=2)
            beta = _batched_lstsq(C, np.broadcast_to(ly, E.shape), exact)
            logp = np.einsum("bnk,bk->bn", C, beta)
            lin = np.column_stack([np.exp(beta[:, 0]), beta[:, -1]])
            p = beta[:, 1:1 + k]
        else:
            h = -np.log(E - 1.0) if name == "bose" else -np.log(E + 1.0)
            beta = _batched_lstsq(base, ly[None, :] - h, exact)
            logp = np.einsum("bnk,bk->bn", base, beta) + h
            lin = np.exp(beta[:, :1])
            p = beta[:, 1:1 + k]
        return lin, p, np.exp(logp)


def _params(name: str, lin: np.ndarray, g: float, g2: float | None = None) -> tuple[float, ...]:
    c = [float(v) for v in lin]
    if name == "expoff":
        return (c[0], c[1], g)
    if name == "biexp":
        return (c[0], g, c[1], g2)
    if name == "biexpoff":
        return (c[0], g, c[1], g2, c[2])
    if name in ("bose", "fermi"):
        return (c[0], g)
    if name == "logistic":
        return (c[0], c[1], g)
    if name == "mobius":
        return (c[0], c[1], c[2], g)
    return (c[0], c[1], g)  # gompertz


def _rel_rms(pred: np.ndarray, y: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        r = (pred - y) / np.abs(y)
        r = np.where(np.isfinite(r), np.minimum(np.abs(r), 10.0), 10.0)
        return np.sqrt(np.mean(r * r, axis=-1))


# ----------------------------------------------------------------------------------------
# Screening, refinement, snapping
# ----------------------------------------------------------------------------------------
def _n_library(m: int, positive: np.ndarray) -> np.ndarray:
    """Monomials inside the exponential: half-integer exponents in [-2, 2], at most two inputs."""
    vals = [v for v in np.arange(-4, 5) / 2.0 if v != 0.0]
    out = []
    for j in range(m):
        for v in vals:
            if v < 0 and not positive[j]:
                continue
            p = np.zeros(m)
            p[j] = v
            out.append(p)
    for j, k in itertools.combinations(range(m), 2):
        for a, b in itertools.product(vals, vals):
            if (a < 0 and not positive[j]) or (b < 0 and not positive[k]):
                continue
            p = np.zeros(m)
            p[j], p[k] = a, b
            out.append(p)
    return np.array(out) if out else np.zeros((0, m))


def _m_options(A: np.ndarray, y: np.ndarray, positive: np.ndarray) -> list[np.ndarray]:
    """Prefactor monomials to screen: the constant; the power law of the whole data set, and of
    each input alone; the slopes at the low and at the high end of each input (where a law's
    prefactor shows once the exponential has saturated). Exponents rounded to halves, and the
    integers on either side of the slopes."""
    m = A.shape[1]
    opts = [np.zeros(m)]
    cols = np.flatnonzero(positive)
    if not cols.size or not (np.all(y > 0) or np.all(y < 0)):
        return opts
    ly = np.log(np.abs(y))
    L = np.log(A[:, cols])
    B = np.column_stack([np.ones(len(y)), L])

    def slopes(rows):
        if rows.sum() < cols.size + 2:
            return None
        beta, *_ = np.linalg.lstsq(B[rows], ly[rows], rcond=None)
        return beta[1:]

    whole = slopes(np.ones(len(y), dtype=bool))
    lo, hi = np.zeros(m), np.zeros(m)
    for i, j in enumerate(cols):
        q = np.quantile(L[:, i], [0.4, 0.6])
        for vec, rows in ((lo, L[:, i] <= q[0]), (hi, L[:, i] >= q[1])):
            sl = slopes(rows)
            if sl is not None:
                vec[j] = sl[i]
    cands = [lo, hi]
    if whole is not None:
        w = np.zeros(m)
        w[cols] = whole
        cands.append(w)
        for j in cols:
            one = np.zeros(m)
            one[j] = w[j]
            cands.append(one)
    rounded = [np.round(c * 2) / 2 for c in cands]
    rounded += [np.floor(c) for c in cands[:3]] + [np.ceil(c) for c in cands[:3]]  # integer neighbours
    for p in rounded:
        p = np.clip(p, -4, 4)
        if not any(np.array_equal(p, o) for o in opts):
            opts.append(p)
    return opts


def _rates(Nv: np.ndarray, n_grid: int) -> np.ndarray:
    """Rates ``g`` (both signs) making ``g * N`` about 0.02 to 30 at the median observation."""
    s = float(np.median(np.abs(Nv)))
    if not np.isfinite(s) or s <= 0:
        return np.zeros(0)
    mags = np.logspace(math.log10(0.02), math.log10(30.0), n_grid) / s
    return np.concatenate([-mags, mags])


def _residual_fn(name: str, A: np.ndarray, y: np.ndarray, m: int, two_rates: bool, cols: np.ndarray,
                 free_m: bool = True):
    """VarPro over ``theta = (g, [g2], N exps, [M exps])``: ``run(theta) -> (params, M exps, prediction)``
    and the relative residual. The log families solve ``M`` linearly, so ``theta`` omits it."""
    k = 2 if two_rates else 1
    log_family = name in _LOG_FAMILIES and free_m
    L = np.log(A[:, cols])

    def run(th):
        gs, pn = th[:k], th[k:k + m]
        with np.errstate(all="ignore"):
            Nv = mono_values(A, pn)
            E = np.exp(gs[0] * Nv)[None, :]
            E2 = np.exp(gs[1] * Nv)[None, :] if two_rates else None
            if log_family:
                lin, p, pred = _solve_log(name, y, L, E)
                pm = np.zeros(m)
                pm[cols] = p[0]
            else:
                pm = th[k + m:]
                lin, pred = _solve(name, y, mono_values(A, pm)[None, :], E, E2)
        return lin[0], pm, pred[0]

    def predict_rows(TH):  # run's prediction for every row of TH [B, p], the same arithmetic row by row
        gs, PN = TH[:, :k], TH[:, k:k + m]
        with np.errstate(all="ignore"):
            Nv = _mono_rows(A, PN)
            E = np.exp(gs[:, :1] * Nv)
            E2 = np.exp(gs[:, 1:2] * Nv) if two_rates else None
            if log_family:
                return _solve_log(name, y, L, E, exact=True)[2]
            return _solve(name, y, _mono_rows(A, TH[:, k + m:]), E, E2, exact=True)[1]

    def resid(th):
        """The relative residual at ``th``, or at each row of ``th`` [B, p] (the same bits per row)."""
        pred = predict_rows(th) if th.ndim == 2 else run(th)[2]
        with np.errstate(all="ignore"):  # log families: the log-space residual (smooth in the rate)
            r = np.log(pred / y) if name in _LOG_FAMILIES else (pred - y) / np.abs(y)
        return np.where(np.isfinite(r), r, 10.0)

    return run, resid


def _mono_rows(A: np.ndarray, P: np.ndarray) -> np.ndarray:
    """``mono_values(A, P[b])`` for every row of exponents ``P`` [B, m] -> [B, n], with its bits.

    Per input, the rows that share an exponent take one power of the column (a scalar power, as in
    ``mono_values``); an exponent 0 multiplies by nothing there, and by an exact 1 here.
    """
    out = np.ones((P.shape[0], A.shape[0]))
    for j in range(P.shape[1]):
        col = P[:, j]
        vals = set(col.tolist())  # a Jacobian's batch: one value, or two (the stepped row)
        if len(vals) == 1:
            v = col[0]
            if v != 0.0:
                out = out * (A[:, j] if v == 1.0 else A[:, j] ** v)
            continue
        for v in map(np.float64, vals):  # the scalar type mono_values sees
            if v == 0.0:
                continue
            rows = np.isnan(col) if v != v else col == v
            if rows.any():  # NaN: every NaN row at once, the other NaN entries of the set then match none
                out[rows] = out[rows] * (A[:, j] if v == 1.0 else A[:, j] ** v)
                if v != v:
                    col = np.where(rows, 0.0, col)
    return out


def _screen_errors(name, A, y, li_a, g_a, mi_a, NV, MV, cols) -> np.ndarray:
    with np.errstate(all="ignore"):
        Eb = np.exp(g_a[:, None] * NV[li_a])
        if name in _LOG_FAMILIES:
            _, _, pred = _solve_log(name, y, np.log(A[:, cols]), Eb)
            r = np.log(pred / y)
            return np.sqrt(np.mean(np.where(np.isfinite(r), r * r, 100.0), axis=1))
        _, pred = _solve(name, y, MV[mi_a], Eb)
        return _rel_rms(pred, y)


def _screen_errors_fast(name, A, y, li_a, g_a, mi_a, NV, MV, cols) -> np.ndarray:
    """:func:`_screen_errors`, compiled for the linear-space families (:func:`kernels.cexp.screen_errors`,
    the same numbers to rounding); the log-space families stay in NumPy (one prefactor each, cheap)."""
    if name in CEXP_KINDS:
        return cexp_screen_errors(name, y, NV, MV, li_a, g_a, mi_a)
    return _screen_errors(name, A, y, li_a, g_a, mi_a, NV, MV, cols)


def _screen(name: str, A, y, lib, NV, mopts, cols, lim, grids: Sequence[np.ndarray] | None = None,
            ) -> list[tuple[float, np.ndarray]]:
    """Best starts ``(error, theta)`` of one family over the library, rates and prefactors.

    A coarse log grid of rates for every ``(N, M)``; then, for the best basins (local minima along
    the rate axis, two per ``(N, M)``), two finer grids of the rate around each: an exponential over
    a wide range of ``N`` is sensitive to its rate, so the coarse grid alone can rank the right
    ``N`` low. ``grids``: the sorted rate grid of each library monomial (the same for every
    family; computed here when not given).
    """
    n_m = 1 if name in _LOG_FAMILIES else len(mopts)
    MV = np.stack([mono_values(A, p) for p in mopts])
    lis, grid = [], []
    for li in range(len(lib)):
        gs = grids[li] if grids is not None else np.sort(_rates(NV[li], lim.cexp_rates))
        if gs.size:
            lis.append(li)
            grid.append(gs)
    if not lis:
        return []
    G = np.array(grid)  # [L, R] rates ascending, per library monomial
    L_, R_ = G.shape
    li_a = np.repeat(np.array(lis), R_ * n_m)
    g_a = np.repeat(G.ravel(), n_m)
    mi_a = np.tile(np.arange(n_m), L_ * R_)
    err = _screen_errors_fast(name, A, y, li_a, g_a, mi_a, NV, MV, cols)
    # per (N, M), the two best local minima along the rate axis: the error as a function of the
    # rate can have a shallow wrong basin next to the right one
    e = np.where(np.isfinite(err), err, np.inf).reshape(L_, R_, n_m)
    left = np.concatenate([np.full((L_, 1, n_m), np.inf), e[:, :-1]], axis=1)
    right = np.concatenate([e[:, 1:], np.full((L_, 1, n_m), np.inf)], axis=1)
    is_min = np.isfinite(e) & (e <= left) & (e <= right)
    e_min = np.where(is_min, e, np.inf)
    two = np.argsort(e_min, axis=1, kind="stable")[:, :2, :]  # [L, 2, n_m]
    starts: list[tuple[float, int, tuple]] = []
    for a_ in range(L_):
        for t_ in range(two.shape[1]):
            for c_ in range(n_m):
                r_ = int(two[a_, t_, c_])
                if np.isfinite(e_min[a_, r_, c_]):
                    starts.append((float(e_min[a_, r_, c_]), (a_ * R_ + r_) * n_m + c_, (a_, c_, r_)))
    starts.sort(key=lambda st: (st[0], st[2]))
    # each of the best basins: its rate zoomed in on (two finer grids, all basins in one batch)
    starts = starts[:lim.cexp_basins]
    if not starts:
        return []
    idx = np.array([st[1] for st in starts])
    li_b, mi_b, g_b = li_a[idx], mi_a[idx], g_a[idx]
    step = (30.0 / 0.02) ** (1.0 / max(lim.cexp_rates - 1, 1))
    e_b = np.array([st[0] for st in starts])
    for width in (step, step ** (2.0 / 14.0)):
        f = np.geomspace(1.0 / width, width, 15)
        li2, mi2 = np.repeat(li_b, f.size), np.repeat(mi_b, f.size)
        g2 = (g_b[:, None] * f[None, :]).ravel()
        e2 = _screen_errors_fast(name, A, y, li2, g2, mi2, NV, MV, cols).reshape(len(starts), f.size)
        e2 = np.where(np.isfinite(e2), e2, np.inf)
        j = np.argmin(e2, axis=1)
        better = e2[np.arange(len(starts)), j] < e_b
        g_b = np.where(better, g2.reshape(len(starts), f.size)[np.arange(len(starts)), j], g_b)
        e_b = np.minimum(e_b, e2[np.arange(len(starts)), j])
    out: list[tuple[float, np.ndarray]] = []
    for k in np.argsort(e_b, kind="stable")[:lim.cexp_top]:
        rest = [lib[li_b[k]]] + ([] if name in _LOG_FAMILIES else [mopts[mi_b[k]]])
        out.append((float(e_b[k]), np.concatenate([[g_b[k]]] + rest)))
    return out


def fit_compound(col, atoms, A: np.ndarray, z: np.ndarray, lim) -> None:
    """Queue the compound-exponential families' best fits on ``col`` (a ``_Collector``).

    Args:
        col: The search's collector (``add``; ``tol`` gates which starts are refined).
        atoms: The view (atoms of the monomials).
        A: float64[n, m] atom values (rows: observations).
        z: float64[n] outputs (NaN where not finite).
        lim: The search's :class:`SearchLimits` (``cexp_*`` counts).
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _fit_compound(col, atoms, A, z, lim)


def _biexp_errors(name, y, rows) -> np.ndarray:
    Mb = np.stack([r[5] for r in rows])
    Nb = np.stack([r[4] for r in rows])
    with np.errstate(all="ignore"):
        E1 = np.exp(np.array([r[0] for r in rows])[:, None] * Nb)
        E2 = np.exp(np.array([r[1] for r in rows])[:, None] * Nb)
    _, pred = _solve(name, y, Mb, E1, E2)
    return _rel_rms(pred, y)


def _single_exp_ranking(A, y, lib, NV, cols) -> list[np.ndarray]:
    """Library monomials ``N`` ranked by how well ``C * M * exp(g * N)`` (``M`` free) fits ``log|y|``."""
    if not (np.all(y > 0) or np.all(y < 0)):
        return []
    t = np.log(np.abs(y))
    n = len(y)
    base = np.column_stack([np.ones(n), np.log(A[:, cols])])
    C = np.concatenate([np.broadcast_to(base, (len(lib),) + base.shape), NV[..., None]], axis=2)
    beta = _batched_lstsq(C, np.broadcast_to(t, (len(lib), n)))
    r = np.einsum("bnk,bk->bn", C, beta) - t
    err = np.where(np.all(np.isfinite(r), axis=1), np.sum(r * r, axis=1), np.inf)
    return [lib[i] for i in np.argsort(err, kind="stable")]


def _fit_compound(col, atoms, A: np.ndarray, z: np.ndarray, lim) -> None:
    ok = np.isfinite(z) & (z != 0) & np.all(np.isfinite(A), axis=1) & np.all(A >= 0, axis=1)
    y, A = z[ok], A[ok]
    n, m = A.shape
    if n < 6 or m == 0:
        return
    positive = np.all(A > 0, axis=0)
    cols = np.flatnonzero(positive)
    lib = _n_library(m, positive)
    if not len(lib):
        return
    NV = np.stack([mono_values(A, p) for p in lib])  # [L, n]
    good = np.all(np.isfinite(NV), axis=1) & (np.ptp(NV, axis=1) > 0)
    lib, NV = lib[good], NV[good]
    if not len(lib):
        return
    mopts = _m_options(A, y, positive)
    same_sign = bool(np.all(y > 0) or np.all(y < 0))
    names = ["expoff"] + (["logistic", "mobius"] if same_sign else []) \
        + (["bose", "fermi", "gompertz"] if np.all(y > 0) else [])
    grids = [np.sort(_rates(NV[li], lim.cexp_rates)) for li in range(len(lib))]
    seeds = {name: _screen(name, A, y, lib, NV, mopts, cols, lim, grids) for name in names}
    # two rates: the best single-exponential starts, every pair of grid rates
    n_cands = {tuple(th[1:1 + m]): None for _e, th in seeds["expoff"]}
    n_cands.update(dict.fromkeys(tuple(p) for p in _single_exp_ranking(A, y, lib, NV, cols)[:lim.cexp_top]))
    for name in ("biexp", "biexpoff"):
        rows = []
        for pn_key in n_cands:
            pn = np.asarray(pn_key)
            Nv = mono_values(A, pn)
            for pm in mopts:
                Mv = mono_values(A, pm)
                for g1, g2 in itertools.combinations(_rates(Nv, lim.cexp_rates), 2):
                    rows.append((g1, g2, pn, pm, Nv, Mv))
        if not rows:
            continue
        err = _biexp_errors(name, y, rows)
        # finer rates around the best coarse pair of each (N, M)
        best: dict[tuple, int] = {}
        for i in np.argsort(err, kind="stable"):
            if np.isfinite(err[i]):
                best.setdefault((tuple(rows[i][2]), tuple(rows[i][3])), int(i))
            if len(best) >= 4 * lim.cexp_top:
                break
        step = (30.0 / 0.02) ** (1.0 / max(lim.cexp_rates - 1, 1))
        f = np.geomspace(1.0 / step, step, 7)
        fine = [(rows[i][0] * a, rows[i][1] * b) + rows[i][2:] for i in best.values() for a in f for b in f]
        if fine:
            rows = rows + fine
            err = np.concatenate([err, _biexp_errors(name, y, fine)])
        picked, seen = [], set()
        for i in np.argsort(err, kind="stable"):
            key = (tuple(rows[i][2]), tuple(rows[i][3]))
            if key in seen or not np.isfinite(err[i]):
                continue
            seen.add(key)
            picked.append((float(err[i]), np.concatenate([[rows[i][0], rows[i][1]], rows[i][2], rows[i][3]])))
            if len(picked) >= lim.cexp_basins:
                break
        # the two rates of each of the best (N, M) optimised alone (all of them in one batched
        # Levenberg-Marquardt), then ranked
        _run, resid = _residual_fn(name, A, y, m, True, cols)
        ranked = []
        if picked:
            TH = np.stack([th for _e, th in picked])
            G, Rg = _lm_rows(resid, TH[:, :2], TH[:, 2:], lim.cexp_nfev // 4)
            for b in range(len(picked)):
                ranked.append((float(np.sqrt(np.mean(Rg[b] * Rg[b]))), np.concatenate([G[b], TH[b, 2:]])))
        ranked.sort(key=lambda o: o[0])
        seeds[name] = ranked[:lim.cexp_top]
    gate = max(3e-2, 10.0 * col.tol)  # a start worth refining explains the data to a few percent
    exact_cx = math.inf  # complexity of the simplest exact compound fit so far
    # families in the order of their best screened start; once one fits exactly, a family whose
    # barest form is already more complex cannot win and is skipped
    order = sorted(seeds, key=lambda nm: (seeds[nm][0][0] if seeds[nm] else math.inf, nm))
    for name in order:
        picked = seeds[name]
        if TEMPLATES[name].complexity(((), ()), lambda p: 0.0) >= exact_cx:
            continue
        two = name in ("biexp", "biexpoff")
        k = 2 if two else 1
        run, resid = _residual_fn(name, A, y, m, two, cols)
        run_m, resid_m = _residual_fn(name, A, y, m, two, cols, free_m=False)  # M fixed (snapped)
        tmpl = TEMPLATES[name]
        # the log families move only the rate and N (M is solved linearly): twice the starts
        starts = [th0 for e0, th0 in picked[:lim.cexp_refine * (2 if name in _LOG_FAMILIES else 1)]
                  if not (e0 > 5.0 or n < tmpl.n_params + np.count_nonzero(th0[k:]) + 2)]
        if not starts:
            continue
        # the rates alone first (the screened exponents are simple already); all nonlinear
        # parameters only when that does not explain the data (few distinct points make the
        # full problem prone to near-fits with other exponents). Each step fits all the starts at
        # once (one batched Levenberg-Marquardt).
        TH0 = np.stack(starts)
        G, Rr = _lm_rows(resid, TH0[:, :k], TH0[:, k:], lim.cexp_nfev // 2)
        TH = np.concatenate([G, TH0[:, k:]], axis=1)
        rms = np.sqrt(np.mean(Rr * Rr, axis=1))
        redo = np.flatnonzero(rms > 10.0 * col.tol)
        if redo.size:
            TH[redo], Rf = _lm_rows(resid, TH[redo], np.zeros((redo.size, 0)), lim.cexp_nfev)
            rms[redo] = np.sqrt(np.mean(Rf * Rf, axis=1))
        for th, rms_th in zip(TH, rms):
            if rms_th > gate:
                continue
            gs, pn = th[:k], th[k:k + m]
            _lin, pm, pred = run(th)
            # the refined fit (real exponents) bounds what its roundings can reach: skip the
            # roundings when even it cannot rank near the best law found so far
            col.flush()
            best_score = min((v[0] for v in col.entries.values()), default=math.inf)
            cx_min = tmpl.complexity(((), ()), lambda p: 0.0) + 1.5 * float(np.count_nonzero(np.round(np.concatenate([pn, pm]) * 2)))
            if math.log10(max(float(_rel_rms(pred, y)), col.floor)) + 0.35 * cx_min > best_score + 1.0:
                continue
            # snap the exponents of N and M; the rates then re-fitted with the exponents fixed
            # (all roundings in one batched fit)
            combos = [np.asarray(c, dtype=np.float64) for c in _snaps(np.concatenate([pn, pm]), lim.cexp_snaps)
                      if np.any(np.asarray(c[:m]) != 0)]
            if not combos:
                continue
            GS2, _r = _lm_rows(resid_m, np.repeat(gs[None, :], len(combos), axis=0), np.stack(combos),
                               lim.cexp_nfev // 3)
            for combo, gs2 in zip(combos, GS2):
                pn2, pm2 = combo[:m], combo[m:]
                lin, _pm, _ = run_m(np.concatenate([gs2, pn2, pm2]))
                if not np.all(np.isfinite(lin)):
                    continue
                spans = np.abs(np.outer(gs2, mono_values(A, pn2))).max(axis=1)
                if np.any(spans < 1e-6) or (two and abs(gs2[0] - gs2[1]) <= 1e-9 * max(abs(gs2[0]), abs(gs2[1]))):
                    continue  # an exponential that is numerically constant: a simpler family says the same
                prm = _params(name, lin, float(gs2[0]), float(gs2[1]) if two else None)
                form = Form(atoms, _IDENT, "compound", (tuple(float(v) for v in pm2), tuple(float(v) for v in pn2)),
                            prm, spec=tmpl)
                form = _polish(form, A, y, lim.cexp_nfev // 3)
                j = _OFFSET.get(name)
                if j is not None and np.max(np.abs(form.params[j] * mono_values(A, pm2) / y)) < 1e-9:
                    continue  # a negligible offset term: the family without it says the same
                col.add(form)
                if _rel_rms(tmpl.values(A, form.exps, form.params), y) <= col.tol:
                    cx = tmpl.complexity(form.exps, lambda p: float(np.count_nonzero(p)))
                    exact_cx = min(exact_cx, cx)
                    break  # roundings are tried simplest first: the first exact one is the best
            if exact_cx < math.inf:
                break  # this family fits exactly: its other starts can only tie
    _fit_expmono_real(col, atoms, A, y, positive, lim)


def _lm_rows(resid: Callable, X0: np.ndarray, tails: np.ndarray, nfev: int) -> tuple[np.ndarray, np.ndarray]:
    """The leading parameters ``X0`` [B, q] of ``B`` problems fitted at once (:func:`~._lsq.batched_lm`),
    problem ``b``'s other parameters held at ``tails[b]``; ``resid`` takes a batch of full parameter
    rows. At most ``max(nfev, q + 2)`` evaluations per problem (MINPACK's bound in :func:`_lsq`).
    Returns the fitted leading parameters and the residuals there."""
    def f(G: np.ndarray, which: np.ndarray) -> np.ndarray:
        return resid(np.concatenate([G, tails[which]], axis=1)) if tails.shape[1] else resid(G)

    return batched_lm(f, X0, max(nfev, X0.shape[1] + 2))


def _lsq(fun, x0: np.ndarray, nfev: int, n_resid: int, batched: bool = False) -> np.ndarray:
    """Levenberg-Marquardt (MINPACK) from ``x0`` with tight tolerances; ``x0`` when it fails.

    The default trust-region method stops after a few steps on these small problems (its relative
    cost tolerance is met long before the constants are exact); LM continues to machine precision.
    ``batched``: ``fun`` also takes a batch of vectors [B, p] (row by row the same bits), and each
    finite-difference Jacobian is one such call (:class:`~._lsq.BatchedJacobian`).
    """
    x0 = np.asarray(x0, dtype=np.float64)
    fd = BatchedJacobian(fun, fun) if batched else None
    try:
        return least_squares(fd.fun if fd else fun, x0, jac=fd.jac if fd else "2-point", max_nfev=max(nfev, x0.size + 2),
                             method="lm" if n_resid >= x0.size else "trf", ftol=1e-14, xtol=1e-14, gtol=1e-15).x
    except Exception:  # noqa: BLE001 - an optimizer failure only loses this start
        return x0


def _snaps(p: np.ndarray, limit: int) -> list[tuple[float, ...]]:
    opts = [exponent_options(float(v), 0.05) for v in p]
    combos = list(itertools.islice(itertools.product(*opts), 512))
    combos.sort(key=lambda c: sum(exponent_cost(v) if v != 0 else 0.0 for v in c)
                + 160.0 * sum(abs(v - q) for v, q in zip(c, p)))
    return combos[:limit]


def _polish(form: Form, A: np.ndarray, y: np.ndarray, nfev: int) -> Form:
    """All constants of a form refitted on the relative ``y`` error (exponents fixed)."""
    tmpl = form.spec
    p0 = np.asarray(form.params, dtype=np.float64)

    ay = np.abs(y)

    def resid(prm):  # one vector of constants, or a batch [B, P] (Template.values: the same bits per row)
        with np.errstate(all="ignore"):
            r = (tmpl.values(A, form.exps, prm) - y) / ay
        return np.where(np.isfinite(r), r, 10.0)

    if y.size <= p0.size:
        return form
    fd = BatchedJacobian(resid, resid)
    try:
        sol = least_squares(fd.fun, p0, jac=fd.jac, max_nfev=nfev, method="lm", x_scale="jac", ftol=1e-15, xtol=1e-15,
                            gtol=1e-15)
    except Exception:  # noqa: BLE001
        return form
    if np.sum(sol.fun ** 2) <= np.sum(resid(p0) ** 2):
        return dataclasses.replace(form, params=tuple(float(v) for v in sol.x))
    return form


def _fit_expmono_real(col, atoms, A: np.ndarray, y: np.ndarray, positive: np.ndarray, lim) -> None:
    """``C * M * exp(g * N)`` with the exponents of ``N`` fitted continuously (then snapped).

    ``log|y| = log C + sum_j p_j log x_j + g N``: for fixed exponents of ``N`` everything else is
    one linear solve, so only ``N``'s exponents are refined, from the best library monomials.
    """
    if not (np.all(y > 0) or np.all(y < 0)):
        return
    sign = 1.0 if y[0] > 0 else -1.0
    cols = np.flatnonzero(positive)
    n, m = A.shape
    if n < cols.size + 4:
        return
    t = np.log(sign * y)
    L = np.log(A[:, cols])
    B = np.column_stack([np.ones(n), L])
    lib = _n_library(m, positive)

    def solve(pn):
        Nv = mono_values(A, pn)
        C = np.column_stack([B, Nv])
        if not np.all(np.isfinite(C)):
            return None, np.full(n, 10.0)
        beta, *_ = np.linalg.lstsq(C, t, rcond=None)
        return beta, C @ beta - t

    errs = []
    for pn in lib:
        _b, r = solve(pn)
        errs.append(float(r @ r))
    for i in np.argsort(errs, kind="stable")[:lim.cexp_refine]:
        try:
            pn = _lsq(lambda q: solve(q)[1], lib[i], lim.cexp_nfev, n)
        except Exception:  # noqa: BLE001
            pn = lib[i]
        beta, _ = solve(pn)
        if beta is None:
            continue
        pm_full = np.zeros(m)
        pm_full[cols] = beta[1:-1]
        for combo in _snaps(np.concatenate([pn, pm_full]), lim.cexp_snaps):
            pn2, pm2 = np.asarray(combo[:m]), np.asarray(combo[m:])
            if not np.any(pn2 != 0):
                continue
            Nv = mono_values(A, pn2)
            tt = t - np.log(np.where(mono_values(A, pm2) > 0, mono_values(A, pm2), np.nan))
            C2 = np.column_stack([np.ones(n), Nv])
            if not (np.all(np.isfinite(C2)) and np.all(np.isfinite(tt))):
                continue
            b, *_ = np.linalg.lstsq(C2, tt, rcond=None)
            if b[0] >= 700 or np.max(np.abs(b[1] * Nv)) < 1e-7:
                continue
            col.add(Form(atoms, _IDENT, "expmono", (tuple(float(v) for v in pm2),),
                         (sign * math.exp(b[0]), float(b[1])), tuple(float(v) for v in pn2)))
