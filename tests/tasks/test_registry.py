"""The task registry: names, errors, caching, views."""

from __future__ import annotations

import dataclasses

import pytest

from etc_fast.tasks import DIFFICULTIES, LAW_VERSIONS, MODULES, TaskError, get_task, list_tasks, task_view

PAPER_DOMAINS = {  # paper Table S1: name -> (scale, low, high)
    "m0_gravity": [("log", 1, 1e3), ("log", 1, 1e3), ("log", 1, 10)],
    "m1_coulomb_force": [("log", 0.1, 10)] * 3,
    "m2_magnetic_force": [("log", 1e-3, 1e-1)] * 3,
    "m3_fourier_law": [("log", 0.1, 10), ("log", 1e-4, 1e-2), ("log", 10, 1e3), ("log", 1e-2, 1)],
    "m4_snell_law": [("linear", 1, 1.5), ("linear", 1, 1.5), ("linear", 0, 90)],
    "m5_radioactive_decay": [("log", 1, 1e2), ("log", 1e-3, 1e-1), ("log", 1e-2, 10)],
    "m6_underdamped_harmonic": [("log", 1e2, 1e4), ("log", 0.1, 10), ("log", 1e-2, 1)],
    "m7_malus_law": [("log", 100, 2000), ("linear", 1e-6, 1.5707963267948966)],
    "m8_sound_speed": [("linear", 1.3, 1.7), ("log", 10, 1e3), ("log", 1e-3, 1e-1)],
    "m9_hooke_law": [("log", 1e-3, 1)],
    "m10_be_distribution": [("log", 1e8, 1e10), ("log", 10, 1e3)],
    "m11_heat_transfer": [("log", 1e-3, 1e3), ("log", 1e2, 1e4), ("log", 10, 1e3)],
}


def test_list_tasks():
    assert list_tasks() == list(MODULES) == list(PAPER_DOMAINS)


def test_all_108_laws_build():
    tasks = [get_task(m, d, v) for m in MODULES for d in DIFFICULTIES for v in LAW_VERSIONS]
    assert len({t.key for t in tasks}) == 108


@pytest.mark.parametrize("module", list(PAPER_DOMAINS))
def test_domains_match_table_s1(module):
    task = get_task(module)
    want = PAPER_DOMAINS[module]
    assert [v.scale for v in task.variables] == [scale for scale, _, _ in want]
    for v, (_, low, high) in zip(task.variables, want, strict=True):
        assert (v.low, v.high) == pytest.approx((low, high), rel=1e-12), v.name


def test_cached_and_immutable():
    t = get_task("m5_radioactive_decay", "hard", "v2")
    assert get_task("m5_radioactive_decay", "hard", "v2") is t
    with pytest.raises(dataclasses.FrozenInstanceError):
        t.noise_floor = 0.0


@pytest.mark.parametrize(
    "args,match",
    [
        (("m12_nothing",), r"unknown task 'm12_nothing'; valid modules: m0_gravity, .*m11_heat_transfer"),
        (("m0_gravity", "expert"), r"unknown difficulty 'expert' for m0_gravity; valid: easy, medium, hard"),
        (("m0_gravity", "easy", "v3"), r"unknown law version 'v3' for m0_gravity; valid: v0, v1, v2"),
        (("missing/file.yaml",), r"file.yaml: custom task file not found"),
    ],
)
def test_unknown_names_raise_task_error(args, match):
    with pytest.raises(TaskError, match=match):
        get_task(*args)
    assert issubclass(TaskError, ValueError)


def test_task_view_hides_the_law():
    task = get_task("m8_sound_speed", "medium", "v1")
    view = task_view(task)
    assert view.signature == "def discovered_law(gamma, T, M):"
    assert view.variables[0] == {
        "name": "gamma", "key": "adiabatic_index", "description": task.variables[0].description,
        "scale": "linear", "low": 1.3, "high": 1.7, "default": 1.4,
    }
    text = repr(view)
    assert "HIDDEN_CONSTANT" not in text and "351.6" not in text and "M ** (1 / 3)" not in text


def test_truth_shapes_and_wild_inputs_never_raise():
    import numpy as np

    for module in MODULES:
        task = get_task(module, "hard", "v2")
        assert task.truth(np.empty((0, task.d))).shape == (0,)
        y = task.truth(np.array([[np.nan] * task.d, [np.inf] * task.d, [-np.inf] * task.d, [0.0] * task.d]))
        assert y.shape == (4,)
        with pytest.raises(ValueError, match=r"truth expects an \(n, \d\) array"):
            task.truth(np.ones((2, task.d + 1)))
