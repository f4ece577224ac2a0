"""Public forward models: predicted observables of a system for many experiments x many candidate laws.

:func:`predict` maps experiment controls and candidate laws (hypothesis programs over the law's
inputs) to float64[P, n_exp, n_channels, n_times]: the six trajectory systems are integrated by
the compiled kernel :func:`kernels.simulate_trajectories` (the law evaluated inside the
integrator); the others are closed forms around :func:`kernels.evaluate_programs` (one call per
law evaluation stage, all experiments and time points at once). :func:`observe` turns
NewtonBench's outputs into the same array, so that predictions and observations compare channel by
channel. Channels per system: the system's spec.

Which of the two a system uses, its kernel's control columns or its closed form, its points rule
and its observation rule are parts of its definition (:mod:`etc_fast.systems.defs`); this module
reads them from the registry and names no module. Where a closed form needs a choice NewtonBench
does not make, the definition says so: m10's band integral uses 16-point Gauss-Legendre
(NewtonBench: QUADPACK); m11 predicts the expected reading over its random draws and sums
m11-simple's three random channels into one, the only part that carries the law; the bulb count is
not truncated.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from etc_fast.expr import FamilyPacked, Packed, Program
from etc_fast.systems._definition import (
    ClosedForm,
    Control,
    ForwardInput,
    PairedPrograms,
    SystemDefinition,
    SystemSpec,
    TrajectoryKernel,
    number,
)
from etc_fast.systems._registry import definition, definitions
from kernels.systems import simulate_trajectories

__all__ = ["FamilyPacker", "controls_matrix", "n_points", "observe", "pack_family", "predict", "predict_paired", "times_of"]

#: Controls each trajectory kernel reads, in its column order (the registry's view, by kernel name).
_KERNEL_COLUMNS: dict[str, tuple[str, ...]] = {
    d.kernel.name: d.kernel.columns for d in definitions() if d.kernel is not None
}


def _value(request: Mapping[str, object], c: Control) -> float:
    v = request.get(c.key, c.default)
    if v is None:
        raise ValueError(f"missing required control {c.key!r}")
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        raise ValueError(f"control {c.key!r} must be a number, got {v!r}")  # noqa: TRY004 - bad input is a ValueError here
    return float(v)


def controls_matrix(
    sp: SystemSpec, requests: Sequence[Mapping[str, object]]
) -> np.ndarray:
    """float64[n_exp, n_controls]: each request's controls in ``sp.controls`` order, defaults filled in."""
    rows = [[_value(r, c) for c in sp.controls] for r in requests]
    return np.array(rows, dtype=np.float64).reshape(len(rows), len(sp.controls))


def n_points(sp: SystemSpec, C: np.ndarray) -> np.ndarray:
    """Returned points per experiment (the system's points rule: trajectory systems NewtonBench's
    step rule capped at 20, ``num_points`` where a system has it, else the spec's ``n_times``)."""
    return definition(sp.module, sp.system).points(sp, C)


def _controls(defn: SystemDefinition, requests_or_controls: Any) -> np.ndarray:
    C = requests_or_controls
    if not isinstance(C, np.ndarray):
        C = controls_matrix(defn.spec, C)
    return C


def _simulate_kernel(defn: SystemDefinition, kernel: TrajectoryKernel, packed: Packed, C: np.ndarray,
                     paired: bool) -> np.ndarray:
    keys = [c.key for c in defn.spec.controls]
    cols = [keys.index(k) for k in kernel.columns]
    n = defn.points(defn.spec, C)
    return simulate_trajectories(kernel.name, *packed, C[:, cols], n, paired=paired)


def predict(module: str, system: str, packed: Packed, requests_or_controls: Any) -> np.ndarray:
    """Predicted observables for every candidate law and experiment.

    Args:
        module, system: The system (``etc_fast.systems.SIM_SYSTEMS``).
        packed: Packed programs over the module's law inputs (``etc_fast.expr.pack``).
        requests_or_controls: Experiment requests (dicts) or a controls matrix from
            :func:`controls_matrix`.

    Returns:
        float64[P, n_exp, n_channels, n_times] (NaN where undefined or past the returned points).
    """
    defn = definition(module, system)
    C = _controls(defn, requests_or_controls)
    forward = defn.forward
    if isinstance(forward, TrajectoryKernel):
        return _simulate_kernel(defn, forward, packed, C, False)
    return _closed_form(defn, forward, packed, C)


