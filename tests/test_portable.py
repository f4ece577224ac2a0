"""etc_fast._portable: exactly rounded building blocks behind the grids and pools."""

from __future__ import annotations

from decimal import Context, Decimal

import numpy as np
import pytest

from etc_fast._portable import exact_log, linear_uniform, log_uniform, portable_exp

_CTX = Context(prec=50)


def _ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    return np.abs(got - want) / np.spacing(np.abs(want))


def test_portable_exp_within_one_ulp_of_correctly_rounded():
    x = np.random.default_rng(0).uniform(-700, 700, 4000)
    x = np.concatenate([x, np.linspace(-1, 1, 401), [0.0, -0.0, 1e-300, np.log(2) / 2]])
    want = np.array([float(Decimal(float(v)).exp(_CTX)) for v in x])
    assert _ulps(portable_exp(x), want).max() <= 1.0


def test_portable_exp_refuses_out_of_range():
    with pytest.raises(ValueError, match="700"):
        portable_exp(np.array([800.0]))
    with pytest.raises(ValueError):
        portable_exp(np.array([np.nan]))


@pytest.mark.parametrize("v", [1e-300, 1e-3, 0.5, 1.0, 2.0, 10.0, 6.02e23, 1e300])
def test_exact_log_correctly_rounded(v):
    assert exact_log(v) == float(Decimal(v).ln(_CTX))


def test_exact_log_refuses_non_positive():
    for bad in (0.0, -1.0, float("nan")):
        with pytest.raises(ValueError):
            exact_log(bad)


def test_maps_hit_the_ends_and_stay_inside():
    u = np.linspace(0.0, 1.0, 1001)
    for low, high in ((1e-3, 1e3), (2.5, 2.6), (1e8, 1e10), (1e-12, 1.0)):
        x = log_uniform(u, low, high)
        assert x[0] == pytest.approx(low, rel=1e-14) and x[-1] == pytest.approx(high, rel=1e-14)
        assert (x >= low).all() and (x <= high).all() and (np.diff(x) >= 0).all()
        np.testing.assert_allclose(np.log(x), np.log(low) + u * (np.log(high) - np.log(low)), rtol=1e-14, atol=1e-14)
    x = linear_uniform(u, -2.0, 5.0)
    assert x[0] == -2.0 and x[-1] == 5.0 and (np.diff(x) > 0).all()
