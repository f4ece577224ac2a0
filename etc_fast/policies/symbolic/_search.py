"""Symbolic-regression search over a stated grammar of laws with fitted constants (docs/guide/offline-agent.md).

Given observations ``X`` (n, d), ``y`` (n) and the input domains, :func:`search` returns ranked
candidate laws written in the hypothesis language (:mod:`etc_fast.expr`). Grammar (see
:mod:`._grammar` for atoms and outer transforms)::

    law   := outer(inner)
    inner := C * M                         (monomial)
           | C * M * exp(g * N)            (monomial times the exponential of a monomial)
           | C1 * M1 + C2 * M2 [+ C3 * M3] (sum of monomials; a constant term is M = 1)
           | (sum of 1-3 monomials) / (1 + sum of 1-3 monomials)   (ratio of sums)
           | compound exponentials (offset, two rates, logistic, occupation numbers, Mobius, Gompertz;
             :mod:`._expfamilies`)
    M, N  := prod_j atom_j ** p_j          (atoms: x; sin(x), cos(x) for inputs described as angles)

How each family is fitted (``z = outer.inverse(y)``):

* monomial: least squares of ``log|z|`` on ``log(atoms)``; each exponent is snapped to nearby simple
  values (integers, halves, thirds, quarters, fifths/tenths), the raw fit kept as the last resort;
  ``C`` by relative least squares.
* exponential: the same regression with one more column ``N(x)`` chosen from a library of
  monomials with half-integer exponents (projection scores rank all library columns at once).
* sums: relative least squares of ``z`` on library monomials around the power-law exponents;
  pairs by best-first completion of the top single columns, triples by extending the best pairs;
  exponents off the half-integer grid are found by a bounded continuous refinement
  (``scipy.optimize.least_squares``) and snapped again.
* ratios: linearised as ``z = sum c_i M_i - sum d_j z N_j`` and solved by relative least squares;
  every numerator/denominator pair of library monomials is scored from one Gram matrix, the best
  pairs are extended greedily to three and four terms.

Every candidate is then evaluated on the original ``y`` scale: relative RMS error over the points
where ``y`` is finite (a non-finite prediction there counts as error 10), a description complexity,
and ``score = log10(max(error, floor)) + 0.35 * complexity`` with ``floor`` the noise level (1e-12
noiseless), so the simplest expression that explains the data to the noise level ranks first. On
noiseless data a validated fit with an error up to 1e-12 (rounding, not a law's truncated term: a
two-term expansion missing a 3e-11 term is not exact) stops the more complex families.
Candidates are scored in batches: each family queues its forms, and one call of the compiled
program machine (:func:`kernels.programs.evaluate_programs`) evaluates the whole batch (see
:mod:`._forms`).

The work is bounded by counts only (:class:`SearchLimits`: views, exponent combinations, library
sizes, top-k, optimizer evaluations, forms scored), so the result depends only on the inputs, never
on how busy the machine is. An optional wall-clock limit (``time_limit_s``) is a hard failure, not a
budget: past it the search raises :class:`SearchTimeLimit` (an infrastructure failure that fails the
trial with error kind ``search_time_limit``) instead of returning a shorter search.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import math
import time
from collections.abc import Callable, Sequence
from typing import ParamSpec, TypeVar

import numpy as np
from scipy.optimize import least_squares
from scipy.stats import chi2

from etc_fast._lru import LRU
from etc_fast.errors import InfrastructureError
from etc_fast.policies.symbolic._binomial import binomial_atoms
from etc_fast.policies.symbolic._expfamilies import fit_compound
from etc_fast.policies.symbolic._factored import fit_differences, fit_factored, like_pairs
from etc_fast.policies.symbolic._forms import Form, _complexity, common_factor, form_code, pack_codes, predict
from etc_fast.policies.symbolic._grammar import (
    OUTERS,
    Atom,
    Outer,
    VariableDomain,
    _snap_combos,
    format_exponent,
    make_atoms,
)
from etc_fast.policies.symbolic._lsq import _best_third_columns, error_scale, refit_relative
from etc_fast.policies.symbolic._memory import memory_bound
from etc_fast.policies.symbolic._prodsums import fit_common_sums
from etc_fast.policies.symbolic._signed import POWER_OUTERS, fit_signed, signed_view
from etc_fast.policies.symbolic._simplify import ALPHA as SIMPLIFY_ALPHA
from etc_fast.policies.symbolic._simplify import noise_floor_estimate, simplify_constants, simplify_exponents
from etc_fast.policies.symbolic._units import ALPHA, COMPLEXITY_WEIGHT, DECISIVE_RATIO, EXACT_DIGITS, EXACT_FLOOR
from kernels.programs import evaluate_programs

__all__ = ["Candidate", "SearchLimits", "SearchResult", "SearchTimeLimit", "search", "relative_errors",
           "COMPLEXITY_WEIGHT", "DEFAULT_TIME_LIMIT_S", "array_digest"]

#: Decimals of a score kept when ranking (scores are log10 errors plus complexity: 1e-9 is a relative
#: error difference of about 2e-9, far above the last-bit differences of two CPUs' arithmetic).
SCORE_DIGITS = 9
#: Decimals of a residual sum of squares, as a fraction of the records' own, kept when the sums
#: family compares candidate columns: an exact fit's residual is rounding (about 1e-16 of the
#: records' sum of squares and below), so EXACT_DIGITS decimals make every exact fit a tie.
RESIDUAL_DIGITS = EXACT_DIGITS
#: A validated exact fit (within the noise level; three finite outputs more than its parameters) of
#: at most this complexity stops the families that can only be more complex (sums, exponentials,
#: ratios, signed and compound families). On noiseless records an exact fit with one distinct input
#: point (with a finite output) more than its parameters already stops the two costliest families,
#: the signed and the compound ones, which come last: agreeing with that spare point to the
#: exact-fit tolerance is a test the law passed. The cheaper families still run, since one of them
#: may write the same law with fewer parameters, which the records then validate
#: (docs/guide/offline-agent.md, "The grammar").
EXACT_SKIP_COMPLEXITY = 12.0
#: Relative errors are capped at a decade (:data:`._units.DECISIVE_RATIO`) times the output's own
#: size: a law that misses by more is no law, and a larger error would tell no two laws apart.
_ERR_CAP = DECISIVE_RATIO
_HALVES = np.arange(-8, 9) / 2.0


# ----------------------------------------------------------------------------------------
# Forms
# ----------------------------------------------------------------------------------------
_Form = Form
_predict = predict
_IDENT = OUTERS[0]


def _fmt_const(c: float) -> str:
    return f"{c:.12g}"


def _render_mono(atoms: Sequence[Atom], p: Sequence[float], fn: Callable[[str], str], e_name: str) -> tuple[str, str]:
    num: list[str] = []
    den: list[str] = []
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
    if form.kind == "compound":
        def mono(p):
            n, d = _render_mono(form.atoms, p, fn, e_name)
            return f"{n or '1'}/{d}" if d else n

        inner = form.spec.render(form.exps, form.params, fmt, fn, mono)
    elif form.kind == "expmono":
        c, g = form.params
        head = _render_term(fmt(c), form.atoms, form.exps[0], fn, e_name, True)
        n, d = _render_mono(form.atoms, form.exp_exps, fn, e_name)
        arg = f"{fmt(g)}*{n}" if n else fmt(g)
        arg = f"{arg}/{d}" if d else arg
        inner = f"{head}*{fn('exp')}({arg})"
    elif form.kind == "ratio":
        k = form.n_num
        num = dataclasses.replace(form, kind="sum", exps=form.exps[:k], params=form.params[:k], n_num=0,
                                  outer=_IDENT)
        den = dataclasses.replace(form, kind="sum", exps=((0.0,) * len(form.atoms),) + form.exps[k:],
                                  params=(1.0,) + form.params[k:], n_num=0, outer=_IDENT)
        dtext = _render(den, fn, e_name, const)
        if const is not None:  # the leading 1 of the denominator is not a fitted constant
            dtext = "1" + dtext[1:] if dtext.startswith("C") else dtext
        inner = f"({_render(num, fn, e_name, const)})/({dtext})"
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


def _n_params(form: _Form) -> int:
    """Fitted constants plus non-zero exponents; an exponent all terms of a sum share is one number
    (:func:`._forms.common_factor`)."""
    shared, terms = common_factor(form)
    n = len(form.params) + sum(1 for s in shared if s != 0.0)
    for p in terms + ((form.exp_exps,) if form.exp_exps is not None else ()):
        n += sum(1 for pj in p if pj != 0.0)
    return n


# ----------------------------------------------------------------------------------------
# Limits and results
# ----------------------------------------------------------------------------------------
DEFAULT_TIME_LIMIT_S = 300.0
"""Default wall-clock limit of one search (seconds): far above any search of the benchmark's tasks
(the slowest measured is under 3 s on one loaded core); reaching it fails the trial."""


class SearchTimeLimit(InfrastructureError):
    """A search ran past its wall-clock limit: the trial fails (error kind ``search_time_limit``).

    Never turned into a shorter search: a result that depended on the machine's load would not be
    a result. The failed trial is run again by the next run of the same command.
    """

    def __init__(self, elapsed_s: float, limit_s: float, families: int) -> None:
        super().__init__(f"the symbolic search ran past its wall-clock limit of {limit_s:g} s "
                         f"({elapsed_s:.1f} s, {families} families fitted); raise symbolic.time_limit_s "
                         f"or run on a less loaded machine", kind="search_time_limit")


@dataclasses.dataclass(frozen=True)
class SearchLimits:
    """Count caps that bound the work of one search (so its result never depends on timing).

    The defaults keep a typical decision of the benchmark's tasks well under 0.5 s on one core.

    Attributes:
        max_views: Atom views (choices of x / sin x / cos x per input) searched.
        snap_combos: Exponent combinations (snapped roundings of a fitted power law) per monomial fit.
        snap_product: Largest product of per-exponent options enumerated before keeping only the
            nearest rounding.
        exp_library: Monomials considered inside ``exp(g * N)``.
        exp_top: Library monomials (best projection scores) fitted for the exponential family.
        exp_snap_combos: Exponent combinations per fitted exponential candidate.
        sum_library: Library monomials for sums of terms.
        sum_first: Leading terms each completed to a pair (fewer when library x points is large).
        sum_pairs: Best pairs fitted.
        sum_triple_bases: Best pairs extended to triples.
        sum_triples: Best triples fitted.
        refine_nfev_per_param: Residual evaluations per exponent in the continuous refinement of a sum.
        refine_snap_combos: Exponent combinations tried after that refinement.
        const_refine_top: Best inexact candidates whose constants are refitted on the ``y`` scale.
        const_refine_nfev: Residual evaluations of that refit.
        ratio_library: Library monomials for ratios of sums.
        ratio_pairs: Best numerator-denominator pairs fitted.
        ratio_extend: Best subsets extended by one more term (to three, then four terms).
        max_forms: Candidate forms scored in all; families not reached are skipped (``capped``).
        signed_library: Library monomials of the signed family (:mod:`._signed`).
        signed_pair_evals: Column pairs scored for the extra seeds of the signed family's triples.
        simplify_top: Best candidates whose constants are tried at simple numbers (noisy data only,
            :mod:`._simplify`).
        exponent_simplify_top: Of those, the best whose fitted exponents are first tried at simpler
            values (noisy data only, :func:`._simplify.simplify_exponents`); 0 (the default): none.
            ``SymbolicPolicy(snap_exponents=True)`` sets it to ``simplify_top``.
        cexp_rates: Rates per sign on the screening grid of the compound-exponential families
            (:mod:`._expfamilies`).
        cexp_basins: Screened basins (rate minima) per compound family zoomed in on before ranking.
        cexp_top: Screened starts kept per compound family.
        cexp_refine: Starts refined per compound family.
        cexp_nfev: Residual evaluations of each refinement and polish there.
        cexp_snaps: Exponent roundings tried per refined compound fit.
        memory_limit_mb: Address space a search may add to its process, in MiB: an
            allocation past it fails the trial with error kind ``memory_limit`` (:mod:`._memory`).
        sparse_level: Most inputs whose exponent a sparse library monomial moves away from its
            centre (:func:`_library`); the library's size is ``C(m, k) w^k`` for ``k`` of them.
        signed_atoms: Most atoms in one term of the signed family's library (:mod:`._signed`).
        signed_term_by_term: Most terms of the signed family evaluated one by one; more are
            evaluated grouped by exponent (faster on a large library).
        signed_refine_below: Weighted relative residual below which (and above the exact-fit
            tolerance) the signed family's best two- and three-term fits get their exponents
            refined off the half-integer grid; a larger value refines more fits.
        scan_cells: Most simulated cells (programs x experiments x channels x times) of one scan
            through a system's forward model (:mod:`._simscan`); a grid past it is not scanned.
        scan_chunk: Programs per forward-model call of a scan (bounds the memory of one call;
            changes no result).
        scan_refine: Forms of the monomial scan refitted through the simulator, best first.
        exp_scan_refine: Structures of the exponential scan refitted, best first.
        exp_scan_inputs: Most inputs in the argument of the exponential scan's ``exp(g * M)``.
        rank_simplified: Leaders of a system's simulated rank whose literals are shortened and
            whose terms are pruned (:mod:`._systems`).
        literals_shortened: Most fitted literals of one law shortened one by one.
        evidence_tries: Extra digits tried, one at a time, when a submitted law's rounded literals
            misfit the records.
        sums_pruned: Most sums of one law whose terms are tried dropped.
        common_sum_work: Most Gram-matrix entries of the common-factor sums family
            (:mod:`._prodsums`): core sets of 1, 2, ... inputs are searched, each size in full,
            while ``sum over sizes k of C(m, k) * (products over k inputs)**2`` stays within it
            (10 inputs: cores of up to 3; 7 inputs: up to 4).
    """

    max_views: int = 12
    snap_combos: int = 48
    snap_product: int = 4096
    exp_library: int = 3000
    exp_top: int = 5
    exp_snap_combos: int = 12
    sum_library: int = 4000
    sum_first: int = 24
    sum_pairs: int = 6
    sum_triple_bases: int = 4
    sum_triples: int = 4
    refine_nfev_per_param: int = 15
    refine_snap_combos: int = 8
    ratio_library: int = 1200
    ratio_pairs: int = 8
    ratio_extend: int = 4
    const_refine_top: int = 4
    const_refine_nfev: int = 40
    max_forms: int = 20000
    signed_library: int = 1500
    signed_pair_evals: int = 2000000
    simplify_top: int = 6
    exponent_simplify_top: int = 0
    cexp_rates: int = 10
    cexp_basins: int = 24
    cexp_top: int = 4
    cexp_refine: int = 2
    cexp_nfev: int = 60
    cexp_snaps: int = 3
    # the 10-input planner trials of bench/bench_inputs.py peak under 1 GiB resident; 4 GiB leaves four
    # times that and keeps the searches of two workers of a two-core machine within 8 GiB
    memory_limit_mb: int = 4096
    # a pair covers the second term of a two-term law that differs from the first in two inputs,
    # and an exponential's argument in two inputs; quadratic in the number of inputs
    sparse_level: int = 2
    signed_atoms: int = 3
    signed_term_by_term: int = 8
    # chosen: a two- or three-term fit within 5% (weighted) may be the law with exponents off the grid
    signed_refine_below: float = 0.05
    scan_cells: int = 40_000_000
    scan_chunk: int = 4096
    scan_refine: int = 6
    # the exponential scan's grid of rates is coarse (decades), so more of its structures are refitted
    exp_scan_refine: int = 24
    exp_scan_inputs: int = 2
    rank_simplified: int = 3
    literals_shortened: int = 4
    evidence_tries: int = 3
    sums_pruned: int = 3
    # a core of three inputs holds a sum of two or three products of at most two of them each: the
    # sums of products of the generated suite (docs/guide/generated.md) over up to three core inputs
    common_sum_work: int = 40_000_000

    def __post_init__(self) -> None:
        may_be_zero = {"exponent_simplify_top"}  # a step that is off by default
        fractions = {"signed_refine_below"}  # a relative residual, not a count
        bad = [f.name for f in dataclasses.fields(self) if f.name not in fractions
               and not (isinstance(getattr(self, f.name), int) and not isinstance(getattr(self, f.name), bool)
                        and getattr(self, f.name) >= (0 if f.name in may_be_zero else 1))]
        bad += [name for name in sorted(fractions)
                if not (isinstance(getattr(self, name), (int, float)) and not isinstance(getattr(self, name), bool)
                        and math.isfinite(getattr(self, name)) and getattr(self, name) > 0)]
        if bad:
            raise ValueError(f"SearchLimits: {', '.join(bad)} must be positive integers (exponent_simplify_top: "
                             "0 or more; signed_refine_below: a positive number), got "
                             + ", ".join(f"{b}={getattr(self, b)!r}" for b in bad))


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
    """Ranked candidates (best first) and bookkeeping.

    Attributes:
        candidates: Best first.
        tol: Error at or below which a candidate explains the data (noise level).
        n_used: Observations with a finite output.
        elapsed_s: Wall time of the search (informational; nothing depends on it).
        families_tried: Families fitted, in order (``"mono:id"``, ``"sum:sqrt"``, ...).
        n_forms: Candidate forms scored.
        capped: ``SearchLimits.max_forms`` stopped the search before all families were tried.
        exact_tol: Error at or below which a validated fit counts as exact (the exact-fit tolerance).
        incremental: The candidates are a previous search's, refitted on these observations
            (:mod:`._incremental`), not a new search.
        forms: The candidates' forms, same order (for refitting them on later observations).
    """

    candidates: tuple[Candidate, ...]
    tol: float
    n_used: int
    elapsed_s: float
    families_tried: tuple[str, ...]
    n_forms: int = 0
    capped: bool = False
    exact_tol: float = EXACT_FLOOR
    incremental: bool = False
    forms: tuple[Form, ...] = dataclasses.field(default=(), compare=False, repr=False)

    @property
    def best(self) -> Candidate | None:
        return self.candidates[0] if self.candidates else None

    @property
    def explained(self) -> bool:
        """The best law is a validated fit within the exact-fit tolerance (it explains the data)."""
        b = self.best
        return b is not None and b.error <= self.exact_tol and b.validated(3)


def relative_errors(y_hat: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Per-point relative error ``|y_hat - y| / |y|`` (guarded), capped at 10; NaN prediction -> 10."""
    y_hat = np.asarray(y_hat, dtype=np.float64)
    scale = error_scale(np.asarray(y, dtype=np.float64))
    with np.errstate(all="ignore"):
        r = np.abs(y_hat - y) / scale
    return np.where(np.isfinite(r), np.minimum(r, _ERR_CAP), _ERR_CAP)


