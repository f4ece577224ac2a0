"""The small public API that scripts and other discovery code rely on."""

import pickle

import numpy as np
import pytest

from etc_fast.sampling import candidate_pool, evaluation_grid
from etc_fast.tasks import get_task


def test_task_variables_are_signature_names():
    task = get_task("m4_snell_law", difficulty="medium", law_version="v0")
    assert task.name == "m4_snell_law"
    assert task.variables == ("n1", "n2", "angle1")
    assert [v.key for v in task.variables] == ["refractive_index_1", "refractive_index_2", "incidence_angle"]
    assert task.variables[2].scale == "linear" and (task.variables[2].low, task.variables[2].high) == (0.0, 90.0)


def test_variables_are_immutable_and_picklable():
    v = get_task("m0_gravity").variables[0]
    with pytest.raises(AttributeError):
        v.low = 5.0
    back = pickle.loads(pickle.dumps(v))
    assert back == v and back.key == v.key and back.high == v.high and repr(back) == repr(v)


def test_truth_pool_and_grid_shapes():
    task = get_task("m0_gravity", "easy", "v0")
    G = evaluation_grid(task)
    P = candidate_pool(task, seed=0)
    assert G.shape == (5000, 3) and P.shape == (2048, 3)
    y = task.truth(np.array([[2.0, 3.0, 4.0]]))
    np.testing.assert_allclose(y, [5.0055e-05], rtol=1e-9)
    with pytest.raises(ValueError, match=r"\(n, 3\)"):
        task.truth(np.ones((4, 2)))
