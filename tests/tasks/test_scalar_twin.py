"""The vectorized truth against the slow scalar twin on wild inputs (negatives, zeros, 1e±300)."""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.sampling import evaluation_grid
from etc_fast.tasks import DIFFICULTIES, LAW_VERSIONS, MODULES, get_task
from tests.tasks._scalar import newtonbench_scalar_many

LAWS = [(m, d, v) for m in MODULES for d in DIFFICULTIES for v in LAW_VERSIONS]


def _wild_points(task, n: int, rng: np.random.Generator) -> np.ndarray:
    cols = []
    for var in task.variables:
        inside = var.from_unit(rng.random(n))
        huge = 10.0 ** rng.uniform(-300, 300, n)
        pick = rng.integers(0, 6, n)
        cols.append(
            np.select(
                [pick == 0, pick == 1, pick == 2, pick == 3, pick == 4],
                [inside, -inside, np.zeros(n), huge, -huge],
                default=inside * rng.uniform(-3, 3, n),
            )
        )
    return np.column_stack(cols)


@pytest.mark.parametrize("law", LAWS, ids=["-".join(k) for k in LAWS])
def test_truth_matches_scalar_twin(law):
    task = get_task(*law)
    rng = np.random.default_rng([MODULES.index(law[0]), DIFFICULTIES.index(law[1]), LAW_VERSIONS.index(law[2])])
    X = np.vstack([_wild_points(task, 300, rng), evaluation_grid(task)[:100]])
    got = task.truth(X)
    ref = newtonbench_scalar_many(*law, X)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(ref), err_msg=f"NaN positions differ for {task.key}")
    ok = ~np.isnan(ref)
    np.testing.assert_array_equal(np.isinf(got[ok]), np.isinf(ref[ok]))
    fin = ok & np.isfinite(ref)
    np.testing.assert_allclose(got[fin], ref[fin], rtol=1e-9, atol=0.0, err_msg=task.key)
