"""Slow, obvious NumPy twins of the acquisition kernels (calibrate, scores, rank_reg, select).

Each twin follows the written definition in its kernel module's docstring directly, with NumPy
reductions and Python loops, so the tests compare two independent routes to the same numbers.
"""

from __future__ import annotations

import math

import numpy as np

CONST_REL = 1e-12
DEGENERATE_REL = 1e-20


# ------------------------------------------------------------------------------------------------
# calibrate
# ------------------------------------------------------------------------------------------------


def fit_denominator_ref(y):
    y = np.asarray(y, dtype=np.float64)
    ay = np.abs(y[np.isfinite(y)])
    if ay.size == 0:
        return 1.0
    med = float(np.percentile(ay, 50))
    if med > 0 and np.isfinite(med):
        return med
    mean = float(np.mean(ay))
    if mean > 0 and np.isfinite(mean):
        return mean
    return 1.0


def calibrate_ref(H, y, deg_rel=DEGENERATE_REL):
    H = np.asarray(H, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n_hyp = H.shape[0]
    a = np.ones(n_hyp)
    b = np.zeros(n_hyp)
    n_pairs = np.zeros(n_hyp, dtype=np.int64)
    ok = np.zeros(n_hyp, dtype=bool)
    err = np.full(n_hyp, np.nan)
    denom = fit_denominator_ref(y)
    for i in range(n_hyp):
        mask = np.isfinite(H[i]) & np.isfinite(y)
        h, yy = H[i][mask], y[mask]
        n_pairs[i] = h.size
        if h.size < 2:
            continue
        s = float(np.max(np.abs(h)))
        s = 1.0 if s == 0 else s
        hs = h / s
        with np.errstate(all="ignore"):
            if h.size == 2:
                shh = float(np.sum(hs * hs))
                slope = float(np.sum(hs * yy)) / shh if shh > 0 else 0.0
                off = 0.0
            else:
                dh = hs - hs.mean()
                sxx = float(np.sum(dh * dh))
                if sxx <= deg_rel * float(np.sum(hs * hs)):
                    slope, off = 0.0, float(yy.mean())
                else:
                    slope = float(np.sum(dh * (yy - yy.mean()))) / sxx
                    off = float(yy.mean()) - slope * float(hs.mean())
            r = slope * hs + off - yy
            rmax = float(np.max(np.abs(r)))
            rms = 0.0 if rmax == 0 else rmax * math.sqrt(float(np.mean((r / rmax) ** 2)))
            ai = slope / s
            e = rms / denom
        if np.isfinite(ai) and np.isfinite(off) and np.isfinite(e):
            a[i], b[i], err[i], ok[i] = ai, off, e, True
    return a, b, n_pairs, ok, err


def fit_filter_ref(err, ok, max_keep=4, threshold=0.75, min_keep=2):
    err = np.asarray(err, dtype=np.float64)
    ok = np.asarray(ok, dtype=bool)
    n = err.size
    valid = [i for i in range(n) if ok[i] and np.isfinite(err[i])]
    if len(valid) < min_keep:
        return np.ones(n, dtype=bool), True
    ranked = sorted(valid, key=lambda i: (err[i], i))
    passing = [i for i in ranked if err[i] <= threshold]
    chosen = passing[:max_keep] if len(passing) >= min_keep else ranked[:min_keep]
    keep = np.zeros(n, dtype=bool)
    keep[chosen] = True
    return keep, False


# ------------------------------------------------------------------------------------------------
# scores
# ------------------------------------------------------------------------------------------------


def _row_stats(p):
    """``(inv, mu, sd, maxabs)`` of finite values ``p``: moments of ``p * inv``, ``inv = 1 / maxabs``
    when the largest magnitude is outside [1e-100, 1e100], else 1."""
    maxabs = float(np.max(np.abs(p)))
    inv = 1.0
    if maxabs > 1e100 or 0 < maxabs < 1e-100:
        with np.errstate(all="ignore"):
            inv = 1.0 / maxabs
        inv = inv if np.isfinite(inv) else 1.0
    q = p * inv
    mu = float(np.mean(q))
    return inv, mu, float(np.sqrt(np.mean((q - mu) ** 2))), maxabs


def variance_scores_ref(P, const_rel=CONST_REL):
    P = np.asarray(P, dtype=np.float64)
    n_hyp, n = P.shape
    Z = np.full((n_hyp, n), np.nan)
    for i in range(n_hyp):
        fin = np.isfinite(P[i])
        if not fin.any():
            continue
        inv, mu, sd, maxabs = _row_stats(P[i][fin])
        Z[i, fin] = 0.0 if sd <= const_rel * maxabs * inv else (P[i][fin] * inv - mu) / sd
    out = np.full(n, np.nan)
    for j in range(n):
        z = Z[:, j][np.isfinite(Z[:, j])]
        if z.size >= 2:
            out[j] = np.mean((z - z.mean()) ** 2)
    return out


def pairwise_normalize_ref(P, const_rel=CONST_REL):
    P = np.asarray(P, dtype=np.float64)
    R = np.full(P.shape, np.nan)
    for i in range(P.shape[0]):
        fin = np.isfinite(P[i])
        if not fin.any():
            continue
        p = P[i][fin]
        q25, med, q75 = np.percentile(p, [25, 50, 75])
        scale = q75 - q25
        if not (scale > 0 and np.isfinite(scale)):
            inv, _, sd, maxabs = _row_stats(p)
            scale = 0.0 if sd <= const_rel * maxabs * inv else sd / inv
        if scale > 0 and np.isfinite(scale):
            with np.errstate(all="ignore"):
                R[i, fin] = (p - med) / scale
    return R


def pairwise_scores_ref(P, const_rel=CONST_REL):
    R = pairwise_normalize_ref(P, const_rel)
    n_hyp, n = R.shape
    out = np.full(n, np.nan)
    for j in range(n):
        diffs = [abs(R[i, j] - R[k, j]) for i in range(n_hyp) for k in range(i + 1, n_hyp)]
        diffs = [x for x in diffs if np.isfinite(x)]
        if diffs:
            out[j] = float(np.mean(diffs))
    return out


def pairwise_scores_fast_ref(P, const_rel=CONST_REL):
    """Pairwise score vectorized over points (one NumPy pass per hypothesis); for large committees."""
    R = pairwise_normalize_ref(P, const_rel)
    n_hyp, n = R.shape
    acc = np.zeros(n)
    cnt = np.zeros(n)
    with np.errstate(all="ignore"):
        for i in range(n_hyp - 1):
            d = np.abs(R[i + 1 :] - R[i])
            fin = np.isfinite(d)
            acc += np.where(fin, d, 0.0).sum(axis=0)
            cnt += fin.sum(axis=0)
        return np.where(cnt > 0, acc / np.maximum(cnt, 1), np.nan)


def finite_fraction_ref(P):
    P = np.asarray(P, dtype=np.float64)
    if P.shape[0] == 0:
        return np.zeros(P.shape[1])
    return np.isfinite(P).mean(axis=0)


# ------------------------------------------------------------------------------------------------
# rank regularization
# ------------------------------------------------------------------------------------------------


def ordinal_rank_ref(s):
    s = np.asarray(s, dtype=np.float64)
    rho = np.full(s.size, np.nan)
    fin = np.flatnonzero(np.isfinite(s))
    if fin.size == 1:
        rho[fin] = 1.0
    elif fin.size > 1:
        order = sorted(fin.tolist(), key=lambda j: (s[j], j))
        for r, j in enumerate(order):
            rho[j] = r / (fin.size - 1)
    return rho


def edge_weight_ref(U, edge_lo=0.08, edge_hi=0.5, power=1.5):
    U = np.asarray(U, dtype=np.float64)
    e = np.minimum(U, 1.0 - U).min(axis=1)
    return np.clip((e - edge_lo) / (edge_hi - edge_lo), 0.0, 1.0) ** power


def rank_regularize_ref(raw, U, v, edge_lo=0.08, edge_hi=0.5, power=1.5):
    return ordinal_rank_ref(raw) * edge_weight_ref(U, edge_lo, edge_hi, power) * np.asarray(v, dtype=np.float64)


# ------------------------------------------------------------------------------------------------
# selection
# ------------------------------------------------------------------------------------------------


def eligible_set_ref(s, k, top_fraction=0.25):
    s = np.asarray(s, dtype=np.float64)
    fin = [j for j in range(s.size) if np.isfinite(s[j])]
    nf = len(fin)
    m = min(max(int(math.ceil(nf * top_fraction)), min(k, nf)), nf)
    ranked = sorted(fin, key=lambda j: (-s[j], j))
    return np.array(sorted(ranked[:m]), dtype=np.int64)


def select_batch_ref(s, U, k, top_fraction=0.25, w_score=0.65, w_div=0.35):
    s = np.asarray(s, dtype=np.float64)
    U = np.asarray(U, dtype=np.float64)
    elig = eligible_set_ref(s, k, top_fraction)
    if elig.size == 0 or k == 0:
        return np.zeros(0, dtype=np.int64), elig
    se = s[elig]
    span = se.max() - se.min()
    sp = (se - se.min()) / span if span > 0 else np.ones(elig.size)
    picks = [int(elig[np.argmax(se)])]  # argmax: first (lowest index) maximum
    d = U.shape[1]
    while len(picks) < min(k, elig.size):
        best, best_j = -np.inf, -1
        for q, j in enumerate(elig):
            if j in picks:
                continue
            delta = min(np.linalg.norm(U[j] - U[p]) for p in picks) / math.sqrt(d)
            val = w_score * sp[q] + w_div * delta
            if val > best:
                best, best_j = val, int(j)
        picks.append(best_j)
    return np.array(picks, dtype=np.int64), elig


def select_random_ref(available, uniforms):
    idx = list(np.flatnonzero(np.asarray(available, dtype=bool)))
    n = len(idx)
    out = []
    for t in range(min(len(uniforms), n)):
        j = min(t + int(uniforms[t] * (n - t)), n - 1)
        idx[t], idx[j] = idx[j], idx[t]
        out.append(int(idx[t]))
    return np.array(out, dtype=np.int64)


# ------------------------------------------------------------------------------------------------
# whole step
# ------------------------------------------------------------------------------------------------


def acquisition_step_ref(H_obs, y_obs, H_pool, U_pool, method, k, pairwise_fast=False):
    """Planner step 2-6 with the twins above (paper constants)."""
    a, b, n_pairs, ok, err = calibrate_ref(H_obs, y_obs)
    keep, fallback = fit_filter_ref(err, ok)
    with np.errstate(all="ignore"):
        P = a[keep, None] * np.asarray(H_pool, dtype=np.float64)[keep] + b[keep, None]
    if method == "variance":
        raw = variance_scores_ref(P)
    elif pairwise_fast:
        raw = pairwise_scores_fast_ref(P)
    else:
        raw = pairwise_scores_ref(P)
    v = finite_fraction_ref(P)
    reg = rank_regularize_ref(raw, U_pool, v)
    picks, elig = select_batch_ref(reg, U_pool, k)
    return a, b, n_pairs, ok, err, keep, fallback, raw, v, reg, elig, picks


# ------------------------------------------------------------------------------------------------
# Vectorized NumPy versions (what a plain NumPy implementation of the step looks like; the
# benchmarks time these against the kernels, and the tests check them against the twins above)
# ------------------------------------------------------------------------------------------------


def calibrate_np_ref(H, y, deg_rel=DEGENERATE_REL):
    H = np.asarray(H, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    n_hyp = H.shape[0]
    M = np.isfinite(H) & np.isfinite(y)[None, :]
    n = M.sum(axis=1)
    with np.errstate(all="ignore"):
        s = np.where(M, np.abs(H), 0.0).max(axis=1, initial=0.0)
        s = np.where(s == 0, 1.0, s)
        hs = np.where(M, H / s[:, None], 0.0)
        yy = np.where(M, y[None, :], 0.0)
        nn = np.maximum(n, 1)
        mh = hs.sum(axis=1) / nn
        my = yy.sum(axis=1) / nn
        dh = np.where(M, hs - mh[:, None], 0.0)
        sxx = (dh * dh).sum(axis=1)
        sxy = (dh * np.where(M, yy - my[:, None], 0.0)).sum(axis=1)
        shh = (hs * hs).sum(axis=1)
        shy = (hs * yy).sum(axis=1)
        two = n == 2
        degenerate = sxx <= deg_rel * shh
        slope = np.where(two, np.where(shh > 0, shy / shh, 0.0), np.where(degenerate, 0.0, sxy / sxx))
        off = np.where(two, 0.0, np.where(degenerate, my, my - slope * mh))
        r = np.where(M, slope[:, None] * hs + off[:, None] - yy, 0.0)
        rmax = np.abs(r).max(axis=1, initial=0.0)
        rms = np.where(rmax == 0, 0.0, rmax * np.sqrt(((r / np.where(rmax == 0, 1.0, rmax)[:, None]) ** 2).sum(axis=1) / nn))
        a = slope / s
        err = rms / fit_denominator_ref(y)
    ok = (n >= 2) & np.isfinite(a) & np.isfinite(off) & np.isfinite(err)
    return (np.where(ok, a, 1.0), np.where(ok, off, 0.0), n.astype(np.int64), ok, np.where(ok, err, np.nan)[:n_hyp])


def _row_scale_np(P):
    """Per-row ``inv`` (1, or 1 / maxabs outside [1e-100, 1e100]) and finite mask."""
    fin = np.isfinite(P)
    maxabs = np.where(fin, np.abs(P), 0.0).max(axis=1, initial=0.0)
    with np.errstate(divide="ignore"):
        inv = np.where((maxabs > 1e100) | ((maxabs > 0) & (maxabs < 1e-100)), 1.0 / maxabs, 1.0)
    inv = np.where(np.isfinite(inv), inv, 1.0)
    return fin, maxabs, inv


def variance_scores_np_ref(P, const_rel=CONST_REL):
    P = np.asarray(P, dtype=np.float64)
    fin, maxabs, inv = _row_scale_np(P)
    with np.errstate(all="ignore"):
        Q = np.where(fin, P * inv[:, None], np.nan)
        mu = np.nanmean(Q, axis=1, keepdims=True) if P.shape[1] else np.zeros((P.shape[0], 1))
        sd = np.sqrt(np.nanmean((Q - mu) ** 2, axis=1, keepdims=True)) if P.shape[1] else np.zeros((P.shape[0], 1))
        constant = sd <= const_rel * (maxabs * inv)[:, None]
        Z = np.where(constant, np.where(fin, 0.0, np.nan), (Q - mu) / sd)
        cnt = np.isfinite(Z).sum(axis=0)
        zbar = np.nansum(Z, axis=0) / np.maximum(cnt, 1)
        var = np.nansum((Z - zbar) ** 2, axis=0) / np.maximum(cnt, 1)
    return np.where(cnt >= 2, var, np.nan)


def pairwise_scores_np_ref(P, const_rel=CONST_REL):
    P = np.asarray(P, dtype=np.float64)
    fin, maxabs, inv = _row_scale_np(P)
    with np.errstate(all="ignore"):
        Q = np.where(fin, P, np.nan)
        if P.shape[1] and P.shape[0]:
            import warnings

            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)
                q25, med, q75 = np.nanpercentile(Q, [25, 50, 75], axis=1)
                Qs = Q * inv[:, None]
                mu = np.nanmean(Qs, axis=1, keepdims=True)
                sd = np.sqrt(np.nanmean((Qs - mu) ** 2, axis=1))
        else:
            q25 = med = q75 = sd = np.zeros(P.shape[0])
        iqr = q75 - q25
        sd_scale = np.where(sd <= const_rel * maxabs * inv, 0.0, sd / inv)
        scale = np.where((iqr > 0) & np.isfinite(iqr), iqr, sd_scale)
        usable = (scale > 0) & np.isfinite(scale)
        R = np.where(usable[:, None], (Q - med[:, None]) / np.where(usable, scale, 1.0)[:, None], np.nan)
        acc = np.zeros(P.shape[1])
        cnt = np.zeros(P.shape[1])
        for i in range(P.shape[0] - 1):
            d = np.abs(R[i + 1 :] - R[i])
            f = np.isfinite(d)
            acc += np.where(f, d, 0.0).sum(axis=0)
            cnt += f.sum(axis=0)
        return np.where(cnt > 0, acc / np.maximum(cnt, 1), np.nan)


def rank_regularize_np_ref(raw, U, v, edge_lo=0.08, edge_hi=0.5, power=1.5):
    raw = np.asarray(raw, dtype=np.float64)
    fin = np.flatnonzero(np.isfinite(raw))
    rho = np.full(raw.size, np.nan)
    if fin.size == 1:
        rho[fin] = 1.0
    elif fin.size > 1:
        rho[fin[np.argsort(raw[fin], kind="stable")]] = np.arange(fin.size) / (fin.size - 1)
    return rho * edge_weight_ref(U, edge_lo, edge_hi, power) * v


def select_batch_np_ref(s, U, k, top_fraction=0.25, w_score=0.65, w_div=0.35):
    s = np.asarray(s, dtype=np.float64)
    fin = np.flatnonzero(np.isfinite(s))
    nf = fin.size
    m = min(max(int(math.ceil(nf * top_fraction)), min(k, nf)), nf)
    elig = np.sort(fin[np.argsort(-s[fin], kind="stable")[:m]])
    kk = min(k, m)
    if kk == 0:
        return np.zeros(0, dtype=np.int64), elig
    se = s[elig]
    span = se.max() - se.min()
    sp = (se - se.min()) / span if span > 0 else np.ones(m)
    Ue = U[elig]
    first = int(np.argmax(se))
    picks = [first]
    dmin = np.sqrt(((Ue - Ue[first]) ** 2).sum(axis=1))
    taken = np.zeros(m, dtype=bool)
    taken[first] = True
    inv = 1.0 / math.sqrt(U.shape[1])
    for _ in range(1, kk):
        val = np.where(taken, -np.inf, w_score * sp + w_div * dmin * inv)
        q = int(np.argmax(val))
        picks.append(q)
        taken[q] = True
        dmin = np.minimum(dmin, np.sqrt(((Ue - Ue[q]) ** 2).sum(axis=1)))
    return elig[np.array(picks)], elig


def acquisition_step_np_ref(H_obs, y_obs, H_pool, U_pool, method, k):
    """Planner step 2-6 in plain vectorized NumPy (paper constants)."""
    a, b, n_pairs, ok, err = calibrate_np_ref(H_obs, y_obs)
    keep, fallback = fit_filter_ref(err, ok)
    with np.errstate(all="ignore"):
        P = a[keep, None] * H_pool[keep] + b[keep, None]
    raw = variance_scores_np_ref(P) if method == "variance" else pairwise_scores_np_ref(P)
    v = finite_fraction_ref(P)
    reg = rank_regularize_np_ref(raw, U_pool, v)
    picks, elig = select_batch_np_ref(reg, U_pool, k)
    return a, b, n_pairs, ok, err, keep, fallback, raw, v, reg, elig, picks
