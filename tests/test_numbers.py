"""The simple-number ranges shared by the offline agent and the noise-aware planner (etc_fast.expr._numbers)."""

import math

import pytest

from etc_fast.expr import CONSTANTS, EXPONENTS, LITERALS, SimpleRange, fitted_numbers
from etc_fast.expr._numbers import literals


@pytest.mark.parametrize("v", [0.0, 1.0, -2.0, 0.5, 1 / 3, 0.3333333333333333, 2.75, -10.0, 0.25])
def test_constants_range_holds_quarters_and_thirds_up_to_ten(v):
    assert CONSTANTS.contains(v)


@pytest.mark.parametrize("v", [1.2, 0.1, 10.5, 12.0, 1.0007, 1.04e-14, 1e-10, math.inf, math.nan])
def test_constants_range_refuses_fifths_tenths_fitted_and_tiny_numbers(v):
    assert not CONSTANTS.contains(v)


def test_literal_and_exponent_ranges_add_fifths_and_tenths_with_their_own_bounds():
    assert LITERALS.contains(1.2) and LITERALS.contains(0.1) and LITERALS.contains(9.9)
    assert not LITERALS.contains(10.1) and not LITERALS.contains(0.05)
    assert EXPONENTS.contains(-5.9) and EXPONENTS.contains(6.0) and not EXPONENTS.contains(6.5)


def test_a_number_within_a_relative_1e9_of_a_fraction_is_that_fraction():
    r = SimpleRange("t", (3,), 10.0)
    assert r.contains(2 / 3 * (1 + 5e-10)) and not r.contains(2 / 3 * (1 + 5e-9))


def test_literals_skip_names_and_attributes():
    assert literals("n1*I_0 + np.e + 2.5e-3*x**.5 - 7") == [2.5e-3, 0.5, 7.0]


def test_fitted_numbers_counts_what_the_range_does_not_hold():
    text = "1.2*x**1.5 + 1.04e-14*y - 0.3333333333333333*z + 3.71"
    assert fitted_numbers(text, LITERALS) == 2  # 1.04e-14, 3.71
    assert fitted_numbers(text, CONSTANTS) == 3  # 1.2 too
