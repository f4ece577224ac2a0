"""Every NewtonBench law equals NewtonBench at the recorded points (tests/data/newtonbench_vectors.json).

The vectors were computed by NewtonBench's own law functions, point by point on Python floats;
inputs include zeros and negatives. ``null`` = NewtonBench raised or gave NaN; ``"inf"`` strings are
infinite returns. NaN must match NaN exactly in position; finite values agree to rtol 1e-9.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from etc_fast.tasks import get_task

VECTORS = Path(__file__).resolve().parents[1] / "data" / "newtonbench_vectors.json"


def _load_cases() -> list[dict]:
    return json.loads(VECTORS.read_text())["cases"]


CASES = _load_cases()


def _as_float(v) -> float:
    return math.nan if v is None else float(v)  # float("inf") / float("-inf") for the string forms


def test_vectors_cover_all_108_laws():
    keys = {(c["module"], c["difficulty"], c["law_version"]) for c in CASES}
    assert len(keys) == 108
    assert all(len(c["inputs"]) == len(c["outputs"]) == 50 for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=[f"{c['module']}-{c['difficulty']}-{c['law_version']}" for c in CASES])
def test_law_matches_newtonbench(case):
    task = get_task(case["module"], case["difficulty"], case["law_version"])
    X = np.array(case["inputs"], dtype=np.float64)
    expected = np.array([_as_float(v) for v in case["outputs"]])
    got = task.truth(X)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(expected), err_msg=f"NaN positions differ for {task.key}")
    ok = ~np.isnan(expected)
    np.testing.assert_allclose(got[ok], expected[ok], rtol=1e-9, atol=0.0, err_msg=task.key)
