"""One system definition: everything etc_fast knows of a NewtonBench module in one simulated system.

A :class:`SystemDefinition` holds, for one (module, system) pair, every fact that used to be spread
over per-module tables:

* ``spec`` (:class:`SystemSpec`): what an agent may know (apparatus, controls with defaults and
  pool domains, observable channels, output format, assisting laws);
* ``simulator``: NewtonBench's ``run_experiment_for_module`` for one request (trusted side: it
  receives the hidden law, or a candidate law in the public :func:`etc_fast.systems.simulate`);
* ``forward``: the vectorized forward model, either a :class:`TrajectoryKernel` (a compiled
  integrator of :mod:`kernels.systems`, named by its key there, with the control columns it reads)
  or a closed form over :class:`ForwardInput`;
* ``points``: how many points a record returns (the forward model pads the rest with NaN);
* ``read``: the observation rule (NewtonBench's output -> the [channels, times] array);
* ``time_key``: the key of the stamps NewtonBench returns with a series;
* ``response``: the shape of one output in the prompt's response example (``None``: the generic
  shape built from the channels);
* ``guard``: the module's hidden-law wrapper (input guards and error handling around the law's
  expression; the same function for both systems of a module);
* ``legacy_rng``: whether the simulator draws from NewtonBench's global ``RandomState`` at every
  call (m11).

Definitions live in :mod:`etc_fast.systems.defs` (one file per module) and are looked up by
``(module, system)`` through :func:`etc_fast.systems._registry.definition`; the generic machinery
(:func:`~etc_fast.systems.simulate`, ``predict``, ``observe``, the prompts) reads them and names no
module. This file imports no registry and no definition, so the definitions can import it.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any, Literal

import numpy as np

from kernels.systems import N_STEPS

if TYPE_CHECKING:
    from etc_fast.expr import Packed
    from etc_fast.systems._simkit import Noise

__all__ = [
    "SIM_SYSTEMS",
    "SYSTEMS",
    "ClosedForm",
    "Control",
    "ForwardInput",
    "Guard",
    "Law",
    "LawParts",
    "PointsRule",
    "Reader",
    "Simulator",
    "SystemDefinition",
    "SystemSpec",
    "TrajectoryKernel",
    "control",
    "number",
    "points_fixed",
    "points_from_num_points",
    "points_from_steps",
    "read_channels",
]

#: NewtonBench's three systems, in its order; ``vanilla_equation`` is :mod:`etc_fast.tasks`' Task.
SYSTEMS: tuple[str, ...] = ("vanilla_equation", "simple_system", "complex_system")
#: The two simulated systems (the ones a definition can be for).
SIM_SYSTEMS: tuple[str, ...] = ("simple_system", "complex_system")

#: A scalar law: the module's law arguments positionally -> the law's value (as NewtonBench's laws).
Law = Callable[..., Any]


# ----------------------------------------------------------------------------------------
# The public spec (what an agent may know)
# ----------------------------------------------------------------------------------------
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


def control(
    key: str,
    default: float | None,
    description: str,
    scale: Literal["log", "linear"] = "log",
    low: float = 0.0,
    high: float = 0.0,
    pool: bool = True,
    fixed: float | None = None,
) -> Control:
    """A :class:`Control` with its domain ends as floats (the definitions write them as literals)."""
    return Control(key, default, description, scale, float(low), float(high), pool, fixed)


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

    def column(self, C: np.ndarray, key: str) -> np.ndarray:
        """Control ``key``'s column of a controls matrix (``controls_matrix``: spec order)."""
        return C[:, [c.key for c in self.controls].index(key)]


# ----------------------------------------------------------------------------------------
# The hidden law's wrapper
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class LawParts:
    """What a module's hidden-law guard wraps (built by :func:`etc_fast.systems._hidden.hidden_law`).

    Attributes:
        difficulty, law_version: The law.
        value: ``value(args)``: the law's expression evaluated by Python on the arguments as they
            come (no guard, nothing caught).
        errstate_float: ``value`` under ``np.errstate(over/divide/invalid='raise')``; a
            ``FloatingPointError`` or a non-finite value gives NaN, else ``float(value)``.
        precheck: The law's NaN-if-negative base expression, evaluated like ``value`` (``None``
            where the law has none).
    """

    difficulty: str
    law_version: str
    value: Callable[[tuple[Any, ...]], Any]
    errstate_float: Callable[[tuple[Any, ...]], Any]
    precheck: Callable[[tuple[Any, ...]], Any] | None = None


