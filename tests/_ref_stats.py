"""NumPy twins of :mod:`kernels.stats`."""

import itertools

import numpy as np


def module_bootstrap_interval_ref(effects, n_draws=10000, seed=0, level=0.95):
    """Resample with fancy indexing, mean along rows, percentile interval."""
    e = np.asarray(effects, dtype=np.float64)
    idx = np.random.default_rng(seed).integers(0, e.shape[0], size=(n_draws, e.shape[0]))
    means = e[idx].mean(axis=1)
    alpha = (1.0 - level) / 2.0
    lo, hi = np.percentile(means, [100 * alpha, 100 * (1 - alpha)])
    return float(lo), float(hi)


def leave_one_out_range_ref(effects):
    """Delete each module and average the rest."""
    e = np.asarray(effects, dtype=np.float64)
    means = [np.delete(e, i).mean() for i in range(e.shape[0])]
    return float(min(means)), float(max(means))


def sign_flip_pvalue_ref(effects):
    """Build every sign vector explicitly and compare |mean| to the observed |mean|."""
    e = np.asarray(effects, dtype=np.float64)
    signs = np.array(list(itertools.product((1.0, -1.0), repeat=e.shape[0])))
    means = np.abs(signs @ e) / e.shape[0]
    return float(np.mean(means >= abs(e.mean()) - 1e-12))


def module_resample_means_ref(values, n_draws=10000, seed=0):
    """Fancy-index whole rows (a module's columns move together), mean along the resample axis."""
    v = np.asarray(values, dtype=np.float64)
    idx = np.random.default_rng(seed).integers(0, v.shape[0], size=(n_draws, v.shape[0]))
    return v[idx].mean(axis=1)
