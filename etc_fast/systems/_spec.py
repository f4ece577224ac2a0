"""What an agent may know of each system: its controls (keys, defaults, pool domains) and observables.

The controls, keys and defaults are NewtonBench's (``newtonbench_systems.md``). The pool domain of
each control is ours: the law's own inputs span the module's vanilla evaluation domain (paper
Table S1, the domain the submitted law is scored on), so every scored input is reachable; the
apparatus controls (masses, time steps, tube sizes) span ranges where NewtonBench's defaults and
prompts place them and where the 20 returned points are informative. A control with
``pool=False`` keeps its default in the pool (e.g. ``duration``: the defaults already give the
full 20 points for every pool time step). docs/systems.md tabulates them.
"""

from __future__ import annotations

import dataclasses
import math
from typing import Literal

__all__ = ["SPECS", "Control", "SystemSpec", "spec"]


@dataclasses.dataclass(frozen=True)
class Control:
    """One control of a system experiment.

    Attributes:
        key: JSON key of the request.
        default: NewtonBench's default when the key is missing; ``None`` = required.
        description: What it sets (agent-facing).
        scale: Pool sampling scale.
        low: Pool domain, lower end.
        high: Pool domain, upper end.
        pool: Whether the pool varies it (else it stays at ``fixed``, or the default).
        fixed: The value the pool uses when ``pool`` is False (default: ``default``).
    """

    key: str
    default: float | None
    description: str
    scale: Literal["log", "linear"] = "log"
    low: float = 0.0
    high: float = 0.0
    pool: bool = True
    fixed: float | None = None

    @property
    def pool_value(self) -> float:
        return self.fixed if self.fixed is not None else self.default


@dataclasses.dataclass(frozen=True)
class SystemSpec:
    """A system's public description.

    Attributes:
        module: NewtonBench module.
        system: ``simple_system``/``complex_system``.
        apparatus: What the apparatus does (agent-facing, our words).
        controls: Request keys in NewtonBench's prompt order.
        channels: Observable channels (names of the output series, in order).
        n_times: Points per channel (20 for series, 1 for a single reading).
        output_format: How NewtonBench returns one experiment (agent-facing).
        assisting_laws: The laws the prompt guarantees, in our words.
    """

    module: str
    system: str
    apparatus: str
    controls: tuple[Control, ...]
    channels: tuple[str, ...]
    n_times: int
    output_format: str
    assisting_laws: tuple[str, ...]

    @property
    def pool_controls(self) -> tuple[Control, ...]:
        return tuple(c for c in self.controls if c.pool)


def _c(
    key, default, description, scale="log", low=0.0, high=0.0, pool=True, fixed=None
) -> Control:
    return Control(
        key, default, description, scale, float(low), float(high), pool, fixed
    )


_TRAJ_FMT = "a JSON object of lists (at most 20 points each): {keys}; numbers as strings in scientific notation"
_KIN = "kinematics: v = v0 + a t, x = x0 + v0 t + a t^2 / 2, v^2 = v0^2 + 2 a (x - x0)"

SPECS: dict[tuple[str, str], SystemSpec] = {}


def _add(module, system, apparatus, controls, channels, n_times, output_format, laws):
    SPECS[(module, system)] = SystemSpec(
        module,
        system,
        apparatus,
        tuple(controls),
        tuple(channels),
        n_times,
        output_format,
        tuple(laws),
    )


