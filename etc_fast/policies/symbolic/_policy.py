"""The symbolic policy: an offline agent built on the symbolic-regression search.

Planner role (phase ``explore``): each turn the search runs on all observations; when one
candidate explains them to the noise level with at least three observations more than it has
parameters, and the runner-up is clearly worse (100x the best error, or 3 complexity units more
complex), the candidate is submitted as a draft. Otherwise the policy proposes a committee of up to
five structurally different, well-fitting candidates (at most two per family first, for diversity),
so the planner measures where they disagree. On the last exploration turn the best candidate is
drafted.

Which search runs depends on the configuration:

* without an interpreter (``N`` variants) only candidates derived from the diagnostics: the power
  law with the diagnostics' exponents (or the policy's own log-linear fit when diagnostics are off),
  roundings of those exponents, an added term and an offset (``mode="diagnostic"``);
* with one (``C`` variants) also the full grammar search (:func:`search` with ``mode="full"``), but
  only as the agent's analysis: it sends an ``analysis`` action (:data:`ANALYSIS_CODE`, NumPy
  summaries run in the sandbox), which uses the turn, and runs the full search on the same
  observations at the next decision. New observations need a new analysis. When the diagnostic
  search is already confident, or no analysis can be sent any more, it decides without one.

Noise: the observation says only whether measurements are noisy; the policy then assumes a
relative noise level of :data:`ASSUMED_NOISE` (an agent is never told the true level), or the
level a noise-aware planner estimated and wrote in the diagnostics (:func:`noise_level`). Every
decision ranks the search's laws by one criterion (:mod:`._criterion`: fit against the noise the
records imply, fitted numbers, form), and a planner drafts before its last exploration turn only
when its law predicted a batch it was not fitted to and beats every rival decisively by that
criterion (:meth:`SymbolicPolicy._own_predicted`, :func:`is_confident`). The baseline's confidence
rule on noisy data needs :data:`NOISY_POINTS_PER_PARAM` more observations per parameter; the search
itself simplifies
constants and ranks by the noise it estimates (:mod:`._simplify`).

Synthesis (phase ``synthesis``): the search is refitted on all observations; the draft is kept
unless the observations disagree with it (after refitting its constants) and the search finds a
candidate that fits better. On noisy observations, where both explain the records within the
search's tolerance, the search's best law replaces the draft when it is written with fewer fitted
numbers (:func:`fitted_literals`): a draft's extra fitted digits buy a fit inside the noise, which
is no evidence for them. A simple constant or exponent is given up at the agent's one significance
level (:data:`._units.ALPHA`), in the commitment as in every search.

Baseline role (phases ``baseline`` and ``final``): free-form experiment design without diagnostics:
batches of scrambled Sobol points (seeded) over the input domains, ``8`` points per round for one or
two inputs and ``4 d`` beyond; after each batch the search runs, and a ``final`` action is sent as soon
as the same confidence rule as for drafts holds (or when forced). The interpreter decides which search
runs, exactly as for the planner: the full grammar search after an analysis round with one, and
without one only the power law from the policy's own log-linear fit (baselines get no diagnostics)
and its small edits. So a
``baseline_n``/``planner_n`` comparison holds the agent's own analysis fixed and varies the protocol.
"""

from __future__ import annotations

import dataclasses
import math
import re
import warnings
from typing import TYPE_CHECKING, Any

import numpy as np
from scipy.stats import qmc

from etc_fast.core import Action, Observation, ProtocolConfig, TaskView
from etc_fast.expr import FUNCTIONS, LITERALS, fitted_numbers, sympy_functions
from etc_fast.expr._numbers import LITERAL
from etc_fast.policies.symbolic._criterion import (
    ASSUMED_NOISE,
    EXACT_DIGITS,
    criterion_ranked,
    implied_noise,
    predicts_unseen,
)
from etc_fast.policies.symbolic._fit import refit_constants
from etc_fast.policies.symbolic._grammar import VariableDomain, angle_unit_of
from etc_fast.policies.symbolic._incremental import IncrementalSearch, array_digest
from etc_fast.policies.symbolic._memory import HEADROOM_MB
from etc_fast.policies.symbolic._search import (
    DEFAULT_TIME_LIMIT_S,
    SCORE_DIGITS,
    Candidate,
    SearchLimits,
    SearchResult,
    refit_result,
    relative_errors,
    search,
)
from etc_fast.policies.symbolic._simplify import ALPHA as SIMPLIFY_ALPHA
from etc_fast.policies.symbolic._simscan import KeptScans

if TYPE_CHECKING:
    from etc_fast.systems import DerivedTableCache

__all__ = ["SymbolicPolicy", "is_confident", "noise_level", "fitted_literals", "ASSUMED_NOISE", "ANALYSIS_CODE"]

#: Significant digits of the fitted constants of a submitted law (the search writes its own with
#: ``%.12g``; a system law's calibrated constants are written the same way, :func:`snap_literals`):
#: the digits an exact fit agrees to, :data:`._units.EXACT_DIGITS`.
LAW_DIGITS = EXACT_DIGITS

#: With noisy data, observations per parameter (beyond the margin) before a law is considered
#: confirmed (:func:`is_confident`); the planner under noise also drafts only on its last
#: exploration turn, so every exploration turn measures where the committee disagrees.
NOISY_POINTS_PER_PARAM = 3

