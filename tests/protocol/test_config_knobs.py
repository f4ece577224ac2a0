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
