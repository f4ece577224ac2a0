"""The 24 NewtonBench system simulators (12 modules x simple_system/complex_system).

Each simulator takes one experiment's keyword arguments (the agent's JSON object, unvalidated,
as NewtonBench receives it), a scalar ``law`` (the hidden law on the trusted side, or a
candidate law in the public forward model) and a :class:`Noise` source, and returns exactly what
NewtonBench's ``run_experiment_for_module`` returns for the same call, or raises what it raises.
Facts, with NewtonBench file and line: ``/work/shared/newtonbench_systems.md``. The arithmetic
is done in NewtonBench's order and on the same kinds of numbers (NumPy arrays where it stores
states in arrays, Python floats where it does not), so outputs agree to the bit.

Two deliberate departures, both outside anything NewtonBench can return:

* Trajectory modules (m0, m1, m2-simple) integrate only the first ``min(n, 20)`` steps: NewtonBench
  integrates all ``n`` and returns the first 20, so the later steps never reach the output (they
  would only cost time; noise is drawn for the returned points only, with the same distribution).
* ``num_points`` above :data:`MAX_POINTS` (m3, m5, uncapped in NewtonBench) is refused with a
  ``ValueError`` instead of allocating without bound.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Callable, Mapping

import numpy as np

__all__ = ["MAX_POINTS", "MAX_RETURNED", "SIMULATORS", "Noise"]

#: NewtonBench returns at most this many points of a trajectory.
MAX_RETURNED = 20
#: Largest ``num_points`` a request may ask for (NewtonBench has no cap; we refuse past this).
MAX_POINTS = 100_000

Law = Callable[..., object]


class Noise:
    """NewtonBench's ``inject_noise``: ``sigma = max(|y * level|, floor)``, Gaussian, NaN stays NaN.

    At ``level == 0.0`` the value is returned unchanged and nothing is drawn. Arrays get
    elementwise sigma; scalars (Python or NumPy) are treated as NewtonBench's non-array branch.
    Draws come from ``rng`` (a NumPy Generator seeded by the caller) instead of NewtonBench's
    global generators: the same distribution, reproducible per trial.
    """

    def __init__(self, level: float, rng: np.random.Generator | None):
        self.level = level
        self.rng = rng

    def __call__(self, y, floor: float):
        if self.level == 0.0:
            return y
        if isinstance(y, np.ndarray):
            sigma = np.maximum(np.abs(y * self.level), floor)
            return y + sigma * self.rng.standard_normal(y.shape)
        sigma = max(abs(y * self.level), floor)
        return y + float(self.rng.standard_normal()) * sigma


def _steps(duration, time_step) -> int:
    """NewtonBench's step rule: ``int(duration / time_step)`` (truncating; 0.3/0.1 -> 2)."""
    return int(duration / time_step)


def _e3(values) -> list[str]:
    return [f"{float(v):.3e}" for v in values]


def _e6(values) -> list[str]:
    return [f"{float(v):.6e}" for v in values]


def _required(kw: Mapping, names: tuple[str, ...]) -> tuple:
    missing = [n for n in names if n not in kw]
    if missing:
        quoted = " and ".join(repr(n) for n in missing)
        raise TypeError(
            f"run_experiment_for_module() missing {len(missing)} required positional argument"
            f"{'s' if len(missing) > 1 else ''}: {quoted}"
        )
    return tuple(kw[n] for n in names)


def _check_points(num_points):
    if isinstance(num_points, int) and num_points > MAX_POINTS:
        raise ValueError(
            f"num_points = {num_points} exceeds this simulator's limit of {MAX_POINTS}"
        )
    return num_points


# -- m0_gravity ---------------------------------------------------------------------------------


