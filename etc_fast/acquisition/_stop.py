"""Noise-aware step, stop: the best law's prediction check, the stopping rule and the extremes test.

The best consistent law of a step is scaled to the observations without an offset
(:func:`relative_scale`) and carries the noise its own residuals imply (:func:`law_noise`); after
the batch is measured, :func:`check_prediction` compares its prediction with the batch. When that
check passed, the next step's scored slots that find nothing to tell apart are dropped
(:func:`stop_slots`, ``stop_when_settled``). The extremes test (``test_extremes``) spends one
exploration slot where the best law predicts farthest outside the measured outputs
(:func:`extreme_pick`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from etc_fast.acquisition._estimate import CommitteeFit
from etc_fast.acquisition._paper import Committee
from etc_fast.acquisition._records import KAPPA_DISAGREE, NOISE_FLOOR, NoiseOptions, NoisyStepResult, PredictionCheck


def best_law(fit: CommitteeFit, hypotheses: Sequence[str], y: np.ndarray) -> tuple[str | None, tuple[float, float], float | None]:
    """The best consistent law of a step for its prediction check: ``(text, (a, 0), noise)``.

    ``a`` is its relative scale on the observations (:func:`relative_scale`), ``noise`` what its
    residuals imply (:func:`law_noise`); ``(None, (1, 0), None)`` when no hypothesis is kept.
    """
    if not fit.kept.size:
        return None, (1.0, 0.0), None
    r0 = int(fit.kept[0])
    text = str(hypotheses[fit.positions[r0]])
    a = relative_scale(fit.H_obs[r0], y)
    return text, (a, 0.0), law_noise(fit.H_obs[r0], y, a, fitted_constants(text))


def settled_before(options: NoiseOptions, noisy: bool, prior: PredictionCheck | None) -> bool:
    """The stopping rule applies to this step: on, and the previous batch's prediction check passed."""
    return bool(options.stop_when_settled and options.noise_aware and noisy and prior is not None and prior.passed)


def extreme_slot(fit: CommitteeFit, y: np.ndarray, cols: np.ndarray, taken: np.ndarray) -> int:
    """The extremes test's pool index: the available point not ``taken`` where the best kept law's
    calibrated prediction leaves the measured outputs by more than ``KAPPA_DISAGREE`` noise levels
    farthest (:func:`extreme_pick`), or -1."""
    r0 = int(fit.kept[0])
    pred = fit.a[r0] * fit.H_pool[r0] + fit.b[r0]
    j = extreme_pick(pred, y, KAPPA_DISAGREE * max(fit.sigma, NOISE_FLOOR), ~taken[cols])
    return int(cols[j]) if j >= 0 else -1


def stop_slots(method: str, picks: list[int], n_score: int, n_exp: int, n_rep: int, n_consistent: int,
               prior: PredictionCheck, notes: list[str]) -> tuple[list[int], int, int]:
    """The stopping rule (rule 7 of :func:`plan_noisy_step`) once the previous batch was predicted:
    ``(picks, exploration slots, dropped slots)``, with a note for the policy when slots are dropped."""
    if method == "random":  # its scored share is uniform: dropped only when one law is left
        n_dropped, picks = (len(picks), []) if n_consistent < 2 else (0, picks)
    else:
        n_dropped = n_score - len(picks)
    if n_dropped and not picks and n_exp + n_rep == 0:
        n_dropped -= 1  # a batch is never empty: one slot explores
        n_exp += 1
    if n_dropped:
        why = "only one law fits" if n_consistent < 2 else "no unmeasured point is left where the laws differ by more than the noise"
        notes.append(f"the best law predicted the last batch's {prior.n} measurement(s) before they were made to within "
                     f"the noise (relative RMS {100 * prior.error:.3g}%) and {why}: {n_dropped} slot(s) of this batch "
                     "were not measured")
    return picks, n_exp, n_dropped


def prediction_error(h_new, y_new, a: float, b: float) -> tuple[float, int] | None:
    """Relative RMS error of the calibrated prediction ``a h + b`` on new measurements.

    Args:
        h_new: float64[m] the hypothesis' values at the new inputs.
        y_new: float64[m] the new measurements.
        a, b: The calibration the step fitted on the observations before them.

    Returns:
        ``(error, n)`` over the finite, nonzero measurements with a finite prediction, or None
        when there is none.
    """
    h = np.asarray(h_new, dtype=np.float64).reshape(-1)
    y = np.asarray(y_new, dtype=np.float64).reshape(-1)
    if h.shape != y.shape:
        raise ValueError(f"prediction_error: h_new and y_new must have the same length, got {h.shape} and {y.shape}")
    with np.errstate(all="ignore"):
        r = (a * h + b - y) / np.abs(y)
    r = r[np.isfinite(r)]
    if r.size == 0:
        return None
    return float(np.sqrt(np.mean(r * r))), int(r.size)


