"""kernels.cexp (compound-family screening errors) against its NumPy twin and the search's own screen."""

from __future__ import annotations

import numpy as np
import pytest

from kernels.cexp import KINDS, _screen_errors, screen_errors
from tests._ref_cexp import screen_errors_ref
from tests.kernels._jit_checks import assert_safe_jit_options, needs_jit


def _problem(seed: int, law):
    rng = np.random.default_rng(seed)
    A = rng.uniform(0.5, 3.0, size=(18, 2))
    y = law(A)
    NV = np.stack([A[:, 0], A[:, 1], A[:, 0] * A[:, 1], A[:, 1] ** -0.5])
    MV = np.stack([np.ones(18), A[:, 0], A[:, 0] ** 2])
    B = 400
    li, mi = rng.integers(0, NV.shape[0], B), rng.integers(0, MV.shape[0], B)
    g = rng.normal(scale=1.5, size=B)
    li[0], mi[0], g[0] = 1, 1, -1.3  # the truth of the first law
    return A, y, NV, MV, li, g, mi


LAWS = [lambda A: 2.0 * A[:, 0] * (1.0 + 0.5 * np.exp(-1.3 * A[:, 1])),
        lambda A: -3.0 * A[:, 0] / (1.0 + 0.2 * np.exp(0.7 * A[:, 0] * A[:, 1])),
        lambda A: 2.0 * A[:, 0] * (1.0 + 0.5 / (1.0 + 0.4 * np.exp(-1.3 * A[:, 1])))]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("law", [0, 1, 2])
def test_matches_numpy_twin(kind, law):
    _A, y, NV, MV, li, g, mi = _problem(law, LAWS[law])
    got = screen_errors(kind, y, NV, MV, li, g, mi)
    ref = screen_errors_ref(kind, y, NV, MV, li, g, mi)
    assert got.shape == ref.shape and np.all(np.isfinite(got))
    # elimination vs LAPACK's LU on the same regularised normal equations: rounding only where the
    # problem is well conditioned (the linearised Moebius columns M E and y E are close to collinear,
    # so its errors move by up to 1e-5 relative). Where the Moebius constants divide by a vanishing
    # c2 (a law of another family), the error is of order one or, near an exact fit, set by the
    # 1e-13 regularisation: both sides then agree that the guess nearly fits
    good = (ref > 1e-4) & (ref < 0.05)
    np.testing.assert_allclose(got[good], ref[good], rtol=1e-9 if kind != "mobius" else 1e-5, atol=1e-12)
    near = ref <= 1e-4
    assert np.all(got[near] <= 1e-4)
    assert np.argsort(got, kind="stable")[:20].tolist() == np.argsort(ref, kind="stable")[:20].tolist()


@pytest.mark.parametrize(("kind", "law"), [("expoff", 0), ("mobius", 2)])
def test_exact_family_member_scores_zero(kind, law):
    _A, y, NV, MV, li, g, mi = _problem(0, LAWS[law])
    assert screen_errors(kind, y, NV, MV, li[:1], g[:1], mi[:1])[0] < 1e-10


def test_non_finite_guess_scores_as_nowhere_finite():
    _A, y, NV, MV, li, g, mi = _problem(0, LAWS[0])
    g = g.copy()
    g[3] = 1e6  # exp overflows: the normal equations are not finite
    got = screen_errors("expoff", y, NV, MV, li, g, mi)
    assert got[3] == pytest.approx(10.0)
    assert got[3] == pytest.approx(screen_errors_ref("expoff", y, NV, MV, li, g, mi)[3])


@pytest.mark.parametrize("kind", ["expoff", "logistic"])
def test_a_finite_exponential_whose_square_overflows_scores_as_numpy_does(kind):
    """exp(g N) near 1e250 is finite, its column's squared norm is not: the column scales to 0 and
    the guess is scored as the family without that term (NumPy's screen does the same). The
    scaled columns are stored before they are multiplied, so fast-math cannot fold the two
    quotients of a product into one quotient of two overflowing products (that scored such a
    guess 10, as if nowhere finite)."""
    _A, y, NV, MV, li, g, mi = _problem(0, LAWS[0])
    g = g.copy()
    g[:40] = 580.0 / NV[li[:40]].max(axis=1)  # the largest exp(g N) of each guess: about 1e252
    got = screen_errors(kind, y, NV, MV, li[:40], g[:40], mi[:40])
    with np.errstate(all="ignore"):
        ref = screen_errors_ref(kind, y, NV, MV, li[:40], g[:40], mi[:40])
    assert np.all(np.isfinite(ref)) and np.all(ref < 10.0)
    np.testing.assert_allclose(got, ref, rtol=1e-9)


def test_search_screen_uses_the_kernel_with_the_same_numbers():
    from etc_fast.policies.symbolic import _expfamilies as E

    A, y, NV, MV, li, g, mi = _problem(1, LAWS[1])
    for kind in KINDS:
        fast = E._screen_errors_fast(kind, A, y, li, g, mi, NV, MV, np.arange(2))
        slow = E._screen_errors(kind, A, y, li, g, mi, NV, MV, np.arange(2))
        good = slow < 0.05
        np.testing.assert_allclose(fast[good], slow[good], rtol=1e-5, atol=1e-12)


def test_bad_input():
    _A, y, NV, MV, li, g, mi = _problem(0, LAWS[0])
    with pytest.raises(ValueError, match="kind"):
        screen_errors("gompertz", y, NV, MV, li, g, mi)
    with pytest.raises(ValueError, match="columns"):
        screen_errors("expoff", y[:-1], NV, MV, li, g, mi)
    with pytest.raises(ValueError, match="one entry per guess"):
        screen_errors("expoff", y, NV, MV, li[:-1], g, mi)
    with pytest.raises(ValueError, match="outside"):
        screen_errors("expoff", y, NV, MV, li + 10, g, mi)


@needs_jit
def test_jit_options():
    assert_safe_jit_options(_screen_errors)
