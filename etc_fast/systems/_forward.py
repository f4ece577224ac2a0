"""Public forward models: predicted observables of a system for many experiments x many candidate laws.

:func:`predict` maps experiment controls and candidate laws (hypothesis programs over the law's
inputs) to float64[P, n_exp, n_channels, n_times]: the six trajectory systems are integrated by
the compiled kernel :func:`kernels.simulate_trajectories` (the law evaluated inside the
integrator); the others are closed forms around :func:`kernels.evaluate_programs` (one call per
law evaluation stage, all experiments and time points at once). :func:`observe` turns
NewtonBench's outputs into the same array, so that predictions and observations compare channel by
channel. Channels per system: :mod:`etc_fast.systems._spec`.

Where a closed form needs a choice NewtonBench does not make, the forward model says so: m10's
band integral uses 16-point Gauss-Legendre (NewtonBench: QUADPACK); m11 predicts the expected
reading over its random draws (the loss's mean 0.2; for the bulbs, the mean over c_alt/c of
|Q(c) - Q(c_alt)| by 8-point Gauss-Legendre on each side of c_alt = c in [0.7, 1.2]) and sums m11-simple's three random
channels into one, the only part that carries the law; the bulb count is not truncated.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

import numpy as np

from etc_fast.expr import Packed, Program
from etc_fast.systems._spec import SystemSpec, spec
from kernels.programs import evaluate_programs
from kernels.systems import N_STEPS, TRAJECTORY_SYSTEMS, simulate_trajectories

__all__ = ["controls_matrix", "n_points", "observe", "pack_family", "predict", "predict_paired"]

#: Controls the trajectory kernels read, in their column order.
_KERNEL_COLUMNS = {
    "m0_gravity/simple_system": (
        "mass1",
        "mass2",
        "distance",
        "initial_velocity",
        "time_step",
    ),
    "m0_gravity/complex_system": (
        "mass1",
        "mass2",
        "distance",
        "initial_velocity",
        "time_step",
    ),
    "m1_coulomb_force/simple_system": ("q1", "q2", "m2", "distance", "time_step"),
    "m1_coulomb_force/complex_system": ("q1", "q2", "m2", "distance", "time_step"),
    "m2_magnetic_force/simple_system": (
        "current1",
        "current2",
        "mass_wire",
        "distance",
        "initial_velocity",
        "time_step",
    ),
    "m2_magnetic_force/complex_system": (
        "current1",
        "current2",
        "mass_wire",
        "distance",
        "initial_velocity",
    ),
}
_GL16 = np.polynomial.legendre.leggauss(16)
_GL8 = np.polynomial.legendre.leggauss(8)


def _value(request: Mapping, c) -> float:
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


def _col(sp: SystemSpec, C: np.ndarray, key: str) -> np.ndarray:
    return C[:, [c.key for c in sp.controls].index(key)]


def n_points(sp: SystemSpec, C: np.ndarray) -> np.ndarray:
    """Returned points per experiment (trajectory systems: NewtonBench's step rule capped at 20)."""
    name = f"{sp.module}/{sp.system}"
    if name == "m2_magnetic_force/complex_system":
        return np.full(C.shape[0], N_STEPS, dtype=np.int64)
    if name in _KERNEL_COLUMNS:
        with np.errstate(all="ignore"):
            n = np.trunc(_col(sp, C, "duration") / _col(sp, C, "time_step"))
        n = np.where(np.isfinite(n), n, 0)
        return np.clip(n, 0, N_STEPS).astype(np.int64)
    if "num_points" in [c.key for c in sp.controls]:
        return np.clip(_col(sp, C, "num_points"), 0, N_STEPS).astype(np.int64)
    return np.full(C.shape[0], sp.n_times, dtype=np.int64)


def _eval(packed, X: np.ndarray) -> np.ndarray:
    """Programs at points X[n, d] -> float64[P, n]."""
    return evaluate_programs(*packed, np.ascontiguousarray(X, dtype=np.float64))


def _eval_each(packed, inputs_of, like: np.ndarray) -> np.ndarray:
    """Each program p at its own points ``inputs_of(p)`` (a second law stage fed by the first)."""
    rows = [
        _eval(
            (
                *packed[:3],
                packed[3][p : p + 1],
                packed[4][p : p + 1],
                packed[5][p : p + 1],
            ),
            inputs_of(p),
        )[0]
        for p in range(len(packed[3]))
    ]
    return np.stack(rows) if rows else like


def _series(n_exp: int, n: np.ndarray, t_end: np.ndarray) -> np.ndarray:
    """linspace(0, t_end, n) per experiment, padded with NaN to 20 columns."""
    k = np.arange(N_STEPS)[None, :]
    with np.errstate(all="ignore"):
        frac = np.where(n[:, None] > 1, k / np.maximum(n[:, None] - 1, 1), 0.0)
    t = frac * t_end[:, None]
    return np.where(k < n[:, None], t, np.nan)


def predict(module: str, system: str, packed, requests_or_controls) -> np.ndarray:
    """Predicted observables for every candidate law and experiment.

    Args:
        module, system: The system (``etc_fast.systems.SIM_SYSTEMS``).
        packed: Packed programs over the module's law inputs (``etc_fast.expr.pack``).
        requests_or_controls: Experiment requests (dicts) or a controls matrix from
            :func:`controls_matrix`.

    Returns:
        float64[P, n_exp, n_channels, n_times] (NaN where undefined or past the returned points).
    """
    sp = spec(module, system)
    C = requests_or_controls
    if not isinstance(C, np.ndarray):
        C = controls_matrix(sp, C)
    n_exp, P = C.shape[0], len(packed[3])
    name = f"{module}/{system}"
    if name in _KERNEL_COLUMNS:
        cols = [[c.key for c in sp.controls].index(k) for k in _KERNEL_COLUMNS[name]]
        out = simulate_trajectories(name, *packed, C[:, cols], n_points(sp, C))
        return out
    def g(key):
        return _col(sp, C, key)

    with np.errstate(all="ignore"):
        return _closed_form(module, system, sp, packed, C, g, n_exp, P)


def pack_family(program: Program, consts: np.ndarray) -> Packed:
    """K copies of ``program`` with the constant tables ``consts[k]`` (float64[K, n_consts]), packed.

    The arrays ``pack([program.with_consts(c) for c in consts])`` gives, without building K
    programs: a fit that simulates one form at many constants pays one NumPy call, not K.
    """
    consts = np.array(consts, dtype=np.float64, ndmin=2)
    K, L, nc = consts.shape[0], len(program.ops), len(program.consts)
    if consts.shape[1] != nc:
        raise ValueError(f"pack_family needs {nc} constants per copy, got shape {consts.shape}")
    consts[np.isnan(consts)] = np.nan  # the NaN that with_consts stores
    return Packed(
        np.tile(program.ops.astype(np.int64, copy=False), K),
        np.tile(program.args.astype(np.int64, copy=False), K),
        consts.reshape(-1),
        np.arange(K, dtype=np.int64) * L,
        np.full(K, L, dtype=np.int64),
        np.arange(K, dtype=np.int64) * nc,
    )


_PAIRED_CHUNK = 128  # closed forms: experiments per full-product call when pairing


def predict_paired(module: str, system: str, packed, requests_or_controls) -> np.ndarray:
    """Experiment e under program e only: float64[n_exp, n_channels, n_times].

    The values of ``predict(...)[e, e]`` for every e, at the cost of n simulations (trajectory
    systems: the kernel's ``paired`` mode) or of chunks of 128 x 128 closed-form evaluations,
    never the full n x n product.
    """
    sp = spec(module, system)
    C = requests_or_controls
    if not isinstance(C, np.ndarray):
        C = controls_matrix(sp, C)
    n = C.shape[0]
    if len(packed[3]) != n:
        raise ValueError(f"predict_paired needs one program per experiment, got {len(packed[3])} for {n}")
    name = f"{module}/{system}"
    if name in _KERNEL_COLUMNS:
        cols = [[c.key for c in sp.controls].index(k) for k in _KERNEL_COLUMNS[name]]
        return simulate_trajectories(name, *packed, C[:, cols], n_points(sp, C), paired=True)
    parts = []
    for lo in range(0, n, _PAIRED_CHUNK):
        hi = min(n, lo + _PAIRED_CHUNK)
        sub = Packed(*packed[:3], *(np.asarray(a)[lo:hi] for a in packed[3:]))
        idx = np.arange(hi - lo)
        parts.append(predict(module, system, sub, C[lo:hi])[idx, idx])
    return np.concatenate(parts) if parts else np.empty((0, len(sp.channels), sp.n_times))


def _closed_form(module, system, sp, packed, C, g, n_exp, P) -> np.ndarray:
    T = sp.n_times
    if module == "m3_fourier_law":
        k, A, dT, d = g("k"), g("A"), g("delta_T"), g("d")
        n = n_points(sp, C)
        x = _series(n_exp, n, d)  # [n_exp, 20]
        Pw = _eval(packed, np.column_stack([k, A, dT, d]))[:, :, None]  # [P, n_exp, 1]
        if system == "simple_system":
            return (dT[None, :, None] - Pw / (k * A)[None, :, None] * x[None])[
                :, :, None, :
            ]
        Tx = dT[None, :, None] * np.exp(-x[None] * Pw / (k * A * dT)[None, :, None])
        q = np.full_like(Tx, np.nan)
        for e in range(n_exp):
            m = int(n[e])
            if m >= 2:
                q[:, e, :m] = -k[e] * np.gradient(Tx[:, e, :m], x[e, :m], axis=1)
        return q[:, :, None, :]
    if module == "m4_snell_law":
        if system == "simple_system":
            n1, n2 = 3.0e8 / g("speed_medium1"), 3.0e8 / g("speed_medium2")
            out = _eval(
                packed, np.column_stack([n1, n2, _wrap(_wrap(g("incidence_angle")))])
            )
        else:
            n1, n2, n3 = (
                g("refractive_index_1"),
                g("refractive_index_2"),
                g("refractive_index_3"),
            )
            th2 = _eval(packed, np.column_stack([n1, n2, _wrap(g("incidence_angle"))]))
            out = _eval_each(packed, lambda p: np.column_stack([n2, n3, th2[p]]), th2)
        return np.where(np.isfinite(out), out, np.nan)[:, :, None, None]
    if module == "m5_radioactive_decay":
        n = n_points(sp, C)
        t = _series(n_exp, n, g("t"))
        tt = np.where(np.isnan(t), 0.0, t).ravel()
        def rep(v):
            return np.repeat(v, N_STEPS)

        if system == "simple_system":
            y = 0.7 * _eval(
                packed, np.column_stack([rep(g("N0")), rep(g("lambda_constant")), tt])
            ).reshape(P, n_exp, N_STEPS)
        else:
            na = _eval(
                packed, np.column_stack([rep(g("N0a")), rep(g("lambda_a")), tt])
            ).reshape(P, n_exp, N_STEPS)
            nb = _eval(
                packed, np.column_stack([rep(g("N0b")), rep(g("lambda_b")), tt])
            ).reshape(P, n_exp, N_STEPS)
            y = np.where(np.abs(nb) < 1e-10, np.nan, na / nb)
        y = np.where(np.isfinite(y) & ~np.isnan(t)[None], y, np.nan)
        return y[:, :, None, :]
    if module == "m6_underdamped_harmonic":
        w = _eval(
            packed, np.column_stack([g("k_constant"), g("mass"), g("b_constant")])
        )
        w = np.where(np.isfinite(w) & (w != 0), w, np.nan)
        period = 2 * np.pi / w
        if system == "simple_system":
            return period[:, :, None, None]
        t = period[:, :, None] * 2 * (np.arange(N_STEPS) / (N_STEPS - 1))[None, None, :]
        amp = (
            g("initial_amplitude")[None, :, None]
            * np.exp(-3 * t)
            * np.cos(w[:, :, None] * t)
        )
        return np.stack([t, amp], axis=2)
    if module == "m7_malus_law":
        I0, th = g("I_0"), g("theta")
        ok = (I0 > 0) & (th > 0) & (th <= np.pi / 2)
        i1 = _eval(packed, np.column_stack([I0, th]))
        if system == "simple_system":
            y = i1 / I0
        else:
            y = _eval_each(packed, lambda p: np.column_stack([i1[p], th]), i1) - I0
        return np.where(ok[None], y, np.nan)[:, :, None, None]
    if module == "m8_sound_speed":
        v = _eval(
            packed,
            np.column_stack([g("adiabatic_index"), g("temperature"), g("molar_mass")]),
        )
        v = np.where(np.isfinite(v) & (v > 0), v, np.nan)
        if system == "simple_system":
            return (2 * g("distance")[None] / v)[:, :, None, None]
        f, e = g("driving_frequency")[None], 0.3 * g("tube_diameter")[None]
        lam = np.where(f > 0, v / f, np.nan)
        l1, l2 = np.maximum(lam / 4 - e, 0.0), np.maximum(3 * lam / 4 - e, 0.0)
        l1, l2 = (
            np.where(np.isnan(lam), np.nan, l1),
            np.where(np.isnan(lam), np.nan, l2),
        )
        return np.stack([l1, l2], axis=2)[:, :, :, None]
    if module == "m9_hooke_law":
        x, m = g("x"), g("m")
        U = _eval(packed, x[:, None])
        v2 = 2 * U / m
        if system == "simple_system":
            y = np.where(m > 0, 0.5 * m * v2 + 0.2 * x * v2, np.nan)
        else:
            y = np.exp(-x / 0.02) * np.sqrt(v2)
        return y[:, :, None, None]
    if module == "m10_be_distribution":
        T = g("temperature")
        if system == "simple_system":
            w = g("probe_frequency")
            return (_eval(packed, np.column_stack([w, T])) * w**3)[:, :, None, None]
        c, bw = g("center_frequency"), g("bandwidth")
        nodes, weights = _GL16
        w = (c[:, None] + 0.5 * bw[:, None] * nodes[None, :]).ravel()
        r = (_eval(packed, np.column_stack([w, np.repeat(T, 16)])) * w**3).reshape(
            P, n_exp, 16
        )
        return (0.5 * bw[None, :] * (r * weights).sum(axis=2))[:, :, None, None]
    if module == "m11_heat_transfer":
        m, c, dT = g("m"), g("c"), g("delta_T")
        t = m * c / 100.0
        q0 = _eval(packed, np.column_stack([m, c, dT]))
        if system == "simple_system":
            return (0.8 * q0 / t)[:, :, None, None]
        # E|Q(c) - Q(c r)| for r ~ U(0.7, 1.2): the integrand has a kink at r = 1 (c_alt = c),
        # so each side gets its own 8-point Gauss-Legendre rule.
        nodes, weights = _GL8
        r = np.concatenate([0.85 + 0.15 * nodes, 1.1 + 0.1 * nodes])
        w = np.concatenate([0.15 * weights, 0.1 * weights]) / 0.5
        q1 = _eval(
            packed,
            np.column_stack(
                [np.repeat(m, 16), (c[:, None] * r[None, :]).ravel(), np.repeat(dT, 16)]
            ),
        ).reshape(P, n_exp, 16)
        mean_diff = (np.abs(q0[:, :, None] - q1) * w).sum(axis=2)
        return (0.8 * mean_diff / t)[:, :, None, None]
    raise ValueError(f"no forward model for {module} / {system}")  # pragma: no cover


def _wrap(a: np.ndarray) -> np.ndarray:
    a = np.mod(a, 180.0)
    return np.where(a > 90.0, 180.0 - a, a)


def _num(v) -> float:
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


def observe(module: str, system: str, outputs: Sequence[object]) -> np.ndarray:
    """NewtonBench outputs -> float64[n_exp, n_channels, n_times] (NaN for "invalid", errors, gaps)."""
    sp = spec(module, system)
    out = np.full((len(outputs), len(sp.channels), sp.n_times), np.nan)
    for e, o in enumerate(outputs):
        if isinstance(o, dict) and "error" in o:
            continue
        if module == "m0_gravity" and system == "complex_system":
            for c, (key, axis) in enumerate(
                (("position", 0), ("position", 1), ("velocity", 0), ("velocity", 1))
            ):
                vals = [_num(p[axis]) for p in o.get(key, [])][:N_STEPS]
                out[e, c, : len(vals)] = vals
            continue
        if module == "m11_heat_transfer" and system == "simple_system":
            out[e, 0, 0] = sum(_num(o.get(k)) for k in ("P_cond", "P_conv", "P_rad"))
            continue
        if not isinstance(o, dict):
            out[e, 0, 0] = _num(o)
            continue
        for c, key in enumerate(sp.channels):
            v = o.get(key)
            if isinstance(v, list):
                vals = [_num(x) for x in v][: sp.n_times]
                out[e, c, : len(vals)] = vals
            else:
                out[e, c, 0] = _num(v)
    return out


def times_of(module: str, system: str, outputs: Sequence[object]) -> list[list[float]]:
    """The time (or position) stamps NewtonBench returned with each output, as floats."""
    key = "x" if module == "m3_fourier_law" else "time"
    return [
        [_num(t) for t in o.get(key, [])]
        if isinstance(o, dict) and isinstance(o.get(key), list)
        else []
        for o in outputs
    ]


TRAJECTORY = frozenset(TRAJECTORY_SYSTEMS)