def _source(expr_np: str, names: Sequence[str]) -> str:
    return f"def discovered_law({', '.join(names)}):\n    import numpy as np\n    return {expr_np}\n"


# ----------------------------------------------------------------------------------------
# Search machinery
# ----------------------------------------------------------------------------------------
class _Collector:
    """Keeps the best-scoring form of each structure.

    Forms are queued by :meth:`add` and scored in batches by :meth:`flush`: one kernel call
    evaluates the whole batch on the atom table (rows: observations with a finite ``y``), then the
    errors of all of them are computed at once.
    """

    def __init__(self, X, y, names, floor, tol):
        self.X, self.y, self.names, self.floor, self.tol = X, y, names, floor, tol
        self.fin = np.isfinite(y)
        yf = y[self.fin]
        self.yf = yf
        self.y_sd = float(np.std(yf)) if yf.size > 1 else 0.0
        self.scale = error_scale(yf)
        self.entries: dict[tuple, tuple[float, float, float, float, int, _Form]] = {}
        self._A: dict[tuple[Atom, ...], np.ndarray] = {}
        self._col: dict[Atom, int] = {}
        self._table_cols: list[np.ndarray] = []
        self._table: np.ndarray | None = None
        # per form shape (outer, kind, view, exponents): structure key, complexity, parameter
        # count and postfix code with the positions of its constants; the form keeps the ids alive
        self._static: dict[tuple, tuple] = {}
        self._order: dict[tuple, str] = {}  # structure key -> its repr (deterministic tie-break)
        self._pending: list[_Form] = []
        self.best_exact_cx = np.inf  # least complexity of a validated exact fit (EXACT_SKIP_COMPLEXITY)
        self.best_overdetermined_cx = np.inf  # the same for a noiseless exact fit with n > parameters
        self.exact_tol = tol  # error at or below which a fit counts as exact (EXACT_SKIP_COMPLEXITY)
        self.noisy = False  # noisy data: an error above the floor also costs n * log10(error / floor), and
        # the exponent snapping window covers three standard errors of the fitted exponents
        self.n_forms = 0
        self._forced: dict[int, int] = {}  # id(form) -> constants fixed by simplification (replaces its structure)
        self.fixed: dict[tuple, int] = {}  # structure key -> constants its kept form has at simple numbers

    @functools.cached_property
    def n_points(self) -> int:
        """Distinct input points with a finite output (a point measured again tests no fit anew)."""
        return int(np.unique(self.X[self.fin], axis=0).shape[0])

    def atoms_matrix(self, atoms: tuple[Atom, ...]) -> np.ndarray:
        if atoms not in self._A:
            self._A[atoms] = np.column_stack([a.values(self.X) for a in atoms]) if atoms else np.empty((self.X.shape[0], 0))
        return self._A[atoms]

    def _column(self, atom: Atom) -> int:
        j = self._col.get(atom)
        if j is None:
            j = self._col[atom] = len(self._table_cols)
            self._table_cols.append(atom.values(self.X)[self.fin])
            self._table = None
        return j

    def add(self, form: _Form) -> None:
        """Queue a form for scoring (forms with non-finite constants are dropped)."""
        if all(map(math.isfinite, form.params)):
            self._pending.append(form)

    def flush(self) -> list[tuple[_Form, float]]:
        """Score the queued forms; keep each if it is the best of its structure.

        Returns:
            ``(form, error)`` for each scored form, in the order queued.
        """
        forms, self._pending = self._pending, []
        if not forms or not self.yf.size:
            return []
        self.n_forms += len(forms)
        statics = []
        codes = []
        for f in forms:
            skey = (id(f.outer), f.kind, id(f.atoms), f.exps, f.exp_exps, f.n_num, f.spec)
            st = self._static.get(skey)
            if st is None:
                for a in f.atoms:  # register every atom before the table is built
                    if a not in self._col:
                        self._column(a)
                ops, args, consts, slots = form_code(f, self._col.__getitem__)
                st = self._static[skey] = (_structure_key(f), _complexity(f), _n_params(f), ops, args, consts, slots, f)
            statics.append(st)
            consts = list(st[5])
            for slot, v in zip(st[6], f.params):
                consts[slot] = v
            codes.append((st[3], st[4], consts))
        if self._table is None:
            self._table = np.ascontiguousarray(np.column_stack(self._table_cols)) if self._table_cols \
                else np.empty((self.yf.size, 0))
        Y = evaluate_programs(*pack_codes(codes), self._table, n_points=self._table.shape[0])  # [n_forms, n_fin]
        yf = self.yf
        with np.errstate(all="ignore"):
            R = np.abs(Y - yf) / self.scale
            R = np.where(np.isfinite(R), np.minimum(R, _ERR_CAP), _ERR_CAP)
            err = np.sqrt(np.mean(R * R, axis=1))
            if self.y_sd > 0:
                D = np.where(np.isfinite(Y), Y - yf, self.y_sd)
                err = err + 1e-3 * np.minimum(np.sqrt(np.mean(D * D, axis=1)) / self.y_sd, 1.0)
        mx = R.max(axis=1)
        n = int(yf.size)
        out = []
        for form, st, e, m in zip(forms, statics, err.tolist(), mx.tolist()):
            key, cx, n_params = st[0], st[1], st[2]
            score = self._score(e, cx, n)
            old = self.entries.get(key)
            forced = self._forced.pop(id(form), None)
            if old is None or score < old[0] or forced is not None:
                if old is None:
                    self._order[key] = repr(key)
                self.entries[key] = (score, cx, e, m, n, form)
                self.fixed[key] = forced or 0
            if e <= self.exact_tol and n >= n_params + 3:
                self.best_exact_cx = min(self.best_exact_cx, cx)
            if e <= self.exact_tol and not self.noisy and self.n_points > n_params:
                self.best_overdetermined_cx = min(self.best_overdetermined_cx, cx)
            out.append((form, e))
        return out

    def replace(self, form: _Form, n_fixed: int) -> None:
        """Queue a simplified form that replaces its structure's entry (``n_fixed`` constants fixed)."""
        if all(map(math.isfinite, form.params)):
            self._forced[id(form)] = n_fixed
            self._pending.append(form)

    def supersede(self, old: _Form, form: _Form, n_fixed: int) -> None:
        """Queue ``form`` in place of ``old``'s entry, which is dropped (a law with simpler
        exponents that the data cannot tell from ``old``; ``n_fixed`` constants fixed)."""
        if all(map(math.isfinite, form.params)):
            key = _structure_key(old)
            if self.entries.get(key, (None,) * 6)[5] is old:
                del self.entries[key]
                self.fixed.pop(key, None)
            self.replace(form, n_fixed)

    def _score(self, e: float, cx: float, n: int) -> float:
        s = math.log10(max(e, self.floor)) + COMPLEXITY_WEIGHT * cx
        if self.noisy and e > self.floor:
            s += n * math.log10(e / self.floor)
        return s

    def set_floor(self, floor: float) -> None:
        """Rescore every kept form with a new error floor."""
        self.floor = floor
        for key, (_score, cx, e, m, n, form) in self.entries.items():
            self.entries[key] = (self._score(e, cx, n), cx, e, m, n, form)

    def top_forms(self, limit: int) -> list[tuple[float, _Form]]:
        """``(error, form)`` of the best ``limit`` structures, best first."""
        items = sorted(self.entries.items(), key=self._rank_key)[:limit]
        return [(v[2], v[5]) for _k, v in items]

    def _rank_key(self, kv: tuple) -> tuple:
        """Rank by score snapped to :data:`SCORE_DIGITS` decimals, then complexity, then structure
        text: two laws whose scores differ only in the last bits a CPU's arithmetic moves are tied,
        and the tie is broken the same way everywhere."""
        return (round(kv[1][0], SCORE_DIGITS), kv[1][1], self._order[kv[0]])

    def ranked(self, limit: int) -> list[tuple[Candidate, _Form]]:
        items = sorted(self.entries.items(), key=self._rank_key)[:limit]
        out = []
        for _key, (score, cx, err, mx, n, form) in items:
            kind = {"sum": f"sum{len(form.exps)}", "ratio": f"ratio{form.n_num}/{len(form.exps) - form.n_num}",
                    "compound": getattr(form.spec, "name", "")}.get(form.kind, form.kind)
            cand = Candidate(_render(form), _render(form, const=lambda c: "C"), f"{form.outer.name}/{kind}", cx, err, mx,
                             _n_params(form) - self.fixed.get(_key, 0), n, score,
                             _source(_render(form, fn=lambda f: f"np.{f}", e_name="np.e"), self.names))
            out.append((cand, form))
        return out