def check_prediction(step: NoisyStepResult, variables: Sequence[str], X_new, y_new) -> PredictionCheck | None:
    """The :class:`PredictionCheck` of ``step``'s best law on the batch measured after it (None
    without a best law, a noise estimate, or a comparable measurement)."""
    from etc_fast.expr import ExprError, parse

    if step.best is None or not step.noise.sigma:
        return None
    sigma = max(float(step.noise.sigma), float(step.best_noise or 0.0))
    X = np.asarray(X_new, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0:
        return None
    try:
        prog = parse(step.best, tuple(variables))
    except ExprError:
        return None
    out = prediction_error(Committee([prog]).evaluate(X)[0], y_new, *step.best_ab)
    if out is None:
        return None
    return PredictionCheck(step.best, out[0], sigma, out[1])


def relative_scale(h, y) -> float:
    """The scale ``a`` minimizing ``sum(((a h - y) / y)^2)`` over finite, nonzero pairs (1 without any).

    The prediction check scales a law without an offset: the paper's affine calibration fits
    ``b`` in absolute terms, dominated by the largest outputs, and such an offset is a large
    relative error where outputs are small (laws span decades).
    """
    h = np.asarray(h, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        u = h / y
    ok = np.isfinite(u) & (y != 0)
    den = float(u[ok] @ u[ok]) if ok.any() else 0.0
    return float(u[ok].sum() / den) if den > 0 else 1.0


def fitted_constants(text: str) -> int:
    """Numbers in a law's text that are not simple in :data:`etc_fast.expr.CONSTANTS` (``0`` and
    ``p/q`` with ``q <= 4`` and ``|p/q| <= 10``): the constants the proposer fitted, which its
    residuals must be corrected for. A tiny constant (``1.04e-14``) is fitted, not ``0``."""
    from etc_fast.expr import CONSTANTS, fitted_numbers

    return fitted_numbers(text, CONSTANTS)


def law_noise(h, y, a: float, n_fitted: int) -> float | None:
    """The relative noise a law's residuals imply: RMS of ``(a h - y) / y`` times
    ``sqrt(n / (n - 1 - n_fitted))`` (the scale and the law's own fitted constants); None when
    fewer than one degree of freedom is left."""
    h = np.asarray(h, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        r = (a * h - y) / np.abs(y)
    r = r[np.isfinite(r)]
    dof = r.size - 1 - int(n_fitted)
    if dof < 1:
        return None
    return float(np.sqrt(float(r @ r) / dof))


def extreme_pick(pred, y_obs, min_gap: float, available) -> int:
    """The candidate where a calibrated law's prediction lies farthest outside the measured outputs.

    The distance is in log output (relative noise) when the measured outputs and the prediction
    have one sign, else in units of the measured range. Returns the candidate's row, or -1 when no
    available candidate's prediction leaves the measured range by more than ``min_gap`` (relative).
    """
    p = np.asarray(pred, dtype=np.float64)
    y = np.asarray(y_obs, dtype=np.float64)
    y = y[np.isfinite(y)]
    ok = np.isfinite(p) & np.asarray(available, dtype=bool)
    if y.size < 2 or not ok.any():
        return -1
    lo, hi = float(y.min()), float(y.max())
    with np.errstate(all="ignore"):
        if lo > 0 or hi < 0:
            sgn = 1.0 if lo > 0 else -1.0
            ok &= p * sgn > 0
            lp = np.log(np.abs(p))
            llo, lhi = np.log(min(abs(lo), abs(hi))), np.log(max(abs(lo), abs(hi)))
            d = np.maximum(np.maximum(lp - lhi, llo - lp), 0.0)
            gap = np.log1p(min_gap)
        else:
            d = np.maximum(np.maximum(p - hi, lo - p), 0.0) / max(hi - lo, 1e-300)
            gap = min_gap
    d = np.where(ok, d, -1.0)
    j = int(np.argmax(d))
    return j if d[j] > gap else -1
