"""System simulators on settings the shared vectors do not cover: physics, step rule, noise, errors.

Independent checks: the scalar hidden laws against the vanilla evaluator (a different
implementation of NewtonBench's scalar semantics), closed-form motion for a candidate law run
through the public forward model, m11's draws replayed from a RandomState, noise statistics and
per-output floors, and the error value for requests NewtonBench cannot run.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest

from etc_fast.systems import LAW_ARGS, MAX_POINTS, SIM_SYSTEMS, is_error, simulate
from etc_fast.systems._hidden import hidden_law
from etc_fast.tasks import DIFFICULTIES, LAW_VERSIONS, MODULES, TaskError, get_task

LAWS = [(m, d, v) for m in MODULES for d in DIFFICULTIES for v in LAW_VERSIONS]


def _as_real(value) -> float:
    if isinstance(value, complex) or np.iscomplexobj(value):
        return math.nan
    return float(value)


@pytest.mark.parametrize("module,difficulty,version", LAWS)
def test_scalar_law_equals_vanilla_evaluator(module, difficulty, version):
    """The simulators' scalar law agrees with the vanilla task's vectorized truth, zeros and negatives included."""
    task = get_task(module, difficulty, version)
    law = hidden_law(module, difficulty, version)
    rng = np.random.default_rng(abs(hash((module, difficulty, version))) % 2**32)
    X = task.unit_to_inputs(rng.random((120, task.d)))
    X = np.vstack(
        [
            X,
            X
            * rng.choice(
                [1.0, -1.0, 0.0, 10.0], size=X.shape, p=[0.55, 0.15, 0.15, 0.15]
            ),
        ]
    )
    expected = task.truth(X)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        for row, want in zip(X, expected):
            try:
                got = _as_real(law(*map(float, row)))
            except (ArithmeticError, ValueError, TypeError):
                got = math.nan
            if math.isnan(want):
                assert math.isnan(got), (row, got)
            else:
                assert got == pytest.approx(want, rel=1e-9, abs=0.0), row


def _const_force(force: float):
    return lambda *args: force


@pytest.mark.parametrize(
    "dt,duration,expected_points",
    [
        (0.1, 0.3, 2),
        (0.1, 0.7, 6),
        (0.01, 5.0, 20),
        (0.05, 0.95, 18),
        (0.05, 0.9, 18),
        (0.1, 0.0, 0),
    ],
)
def test_step_rule_truncates_and_caps(dt, duration, expected_points):
    out = simulate(
        "m0_gravity",
        "simple_system",
        [
            {
                "mass1": 1.0,
                "mass2": 1.0,
                "distance": 2.0,
                "duration": duration,
                "time_step": dt,
            }
        ],
        _const_force(1.0),
    )[0]
    assert (
        len(out["time"])
        == len(out["position"])
        == len(out["velocity"])
        == expected_points
    )
    if expected_points:
        assert out["time"][-1] == f"{(expected_points - 1) * dt:.3e}"


def test_constant_force_fall_is_exact_kinematics():
    """A constant pull F toward the origin on mass2 = 2: x = x0 + v0 t - F t^2 / 4 (Verlet is exact)."""
    F, m2, x0, v0, dt = 3.0, 2.0, 50.0, 0.4, 0.1
    out = simulate(
        "m0_gravity",
        "simple_system",
        [
            {
                "mass1": 1.0,
                "mass2": m2,
                "distance": x0,
                "initial_velocity": v0,
                "time_step": dt,
            }
        ],
        _const_force(F),
    )[0]
    t = np.arange(20) * dt
    np.testing.assert_allclose(
        [float(s) for s in out["position"]],
        x0 + v0 * t - 0.5 * (F / m2) * t**2,
        rtol=1e-6,
    )
    np.testing.assert_allclose(
        [float(s) for s in out["velocity"]], v0 - (F / m2) * t, rtol=1e-6, atol=1e-6
    )


def test_circular_orbit_keeps_its_radius():
    """Inverse-square pull with v = sqrt(F r / m2): the 2-D orbit stays on its circle."""
    r, m2 = 2.0, 1.0
    def law(m1, mm2, d):
        return 4.0 / d**2

    v = math.sqrt(law(1, 1, r) * r / m2)
    out = simulate(
        "m0_gravity",
        "complex_system",
        [
            {
                "mass1": 1.0,
                "mass2": m2,
                "distance": r,
                "initial_velocity": v,
                "time_step": 0.01,
            }
        ],
        law,
    )[0]
    radii = [math.hypot(float(x), float(y)) for x, y in out["position"]]
    np.testing.assert_allclose(radii, r, rtol=1e-5)


def test_coulomb_charges_decay_and_push_apart():
    """Like charges push the moving charge toward +x; the force uses q(t) = q exp(-t/10), exp(-t/5)."""
    seen = []

    def law(q1, q2, d):
        seen.append((float(q1), float(q2)))
        return 1.0

    out = simulate(
        "m1_coulomb_force",
        "simple_system",
        [{"q1": 2.0, "q2": 3.0, "time_step": 0.5, "duration": 2.0}],
        law,
    )[0]
    assert set(out) == {"time", "velocity"}
    velocity = [float(s) for s in out["velocity"]]
    assert velocity == sorted(velocity) and velocity[-1] > 0
    for i, (q1, q2) in enumerate(seen):
        assert q1 == pytest.approx(
            2.0 * math.exp(-0.5 * i / 10)
        ) and q2 == pytest.approx(3.0 * math.exp(-0.5 * i / 5))


def test_m6_complex_samples_two_periods():
    task = get_task("m6_underdamped_harmonic", "easy", "v2", system="complex_system")
    out = task.experiment(
        [{"k_constant": 50.0, "mass": 2.0, "b_constant": 0.3, "initial_amplitude": 2.0}]
    )[0]
    t = np.array([float(s) for s in out["time"]])
    a = np.array([float(s) for s in out["amplitude"]])
    k = np.arange(20)
    np.testing.assert_allclose(
        a, 2.0 * np.exp(-3 * t) * np.cos(4 * np.pi * k / 19), rtol=2e-6, atol=1e-9
    )


def test_m3_simple_profile_slope_is_the_power():
    task = get_task("m3_fourier_law", "medium", "v1", system="simple_system")
    k, A, dT, d = 3.0, 0.02, 40.0, 0.3
    out = task.experiment([{"k": k, "A": A, "delta_T": dT, "d": d, "num_points": 7}])[0]
    x = np.array([float(s) for s in out["x"]])
    T = np.array([float(s) for s in out["T"]])
    P = float(task.law.truth([[k, A, dT, d]])[0])
    np.testing.assert_allclose(T, dT - P / (k * A) * x, rtol=1e-6)
    assert len(x) == 7


def test_m11_draws_follow_newtonbench_order_across_a_batch():
    """One seed per batch: draws continue from experiment to experiment, loss then three splits."""
    task = get_task("m11_heat_transfer", "easy", "v1", system="simple_system")
    reqs = [
        {"m": 2.0, "c": 500.0, "delta_T": 20.0},
        {"m": 0.5, "c": 900.0, "delta_T": 30.0},
    ]
    out = task.experiment(reqs, rng_seed=123)
    rs = np.random.RandomState(123)
    for req, got in zip(reqs, out):
        m, c, dT = req["m"], req["c"], req["delta_T"]
        avail = (m**2.5 * c * dT) / (m * c / 100.0) * (1 - rs.uniform(0.18, 0.22))
        f = [rs.uniform(0.1, 0.8) for _ in range(3)]
        assert [got["P_cond"], got["P_conv"], got["P_rad"]] == pytest.approx(
            [fi / sum(f) * avail for fi in f], rel=1e-12
        )
    assert (
        task.experiment(reqs, rng_seed=123) == out
        and task.experiment(reqs, rng_seed=124) != out
    )


def test_m11_complex_counts_bulbs_from_the_heat_difference():
    task = get_task("m11_heat_transfer", "easy", "v0", system="complex_system")
    got = task.experiment([{"m": 1.5, "c": 800.0, "delta_T": 12.0}], rng_seed=7)[0]
    rs = np.random.RandomState(7)
    r = rs.uniform(0.7, 1.2)
    def q(c):
        return 1.5 * c * 12.0**2.5

    assert got == int(
        abs(q(800.0) - q(800.0 * r))
        / (1.5 * 800.0 / 100.0)
        * (1 - rs.uniform(0.18, 0.22))
    )
    assert isinstance(got, int)


def test_noise_statistics_and_floors():
    """sigma = max(|y| level, floor): relative spread on large outputs, the floor on zero outputs."""
    task = get_task("m5_radioactive_decay", "easy", "v0", system="simple_system")
    clean = np.array(
        [
            float(s)
            for s in task.experiment(
                [{"N0": 1000.0, "lambda_constant": 0.05, "t": 5.0}]
            )[0]["measured_activity"]
        ]
    )
    rel = []
    for seed in range(300):
        noisy = task.experiment(
            [{"N0": 1000.0, "lambda_constant": 0.05, "t": 5.0}],
            noise_level=0.02,
            rng_seed=seed,
        )[0]
        rel.append(np.array([float(s) for s in noisy["measured_activity"]]) / clean - 1)
    rel = np.array(rel)
    assert abs(rel.mean()) < 0.002 and rel.std() == pytest.approx(0.02, rel=0.05)
    # m8 complex: a resonance length clamped to 0 gets the absolute floor 1e-9 only.
    tube = get_task("m8_sound_speed", "easy", "v0", system="complex_system")
    req = [{"driving_frequency": 1e6, "tube_diameter": 10.0}]
    assert tube.experiment(req)[0]["first_resonance_length"] == "0.000000e+00"
    draws = np.array(
        [
            float(
                tube.experiment(req, noise_level=0.05, rng_seed=s)[0][
                    "first_resonance_length"
                ]
            )
            for s in range(400)
        ]
    )
    assert draws.std() == pytest.approx(1e-9, rel=0.15)
    # Same seed, same noise; noise 0 returns the clean value whatever the seed.
    assert task.experiment([{}], noise_level=0.01, rng_seed=5) == task.experiment(
        [{}], noise_level=0.01, rng_seed=5
    )
    assert task.experiment([{}], rng_seed=1) == task.experiment([{}], rng_seed=2)


@pytest.mark.parametrize(
    "module,system,request_,error_type",
    [
        ("m0_gravity", "simple_system", {"mass1": 1.0, "distance": 2.0}, "TypeError"),
        (
            "m0_gravity",
            "complex_system",
            {"mass1": 1.0, "mass2": 1.0, "distance": 2.0, "time_step": 0.0},
            "ZeroDivisionError",
        ),
        (
            "m0_gravity",
            "simple_system",
            {"mass1": "heavy", "mass2": 1.0, "distance": 2.0},
            "TypeError",
        ),
        (
            "m2_magnetic_force",
            "simple_system",
            {"current1": 1.0, "distance": 1.0},
            "KeyError",
        ),
        (
            "m3_fourier_law",
            "simple_system",
            {"num_points": MAX_POINTS + 1},
            "ValueError",
        ),
        ("m3_fourier_law", "complex_system", {"num_points": 1}, "IndexError"),
        ("m5_radioactive_decay", "simple_system", {"num_points": 5.0}, "TypeError"),
        (
            "m6_underdamped_harmonic",
            "simple_system",
            {"mass": 0.0},
            "ZeroDivisionError",
        ),
        (
            "m1_coulomb_force",
            "simple_system",
            {"duration": float("inf")},
            "OverflowError",
        ),
        ("m7_malus_law", "simple_system", {"noise_level": 0.1}, "TypeError"),
        ("m9_hooke_law", "complex_system", {"system": "vanilla_equation"}, "TypeError"),
    ],
)
def test_requests_newtonbench_cannot_run_give_the_error_value(
    module, system, request_, error_type
):
    task = get_task(module, "easy", "v0", system=system)
    bad = task.experiment([request_])[0]
    assert is_error(bad) and bad["error"].startswith(error_type + ":"), bad


def test_a_bad_request_leaves_the_rest_of_the_batch():
    task = get_task("m4_snell_law", "easy", "v2", system="simple_system")
    out = task.experiment(
        [{"speed_medium1": 0.0}, "not an object", {"incidence_angle": 45.0}]
    )
    assert is_error(out[0]) and out[0]["error"].startswith("ZeroDivisionError")
    assert is_error(out[1]) and "experiment 1" in out[1]["error"]
    assert (
        set(out[2]) == {"refraction_angle"} and out[2]["refraction_angle"] != "invalid"
    )


def test_invalid_noise_level_and_system_raise():
    task = get_task("m4_snell_law", "easy", "v0", system="complex_system")
    for level in (-0.1, float("nan"), "0.1"):
        with pytest.raises(ValueError, match="noise_level"):
            task.experiment([{}], noise_level=level)
    with pytest.raises(TaskError, match="valid: vanilla_equation"):
        get_task("m4_snell_law", system="orbit")
    with pytest.raises(ValueError, match="no simulator"):
        simulate("m4_snell_law", "vanilla_equation", [{}], lambda *a: 1.0)


def test_vanilla_get_task_is_unchanged():
    assert get_task("m0_gravity", "easy", "v0") is get_task(
        "m0_gravity", "easy", "v0", system="vanilla_equation"
    )
    sys_task = get_task("m0_gravity", "hard", "v2", system="simple_system")
    assert (
        sys_task.law is get_task("m0_gravity", "hard", "v2")
        and sys_task.signature == sys_task.law.signature
    )
    assert sys_task.key == "m0_gravity/hard/v2/simple_system"


@pytest.mark.parametrize("system", SIM_SYSTEMS)
@pytest.mark.parametrize("module", MODULES)
def test_defaults_run_everywhere_with_at_most_20_points(module, system):
    task = get_task(module, "medium", "v1", system=system)
    kw = (
        {k: 1.0 for k in LAW_ARGS[module]}
        if module in ("m0_gravity", "m2_magnetic_force")
        else {}
    )
    if module == "m0_gravity":
        kw = {"mass1": 10.0, "mass2": 2.0, "distance": 3.0}
    if module == "m2_magnetic_force":
        kw = {"current1": 1.0, "current2": 1.0, "distance": 1.0}
    out = task.experiment([kw], rng_seed=0)[0]
    assert not is_error(out), out
    if isinstance(out, dict):
        assert all(len(v) <= 20 for v in out.values() if isinstance(v, list))