_M0 = [
    _c("mass1", None, "mass of the fixed object at the origin", "log", 1.0, 1e3),
    _c("mass2", None, "mass of the moving object", "log", 1.0, 1e3),
    _c(
        "distance",
        None,
        "starting distance of the moving object from the origin",
        "log",
        1.0,
        10.0,
    ),
]
_add(
    "m0_gravity",
    "simple_system",
    "A 1-D track: mass1 is fixed at x = 0, mass2 starts at x = distance with initial_velocity along x, and a tracker records mass2's position and velocity over time.",
    [
        *_M0,
        _c(
            "initial_velocity",
            0.0,
            "initial velocity of mass2 along x",
            "linear",
            -0.5,
            0.5,
        ),
        _c("duration", 5.0, "time to track the motion", pool=False),
        _c("time_step", 0.01, "time between recorded points", "log", 0.01, 0.25),
    ],
    ("position", "velocity"),
    20,
    _TRAJ_FMT.format(keys="time, position, velocity"),
    [
        "Newton's second law F = m a (1-D, signed along x)",
        _KIN,
        "work-energy theorem: F d = change of m v^2 / 2; mechanical energy is conserved",
    ],
)
_add(
    "m0_gravity",
    "complex_system",
    "A 2-D plane: mass1 is fixed at the origin, mass2 starts at (distance, 0) with velocity (0, initial_velocity), and a tracker records mass2's position and velocity vectors over time.",
    [
        *_M0,
        _c(
            "initial_velocity",
            0.0,
            "initial speed of mass2, perpendicular to the radius",
            "linear",
            0.0,
            1.0,
        ),
        _c("duration", 10.0, "time to track the motion", pool=False),
        _c("time_step", 0.1, "time between recorded points", "log", 0.01, 0.5),
    ],
    ("x", "y", "vx", "vy"),
    20,
    _TRAJ_FMT.format(keys="time, position [x, y], velocity [vx, vy]"),
    [
        "the force acts along the line joining the masses; F = m a with a parallel to F",
        "energy E = m v^2 / 2 + V(r) is conserved (V unknown)",
        "circular orbit: F = m v^2 / r, period T = 2 pi r / v",
        _KIN,
    ],
)
_M1 = [
    _c("q1", 1.0, "charge of the fixed particle (signed)", "log", 0.1, 10.0),
    _c("q2", 1.0, "charge of the moving particle (signed)", "log", 0.1, 10.0),
    _c("m1", 1.0, "mass of the first particle", pool=False),
    _c("m2", 1.0, "mass of the moving particle", "log", 0.1, 10.0),
    _c("distance", 1.0, "starting distance between the charges", "log", 0.1, 10.0),
]
for _system, _dur, _dt, _hi, _chan, _extra in (
    ("simple_system", 5.0, 0.01, 0.25, "velocity", []),
    (
        "complex_system",
        10.0,
        0.1,
        0.5,
        "kinetic_energy",
        ["kinetic energy KE = m v^2 / 2"],
    ),
):
    _add(
        "m1_coulomb_force",
        _system,
        "Two charges on a line: the charges decay over time as q(t) = q(0) exp(-t / rate); the second charge starts at rest at x = distance and a tracker records its "
        + ("velocity" if _system == "simple_system" else "kinetic energy")
        + " over time.",
        [
            *_M1,
            _c("duration", _dur, "time to track the motion", pool=False),
            _c("time_step", _dt, "time between recorded points", "log", 0.01, _hi),
        ],
        (_chan,),
        20,
        _TRAJ_FMT.format(keys=f"time, {_chan}"),
        [
            "motion along x only; F = m a",
            "v = v0 + a t, x = x0 + v t",
            "the sign of q1 q2 decides repulsion or attraction",
            "each charge decays as q(t) = q(0) exp(-t / rate)",
            *_extra,
        ],
    )
