"""kernels._vecmath against NumPy's elementary functions.

Measured on these sweeps (and on 2e5-point random sweeps), compiled and with
``NUMBA_DISABLE_JIT=1``: the largest difference from NumPy is 1 ulp for every function. Against
40-digit mpmath values on random and near-multiple-of-pi/4 points the largest errors were sin
0.75, cos 0.75, tan 0.96, asin 0.58, acos 0.55, atan 0.74, exp 0.78, log 0.74 ulp (NumPy:
0.50-0.75). The tests allow 2 ulp.
"""

import inspect

import numpy as np
import numpy.testing as npt
import pytest
from numba import config as numba_config

import kernels._vecmath as vm

JIT_OFF = numba_config.DISABLE_JIT
ULP = 2
# interpreted code is slow: sweep fewer points there
N = 1_500 if JIT_OFF else 40_000

FUNCS = {
    "sin": (vm.sin_inplace, np.sin),
    "cos": (vm.cos_inplace, np.cos),
    "tan": (vm.tan_inplace, np.tan),
    "asin": (vm.asin_inplace, np.arcsin),
    "acos": (vm.acos_inplace, np.arccos),
    "atan": (vm.atan_inplace, np.arctan),
    "exp": (vm.exp_inplace, np.exp),
    "log": (vm.log_inplace, np.log),
}


def apply(name, x):
    x = np.array(x, dtype=np.float64)
    y = x.copy()
    with np.errstate(all="ignore"):  # only the interpreted mode warns
        FUNCS[name][0](y, y.size)
        ref = FUNCS[name][1](x)
    return y, ref


def ulp_error(got, ref):
    """Elementwise |got - ref| in units of the spacing at ref (finite ref only)."""
    finite = np.isfinite(ref)
    err = np.zeros(ref.shape)
    err[finite] = np.abs(got[finite] - ref[finite]) / np.spacing(np.abs(ref[finite]))
    return err


def assert_like_numpy(name, x, ulp=ULP):
    got, ref = apply(name, x)
    npt.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=f"{name}: NaN positions")
    inf = np.isinf(ref)
    npt.assert_array_equal(got[inf], ref[inf], err_msg=f"{name}: infinities")
    zero = ref == 0
    npt.assert_array_equal(got[zero], 0.0, err_msg=f"{name}: zeros")
    npt.assert_array_equal(np.signbit(got[zero]), np.signbit(ref[zero]), err_msg=f"{name}: -0.0")
    err = ulp_error(got, ref)
    worst = int(np.argmax(err)) if err.size else 0
    assert err.size == 0 or err[worst] <= ulp, (
        f"{name}({x[worst]!r}) = {got[worst]!r}, NumPy {ref[worst]!r}: {err[worst]:.2f} ulp"
    )
    return err


def uniform(lo, hi, n=N, seed=0):
    return np.random.default_rng(seed).uniform(lo, hi, n)


def signed(x):
    return np.concatenate([x, -x])


def neighbours(x, k=2):
    """x and its k floating-point neighbours on each side."""
    out = [x]
    up, down = x.copy(), x.copy()
    for _ in range(k):
        up = np.nextafter(up, np.inf)
        down = np.nextafter(down, -np.inf)
        out += [up, down]
    return np.concatenate(out)


SPECIAL = np.array([0.0, -0.0, 5e-324, -5e-324, 2.2250738585072014e-308, 1e-300, -1e-300, 1e-20,
                    -1e-20, 1e-8, 3.7e-9, 0.5, -0.5, 1.0, -1.0, 2.0, -2.0, 10.0, 1e5, -1e5,
                    vm.TRIG_MAX, -vm.TRIG_MAX, np.nextafter(vm.TRIG_MAX, np.inf), 1e6, 1e22,
                    -1e22, 1e300, -1e300, 1.7976931348623157e308, np.inf, -np.inf, np.nan])


