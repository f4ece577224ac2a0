"""Forward models of NewtonBench's trajectory systems for many experiments x many candidate laws.

One call integrates every experiment of a pool under every hypothesis of a committee: the
candidate law is a packed postfix program of :mod:`kernels.programs`, evaluated inside the
integrator on a block of experiments at each step (the law's inputs are the block's current
states). The schemes are NewtonBench's (``newtonbench_systems.md``):

==========  ======================================================================================
system      scheme (law inputs in the law's signature order)
==========  ======================================================================================
M0_SIMPLE   1-D velocity Verlet, ``a(x) = -sign(x) F(m1, m2, |x|) / m2``; channels x, v
M0_COMPLEX  2-D velocity Verlet, ``a = -(F(m1, m2, |r|) / m2) r / |r|`` (0 at r = 0); x, y, vx, vy
M1_SIMPLE   semi-implicit Euler with decaying charges ``q1 e^{-t/10}``, ``q2 e^{-t/5}``, force
            ``F(|q1(t)|, |q2(t)|, |x|)`` signed by ``q1 q2`` (like charges push toward +x); v
M1_COMPLEX  as M1_SIMPLE; channel ``KE = m2 v^2 / 2``
M2_SIMPLE   1-D velocity Verlet, ``a = -/+ F(|I1|, |I2|, |x|) / m`` (same / opposite current
            signs), 0 when m = 0, x = 0 or a current is 0 (every NewtonBench m2 law
            returns 0 for a zero current: at t = 0 the AC current is 0); x, v
M2_COMPLEX  as M2_SIMPLE over one 50 Hz period (20 points, dt = 0.02/19) with
            ``I1(t) = I1 sin(2 pi 50 t_{i-1})`` at both evaluations of step i; x, v
==========  ======================================================================================

Controls (columns of ``C``): M0 ``mass1, mass2, distance, initial_velocity, time_step``; M1
``q1, q2, m2, distance, time_step``; M2_SIMPLE ``current1, current2, mass_wire, distance,
initial_velocity, time_step``; M2_COMPLEX ``current1, current2, mass_wire, distance,
initial_velocity``. ``n_points[e]`` is the number of returned points (NewtonBench's
``min(int(duration / time_step), 20)``, computed by the caller); later slots are NaN.
Arithmetic is NumPy float64 (NaN/inf, never raising). A law evaluated at the old position of a
Verlet step is the one evaluated at the new position of the step before, so it is reused.
"""

import numpy as np
from numba import njit

from kernels import programs as _programs
from kernels._jit import JIT

__all__ = ["N_STEPS", "TRAJECTORY_SYSTEMS", "simulate_trajectories"]

M0_SIMPLE, M0_COMPLEX, M1_SIMPLE, M1_COMPLEX, M2_SIMPLE, M2_COMPLEX = range(6)
#: name -> (system id, number of control columns, number of output channels)
TRAJECTORY_SYSTEMS = {
    "m0_gravity/simple_system": (M0_SIMPLE, 5, 2),
    "m0_gravity/complex_system": (M0_COMPLEX, 5, 4),
    "m1_coulomb_force/simple_system": (M1_SIMPLE, 5, 1),
    "m1_coulomb_force/complex_system": (M1_COMPLEX, 5, 1),
    "m2_magnetic_force/simple_system": (M2_SIMPLE, 6, 2),
    "m2_magnetic_force/complex_system": (M2_COMPLEX, 5, 2),
}
N_STEPS = 20  # NewtonBench returns at most 20 points
_BLOCK = 128  # experiments integrated together (one law evaluation per block and step)
_TWO_PI_50 = 2.0 * np.pi * 50.0
_M2C_DT = (1.0 / 50.0) / 19.0


@njit(error_model="numpy", **JIT)
def _law(packed_p, XT, F, depth):
    """F[0, :m] = program at the block's inputs XT[3, m]."""
    ops, args, consts, ps, pl, cs = packed_p
    _programs._evaluate_programs(ops, args, consts, ps, pl, cs, XT, depth, F)


