"""Protocol knobs are validated with errors that name the knob."""

import pytest

from etc_fast.protocol import get_configuration
from etc_fast.protocol._baseline import MAX_EXPERIMENT_POINTS, request_cap


@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "many"])
def test_max_experiment_points_must_be_positive_int(bad):
    with pytest.raises(ValueError, match="max_experiment_points"):
        get_configuration("baseline_n", name="capped", max_experiment_points=bad)


def test_request_cap_default_and_override():
    assert request_cap(get_configuration("baseline_n")) == MAX_EXPERIMENT_POINTS
    assert request_cap(get_configuration("baseline_n", name="capped", max_experiment_points=7)) == 7


@pytest.mark.parametrize(("knob", "bad"), [("pool_size", 2**30), ("pool_size", 4), ("exploration_turns", 10**6),
                                           ("baseline_rounds", 0), ("batch_cap", 10**9), ("bootstrap_min", True)])
def test_integer_knobs_have_ranges(knob, bad):
    with pytest.raises(ValueError, match=rf"{knob} must be an integer from"):
        get_configuration("variance_c", name="knob", **{knob: bad})


def test_paper_values_are_inside_the_ranges():
    cfg = get_configuration("variance_c", name="big", pool_size=2**16, exploration_turns=50, batch_cap=16)
    assert cfg.pool_size == 65536