def _closed_form(defn: SystemDefinition, forward: ClosedForm, packed: Packed | PairedPrograms,
                 C: np.ndarray) -> np.ndarray:
    """The definition's closed-form model on ``packed`` (programs, or one per experiment) at ``C``."""
    with np.errstate(all="ignore"):
        return forward(ForwardInput(defn.spec, packed, C, defn.points))


def pack_family(program: Program, consts: np.ndarray) -> Packed:
    """K copies of ``program`` with the constant tables ``consts[k]`` (float64[K, n_consts]), packed.

    The arrays ``pack([program.with_consts(c) for c in consts])`` gives, without building K
    programs: a fit that simulates one form at many constants pays one NumPy call, not K.
    """
    return FamilyPacker(program)(consts)


class FamilyPacker:
    """:func:`pack_family` for one program, called many times (a fit's every residual).

    The instruction arrays of a family of K copies depend only on K, so they are built once per K
    and handed out again with each call's constants, instead of being re-tiled for every
    forward-model call. Callers must not write to them: no forward model or kernel does
    (tests/systems/test_forward.py checks every system's product and paired calls).
    """

    def __init__(self, program: Program) -> None:
        self.program = program
        self._by_k: dict[int, tuple[np.ndarray, ...]] = {}

    def __call__(self, consts: np.ndarray) -> Packed:
        program = self.program
        consts = np.array(consts, dtype=np.float64, ndmin=2)
        K, L, nc = consts.shape[0], len(program.ops), len(program.consts)
        if consts.shape[1] != nc:
            raise ValueError(f"pack_family needs {nc} constants per copy, got shape {consts.shape}")
        consts[np.isnan(consts)] = np.nan  # the NaN that with_consts stores
        kept = self._by_k.get(K)
        if kept is None:
            kept = self._by_k[K] = (
                np.tile(program.ops.astype(np.int64, copy=False), K),
                np.tile(program.args.astype(np.int64, copy=False), K),
                np.arange(K, dtype=np.int64) * L,
                np.full(K, L, dtype=np.int64),
                np.arange(K, dtype=np.int64) * nc,
            )
        ops, args, prog_start, prog_len, const_start = kept
        return FamilyPacked(ops, args, consts.reshape(-1), prog_start, prog_len, const_start)


def predict_paired(module: str, system: str, packed: Packed, requests_or_controls: Any) -> np.ndarray:
    """Experiment e under program e only: float64[n_exp, n_channels, n_times].

    The values of ``predict(...)[e, e]`` for every e, at the cost of n simulations (trajectory
    systems: the kernel's ``paired`` mode; closed forms: :class:`PairedPrograms`, each
    experiment's law calls under its own program), never the n x n product.
    """
    defn = definition(module, system)
    sp = defn.spec
    C = _controls(defn, requests_or_controls)
    n = C.shape[0]
    if len(packed[3]) != n:
        raise ValueError(f"predict_paired needs one program per experiment, got {len(packed[3])} for {n}")
    forward = defn.forward
    if isinstance(forward, TrajectoryKernel):
        return _simulate_kernel(defn, forward, packed, C, True)
    if n == 0:
        return np.empty((0, len(sp.channels), sp.n_times))
    return _closed_form(defn, forward, PairedPrograms(packed), C)[0]


def observe(module: str, system: str, outputs: Sequence[object]) -> np.ndarray:
    """NewtonBench outputs -> float64[n_exp, n_channels, n_times] (NaN for "invalid", errors, gaps)."""
    defn = definition(module, system)
    sp = defn.spec
    out = np.full((len(outputs), len(sp.channels), sp.n_times), np.nan)
    for e, o in enumerate(outputs):
        if isinstance(o, dict) and "error" in o:
            continue
        defn.read(out[e], o, sp)
    return out


def times_of(module: str, system: str, outputs: Sequence[object]) -> list[list[float]]:
    """The time (or position) stamps NewtonBench returned with each output, as floats."""
    key = definition(module, system).time_key
    return [
        [number(t) for t in o.get(key, [])]
        if isinstance(o, dict) and isinstance(o.get(key), list)
        else []
        for o in outputs
    ]
