"""A small Gaussian-process surrogate on unit-cube coordinates, and its greedy batch (docs/guide/acquisition.md).

Used by the GP planners (``acquisition: gp_ucb`` / ``gp_var``,
:func:`etc_fast.acquisition.plan_gp_step`); the paper's step never calls it.

**Model.** Zero prior mean on standardized targets ``z``; covariance ``K(u, v) = s2 m(r) + noise
[u is v]`` with the ARD Matérn 5/2 correlation ``m(r) = (1 + sqrt(5) r + 5 r^2 / 3) exp(-sqrt(5) r)``,
``r^2 = sum_c ((u_c - v_c) / l_c)^2``. Matérn 5/2 rather than the squared exponential: it is the
usual default of Bayesian optimization (twice differentiable, not infinitely smooth), and its Gram
matrices stay far better conditioned at the long length scales a near-linear target picks, so a
nugget of 1e-6 of the signal variance is enough for a stable Cholesky factor.

**Posterior** (:func:`gp_posterior`). With ``L L^T = K(U_obs, U_obs)`` (Cholesky) and ``k_x =
K(U_obs, x)``: ``mean(x) = k_x^T K^{-1} z``, ``var(x) = s2 - |L^{-1} k_x|^2`` (clamped at 0; the
latent function's variance, without the noise), ``sd = sqrt(var)``.

**Log marginal likelihood** (:func:`gp_log_likelihood`): ``-z^T K^{-1} z / 2 - log|K| / 2 - n
log(2 pi) / 2``.

**Hyperparameters** (:func:`gp_fit`). For length scales ``l`` and a relative nugget ``g`` (noise
variance / signal variance), the likelihood's maximum over ``s2`` is closed form: with ``A = R + g
I`` (``R`` the correlation matrix), ``s2 = max(z^T A^{-1} z / n, S2_FLOOR)``; the profile
likelihood at that ``s2`` is maximized over a fixed candidate set, in a fixed order, a fixed
number of evaluations: (1) one length shared by every dimension, each value of ``length_grid``,
times each ``g`` of ``nugget_grid``; (2) for ``d > 1``, ``passes`` coordinate passes: each
dimension in turn tries every other grid value of its own length, the rest held; then every other
``g``. A candidate replaces the best only when strictly better (ties keep the earlier), and one
whose Cholesky factorization fails scores ``-inf``.

**Greedy batch** (:func:`gp_select`). ``k`` available pool points one at a time: each pick is the
available point of the largest score, ``sd`` (``gp_var``) or ``mean + kappa sd`` (``gp_ucb``),
ties to the lowest pool index; the model is then conditioned on the picked point with its own
posterior mean as a pseudo-observation ("kriging believer"), so later picks see its variance
shrink. The pseudo-observation leaves the mean unchanged everywhere, and the variance does not
depend on the observed values at all, so the update is one new row of the Cholesky factor: ``c(x)
= K(x, p) - v_x . v_p - sum_s w_s(x) w_s(p)``, ``w_t(x) = c(x) / sqrt(var(p) + noise)``, ``var(x)
-= w_t(x)^2``; exactly what refitting on the augmented observations gives.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from kernels._checks import as_float_array, as_unit_coordinates, check_k, named_errors
from kernels._jit import JIT
from kernels._shared import _cholesky

__all__ = [
    "LENGTH_GRID", "NUGGET_NOISELESS", "NUGGET_GRID", "FIT_PASSES", "S2_FLOOR",
    "gp_posterior", "gp_log_likelihood", "gp_fit", "gp_select",
]  # fmt: skip

LENGTH_GRID = np.geomspace(1.0 / 8.0, 8.0, 12)
"""Candidate length scales (unit-cube coordinates): 12 values, log-spaced from 1/8 to 8.

