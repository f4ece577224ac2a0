"""The 12 NewtonBench modules (``vanilla_equation`` system) as :class:`Task` objects.

Each module is one table entry: its variables (signature order, JSON keys, defaults, evaluation
domains of paper Table S1), texts, noise floor, input guard, how its laws post-process a value,
and the experiment-request transform. The laws themselves live in :mod:`etc_fast.laws` and
are evaluated with NewtonBench's scalar semantics by :mod:`etc_fast.tasks._pysem`; wherever
NewtonBench raises (caught or not), the truth is NaN.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from typing import Literal

import numpy as np

from etc_fast.laws import CONSTANTS, LAW_ARGS, LAWS, NAN_IF_NEGATIVE, law_expression
from etc_fast.tasks import _pysem
from etc_fast.tasks._base import DIFFICULTIES, LAW_VERSIONS, Task, Variable

__all__ = ["MODULES", "build_task"]

# How a law's computed value becomes the returned measurement:
#   "raw": returned as computed (a complex result, which NewtonBench would hand back as such, is NaN);
#   "finite_float": ``if not np.isfinite(v): nan; return float(v)`` (a NumPy complex gives its real
#       part, a Python complex raises TypeError);
#   "positive_finite": ``v if v > 0 and np.isfinite(v) else nan`` (complex: TypeError).
Finish = Literal["raw", "finite_float", "positive_finite"]
Guard = Callable[[np.ndarray], tuple[np.ndarray, float]]


def _all_nonpositive_guard(X: np.ndarray) -> tuple[np.ndarray, float]:
    # any(axis=1) of the 2-D X is a row mask; numpy's stub types it np.bool | NDArray (it cannot see ndim)
    return (X <= 0).any(axis=1), 0.0  # type: ignore[return-value]


def _distance_or_zero_guard(X: np.ndarray) -> tuple[np.ndarray, float]:
    # signature (a, b, distance): ``distance <= 0 or a == 0 or b == 0`` -> 0.0
    return (X[:, 2] <= 0) | (X[:, 0] == 0) | (X[:, 1] == 0), 0.0


def _fourier_guard(X: np.ndarray) -> tuple[np.ndarray, float]:
    # (k, A, delta_T, d): ``d <= 0 or delta_T <= 0`` -> 0.0
    return (X[:, 3] <= 0) | (X[:, 2] <= 0), 0.0


def _negative_x_guard(X: np.ndarray) -> tuple[np.ndarray, float]:
    return X[:, 0] < 0, math.nan


def _abs_inputs(X: np.ndarray) -> np.ndarray:
    """NewtonBench m2's runner passes ``abs()`` of every input to the law."""
    return np.abs(X)


def _wrap_incidence_angle(X: np.ndarray) -> np.ndarray:
    """NewtonBench m4's runner: ``a = a % 180`` (Python modulo), then ``180 - a`` if ``a > 90``."""
    X = np.array(X, dtype=np.float64, copy=True)
    a = np.mod(X[:, 2], 180.0)
    X[:, 2] = np.where(a > 90.0, 180.0 - a, a)
    return X


@dataclasses.dataclass(frozen=True)
class _Var:
    name: str
    description: str  # agent-facing meaning
    scale: Literal["log", "linear"]
    low: float
    high: float
    key: str | None = None
    default: float | None = 1.0
    judge_meaning: str | None = None  # PARAM_DESCRIPTION meaning (None: omitted, as NewtonBench)
    judge_domain: str = "It should be a positive real number."


def _always(value):
    """A per-law setting (``finish``, ``fp_raise``) that is the same for every difficulty and version."""
    return lambda difficulty, version: value


@dataclasses.dataclass(frozen=True)
class _Module:
    name: str
    title: str
    description: str
    output_name: str
    output_description: str
    variables: tuple[_Var, ...]
    noise_floor: float
    guard: Guard | None = None
    finish: Callable[[str, str], Finish] = _always("raw")
    fp_raise: Callable[[str, str], bool] = _always(False)
    request_transform: Callable[[np.ndarray], np.ndarray] | None = None