#: The code of the agent's analysis action (runs in the sandbox with ``X`` and ``y`` preloaded): the
#: observation summaries its grammar search starts from. The search itself runs in the agent's
#: process on the next decision (the sandbox cannot import the project's compiled kernels).
ANALYSIS_CODE = """\
fin = np.isfinite(y)
Xf, yf = X[fin], y[fin]
print("observations with a finite output:", int(fin.sum()))
print("output range:", float(yf.min()), float(yf.max()), "| changes sign:", bool((yf > 0).any() and (yf < 0).any()))
ok = np.all(Xf > 0, axis=1) & (yf != 0)
if ok.sum() > Xf.shape[1] + 1 and (np.all(yf[ok] > 0) or np.all(yf[ok] < 0)):
    A = np.column_stack([np.ones(int(ok.sum())), np.log(Xf[ok])])
    t = np.log(np.abs(yf[ok]))
    b, *_ = np.linalg.lstsq(A, t, rcond=None)
    r = t - A @ b
    print("log-log exponents:", [round(float(v), 4) for v in b[1:]], "| rms:", round(float(np.sqrt(np.mean(r * r))), 6))
for k in range(Xf.shape[1]):
    rx, ry = np.argsort(np.argsort(Xf[:, k])), np.argsort(np.argsort(yf))
    c = np.corrcoef(rx, ry)[0, 1] if len(yf) > 2 else float("nan")
    print(f"input {k}: rank correlation with the output {c:+.3f}")
"""


def with_data_literals(X: np.ndarray, y: np.ndarray) -> str:
    """Lines defining ``np``, ``X`` and ``y`` from the observations as literals (exact ``repr``
    floats), for an interpreter that starts empty: what an LLM agent types into its code."""
    def num(v: float) -> str:
        v = float(v)
        return repr(v) if np.isfinite(v) else f"float({str(v)!r})"

    rows = ", ".join("[" + ", ".join(num(v) for v in row) + "]" for row in np.asarray(X, dtype=np.float64))
    ys = ", ".join(num(v) for v in np.asarray(y, dtype=np.float64).reshape(-1))
    d = int(np.asarray(X).shape[1]) if np.asarray(X).ndim == 2 else 0
    return f"import numpy as np\nX = np.array([{rows}], dtype=float).reshape(-1, {d})\ny = np.array([{ys}], dtype=float)\n"


#: Smallest noise level the policy takes from a planner's estimate (relative).
MIN_NOISE = 1e-4


def noise_level(obs: Observation) -> float:
    """The relative noise level the policy fits to.

    0 in a noiseless lab. In a noisy one, :data:`ASSUMED_NOISE`, unless the diagnostics carry a
    noise-aware planner's estimate (``noise_estimate``, as its text says): an estimate from
    repeated measurements is used as it is, one from the best hypothesis' residuals (an upper
    estimate: an incomplete hypothesis leaves more than the noise) only where it is lower; never
    below :data:`MIN_NOISE`.
    """
    if not obs.noisy:
        return 0.0
    diag = obs.diagnostics
    est = getattr(diag, "noise_estimate", None) if diag is not None else None
    if est is None or not (est > 0 and math.isfinite(est)):
        return ASSUMED_NOISE
    if getattr(diag, "noise_basis", None) == "replicates":
        return max(MIN_NOISE, float(est))
    return max(MIN_NOISE, min(ASSUMED_NOISE, float(est)))


def is_confident(result: SearchResult, margin: int = 3, noisy: bool = False, noise: float = 0.0) -> bool:
    """Whether the best candidate explains the data and is decisively better than every rival.

    The best law (``result`` ranked by :func:`._criterion.criterion_ranked`) must be within the
    search's tolerance with ``margin`` observations beyond its parameters (noisy data: also
    :data:`NOISY_POINTS_PER_PARAM` per parameter, since a few noisy points fit many wrong laws to the
    noise level), and every other law's criterion at least :data:`._units.DECISIVE` above its
    own. Noiseless, a rival that is the best law itself (both exact, one function once their
    constants are written to :data:`._search.SCORE_DIGITS` digits (the digits the search ranks by)) is no rival.

    Args:
        result: A search result, ranked by the criterion.
        margin: Observations required beyond the best candidate's parameter count.
        noisy: The data are noisy.
        noise: The relative noise level the search fitted to (0: noiseless).
    """
    from etc_fast.policies.symbolic._criterion import DECISIVE, criterion, implied_noise

    best = result.best
    if best is None:
        return False
    if noisy:
        margin = margin + NOISY_POINTS_PER_PARAM * max(best.n_params, 1)
    if best.error > result.tol or not best.validated(margin):
        return False
    sigma = implied_noise(result, noise)
    limit = criterion(best, sigma) + DECISIVE
    for other in result.candidates[1:]:
        if criterion(other, sigma) < limit:
            if result.exact_tol <= 1e-12 and other.error <= result.exact_tol and same_law(best.expression, other.expression):
                continue  # noiseless, both exact, and one function (do*f/(do - 1*f) beside do*f/(do - f))
            return False
    return True


#: The law language's functions (their one table, :mod:`etc_fast.expr._functions`).
_FUNCTIONS = frozenset(FUNCTIONS)
_NAME = re.compile(r"[A-Za-z_][A-Za-z_0-9]*")


def budget_left(obs: Observation) -> bool:
    """Whether the measurement budget allows another measurement (no budget: always)."""
    return obs.measurements_left is None or obs.measurements_left > 0


def same_law(a: str, b: str) -> bool:
    """Whether two search expressions are one function once their constants are written to
    :data:`._search.SCORE_DIGITS` digits (the digits the search ranks by) (SymPy, the constants as exact rationals: their difference
    cancels to 0). Any text SymPy cannot read, or cannot decide, counts as a different law."""
    import sympy as sp

    names = {n for n in _NAME.findall(a + " " + b) if n not in _FUNCTIONS}
    local = {n: sp.Symbol(n) for n in names}
    local.update(sympy_functions())
    try:
        ea, eb = (sp.parse_expr(snap_literals(t, SCORE_DIGITS), local_dict=local) for t in (a, b))
        ea, eb = (e.xreplace({f: sp.Rational(str(f)) for f in e.atoms(sp.Float)}) for e in (ea, eb))
        return bool(sp.cancel(ea - eb) == 0)
    except Exception:  # noqa: BLE001 - SymPy cannot read or decide it: not shown to be the same law
        return False


