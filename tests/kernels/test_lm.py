"""kernels.lm (batched Levenberg-Marquardt steps) against its NumPy twin, and the batched driver."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.lm import _lm_steps, lm_steps
from tests._ref_lm import lm_steps_ref
from tests.kernels._jit_checks import assert_safe_jit_options, needs_jit


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_matches_numpy_twin(seed):
    rng = np.random.default_rng(seed)
    J = rng.normal(size=(7, 12, 3))
    r = rng.normal(size=(7, 12))
    lam = 10.0 ** rng.uniform(-6, 2, size=7)
    J[3] = 0.0  # singular: floored diagonal keeps it definite, zero step
    J[5, 0, 0] = np.nan  # not finite: not ok
    d, ok = lm_steps(J, r, lam)
    d_ref, ok_ref = lm_steps_ref(J, r, lam)
    assert ok.tolist() == ok_ref.tolist()
    np.testing.assert_allclose(d, d_ref, rtol=1e-10, atol=1e-12)  # Cholesky vs LU: rounding only


def test_bad_shapes():
    with pytest.raises(ValueError):
        lm_steps(np.zeros((2, 3, 1)), np.zeros((2, 4)), np.zeros(2))


def test_batched_lm_fits_many_problems():
    from etc_fast.policies.symbolic._lsq import batched_lm

    x = np.linspace(0.1, 3, 20)
    truth = np.array([[1.5, -0.7], [0.3, 2.0], [2.0, 0.1]])

    def resid(P, which):
        return P[:, :1] * np.exp(P[:, 1:2] * x) - truth[which, :1] * np.exp(truth[which, 1:2] * x)

    X, R = batched_lm(resid, np.array([[1.0, -0.5], [0.5, 1.5], [1.0, 0.0]]), 60)
    np.testing.assert_allclose(X, truth, rtol=1e-8)
    assert np.max(np.abs(R)) < 1e-8


@needs_jit
def test_jit_options():
    assert_safe_jit_options(_lm_steps)