def _structure_key(form: _Form) -> tuple:
    def mono(p):
        return tuple(sorted((*a.ident, float(pj)) for a, pj in zip(form.atoms, p) if pj != 0.0))

    if form.kind == "ratio":
        k = form.n_num
        terms: tuple = (tuple(sorted(mono(p) for p in form.exps[:k])), tuple(sorted(mono(p) for p in form.exps[k:])))
    else:
        terms = tuple(sorted(mono(p) for p in form.exps))
    if form.kind == "compound":
        terms = (form.spec.name, tuple(mono(p) for p in form.exps))
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


def _rel_coefs(L: np.ndarray, combos: Sequence[Sequence[float]], z: np.ndarray, w: np.ndarray | None = None) -> list[float]:
    """Per exponent vector ``p`` of ``combos``: argmin_c sum(w^2 ((c M - z) / z)^2) with ``M = exp(L p)``.

    ``L`` float64[n, m] holds the logs of the (positive) atoms, ``z`` float64[n] the targets, ``w``
    optional row weights (1 when ``None``).
    """
    if not len(combos):
        return []
    P = np.asarray(combos, dtype=np.float64).reshape(len(combos), L.shape[1])
    w2 = 1.0 if w is None else (w * w)[:, None]
    with np.errstate(all="ignore"):
        W = np.exp(L @ P.T) / z[:, None]  # [n, n_combos]
        ok = np.isfinite(W)
        W = np.where(ok, W, 0.0)
        den = np.sum(w2 * W * W, axis=0)
        c = np.sum(w2 * W, axis=0) / den
    return [float(v) if d > 0 and np.isfinite(d) else float("nan") for v, d in zip(c.tolist(), den.tolist())]


