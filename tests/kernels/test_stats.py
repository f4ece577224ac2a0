"""kernels.stats against its NumPy twins (tests/_ref_stats.py) and the paper's S4.1 values."""

import numpy as np
import numpy.testing as npt
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from kernels.stats import leave_one_out_range, module_bootstrap_interval, module_resample_means, sign_flip_pvalue
from tests.reference import (
    leave_one_out_range_ref,
    module_bootstrap_interval_ref,
    module_resample_means_ref,
    sign_flip_pvalue_ref,
)

# -- sign flip ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "effects, expected",
    [
        ([12.5] * 5 + [0.0] * 7, 0.0625),  # five equal positive modules, seven ties
        ([25.0, 25.0] + [0.0] * 10, 0.5),  # two positive modules, ten ties
        ([0.0] * 12, 1.0),  # nothing happens: every assignment ties
        ([1.0], 1.0),
        ([1.0, 2.0, 3.0], 2 / 8),  # only all-plus and all-minus reach |mean| = 2
    ],
)
def test_sign_flip_closed_form(effects, expected):
    assert sign_flip_pvalue(effects) == expected
    assert sign_flip_pvalue_ref(effects) == expected


def test_sign_flip_paper_mixed_case():
    # four positive, one negative, seven ties (GPT-4.1-mini with an interpreter in the paper)
    effects = [16.7, 33.3, 50.0, 16.7, -16.7] + [0.0] * 7
    assert sign_flip_pvalue(effects) == sign_flip_pvalue_ref(effects)


def test_sign_flip_limits():
    with pytest.raises(ValueError, match="at most 24"):
        sign_flip_pvalue(np.ones(25))
    with pytest.raises(ValueError, match="at least 1"):
        sign_flip_pvalue([])
    with pytest.raises(ValueError, match="finite"):
        sign_flip_pvalue([1.0, np.nan])
    with pytest.raises(ValueError, match="one-dimensional"):
        sign_flip_pvalue(np.ones((2, 2)))


@settings(max_examples=60, deadline=None, derandomize=True)
@given(hnp.arrays(np.float64, st.integers(1, 10),
                  elements=st.one_of(st.sampled_from([0.0, 12.5, -12.5, 25.0, 8.3]),
                                     st.floats(-100, 100))))
def test_sign_flip_matches_twin(effects):
    p = sign_flip_pvalue(effects)
    assert p == sign_flip_pvalue_ref(effects)
    assert 0.0 < p <= 1.0
    assert sign_flip_pvalue(-effects) == p  # two-sided
    assert sign_flip_pvalue(effects[::-1]) == p  # order of modules does not matter


# -- module resampling ------------------------------------------------------------------------------


def test_bootstrap_matches_twin_at_paper_size():
    effects = np.array([12.5, 25.0, 0.0, 37.5, 0.0, 12.5, 0.0, 0.0, 50.0, 0.0, 12.5, 0.0])
    got = module_bootstrap_interval(effects, n_draws=10000, seed=0)
    ref = module_bootstrap_interval_ref(effects, n_draws=10000, seed=0)
    npt.assert_allclose(got, ref, rtol=1e-12)
    lo, hi = got
    assert lo <= effects.mean() <= hi


def test_bootstrap_constant_effects_and_single_module():
    assert module_bootstrap_interval([5.0] * 12) == (5.0, 5.0)
    assert module_bootstrap_interval([3.0], n_draws=10) == (3.0, 3.0)


def test_bootstrap_depends_on_seed_and_level():
    e = np.arange(12.0)
    a = module_bootstrap_interval(e, seed=0)
    assert module_bootstrap_interval(e, seed=0) == a
    assert module_bootstrap_interval(e, seed=1) != a
    lo50, hi50 = module_bootstrap_interval(e, level=0.5)
    assert a[0] <= lo50 <= hi50 <= a[1]


def test_bootstrap_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n_draws"):
        module_bootstrap_interval([1.0, 2.0], n_draws=0)
    with pytest.raises(ValueError, match="level"):
        module_bootstrap_interval([1.0, 2.0], level=1.0)
    with pytest.raises(ValueError, match="finite"):
        module_bootstrap_interval([1.0, np.inf])