def _m0_simple(kw, law, noise, legacy):
    mass1, mass2, distance = _required(kw, ("mass1", "mass2", "distance"))
    v0 = kw.get("initial_velocity", 0.0)
    duration, dt = kw.get("duration", 5.0), kw.get("time_step", 0.01)
    n = _steps(duration, dt)
    if n <= 0:
        return {"time": [], "position": [], "velocity": []}
    n = min(n, MAX_RETURNED)
    times = np.arange(n) * dt
    pos, vel, acc = np.zeros(n), np.zeros(n), np.zeros(n)
    pos[0], vel[0] = distance, v0

    def accel(x):
        force = law(mass1, mass2, abs(x))
        force *= np.sign(x)
        return -force / mass2

    acc[0] = accel(pos[0])
    for i in range(1, n):
        new_pos = pos[i - 1] + vel[i - 1] * dt + 0.5 * acc[i - 1] * dt**2
        vel_half = vel[i - 1] + 0.5 * acc[i - 1] * dt
        a_new = accel(new_pos)
        pos[i], vel[i], acc[i] = new_pos, vel_half + 0.5 * a_new * dt, a_new
    pos, vel = noise(pos, 1e-9), noise(vel, 1e-9)
    return {
        "time": _e3(times.tolist()),
        "position": _e6(pos.tolist()),
        "velocity": _e6(vel.tolist()),
    }


def _m0_complex(kw, law, noise, legacy):
    mass1, mass2, distance = _required(kw, ("mass1", "mass2", "distance"))
    v0 = kw.get("initial_velocity", 0.0)
    duration, dt = kw.get("duration", 10.0), kw.get("time_step", 0.1)
    n = _steps(duration, dt)
    if n <= 0:
        return {"time": [], "position": [], "velocity": []}
    n = min(n, MAX_RETURNED)
    times = np.arange(n) * dt
    pos, vel = np.zeros((n, 2)), np.zeros((n, 2))
    pos[0], vel[0] = np.array([distance, 0.0]), np.array([0.0, v0])
    origin = np.array([0.0, 0.0])

    def accel(p):
        r = p - origin
        d = np.linalg.norm(r)
        if d == 0:
            return np.zeros(2)
        r_hat = r / d
        force = law(mass1, mass2, d)
        _ = (
            force / mass1
        ) * r_hat  # the fixed mass's acceleration: NewtonBench computes it (0/0 raises)
        return -(force / mass2) * r_hat

    for i in range(1, n):
        a = accel(pos[i - 1])
        new_pos = pos[i - 1] + vel[i - 1] * dt + 0.5 * a * dt**2
        vel_half = vel[i - 1] + 0.5 * a * dt
        a_new = accel(new_pos)
        pos[i], vel[i] = new_pos, vel_half + 0.5 * a_new * dt
    pos, vel = noise(pos, 1e-9), noise(vel, 1e-9)
    return {
        "time": _e3(times.tolist()),
        "position": [_e6(p) for p in pos.tolist()],
        "velocity": [_e6(v) for v in vel.tolist()],
    }


# -- m1_coulomb_force ---------------------------------------------------------------------------


def _m1_run(kw, law, noise, *, energy: bool):
    q1, q2, distance = kw.get("q1", 1.0), kw.get("q2", 1.0), kw.get("distance", 1.0)
    kw.get("m1", 1.0)  # read, never used (NewtonBench)
    m2 = kw.get("m2", 1.0)
    duration, dt = (
        (kw.get("duration", 10.0), kw.get("time_step", 0.1))
        if energy
        else (
            kw.get("duration", 5.0),
            kw.get("time_step", 0.01),
        )
    )
    n = _steps(duration, dt)
    if n <= 0:
        empty = {"time": [], "position": [], "velocity": []}
        return {**empty, "kinetic_energy": []} if energy else empty
    n = min(n, MAX_RETURNED)
    times = np.arange(n) * dt
    pos, vel, ke = np.zeros(n), np.zeros(n), np.zeros(n)
    pos[0], vel[0] = distance, 0.0
    for i, t in enumerate(times):
        pos[i] = pos[i - 1] if i > 0 else distance
        vel[i] = vel[i - 1] if i > 0 else 0.0
        q1_t = q1 * np.exp(-t / 10.0)
        q2_t = q2 * np.exp(-t / 5.0)
        force = law(abs(q1_t), abs(q2_t), abs(pos[i]))
        a = force * (1 if q1_t * q2_t > 0 else -1) / m2
        if i > 0:
            vel[i] = vel[i - 1] + a * dt
            pos[i] = pos[i - 1] + vel[i] * dt
        if energy:
            ke[i] = 0.5 * m2 * (vel[i] ** 2)
    if energy:
        return {
            "time": _e3(times.tolist()),
            "kinetic_energy": _e6(noise(ke, 1e-9).tolist()),
        }
    return {"time": _e3(times.tolist()), "velocity": _e6(noise(vel, 1e-9).tolist())}