def _loglinear(A: np.ndarray, z: np.ndarray, w: np.ndarray | None = None):
    """Power-law fit of z on atoms: (ok rows, sign, p_hat, intercept, residual rms, log atoms, log z) or None.

    ``w`` (optional, per row of ``z``): least-squares weights, e.g. how much a relative error of
    ``y`` moves ``log z`` at each row (:func:`_noise_weights`); the rms is then weighted too.
    """
    ok = np.isfinite(z) & (z != 0) & _positive_rows(A)
    if w is not None:
        ok &= np.isfinite(w) & (w > 0)
    if ok.sum() < 2:
        return None
    if w is not None and np.any(z[ok] > 0) and np.any(z[ok] < 0):
        # rows of the minority sign whose z the noise alone can flip (together under 5% of the
        # weight: cos of a measured 90.06 degrees) carry no sign; they are left out
        pos = ok & (z > 0)
        neg = ok & (z < 0)
        minority = neg if w[pos].sum() >= w[neg].sum() else pos
        if w[minority].sum() < 0.05 * w[ok].sum():
            ok &= ~minority
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
    if w is None:
        beta, *_ = np.linalg.lstsq(B, t, rcond=None)
        res = t - B @ beta
    else:
        wk = w[ok]
        beta, *_ = np.linalg.lstsq(B * wk[:, None], t * wk, rcond=None)
        res = (t - B @ beta) * wk
    return ok, sign, beta[1:], beta[0], float(np.sqrt(np.mean(res * res))), L, t


def _noise_weights(y: np.ndarray, outer: Outer) -> np.ndarray | None:
    """Weights that make a log-linear fit of ``log|outer.inverse(y)|`` one of relative errors of ``y``.

    Under relative noise of ``y`` the error of ``log|z|`` at a row is ``|d log z / d log y|`` times
    the noise: large where the inverse transform is steep (``cos`` of an angle near 90 degrees, the
    log of a value near 1). Each row is weighted by the inverse of that sensitivity (central
    differences), scaled to a median of 1 and bounded to [1e-3, 1e3]. ``None`` when the sensitivity
    is the same at every row (identity and power outers: weights change nothing).
    """
    with np.errstate(all="ignore"):
        lo = np.log(np.abs(outer.inverse(y * (1.0 - 1e-4))))
        hi = np.log(np.abs(outer.inverse(y * (1.0 + 1e-4))))
        sens = np.abs(hi - lo) / 2e-4
    fin = np.isfinite(sens) & (sens > 0)
    if fin.sum() < 2:
        return None
    med = float(np.median(sens[fin]))
    if np.allclose(sens[fin], med, rtol=1e-3):
        return None
    w = np.full(y.shape, np.nan)
    w[fin] = np.clip(med / sens[fin], 1e-3, 1e3)
    return w


def _fit_mono(col: _Collector, atoms, outer: Outer, A, z, lim: SearchLimits, p_hint=None):
    # noisy data: rows weighted by how much the noise of y moves log z there (a steep inverse
    # transform must not let one noisy row set the exponents); noiseless data are unweighted
    w = _noise_weights(col.y, outer) if col.noisy else None
    fit = _loglinear(A, z, w)
    if fit is None:
        return None
    ok, sign, p_hat, _b0, rms, _L, _t = fit
    w_ok = w[ok] if w is not None else None
    if p_hint is not None:
        p_hat = np.asarray(p_hint, dtype=np.float64)
    window = min(1.0, max(0.03, 4.0 * rms))
    n_opt = 3
    if col.noisy and p_hint is None:  # noisy data: also the simple exponents within three standard errors
        wide = np.minimum(1.0, 3.0 * _exponent_se(_L, _t, w_ok))
        if np.any(wide > window):
            window, n_opt = np.maximum(window, wide), 4
    combos = _snap_combos(p_hat, window, lim.snap_combos, lim.snap_product, n_opt)
    for combo, c in zip(combos, _rel_coefs(_L, combos, z[ok], w_ok)):
        col.add(_Form(atoms, outer, "mono", (tuple(combo),), (c,)))
    return fit


