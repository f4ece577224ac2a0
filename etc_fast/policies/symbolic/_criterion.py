"""The agent's one model-selection criterion and its out-of-sample test (docs/guide/model-selection.md).

Every decision of the symbolic agent ranks laws the same way: the committee it proposes while
exploring, whether it drafts, the law a synthesis commits to, and a baseline's final law. For a law
with relative RMS error ``e`` on ``n`` records, ``k`` fitted numbers and description complexity
``cx``, against a relative noise level ``sigma``::

    Q = n e^2 / (2 ln10 sigma^2) + k / ln10 + COMPLEXITY_WEIGHT * cx        (log10 units, lower is better)

The first term is the Gaussian negative log-likelihood of the relative residuals (up to a term that is
the same for every law), the second Akaike's cost of one unit of log-likelihood per fitted number,
the third the search's prior on the form (its description length). ``sigma`` is the noise the
records imply: the larger of the lab's noise level (assumed or estimated; noiseless: the search's
exact-fit floor) and the residual standard deviation of the search's best law, ``e sqrt(n/(n - p))``
(an honest upper estimate once that law leaves residual degrees of freedom).

A law is preferred to another *decisively* when its ``Q`` is lower by :data:`DECISIVE`, one decade
of likelihood ratio. The drafting rule needs that gap to every rival, and evidence the law did not
see (:func:`predicts_unseen`).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from etc_fast.expr import LITERALS, fitted_numbers
from etc_fast.policies.symbolic._search import Candidate, SearchResult, relative_errors
from etc_fast.policies.symbolic._units import (
    ALPHA,
    ASSUMED_NOISE,
    COMPLEXITY_WEIGHT,
    DECISIVE,
    DECISIVE_RATIO,
    EXACT_DIGITS,
    EXACT_FLOOR,
)

__all__ = ["ALPHA", "ASSUMED_NOISE", "COMPLEXITY_WEIGHT", "DECISIVE", "DECISIVE_RATIO", "EXACT_DIGITS",
           "EXACT_FLOOR", "implied_noise", "criterion", "criterion_ranked", "predicts_unseen"]

def implied_noise(res: SearchResult, noise: float) -> float:
    """The relative noise the records imply: ``max(noise, s)``, ``noise`` the lab's level (0 in a
    noiseless lab, then the search's exact-fit floor ``res.exact_tol``) and ``s`` the residual
    standard deviation of the search's best law where it leaves at least one residual degree of
    freedom (an incomplete law leaves more than the noise, so ``s`` is an upper estimate)."""
    floor = max(float(noise), float(res.exact_tol))
    best = res.best
    if best is None or not math.isfinite(best.error) or best.n_used <= best.n_params:
        return floor
    return max(floor, best.error * math.sqrt(best.n_used / (best.n_used - best.n_params)))


def criterion(c: Candidate, sigma: float) -> float:
    """``Q`` of law ``c`` against relative noise ``sigma`` (lower is better; module docstring)."""
    if not math.isfinite(c.error):
        return math.inf
    k = fitted_numbers(c.expression, LITERALS)
    return c.n_used * c.error ** 2 / (2.0 * math.log(10.0) * sigma * sigma) + k / math.log(10.0) \
        + COMPLEXITY_WEIGHT * c.complexity


def criterion_ranked(res: SearchResult, noise: float) -> SearchResult:
    """``res`` with its laws ordered by :func:`criterion` against :func:`implied_noise` (stable: ties,
    to 9 decimals, keep the search's order; ``forms`` follow their laws)."""
    cands = res.candidates
    if len(cands) < 2:
        return res
    sigma = implied_noise(res, noise)
    q = [round(criterion(c, sigma), 9) for c in cands]
    order = sorted(range(len(cands)), key=lambda i: (q[i], i))
    if order == list(range(len(cands))):
        return res
    forms = tuple(res.forms[i] for i in order) if len(res.forms) == len(cands) else res.forms
    return dataclasses.replace(res, candidates=tuple(cands[i] for i in order), forms=forms)


def predicts_unseen(program, X_old: np.ndarray, y_old: np.ndarray, X_new: np.ndarray, y_new: np.ndarray,
                    sigma: float) -> bool:
    """Whether a law, its constants fitted to ``(X_old, y_old)`` only, predicts ``y_new`` within the
    noise: the relative RMS error on the ``m`` new records at most ``sigma sqrt(chi2_{1-ALPHA}(m) / m)``
    (the 99% bound of the RMS of ``m`` Gaussian residuals of scale ``sigma``).

    The old records must determine the law's free constants (at least as many as it has), and there
    must be a new record: a law's exact fit to the records it was fitted to is no evidence.
    """
    from scipy.stats import chi2

    from etc_fast.policies.symbolic._fit import refit_constants

    m = int(y_new.size)
    free = int(np.sum(~np.asarray(program.const_is_exponent, dtype=bool)))
    if m == 0 or y_old.size < max(free, 1):
        return False
    pred = refit_constants(program, X_old, y_old, at=X_new)
    r = relative_errors(pred, y_new)
    if not np.all(np.isfinite(r)):
        return False
    return float(np.sqrt(np.mean(r * r))) <= sigma * math.sqrt(float(chi2.ppf(1.0 - ALPHA, m)) / m)
