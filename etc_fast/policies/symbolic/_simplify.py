"""Simplification of fitted laws on noisy data (docs/guide/offline-agent.md, "Noisy data").

A constant fitted to noisy observations is never exactly the simple number a law may carry (the
``2`` of ``2*k*x**2``, the ``1`` of a law without a scale, the ``-1`` of ``exp(-l*t)``); written
out as ``1.00227`` it is a different law. After the search, each top candidate's constants are
tried at simple numbers with the remaining constants refitted, and the simpler law is kept when the
observations cannot tell the difference:

* **simple numbers** (:func:`simple_numbers`): ``p/q`` with ``q`` in :data:`DENOMINATORS`
  (1, 2, 3, 4), of the fitted constant's sign, ``1 <= |p| `` and ``|p/q| <= MAX_SIMPLE`` (10),
  within :data:`MAX_RELATIVE_SHIFT` (30%) of the fitted value; cheapest first (1, then integers,
  halves, thirds and quarters), at most two per constant;
* **criterion** (:func:`simplify_constants`): an F-test of the nested laws. With ``S0`` the
  relative residual sum of squares of the law with all constants fitted, ``S1`` with ``k``
  constants fixed and the others refitted, and ``n - p`` the residual degrees of freedom (``p``
  counts constants and exponents), a fixing is accepted when
  ``((S1 - S0) / k) / (S0 / (n - p)) <= F_{1 - ALPHA}(k, n - p)`` with ``ALPHA = 0.01`` (a
  simple number is given up only on strong evidence). Constants
  are fixed greedily (the fixing that raises ``S1`` least first), and each further fixing is tested
  jointly against the full fit.

* **exponents** (:func:`simplify_exponents`, run first): a fitted exponent that is not already one
  of the grammar's cheapest values is tried at up to two simpler ones (:func:`simpler_exponents`:
  lower :func:`._grammar.exponent_cost`, the same sign, within :data:`EXPONENT_WINDOW` (0.3), never
  0), the constants refitted, and the same F-test decides, exponents counted as parameters. Each
  round fixes the cheapest exponent the test accepts (then the smallest ``S1``), tested jointly with
  the ones fixed before. An exponent the data cannot tell from a simpler one is the simpler one:
  ``I2**1.4937`` is ``I2**1.5`` unless the records say otherwise.

The noise level never enters the test: it uses the fit's own residual, so it adapts to the true
noise (an agent is told only that data are noisy). The search calls this only for noisy data;
noise-free fits stay as fitted (their constants are exact already).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
from scipy.stats import f as f_dist

from etc_fast.expr import CONSTANTS
from etc_fast.policies.symbolic._forms import Form, predict
from etc_fast.policies.symbolic._grammar import exponent_cost, simple_exponent_values
from etc_fast.policies.symbolic._lsq import error_scale, refit_relative
from etc_fast.policies.symbolic._units import ALPHA

__all__ = ["simple_numbers", "simplify_constants", "simpler_exponents", "simplify_exponents",
           "noise_floor_estimate", "DENOMINATORS", "MAX_SIMPLE", "MAX_RELATIVE_SHIFT", "ALPHA",
           "EXPONENT_WINDOW"]

#: Denominators of the simple numbers a fitted constant may be replaced by (:data:`etc_fast.expr.CONSTANTS`).
DENOMINATORS = CONSTANTS.denominators
#: Largest magnitude of a simple number (:data:`etc_fast.expr.CONSTANTS`).
MAX_SIMPLE = CONSTANTS.max_abs
#: How far from a fitted number a simple one is tried for it: a relative distance for a constant, an
#: absolute one for an exponent. It bounds the candidates only; the F-test at ALPHA (the agent's one
#: significance level, :mod:`._criterion`) decides whether a fixing is kept.
SIMPLE_WITHIN = 0.3
#: Largest relative distance between a fitted constant and a simple number tried for it.
MAX_RELATIVE_SHIFT = SIMPLE_WITHIN
#: Largest distance between a fitted exponent and a simpler exponent tried for it.
EXPONENT_WINDOW = SIMPLE_WITHIN


def simple_numbers(c: float, max_options: int = 2) -> list[float]:
    """Simple numbers near the fitted constant ``c``, cheapest first.

    Args:
        c: The fitted constant.
        max_options: Most numbers returned.

    Returns:
        Up to ``max_options`` numbers ``p/q`` (see the module docstring), ordered by cost (1, then
        other integers, halves, thirds and quarters) and then by distance to ``c``; empty when
        ``c`` is not finite, zero or already simple.
    """
    if not math.isfinite(c) or c == 0.0:
        return []
    a, sign = abs(c), math.copysign(1.0, c)
    if a > MAX_SIMPLE * (1 + MAX_RELATIVE_SHIFT) or a < 1.0 / max(DENOMINATORS) / (1 + MAX_RELATIVE_SHIFT):
        return []
    found: dict[float, tuple[float, float]] = {}
    for q in DENOMINATORS:
        for p in {math.floor(a * q), math.ceil(a * q)}:
            v = p / q
            if p < 1 or v > MAX_SIMPLE or abs(v - a) > MAX_RELATIVE_SHIFT * a:
                continue
            cost = 0.0 if v == 1.0 else float(q)
            if v not in found or cost < found[v][0]:
                found[v] = (cost, abs(v - a))
    if any(abs(v - a) <= 1e-12 * a for v in found):
        return []  # already simple
    order = sorted(found, key=lambda v: found[v])
    return [sign * v for v in order[:max_options]]


def _rel_sse(form: Form, A: np.ndarray, y: np.ndarray, scale: np.ndarray, params) -> float:
    with np.errstate(all="ignore"):
        r = (predict(form, A, params) - y) / scale
    return float(r @ r) if np.all(np.isfinite(r)) else math.inf


def _full_fit(form: Form, A: np.ndarray, y: np.ndarray, scale: np.ndarray, max_nfev: int) -> tuple[np.ndarray, float]:
    """``(constants, relative SSE)`` of ``form`` with every constant refitted (the fitted ones kept
    where the refit is no better)."""
    p0 = np.asarray(form.params, dtype=np.float64)
    full, _ = refit_relative(form, A, y, scale, p0, {}, max_nfev)
    s0 = _rel_sse(form, A, y, scale, full)
    s_start = _rel_sse(form, A, y, scale, p0)
    return (p0, s_start) if s_start < s0 else (full, s0)


def _greedy_fixings(slots, options_of, rank, fit, full: np.ndarray, s0: float, dof: int, alpha: float):
    """The greedy nested F-test shared by the constants and the exponents (module docstring).

    Each round tries every slot not yet fixed at each of ``options_of(slot, cur)``, refitted by
    ``fit(trial, cur) -> (S1, constants)``; a fixing passes when
    ``((S1 - S0) / k) / (S0 / dof) <= F_{1 - alpha}(k, dof)`` with ``k`` the fixings so far plus
    one, and the passing one of least ``rank(value, S1)`` (the first of equals) is kept.

    Returns:
        ``(fixed, constants)``: the fixings as ``{slot: value}`` and the constants refitted with them.
    """
    slots = list(slots)
    s2 = s0 / dof
    fixed: dict = {}
    cur = full
    while True:
        k = len(fixed) + 1
        crit = float(f_dist.ppf(1.0 - alpha, k, dof))
        best = None
        for slot in slots:
            if slot in fixed:
                continue
            for v in options_of(slot, cur):
                trial = {**fixed, slot: v}
                s, p = fit(trial, cur)
                if not math.isfinite(s) or (s - s0) / k / s2 > crit:
                    continue
                key = rank(v, s)
                if best is None or key < best[0]:
                    best = (key, trial, p)
        if best is None:
            return fixed, cur
        _key, fixed, cur = best


def simplify_constants(form: Form, A: np.ndarray, y: np.ndarray, n_params: int, *, alpha: float = ALPHA,
                       max_nfev: int = 40) -> tuple[Form, int] | None:
    """The form with as many constants at simple numbers as the F-test allows.

    Args:
        form: A fitted form.
        A: float64[n, m] atom values of the form's view (rows with a finite output).
        y: float64[n] the outputs.
        n_params: Constants and exponents the data determined for the full form.
        alpha: Significance level of the test.
        max_nfev: Residual evaluations per refit.

    Returns:
        ``(simplified form, number of constants fixed)``, or ``None`` when no constant could be
        fixed (or the data leave no residual degree of freedom).
    """
    n = int(y.size)
    dof = n - n_params
    if dof < 1 or not form.params:
        return None
    scale = error_scale(y, 0.0)
    full, s0 = _full_fit(form, A, y, scale, max_nfev)
    if not math.isfinite(s0) or s0 <= 0.0:
        return None

    def fit(trial: dict[int, float], cur: np.ndarray) -> tuple[float, np.ndarray]:
        p, _ = refit_relative(form, A, y, scale, cur, trial, max_nfev)
        return _rel_sse(form, A, y, scale, p), p

    fixed, cur = _greedy_fixings(range(full.size), lambda i, cur: simple_numbers(float(cur[i])),
                                 lambda _v, s: (s,), fit, full, s0, dof, alpha)
    if not fixed:
        return None
    params = tuple(float(fixed.get(i, v)) for i, v in enumerate(cur))
    return dataclasses.replace(form, params=params), len(fixed)


def simpler_exponents(p: float, max_options: int = 2) -> list[float]:
    """Exponents simpler than ``p`` near it, cheapest first.

    Args:
        p: A fitted exponent.
        max_options: Most exponents returned.

    Returns:
        Up to ``max_options`` values of lower :func:`._grammar.exponent_cost` than ``p``, of its
        sign, within :data:`EXPONENT_WINDOW` of it and not 0, ordered by cost and then by distance
        to ``p``; empty for 0, a non-finite ``p`` or one of the cheapest values already.
    """
    if not math.isfinite(p) or p == 0.0:
        return []
    own = exponent_cost(p)
    opts = [(cost, abs(v - p), v) for v, cost in simple_exponent_values()
            if v != 0.0 and (v > 0) == (p > 0) and cost < own and abs(v - p) <= EXPONENT_WINDOW]
    return [v for _c, _d, v in sorted(opts)[:max_options]]


def _exponent_rows(form: Form) -> list[tuple[float, ...]]:
    """The form's exponent vectors: one per term, then ``exp_exps`` where the form has one."""
    return list(form.exps) + ([form.exp_exps] if form.exp_exps is not None else [])