def _exponent_se(L: np.ndarray, t: np.ndarray, w: np.ndarray | None = None) -> np.ndarray:
    """Standard errors of the exponents of the log-linear fit ``t ~ b0 + L p`` (0 without spare points;
    ``w``: optional row weights, as in :func:`_loglinear`)."""
    n, m = L.shape
    if n <= m + 1:
        return np.zeros(m)
    B = np.column_stack([np.ones(n), L])
    if w is not None:
        B, t = B * w[:, None], t * w
    beta, *_ = np.linalg.lstsq(B, t, rcond=None)
    r = t - B @ beta
    s2 = float(r @ r) / (n - m - 1)
    try:
        cov = s2 * np.linalg.pinv(B.T @ B)
    except np.linalg.LinAlgError:
        return np.zeros(m)
    se = np.sqrt(np.maximum(np.diag(cov)[1:], 0.0))
    return np.where(np.isfinite(se), se, 0.0)


def _library(m: int, center: np.ndarray | None, half_width: float, max_size: int, sparse_level: int) -> np.ndarray:
    """Exponent vectors (L, m) on the half-integer grid around ``center`` (within [-4, 4]), at most
    ``max_size`` of them.

    The whole grid when it fits, its half width narrowed by halves as needed (the product of the
    per-input counts: exponential in ``m``). When even the narrowest grid does not fit, a sparse
    library (:func:`_sparse_library`): the monomials that move at most ``k`` exponents away from
    the centre, at the widest half width where ``k`` reaches ``sparse_level`` (``SearchLimits.sparse_level``;
    or the narrowest),
    ``k`` as large as fits. Its size is ``sum_{j <= k} e_j(w)`` (``e_j`` the elementary symmetric
    polynomial of the per-input counts ``w`` of moved values), at most ``max_size``, so every library
    grows polynomially with the inputs.
    """
    width = half_width
    while True:
        axes = _lib_axes(m, center, width)
        size = int(np.prod([len(a) for a in axes]))
        if size <= max_size or width <= 0.5:
            break
        width -= 0.5
    if size <= max_size:
        grids = np.meshgrid(*axes, indexing="ij")
        return np.column_stack([g.ravel() for g in grids]) if m else np.zeros((1, 0))
    return _sparse_library(m, center, half_width, max_size, sparse_level)


def _lib_axes(m: int, center: np.ndarray | None, width: float) -> list[np.ndarray]:
    axes = []
    for j in range(m):
        c = 0.0 if center is None else float(np.clip(np.round(center[j] * 2) / 2, -4, 4))
        axes.append(_HALVES[(_HALVES >= c - width - 1e-9) & (_HALVES <= c + width + 1e-9)])
    return axes


def _level_sizes(moved: Sequence[int], top: int) -> list[int]:
    """Monomials that move exactly ``j`` inputs, ``j = 0..top`` (``moved``: values per input besides
    the centre's): the elementary symmetric polynomials of ``moved``."""
    poly = [1] + [0] * top
    for w in moved:
        for j in range(top, 0, -1):
            poly[j] += poly[j - 1] * w
    return poly


def _sparse_library(m: int, center: np.ndarray | None, half_width: float, max_size: int,
                    sparse_level: int) -> np.ndarray:
    """The centre and the monomials that move at most ``k`` of its exponents (see :func:`_library`).

    Rows: the centre, then level by level (one moved input, two, ...), inputs in index order and
    values ascending within a level. Never more than ``max_size`` rows.
    """
    c = np.zeros(m) if center is None else np.clip(np.round(np.asarray(center, dtype=np.float64) * 2) / 2, -4, 4)
    width, level = half_width, 0
    while True:
        axes = _lib_axes(m, center, width)
        moves = [a[np.abs(a - cj) > 1e-9] for a, cj in zip(axes, c)]
        sizes = _level_sizes([len(v) for v in moves], min(m, max(sparse_level, 1) + 8))
        total, level = 0, -1
        for j, sz in enumerate(sizes):
            if total + sz > max_size:
                break
            total, level = total + sz, j
        if level >= min(sparse_level, m) or width <= 0.5:
            break
        width -= 0.5
    rows = [c.copy()]
    for j in range(1, max(level, 0) + 1):
        for sub in itertools.combinations(range(m), j):
            for vals in itertools.product(*(moves[i] for i in sub)):
                r = c.copy()
                r[list(sub)] = vals
                rows.append(r)
    return np.array(rows[:max_size], dtype=np.float64).reshape(-1, m)


def _lib_values(A: np.ndarray, E: np.ndarray) -> np.ndarray:
    with np.errstate(all="ignore"):
        return np.exp(np.log(A) @ E.T) if A.size else np.ones((A.shape[0], E.shape[0]))


def _fit_expmono(col: _Collector, atoms, outer: Outer, A, z, lim: SearchLimits):
    fit = _loglinear(A, z)
    if fit is None:
        return
    ok, sign, _p, _b0, _rms, L, t = fit
    n, m = L.shape
    if n < m + 3:
        return
    E = _library(m, None, 3.0, lim.exp_library, lim.sparse_level)
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
    for j in np.argsort(-sc, kind="stable")[:lim.exp_top]:
        if not np.isfinite(sc[j]):
            continue
        Bj = np.column_stack([B, N[:, j]])
        beta, *_ = np.linalg.lstsq(Bj, t, rcond=None)
        p_hat = beta[1:-1]
        for combo in _snap_combos(p_hat, 0.05, lim.exp_snap_combos, lim.snap_product):
            tt = t - L @ np.asarray(combo)
            C2 = np.column_stack([np.ones(n), N[:, j]])
            b, *_ = np.linalg.lstsq(C2, tt, rcond=None)
            if np.max(np.abs(b[1] * N[:, j])) < 1e-7:
                continue  # the exponential is numerically 1: a plain monomial says the same
            col.add(_Form(atoms, outer, "expmono", (tuple(combo),), (sign * math.exp(b[0]) if b[0] < 700 else np.nan, float(b[1])),
                          tuple(float(v) for v in E[j])))



