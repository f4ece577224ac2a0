"""The search's libraries stay within their stated counts as the number of inputs grows."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from etc_fast.policies.symbolic._search import SPARSE_LEVEL, SearchLimits, _library


@pytest.mark.parametrize("m", range(1, 13))
@pytest.mark.parametrize(("centred", "half_width", "field"), [(False, 3.0, "exp_library"), (True, 2.5, "sum_library"),
                                                             (False, 2.0, "ratio_library")])
def test_library_never_exceeds_its_cap(m, centred, half_width, field):
    cap = getattr(SearchLimits(), field)
    center = np.linspace(-1.0, 2.0, m) if centred else None
    E = _library(m, center, half_width, cap)
    assert E.shape[1] == m and 1 <= E.shape[0] <= cap
    assert len({tuple(r) for r in E.tolist()}) == E.shape[0]  # no monomial twice
    assert np.all(np.abs(E) <= 4.0) and np.all(E * 2 == np.round(E * 2))  # half-integers in [-4, 4]


def test_small_inputs_keep_the_whole_grid():
    # where the grid fits the cap, the library is the whole product grid in its usual order
    E = _library(3, None, 2.0, 1200)
    axis = np.arange(-4, 5) / 2.0
    assert E.tolist() == [list(c) for c in itertools.product(axis, axis, axis)]


def test_ten_inputs_get_every_monomial_that_moves_two_exponents():
    m, cap = 10, SearchLimits().ratio_library
    E = _library(m, None, 2.0, cap)
    moved = np.count_nonzero(E, axis=1)
    assert moved.max() == SPARSE_LEVEL
    # every pair of inputs appears with every sign pattern of its two moved exponents
    pairs = {tuple(np.flatnonzero(r)) for r in E if np.count_nonzero(r) == 2}
    assert len(pairs) == m * (m - 1) // 2
    assert [0.0] * m == E[0].tolist()  # the centre comes first