_MODULE_LIST: tuple[_Module, ...] = (
    _Module(
        name="m0_gravity",
        title="gravitational force",
        description=(
            "A force meter measures the gravitational force exerted on a second object by a first "
            "object, for chosen masses of the two objects and their separation."
        ),
        output_name="F",
        output_description="the magnitude of the gravitational force exerted on mass2 by mass1",
        variables=(
            _Var("mass1", "mass of the first object", "log", 1.0, 1e3, default=None, judge_meaning="mass of the first object"),
            _Var("mass2", "mass of the second object", "log", 1.0, 1e3, default=None, judge_meaning="mass of the second object"),
            _Var("distance", "distance between the two objects", "log", 1.0, 10.0, default=None, judge_meaning="distance between the two objects"),
        ),
        noise_floor=1e-12,
        guard=_all_nonpositive_guard,
    ),
    _Module(
        name="m1_coulomb_force",
        title="electrostatic force",
        description=(
            "A force meter measures the electrostatic force between two point charges, for chosen "
            "charges (positive) and separation."
        ),
        output_name="F",
        output_description="the electrostatic force between the two point charges",
        variables=(
            _Var("q1", "charge of the first particle (positive)", "log", 0.1, 10.0, judge_meaning="magnitude of the charge of the first object"),
            _Var("q2", "charge of the second particle (positive)", "log", 0.1, 10.0, judge_meaning="magnitude of the charge of the second object"),
            _Var("distance", "distance between the two charges", "log", 0.1, 10.0, judge_meaning="distance between the two objects"),
        ),
        noise_floor=1e-12,
        guard=_distance_or_zero_guard,
    ),
    _Module(
        name="m2_magnetic_force",
        title="magnetic force between parallel wires",
        description=(
            "A force sensor measures the force per unit length between two long parallel wires, for "
            "chosen currents in the wires and distance between them."
        ),
        output_name="F",
        output_description="the magnitude of the force per unit length on wire 2 exerted by wire 1",
        variables=(
            _Var("current1", "current in the first wire", "log", 1e-3, 1e-1, default=None, judge_meaning="current in the first wire", judge_domain="It can be assumed that it is always positive."),
            _Var("current2", "current in the second wire", "log", 1e-3, 1e-1, default=None, judge_meaning="current in the second wire", judge_domain="It can be assumed that it is always positive."),
            _Var("distance", "distance between the two wires", "log", 1e-3, 1e-1, default=None, judge_meaning="distance between the two wires"),
        ),
        noise_floor=1e-12,
        guard=_distance_or_zero_guard,
        request_transform=_abs_inputs,
    ),
    _Module(
        name="m3_fourier_law",
        title="conductive heat transfer",
        description=(
            "A calorimeter measures the rate of heat (power) conducted between two regions at "
            "different temperatures through a slab, for a chosen k_constant, cross-sectional area, "
            "temperature difference (> 0) and slab thickness."
        ),
        output_name="P",
        output_description="the power transfer rate (P) between the two regions",
        variables=(
            _Var("k", "k_constant (always positive)", "log", 0.1, 10.0),
            _Var("A", "cross-sectional area", "log", 1e-4, 1e-2, judge_meaning="cross-sectional area"),
            _Var("delta_T", "temperature difference (> 0)", "log", 10.0, 1e3, judge_meaning="temperature difference",
                 judge_domain="It can be assumed to be a positive real number."),
            _Var("d", "thickness of the material (distance between the regions)", "log", 1e-2, 1.0,
                 judge_meaning="thickness of the material"),
        ),
        noise_floor=1e-9,
        guard=_fourier_guard,
    ),
    _Module(
        name="m4_snell_law",
        title="refraction angle",
        description=(
            "An optical bench measures the refraction angle of a light ray passing from a first "
            "medium into a second, for chosen refractive indices (about 1 to 1.5) and incidence "
            "angle in degrees (0 to 90). Transforming the output with sin, cos or tan may help."
        ),
        output_name="angle2",
        output_description="the refraction angle in degrees",
        variables=(
            _Var("n1", "refractive index of the first medium", "linear", 1.0, 1.5, key="refractive_index_1", default=1.1,
                 judge_meaning="refractive index of the first medium", judge_domain="It should be a positive real number, typically >= 1."),
            _Var("n2", "refractive index of the second medium", "linear", 1.0, 1.5, key="refractive_index_2", default=1.2,
                 judge_meaning="refractive index of the second medium", judge_domain="It should be a positive real number, typically >= 1."),
            _Var("angle1", "angle of incidence in degrees (0 to 90)", "linear", 0.0, 90.0, key="incidence_angle", default=0.0,
                 judge_meaning="angle of incidence in degrees", judge_domain="It should be a real number, typically between 0 and 90."),
        ),
        noise_floor=1e-6,
        request_transform=_wrap_incidence_angle,
    ),
    _Module(
        name="m5_radioactive_decay",
        title="radioactive decay",
        description=(
            "A detector measures the remaining amount N of a radioactive sample, for a chosen initial "
            "amount, decay constant and elapsed time. Results that overflow are reported as NaN."
        ),
        output_name="N",
        output_description="the remaining amount N(t) of the sample",
        variables=(
            _Var("N0", "initial amount of the sample", "log", 1.0, 1e2, judge_meaning="initial number of atoms"),
            _Var("lambda_constant", "decay constant", "log", 1e-3, 1e-1),
            _Var("t", "elapsed time", "log", 1e-2, 10.0, judge_meaning="time elapsed"),
        ),
        noise_floor=1e-9,
        finish=_always("finite_float"),
        fp_raise=_always(True),
    ),
    _Module(
        name="m6_underdamped_harmonic",
        title="damped oscillator frequency",
        description=(
            "A motion sensor measures the angular frequency of a damped harmonic oscillator, for a "
            "chosen spring constant, mass and damping constant."
        ),
        output_name="omega",
        output_description="the angular frequency (omega) of the damped oscillation",
        variables=(
            _Var("k", "spring constant", "log", 1e2, 1e4, key="k_constant", default=10.0),
            _Var("m", "mass of the oscillator", "log", 0.1, 10.0, key="mass", default=1.0, judge_meaning="mass of the object"),
            _Var("b", "damping constant", "log", 1e-2, 1.0, key="b_constant", default=0.5),
        ),
        noise_floor=1e-9,
    ),
    _Module(
        name="m7_malus_law",
        title="polarized light transmission",
        description=(
            "A photometer measures the intensity of polarized light transmitted through a polarizer, "
            "for a chosen incident intensity and angle theta in radians, in (0, pi/2]."
        ),
        output_name="I",
        output_description="the transmitted light intensity (I)",
        variables=(
            _Var("I_0", "intensity of the incident light", "log", 100.0, 2000.0, default=1000.0,
                 judge_meaning="initial intensity of the light"),
            _Var("theta", "angle between the light's polarization and the polarizer axis, in radians", "linear",
                 1e-6, math.pi / 2, default=0.785, judge_meaning="angle between the polarization axis of the polarizer and the polarization direction of the incident light in radians",
                 judge_domain="It should be a real number between 0 and π/2."),
        ),
        noise_floor=1e-9,
        finish=_always("finite_float"),
        fp_raise=_always(True),
    ),
    _Module(
        name="m8_sound_speed",
        title="speed of sound",
        description=(
            "An acoustic sensor measures the speed of sound in an ideal gas, for a chosen adiabatic "
            "index, temperature and molar mass."
        ),
        output_name="v",
        output_description="the speed of sound (v) in the gas",
        variables=(
            _Var("gamma", "adiabatic index of the gas", "linear", 1.3, 1.7, key="adiabatic_index", default=1.4,
                 judge_meaning="adiabatic index of the gas"),
            _Var("T", "temperature of the gas", "log", 10.0, 1e3, key="temperature", default=293.15, judge_meaning="temperature of the medium in Kelvin"),
            _Var("M", "molar mass of the gas", "log", 1e-3, 1e-1, key="molar_mass", default=0.02897, judge_meaning="molar mass of the medium"),
        ),
        noise_floor=1e-9,
    ),
    _Module(
        name="m9_hooke_law",
        title="elastic potential energy",
        description="A spring apparatus measures the elastic potential energy stored for a chosen displacement x.",
        output_name="U",
        output_description="the elastic potential energy (U) stored in the spring",
        variables=(_Var("x", "displacement of the spring from equilibrium", "log", 1e-3, 1.0, judge_meaning="displacement from the equilibrium position"),),
        noise_floor=1e-9,
        guard=_negative_x_guard,
    ),
    _Module(
        name="m10_be_distribution",
        title="mean photon occupation number",
        description=(
            "A spectrometer measures the mean number of photons occupying a mode, for a chosen angular "
            "frequency omega (at least 1e8) and temperature T (at least 10). Explore several orders "
            "of magnitude of both."
        ),
        output_name="n",
        output_description="the mean occupation number (n) of the mode",
        variables=(
            _Var("omega", "angular frequency of the mode", "log", 1e8, 1e10, default=1e8, judge_meaning="angular frequency"),
            _Var("T", "temperature", "log", 10.0, 1e3, key="temperature", default=1e3, judge_meaning="temperature"),
        ),
        noise_floor=1e-18,
        finish=_always("positive_finite"),
        fp_raise=_always(True),
    ),
    _Module(
        name="m11_heat_transfer",
        title="heat transfer",
        description=(
            "A calorimeter measures the heat transferred to a sample, for a chosen mass, specific heat "
            "capacity and temperature change (> 0)."
        ),
        output_name="Q",
        output_description="the heat (Q) transferred to the sample",
        variables=(
            _Var("m", "mass of the sample", "log", 1e-3, 1e3, judge_meaning="mass of the substance"),
            _Var("c", "specific heat capacity", "log", 1e2, 1e4, default=1000.0),
            _Var("delta_T", "temperature change (> 0)", "log", 10.0, 1e3, judge_meaning="temperature change"),
        ),
        noise_floor=1e-9,
        guard=_all_nonpositive_guard,
        finish=lambda difficulty, version: "raw" if difficulty == "easy" else "finite_float",
        fp_raise=lambda difficulty, version: difficulty != "easy",
    ),
)