def _fit_sums(col: _Collector, atoms, outer: Outer, A, z, center, lim: SearchLimits, *, max_terms=3, refine=True):
    ok = np.isfinite(z) & _positive_rows(A)
    zo, Ao = z[ok], A[ok]
    n = zo.size
    if n < 3:
        return
    wscale = error_scale(zo, 0.0)
    E = _library(A.shape[1], center, 2.5, lim.sum_library, lim.sparse_level)
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
    K = int(min(len(E), max(min(6, lim.sum_first), min(lim.sum_first, 200000 // max(len(E) * max(n, 1), 1) * 10))))
    # noiseless: residuals are compared as fractions of the records' sum of squares snapped to
    # RESIDUAL_DIGITS decimals: on a few records many columns fit exactly, and which one a CPU's
    # last bits put first must not choose the law (ties go to the lower column index). Noisy
    # records (every system table too) compare them as they are: there a residual is the noise's,
    # about noise^2 of the sum of squares (1e-12 at 1e-6), which the snap would blur.
    scale = (tt2 if tt2 > 0 else 1.0) if not col.noisy else 0.0
    firsts = np.argsort(_snapped(res1, scale), kind="stable")[:K]
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
        trtr = float(tr @ tr)
        b = int(np.argmin(np.where(valid, _snapped(trtr - s, scale), np.inf))) if scale else int(np.argmax(s))
        key = (min(a, b), max(a, b))
        pairs[key] = float(trtr - s[b])
    best_pairs = sorted(pairs, key=lambda k: _snapped(pairs[k], scale))[:lim.sum_pairs]
    col.flush()

    def emit(idx):
        cols = Vw[:, list(idx)]
        c, *_ = np.linalg.lstsq(cols, t, rcond=None)
        contrib = np.max(np.abs(V[:, list(idx)] * c) / wscale[:, None], axis=0)
        if np.any(contrib < 1e-7):
            return
        col.add(_Form(atoms, outer, "sum", tuple(tuple(float(v) for v in E[i]) for i in idx), tuple(float(v) for v in c)))

    for pr in best_pairs:
        emit(pr)
    if max_terms >= 3 and n >= 6:
        triples = {}
        for pr in best_pairs[:lim.sum_triple_bases]:
            triples.update(_best_third_columns(U, t, pr))
        for tr_idx in sorted(triples, key=lambda k: _snapped(triples[k], scale))[:lim.sum_triples]:
            emit(tr_idx)
    fits = [(err, form) for form, err in col.flush()]
    if refine and fits:
        fits.sort(key=lambda f: f[0])
        err, form = fits[0]
        if col.tol < err < 3e-2:  # close but not exact: exponents may lie off the half-integer grid
            _refine_sum(col, form, Ao, zo, wscale, lim)


def _snapped(v, scale: float):
    """``v / scale`` rounded to :data:`RESIDUAL_DIGITS` decimals (an array or a float); ``v`` itself
    when ``scale`` is 0."""
    if not scale:
        return v
    return np.round(v / scale, RESIDUAL_DIGITS) if isinstance(v, np.ndarray) else round(v / scale, RESIDUAL_DIGITS)


def _first_stable(v: np.ndarray, k: int) -> np.ndarray:
    """``np.argsort(v, kind="stable")[:k]`` for a 1-D ``v`` without NaN, without sorting all of ``v``.

    Every index that can be among the first ``k`` has a value at most the ``k``-th smallest; those
    indices, in increasing order, sorted stably by value give the same first ``k`` (ties by index).
    """
    if k <= 0:
        return np.zeros(0, dtype=np.intp)
    if k >= v.size:
        return np.argsort(v, kind="stable")
    kth = np.partition(v, k - 1)[k - 1]
    cand = np.flatnonzero(v <= kth)
    return cand[np.argsort(v[cand], kind="stable")][:k]


def _fit_ratio(col: _Collector, atoms, outer: Outer, A, z, lim: SearchLimits):
    """Ratios of sums ``(sum c_i M_i) / (1 + sum d_j N_j)`` (saturations, offsets, rational laws).

    Linearised as ``z = sum c_i M_i - sum d_j (z N_j)`` and solved by relative least squares over a
    half-integer monomial library: every numerator-denominator pair is scored at once from the
    Gram matrix of the normalised columns, the best pairs are extended greedily to three and four
    terms, and each subset's constants come from one least-squares solve. Constants are refined on
    the ``y`` scale afterwards with the other inexact candidates.
    """
    ok = np.isfinite(z) & (z != 0) & _positive_rows(A)
    zo, Ao = z[ok], A[ok]
    n = zo.size
    if n < 5:
        return
    w = 1.0 / error_scale(zo, 0.0)
    E = _library(A.shape[1], None, 2.0, lim.ratio_library, lim.sparse_level)
    V = _lib_values(Ao, E)
    good = np.all(np.isfinite(V), axis=0) & (np.max(np.abs(V), axis=0) < 1e150)
    E, V = E[good], V[:, good]
    nz = np.any(E != 0, axis=1)
    if not len(E) or not nz.any():
        return
    cols = np.column_stack([V * w[:, None], -(V[:, nz] * zo[:, None]) * w[:, None]])
    exps = np.vstack([E, E[nz]])
    is_den = np.concatenate([np.zeros(len(E), dtype=bool), np.ones(int(nz.sum()), dtype=bool)])
    t = zo * w
    nrm = np.linalg.norm(cols, axis=0)
    keep = np.isfinite(nrm) & (nrm > 0)
    cols, exps, is_den, nrm = cols[:, keep], exps[keep], is_den[keep], nrm[keep]
    U = cols / nrm
    b = U.T @ t
    num_i, den_i = np.flatnonzero(~is_den), np.flatnonzero(is_den)
    if not len(num_i) or not len(den_i):
        return
    G = U[:, num_i].T @ U[:, den_i]
    with np.errstate(all="ignore"):
        ba, bj = b[num_i][:, None], b[den_i][None, :]
        gain = (ba * ba + bj * bj - 2.0 * G * ba * bj) / (1.0 - G * G)
    gain = np.where(np.isfinite(gain) & (np.abs(G) < 1.0 - 1e-9), gain, -np.inf)
    flat = _first_stable(-gain.ravel(), lim.ratio_pairs)
    subsets: dict[tuple[int, ...], None] = {}
    for f in flat:
        a, j = np.unravel_index(int(f), gain.shape)
        if np.isfinite(gain[a, j]):
            subsets[tuple(sorted((int(num_i[a]), int(den_i[j]))))] = None
    frontier = list(subsets)
    for _size in (3, 4):
        if n < _size + 3:
            break
        grown: dict[tuple[int, ...], float] = {}
        for base in frontier[:lim.ratio_extend]:
            grown.update(_best_third_columns(U, t, base))
        frontier = sorted(grown, key=lambda k: grown[k])[:lim.ratio_extend]
        subsets.update(dict.fromkeys(frontier))
    for key in subsets:
        idx = list(key)
        c, *_ = np.linalg.lstsq(cols[:, idx], t, rcond=None)
        if not np.all(np.isfinite(c)):
            continue
        contrib = np.max(np.abs(cols[:, idx] * c), axis=0)
        if np.any(contrib < 1e-7):
            continue
        order = sorted(range(len(idx)), key=lambda i: bool(is_den[idx[i]]))
        n_num = int(sum(1 for i in idx if not is_den[i]))
        if n_num == 0 or n_num == len(idx):
            continue
        col.add(_Form(atoms, outer, "ratio", tuple(tuple(float(v) for v in exps[idx[i]]) for i in order),
                      tuple(float(c[i]) for i in order), n_num=n_num))


def _refine_sum(col: _Collector, form: _Form, A, z, wscale, lim: SearchLimits):
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
        sol = least_squares(resid, p0, max_nfev=lim.refine_nfev_per_param * p0.size, method="lm" if t.size >= p0.size else "trf")
    except Exception:  # noqa: BLE001 - an optimizer failure only loses this refinement
        return
    p_hat = sol.x
    for combo in _snap_combos(p_hat, 0.05, lim.refine_snap_combos, lim.snap_product):
        c, r = solve(np.asarray(combo))
        if c is None:
            continue
        col.add(_Form(form.atoms, form.outer, "sum", tuple(tuple(combo[i * m:(i + 1) * m]) for i in range(k)),
                      tuple(float(v) for v in c)))


def _refine_constants(col: _Collector, form: _Form, max_nfev: int) -> None:
    """Refit a form's constants (exponents fixed) by least squares on relative y errors."""
    fin = col.fin
    y = col.y[fin]
    p0 = np.asarray(form.params, dtype=np.float64)
    if y.size < p0.size:
        return
    p, refitted = refit_relative(form, col.atoms_matrix(form.atoms)[fin], y, error_scale(y), p0, {}, max_nfev)
    if refitted:
        col.add(dataclasses.replace(form, params=tuple(float(v) for v in p)))


def _prune_terms(col: _Collector, lim: SearchLimits) -> None:
    """Each of the best sums without one of its terms, constants refitted.

    A sum search can return an exact law plus a term whose coefficient is numerically nil (a
    coefficient of 1e-19 on a monomial the data cannot see); the law without it explains the data
    as well and ranks first by its lower complexity.
    """
    for _err, form in col.top_forms(lim.const_refine_top):
        if form.kind != "sum" or len(form.exps) < 2:
            continue
        if len(form.exps) == 2 and not form.outer.allows_monomial:
            continue  # one term left under a power outer is a power law the monomials already cover
        for i in range(len(form.exps)):
            keep = [k for k in range(len(form.exps)) if k != i]
            reduced = dataclasses.replace(form, kind="sum" if len(keep) > 1 else "mono",
                                          exps=tuple(form.exps[k] for k in keep),
                                          params=tuple(form.params[k] for k in keep))
            _refine_constants(col, reduced, lim.const_refine_nfev)
    col.flush()


def _simplify_noisy(col: _Collector, lim: SearchLimits, alpha: float = SIMPLIFY_ALPHA,
                    exponent_alpha: float = SIMPLIFY_ALPHA) -> None:
    """Noisy data: the error floor from the fits' own residuals, then simple constants (:mod:`._simplify`).

    With ``s`` the smallest residual standard deviation of the fitted laws (an estimate of the
    noise), the floor becomes ``s * sqrt(chi2_0.99(n) / n)``, the relative RMS error that noise of
    that level stays under with probability 0.99 (at most the assumed level's floor), so laws that
    fit significantly worse than the best are not ranked as equal, whatever the true noise. Then
    the constants of the best ``lim.simplify_top`` laws are tried at simple numbers; with
    ``lim.exponent_simplify_top``, the exponents of the best of them are first tried at simpler
    values, and a law with simpler exponents takes the place of the one it came from.
    """
    est = noise_floor_estimate((e, n, _n_params(form)) for (_s, _cx, e, _m, n, form) in col.entries.values())
    n = int(col.yf.size)
    if est is not None and n:
        col.set_floor(min(col.floor, max(EXACT_FLOOR, est * math.sqrt(float(chi2.ppf(1.0 - ALPHA, n)) / n))))
    yf = col.yf
    for i, (_err, form) in enumerate(col.top_forms(lim.simplify_top)):
        A = col.atoms_matrix(form.atoms)[col.fin]
        snapped = (simplify_exponents(form, A, yf, _n_params(form), alpha=exponent_alpha)
                   if i < lim.exponent_simplify_top else None)
        base = snapped[0] if snapped is not None else form
        out = simplify_constants(base, A, yf, _n_params(base), alpha=alpha)
        if snapped is not None:
            col.supersede(form, *(out if out is not None else (base, 0)))
        elif out is not None:
            col.replace(*out)
    col.flush()


# ----------------------------------------------------------------------------------------
# Entry point
# ----------------------------------------------------------------------------------------
_P = ParamSpec("_P")
_R = TypeVar("_R")


def _memory_bounded(fn: Callable[_P, _R]) -> Callable[_P, _R]:
    """Run ``fn`` with the process's memory bounded by its ``limits`` argument's ``memory_limit_mb``
    (:func:`._memory.memory_bound`; the default :class:`SearchLimits` when none is given)."""

    @functools.wraps(fn)
    def bounded(*args: _P.args, **kwargs: _P.kwargs) -> _R:
        limits = kwargs.get("limits")
        bound = (limits or SearchLimits()).memory_limit_mb if isinstance(limits, (SearchLimits, type(None))) else None
        with memory_bound(bound):
            return fn(*args, **kwargs)

    return bounded


@_memory_bounded
def search(
    X: np.ndarray,
    y: np.ndarray,
    domains: Sequence[VariableDomain],
    *,
    noise: float = 0.0,
    time_limit_s: float | None = None,
    mode: str = "full",
    exponent_hint: Sequence[float] | None = None,
    max_candidates: int = 30,
    limits: SearchLimits | None = None,
    output_unit: str | None = None,
    monomials_only: bool = False,
) -> SearchResult:
    """Search the grammar for laws explaining ``y`` from ``X``, the process's memory bounded by
    ``limits.memory_limit_mb`` meanwhile (an allocation past it raises :class:`SearchMemoryLimit`,
    error kind ``memory_limit``).

    The work is bounded by the counts in ``limits``, so the result depends only on the inputs.
    ``time_limit_s`` is a hard wall-clock limit, checked between families: past it the search
    raises :class:`SearchTimeLimit` (the trial fails); it never shortens the search. The process
    keeps its last results by everything they depend on (``_MEMO``): inputs seen before get the
    earlier result, which a second run would give, without running (so no limit is reached).

    Args:
        X: float64[n, d] inputs, columns in the order of ``domains``.
        y: float64[n] outputs (non-finite entries are ignored when fitting).
        domains: Name and domain of each input.
        noise: Relative noise level of ``y`` (sets the error floor and the exact-fit tolerance).
        time_limit_s: Wall-clock limit in seconds (positive), or ``None`` for none.
        mode: ``"full"`` (all families) or ``"diagnostic"`` (only the power law given by
            ``exponent_hint`` or the log-linear fit, its exponent roundings, an added term and an
            offset).
        exponent_hint: Power-law exponents per input (e.g. from planner diagnostics).
        max_candidates: Most candidates returned.
        limits: Count caps of the search (``None``: :class:`SearchLimits` defaults).
        output_unit: ``"deg"`` when the output's description says it is an angle in degrees (the
            degree versions of the inverse trigonometric outers are tried only then).
        monomials_only: Full mode on a table too small to validate a law with two constants:
            only the one-constant families (a monomial under every outer and view) are fitted.

    Returns:
        A :class:`SearchResult` with candidates best first.

    Raises:
        SearchTimeLimit: the search ran past ``time_limit_s``.
    """
    t0 = time.perf_counter()
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    if X.ndim != 2 or X.shape[0] != y.shape[0] or X.shape[1] != len(domains):
        raise ValueError(f"search: X must be (n, {len(domains)}) with n = len(y) = {y.shape[0]}, got {X.shape}")
    if mode not in ("full", "diagnostic"):
        raise ValueError(f"search: mode must be 'full' or 'diagnostic', got {mode!r}")
    if monomials_only and mode != "full":
        raise ValueError("search: monomials_only narrows a full search; the diagnostic mode has its own families")
    if time_limit_s is not None and not (isinstance(time_limit_s, (int, float)) and not isinstance(time_limit_s, bool)
                                         and time_limit_s > 0):
        raise ValueError(f"search: time_limit_s must be a positive number of seconds or None, got {time_limit_s!r}")
    lim = SearchLimits() if limits is None else limits
    if not isinstance(lim, SearchLimits):
        raise ValueError(f"search: limits must be a SearchLimits, got {type(lim).__name__}")
    key = _memo_key(X, y, domains, noise, mode, exponent_hint, max_candidates, lim, output_unit, monomials_only)
    hit = _MEMO.get(key)
    if hit is not None:
        return hit
    col = new_collector(X, y, domains, noise)
    fin = np.isfinite(y)
    tried: list[str] = []
    capped = False

    def check_time() -> None:
        if time_limit_s is not None and time.perf_counter() - t0 > time_limit_s:
            raise SearchTimeLimit(time.perf_counter() - t0, float(time_limit_s), len(tried))

    def exact_simple(max_cx: float) -> bool:
        return col.best_exact_cx <= max_cx

    if fin.sum() >= 1:
        atoms_per_var = make_atoms(domains)
        raw_view = tuple(a for atoms in atoms_per_var for a in atoms if a.kind == "raw")
        views = _views(atoms_per_var, lim.max_views) if mode == "full" else [raw_view]
        yf = y[fin]
        steps: list[tuple[str, Callable[[], None]]] = []
        centers: dict[tuple, np.ndarray | None] = {}

        def z_of(outer):
            with np.errstate(all="ignore"):
                z = np.full(y.shape, np.nan)
                z[fin] = outer.inverse(yf)
            return z

        outers = [o for o in OUTERS if o.valid(yf) and (output_unit == "deg" or not o.degrees_output)] \
            if mode == "full" else [OUTERS[0]]
        ident = OUTERS[0]

        # 1. monomials, every outer and view
        def mono_step(outer, view):
            def run():
                A = col.atoms_matrix(view)
                hint = exponent_hint if (mode == "diagnostic" and exponent_hint is not None and view == raw_view) else None
                if hint is not None:
                    hint = [exponent_hint[a.var] for a in view]
                fit = _fit_mono(col, view, outer, A, z_of(outer), lim, p_hint=hint) if outer.allows_monomial else None
                if fit is None:
                    f2 = _loglinear(A, z_of(outer))
                    centers[(outer.name, view)] = f2[2] if f2 is not None else None
                else:
                    centers[(outer.name, view)] = np.asarray(hint, dtype=np.float64) if hint is not None else fit[2]
            return run

        for outer in outers:
            for view in views:
                steps.append((f"mono:{outer.name}", mono_step(outer, view)))
        if mode == "full" and not monomials_only:  # a power of a two-input sum times a monomial (_binomial.py)
            for atom in binomial_atoms(X[fin], yf, raw_view):
                steps.append(("mono:binomial", mono_step(ident, raw_view + (atom,))))

        def sum_step(outer, view, max_terms):
            def run():
                A = col.atoms_matrix(view)
                c = centers.get((outer.name, view))
                _fit_sums(col, view, outer, A, z_of(outer), c, lim, max_terms=max_terms)
            return run

        def exp_step(view):
            def run():
                _fit_expmono(col, view, ident, col.atoms_matrix(view), z_of(ident), lim)
            return run

        def ratio_step(outer, view):
            def run():
                _fit_ratio(col, view, outer, col.atoms_matrix(view), z_of(outer), lim)
            return run

        if mode == "full" and not monomials_only:
            for view in views:
                steps.append(("sum:id", sum_step(ident, view, 3)))
                steps.append(("exp:id", exp_step(view)))
            # a common factor times a sum of products over a few core inputs (_prodsums.py)
            steps.append(("sum:common", lambda: fit_common_sums(col, raw_view, col.atoms_matrix(raw_view), y, lim)))
            for outer in outers[1:]:
                for view in views:
                    steps.append((f"sum:{outer.name}", sum_step(outer, view, 2)))
            for outer in [o for o in outers if o.name in ("id", "sqrt", "rsqrt")]:
                for view in views[:2]:
                    steps.append((f"ratio:{outer.name}", ratio_step(outer, view)))
            # a monomial times one elementary function of a scaled monomial (_factored.py)
            wide = tuple(a for atoms in atoms_per_var for a in atoms)
            like_vars = set(like_pairs(domains))
            like_cols = [(i, j) for i, j in itertools.combinations(range(len(wide)), 2)
                         if wide[i].kind == wide[j].kind == "raw" and (wide[i].var, wide[j].var) in like_vars]
            steps.append(("factor:id", lambda: fit_factored(col, wide, col.atoms_matrix(wide), y, like_cols, lim)))
            # differences of like inputs of either sign, and roots of sums of their squares
            signed_raw = tuple(Atom(i, domains[i].name) for i in sorted({k for p in like_vars for k in p})
                               if not any(a.var == i and a.kind == "raw" for a in wide))
            dview = wide + signed_raw
            dcol = {a.var: c for c, a in enumerate(dview) if a.kind == "raw"}
            dlike = [(dcol[i], dcol[j]) for i, j in sorted(like_vars)]
            steps.append(("factordiff:id", lambda: fit_differences(col, dview, col.atoms_matrix(dview), y, dlike,
                                                                       lim)))
            s_atoms, s_kinds = signed_view(domains)
            for outer in [o for o in outers if o.name in ("id", "sqrt", "square", "recip")] + \
                    [o for o in POWER_OUTERS if o.valid(yf)]:
                steps.append((f"signed:{outer.name}", (lambda out: lambda: fit_signed(
                    col, s_atoms, s_kinds, out, z_of(out), lim, ratios=out.name in ("id", "sqrt", "square")))(outer)))
            # compound exponentials (differences, saturations, logistic, occupation numbers, nested)
            steps.append(("cexp:id", lambda: fit_compound(col, views[0], col.atoms_matrix(views[0]), z_of(ident), lim)))

        elif mode == "diagnostic":
            steps.append(("sum:id", sum_step(ident, raw_view, 2)))

        for name, run in steps:
            check_time()
            if col.n_forms >= lim.max_forms:
                capped = True
                break
            # a validated exact fit already found: skip families that can only be more complex
            if name.startswith(("sum", "exp", "ratio", "factor", "signed", "cexp")) and exact_simple(EXACT_SKIP_COMPLEXITY):
                continue
            # noiseless: an overdetermined exact fit skips the costliest two (EXACT_SKIP_COMPLEXITY)
            if name.startswith(("signed", "cexp")) and col.best_overdetermined_cx <= EXACT_SKIP_COMPLEXITY:
                continue
            run()
            col.flush()
            if name not in tried:
                tried.append(name)

        # constant refinement of the best inexact candidates on the y scale
        check_time()
        _refine_inexact(col, lim)
        _prune_terms(col, lim)
        if noise > 0:
            _simplify_noisy(col, lim)
        check_time()

    res = _result(col, max_candidates, t0, tuple(tried), capped=capped)
    _MEMO.put(key, res)
    return res


# The last searches of this process by everything they read. The search is deterministic in its
# inputs, and the trials of a study meet the same tables again: every configuration of a task starts
# from the same bootstrap records, and configurations that choose alike share their first batches
# (full.yaml: 391 of 1,734 searches). A repeated table gets the result a second run would give.
_MEMO_KEPT = 512
_MEMO: LRU[str, SearchResult] = LRU(_MEMO_KEPT)


def _memo_key(X: np.ndarray, y: np.ndarray, domains: Sequence[VariableDomain], noise: float, mode: str,
              exponent_hint: Sequence[float] | None, max_candidates: int, lim: SearchLimits,
              output_unit: str | None, monomials_only: bool) -> str:
    """SHA-256 of every input of :func:`search` that its result depends on (not ``time_limit_s``)."""
    hint = None if exponent_hint is None else [float(v) for v in exponent_hint]
    header = repr((mode, float(noise), hint, int(max_candidates), lim, output_unit, bool(monomials_only),
                   [repr(d) for d in domains]))
    return array_digest(X, y, h=hashlib.sha256(header.encode()))


def array_digest(*arrays: np.ndarray, h: hashlib._Hash | None = None) -> str:
    """SHA-256 of float64 arrays, shape and bytes (``h``: a hash to continue, e.g. over a header)."""
    h = hashlib.sha256() if h is None else h
    for a in arrays:
        a = np.ascontiguousarray(a, dtype=np.float64)
        h.update(repr(a.shape).encode())
        h.update(a.tobytes())
    return h.hexdigest()


def _refine_inexact(col: _Collector, lim: SearchLimits) -> None:
    """Refit the constants of the best ``lim.const_refine_top`` candidates that are not exact."""
    for err, form in col.top_forms(lim.const_refine_top):
        if err > col.tol:
            _refine_constants(col, form, lim.const_refine_nfev)
    col.flush()


def _result(col: _Collector, max_candidates: int, t0: float, families: tuple[str, ...], *, capped: bool = False,
            incremental: bool = False) -> SearchResult:
    """The collector's best ``max_candidates`` as a :class:`SearchResult` (forms kept alongside)."""
    pairs = col.ranked(max_candidates)
    return SearchResult(tuple(c for c, _ in pairs), col.tol, int(col.fin.sum()), time.perf_counter() - t0, families,
                        col.n_forms, capped, col.exact_tol, incremental, forms=tuple(f for _, f in pairs))


def new_collector(X: np.ndarray, y: np.ndarray, domains: Sequence[VariableDomain], noise: float) -> _Collector:
    """The candidate collector of one search: error floor and exact-fit tolerance from ``noise``."""
    floor = max(EXACT_FLOOR, 1.5 * float(noise))
    tol = max(EXACT_FLOOR, 3.0 * float(noise))
    col = _Collector(X, y, [d.name for d in domains], floor, tol)
    if noise > 0:  # noisy: only a fit within the noise level itself stops the more complex families
        col.exact_tol = max(1e-10, float(noise))
        col.noisy = True
    return col


def family_signature(X: np.ndarray, y: np.ndarray, domains: Sequence[VariableDomain],
                     output_unit: str | None) -> tuple:
    """What decides which data-dependent families a full search fits: the outer transforms valid on
    the outputs and the binomial atoms the data suggest (a search on data with another signature may
    try families this one did not)."""
    fin = np.isfinite(y)
    yf = y[fin]
    if not yf.size:
        return ()
    outers = tuple(o.name for o in OUTERS if o.valid(yf) and (output_unit == "deg" or not o.degrees_output))
    raw_view = tuple(a for atoms in make_atoms(domains) for a in atoms if a.kind == "raw")
    # a binomial atom by its inputs and its coefficient to 3 significant digits (the refined
    # coefficient moves in its last digits as rows are added; the family it opens does not)
    binom = tuple(sorted({(a.var, a.var2, float(f"{a.coef:.3g}")) for a in binomial_atoms(X[fin], yf, raw_view)}))
    return outers, binom


def refit_result(prev: SearchResult, X: np.ndarray, y: np.ndarray, domains: Sequence[VariableDomain], *,
                 noise: float = 0.0, max_candidates: int = 30, limits: SearchLimits | None = None,
                 simplify_alpha: float = SIMPLIFY_ALPHA, exponent_alpha: float = SIMPLIFY_ALPHA) -> SearchResult:
    """A previous search's candidates refitted and re-ranked on new observations.

    Every kept form is scored with its constants as they were, the best ``limits.const_refine_top``
    inexact ones get their constants refitted (warm-started from the old ones), and on noisy data
    the constants are tried at simple numbers, the same finishing steps as :func:`search`.
    """
    t0 = time.perf_counter()
    lim = SearchLimits() if limits is None else limits
    X = np.ascontiguousarray(X, dtype=np.float64)
    y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
    col = new_collector(X, y, domains, noise)
    for form in prev.forms:
        col.add(form)
    col.flush()
    _refine_inexact(col, lim)
    if noise > 0:
        _simplify_noisy(col, lim, simplify_alpha, exponent_alpha)
    return _result(col, max_candidates, t0, prev.families_tried, incremental=True)