@njit(error_model="numpy", **JIT)
def _m0_simple(packed_p, depth, C, lo, hi, out_p):
    m = hi - lo
    XT = np.empty((3, m))
    F = np.empty((1, m))
    x = np.empty(m)
    v = np.empty(m)
    a = np.empty(m)
    for j in range(m):
        e = lo + j
        x[j] = C[e, 2]
        v[j] = C[e, 3]
        XT[0, j] = C[e, 0]
        XT[1, j] = C[e, 1]
        XT[2, j] = abs(x[j])
        out_p[e, 0, 0] = x[j]
        out_p[e, 1, 0] = v[j]
    _law(packed_p, XT, F, depth)
    for j in range(m):
        a[j] = -(F[0, j] * np.sign(x[j])) / C[lo + j, 1]
    for i in range(1, N_STEPS):
        for j in range(m):
            dt = C[lo + j, 4]
            x_new = x[j] + v[j] * dt + 0.5 * a[j] * dt**2
            v[j] = (
                v[j] + 0.5 * a[j] * dt
            )  # half step; finished below with the new acceleration
            x[j] = x_new
            XT[2, j] = abs(x_new)
        _law(packed_p, XT, F, depth)
        for j in range(m):
            e = lo + j
            dt = C[e, 4]
            a[j] = -(F[0, j] * np.sign(x[j])) / C[e, 1]
            v[j] = v[j] + 0.5 * a[j] * dt
            out_p[e, 0, i] = x[j]
            out_p[e, 1, i] = v[j]


@njit(error_model="numpy", **JIT)
def _m0_accel(F, m2, px, py):
    d = np.sqrt(px * px + py * py)
    if d == 0.0:
        return 0.0, 0.0
    s = -(F / m2)
    return s * (px / d), s * (py / d)


@njit(error_model="numpy", **JIT)
def _m0_complex(packed_p, depth, C, lo, hi, out_p):
    m = hi - lo
    XT = np.empty((3, m))
    F = np.empty((1, m))
    px = np.empty(m)
    py = np.empty(m)
    vx = np.empty(m)
    vy = np.empty(m)
    ax = np.empty(m)
    ay = np.empty(m)
    for j in range(m):
        e = lo + j
        px[j] = C[e, 2]
        py[j] = 0.0
        vx[j] = 0.0
        vy[j] = C[e, 3]
        XT[0, j] = C[e, 0]
        XT[1, j] = C[e, 1]
        XT[2, j] = np.sqrt(px[j] * px[j])
        out_p[e, 0, 0] = px[j]
        out_p[e, 1, 0] = 0.0
        out_p[e, 2, 0] = 0.0
        out_p[e, 3, 0] = vy[j]
    _law(packed_p, XT, F, depth)
    for j in range(m):
        ax[j], ay[j] = _m0_accel(F[0, j], C[lo + j, 1], px[j], py[j])
    for i in range(1, N_STEPS):
        for j in range(m):
            dt = C[lo + j, 4]
            nx = px[j] + vx[j] * dt + 0.5 * ax[j] * dt**2
            ny = py[j] + vy[j] * dt + 0.5 * ay[j] * dt**2
            vx[j] = vx[j] + 0.5 * ax[j] * dt
            vy[j] = vy[j] + 0.5 * ay[j] * dt
            px[j] = nx
            py[j] = ny
            XT[2, j] = np.sqrt(nx * nx + ny * ny)
        _law(packed_p, XT, F, depth)
        for j in range(m):
            e = lo + j
            dt = C[e, 4]
            ax[j], ay[j] = _m0_accel(F[0, j], C[e, 1], px[j], py[j])
            vx[j] = vx[j] + 0.5 * ax[j] * dt
            vy[j] = vy[j] + 0.5 * ay[j] * dt
            out_p[e, 0, i] = px[j]
            out_p[e, 1, i] = py[j]
            out_p[e, 2, i] = vx[j]
            out_p[e, 3, i] = vy[j]