@pytest.mark.parametrize("name", list(FUNCS))
def test_special_values(name):
    assert_like_numpy(name, SPECIAL)


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_sweeps(name):
    assert_like_numpy(name, uniform(-7.0, 7.0))
    assert_like_numpy(name, uniform(-vm.TRIG_MAX, vm.TRIG_MAX, seed=1))
    assert_like_numpy(name, signed(np.geomspace(1e-12, 1e3, N // 4)))


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_near_multiples_of_half_pi(name):
    # the worst cases of the reduction: x as close as doubles get to k pi/2 and to k pi/4
    k = np.arange(-(N // 8), N // 8, dtype=np.float64)
    assert_like_numpy(name, neighbours(k * (np.pi / 2)))
    assert_like_numpy(name, neighbours(k * (np.pi / 4)))
    big = np.floor(np.geomspace(1.0, vm.TRIG_MAX / 1.6, N // 8))
    assert_like_numpy(name, neighbours(big * (np.pi / 2)))


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_trig_beyond_the_reduction_range_uses_libm(name):
    x = np.concatenate([uniform(-1e12, 1e12, 200), [1e17, 3e200, -1e300, 1e6, np.nextafter(
        vm.TRIG_MAX, np.inf), np.inf, np.nan, 0.5]])
    assert_like_numpy(name, x)  # the scalar pass is libm (NumPy's tan is its own SIMD loop)


@pytest.mark.parametrize("name", ["asin", "acos"])
def test_asin_acos_sweeps(name):
    assert_like_numpy(name, uniform(-1.0, 1.0))
    one = 1.0 - np.arange(N // 4) * 2.0**-53  # the last quarter-million-th below 1
    assert_like_numpy(name, np.concatenate([one, -one]))
    assert_like_numpy(name, neighbours(np.array([0.5, -0.5, 1.0, -1.0]), k=50))
    assert_like_numpy(name, signed(np.geomspace(1e-300, 1.0, N // 4)))
    # outside the domain
    got, _ = apply(name, np.array([1.0 + 2.0**-52, -1.0 - 2.0**-52, 2.0, -1e300, np.inf]))
    assert np.isnan(got).all()


def test_atan_sweeps():
    assert_like_numpy("atan", uniform(-4.0, 4.0))
    edges = np.array([0.4375, 0.6875, 1.1875, 2.4375, 1.0, 0.5, 1.5])
    assert_like_numpy("atan", neighbours(np.concatenate([edges, -edges]), k=50))
    assert_like_numpy("atan", signed(np.geomspace(5e-324, 1e308, N // 2)))


def test_exp_sweeps():
    assert_like_numpy("exp", uniform(-5.0, 5.0))
    assert_like_numpy("exp", uniform(-746.0, 710.0, seed=1))
    # overflow, the subnormal range and underflow
    assert_like_numpy("exp", np.linspace(-746.0, -707.0, N // 4))
    assert_like_numpy("exp", neighbours(np.array([709.782712893384, -745.1332191019411,
                                                  -745.1332191019412, -708.3964185322641]), 20))
    assert_like_numpy("exp", signed(np.geomspace(1e-300, 1e-3, N // 4)))
    got, _ = apply("exp", np.array([709.8, 1e300, np.inf, -746.0, -1e300, -np.inf, np.nan]))
    npt.assert_array_equal(got[:6], [np.inf] * 3 + [0.0] * 3)
    assert np.isnan(got[6])


def test_log_sweeps():
    assert_like_numpy("log", uniform(0.0, 4.0))
    assert_like_numpy("log", np.geomspace(5e-324, 1e308, N))
    assert_like_numpy("log", neighbours(np.array([1.0, np.sqrt(0.5), np.sqrt(2.0), 2.0]), k=50))
    assert_like_numpy("log", 1.0 + uniform(-1e-6, 1e-6, seed=2))
    got, _ = apply("log", np.array([0.0, -0.0, -1e-300, -1.0, -np.inf, np.inf, np.nan]))
    npt.assert_array_equal(got[:2], -np.inf)
    assert np.isnan(got[2:5]).all() and got[5] == np.inf and np.isnan(got[6])


@pytest.mark.parametrize("name", list(FUNCS))
def test_only_the_first_m_values_change(name):
    x = np.linspace(0.1, 0.9, 10)
    y = x.copy()
    FUNCS[name][0](y, 6)
    npt.assert_array_equal(y[6:], x[6:])
    npt.assert_allclose(y[:6], FUNCS[name][1](x[:6]), rtol=1e-15)


@pytest.mark.skipif(JIT_OFF, reason="JIT is disabled")
def test_helpers_compile_without_reassociation_or_signed_zero_folding():
    # the range reductions rely on evaluation order and on the sign of zero (module notes)
    from numba.core.registry import CPUDispatcher

    found = 0
    for _, obj in inspect.getmembers(vm):
        if isinstance(obj, CPUDispatcher):
            found += 1
            assert obj.targetoptions["fastmath"] == {"contract"}, obj
            assert obj.targetoptions["error_model"] == "numpy", obj
    assert found >= 8