The floor keeps the search off the white-noise fit that maximizes the likelihood of a handful of
observations (a bootstrap of four explains itself best as independent values): at lengths far below
the observations' spacing every unobserved point is equally uncertain, ``gp_var``'s sds tie to
rounding and the batch falls to the lowest pool indices. At the ceiling the correlation between
opposite corners of a cube of up to four dimensions is at least 0.95 (a smooth trend)."""
NUGGET_NOISELESS = np.array([1e-6])
"""Relative nugget (noise variance / signal variance) of a noiseless lab: numerical jitter only."""
NUGGET_GRID = np.geomspace(1e-6, 1e-1, 6)
"""Candidate relative nuggets of a noisy lab: 1e-6 to 0.1, one per decade."""
FIT_PASSES = 2
"""Coordinate passes over the per-dimension length scales after the shared-length search."""
S2_FLOOR = 1e-12
"""Smallest signal variance the closed form returns (all-equal targets give ``z = 0``)."""

_SQRT5 = math.sqrt(5.0)
_LOG_2PI = math.log(2.0 * math.pi)


@njit(**JIT)
def _matern(r2):  # pragma: no cover - compiled
    """Matérn 5/2 correlation at scaled squared distance ``r2``."""
    a = _SQRT5 * math.sqrt(r2)
    return (1.0 + a + a * a / 3.0) * math.exp(-a)


@njit(**JIT)
def _sq_diffs(U):  # pragma: no cover - compiled
    """float64[d, n, n]: squared coordinate differences of the rows of ``U``, per dimension."""
    n, d = U.shape
    D = np.empty((d, n, n))
    for c in range(d):
        for i in range(n):
            for j in range(n):
                t = U[i, c] - U[j, c]
                D[c, i, j] = t * t
    return D


@njit(**JIT)
def _gram(D, inv_l2, scale, diag):  # pragma: no cover - compiled
    """``scale * R + diag * I`` from the squared differences ``D`` and inverse squared lengths."""
    d, n, _ = D.shape
    A = np.empty((n, n))
    for i in range(n):
        for j in range(i + 1):
            r2 = 0.0
            for c in range(d):
                r2 += D[c, i, j] * inv_l2[c]
            v = scale * _matern(r2)
            A[i, j] = v
            A[j, i] = v
        A[i, i] += diag
    return A


@njit(**JIT)
def _forward(L, b):  # pragma: no cover - compiled
    """``L^{-1} b`` for lower-triangular ``L``."""
    n = b.size
    x = np.empty(n)
    for i in range(n):
        t = b[i]
        for q in range(i):
            t -= L[i, q] * x[q]
        x[i] = t / L[i, i]
    return x


@njit(**JIT)
def _backward(L, b):  # pragma: no cover - compiled
    """``L^{-T} b`` for lower-triangular ``L``."""
    n = b.size
    x = np.empty(n)
    for i in range(n - 1, -1, -1):
        t = b[i]
        for q in range(i + 1, n):
            t -= L[q, i] * x[q]
        x[i] = t / L[i, i]
    return x


@njit(**JIT)
def _profile(D, z, inv_l2, g):  # pragma: no cover - compiled
    """Profile log likelihood and its signal variance at lengths ``inv_l2`` and relative nugget ``g``."""
    n = z.size
    A = _gram(D, inv_l2, 1.0, g)
    if not _cholesky(A):
        return -np.inf, S2_FLOOR
    w = _forward(A, z)
    q = 0.0
    logdet = 0.0
    for i in range(n):
        q += w[i] * w[i]
        logdet += 2.0 * math.log(A[i, i])
    s2 = q / n
    if not s2 > S2_FLOOR:
        s2 = S2_FLOOR
    return -0.5 * (q / s2 + n * math.log(s2) + logdet + n * _LOG_2PI), s2


@njit(**JIT)
def _log_likelihood(U, z, inv_l2, s2, noise):  # pragma: no cover - compiled
    n = z.size
    A = _gram(_sq_diffs(U), inv_l2, s2, noise)
    if not _cholesky(A):
        return -np.inf
    w = _forward(A, z)
    q = 0.0
    logdet = 0.0
    for i in range(n):
        q += w[i] * w[i]
        logdet += 2.0 * math.log(A[i, i])
    return -0.5 * (q + logdet + n * _LOG_2PI)


@njit(**JIT)
def _fit(U, z, grid, nuggets, passes):  # pragma: no cover - compiled
    """The hyperparameter search of the module docstring: ``(length index per dimension, nugget
    index, profile log likelihood, signal variance, evaluations)``."""
    d = U.shape[1]
    D = _sq_diffs(U)
    inv = np.empty(grid.size)
    for t in range(grid.size):
        inv[t] = 1.0 / (grid[t] * grid[t])
    cur = np.zeros(d, dtype=np.int64)
    inv_l2 = np.empty(d)
    best, best_s2, best_g = -np.inf, S2_FLOOR, 0
    n_eval = 0
    for t in range(grid.size):
        inv_l2[:] = inv[t]
        for gi in range(nuggets.size):
            lml, s2 = _profile(D, z, inv_l2, nuggets[gi])
            n_eval += 1
            if lml > best:
                best, best_s2, best_g = lml, s2, gi
                cur[:] = t
    if d > 1:
        for _ in range(passes):
            for c in range(d):
                for t in range(d):
                    inv_l2[t] = inv[cur[t]]
                keep = cur[c]
                for t in range(grid.size):
                    if t == keep:
                        continue
                    inv_l2[c] = inv[t]
                    lml, s2 = _profile(D, z, inv_l2, nuggets[best_g])
                    n_eval += 1
                    if lml > best:
                        best, best_s2 = lml, s2
                        cur[c] = t
            for t in range(d):
                inv_l2[t] = inv[cur[t]]
            keep = best_g
            for gi in range(nuggets.size):
                if gi == keep:
                    continue
                lml, s2 = _profile(D, z, inv_l2, nuggets[gi])
                n_eval += 1
                if lml > best:
                    best, best_s2, best_g = lml, s2, gi
    return cur, best_g, best, best_s2, n_eval


@njit(**JIT)
def _prepare(U, z, P, inv_l2, s2, noise):  # pragma: no cover - compiled
    """Posterior mean, variance and ``V[x] = L^{-1} k_x`` (one row per pool point) at the rows of ``P``;
    ``ok`` False when the Cholesky factorization fails."""
    n, d = U.shape
    m = P.shape[0]
    mean = np.zeros(m)
    var = np.full(m, s2)
    V = np.zeros((m, n))
    if n == 0:
        return mean, var, V, True
    L = _gram(_sq_diffs(U), inv_l2, s2, noise)
    if not _cholesky(L):
        return mean, var, V, False
    alpha = _backward(L, _forward(L, z))
    kx = np.empty(n)
    for x in range(m):
        for i in range(n):
            r2 = 0.0
            for c in range(d):
                t = P[x, c] - U[i, c]
                r2 += t * t * inv_l2[c]
            kx[i] = s2 * _matern(r2)
        mu = 0.0
        for i in range(n):
            mu += kx[i] * alpha[i]
        mean[x] = mu
        v = _forward(L, kx)
        vv = 0.0
        for i in range(n):
            V[x, i] = v[i]
            vv += v[i] * v[i]
        var[x] = max(s2 - vv, 0.0)
    return mean, var, V, True


@njit(**JIT)
def _posterior(U, z, P, inv_l2, s2, noise):  # pragma: no cover - compiled
    mean, var, _V, ok = _prepare(U, z, P, inv_l2, s2, noise)
    return mean, np.sqrt(var), ok


@njit(**JIT)
def _select(U, z, P, k, inv_l2, s2, noise, kappa, ucb):  # pragma: no cover - compiled
    """Greedy batch over the rows of ``P`` (the available pool points, ascending): ``(rows in pick
    order, mean and sd at each pick before conditioning on it, ok)``."""
    m, d = P.shape
    n = U.shape[0]
    kk = k if k < m else m
    picks = np.empty(kk, dtype=np.int64)
    at_mean = np.empty(kk)
    at_sd = np.empty(kk)
    mean, var, V, ok = _prepare(U, z, P, inv_l2, s2, noise)
    if not ok:
        return picks[:0], at_mean[:0], at_sd[:0], False
    W = np.zeros((kk, m))
    taken = np.zeros(m, dtype=np.bool_)
    for t in range(kk):
        best = -1
        bv = -np.inf
        for x in range(m):
            if taken[x]:
                continue
            sd = math.sqrt(var[x])
            v = mean[x] + kappa * sd if ucb else sd
            if best < 0 or v > bv:
                best, bv = x, v
        p = best
        picks[t] = p
        at_mean[t] = mean[p]
        at_sd[t] = math.sqrt(var[p])
        taken[p] = True
        if t + 1 == kk:
            break
        scale = 1.0 / math.sqrt(var[p] + noise)
        for x in range(m):
            if taken[x]:
                continue
            r2 = 0.0
            for c in range(d):
                q = P[x, c] - P[p, c]
                r2 += q * q * inv_l2[c]
            cov = s2 * _matern(r2)
            for i in range(n):
                cov -= V[x, i] * V[p, i]
            for s in range(t):
                cov -= W[s, x] * W[s, p]
            w = cov * scale
            W[t, x] = w
            var[x] = max(var[x] - w * w, 0.0)
    return picks, at_mean, at_sd, True


# ---------------------------------------------------------------------------------------------
# Public wrappers
# ---------------------------------------------------------------------------------------------


def _observations(U_obs, z) -> tuple[np.ndarray, np.ndarray]:
    U = as_unit_coordinates(U_obs, "U_obs")
    zz = as_float_array(z, "z", 1, kinds="fiu")
    if zz.shape[0] != U.shape[0]:
        raise ValueError(f"U_obs has {U.shape[0]} rows but z has {zz.shape[0]} values")
    if not np.all(np.isfinite(zz)):
        raise ValueError("z must be finite (drop the observations without a finite target)")
    return U, zz


def _hyper(lengths, signal_var, noise, d: int) -> tuple[np.ndarray, float, float]:
    ls = as_float_array(lengths, "lengths", 1, kinds="fiu")
    if ls.shape[0] != d or not np.all((ls > 0) & np.isfinite(ls)):
        raise ValueError(f"lengths must be {d} positive finite numbers (one per dimension), got {ls.tolist()}")
    s2, nz = float(signal_var), float(noise)
    if not (s2 > 0 and np.isfinite(s2)):
        raise ValueError(f"signal_var must be positive and finite, got {signal_var!r}")
    if not (nz > 0 and np.isfinite(nz)):
        raise ValueError(f"noise must be positive and finite (at least a jitter), got {noise!r}")
    return 1.0 / (ls * ls), s2, nz


@named_errors
def gp_posterior(U_obs, z, U_pool, lengths, signal_var: float, noise: float) -> tuple[np.ndarray, np.ndarray]:
    """Posterior mean and sd of the latent function at pool points (module docstring).

    Args:
        U_obs: float64[n, d] observed points in [0, 1] (``n`` may be 0: the prior).
        z: float64[n] finite targets (standardized).
        U_pool: float64[P, d] points in [0, 1].
        lengths: float64[d] length scales.
        signal_var: Signal variance ``s2``.
        noise: Noise variance (the nugget, absolute, > 0).

    Returns:
        ``(mean, sd)``, each float64[P].

    Raises:
        ValueError: on malformed input, or when the covariance matrix is not positive definite.
    """
    U, zz = _observations(U_obs, z)
    P = as_unit_coordinates(U_pool, "U_pool")
    if P.shape[1] != U.shape[1]:
        raise ValueError(f"U_pool has {P.shape[1]} columns but U_obs has {U.shape[1]}")
    inv_l2, s2, nz = _hyper(lengths, signal_var, noise, U.shape[1])
    mean, sd, ok = _posterior(U, zz, P, inv_l2, s2, nz)
    if not ok:
        raise ValueError("the covariance matrix is not positive definite (raise the noise)")
    return mean, sd


@named_errors
def gp_log_likelihood(U_obs, z, lengths, signal_var: float, noise: float) -> float:
    """Log marginal likelihood of ``z`` (module docstring); ``-inf`` when the covariance matrix is not
    positive definite."""
    U, zz = _observations(U_obs, z)
    inv_l2, s2, nz = _hyper(lengths, signal_var, noise, U.shape[1])
    return float(_log_likelihood(U, zz, inv_l2, s2, nz))


@named_errors
def gp_fit(U_obs, z, *, nuggets=NUGGET_NOISELESS, length_grid=LENGTH_GRID,
           passes: int = FIT_PASSES) -> tuple[np.ndarray, float, float, float, int]:
    """Hyperparameters by the count-bounded likelihood search of the module docstring.

    Args:
        U_obs: float64[n >= 2, d] observed points in [0, 1].
        z: float64[n] finite targets (standardized).
        nuggets: Candidate relative nuggets (noise / signal variance), tried in order
            (:data:`NUGGET_NOISELESS` or :data:`NUGGET_GRID`).
        length_grid: Candidate length scales, tried in order.
        passes: Coordinate passes over the per-dimension lengths (``d > 1``).

    Returns:
        ``(lengths, signal_var, noise, log_likelihood, evaluations)``: float64[d] length scales,
        the closed-form signal variance, the noise variance (relative nugget x signal variance),
        the profile log likelihood at them and the number of likelihoods evaluated
        (``|grid| |nuggets| + passes d (|grid| - 1) + passes (|nuggets| - 1)`` for ``d > 1``).
    """
    U, zz = _observations(U_obs, z)
    if U.shape[0] < 2:
        raise ValueError(f"gp_fit needs at least 2 observations, got {U.shape[0]}")
    grid = as_float_array(length_grid, "length_grid", 1, kinds="fiu")
    gs = as_float_array(nuggets, "nuggets", 1, kinds="fiu")
    if grid.size < 1 or not np.all((grid > 0) & np.isfinite(grid)):
        raise ValueError("length_grid must hold positive finite numbers")
    if gs.size < 1 or not np.all((gs > 0) & np.isfinite(gs)):
        raise ValueError("nuggets must hold positive finite numbers")
    if isinstance(passes, bool) or not isinstance(passes, (int, np.integer)) or passes < 0:
        raise ValueError(f"passes must be a non-negative integer, got {passes!r}")
    cur, gi, lml, s2, n_eval = _fit(U, zz, grid, gs, int(passes))
    return grid[cur].copy(), float(s2), float(gs[gi] * s2), float(lml), int(n_eval)


@named_errors
def gp_select(U_obs, z, U_pool, available, k: int, lengths, signal_var: float, noise: float, *,
              kappa: float | None = None) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Greedy batch of ``min(k, #available)`` pool points (module docstring).

    Args:
        U_obs, z, lengths, signal_var, noise: The model, as in :func:`gp_posterior`.
        U_pool: float64[P, d] pool points in [0, 1].
        available: bool[P] pool points that may be picked.
        k: Batch size.
        kappa: ``None``: ``gp_var`` (largest sd); a number: ``gp_ucb`` (largest ``mean + kappa sd``).

    Returns:
        ``(picks, mean, sd)``: int64 pool indices in pick order, and the posterior mean and sd at
        each pick given the observations and the earlier picks.

    Raises:
        ValueError: on malformed input, or when the covariance matrix is not positive definite.
    """
    U, zz = _observations(U_obs, z)
    P = as_unit_coordinates(U_pool, "U_pool")
    if P.shape[1] != U.shape[1]:
        raise ValueError(f"U_pool has {P.shape[1]} columns but U_obs has {U.shape[1]}")
    mask = np.asarray(available)
    if mask.dtype != np.bool_ or mask.shape != (P.shape[0],):
        raise ValueError(f"available must be a boolean mask of shape ({P.shape[0]},), got {mask.dtype} {mask.shape}")
    inv_l2, s2, nz = _hyper(lengths, signal_var, noise, U.shape[1])
    ucb = kappa is not None
    kap = 0.0 if kappa is None else float(kappa)
    if not np.isfinite(kap):
        raise ValueError(f"kappa must be finite, got {kappa!r}")
    idx = np.flatnonzero(mask).astype(np.int64)
    rows, mean, sd, ok = _select(U, zz, np.ascontiguousarray(P[idx]), check_k(k), inv_l2, s2, nz, kap, ucb)
    if not ok:
        raise ValueError("the covariance matrix is not positive definite (raise the noise)")
    return idx[rows], mean, sd