def _with_exponents(form: Form, values: dict[tuple[int, int], float]) -> Form:
    """``form`` with the exponent at each ``(row, atom)`` of :func:`_exponent_rows` set to its value."""
    rows = [list(r) for r in _exponent_rows(form)]
    for (t, j), v in values.items():
        rows[t][j] = v
    k = len(form.exps)
    return dataclasses.replace(form, exps=tuple(tuple(r) for r in rows[:k]),
                               exp_exps=tuple(rows[k]) if form.exp_exps is not None else None)


def simplify_exponents(form: Form, A: np.ndarray, y: np.ndarray, n_params: int, *, alpha: float = ALPHA,
                       max_nfev: int = 40) -> tuple[Form, int] | None:
    """The form with as many exponents at simpler values as the F-test allows (module docstring).

    The arguments are those of :func:`simplify_constants`.

    Returns:
        ``(simplified form, number of exponents fixed)``, or ``None`` when none could be fixed (or
        the data leave no residual degree of freedom).
    """
    n = int(y.size)
    dof = n - n_params
    rows = _exponent_rows(form)
    slots = [(t, j) for t, row in enumerate(rows) for j, pj in enumerate(row) if pj != 0.0]
    if dof < 1 or not slots:
        return None
    options = {sl: simpler_exponents(float(rows[sl[0]][sl[1]])) for sl in slots}
    if not any(options.values()):
        return None
    scale = error_scale(y, 0.0)
    full, s0 = _full_fit(form, A, y, scale, max_nfev)
    if not math.isfinite(s0) or s0 <= 0.0:
        return None

    def fit(trial: dict[tuple[int, int], float], cur: np.ndarray) -> tuple[float, np.ndarray]:
        cand = _with_exponents(form, trial)
        p, _ = refit_relative(cand, A, y, scale, cur, {}, max_nfev)  # no constants: ``cur`` as it is
        return _rel_sse(cand, A, y, scale, p), p

    fixed, cur = _greedy_fixings(slots, lambda sl, _cur: options[sl], lambda v, s: (exponent_cost(v), s), fit,
                                 full, s0, dof, alpha)
    if not fixed:
        return None
    out = _with_exponents(form, fixed)
    return dataclasses.replace(out, params=tuple(float(v) for v in cur)), len(fixed)


def noise_floor_estimate(entries) -> float | None:
    """Smallest residual standard deviation among fitted laws with at least 3 residual degrees of freedom.

    Args:
        entries: ``(relative RMS error, observations, parameters)`` per fitted law.

    Returns:
        ``min(error * sqrt(n / (n - p)))`` over laws with ``n - p >= 3``, or ``None`` when none
        qualifies. An estimate of the relative noise level (optimistic: the minimum over many fits).
    """
    best = None
    for err, n, p in entries:
        if n - p >= 3 and math.isfinite(err):
            s = err * math.sqrt(n / (n - p))
            best = s if best is None else min(best, s)
    return best
