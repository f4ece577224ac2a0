"""Least-squares helpers shared by the sum and signed families of the symbolic search."""

from __future__ import annotations

import numpy as np

__all__ = ["project_out"]


def project_out(U: np.ndarray, t: np.ndarray, base: tuple[int, ...]):
    """``U`` and ``t`` with the span of the columns ``base`` projected out.

    Returns:
        ``(Ut, tr, nn, valid)``: the projected columns and target, the columns' norms, and which
        columns still carry something (norm above 1e-6, not in ``base``).
    """
    Q, _ = np.linalg.qr(U[:, list(base)])
    Ut = U - Q @ (Q.T @ U)
    tr = t - Q @ (Q.T @ t)
    nn = np.linalg.norm(Ut, axis=0)
    valid = nn > 1e-6
    valid[list(base)] = False
    return Ut, tr, nn, valid
