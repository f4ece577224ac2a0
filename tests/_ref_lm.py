"""NumPy twin of :func:`kernels.lm.lm_steps` (damped normal equations solved by np.linalg.solve)."""

from __future__ import annotations

import numpy as np


def lm_steps_ref(J: np.ndarray, r: np.ndarray, lam: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    B, _n, p = J.shape
    A = np.einsum("bki,bkj->bij", J, J)
    g = np.einsum("bki,bk->bi", J, r)
    delta = np.zeros((B, p))
    ok = np.zeros(B, dtype=bool)
    for b in range(B):
        if not (np.all(np.isfinite(A[b])) and np.all(np.isfinite(g[b])) and np.isfinite(lam[b])):
            continue
        M = A[b] + lam[b] * np.diag(np.maximum(np.diag(A[b]), 1e-300))
        if np.any(np.linalg.eigvalsh(M) <= 0):
            continue
        delta[b] = np.linalg.solve(M, -g[b])
        ok[b] = True
    return delta, ok