@njit(error_model="numpy", **JIT)
def _m1(packed_p, depth, C, aux, lo, hi, out_p, energy):
    """``aux[e, 0, i]``, ``aux[e, 1, i]``: the decayed charges ``q1 e^{-t_i/10}``, ``q2 e^{-t_i/5}``."""
    m = hi - lo
    XT = np.empty((3, m))
    F = np.empty((1, m))
    x = np.empty(m)
    v = np.empty(m)
    for j in range(m):
        e = lo + j
        x[j] = C[e, 3]
        v[j] = 0.0
        out_p[e, 0, 0] = 0.0
    for i in range(1, N_STEPS):
        for j in range(m):
            e = lo + j
            XT[0, j] = abs(aux[e, 0, i])
            XT[1, j] = abs(aux[e, 1, i])
            XT[2, j] = abs(x[j])
        _law(packed_p, XT, F, depth)
        for j in range(m):
            e = lo + j
            a = (F[0, j] if aux[e, 0, i] * aux[e, 1, i] > 0.0 else -F[0, j]) / C[e, 2]
            dt = C[e, 4]
            v[j] = v[j] + a * dt
            x[j] = x[j] + v[j] * dt
            out_p[e, 0, i] = 0.5 * C[e, 2] * (v[j] ** 2) if energy else v[j]


@njit(error_model="numpy", **JIT)
def _m2_accel(F, i1, i2, mass, x):
    if (
        mass == 0.0 or x == 0.0 or i1 == 0.0 or i2 == 0.0
    ):  # no force without both currents
        return 0.0
    if np.sign(i1) == np.sign(i2):
        return -F / mass
    return F / mass


@njit(error_model="numpy", **JIT)
def _m2(packed_p, depth, C, lo, hi, out_p, ac):
    m = hi - lo
    XT = np.empty((3, m))
    F = np.empty((1, m))
    x = np.empty(m)
    v = np.empty(m)
    a = np.empty(m)
    i1 = np.empty(m)
    for j in range(m):
        e = lo + j
        x[j] = C[e, 3]
        v[j] = C[e, 4]
        i1[j] = 0.0 if ac else C[e, 0]
        XT[0, j] = abs(i1[j])
        XT[1, j] = abs(C[e, 1])
        XT[2, j] = abs(x[j])
        out_p[e, 0, 0] = x[j]
        out_p[e, 1, 0] = v[j]
    if not ac:
        _law(packed_p, XT, F, depth)
        for j in range(m):
            e = lo + j
            a[j] = _m2_accel(F[0, j], C[e, 0], C[e, 1], C[e, 2], x[j])
    for i in range(1, N_STEPS):
        if ac:  # the current changes: both evaluations of the step use I1(t_{i-1})
            for j in range(m):
                e = lo + j
                i1[j] = C[e, 0] * np.sin(_TWO_PI_50 * ((i - 1) * _M2C_DT))
                XT[0, j] = abs(i1[j])
                XT[2, j] = abs(x[j])
            _law(packed_p, XT, F, depth)
            for j in range(m):
                e = lo + j
                a[j] = _m2_accel(F[0, j], i1[j], C[e, 1], C[e, 2], x[j])
        for j in range(m):
            dt = _M2C_DT if ac else C[lo + j, 5]
            x_new = x[j] + v[j] * dt + 0.5 * a[j] * dt**2
            v[j] = v[j] + 0.5 * a[j] * dt
            x[j] = x_new
            XT[2, j] = abs(x_new)
        _law(packed_p, XT, F, depth)
        for j in range(m):
            e = lo + j
            dt = _M2C_DT if ac else C[e, 5]
            a[j] = _m2_accel(F[0, j], i1[j], C[e, 1], C[e, 2], x[j])
            v[j] = v[j] + 0.5 * a[j] * dt
            out_p[e, 0, i] = x[j]
            out_p[e, 1, i] = v[j]