def _m1_simple(kw, law, noise, legacy):
    return _m1_run(kw, law, noise, energy=False)


def _m1_complex(kw, law, noise, legacy):
    return _m1_run(kw, law, noise, energy=True)


# -- m2_magnetic_force --------------------------------------------------------------------------


def _m2_accel(i1, i2, mass, x, law):
    if mass == 0 or x == 0:
        return 0.0
    force = law(abs(i1), abs(i2), abs(x))
    return -force / mass if np.sign(i1) == np.sign(i2) else force / mass


def _m2_simple(kw, law, noise, legacy):
    params = {
        "mass_wire": 1.0,
        "initial_velocity": 0.0,
        "duration": 1.0,
        "time_step": 0.05,
        **kw,
    }
    i1, i2, distance = params["current1"], params["current2"], params["distance"]
    duration, dt = params["duration"], params["time_step"]
    mass, v0 = params["mass_wire"], params["initial_velocity"]
    n = _steps(duration, dt)
    if n <= 0:
        return {"time": [], "position": [], "velocity": []}
    n = min(n, MAX_RETURNED)
    times, pos, vel = np.arange(n) * dt, np.zeros(n), np.zeros(n)
    pos[0], vel[0] = distance, v0
    for i in range(1, n):
        a = _m2_accel(i1, i2, mass, pos[i - 1], law)
        new_pos = pos[i - 1] + vel[i - 1] * dt + 0.5 * a * dt**2
        vel_half = vel[i - 1] + 0.5 * a * dt
        a_new = _m2_accel(i1, i2, mass, new_pos, law)
        pos[i], vel[i] = new_pos, vel_half + 0.5 * a_new * dt
    pos, vel = noise(pos, 1e-9), noise(vel, 1e-9)
    return {
        "time": [f"{t:.3e}" for t in times.tolist()],
        "position": [f"{p:.6e}" for p in pos.tolist()],
        "velocity": [f"{v:.6e}" for v in vel.tolist()],
    }


def _m2_complex(kw, law, noise, legacy):
    params = {
        "current1": 1.0,
        "current2": 1.0,
        "mass_wire": 0.01,
        "distance": 0.1,
        "initial_velocity": 0.0,
        **kw,
    }
    frequency, points = 50.0, 20
    period = 1.0 / frequency
    i1, i2, mass = params["current1"], params["current2"], params["mass_wire"]
    distance, v0 = params["distance"], params["initial_velocity"]
    dt = period / (points - 1)
    times = np.linspace(0, period, points)
    pos, vel = np.zeros(points), np.zeros(points)
    pos[0], vel[0] = distance, v0
    for i in range(1, points):
        i1_t = i1 * np.sin(2 * np.pi * frequency * times[i - 1])
        a = _m2_accel(i1_t, i2, mass, pos[i - 1], law)
        new_pos = pos[i - 1] + vel[i - 1] * dt + 0.5 * a * dt**2
        vel_half = vel[i - 1] + 0.5 * a * dt
        a_new = _m2_accel(i1_t, i2, mass, new_pos, law)
        pos[i], vel[i] = new_pos, vel_half + 0.5 * a_new * dt
    pos, vel = noise(pos, 1e-9), noise(vel, 1e-9)
    return {
        "time": [f"{t:.6e}" for t in times.tolist()],
        "position": [f"{p:.6e}" for p in pos.tolist()],
        "velocity": [f"{v:.6e}" for v in vel.tolist()],
    }


# -- m3_fourier_law -----------------------------------------------------------------------------