def fitted_literals(source: str) -> int:
    """Numbers in a law's text that carry fitted digits: literals not simple in
    :data:`etc_fast.expr.LITERALS` (``0`` and ``p/q`` with ``q`` in 1, 2, 3, 4, 5, 10 and
    ``|p/q| <= 10``: the simple constants and exponents the search writes, ``2``, ``0.5``, ``1.2``,
    ``1/3``). Any other (``1.0239``, ``0.0462939``, ``1.04e-14``) counts; digits inside names
    (``n1``, ``I_0``) are not literals.
    """
    return fitted_numbers(source, LITERALS)


class SymbolicPolicy:
    """Offline policy: proposes committees, drafts and final laws from a symbolic search.

    The search's work is bounded by counts (``limits``), so decisions depend only on the
    observations and the seed, never on the machine's load. ``time_limit_s`` is a hard wall-clock
    limit per search: past it the search raises :class:`SearchTimeLimit`, an infrastructure failure
    that fails the trial (error kind ``search_time_limit``), never a shorter search.

    Args:
        seed: Seed of the baseline's experiment design (the search itself is deterministic).
        time_limit_s: Wall-clock limit of one search in seconds (``None``: no limit).
        committee_size: Hypotheses per committee (at most 5 are used by the protocol).
        baseline_batch: Points per baseline experiment round (``None``: 8 for d <= 2, else 4 d).
        margin: Observations beyond the parameter count needed before drafting.
        limits: Count caps of the search (``None``: :class:`SearchLimits` defaults).
        snap_exponents: On noisy data, also try the fitted exponents of the best laws at simpler
            values under the F-test that fixes constants (``SearchLimits.exponent_simplify_top``
            set to ``simplify_top``; docs/guide/offline-agent.md, "Noisy data"). Off by default.
        synthesis_snap: On noisy data, the commitment (a planner's synthesis) first re-ranks the
            search's laws with that exponent step (:meth:`_snapped`), on an equation's observations
            and on a system's derived table alike: the committed law is snapped by evidence while
            the exploration's committees keep their fitted exponents. On by default.
        memory_limit_mb: Memory a search may add to its process, in MiB (``None``: the
            default of ``SearchLimits.memory_limit_mb``, 4096); past it the trial fails with error
            kind ``memory_limit``.

    Attributes:
        last_search: The result of the latest search.
    """

    name = "symbolic"

    def __init__(self, seed: int = 0, time_limit_s: float | None = DEFAULT_TIME_LIMIT_S, committee_size: int = 5,
                 baseline_batch: int | None = None, margin: int = 3, limits: SearchLimits | None = None,
                 snap_exponents: bool = False, synthesis_snap: bool = True, memory_limit_mb: int | None = None,
                 **removed: Any) -> None:
        if "time_budget_s" in removed:
            raise ValueError("time_budget_s is gone: it silently shortened searches on a busy machine. The search "
                             "is bounded by counts (limits); time_limit_s is a wall-clock limit that fails the "
                             "trial instead (default 300 s)")
        if removed:
            raise TypeError(f"SymbolicPolicy got unexpected keyword arguments: {', '.join(sorted(removed))}")
        if time_limit_s is not None and not (isinstance(time_limit_s, (int, float)) and not isinstance(time_limit_s, bool)
                                             and time_limit_s > 0):
            raise ValueError(f"time_limit_s must be a positive number of seconds or null, got {time_limit_s!r}")
        if limits is not None and not isinstance(limits, SearchLimits):
            raise ValueError(f"limits must be a SearchLimits or None, got {type(limits).__name__}")
        if not isinstance(snap_exponents, bool):
            raise ValueError(f"snap_exponents must be true or false, got {snap_exponents!r}")
        if not isinstance(synthesis_snap, bool):
            raise ValueError(f"synthesis_snap must be true or false, got {synthesis_snap!r}")
        self.synthesis_snap = synthesis_snap
        if memory_limit_mb is not None:  # the search's memory bound (SearchLimits.memory_limit_mb)
            if not (isinstance(memory_limit_mb, int) and not isinstance(memory_limit_mb, bool)
                    and memory_limit_mb >= HEADROOM_MB):
                raise ValueError(f"memory_limit_mb must be a whole number of MiB, at least {HEADROOM_MB} (the least a "
                                 f"search starts with), got {memory_limit_mb!r}")
            limits = dataclasses.replace(limits if limits is not None else SearchLimits(), memory_limit_mb=memory_limit_mb)
        if snap_exponents:
            base = limits if limits is not None else SearchLimits()
            limits = dataclasses.replace(base, exponent_simplify_top=base.simplify_top)
        if not (isinstance(committee_size, int) and 2 <= committee_size <= 5):
            raise ValueError(f"committee_size must be an integer in 2..5, got {committee_size!r}")
        if baseline_batch is not None and not (isinstance(baseline_batch, int) and baseline_batch >= 1):
            raise ValueError(f"baseline_batch must be a positive integer or None, got {baseline_batch!r}")
        self.seed = int(seed)
        self.time_limit_s = None if time_limit_s is None else float(time_limit_s)
        self.committee_size = committee_size
        self.baseline_batch = baseline_batch
        self.margin = int(margin)
        self.limits = limits
        self._phase: str | None = None
        self._task: TaskView | None = None
        self._config: ProtocolConfig | None = None
        self._domains: list[VariableDomain] = []
        self._output_unit: str | None = None
        self._full: tuple[int, SearchResult] | None = None  # (observations, full search) of the last analysis
        # the same for a system task: (experiments, the decision the full search gave)
        self._sys_full: tuple[int, tuple[SearchResult | None, list, Action | None]] | None = None
        self._pending: int | None = None  # observations an analysis action was sent for
        self._sobol: qmc.Sobol | None = None
        self._sys_seed = 0
        self._sys_sobol: tuple | None = None
        self._sys_table: tuple | None = None
        self._sys_tables: DerivedTableCache | None = None  # the growing record's table, new rows only
        # The last system search by the exact content it read: a fresh synthesis session reads the
        # same records as the exploration's last turn, and the search (deterministic in its inputs)
        # is not paid twice. Kept across begin(): the key holds everything the search depends on.
        self._sys_memo: tuple[str, tuple[SearchResult | None, list]] | None = None
        self.last_search: SearchResult | None = None
        # Full searches of the current trial, re-used across turns and phases where a new search
        # cannot change the answer (_incremental.py); a new trial (task or seed) starts afresh.
        self._engine = IncrementalSearch()
        self._engine_key: tuple | None = None
        # The simulator scans of the current trial, by scan: their forms, re-scored on new records
        # and scanned again only where the best of them stops explaining the records (_simscan.KeptScans).
        self._scans = KeptScans()

    # -- protocol ------------------------------------------------------------------------
    def begin(self, phase: str, task: TaskView, config: ProtocolConfig, seed: int) -> None:
        engine_key = (int(seed), repr(task.variables), repr(getattr(task, "output_description", "")))
        if engine_key != self._engine_key:
            self._engine, self._engine_key = IncrementalSearch(), engine_key
            self._scans = KeptScans()
        self._phase = phase
        self._task = task
        self._config = config
        self._domains = [VariableDomain.from_mapping(v) for v in task.variables]
        self._full = None
        self._sys_full = None
        self._pending = None
        self._proposed: dict[str, str] = {}  # committee expression -> its structure (constants as C)
        self._committee_n: int | None = None  # observations when the last committee was proposed
        self._committee_best: str | None = None  # the structure of the best law then
        self._output_unit = angle_unit_of(str(getattr(task, "output_description", "") or ""), 0.0, 0.0)
        sobol_seed = int(np.random.SeedSequence([self.seed, int(seed)]).generate_state(1, dtype=np.uint32)[0])
        self._sobol = qmc.Sobol(d=len(self._domains), scramble=True, seed=sobol_seed)
        self._sys_seed = sobol_seed
        self._sys_sobol = None
        self._sys_table = None
        self._sys_tables = None
        self.last_search = None

    def act(self, obs: Observation) -> Action:
        if self._task is None:
            raise RuntimeError("SymbolicPolicy.act called before begin()")
        self.last_search = None
        if getattr(obs, "system", None) is not None:
            action = self._system_act(obs)
        elif obs.phase == "explore":
            action = self._explore(obs)
        elif obs.phase == "synthesis":
            action = self._synthesis(obs)
        elif obs.phase in ("baseline", "final"):
            action = self._baseline(obs)
        else:
            raise ValueError(f"SymbolicPolicy: unknown phase {obs.phase!r}")
        return action

    # -- helpers -------------------------------------------------------------------------
    def _search(self, obs: Observation, full: bool) -> SearchResult:
        hint = None
        if not full and obs.diagnostics is not None and obs.diagnostics.exponents:
            ex = obs.diagnostics.exponents
            hint = [float(ex.get(d.name) or 0.0) for d in self._domains]
        if full:
            res = self._engine.search(obs.X, obs.y, self._domains, noise=noise_level(obs), time_limit_s=self.time_limit_s,
                                      limits=self.limits, output_unit=self._output_unit,
                                      monomials_only=self._monomials_suffice(obs))
        else:
            res = search(obs.X, obs.y, self._domains, noise=noise_level(obs), time_limit_s=self.time_limit_s,
                         mode="diagnostic", exponent_hint=hint, limits=self.limits, output_unit=self._output_unit)
        res = self.last_search = criterion_ranked(res, noise_level(obs))
        return res

    def _monomials_suffice(self, obs: Observation) -> bool:
        """An exploration turn that more measurements can follow, on a noiseless table too small to
        validate a law with two constants (``margin + 2`` finite outputs): only the one-constant
        families (monomials) are fitted. A search whose best law may be submitted (the last turn, a
        spent budget, a synthesis, a baseline) fits the whole grammar (docs/guide/offline-agent.md)."""
        return (not obs.noisy and obs.phase == "explore" and obs.turns_left > 0 and budget_left(obs)
                and int(np.isfinite(obs.y).sum()) < self.margin + 2)

    def _committee(self, res: SearchResult, stalled: bool = False) -> tuple[str, ...]:
        """Up to ``committee_size`` well-fitting laws, at most two per family first. ``stalled``: the
        last committee brought no new records (its laws agreed, or were undefined, wherever the
        planner could measure), so the product and the sum of the inputs, defined and different
        almost everywhere, take the last places: the committee then disagrees where a reading can
        tell laws apart, and drafting keeps its evidence rule instead of waiting for the last turn."""
        cands = list(res.candidates)
        good = [c for c in cands if c.error <= 0.75]
        pool = good if len(good) >= 2 else cands
        chosen: list[Candidate] = []
        per_family: dict[str, int] = {}
        for c in pool:
            if len(chosen) >= self.committee_size:
                break
            if per_family.get(c.family, 0) < 2:
                chosen.append(c)
                per_family[c.family] = per_family.get(c.family, 0) + 1
        for c in pool:
            if len(chosen) >= self.committee_size:
                break
            if c not in chosen:
                chosen.append(c)
        hyps = [c.expression for c in chosen]
        names = [d.name for d in self._domains]
        fillers = [" * ".join(names), " + ".join(names)]
        if stalled:
            hyps = hyps[:max(self.committee_size - 2, 1)] + [f for f in fillers if f not in hyps]
        for f in fillers:  # a committee needs two hypotheses even when the search found fewer
            if len(hyps) >= 2:
                break
            if f not in hyps:
                hyps.append(f)
        return tuple(hyps)

    # -- the analysis turn (interpreter variants) ---------------------------------------------
    def _analysed(self, obs: Observation) -> SearchResult | None:
        """The full grammar search of the current observations, if an analysis turn paid for it.

        The full search is the agent's analysis: it becomes available only on the decision right
        after an ``analysis`` action sent for exactly these observations (the sandbox's reply is
        the feedback), and it stays available while no new observation arrives.
        """
        n = int(obs.y.size)
        if self._full is not None and self._full[0] == n:
            return self._full[1]
        if obs.interpreter and obs.feedback_kind == "analysis" and self._pending == n:
            self._pending = None
            res = self._search(obs, True)
            self._full = (n, res)
            return res
        return None

    def _analysis_action(self, obs: Observation) -> Action:
        self._pending = int(obs.y.size)
        code = ANALYSIS_CODE
        if obs.interpreter_data == "empty":  # NewtonBench's interpreter: the code carries its numbers
            code = with_data_literals(obs.X, obs.y) + code
        return Action(kind="analysis", code=code,
                      raw=f"analysis of {obs.y.size} observations (the grammar search runs on them next turn)")

    def _decision_search(self, obs: Observation, can_analyse: bool) -> tuple[SearchResult | None, Action | None]:
        """The search to decide on now, or an analysis action to send first.

        Without an interpreter: the diagnostic search. With one: the analysed full search when
        this turn follows an analysis of the same observations; otherwise the diagnostic search
        when it is already confident, else an analysis action when ``can_analyse``, else the
        diagnostic search (the agent decides without its analysis).
        """
        if not obs.interpreter:
            return self._search(obs, False), None
        res = self._analysed(obs)
        if res is not None:
            self.last_search = res
            return res, None
        cheap = self._search(obs, False)
        if is_confident(cheap, self.margin, noisy=obs.noisy, noise=noise_level(obs)) or not can_analyse:
            return cheap, None
        return None, self._analysis_action(obs)

    def _explore(self, obs: Observation) -> Action:
        res, ask = self._decision_search(obs, "analysis" in obs.allowed and obs.turns_left > 0)
        if ask is not None:
            return ask
        best = res.best
        # drafting needs evidence the law did not see (it predicted readings it was not fitted to),
        # then the plain margin and a decisive criterion gap to every rival (docs/guide/model-selection.md)
        early = (best is not None and (self._predicted(obs, best) or self._own_predicted(obs, best))
                 and is_confident(res, self.margin, noise=noise_level(obs)))
        if "draft" in obs.allowed and best is not None and (early or obs.turns_left == 0):
            return Action(kind="draft", source=best.source, raw=f"draft: {best.expression} (error {best.error:.2e})")
        hyps = self._committee(res, stalled=self._committee_n == int(obs.y.size))
        self._committee_n = int(obs.y.size)
        self._committee_best = best.structure if best is not None else None
        self._proposed.update((c.expression, c.structure) for c in res.candidates if c.expression in hyps)
        return Action(kind="committee", hypotheses=hyps, raw=f"committee of {len(hyps)} from {res.families_tried[-1:] or '()'}")

    def _own_predicted(self, obs: Observation, best: Candidate) -> bool:
        """``best``, its constants fitted to the records before the last committee's batch, predicts
        that batch within the noise the records imply (:func:`._criterion.predicts_unseen`).

        Under noise the law's structure must also be the one the agent ranked best before the batch
        was measured: many structures fit a few noisy readings within the noise, so a structure
        chosen with the batch in view would pass by selection. Noiseless, a structure's constants
        fixed on the earlier records leave it nothing to fit the batch's exact values with.
        """
        from etc_fast.expr import ExprError, parse

        n_prev = self._committee_n
        if n_prev is None or n_prev >= obs.y.size or (obs.noisy and best.structure != self._committee_best):
            return False
        fin = np.isfinite(obs.y)
        old, new = fin.copy(), fin.copy()
        old[n_prev:] = False
        new[:n_prev] = False
        if obs.noisy and int(old.sum()) < best.n_params + self.margin:
            return False  # noisy: the earlier records must validate the law on their own
        try:
            prog = parse(best.expression, [d.name for d in self._domains])
        except ExprError:
            return False
        sigma = implied_noise(self.last_search, noise_level(obs)) if self.last_search is not None else noise_level(obs)
        return predicts_unseen(prog, obs.X[old], obs.y[old], obs.X[new], obs.y[new], sigma)

    def _predicted(self, obs: Observation, best: Candidate) -> bool:
        """The planner reports that a law of ``best``'s structure, proposed by this policy, predicted
        the last batch before it was measured to within the noise (``Diagnostics.prediction``)."""
        pred = getattr(obs.diagnostics, "prediction", None)
        return bool(pred is not None and pred[3] and self._proposed.get(pred[0]) == best.structure)

    def _draft_error(self, draft: str, obs: Observation) -> float:
        """Relative RMS error of the draft on the observations after refitting its constants."""
        from etc_fast.expr import ExprError, parse

        names = [d.name for d in self._domains]
        try:
            prog = parse(draft, names)
        except ExprError:
            return math.inf
        fin = np.isfinite(obs.y)
        if not fin.any():
            return math.inf
        pred = refit_constants(prog, obs.X[fin], obs.y[fin])
        r = relative_errors(pred, obs.y[fin])
        return float(np.sqrt(np.mean(r * r)))

    def _synthesis(self, obs: Observation) -> Action:
        res, ask = self._decision_search(obs, "analysis" in obs.allowed and obs.turns_left > 0)
        if ask is not None:
            return ask
        if obs.noisy and self.synthesis_snap:
            res = self.last_search = self._snapped(res, obs.X, obs.y, noise_level(obs))
            res = self.last_search = criterion_ranked(res, noise_level(obs))
        best = res.best
        if obs.draft:
            derr = self._draft_error(obs.draft, obs)
            simpler = (obs.noisy and best is not None and best.error <= res.tol
                       and fitted_literals(best.source) < fitted_literals(obs.draft))
            if simpler:  # noisy: both explain the records; the law that needs fewer fitted numbers
                return Action(kind="final", source=best.source,
                              raw=f"final: {best.expression} (error {best.error:.2e}; fewer fitted numbers than "
                                  f"the draft, error {derr:.2e})")
            if derr <= res.tol or best is None or best.error >= derr:
                return Action(kind="final", source=obs.draft, raw=f"draft kept (error {derr:.2e})")
        if best is None:
            names = [d.name for d in self._domains]
            src = f"def discovered_law({', '.join(names)}):\n    return {' * '.join(names)}\n"
            return Action(kind="final", source=src, raw="no candidate found; product of inputs submitted")
        return Action(kind="final", source=best.source, raw=f"final: {best.expression} (error {best.error:.2e})")

    def _snapped(self, res: SearchResult, X: np.ndarray, y: np.ndarray, noise: float) -> SearchResult:
        """``res``'s laws re-ranked on ``X, y`` with the exponent step of ``snap_exponents``.

        Each fitted exponent of the best laws is tried at simpler values and kept simpler where the
        constants' F-test does not reject it (:func:`._simplify.simplify_exponents`). Done once, at
        the commitment (the equation tier's observations, a system's derived table): the
        exploration's committees keep the fitted exponents, so the measurements a trial takes do
        not depend on this knob.
        """
        lim = self.limits if self.limits is not None else SearchLimits()
        if lim.exponent_simplify_top or not res.forms:
            return res  # every search already took the step (snap_exponents), or nothing to re-rank
        lim = dataclasses.replace(lim, exponent_simplify_top=lim.simplify_top)
        return refit_result(res, X, y, self._domains, noise=noise, limits=lim, simplify_alpha=SIMPLIFY_ALPHA,
                            exponent_alpha=SIMPLIFY_ALPHA)  # the searches' own level

    def _baseline_batch(self) -> int:
        d = len(self._domains)
        return self.baseline_batch if self.baseline_batch is not None else (8 if d <= 2 else 4 * d)

    def _points(self, n: int) -> tuple[dict, ...]:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            U = self._sobol.random(n)
        pts = []
        for u in U:
            p = {}
            for k, (dom, var) in enumerate(zip(self._domains, self._task.variables)):
                if dom.scale == "log" and dom.low > 0:
                    x = math.exp(math.log(dom.low) + u[k] * (math.log(dom.high) - math.log(dom.low)))
                else:
                    x = dom.low + u[k] * (dom.high - dom.low)
                p[str(var.get("key", dom.name))] = float(x)
            pts.append(p)
        return tuple(pts)

    def _baseline(self, obs: Observation) -> Action:
        left = obs.measurements_left
        can_measure = "experiment" in obs.allowed and budget_left(obs)
        res = None
        if obs.y.size:
            res, ask = self._decision_search(obs, "analysis" in obs.allowed)
            if ask is not None:
                return ask
        best = res.best if res is not None else None
        if best is not None and (not can_measure or is_confident(res, self.margin, noisy=obs.noisy, noise=noise_level(obs)) or "final" in obs.allowed and obs.turns_left == 0 and obs.phase == "final"):
            return Action(kind="final", source=best.source, raw=f"final: {best.expression} (error {best.error:.2e})")
        if can_measure:
            n = self._baseline_batch() if left is None else min(self._baseline_batch(), left)
            return Action(kind="experiment", points=self._points(n), raw=f"{n} space-filling points")
        names = [d.name for d in self._domains]
        src = f"def discovered_law({', '.join(names)}):\n    return {' * '.join(names)}\n"
        return Action(kind="final", source=src, raw="no observations; product of inputs submitted")

    # -- simulated systems (etc_fast.policies.symbolic._systems) ---------------------------
    def _system_search(self, obs: Observation, full: bool) -> tuple[SearchResult | None, list]:
        """Search on the derived law table; with ``full``, also fit and rank through the forward model.

        Returns the search result and the ranked laws ``(expression, error, complexity, floor)``,
        best first: errors on the table (``full`` off) or the records' relative rms misfit.
        """
        from etc_fast.systems import DerivedTableCache, record_times

        so = obs.system
        if not so.requests:
            return None, []
        if so.derived is not None:
            table = so.derived
        else:
            if self._sys_table is None or self._sys_table[0] != len(so.requests):
                if self._sys_tables is None:
                    self._sys_tables = DerivedTableCache()
                times = record_times(so.module, so.system, list(so.outputs))
                self._sys_table = (len(so.requests), self._sys_tables.table(so.module, so.system, list(so.requests), so.series, times))
            table = self._sys_table[1]
        # the commitment of a noisy trial re-ranks with simpler exponents (synthesis_snap, _snapped)
        snap = bool(obs.noisy and self.synthesis_snap and obs.phase == "synthesis")
        key = _system_search_key(full, obs.noisy, self._output_unit, self._domains, so, table, snap)
        if self._sys_memo is not None and self._sys_memo[0] == key:
            self.last_search = self._sys_memo[1][0]
            return self._sys_memo[1][0], list(self._sys_memo[1][1])
        res, ranked = self._system_search_on(obs, table, full, snap)
        self._sys_memo = (key, (res, list(ranked)))
        return res, ranked

    def _system_search_on(self, obs: Observation, table: Any, full: bool,
                          snap: bool = False) -> tuple[SearchResult | None, list]:
        from etc_fast.policies.symbolic._search import COMPLEXITY_WEIGHT, SCORE_DIGITS
        from etc_fast.policies.symbolic._simscan import SCAN_ABOVE, exp_scan, monomial_scan
        from etc_fast.policies.symbolic._systems import power_law_candidates, simulated_rank, table_noise, usable_rows

        rows = usable_rows(table, len(self._domains))
        names = tuple(d.name for d in self._domains)
        res: SearchResult | None = None
        ranked: list = []
        if rows.sum() < 2 and not full:
            return None, []
        if rows.sum() >= 2:  # a table to search on (an apparatus that calls the law twice may leave none)
            noise = table_noise(table, rows, obs.noisy, ASSUMED_NOISE)
            if full:
                # the table's noise level is the readings' precision: an apparatus that draws its own
                # random numbers (m11's loss) scatters the records beyond it, so a kept law is held
                # to its own scatter by the prediction test (_incremental.IncrementalSearch, scatter)
                res = self._engine.search(table.X[rows], table.y[rows], self._domains, noise=noise,
                                          time_limit_s=self.time_limit_s, limits=self.limits, output_unit=self._output_unit,
                                          scatter=True)
            else:
                res = search(table.X[rows], table.y[rows], self._domains, noise=noise, time_limit_s=self.time_limit_s,
                             mode="diagnostic", limits=self.limits, output_unit=self._output_unit)
            if snap:
                res = self._snapped(res, table.X[rows], table.y[rows], noise)
            self.last_search = res
        if full:
            floor = ASSUMED_NOISE if obs.noisy else 1e-6
            if res is not None:
                ranked = [(text, rms, cand.complexity, floor)
                          for cand, text, rms in simulated_rank(res, obs, names, limits=self.limits)]
                ranked += [(e, r, c, floor) for e, r, c in power_law_candidates(obs, table, rows)]
            # where nothing read from the table explains the records, the simulator is asked
            # directly: monomial forms first, then exponential ones (docs/guide/offline-agent.md)
            scans = (("monomial", lambda: monomial_scan(obs, self._domains, self._output_unit, self.limits)),
                     ("exp", lambda: exp_scan(obs, self._domains, self.limits)))
            for name, scan in scans:
                if min((r for _, r, _, _ in ranked), default=math.inf) <= SCAN_ABOVE * floor:
                    break
                ranked += [(e, r, c, floor) for e, r, c in self._scans.forms(name, obs, self._domains, scan)]
        elif res is not None:
            ranked = [(c.expression, c.error, c.complexity, res.tol) for c in res.candidates]
        # scores snapped as the search ranks them (SCORE_DIGITS), ties in the order found
        ranked.sort(key=lambda t: round(math.log10(max(t[1], t[3], 1e-300)) + COMPLEXITY_WEIGHT * t[2], SCORE_DIGITS))
        return res, ranked

    def _system_decision(self, obs: Observation, can_analyse: bool) -> tuple[SearchResult | None, list, Action | None]:
        if not obs.interpreter:
            res, ranked = self._system_search(obs, False)
            return res, ranked, None
        n = len(obs.system.requests)
        if self._sys_full is not None and self._sys_full[0] == n:
            return self._sys_full[1]
        if obs.feedback_kind == "analysis" and self._pending == n:
            self._pending = None
            res, ranked = self._system_search(obs, True)
            self._sys_full = (n, (res, ranked, None))
            return res, ranked, None
        if can_analyse:
            from etc_fast.policies.symbolic._systems import SYSTEM_ANALYSIS_CODE

            self._pending = n
            return None, [], Action(kind="analysis", code=SYSTEM_ANALYSIS_CODE,
                                    raw=f"analysis of {n} experiments (law-sample table, search, simulation next turn)")
        res, ranked = self._system_search(obs, False)
        return res, ranked, None

    def _system_law(self, ranked: list) -> tuple[tuple[str, float] | None, str]:
        """The best ranked law the expression language can write, as ``(text, records misfit)``."""
        from etc_fast.expr import parse

        names = [d.name for d in self._domains]
        for text, err, _, _ in ranked:
            try:
                parse(snap_literals(text), names)
            except ValueError:  # noqa: S112 - an expression the language cannot write (ExprError) is skipped
                continue
            return (text, err), f"{text} (error {err:.2e})"
        return None, ""

    def _system_source(self, obs: Observation, law: tuple[str, float]) -> str:
        """The submitted source of ``law``: its literals to the digits the records determine, in
        one canonical text (built only for a law that is sent: it costs a forward-model call)."""
        from etc_fast.policies.symbolic._systems import evidenced_literals

        names = [d.name for d in self._domains]
        text, err = law
        return system_source(evidenced_literals(text, names, obs.system, err, self.limits), names)

    def _system_confident(self, res: SearchResult | None, ranked: list, n: int) -> bool:
        """The best law explains the data to its floor and no simpler rival comes close."""
        if not ranked:
            return False
        _, err, cx, floor = ranked[0]
        if err > 3 * floor or n < self.margin + 3:
            return False
        return not any(e <= 100 * max(err, floor) and c < cx - 0.5 for _, e, c, _ in ranked[1:])

    def _system_committee(self, ranked: list, res: SearchResult | None) -> tuple[str, ...]:
        names = [d.name for d in self._domains]
        hyps: list[str] = []
        for text, *_ in ranked:
            if text not in hyps:
                hyps.append(text)
            if len(hyps) >= self.committee_size:
                break
        for f in (" * ".join(names), " + ".join(names)):
            if len(hyps) >= 2:
                break
            if f not in hyps:
                hyps.append(f)
        return tuple(hyps)

    def _system_points(self, obs: Observation, n: int) -> tuple[dict, ...]:
        from etc_fast._portable import linear_uniform, log_uniform

        sp = obs.system.spec
        varied = sp.pool_controls
        if self._sys_sobol is None or self._sys_sobol[0] != len(varied):
            self._sys_sobol = (len(varied), qmc.Sobol(d=max(1, len(varied)), scramble=True, seed=self._sys_seed))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", UserWarning)
            U = self._sys_sobol[1].random(n)
        pts = []
        for u in U:
            p = {}
            for j, c in enumerate(varied):
                arr = np.array([u[j]])
                v = c.low if c.high == c.low else (log_uniform(arr, c.low, c.high) if c.scale == "log" else linear_uniform(arr, c.low, c.high))[0]
                p[c.key] = float(v)
            for c in sp.controls:  # the others at the pool's value, as the spec types it (a count stays an int)
                if c.key not in p and c.pool_value is not None:
                    p[c.key] = c.pool_value
            pts.append(p)
        return tuple(pts)

    def _system_act(self, obs: Observation) -> Action:
        names = [d.name for d in self._domains]
        fallback = f"def discovered_law({', '.join(names)}):\n    return {' * '.join(names)}\n"
        if obs.phase == "explore":
            res, ranked, ask = self._system_decision(obs, "analysis" in obs.allowed and obs.turns_left > 0)
            if ask is not None:
                return ask
            law, why = self._system_law(ranked)
            if law is not None and (self._system_confident(res, ranked, len(obs.system.requests)) and not obs.noisy or obs.turns_left == 0):
                return Action(kind="draft", source=self._system_source(obs, law), raw=f"draft: {why}")
            hyps = self._system_committee(ranked, res)
            return Action(kind="committee", hypotheses=hyps, raw=f"committee of {len(hyps)}")
        if obs.phase == "synthesis":
            res, ranked, ask = self._system_decision(obs, "analysis" in obs.allowed and obs.turns_left > 0)
            if ask is not None:
                return ask
            law, why = self._system_law(ranked)
            if law is not None:
                return Action(kind="final", source=self._system_source(obs, law), raw=f"final: {why}")
            src, why = (obs.draft, "draft kept") if obs.draft else (fallback, "no candidate; product of inputs")
            return Action(kind="final", source=src, raw=f"final: {why}")
        # baseline / final
        left = obs.measurements_left
        can_measure = "experiment" in obs.allowed and budget_left(obs)
        res, ranked = None, []
        if obs.system.requests:
            res, ranked, ask = self._system_decision(obs, "analysis" in obs.allowed)
            if ask is not None:
                return ask
        law, why = self._system_law(ranked)
        if law is not None and (not can_measure or self._system_confident(res, ranked, len(obs.system.requests))):
            return Action(kind="final", source=self._system_source(obs, law), raw=f"final: {why}")
        if can_measure:
            k = len(obs.system.spec.pool_controls)
            n = self.baseline_batch if self.baseline_batch is not None else (8 if k <= 2 else 4 * k)
            n = n if left is None else min(n, left)
            return Action(kind="experiment", points=self._system_points(obs, n), raw=f"{n} space-filling experiments")
        return Action(kind="final", source=fallback, raw="no observations; product of inputs submitted")


