"""Plain NumPy statements of the module statistics, used to check the report's numbers by hand."""

from __future__ import annotations

import itertools

import numpy as np


def bootstrap_means(effects, idx):
    """Mean effect of each resample; ``idx`` int[n_draws, n] are the drawn module indices."""
    e = np.asarray(effects, dtype=np.float64)
    return np.array([e[row].mean() for row in idx])


def leave_one_out(effects):
    e = np.asarray(effects, dtype=np.float64)
    means = [np.delete(e, i).mean() for i in range(e.size)]
    return min(means), max(means)


def sign_flip(effects):
    """Exact two-sided sign-flip p-value by enumerating every sign vector."""
    e = np.asarray(effects, dtype=np.float64)
    obs = abs(e.sum())
    hits = 0
    total = 0
    for signs in itertools.product((1.0, -1.0), repeat=e.size):
        total += 1
        hits += abs((np.array(signs) * e).sum()) >= obs - 1e-9
    return hits / total
