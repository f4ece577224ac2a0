"""bench.search_recovery: draws, a recovered law and bad arguments."""

from __future__ import annotations

import numpy as np

from bench import search_recovery
from etc_fast.tasks import get_task


def test_draws_stay_in_the_domains_and_repeat() -> None:
    task = get_task("gen-s0-0038")
    a = search_recovery.draw(task, 50, np.random.default_rng(1))
    b = search_recovery.draw(task, 50, np.random.default_rng(1))
    assert np.array_equal(a, b)
    for j, v in enumerate(task.variables):
        assert (a[:, j] >= v.low).all() and (a[:, j] <= v.high).all()


def test_a_product_of_powers_is_recovered_and_a_bad_weight_is_refused(capsys) -> None:
    assert search_recovery.recovered("gen-s0-0038", 14)  # power_product, one input
    assert search_recovery.main(["--n", "1", "--complexity-weight", "-1"]) == 2
    assert "must be positive" in capsys.readouterr().err
