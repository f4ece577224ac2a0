"""Experiment requests: keys, defaults, required keys, value types, module transforms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from etc_fast.tasks import get_task


@pytest.mark.parametrize("module", ["m0_gravity", "m2_magnetic_force"])
def test_missing_required_key_raises(module):
    task = get_task(module)
    point = {v.key: 0.05 for v in task.variables[:2]}  # distance left out
    with pytest.raises(ValueError, match="missing required key 'distance'"):
        task.inputs_from_request([point])


def test_m4_incidence_angle_wrap():
    task = get_task("m4_snell_law")
    points = [{"refractive_index_1": 1.2, "refractive_index_2": 1.4, "incidence_angle": a} for a in (-30, 100, 270, 370, 45)]
    X = task.inputs_from_request(points)
    np.testing.assert_allclose(X[:, 2], [30.0, 80.0, 90.0, 10.0, 45.0])


def test_m4_signature_names_are_not_keys():
    task = get_task("m4_snell_law")  # sending n1/n2/angle1 silently uses the defaults (NewtonBench: 90.0)
    X = task.inputs_from_request([{"n1": 1.3, "n2": 1.1, "angle1": 40.0}])
    np.testing.assert_allclose(X, [[1.1, 1.2, 0.0]])
    assert task.truth(X)[0] == pytest.approx(90.0)


def test_m2_takes_absolute_values():
    task = get_task("m2_magnetic_force")
    X = task.inputs_from_request([{"current1": -0.02, "current2": 0.03, "distance": -0.05}])
    np.testing.assert_allclose(X, [[0.02, 0.03, 0.05]])
    assert task.truth(X)[0] == pytest.approx(4.78e-2 * 0.02 * 0.03 / 0.05**3)


@pytest.mark.parametrize(
    "module,expected",
    [
        ("m1_coulomb_force", [1.0, 1.0, 1.0]),
        ("m3_fourier_law", [1.0, 1.0, 1.0, 1.0]),
        ("m4_snell_law", [1.1, 1.2, 0.0]),
        ("m6_underdamped_harmonic", [10.0, 1.0, 0.5]),
        ("m7_malus_law", [1000.0, 0.785]),
        ("m8_sound_speed", [1.4, 293.15, 0.02897]),
        ("m9_hooke_law", [1.0]),
        ("m10_be_distribution", [1e8, 1e3]),
        ("m11_heat_transfer", [1.0, 1000.0, 1.0]),
    ],
)
def test_defaults_fill_missing_keys(module, expected):
    X = get_task(module).inputs_from_request([{}])
    np.testing.assert_allclose(X, [expected])


def test_keys_differ_from_names_where_newtonbench_says():
    keys = {m: [v.key for v in get_task(m).variables] for m in ("m4_snell_law", "m6_underdamped_harmonic", "m8_sound_speed", "m10_be_distribution")}
    assert keys["m4_snell_law"] == ["refractive_index_1", "refractive_index_2", "incidence_angle"]
    assert keys["m6_underdamped_harmonic"] == ["k_constant", "mass", "b_constant"]
    assert keys["m8_sound_speed"] == ["adiabatic_index", "temperature", "molar_mass"]
    assert keys["m10_be_distribution"] == ["omega", "temperature"]


@pytest.mark.parametrize("bad", ["2", None, True, [1.0], {"v": 1}])
def test_non_numeric_value_raises(bad):
    task = get_task("m1_coulomb_force")
    with pytest.raises(ValueError, match=r"point 0: 'q1' must be a real number"):
        task.inputs_from_request([{"q1": bad, "q2": 1.0, "distance": 1.0}])


def test_extra_keys_ignored_and_ints_accepted():
    X = get_task("m0_gravity").inputs_from_request([{"mass1": 2, "mass2": 3, "distance": 4, "colour": "red"}])
    np.testing.assert_allclose(X, [[2.0, 3.0, 4.0]])


def test_guards_and_errors_on_requests():
    grav = get_task("m0_gravity")
    assert grav.truth(grav.inputs_from_request([{"mass1": -1, "mass2": 3, "distance": 4}]))[0] == 0.0
    hooke = get_task("m9_hooke_law", "hard", "v0")
    y = hooke.truth(hooke.inputs_from_request([{"x": -0.1}, {"x": 0.0}]))
    assert math.isnan(y[0]) and y[1] == math.inf  # numpy division by sqrt(0) gives +inf
    heat = get_task("m11_heat_transfer", "easy", "v0")
    assert math.isnan(heat.truth(np.array([[1.0, 1.0, 1e200]]))[0])  # Python float overflow -> OverflowError


def test_measure_noise_floor_and_seed():
    task = get_task("m10_be_distribution")
    X = np.array([[1e9, 100.0]] * 4)
    a = task.measure(X, 0.01, np.random.default_rng(3))
    b = task.measure(X, 0.01, np.random.default_rng(3))
    np.testing.assert_array_equal(a, b)
    assert task.noise_floor == 1e-18 and get_task("m4_snell_law").noise_floor == 1e-6
