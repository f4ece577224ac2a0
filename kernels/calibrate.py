"""Affine calibration of hypotheses to observations, and the committee fit filter (paper S2.1).

Calibration fits ``h~ = a h + b`` per hypothesis by least squares on the observation pairs where both
the hypothesis value ``h`` and the observed output ``y`` are finite:

* ``>= 3`` pairs: scale and offset. When ``h`` is constant over the pairs (centred sum of squares at
  most ``deg_rel`` times its raw sum of squares, both on ``h`` divided by its largest magnitude) the
  fit is **degenerate**: ``a = 0`` and ``b = mean(y)`` over the pairs, the least-squares solution
  with no slope. The fit stays valid; its error is that of a constant predictor.
* exactly 2 pairs: scale only, ``a = sum(h y) / sum(h^2)``, ``b = 0`` (``a = 0`` if ``h`` is 0 on both).
* fewer than 2 pairs, or any non-finite ``a``, ``b`` or error: **invalid**; the identity ``a = 1,
  b = 0`` is reported so an uncalibrated hypothesis can still be scored if the filter falls back,
  and the error is NaN.

Fit error = RMS residual over the pairs / ``D``, where ``D`` is the median of ``|y|`` over all finite
observations, else their mean ``|y|``, else 1 (each used only when positive and finite).

The filter (DESIGN "Planner step" 3) keeps up to ``max_keep`` valid fits with error at most
``threshold`` (lowest errors first; ties by index); if fewer than ``min_keep`` pass it keeps the
``min_keep`` lowest-error valid fits; if fewer than ``min_keep`` fits are valid it keeps the whole
committee and reports the fallback.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from kernels._checks import as_float_array, named_errors
from kernels._jit import JIT
from kernels._shared import _finite, _quantile_sorted

__all__ = ["calibrate", "fit_filter", "fit_denominator"]

DEGENERATE_REL = 1e-20
"""Centred/raw sum-of-squares ratio of the scaled hypothesis at or below which a fit is degenerate."""


@njit(**JIT)
def _fit_denominator(y):
    """Error denominator: median ``|y|`` over finite ``y``, else mean ``|y|``, else 1.

    Parameters
    ----------
    y : float64[n_obs]

    Returns
    -------
    float
    """
    n = y.size
    buf = np.empty(n)
    m = 0
    s = 0.0
    for j in range(n):
        if _finite(y[j]):
            buf[m] = abs(y[j])
            s += buf[m]
            m += 1
    if m == 0:
        return 1.0
    srt = np.sort(buf[:m])
    med = _quantile_sorted(srt, m, 0.5)
    if med > 0.0 and _finite(med):
        return med
    mean = s / m
    if mean > 0.0 and _finite(mean):
        return mean
    return 1.0


@njit(**JIT)
def _calibrate(H, y, deg_rel):
    """Least-squares affine calibration of every hypothesis.

    Parameters
    ----------
    H : float64[n_hyp, n_obs]
        Hypothesis values at the observed inputs (NaN/inf = undefined).
    y : float64[n_obs]
        Observed outputs.
    deg_rel : float
        Degeneracy threshold (see module docstring).

    Returns
    -------
    a : float64[n_hyp]
        Scale (1 for invalid fits).
    b : float64[n_hyp]
        Offset (0 for invalid fits and 2-pair fits).
    n_pairs : int64[n_hyp]
        Finite ``(h, y)`` pairs used.
    ok : bool[n_hyp]
        Valid fit.
    err : float64[n_hyp]
        ``sqrt(mean((a h + b - y)^2)) / D`` over the pairs; NaN for invalid fits.

    Notes
    -----
    With ``hs = h / s`` (``s`` = largest ``|h|`` over the pairs), means ``mh``, ``my`` and centred
    sums ``Sxx = sum (hs - mh)^2``, ``Sxy = sum (hs - mh)(y - my)``: ``a = (Sxy / Sxx) / s``,
    ``b = my - (Sxy / Sxx) mh``. Scaling keeps huge but finite ``h`` from overflowing.
    """
    n_hyp, n_obs = H.shape
    a = np.ones(n_hyp)
    b = np.zeros(n_hyp)
    n_pairs = np.zeros(n_hyp, dtype=np.int64)
    ok = np.zeros(n_hyp, dtype=np.bool_)
    err = np.full(n_hyp, np.nan)
    denom = _fit_denominator(y)
    res = np.empty(n_obs)
    for i in range(n_hyp):
        m = 0
        s = 0.0
        for j in range(n_obs):
            h = H[i, j]
            if _finite(h) and _finite(y[j]):
                m += 1
                if abs(h) > s:
                    s = abs(h)
        n_pairs[i] = m
        if m < 2:
            continue
        if s == 0.0:
            s = 1.0
        shh = 0.0
        shy = 0.0
        mh = 0.0
        my = 0.0
        for j in range(n_obs):
            h = H[i, j]
            if _finite(h) and _finite(y[j]):
                hs = h / s
                shh += hs * hs
                shy += hs * y[j]
                mh += hs
                my += y[j]
        if m == 2:
            slope = shy / shh if shh > 0.0 else 0.0  # slope on hs; a = slope / s
            off = 0.0
        else:
            mh /= m
            my /= m
            sxx = 0.0
            sxy = 0.0
            for j in range(n_obs):
                h = H[i, j]
                if _finite(h) and _finite(y[j]):
                    dh = h / s - mh
                    sxx += dh * dh
                    sxy += dh * (y[j] - my)
            if sxx <= deg_rel * shh:
                slope = 0.0
                off = my
            else:
                slope = sxy / sxx
                off = my - slope * mh
        # residuals r = a h + b - y = slope * hs + off - y; RMS computed on r / max|r|
        rmax = 0.0
        q = 0
        for j in range(n_obs):
            h = H[i, j]
            if _finite(h) and _finite(y[j]):
                r = slope * (h / s) + off - y[j]
                res[q] = r
                q += 1
                if abs(r) > rmax:
                    rmax = abs(r)
        if rmax == 0.0:
            rms = 0.0
        else:
            acc = 0.0
            for t in range(q):
                rr = res[t] / rmax
                acc += rr * rr
            rms = rmax * np.sqrt(acc / q)
        ai = slope / s
        e = rms / denom
        if _finite(ai) and _finite(off) and _finite(e):
            a[i] = ai
            b[i] = off
            err[i] = e
            ok[i] = True
    return a, b, n_pairs, ok, err


@njit(**JIT)
def _fit_filter(err, ok, max_keep, threshold, min_keep):
    """Committee fit filter (DESIGN "Planner step" 3).

    Parameters
    ----------
    err : float64[n_hyp]
        Fit errors.
    ok : bool[n_hyp]
        Valid fits (a fit with non-finite error is treated as invalid).
    max_keep : int
        Most hypotheses kept when enough pass (paper: 4).
    threshold : float
        Largest passing error (paper: 0.75).
    min_keep : int
        Fewest kept; also the fewest valid fits needed to filter at all (paper: 2).

    Returns
    -------
    keep : bool[n_hyp]
        Hypotheses kept.
    fallback : bool
        True when fewer than ``min_keep`` fits were valid and the whole committee is kept.
    """
    n = err.size
    keep = np.zeros(n, dtype=np.bool_)
    valid_idx = np.empty(n, dtype=np.int64)
    nv = 0
    for i in range(n):
        if ok[i] and _finite(err[i]):
            valid_idx[nv] = i
            nv += 1
    if nv < min_keep:
        keep[:] = True
        return keep, True
    valid_idx = valid_idx[:nv]
    order = np.argsort(err[valid_idx], kind="mergesort")  # stable: equal errors keep index order
    n_pass = 0
    for t in range(nv):
        if err[valid_idx[t]] <= threshold:
            n_pass += 1
    n_keep = min(max_keep, n_pass) if n_pass >= min_keep else min_keep
    for t in range(n_keep):
        keep[valid_idx[order[t]]] = True
    return keep, False


@named_errors
def fit_denominator(y) -> float:
    """Fit-error denominator of observed outputs ``y`` (float64[n_obs]); see the module docstring."""
    return float(_fit_denominator(as_float_array(y, "y", 1)))


@named_errors
def calibrate(H_obs, y_obs, *, deg_rel: float = DEGENERATE_REL):
    """Affine least-squares calibration ``h~ = a h + b`` of each hypothesis to the observations.

    Args:
        H_obs: float64[n_hyp, n_obs] hypothesis values at the observed inputs.
        y_obs: float64[n_obs] observed outputs.
        deg_rel: Degeneracy threshold (module docstring).

    Returns:
        ``(a, b, n_pairs, ok, err)``: float64[n_hyp], float64[n_hyp], int64[n_hyp], bool[n_hyp],
        float64[n_hyp] (see :func:`_calibrate`).
    """
    H = as_float_array(H_obs, "H_obs", 2)
    y = as_float_array(y_obs, "y_obs", 1)
    if H.shape[1] != y.shape[0]:
        raise ValueError(f"H_obs has {H.shape[1]} observation columns but y_obs has {y.shape[0]} values")
    return _calibrate(H, y, float(deg_rel))


@named_errors
def fit_filter(err, ok, *, max_keep: int = 4, threshold: float = 0.75, min_keep: int = 2):
    """Keep the committee members whose calibration fits the observations (DESIGN step 3).

    Args:
        err: float64[n_hyp] fit errors from :func:`calibrate`.
        ok: bool[n_hyp] valid-fit flags from :func:`calibrate`.
        max_keep: Most members kept when enough pass.
        threshold: Largest passing fit error.
        min_keep: Fewest members kept (and fewest valid fits needed to filter).

    Returns:
        ``(keep, fallback)``: bool[n_hyp] and whether the whole committee was kept.
    """
    e = as_float_array(err, "err", 1)
    o = np.asarray(ok)
    if o.shape != e.shape:
        raise ValueError(f"ok has shape {o.shape} but err has shape {e.shape}")
    if o.dtype != np.bool_:
        raise TypeError(f"ok must be a boolean array, got dtype {o.dtype}")
    if int(min_keep) < 1 or int(max_keep) < int(min_keep):
        raise ValueError(f"need 1 <= min_keep <= max_keep, got min_keep={min_keep}, max_keep={max_keep}")
    keep, fallback = _fit_filter(e, np.ascontiguousarray(o), int(max_keep), float(threshold), int(min_keep))
    return keep, bool(fallback)
