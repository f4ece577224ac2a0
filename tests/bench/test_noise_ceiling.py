"""The oracle analysis of bench/noise_ceiling.py (docs/noise.md): its departure measure and CLI."""

from __future__ import annotations

import numpy as np
import pytest

from bench.noise_ceiling import departure, main
from etc_fast.sampling import candidate_pool
from etc_fast.tasks import get_task


def test_a_power_law_departs_from_itself_by_rounding_only():
    task = get_task("m0_gravity", "easy", "v0")  # C m1 m2 / r**1.5: a power law
    dev = departure(task, candidate_pool(task, 0))
    assert np.nanmax(np.abs(dev)) < 1e-9


def test_a_law_beyond_a_power_law_departs_where_its_extra_term_shows():
    task = get_task("m6_underdamped_harmonic", "medium", "v0")  # sqrt(k/m - b/(2 m**2))
    X = candidate_pool(task, 0)
    dev = np.abs(departure(task, X))
    k, m, b = X[int(np.nanargmax(dev))]
    # the damping term's share b / (2 k m) is largest at small k and m and large b
    assert b / (2 * k * m) > 0.01
    assert np.nanmax(dev) > 5e-3


def test_a_task_without_difficulty_is_refused_with_exit_2(capsys):
    assert main(["m6_underdamped_harmonic"]) == 2
    assert "module:difficulty" in capsys.readouterr().err


@pytest.mark.slow
def test_the_oracle_finds_a_power_law_task():
    from bench.noise_ceiling import ceiling

    r = ceiling("m0_gravity", "easy", 0.001, fill=2, oracle=2, seeds=1)
    assert r["credited"] == 1