#: Module name -> table entry.
_MODULES: dict[str, _Module] = {m.name: m for m in _MODULE_LIST}
if {m.name: tuple(v.name for v in m.variables) for m in _MODULE_LIST} != LAW_ARGS:  # one order, stated twice
    raise ImportError("etc_fast.tasks: the modules' variables disagree with etc_fast.laws.LAW_ARGS")
#: Module names in NewtonBench order.
MODULES: tuple[str, ...] = tuple(_MODULES)


def _finish(value: _pysem.Value, how: Finish) -> np.ndarray:
    """Turn an evaluated value into the measurement (NaN wherever NewtonBench raises)."""
    y = value.re.copy()
    bad = value.err.copy()
    if how == "raw":
        bad |= value.is_complex
    elif how == "finite_float":
        finite = np.isfinite(value.re) & np.isfinite(value.im)
        bad |= ~finite | (value.kind == _pysem.PC)
    else:  # positive_finite
        bad |= value.is_complex | ~(np.isfinite(value.re) & (value.re > 0))
    y[bad] = np.nan
    return y


def _truth_fn(module: _Module, source: str, difficulty: str, version: str) -> Callable[[np.ndarray], np.ndarray]:
    names = tuple(v.name for v in module.variables)
    constants = CONSTANTS[module.name]
    fp_raise = module.fp_raise(difficulty, version)
    how = module.finish(difficulty, version)
    guard = module.guard
    precheck = NAN_IF_NEGATIVE.get((module.name, difficulty, version))

    def truth(X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        inputs = {n: X[:, i] for i, n in enumerate(names)}
        value = _pysem.evaluate(source, inputs, constants, fp_raise=fp_raise)
        y = _finish(value, how)
        if precheck is not None:  # ``if base < 0: return nan`` (raising while computing it: NaN too)
            base = _pysem.evaluate(precheck, inputs, constants, fp_raise=fp_raise)
            y[base.err | base.is_complex | (base.re < 0)] = np.nan
        if guard is not None:
            mask, guard_value = guard(X)
            y[mask] = guard_value
        return y

    return truth


def _param_description(module: _Module) -> str:
    lines = []
    for v in module.variables:
        meaning = f"{v.judge_meaning}. " if v.judge_meaning else ""
        lines.append(f"- {v.name}: {meaning}{v.judge_domain}")
    return "\n".join(lines)


def build_task(module_name: str, difficulty: str, law_version: str) -> Task:
    """Build one NewtonBench law as a :class:`Task` (arguments already validated)."""
    module = _MODULES[module_name]
    if difficulty not in DIFFICULTIES or law_version not in LAW_VERSIONS:
        raise KeyError(f"{module_name}: no law {difficulty}/{law_version}")
    source = LAWS[module_name][(difficulty, law_version)]
    variables = tuple(
        Variable(
            name=v.name,
            key=v.key or v.name,
            default=v.default,
            description=v.description,
            scale=v.scale,
            low=float(v.low),
            high=float(v.high),
        )
        for v in module.variables
    )
    return Task(
        name=module.name,
        module=module.name,
        difficulty=difficulty,
        law_version=law_version,
        title=module.title,
        description=module.description,
        output_name=module.output_name,
        output_description=module.output_description,
        variables=variables,
        noise_floor=module.noise_floor,
        ground_truth_text=source,
        param_description=_param_description(module),
        truth_fn=_truth_fn(module, source, difficulty, law_version),
        law_expression=law_expression(source, CONSTANTS[module_name]),
        source="newtonbench",
        request_transform=module.request_transform,
        constants=dict(CONSTANTS[module_name]),
    )