_M2 = [
    _c("current1", None, "current in wire 1 (signed)", "log", 1e-3, 1e-1),
    _c("current2", None, "current in wire 2 (signed)", "log", 1e-3, 1e-1),
    _c("mass_wire", 1.0, "mass per unit length of wire 2", "log", 1e-3, 1.0),
    _c("distance", None, "starting distance between the wires", "log", 1e-3, 1e-1),
    _c(
        "initial_velocity",
        0.0,
        "initial velocity of wire 2",
        "linear",
        0.0,
        0.0,
        pool=False,
    ),
]
_add(
    "m2_magnetic_force",
    "simple_system",
    "Two long parallel wires: wire 1 is fixed, wire 2 (free to move along x) starts at x = distance; a tracker records wire 2's position and velocity.",
    [
        *_M2,
        _c("duration", 1.0, "time to track the motion", pool=False),
        _c("time_step", 0.05, "time between recorded points", "log", 0.005, 0.05),
    ],
    ("position", "velocity"),
    20,
    _TRAJ_FMT.format(keys="time, position, velocity"),
    [
        "F = m a per unit length",
        _KIN,
        "currents in the same direction attract, opposite directions repel; the law takes current magnitudes",
    ],
)
_add(
    "m2_magnetic_force",
    "complex_system",
    "Wire 1 carries an alternating current current1 sin(2 pi 50 t); wire 2 carries the steady current2 and moves along x; a tracker records one 50 Hz period (20 points).",
    [
        _c("current1", 1.0, "amplitude of the AC current in wire 1", "log", 1e-3, 1e-1),
        _c("current2", 1.0, "DC current in wire 2", "log", 1e-3, 1e-1),
        _c("mass_wire", 0.01, "mass per unit length of wire 2", "log", 1e-4, 1e-1),
        _c("distance", 0.1, "starting distance between the wires", "log", 1e-3, 1e-1),
        _c("initial_velocity", 0.0, "initial velocity of wire 2", pool=False),
    ],
    ("position", "velocity"),
    20,
    "a JSON object of 20-point lists: time, position, velocity (strings in scientific notation)",
    [
        "F = m a per unit length",
        _KIN,
        "same direction attracts, opposite repels",
        "I(t) = I0 sin(2 pi f t), f = 50 Hz; the record spans exactly one period",
    ],
)
_M3 = [
    _c("k", 1.0, "k_constant of the material", "log", 0.1, 10.0),
    _c("A", 1.0, "cross-sectional area", "log", 1e-4, 1e-2),
    _c("delta_T", 1.0, "temperature difference across the slab", "log", 10.0, 1e3),
    _c("d", 1.0, "thickness of the slab", "log", 1e-2, 1.0),
    _c("num_points", 20, "number of positions sampled across the slab", pool=False),
]
_add(
    "m3_fourier_law",
    "simple_system",
    "A slab of thickness d between two regions: probes at num_points evenly spaced positions x in [0, d] record the steady temperature.",
    _M3,
    ("T",),
    20,
    "a JSON object: x (positions) and T (temperatures), strings in scientific notation",
    [
        "energy conservation",
        "heat diffuses by the heat equation",
        "the steady profile is linear: T(x) = T0 - (P / (k A)) x, P the conducted power",
    ],
)
_add(
    "m3_fourier_law",
    "complex_system",
    "A slab of thickness d: probes at num_points positions x in [0, d] record the heat flux of an exponential temperature profile.",
    _M3,
    ("heat_flux",),
    20,
    "a JSON object: x (positions) and heat_flux, strings in scientific notation",
    [
        "energy conservation",
        "heat diffuses by the heat equation",
        "flux q = -k dT/dx by finite differences",
        "T(x) = delta_T exp(-x P / (k A delta_T)), P the conducted power",
    ],
)
_add(
    "m4_snell_law",
    "simple_system",
    "Light passes from medium 1 into medium 2, each given by the speed of light in it; a goniometer reads the refraction angle (degrees).",
    [
        _c(
            "speed_medium1",
            3.0e8,
            "speed of light in medium 1 (m/s)",
            "linear",
            2.0e8,
            3.0e8,
        ),
        _c(
            "speed_medium2",
            2.0e8,
            "speed of light in medium 2 (m/s)",
            "linear",
            2.0e8,
            3.0e8,
        ),
        _c(
            "incidence_angle",
            30.0,
            "angle of incidence in degrees",
            "linear",
            0.0,
            90.0,
        ),
    ],
    ("refraction_angle",),
    1,
    'a JSON object: refraction_angle (string, degrees) or "invalid"',
    [
        "refractive index n = c / v with c = 3.0e8 m/s",
        "light travels in straight lines in a uniform medium",
    ],
)
_add(
    "m4_snell_law",
    "complex_system",
    "Light crosses three layers of given refractive indices; the final refraction angle (degrees) after the second interface is read.",
    [
        _c("refractive_index_1", 1.0, "index of layer 1", "linear", 1.0, 1.5),
        _c("refractive_index_2", 1.5, "index of layer 2", "linear", 1.0, 1.5),
        _c("refractive_index_3", 1.33, "index of layer 3", "linear", 1.0, 1.5),
        _c(
            "incidence_angle",
            30.0,
            "angle of incidence in degrees",
            "linear",
            0.0,
            90.0,
        ),
    ],
    ("final_refraction_angle",),
    1,
    'a JSON object: final_refraction_angle (string, degrees) or "invalid"',
    [
        "refraction at each interface follows the same law",
        "each interface's output angle is the next interface's input angle",
    ],
)
_add(
    "m5_radioactive_decay",
    "simple_system",
    "A detector with 70% efficiency records a decaying sample at num_points evenly spaced times from 0 to t.",
    [
        _c("N0", 1.0, "initial amount of the sample", "log", 1.0, 1e2),
        _c("lambda_constant", 1.0, "decay constant", "log", 1e-3, 1e-1),
        _c("t", 1.0, "end time of the record", "log", 0.1, 10.0),
        _c("num_points", 20, "number of recorded times", pool=False),
    ],
    ("measured_activity",),
    20,
    "a JSON object: time and measured_activity, strings in scientific notation",
    [
        "energy conservation",
        "the detector has 70% efficiency: it scales the magnitude, not the shape",
    ],
)
_add(
    "m5_radioactive_decay",
    "complex_system",
    "Two independent samples A and B decay side by side; the ratio N_A(t) / N_B(t) is recorded at num_points times from 0 to t.",
    [
        _c("N0a", 1.0, "initial amount of A", "log", 1.0, 1e2),
        _c("N0b", 1.0, "initial amount of B", "log", 1.0, 1e2),
        _c("lambda_a", 1.0, "decay constant of A", "log", 1e-3, 1e-1),
        _c("lambda_b", 1.0, "decay constant of B", "log", 1e-3, 1e-1),
        _c("t", 1.0, "end time of the record", "log", 0.1, 10.0),
        _c("num_points", 20, "number of recorded times", pool=False),
    ],
    ("ratio",),
    20,
    "a JSON object: time and ratio, strings in scientific notation (NaN where B is exhausted)",
    [
        "energy conservation",
        "the samples decay independently (not a chain)",
        "R(t) = N_A(t) / N_B(t)",
    ],
)
_M6 = [
    _c("k_constant", 10.0, "spring constant", "log", 1e2, 1e4),
    _c("mass", 1.0, "mass of the oscillator", "log", 0.1, 10.0),
    _c("b_constant", 0.5, "damping constant", "log", 1e-2, 1.0),
]
_add(
    "m6_underdamped_harmonic",
    "simple_system",
    "A damped oscillator; a timer reads the period of its oscillation.",
    _M6,
    ("period",),
    1,
    'a JSON object: period (string) or "invalid"',
    ["T = 2 pi / omega", "the net force is the vector sum of the forces"],
)
_add(
    "m6_underdamped_harmonic",
    "complex_system",
    "A damped oscillator; an amplitude record of 20 points spans two periods.",
    [*_M6, _c("initial_amplitude", 1.0, "initial amplitude", pool=False)],
    ("time", "amplitude"),
    20,
    "a JSON object: time and amplitude, 20 strings each (empty lists when no oscillation)",
    ["x(t) = A0 exp(-3 t) cos(omega t)", "T = 2 pi / omega", "forces superpose"],
)
_M7 = [
    _c("I_0", 1000.0, "intensity of the incident light", "log", 100.0, 2000.0),
    _c(
        "theta",
        0.785,
        "angle between polarization and polarizer axis (radians, in (0, pi/2])",
        "linear",
        1e-6,
        math.pi / 2,
    ),
]
_add(
    "m7_malus_law",
    "simple_system",
    "A photometer behind one polarizer reads the transmission ratio I / I_0.",
    _M7,
    ("ratio",),
    1,
    "a bare number (NaN outside the allowed inputs)",
    [
        "energy conservation",
        "a polarizer passes the aligned component; transmission depends on the angle",
    ],
)
_add(
    "m7_malus_law",
    "complex_system",
    "Two polarizers in a row at the same angle; a photometer reads I_1 - I_0 (after both, minus the incident intensity).",
    _M7,
    ("difference",),
    1,
    "a bare number (NaN outside the allowed inputs)",
    [
        "energy conservation",
        "both polarizers apply the same law",
        "the difference depends on I_0 and theta",
    ],
)
_M8 = [
    _c("adiabatic_index", 1.4, "adiabatic index of the gas", "linear", 1.3, 1.7),
    _c("molar_mass", 0.02897, "molar mass of the gas", "log", 1e-3, 1e-1),
    _c("temperature", 293.15, "temperature of the gas", "log", 10.0, 1e3),
]
_add(
    "m8_sound_speed",
    "simple_system",
    "A sound pulse travels to a wall at the given distance and back; a timer reads the echo time.",
    [*_M8, _c("distance", 100.0, "distance to the wall", pool=False)],
    ("time",),
    1,
    'a JSON object: time (string) or "invalid"',
    ["v = f lambda", "intensity I = P / (4 pi r^2)", "the Doppler formula"],
)
_add(
    "m8_sound_speed",
    "complex_system",
    "A resonance tube closed at one end is driven at a frequency; the first two resonance lengths are read.",
    [
        *_M8,
        _c("driving_frequency", 440.0, "driving frequency (Hz)", pool=False),
        _c("tube_diameter", 0.1, "tube diameter", pool=False),
    ],
    ("first_resonance_length", "second_resonance_length"),
    1,
    'a JSON object: first_resonance_length, second_resonance_length (strings) or "invalid"',
    [
        "v = f lambda",
        "resonances at odd multiples of lambda / 4 of the effective length",
        "effective length = L + e, e = 0.3 d",
    ],
)
_M9 = [
    _c("x", 1.0, "displacement of the spring", "log", 1e-3, 1.0),
    _c("m", 1.0, "mass on the spring", "log", 0.1, 10.0),
]
_add(
    "m9_hooke_law",
    "simple_system",
    "A spring released from displacement x launches a mass m; a sensor reads the net kinetic energy after air losses.",
    _M9,
    ("net_kinetic_energy",),
    1,
    "a bare number",
    [
        "energy conservation; U is the stored elastic energy",
        "U = m v_max^2 / 2",
        "air loss U_loss = -k_air x v_max^2 with k_air = 0.2",
        "Net_KE = U - U_loss",
    ],
)
_add(
    "m9_hooke_law",
    "complex_system",
    "A spring released from displacement x launches a mass m; a sensor reads the realistic maximum velocity after a displacement-dependent loss.",
    _M9,
    ("max_velocity",),
    1,
    "a bare number",
    [
        "energy conservation; U the stored elastic energy",
        "U = m v_max^2 / 2",
        "energy retention exp(-x / x_scale), x_scale fixed and not revealed",
    ],
)
_add(
    "m10_be_distribution",
    "simple_system",
    "A spectrometer reads the spectral radiance of a thermal source at one angular frequency.",
    [
        _c("temperature", 1e3, "temperature of the source", "log", 10.0, 1e3),
        _c("probe_frequency", 1e8, "angular frequency probed", "log", 1e8, 1e16),
    ],
    ("spectral_radiance",),
    1,
    "a JSON object: spectral_radiance (string, 12 decimals)",
    [
        "spectral radiance R is proportional to n omega^3",
        "radiated power per area is proportional to T^4",
    ],
)
_add(
    "m10_be_distribution",
    "complex_system",
    "A band-pass calorimeter reads the power of a thermal source integrated over a band of angular frequencies.",
    [
        _c("temperature", 1e3, "temperature of the source", "log", 10.0, 1e3),
        _c(
            "center_frequency", 1e9, "band centre (angular frequency)", "log", 1e8, 1e14
        ),
        _c("bandwidth", 1e1, "band width", pool=False),
    ],
    ("total_power",),
    1,
    "a JSON object: total_power (string)",
    [
        "P = integral of R d omega over [centre - width / 2, centre + width / 2]",
        "R proportional to n omega^3",
        "a narrow band gives P close to R(centre) x width",
    ],
)
_M11 = [
    _c("m", 1.0, "mass of the sample", "log", 1e-3, 1e3),
    _c("c", 1000.0, "specific heat capacity", "log", 1e2, 1e4),
    _c("delta_T", 1.0, "temperature change", "log", 10.0, 1e3),
]
_add(
    "m11_heat_transfer",
    "simple_system",
    "A heated sample delivers its heat over a time t = m c / 100; after an 18-22% loss the power splits at random among conduction, convection and radiation.",
    _M11,
    ("total_power",),
    1,
    "a JSON object of three bare numbers: P_cond, P_conv, P_rad (their sum is the available power)",
    [
        "energy conservation; Q_total = law(m, c, delta_T)",
        "t = m c / 100, power = Q / t",
        "18-22% is lost before the split; the split is random",
    ],
)
_add(
    "m11_heat_transfer",
    "complex_system",
    "Two heat amounts are compared, with c and with a randomly rescaled c_alt; their difference, delivered over t = m c / 100 after an 18-22% loss, lights 1 W bulbs.",
    _M11,
    ("bulbs",),
    1,
    "a bare integer: the number of bulbs lit",
    [
        "Q_original = law(m, c, delta_T), Q_alt = law(m, c_alt, delta_T) with a random c_alt",
        "P = |Q_original - Q_alt| / t, t = m c / 100",
        "18-22% loss; 1 W per bulb",
    ],
)


def spec(module: str, system: str) -> SystemSpec:
    """The public description of ``module`` in ``system``."""
    try:
        return SPECS[(module, system)]
    except KeyError:
        raise ValueError(f"no system spec for {module!r} / {system!r}") from None
