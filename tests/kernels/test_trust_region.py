"""kernels.trust_region (More's trust-region steps of many problems) against its NumPy twin and SciPy."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize._lsq.common import solve_lsq_trust_region

from kernels.trust_region import trust_region_steps
from tests._ref_trust_region import trust_region_steps_ref


def _problems(seed, B=40, m=15, k=5):
    """Random Jacobians with ``n`` free columns anywhere (the others held), some rank-deficient,
    residuals, radii from tiny to huge, last alphas 0 or positive. Also returns each problem's
    free columns."""
    rng = np.random.default_rng(seed)
    n = rng.integers(0, k + 1, B)
    cols = [np.sort(rng.permutation(k)[:nb]) for nb in n]
    J = rng.normal(size=(B, m, k)) * 10.0 ** rng.uniform(-3, 3, (B, 1, k))
    free = np.zeros((B, k), dtype=bool)
    for b, c in enumerate(cols):
        free[b, c] = True
        if len(c) >= 2 and rng.random() < 0.2:
            J[b, :, c[0]] = J[b, :, c[1]]  # two equal columns: rank-deficient
    J = np.where(free[:, None, :], J, 0.0)
    f = rng.normal(size=(B, m)) * 10.0 ** rng.uniform(-2, 2, (B, 1))
    # as the lockstep calibration builds them: each problem's SVD on its free columns, its
    # singular values first, its right singular vectors' rows at those columns (zero elsewhere)
    uf, s, V = np.zeros((B, k)), np.zeros((B, k)), np.zeros((B, k, k))
    for b, c in enumerate(cols):
        if len(c):
            u, sb, vt = np.linalg.svd(J[b][:, c], full_matrices=False)
            uf[b, :len(c)], s[b, :len(c)] = u.T @ f[b], sb
            V[b][np.ix_(c, np.arange(len(c)))] = vt.T
    Delta = 10.0 ** rng.uniform(-4, 3, B)
    alpha = np.where(rng.random(B) < 0.5, 0.0, 10.0 ** rng.uniform(-3, 3, B))
    return n, m, uf, s, V, Delta, alpha, J, f, cols


@pytest.mark.parametrize("seed", range(5))
def test_matches_numpy_twin(seed):
    n, m, uf, s, V, Delta, alpha, _, _, _ = _problems(seed)
    step, al = trust_region_steps(n, m, uf, s, V, Delta, alpha)
    step_ref, al_ref = trust_region_steps_ref(n, m, uf, s, V, Delta, alpha)
    np.testing.assert_allclose(step, step_ref, rtol=1e-9, atol=1e-12 * np.abs(step_ref).max())
    np.testing.assert_allclose(al, al_ref, rtol=1e-9, atol=1e-300)
    assert np.all(step[n == 0] == 0.0)


@pytest.mark.parametrize("seed", range(5))
def test_is_scipys_step_on_each_problems_free_columns(seed):
    n, m, _, _, _, Delta, alpha, J, f, cols = _problems(seed)
    step, al = trust_region_steps(*_problems(seed)[:7])
    for b in np.flatnonzero(n > 0):
        Jb = J[b][:, cols[b]]
        u, s, vt = np.linalg.svd(Jb, full_matrices=False)
        p, a, _ = solve_lsq_trust_region(int(n[b]), m, u.T @ f[b], s, vt.T, Delta[b], initial_alpha=alpha[b])
        np.testing.assert_allclose(step[b, cols[b]], p, rtol=1e-8, atol=1e-12 * max(np.abs(p).max(), 1e-300))
        assert np.all(np.delete(step[b], cols[b]) == 0.0)  # a held parameter does not move
        assert al[b] == pytest.approx(a, rel=1e-8, abs=1e-9 * s[0] ** 2)  # alpha weighs against s**2
        assert np.linalg.norm(step[b]) <= Delta[b] * (1 + 1e-12)


def test_bad_shapes_and_counts():
    n, m, uf, s, V, Delta, alpha, _, _, _ = _problems(0, B=3)
    with pytest.raises(ValueError, match="must match"):
        trust_region_steps(n, m, uf[:, :2], s, V, Delta, alpha)
    with pytest.raises(ValueError, match=r"n must lie in \[0, 5\]"):
        trust_region_steps(n + 6, m, uf, s, V, Delta, alpha)