def _m3_inputs(kw):
    return (
        kw.get("k", 1.0),
        kw.get("A", 1.0),
        kw.get("delta_T", 1.0),
        kw.get("d", 1.0),
        _check_points(kw.get("num_points", 20)),
    )


def _m3_simple(kw, law, noise, legacy):
    k, A, delta_T, d, num_points = _m3_inputs(kw)
    P = law(k, A, delta_T, d)
    x = np.linspace(0, d, num_points)
    T = noise(delta_T - (P / (k * A)) * x, 1e-9)
    return {"x": _e6(x), "T": _e6(T.tolist())}


def _m3_complex(kw, law, noise, legacy):
    k, A, delta_T, d, num_points = _m3_inputs(kw)
    P = law(k, A, delta_T, d)
    x = np.linspace(0, d, num_points)
    T = delta_T * np.exp(-x * P / (k * A * delta_T))
    q = noise(-k * np.gradient(T, x), 1e-9)
    return {"x": _e6(x), "heat_flux": _e6(q.tolist())}


# -- m4_snell_law -------------------------------------------------------------------------------


def _wrap_angle(angle):
    angle = angle % 180
    if angle > 90:
        angle = 180 - angle
    return angle


def _m4_simple(kw, law, noise, legacy):
    s1, s2 = kw.get("speed_medium1", 3.0e8), kw.get("speed_medium2", 2.0e8)
    theta1 = _wrap_angle(_wrap_angle(kw.get("incidence_angle", 30.0)))
    n1, n2 = 3.0e8 / s1, 3.0e8 / s2
    theta2 = float(law(n1, n2, theta1))
    if not np.isfinite(theta2):
        return {"refraction_angle": "invalid"}
    return {"refraction_angle": f"{float(noise(theta2, 1e-6)):.6e}"}


def _m4_complex(kw, law, noise, legacy):
    n1 = kw.get("refractive_index_1", 1.0)
    n2 = kw.get("refractive_index_2", 1.5)
    n3 = kw.get("refractive_index_3", 1.33)
    theta1 = _wrap_angle(kw.get("incidence_angle", 30.0))
    theta2 = float(law(n1, n2, theta1))
    if not np.isfinite(theta2):
        return {"final_refraction_angle": "invalid"}
    theta3 = float(law(n2, n3, theta2))
    if not np.isfinite(theta3):
        return {"final_refraction_angle": "invalid"}
    return {"final_refraction_angle": f"{float(noise(theta3, 1e-6)):.6e}"}


# -- m5_radioactive_decay -----------------------------------------------------------------------


def _m5_simple(kw, law, noise, legacy):
    N0, lam, t = kw.get("N0", 1.0), kw.get("lambda_constant", 1.0), kw.get("t", 1.0)
    times = np.linspace(0, t, _check_points(kw.get("num_points", 20)))
    activity = np.array([0.7 * float(law(N0, lam, tp)) for tp in times])
    activity = noise(activity, 1e-9)
    return {"time": _e6(times), "measured_activity": _e6(activity)}


def _m5_complex(kw, law, noise, legacy):
    N0a, N0b = kw.get("N0a", 1.0), kw.get("N0b", 1.0)
    la, lb, t = kw.get("lambda_a", 1.0), kw.get("lambda_b", 1.0), kw.get("t", 1.0)
    times = np.linspace(0, t, _check_points(kw.get("num_points", 20)))
    ratios = []
    for tp in times:
        na, nb = float(law(N0a, la, tp)), float(law(N0b, lb, tp))
        if abs(nb) < 1e-10:
            r = np.nan
        else:
            r = na / nb
            if not np.isfinite(r):
                r = np.nan
        ratios.append(r)
    ratios = noise(np.array(ratios), 1e-12)
    return {"time": _e6(times), "ratio": _e6(ratios)}


# -- m6_underdamped_harmonic --------------------------------------------------------------------

_M6_DEFAULTS = {
    "k_constant": 10.0,
    "mass": 1.0,
    "b_constant": 0.5,
    "initial_amplitude": 1.0,
}


