"""evaluate_submission, Evaluation and create_judge on a small hand-built task."""

from __future__ import annotations

import json
import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest

from etc_fast.evaluate import Evaluation, Judge, NoJudge, Verdict, create_judge, evaluate_submission
from etc_fast.sampling import array_sha256, evaluation_grid, rounded_sha256
from etc_fast.sandbox import SandboxLimits
from etc_fast.tasks._base import Task, Variable
from tests.reference import rmsle_coverage_ref


def _truth(X):
    x, y = X[:, 0], X[:, 1]
    return np.where(x > 9.0, np.nan, 3.0 * x * y**2)  # undefined on part of the domain


TASK = Task(
    name="toy_power", module="toy_power", difficulty="custom", law_version="custom", title="toy",
    description="toy", output_name="F", output_description="F",
    variables=(Variable("x", "x", None, "x", "log", 1.0, 10.0), Variable("y", "y", None, "y", "linear", -2.0, 2.0)),
    noise_floor=0.0, ground_truth_text="C * x * y**2", param_description="x, y", truth_fn=_truth,
)
GRID = evaluation_grid(TASK, n=400)

SOURCES = {
    "exact": "def discovered_law(x, y):\n    return 3.0 * x * y ** 2\n",
    "exact_np": "def discovered_law(x, y):\n    return 3.0 * np.multiply(x, y ** 2)\n",
    "scaled": "def discovered_law(x, y):\n    return 3.3 * x * y ** 2\n",
    "partial_nan": "def discovered_law(x, y):\n    return math.sqrt(y) * 3.0 * x * abs(y) ** 1.5 if y >= 0 else float('nan')\n",
    "sign_flip": "def discovered_law(x, y):\n    return -3.0 * x * y ** 2\n",
    "one_inf": "def discovered_law(x, y):\n    return float('inf') if x < 1.5 else 3.0 * x * y ** 2\n",
    "raises": "def discovered_law(x, y):\n    return 3.0 * x * y ** 2 * (1 / (0 if x > 5 else 1))\n",
    "bad_sig": "def discovered_law(y, x):\n    return 3.0 * x * y ** 2\n",
    "loop": "def discovered_law(x, y):\n    while True:\n        pass\n    return x\n",
}


@pytest.fixture(scope="module")
def evals():
    lim = SandboxLimits(wall_s=5.0, cpu_s=2.0)

    def go(k):
        return k, evaluate_submission(SOURCES[k], TASK, grid=GRID, limits=lim)

    with ThreadPoolExecutor(max_workers=6) as ex:
        return dict(ex.map(go, SOURCES))


def test_exact_law_scores_zero_and_complete(evals):
    for k in ("exact", "exact_np"):
        e = evals[k]
        assert e.valid and e.error is None
        assert e.rmsle < 1e-12 and e.complete and e.sign_disagreements == 0  # pointwise vs vectorized rounding
        assert e.n_points == 400 and e.n_finite_target == e.n_finite_pred == int(np.isfinite(_truth(GRID)).sum()) < 400
        assert e.q == {"0.01": True, "0.1": True, "1": True}
    assert evals["exact"].predictions_sha256 != evals["scaled"].predictions_sha256


def test_metrics_match_twin(evals):
    e = evals["scaled"]
    pred = 3.3 * GRID[:, 0] * GRID[:, 1] ** 2
    ref = rmsle_coverage_ref(_truth(GRID), pred)
    assert math.isclose(e.rmsle, ref[0], rel_tol=1e-12)
    assert (e.n_finite_target, e.n_finite_pred, e.complete, e.sign_disagreements) == ref[1:]
    assert e.q == {"0.01": False, "0.1": True, "1": True}
    assert e.predictions_sha256 == rounded_sha256(pred)  # a fingerprint that survives last-bit differences


def test_partial_nan_is_incomplete(evals):
    e = evals["partial_nan"]
    assert e.valid and not e.complete
    assert 0 < e.n_finite_pred < e.n_finite_target
    assert math.isfinite(e.rmsle) and e.rmsle < 1e-12  # a finite score that hides missing predictions
    assert e.q == {"0.01": False, "0.1": False, "1": False}


def test_sign_flip_has_disagreements(evals):
    e = evals["sign_flip"]
    assert e.valid and e.complete and e.rmsle < 1e-12
    assert e.sign_disagreements == int(np.sum(np.isfinite(_truth(GRID)) & (GRID[:, 1] != 0)))


def test_one_sided_inf_is_infinite(evals):
    e = evals["one_inf"]
    assert e.valid and e.rmsle == math.inf and not e.complete and not any(e.q.values())


@pytest.mark.parametrize("key, needle", [("raises", "ZeroDivisionError"), ("bad_sig", "Invalid function signature"),
                                         ("loop", "")])
def test_invalid_submissions(evals, key, needle):
    e = evals[key]
    assert not e.valid and needle in e.error and e.error
    assert math.isnan(e.rmsle) and not e.complete and e.n_finite_pred == 0 and e.predictions_sha256 is None
    assert e.n_finite_target == int(np.isfinite(_truth(GRID)).sum())
    assert not any(e.q.values())


def test_to_dict_is_strict_json(evals):
    for e in evals.values():
        d = e.to_dict()
        text = json.dumps(d, allow_nan=False)
        back = json.loads(text)
        assert set(back) >= {"valid", "error", "rmsle", "n_points", "n_finite_target", "n_finite_pred", "complete",
                             "sign_disagreements", "q", "predictions_sha256"}
    assert evals["loop"].to_dict()["rmsle"] == "nan"
    assert evals["one_inf"].to_dict()["rmsle"] == "inf"


def test_default_grid_and_bad_grid():
    with pytest.raises(ValueError, match=r"shape \(n, 2\)"):
        evaluate_submission(SOURCES["exact"], TASK, grid=np.ones((3, 3)))
    with pytest.raises(TypeError):
        evaluate_submission(None, TASK)


def test_grid_not_modified_by_submission():
    grid = GRID[:5].copy()
    before = grid.copy()
    src = "def discovered_law(x, y):\n    x.fill(0) if hasattr(x, 'fill') else None\n    return 1.0\n"
    e = evaluate_submission(src, TASK, grid=grid)
    np.testing.assert_array_equal(grid, before)
    assert e.grid_sha256 == array_sha256(before)


def test_create_judge():
    j = create_judge("none")
    assert isinstance(j, Judge) and isinstance(j, NoJudge)
    v = j.judge("def discovered_law(x, y):\n    return x", TASK)
    assert v == Verdict("none", False, "no judge")
    with pytest.raises(ValueError, match="unknown judge 'oracle'"):
        create_judge("oracle")
    with pytest.raises(ValueError, match="no options"):
        create_judge("none", model="x")


def test_evaluation_type():
    assert Evaluation.__dataclass_params__.frozen