#: A module's hidden-law guard: the law's parts -> the scalar law NewtonBench's systems call.
Guard = Callable[[LawParts], Law]

#: One experiment: (request's keyword arguments, law, noise, NewtonBench's global RandomState or
#: None) -> NewtonBench's output (or what it raises).
Simulator = Callable[[dict[str, Any], Law, "Noise", "np.random.RandomState | None"], object]


# ----------------------------------------------------------------------------------------
# The forward model
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TrajectoryKernel:
    """A forward model integrated by :func:`kernels.simulate_trajectories`.

    Attributes:
        name: The kernel's key in :data:`kernels.systems.TRAJECTORY_SYSTEMS`.
        columns: The controls the kernel reads, in its column order.
    """

    name: str
    columns: tuple[str, ...]


#: Returned points per experiment: (spec, controls matrix) -> int64[n_exp].
PointsRule = Callable[[SystemSpec, np.ndarray], np.ndarray]


@dataclasses.dataclass(frozen=True, eq=False)
class ForwardInput:
    """What a closed-form forward model computes from: the candidates and the experiments.

    Attributes:
        spec: The system's spec (control order of ``C``).
        packed: Packed candidate programs over the module's law inputs, or
            :class:`PairedPrograms` (experiment ``e`` under program ``e`` only).
        C: float64[n_exp, n_controls] controls in spec order, defaults filled in.
        points: The definition's points rule.
    """

    spec: SystemSpec
    packed: Packed | PairedPrograms
    C: np.ndarray
    points: PointsRule

    @property
    def n_exp(self) -> int:
        return int(self.C.shape[0])

    @property
    def P(self) -> int:
        """Number of candidate programs (1 for paired programs: the result's one row holds
        experiment ``e`` under program ``e``)."""
        return 1 if isinstance(self.packed, PairedPrograms) else len(self.packed[3])

    def col(self, key: str) -> np.ndarray:
        """float64[n_exp]: control ``key`` of every experiment."""
        return self.spec.column(self.C, key)

    def n_points(self) -> np.ndarray:
        """int64[n_exp]: the points each experiment returns."""
        return self.points(self.spec, self.C)


@dataclasses.dataclass(frozen=True)
class PairedPrograms:
    """One program per experiment: a closed-form model's law calls for experiment ``e`` go to
    program ``e``. The model builds its points experiment by experiment (the same number of rows
    for each, experiment-major), as every closed form here does;
    :func:`etc_fast.systems._forwardkit.eval_programs` then evaluates each block under its own
    program (:func:`kernels.evaluate_programs_paired`), the values the full product has there."""

    packed: Packed


#: A closed-form forward model: -> float64[P, n_exp, n_channels, n_times] (NaN where undefined).
ClosedForm = Callable[[ForwardInput], np.ndarray]


def points_fixed(sp: SystemSpec, C: np.ndarray) -> np.ndarray:
    """Every experiment returns the spec's ``n_times`` points."""
    return np.full(C.shape[0], sp.n_times, dtype=np.int64)


def points_from_steps(sp: SystemSpec, C: np.ndarray) -> np.ndarray:
    """NewtonBench's step rule ``int(duration / time_step)``, capped at 20 (0 where undefined)."""
    with np.errstate(all="ignore"):
        n = np.trunc(sp.column(C, "duration") / sp.column(C, "time_step"))
    n = np.where(np.isfinite(n), n, 0)
    return np.clip(n, 0, N_STEPS).astype(np.int64)


def points_from_num_points(sp: SystemSpec, C: np.ndarray) -> np.ndarray:
    """The ``num_points`` control, capped at 20."""
    return np.clip(sp.column(C, "num_points"), 0, N_STEPS).astype(np.int64)


# ----------------------------------------------------------------------------------------
# The observation rule
# ----------------------------------------------------------------------------------------
#: Writes one (non-error) output into its float64[n_channels, n_times] row (pre-filled with NaN).
Reader = Callable[[np.ndarray, Any, SystemSpec], None]