def snap_literals(text: str, digits: int = LAW_DIGITS) -> str:
    """``text`` with every numeric literal written to ``digits`` significant digits (as the
    equation tier writes its fitted constants): a submitted system law then carries no digits
    that only a CPU's last bits chose."""
    return LITERAL.sub(lambda m: format(float(m.group(0)), f".{digits}g"), text)


def system_source(text: str, names: list[str], digits: int = LAW_DIGITS) -> str:
    """The submitted source of a system law: its literals written to ``digits``, then in
    one canonical form (SymPy's ordering of sums and products, unit factors dropped), so one law
    reached by two families (``1/(exp(s) + 1)`` and ``1/(1 + 1*exp(s))``) has one text. A law the
    canonical form cannot carry back into the expression language is written as it is.
    """
    import sympy as sp

    from etc_fast.expr import parse

    snapped = snap_literals(text, digits)
    plain = parse(snapped, names)
    try:
        expr = sp.sympify(snapped, locals={n: sp.Symbol(n) for n in names})
        # SymPy's own constants (E, pi, I, zoo) would read back as free nuisance constants
        if expr.atoms(sp.NumberSymbol) or expr.has(sp.I, sp.zoo, sp.oo, -sp.oo, sp.nan):
            return plain.to_source()
        canon = parse(snap_literals(str(expr), digits), names)
    except Exception:  # noqa: BLE001 - SymPy's text that the language cannot read: the law as written
        return plain.to_source()
    if {n for n in canon.const_names if n} != {n for n in plain.const_names if n}:
        return plain.to_source()
    return canon.to_source()


def _system_search_key(full: bool, noisy: bool, output_unit: str | None, domains: list[VariableDomain], so: Any,
                       table: Any, snap: bool = False) -> str:
    """SHA-256 of everything a system search reads: the mode, the noise flag, the output unit, the
    variable domains, the records (requests and series), the derived table, and whether the
    commitment's exponent step runs (``snap``)."""
    import hashlib
    import json

    h = hashlib.sha256()
    h.update(json.dumps([full, noisy, output_unit, [repr(d) for d in domains], list(so.requests), snap], sort_keys=True,
                        default=repr).encode())
    return array_digest(so.series, table.X, table.y, table.misfit, table.sigma, h=h)