@settings(max_examples=40, deadline=None, derandomize=True)
@given(hnp.arrays(np.float64, st.integers(1, 15), elements=st.floats(-100, 100)),
       st.integers(1, 500), st.integers(0, 2**32), st.floats(0.05, 0.99))
def test_bootstrap_matches_twin(effects, n_draws, seed, level):
    got = module_bootstrap_interval(effects, n_draws=n_draws, seed=seed, level=level)
    ref = module_bootstrap_interval_ref(effects, n_draws=n_draws, seed=seed, level=level)
    npt.assert_allclose(got, ref, rtol=1e-12, atol=1e-12)
    assert got[0] <= got[1]


# -- resample means (several columns, one set of resamples) ----------------------------------------


def test_resample_means_match_twin_and_the_interval():
    c = np.array([3.0, 0.0, 2.0, 3.0, 1.0, 0.0, 3.0, 2.0, 0.0, 1.0, 3.0, 1.0])
    n = np.array([3.0, 3.0, 3.0, 3.0, 2.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 1.0])
    got = module_resample_means(np.column_stack([c, n]), n_draws=2000, seed=0)
    npt.assert_allclose(got, module_resample_means_ref(np.column_stack([c, n]), 2000, 0), rtol=1e-12)
    assert got.shape == (2000, 2)
    # a one-dimensional column is the first column, and its percentiles are the interval's
    one = module_resample_means(c, n_draws=2000, seed=0)
    npt.assert_allclose(one, got[:, 0], rtol=0, atol=0)
    npt.assert_allclose(np.percentile(one, [2.5, 97.5]), module_bootstrap_interval(c, 2000, 0), rtol=1e-12)
    # the columns share their resamples: a module's trials move with its credits
    ratio = got[:, 0] / got[:, 1]
    assert np.all((ratio >= 0.0) & (ratio <= 1.0))


def test_resample_means_rejects_bad_arguments():
    with pytest.raises(ValueError, match="n_draws"):
        module_resample_means([1.0, 2.0], n_draws=0)
    with pytest.raises(ValueError, match="finite"):
        module_resample_means(np.array([[1.0, np.nan]]))
    with pytest.raises(ValueError, match="at least one module"):
        module_resample_means(np.empty((0, 2)))
    with pytest.raises(ValueError, match="two-dimensional"):
        module_resample_means(np.ones((2, 2, 2)))


@settings(max_examples=40, deadline=None, derandomize=True)
@given(hnp.arrays(np.float64, st.tuples(st.integers(1, 15), st.integers(1, 4)), elements=st.floats(-100, 100)),
       st.integers(1, 300), st.integers(0, 2**32))
def test_resample_means_match_twin(values, n_draws, seed):
    got = module_resample_means(values, n_draws=n_draws, seed=seed)
    npt.assert_allclose(got, module_resample_means_ref(values, n_draws, seed), rtol=1e-12, atol=1e-12)


# -- leave one out ---------------------------------------------------------------------------------


def test_leave_one_out_by_hand():
    assert leave_one_out_range([1.0, 2.0, 3.0]) == (1.5, 2.5)
    # the paper's shape: five positive modules and seven ties stay positive without any one
    lo, hi = leave_one_out_range([12.5] * 5 + [0.0] * 7)
    assert lo == pytest.approx(50.0 / 11) and hi == pytest.approx(62.5 / 11)
    assert leave_one_out_range([0.0] * 12) == (0.0, 0.0)
    with pytest.raises(ValueError, match="at least 2"):
        leave_one_out_range([1.0])


@settings(max_examples=60, deadline=None, derandomize=True)
@given(hnp.arrays(np.float64, st.integers(2, 20),
                  elements=st.one_of(st.sampled_from([0.0, 12.5]), st.floats(-1e6, 1e6))))
def test_leave_one_out_matches_twin(effects):
    got = leave_one_out_range(effects)
    ref = leave_one_out_range_ref(effects)
    npt.assert_allclose(got, ref, rtol=1e-12, atol=1e-9)
    assert got[0] <= got[1]