def _m6_simple(kw, law, noise, legacy):
    p = {**_M6_DEFAULTS, **kw}
    omega = law(p["k_constant"], p["mass"], p["b_constant"])
    if not np.isfinite(omega) or omega == 0:
        return {"period": "invalid"}
    return {"period": f"{float(noise(2 * np.pi / omega, 1e-9)):.6e}"}


def _m6_complex(kw, law, noise, legacy):
    p = {**_M6_DEFAULTS, **kw}
    omega = law(p["k_constant"], p["mass"], p["b_constant"])
    if not np.isfinite(omega) or omega == 0:
        return {"time": [], "amplitude": []}
    period = 2 * np.pi / omega
    times = np.linspace(0, 2 * period, 20)
    amplitude = noise(
        p["initial_amplitude"] * np.exp(-3 * times) * np.cos(omega * times), 1e-9
    )
    return {
        "time": [f"{t:.6e}" for t in times.tolist()],
        "amplitude": [f"{a:.6e}" for a in amplitude.tolist()],
    }


# -- m7_malus_law -------------------------------------------------------------------------------


def _m7_inputs(kw):
    return kw.get("I_0", 1000.0), kw.get("theta", 0.785)


def _m7_simple(kw, law, noise, legacy):
    I_0, theta = _m7_inputs(kw)
    if I_0 <= 0 or theta <= 0 or theta > np.pi / 2:
        return float("nan")
    return noise(law(I_0, theta) / I_0, 1e-12)


def _m7_complex(kw, law, noise, legacy):
    I_0, theta = _m7_inputs(kw)
    if I_0 <= 0 or theta <= 0 or theta > np.pi / 2:
        return float("nan")
    return noise(law(law(I_0, theta), theta) - I_0, 1e-9)


# -- m8_sound_speed -----------------------------------------------------------------------------

_M8_GAS = {"adiabatic_index": 1.4, "molar_mass": 0.02897, "temperature": 293.15}


def _m8_speed(p, law):
    return law(p["adiabatic_index"], p["temperature"], p["molar_mass"])


def _m8_simple(kw, law, noise, legacy):
    p = {**_M8_GAS, "distance": 100.0, **kw}
    v = _m8_speed(p, law)
    if not np.isfinite(v) or v <= 0:
        return {"time": "invalid"}
    return {"time": f"{float(noise(2 * p['distance'] / v, 1e-9)):.6e}"}


def _m8_complex(kw, law, noise, legacy):
    p = {**_M8_GAS, "driving_frequency": 440.0, "tube_diameter": 0.1, **kw}
    v = _m8_speed(p, law)
    if not np.isfinite(v) or v <= 0:
        return {
            "first_resonance_length": "invalid",
            "second_resonance_length": "invalid",
        }
    f, diameter = p["driving_frequency"], p["tube_diameter"]
    if f <= 0 or v <= 0:
        l1, l2 = float("nan"), float("nan")
    else:
        wavelength = v / f
        e = 0.3 * diameter
        l1, l2 = wavelength / 4 - e, 3 * wavelength / 4 - e
        l1 = max(l1, 0)
        l2 = max(l2, 0)
    l1, l2 = noise(l1, 1e-9), noise(l2, 1e-9)
    return {
        "first_resonance_length": f"{float(l1):.6e}",
        "second_resonance_length": f"{float(l2):.6e}",
    }


# -- m9_hooke_law -------------------------------------------------------------------------------


def _m9_simple(kw, law, noise, legacy):
    x, m = kw.get("x", 1.0), kw.get("m", 1.0)
    if m <= 0:
        return float("nan")
    v = np.sqrt(2 * law(x) / m)
    ke = 0.5 * m * (v**2)
    ke_loss = -0.2 * x * (v**2)
    return noise(ke - ke_loss, 1e-9)


def _m9_complex(kw, law, noise, legacy):
    x, m = kw.get("x", 1.0), kw.get("m", 1.0)
    v = np.sqrt(2 * law(x) / m)
    return noise(np.exp(-x / 0.02) * v, 1e-9)