def number(v: object) -> float:
    """A value of NewtonBench's output as a float: numbers, numeric strings (``"a+0j"`` included);
    NaN for anything else (``"invalid"``, complex values, booleans, None)."""
    if isinstance(v, bool):
        return math.nan
    if isinstance(v, (int, float)):
        return float(v)
    if isinstance(v, str):
        try:
            z = complex(v)
        except ValueError:
            return math.nan
        return z.real if z.imag == 0 else math.nan
    return math.nan


def read_channels(row: np.ndarray, output: Any, sp: SystemSpec) -> None:
    """The generic observation rule: a bare value is the first channel's reading; a dict holds each
    channel under its name, as a list (a series, cut to ``n_times``) or a single value."""
    if not isinstance(output, dict):
        row[0, 0] = number(output)
        return
    for c, key in enumerate(sp.channels):
        v = output.get(key)
        if isinstance(v, list):
            vals = [number(x) for x in v][: sp.n_times]
            row[c, : len(vals)] = vals
        else:
            row[c, 0] = number(v)


# ----------------------------------------------------------------------------------------
# The definition
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True, eq=False)
class SystemDefinition:
    """Everything about one NewtonBench module in one simulated system (see the module docstring).

    Attributes:
        spec: The public spec (its ``module`` and ``system`` name the definition).
        simulator: NewtonBench's experiment, one request at a time.
        forward: The forward model: a compiled trajectory kernel or a closed form.
        guard: The module's hidden-law wrapper.
        points: Returned points per experiment (default: the spec's ``n_times``).
        read: The observation rule (default: :func:`read_channels`).
        time_key: The output key of the stamps returned with a series.
        response: One output's shape in the prompt's response example (placeholders ``"..."``);
            ``None``: built from the channels.
        legacy_rng: The simulator draws from NewtonBench's global ``RandomState`` at every call.
    """

    spec: SystemSpec
    simulator: Simulator
    forward: TrajectoryKernel | ClosedForm
    guard: Guard
    points: PointsRule = points_fixed
    read: Reader = read_channels
    time_key: str = "time"
    response: object = None
    legacy_rng: bool = False

    @property
    def module(self) -> str:
        return self.spec.module

    @property
    def system(self) -> str:
        return self.spec.system

    @property
    def key(self) -> tuple[str, str]:
        """The registry key: ``(module, system)``."""
        return (self.spec.module, self.spec.system)

    @property
    def name(self) -> str:
        """``module/system``."""
        return f"{self.spec.module}/{self.spec.system}"

    @property
    def kernel(self) -> TrajectoryKernel | None:
        """The trajectory kernel, or ``None`` for a closed form."""
        return self.forward if isinstance(self.forward, TrajectoryKernel) else None

    def check(self, kernels: Mapping[str, tuple[int, int, int]]) -> list[str]:
        """What is inconsistent in this definition (empty: nothing); ``kernels`` are the known
        trajectory kernels (``kernels.systems.TRAJECTORY_SYSTEMS``)."""
        sp, errors = self.spec, []
        keys = [c.key for c in sp.controls]
        if len(set(keys)) != len(keys):
            errors.append("duplicate control keys")
        if not sp.channels:
            errors.append("no channels")
        if sp.n_times < 1 or sp.n_times > N_STEPS:
            errors.append(f"n_times must be in 1..{N_STEPS}, got {sp.n_times}")
        if self.points is points_from_steps and not {"duration", "time_step"} <= set(keys):
            errors.append("the step rule needs duration and time_step controls")
        if self.points is points_from_num_points and "num_points" not in keys:
            errors.append("the num_points rule needs a num_points control")
        kernel = self.kernel
        if kernel is not None:
            if kernel.name not in kernels:
                errors.append(f"unknown trajectory kernel {kernel.name!r}")
            else:
                _, n_ctrl, n_ch = kernels[kernel.name]
                if len(kernel.columns) != n_ctrl:
                    errors.append(f"kernel {kernel.name!r} reads {n_ctrl} columns, given {len(kernel.columns)}")
                if n_ch != len(sp.channels):
                    errors.append(f"kernel {kernel.name!r} has {n_ch} channels, the spec {len(sp.channels)}")
            missing = [k for k in kernel.columns if k not in keys]
            if missing:
                errors.append(f"kernel columns {missing} are not controls")
            if sp.n_times != N_STEPS:
                errors.append(f"a trajectory kernel returns {N_STEPS} points, the spec {sp.n_times}")
        elif not callable(self.forward):
            errors.append("forward must be a TrajectoryKernel or a closed form")
        return errors
