"""NumPy twin of :func:`kernels.cexp.screen_errors` (whole-batch array operations, LAPACK's solve)."""

from __future__ import annotations

import numpy as np


def screen_errors_ref(kind: str, y, NV, MV, li, g, mi) -> np.ndarray:
    M, N = MV[mi], NV[li]
    with np.errstate(all="ignore"):
        E = np.exp(g[:, None] * N)
        yb = np.broadcast_to(y, M.shape)
        cols = {"expoff": [M, M * E], "logistic": [M, -yb * E], "mobius": [M, M * E, -yb * E]}[kind]
        C = np.stack(cols, -1) / np.abs(y)[None, :, None]
        s = np.sqrt(np.sum(C * C, axis=1))
        s = np.where(s > 0, s, 1.0)
        Cs = C / s[:, None, :]
        G = np.einsum("bnk,bnj->bkj", Cs, Cs) + 1e-13 * np.eye(C.shape[2])[None]
        r = np.einsum("bnk,n->bk", Cs, np.sign(y))
        x = np.full(r.shape, np.nan)
        ok = np.all(np.isfinite(G), axis=(1, 2)) & np.all(np.isfinite(r), axis=1)
        x[ok] = np.linalg.solve(G[ok], r[ok][..., None])[..., 0]
        x = x / s
        if kind == "expoff":
            pred = x[:, :1] * M + x[:, 1:2] * M * E
        elif kind == "logistic":
            pred = x[:, :1] * M / (1.0 + x[:, 1:2] * E)
        else:
            c0 = x[:, 1:2] / x[:, 2:3]
            pred = M * (c0 + (x[:, :1] - c0) / (1.0 + x[:, 2:3] * E))
        d = (pred - y) / np.abs(y)
        d = np.where(np.isfinite(d), np.minimum(np.abs(d), 10.0), 10.0)
    return np.sqrt(np.mean(d * d, axis=1))