# -- m10_be_distribution ------------------------------------------------------------------------


def _m10_simple(kw, law, noise, legacy):
    p = {"temperature": 1e3, "probe_frequency": 1e8, **kw}
    omega = p["probe_frequency"]
    radiance = law(omega, p["temperature"]) * (omega**3)
    return {"spectral_radiance": f"{float(noise(radiance, 1e-12)):.12e}"}


def _m10_complex(kw, law, noise, legacy):
    from scipy.integrate import quad

    p = {"temperature": 1e3, "center_frequency": 1e9, "bandwidth": 1e1, **kw}
    T, c, bw = p["temperature"], p["center_frequency"], p["bandwidth"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        power, _ = quad(lambda w: law(w, T) * (w**3), c - bw / 2, c + bw / 2, limit=100)
    return {"total_power": f"{float(noise(power, 1e-12)):.6e}"}


# -- m11_heat_transfer --------------------------------------------------------------------------


def _m11_inputs(kw):
    return kw.get("m", 1.0), kw.get("c", 1000.0), kw.get("delta_T", 1.0)


def _m11_simple(kw, law, noise, legacy):
    m, c, delta_T = _m11_inputs(kw)
    q = law(m, c, delta_T)
    power = q / ((m * c) / 100.0)
    available = power * (1 - legacy.uniform(0.18, 0.22))
    f = [legacy.uniform(0.1, 0.8) for _ in range(3)]
    total = f[0] + f[1] + f[2]
    f = [fi / total for fi in f]
    return {
        "P_cond": noise(f[0] * available, 1e-9),
        "P_conv": noise(f[1] * available, 1e-9),
        "P_rad": noise(f[2] * available, 1e-9),
    }


def _m11_complex(kw, law, noise, legacy):
    m, c, delta_T = _m11_inputs(kw)
    q0 = law(m, c, delta_T)
    c_alt = c * legacy.uniform(0.7, 1.2)
    q1 = law(m, c_alt, delta_T)
    power = abs(q0 - q1) / ((m * c) / 100.0)
    available = power * (1 - legacy.uniform(0.18, 0.22))
    if math.isnan(available):  # pd.isna in NewtonBench
        return 0
    return int(noise(available, 1e-9) / 1.0)


#: (module, system) -> simulator(kwargs, law, noise, legacy_rng)
SIMULATORS: dict[tuple[str, str], Callable] = {
    ("m0_gravity", "simple_system"): _m0_simple,
    ("m0_gravity", "complex_system"): _m0_complex,
    ("m1_coulomb_force", "simple_system"): _m1_simple,
    ("m1_coulomb_force", "complex_system"): _m1_complex,
    ("m2_magnetic_force", "simple_system"): _m2_simple,
    ("m2_magnetic_force", "complex_system"): _m2_complex,
    ("m3_fourier_law", "simple_system"): _m3_simple,
    ("m3_fourier_law", "complex_system"): _m3_complex,
    ("m4_snell_law", "simple_system"): _m4_simple,
    ("m4_snell_law", "complex_system"): _m4_complex,
    ("m5_radioactive_decay", "simple_system"): _m5_simple,
    ("m5_radioactive_decay", "complex_system"): _m5_complex,
    ("m6_underdamped_harmonic", "simple_system"): _m6_simple,
    ("m6_underdamped_harmonic", "complex_system"): _m6_complex,
    ("m7_malus_law", "simple_system"): _m7_simple,
    ("m7_malus_law", "complex_system"): _m7_complex,
    ("m8_sound_speed", "simple_system"): _m8_simple,
    ("m8_sound_speed", "complex_system"): _m8_complex,
    ("m9_hooke_law", "simple_system"): _m9_simple,
    ("m9_hooke_law", "complex_system"): _m9_complex,
    ("m10_be_distribution", "simple_system"): _m10_simple,
    ("m10_be_distribution", "complex_system"): _m10_complex,
    ("m11_heat_transfer", "simple_system"): _m11_simple,
    ("m11_heat_transfer", "complex_system"): _m11_complex,
}