@njit(error_model="numpy", **JIT)
def _simulate(
    system,
    ops,
    args,
    consts,
    prog_start,
    prog_len,
    const_start,
    depth,
    C,
    aux,
    n_points,
    out,
):
    """Fill ``out[p, e, c, t]`` for every program p and experiment e; slots t >= n_points[e] are NaN.

    Parameters
    ----------
    system : int
        One of the ``M*`` ids.
    ops, args, consts, prog_start, prog_len, const_start : packed programs (validated).
    depth : int
        Stack depth the programs need.
    C : float64[n_exp, n_ctrl]
        Controls per experiment (column layout per system, see the module docstring).
    aux : float64[n_exp, 2, 20]
        M1 only: the decayed charges at each step (else unused).
    n_points : int64[n_exp]
        Returned points per experiment (0..20).
    out : float64[P, n_exp, n_ch, 20]
    """
    P = prog_start.shape[0]
    n = C.shape[0]
    nb = (n + _BLOCK - 1) // _BLOCK
    for task in range(P * nb):
        p = task // nb
        lo = (task % nb) * _BLOCK
        hi = min(n, lo + _BLOCK)
        packed_p = (
            ops,
            args,
            consts,
            prog_start[p : p + 1],
            prog_len[p : p + 1],
            const_start[p : p + 1],
        )
        out_p = out[p]
        if system == M0_SIMPLE:
            _m0_simple(packed_p, depth, C, lo, hi, out_p)
        elif system == M0_COMPLEX:
            _m0_complex(packed_p, depth, C, lo, hi, out_p)
        elif system == M1_SIMPLE:
            _m1(packed_p, depth, C, aux, lo, hi, out_p, False)
        elif system == M1_COMPLEX:
            _m1(packed_p, depth, C, aux, lo, hi, out_p, True)
        elif system == M2_SIMPLE:
            _m2(packed_p, depth, C, lo, hi, out_p, False)
        else:
            _m2(packed_p, depth, C, lo, hi, out_p, True)
        for e in range(lo, hi):
            for t in range(n_points[e], N_STEPS):
                for c in range(out.shape[2]):
                    out_p[e, c, t] = np.nan
    return out


def simulate_trajectories(
    system, ops, args, consts, prog_start, prog_len, const_start, C, n_points
):
    """Integrate a trajectory system for every experiment under every candidate law.

    Args:
        system: A key of :data:`TRAJECTORY_SYSTEMS` (``"m0_gravity/simple_system"``).
        ops, args, consts, prog_start, prog_len, const_start: Packed programs over the law's three
            inputs (``kernels.programs`` layout; ``etc_fast.expr.pack``).
        C: float64[n_exp, n_ctrl] controls (layout per system, module docstring).
        n_points: int64[n_exp] returned points per experiment, each in 0..20.

    Returns:
        float64[P, n_exp, n_ch, 20]: the channels at each returned time (NaN past ``n_points``).

    Raises:
        ValueError: unknown system, wrong control shape, ``n_points`` out of range, bad programs.
    """
    try:
        sid, n_ctrl, n_ch = TRAJECTORY_SYSTEMS[system]
    except KeyError:
        raise ValueError(
            f"unknown trajectory system {system!r}; known: {', '.join(TRAJECTORY_SYSTEMS)}"
        ) from None
    C = np.ascontiguousarray(C, dtype=np.float64)
    if C.ndim != 2 or C.shape[1] != n_ctrl:
        raise ValueError(
            f"{system}: controls must have shape [n_exp, {n_ctrl}], got {C.shape}"
        )
    n_points = np.ascontiguousarray(n_points, dtype=np.int64)
    if n_points.shape != (C.shape[0],) or (
        n_points.size and (n_points.min() < 0 or n_points.max() > N_STEPS)
    ):
        raise ValueError(
            f"{system}: n_points must be {C.shape[0]} integers in 0..{N_STEPS}"
        )
    depth = _programs.check_programs(
        ops, args, consts, prog_start, prog_len, const_start, 3
    )
    packed = _programs._coerce(ops, args, consts, prog_start, prog_len, const_start)
    out = np.empty((packed[3].shape[0], C.shape[0], n_ch, N_STEPS))
    aux = np.zeros((C.shape[0] if sid in (M1_SIMPLE, M1_COMPLEX) else 0, 2, N_STEPS))
    if aux.size:  # decayed charges, once for all programs (vectorized exp)
        t = np.arange(N_STEPS)[None, :] * C[:, 4:5]
        aux[:, 0] = C[:, 0:1] * np.exp(-t / 10.0)
        aux[:, 1] = C[:, 1:2] * np.exp(-t / 5.0)
    if out.size:
        with np.errstate(all="ignore"):
            _simulate(sid, *packed, depth, C, aux, n_points, out)
    return out
