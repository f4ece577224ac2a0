"""The offline agent's search state across turns: search again only when it can change the answer.

A planner or baseline trial asks for a full grammar search after every batch, on a table that only
grows. :class:`IncrementalSearch` keeps the last full search and, for a new call, decides:

1. **The same observations** (every input the search reads is equal): the previous result is
   returned as it is (the search is deterministic in its inputs, so a second run would give it).
2. **The previous observations extended by new rows**, and all of the following hold:

   * the same mode, noise regime (noiseless or noisy), domains, output unit and limits;
   * the families in play cannot change: the outer transforms valid on the outputs and the
     binomial atoms the data suggest are the same (:func:`._search.family_signature`);
   * the previous best law *explained* the records (:func:`explains`): noiseless, a validated fit
     within the exact-fit tolerance (:attr:`._search.SearchResult.explained`); noisy, a validated
     fit within the search's noise tolerance (``SearchResult.tol``, three times the noise level);
   * **the prediction test**: that law, with the constants fitted before the new rows were
     measured, predicts them. Noiseless: the new rows' relative RMS error is within the exact-fit
     tolerance. Noisy: an F-test of the new rows' mean squared relative error against the law's own
     in-sample residual variance, ``(SSR_new / m) / (SSR_old / (n - p)) <= F_0.99(m, n - p)``
     (a prediction that fails it means the law stopped explaining the records);
   * after refitting, the best law has the same structure and still explains all the rows;
   * with ``scatter`` (the system tier: a derived table's stated noise is the readings' precision,
     which an apparatus drawing its own random numbers exceeds), "explains" on noisy records means
     only a validated law with residual degrees of freedom: the prediction test alone then decides
     whether the law still explains the records as well as it did;

   then the previous candidates are refitted (warm-started) and re-ranked on all rows
   (:func:`._search.refit_result`) instead of searching again.
3. Otherwise a full search runs, and its result becomes the state.

Each rule is a count or a statistical test on the inputs, so the outcome depends only on the
trial's observations, never on timing. docs/guide/offline-agent.md ("Bounds and knobs") states
where an incremental result can differ from a search from scratch on the same rows.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

import numpy as np
from scipy.stats import f as f_dist

from etc_fast.policies.symbolic._forms import predict
from etc_fast.policies.symbolic._grammar import VariableDomain
from etc_fast.policies.symbolic._search import (
    SearchLimits,
    SearchResult,
    array_digest,
    family_signature,
    refit_result,
    relative_errors,
    search,
)
from etc_fast.policies.symbolic._units import ALPHA

__all__ = ["IncrementalSearch", "array_digest", "explains", "prediction_holds"]

#: Significance level of the noisy prediction test (the new rows' errors against the law's own): the
#: agent's one level, :data:`._units.ALPHA`.
PREDICTION_ALPHA = ALPHA


@dataclasses.dataclass
class _State:
    key: tuple
    X: np.ndarray
    y: np.ndarray
    noise: float
    result: SearchResult
    digest: str
    signature: tuple | None = None  # family_signature of X, y, computed when first needed


def explains(result: SearchResult, noisy: bool, scatter: bool = False) -> bool:
    """Whether ``result``'s best law explains its records (noiseless: exactly; noisy: to the noise).

    With ``scatter``, on noisy records any validated best law counts, whatever its error: the
    prediction test then holds new rows to the law's own scatter (:class:`IncrementalSearch`).
    """
    best = result.best
    if best is None:
        return False
    if not noisy:
        return result.explained
    return bool(best.validated(3) and (scatter or best.error <= result.tol))


def prediction_holds(result: SearchResult, X_new: np.ndarray, y_new: np.ndarray, noisy: bool) -> bool:
    """Whether ``result``'s best law, constants as fitted, predicts the new rows ``X_new, y_new``.

    Noiseless: their relative RMS error is within the result's exact-fit tolerance. Noisy: the
    F-test of the module docstring at :data:`PREDICTION_ALPHA`.
    """
    if not result.forms or not result.candidates:
        return False
    form, best = result.forms[0], result.candidates[0]
    fin = np.isfinite(y_new)
    if not fin.any():
        return True  # nothing measurable was added
    A = np.column_stack([a.values(X_new[fin]) for a in form.atoms]) if form.atoms else np.empty((int(fin.sum()), 0))
    with np.errstate(all="ignore"):
        y_hat = predict(form, A, [float(v) for v in form.params])
    r = relative_errors(y_hat, y_new[fin])
    m = int(r.size)
    ms_new = float(np.mean(r * r))
    if not noisy:
        return bool(np.sqrt(ms_new) <= result.tol)
    dof = best.n_used - best.n_params
    if dof < 1:
        return False
    ms_old = max(best.error, 1e-12) ** 2 * best.n_used / dof
    return bool(ms_new / ms_old <= float(f_dist.ppf(1.0 - PREDICTION_ALPHA, m, dof)))


class IncrementalSearch:
    """Full grammar searches of one trial, re-used where a new search cannot change the answer.

    Attributes:
        counts: How each call was answered: ``"search"`` (a full search), ``"same"`` (the same
            observations as the last call) and ``"refit"`` (the last search's candidates refitted
            on the extended observations).
    """

    def __init__(self) -> None:
        self._state: _State | None = None
        self.counts = {"search": 0, "same": 0, "refit": 0}

    def search(self, X: np.ndarray, y: np.ndarray, domains: Sequence[VariableDomain], *, noise: float = 0.0,
               time_limit_s: float | None = None, limits: SearchLimits | None = None,
               output_unit: str | None = None, max_candidates: int = 30, scatter: bool = False,
               monomials_only: bool = False) -> SearchResult:
        """A full-mode :func:`._search.search` of ``X, y``, or the state refitted (module docstring).

        ``scatter``: noisy records whose best law misfits them beyond the stated noise (a system's
        table, whose noise level is the readings' precision, from an apparatus that draws its own
        random numbers) are kept by the prediction test alone (:func:`explains`)."""
        X = np.ascontiguousarray(X, dtype=np.float64)
        y = np.ascontiguousarray(y, dtype=np.float64).reshape(-1)
        key = (noise > 0, tuple(repr(d) for d in domains), output_unit, limits, max_candidates, monomials_only)
        st = self._state
        if st is not None and st.key == key and X.shape[1] == st.X.shape[1]:
            n_old = st.y.size
            if y.size == n_old and noise == st.noise and array_digest(X, y) == st.digest:
                self.counts["same"] += 1
                return st.result
            if (y.size > n_old and explains(st.result, noise > 0, scatter)
                    and array_digest(X[:n_old], y[:n_old]) == st.digest
                    and prediction_holds(st.result, X[n_old:], y[n_old:], noise > 0)):
                if st.signature is None:
                    st.signature = family_signature(st.X, st.y, domains, output_unit)
                signature = family_signature(X, y, domains, output_unit)
                if signature == st.signature:
                    res = refit_result(st.result, X, y, domains, noise=noise, max_candidates=max_candidates,
                                       limits=limits)
                    if explains(res, noise > 0, scatter) and \
                            res.candidates[0].structure == st.result.candidates[0].structure:
                        self.counts["refit"] += 1
                        self._state = _State(key, X.copy(), y.copy(), noise, res, array_digest(X, y), signature)
                        return res
        res = search(X, y, domains, noise=noise, time_limit_s=time_limit_s, mode="full", limits=limits,
                     output_unit=output_unit, max_candidates=max_candidates, monomials_only=monomials_only)
        self.counts["search"] += 1
        self._state = _State(key, X.copy(), y.copy(), noise, res, array_digest(X, y))
        return res
