"""Offline symbolic policy: a symbolic-regression search over a stated grammar behind the Policy protocol.

* :func:`search` — ranked candidate laws (hypothesis-language expressions with fitted constants).
* :class:`SearchLimits` — the count caps that bound one search (its result never depends on timing).
* :class:`SymbolicPolicy` — planner (committees, drafts, synthesis) and baseline (experiment design) roles.

What runs where, in one search:

* **Kernels** (:func:`kernels.programs.evaluate_programs`, the machine behind
  :func:`etc_fast.expr.evaluate_many`): scoring every candidate form on the observations. Forms
  are written straight into the packed postfix layout of :func:`etc_fast.expr.pack` over a table of
  atom values (``x``, ``sin(x)``, ...), and each family's candidates (tens to hundreds) are
  evaluated in one call; their errors are then computed together with NumPy.
* **NumPy** (BLAS): the linear algebra that proposes candidates: log-linear power-law fits,
  vectorized coefficients of all exponent roundings, projection scores of the monomial libraries
  and the least squares of candidate term sets (pairs, triples).
* **SciPy** (``least_squares``, bounded evaluations): continuous refinement of the exponents of a
  nearly fitting sum and of the constants of the best inexact candidates; the residual of one form
  with varying constants is evaluated with NumPy (:func:`._forms.predict`).
* **Python**: the grammar (atoms, exponent snapping, outer transforms), bookkeeping (structure
  keys, complexity, ranking) and rendering of the winners as expressions and ``discovered_law``
  sources.

Profile of the variance_c, baseline_c and variance_n decisions of the benchmark (230 searches): the
candidate scoring that moved to the kernel was the largest single cost (about 30%); the rest is the
sum family's linear algebra and the SciPy refinements.
"""

from etc_fast.policies.symbolic._grammar import VariableDomain
from etc_fast.policies.symbolic._policy import ASSUMED_NOISE, SymbolicPolicy, is_confident
from etc_fast.policies.symbolic._search import (
    DEFAULT_TIME_LIMIT_S,
    Candidate,
    SearchLimits,
    SearchResult,
    SearchTimeLimit,
    relative_errors,
    search,
)

__all__ = [
    "ASSUMED_NOISE",
    "Candidate",
    "DEFAULT_TIME_LIMIT_S",
    "SearchLimits",
    "SearchResult",
    "SearchTimeLimit",
    "SymbolicPolicy",
    "VariableDomain",
    "is_confident",
    "relative_errors",
    "search",
]
