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

Layout: the controls are read transposed (one row per control, contiguous over experiments); a
block's law inputs, the law's stack (:mod:`kernels._rows`) and its integrator state live in two
small matrices allocated once per call, so a step allocates nothing and creates no array views.
``paired=True`` integrates experiment e under program e only (a fit that gives each experiment
its own candidate constant pays n simulations instead of n x n).
"""

import numpy as np
from numba import njit

from kernels import programs as _programs
from kernels._checks import named_errors
from kernels._jit import JIT
from kernels._rows import IN, law_rows

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
_N_STATE = 8  # state rows per block (m0 complex uses all)


@njit(error_model="numpy", **JIT)
def _store(out_p, c, i, W, r, lo, m):
    """``out_p[lo + j, c, i] = W[r, j]`` (strided stores, apart from the loops that vectorize)."""
    for j in range(m):
        out_p[lo + j, c, i] = W[r, j]



@njit(error_model="numpy", **JIT)
def _m0_simple(prog, S, W, CT, lo, m, out_p):
    """W rows: x, v, a."""
    ops, args, consts, k0, k1, c0 = prog
    for j in range(m):
        e = lo + j
        W[0, j] = CT[2, e]
        W[1, j] = CT[3, e]
        S[0, j] = CT[0, e]
        S[1, j] = CT[1, e]
        S[2, j] = abs(W[0, j])
        out_p[e, 0, 0] = W[0, j]
        out_p[e, 1, 0] = W[1, j]
    law_rows(ops, args, consts, k0, k1, c0, S, m)
    for j in range(m):
        W[2, j] = -(S[IN, j] * np.sign(W[0, j])) / CT[1, lo + j]
    for i in range(1, N_STEPS):
        for j in range(m):
            dt = CT[4, lo + j]
            x_new = W[0, j] + W[1, j] * dt + 0.5 * W[2, j] * dt**2
            W[1, j] = W[1, j] + 0.5 * W[2, j] * dt  # half step; finished with the new acceleration
            W[0, j] = x_new
            S[2, j] = abs(x_new)
        law_rows(ops, args, consts, k0, k1, c0, S, m)
        for j in range(m):
            e = lo + j
            dt = CT[4, e]
            W[2, j] = -(S[IN, j] * np.sign(W[0, j])) / CT[1, e]
            W[1, j] = W[1, j] + 0.5 * W[2, j] * dt
            out_p[e, 0, i] = W[0, j]
            out_p[e, 1, i] = W[1, j]


@njit(error_model="numpy", **JIT)
def _m0_accel(F, m2, px, py):
    d = np.sqrt(px * px + py * py)
    if d == 0.0:
        return 0.0, 0.0
    s = -(F / m2)
    return s * (px / d), s * (py / d)


@njit(error_model="numpy", **JIT)
def _m0_complex(prog, S, W, CT, lo, m, out_p):
    """W rows: px, py, vx, vy, ax, ay."""
    ops, args, consts, k0, k1, c0 = prog
    for j in range(m):
        e = lo + j
        W[0, j] = CT[2, e]
        W[1, j] = 0.0
        W[2, j] = 0.0
        W[3, j] = CT[3, e]
        S[0, j] = CT[0, e]
        S[1, j] = CT[1, e]
        S[2, j] = np.sqrt(W[0, j] * W[0, j])
        out_p[e, 0, 0] = W[0, j]
        out_p[e, 1, 0] = 0.0
        out_p[e, 2, 0] = 0.0
        out_p[e, 3, 0] = W[3, j]
    law_rows(ops, args, consts, k0, k1, c0, S, m)
    for j in range(m):
        W[4, j], W[5, j] = _m0_accel(S[IN, j], CT[1, lo + j], W[0, j], W[1, j])
    for i in range(1, N_STEPS):
        for j in range(m):
            dt = CT[4, lo + j]
            nx = W[0, j] + W[2, j] * dt + 0.5 * W[4, j] * dt**2
            ny = W[1, j] + W[3, j] * dt + 0.5 * W[5, j] * dt**2
            W[2, j] = W[2, j] + 0.5 * W[4, j] * dt
            W[3, j] = W[3, j] + 0.5 * W[5, j] * dt
            W[0, j] = nx
            W[1, j] = ny
            S[2, j] = np.sqrt(nx * nx + ny * ny)
        law_rows(ops, args, consts, k0, k1, c0, S, m)
        for j in range(m):
            e = lo + j
            dt = CT[4, e]
            W[4, j], W[5, j] = _m0_accel(S[IN, j], CT[1, e], W[0, j], W[1, j])
            W[2, j] = W[2, j] + 0.5 * W[4, j] * dt
            W[3, j] = W[3, j] + 0.5 * W[5, j] * dt
            out_p[e, 0, i] = W[0, j]
            out_p[e, 1, i] = W[1, j]
            out_p[e, 2, i] = W[2, j]
            out_p[e, 3, i] = W[3, j]


@njit(error_model="numpy", **JIT)
def _m1(prog, S, W, CT, AT, lo, m, out_p, energy):
    """W rows: x, v. ``AT[0, i, e]``, ``AT[1, i, e]``: the decayed charges ``q1 e^{-t_i/10}``, ``q2 e^{-t_i/5}``."""
    ops, args, consts, k0, k1, c0 = prog
    for j in range(m):
        e = lo + j
        W[0, j] = CT[3, e]
        W[1, j] = 0.0
        out_p[e, 0, 0] = 0.0
    for i in range(1, N_STEPS):
        for j in range(m):
            e = lo + j
            S[0, j] = abs(AT[0, i, e])
            S[1, j] = abs(AT[1, i, e])
            S[2, j] = abs(W[0, j])
        law_rows(ops, args, consts, k0, k1, c0, S, m)
        for j in range(m):
            e = lo + j
            F = S[IN, j]
            a = (F if AT[0, i, e] * AT[1, i, e] > 0.0 else -F) / CT[2, e]
            dt = CT[4, e]
            W[1, j] = W[1, j] + a * dt
            W[0, j] = W[0, j] + W[1, j] * dt
        if energy:
            for j in range(m):
                W[2, j] = 0.5 * CT[2, lo + j] * (W[1, j] ** 2)
        _store(out_p, 0, i, W, 2 if energy else 1, lo, m)


@njit(error_model="numpy", **JIT)
def _m2_accel(F, i1, i2, mass, x):
    if mass == 0.0 or x == 0.0 or i1 == 0.0 or i2 == 0.0:  # no force without both currents
        return 0.0
    if np.sign(i1) == np.sign(i2):
        return -F / mass
    return F / mass


@njit(error_model="numpy", **JIT)
def _m2(prog, S, W, CT, lo, m, out_p, ac):
    """W rows: x, v, a, I1."""
    ops, args, consts, k0, k1, c0 = prog
    for j in range(m):
        e = lo + j
        W[0, j] = CT[3, e]
        W[1, j] = CT[4, e]
        W[3, j] = 0.0 if ac else CT[0, e]
        S[0, j] = abs(W[3, j])
        S[1, j] = abs(CT[1, e])
        S[2, j] = abs(W[0, j])
        out_p[e, 0, 0] = W[0, j]
        out_p[e, 1, 0] = W[1, j]
    if not ac:
        law_rows(ops, args, consts, k0, k1, c0, S, m)
        for j in range(m):
            e = lo + j
            W[2, j] = _m2_accel(S[IN, j], CT[0, e], CT[1, e], CT[2, e], W[0, j])
    for i in range(1, N_STEPS):
        if ac:  # the current changes: both evaluations of the step use I1(t_{i-1})
            s = np.sin(_TWO_PI_50 * ((i - 1) * _M2C_DT))
            for j in range(m):
                W[3, j] = CT[0, lo + j] * s
                S[0, j] = abs(W[3, j])
                S[2, j] = abs(W[0, j])
            law_rows(ops, args, consts, k0, k1, c0, S, m)
            for j in range(m):
                e = lo + j
                W[2, j] = _m2_accel(S[IN, j], W[3, j], CT[1, e], CT[2, e], W[0, j])
        for j in range(m):
            dt = _M2C_DT if ac else CT[5, lo + j]
            x_new = W[0, j] + W[1, j] * dt + 0.5 * W[2, j] * dt**2
            W[1, j] = W[1, j] + 0.5 * W[2, j] * dt
            W[0, j] = x_new
            S[2, j] = abs(x_new)
        law_rows(ops, args, consts, k0, k1, c0, S, m)
        for j in range(m):
            e = lo + j
            dt = _M2C_DT if ac else CT[5, e]
            W[2, j] = _m2_accel(S[IN, j], W[3, j], CT[1, e], CT[2, e], W[0, j])
            W[1, j] = W[1, j] + 0.5 * W[2, j] * dt
            out_p[e, 0, i] = W[0, j]
            out_p[e, 1, i] = W[1, j]


@njit(error_model="numpy", **JIT)
def _run_block(system, packed, p, CT, AT, n_points, lo, hi, out_p, S, W):
    """Integrate experiments ``lo:hi`` under program ``p`` into ``out_p`` (NaN past ``n_points``)."""
    ops, args, consts, prog_start, prog_len, const_start = packed
    prog = (ops, args, consts, prog_start[p], prog_start[p] + prog_len[p], const_start[p])
    m = hi - lo
    if system == M0_SIMPLE:
        _m0_simple(prog, S, W, CT, lo, m, out_p)
    elif system == M0_COMPLEX:
        _m0_complex(prog, S, W, CT, lo, m, out_p)
    elif system == M1_SIMPLE:
        _m1(prog, S, W, CT, AT, lo, m, out_p, False)
    elif system == M1_COMPLEX:
        _m1(prog, S, W, CT, AT, lo, m, out_p, True)
    elif system == M2_SIMPLE:
        _m2(prog, S, W, CT, lo, m, out_p, False)
    else:
        _m2(prog, S, W, CT, lo, m, out_p, True)
    for e in range(lo, hi):
        for t in range(n_points[e], N_STEPS):
            for c in range(out_p.shape[1]):
                out_p[e, c, t] = np.nan


@njit(error_model="numpy", **JIT)
def _simulate(system, packed, depth, CT, AT, n_points, paired, out):
    """Fill ``out[p, e, c, t]`` for every program p and experiment e (``paired``: ``out[0, e]`` under
    program e only); slots t >= n_points[e] are NaN.

    Parameters
    ----------
    system : int
        One of the ``M*`` ids.
    packed : tuple
        ``ops, args, consts, prog_start, prog_len, const_start`` (validated).
    depth : int
        Stack depth the programs need.
    CT : float64[n_ctrl, n_exp]
        Controls, one row per control (column layout per system, see the module docstring).
    AT : float64[2, 20, n_exp]
        M1 only: the decayed charges at each step (else unused).
    n_points : int64[n_exp]
        Returned points per experiment (0..20).
    paired : bool
        Program e integrates experiment e only (then P == n_exp and ``out`` is [1, n_exp, ...]).
    out : float64[P, n_exp, n_ch, 20] (or [1, n_exp, n_ch, 20] when paired)
    """
    P = packed[3].shape[0]
    n = CT.shape[1]
    S = np.empty((IN + depth, _BLOCK))
    W = np.empty((_N_STATE, _BLOCK))
    if paired:
        for e in range(n):
            _run_block(system, packed, e, CT, AT, n_points, e, e + 1, out[0], S, W)
        return out
    nb = (n + _BLOCK - 1) // _BLOCK
    for task in range(P * nb):
        p = task // nb
        lo = (task % nb) * _BLOCK
        _run_block(system, packed, p, CT, AT, n_points, lo, min(n, lo + _BLOCK), out[p], S, W)
    return out


@named_errors
def simulate_trajectories(
    system, ops, args, consts, prog_start, prog_len, const_start, C, n_points, *, paired=False
):
    """Integrate a trajectory system for every experiment under every candidate law.

    Args:
        system: A key of :data:`TRAJECTORY_SYSTEMS` (``"m0_gravity/simple_system"``).
        ops, args, consts, prog_start, prog_len, const_start: Packed programs over the law's three
            inputs (``kernels.programs`` layout; ``etc_fast.expr.pack``).
        C: float64[n_exp, n_ctrl] controls (layout per system, module docstring).
        n_points: int64[n_exp] returned points per experiment, each in 0..20.
        paired: Integrate experiment e under program e only (needs as many programs as
            experiments): a fit that gives every experiment its own candidate pays n simulations,
            not n x n.

    Returns:
        float64[P, n_exp, n_ch, 20]: the channels at each returned time (NaN past ``n_points``);
        float64[n_exp, n_ch, 20] when ``paired``.

    Raises:
        ValueError: unknown system, wrong control shape, ``n_points`` out of range, bad programs,
            ``paired`` with a program count other than the experiment count.
    """
    try:
        sid, n_ctrl, n_ch = TRAJECTORY_SYSTEMS[system]
    except KeyError:
        raise ValueError(
            f"unknown trajectory system {system!r}; known: {', '.join(TRAJECTORY_SYSTEMS)}"
        ) from None
    C = np.asarray(C, dtype=np.float64)
    if C.ndim != 2 or C.shape[1] != n_ctrl:
        raise ValueError(
            f"{system}: C (the controls) must have shape (n_exp, {n_ctrl}), got {C.shape}"
        )
    n_points = np.ascontiguousarray(n_points, dtype=np.int64)
    if n_points.shape != (C.shape[0],) or (
        n_points.size and (n_points.min() < 0 or n_points.max() > N_STEPS)
    ):
        raise ValueError(
            f"{system}: n_points must be {C.shape[0]} integers in 0..{N_STEPS} (one per row of C), got shape {n_points.shape}"
        )
    depth = _programs.check_programs(
        ops, args, consts, prog_start, prog_len, const_start, 3
    )
    packed = _programs._coerce(ops, args, consts, prog_start, prog_len, const_start)
    n, P = C.shape[0], packed[3].shape[0]
    if paired and P != n:
        raise ValueError(
            f"{system}: paired simulation needs one program per experiment, got {P} programs for {n}"
        )
    out = np.empty((1 if paired else P, n, n_ch, N_STEPS))
    CT = np.ascontiguousarray(C.T)
    AT = np.zeros((2, N_STEPS, n if sid in (M1_SIMPLE, M1_COMPLEX) else 0))
    if AT.size:  # decayed charges, once for all programs (vectorized exp)
        t = np.arange(N_STEPS)[None, :] * C[:, 4:5]
        AT[0] = (C[:, 0:1] * np.exp(-t / 10.0)).T
        AT[1] = (C[:, 1:2] * np.exp(-t / 5.0)).T
    if out.size:
        with np.errstate(all="ignore"):
            _simulate(sid, packed, depth, CT, AT, n_points, bool(paired), out)
    return out[0] if paired else out
