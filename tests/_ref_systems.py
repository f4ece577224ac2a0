"""NumPy twin of :mod:`kernels.systems`: each system integrated with whole-pool NumPy arrays.

One program at a time; at every step the law is evaluated over all experiments at once by
:func:`tests._ref_programs.evaluate_programs_ref`, and the state update is one NumPy expression
per quantity, written from NewtonBench's schemes as :mod:`etc_fast.systems._simulators` runs
them (the old-position law call of each Verlet step is evaluated again here, not reused).
"""

import numpy as np

from kernels.systems import N_STEPS
from tests._ref_programs import evaluate_programs_ref


def _law(pk, p, a, b, c):
    ops, args, consts, ps, pl, cs = pk
    X = np.column_stack([a, b, c])
    return evaluate_programs_ref(
        ops, args, consts, ps[p : p + 1], pl[p : p + 1], cs[p : p + 1], X
    )[0]


def _m0_simple(pk, p, C):
    m1, m2, x, v, dt = (C[:, k].copy() for k in range(5))
    def acc(x):
        return -(_law(pk, p, m1, m2, np.abs(x)) * np.sign(x)) / m2

    rows = [(x.copy(), v.copy())]
    a = acc(x)
    for _ in range(1, N_STEPS):
        x_new = x + v * dt + 0.5 * a * dt**2
        a_new = acc(x_new)
        v = v + 0.5 * a * dt + 0.5 * a_new * dt
        x, a = x_new, a_new
        rows.append((x.copy(), v.copy()))
    return np.stack(
        [np.stack(r) for r in rows], axis=-1
    )  # [2, n, T] -> transposed by caller


def _m0_complex(pk, p, C):
    m1, m2, r0, v0, dt = (C[:, k] for k in range(5))
    pos = np.stack([r0, np.zeros_like(r0)], axis=1)
    vel = np.stack([np.zeros_like(r0), v0], axis=1)

    def acc(q):
        d = np.sqrt((q**2).sum(axis=1))
        F = _law(pk, p, m1, m2, d)
        with np.errstate(all="ignore"):
            a = -(F / m2)[:, None] * (q / d[:, None])
        return np.where((d == 0)[:, None], 0.0, a)

    rows = [np.concatenate([pos, vel], axis=1).T]
    for _ in range(1, N_STEPS):
        a = acc(pos)
        new = pos + vel * dt[:, None] + 0.5 * a * (dt**2)[:, None]
        vel = vel + 0.5 * a * dt[:, None] + 0.5 * acc(new) * dt[:, None]
        pos = new
        rows.append(np.concatenate([pos, vel], axis=1).T)
    return np.stack(rows, axis=-1)


def _m1(pk, p, C, energy):
    q1, q2, m2, x, dt = (C[:, k].copy() for k in range(5))
    v = np.zeros_like(x)
    rows = [np.zeros_like(x)]
    for i in range(1, N_STEPS):
        t = i * dt
        q1t, q2t = q1 * np.exp(-t / 10.0), q2 * np.exp(-t / 5.0)
        F = _law(pk, p, np.abs(q1t), np.abs(q2t), np.abs(x))
        a = np.where(q1t * q2t > 0, F, -F) / m2
        v = v + a * dt
        x = x + v * dt
        rows.append(0.5 * m2 * v**2 if energy else v.copy())
    return np.stack(rows, axis=-1)[None]


def _m2(pk, p, C, ac):
    i1, i2, mass, x, v = (C[:, k].copy() for k in range(5))
    dt = np.full_like(x, (1.0 / 50.0) / 19.0) if ac else C[:, 5]

    def acc(cur, x):
        F = _law(pk, p, np.abs(cur), np.abs(i2), np.abs(x))
        with np.errstate(all="ignore"):
            a = np.where(np.sign(cur) == np.sign(i2), -F / mass, F / mass)
        return np.where((mass == 0) | (x == 0) | (cur == 0) | (i2 == 0), 0.0, a)

    rows = [np.stack([x, v])]
    for i in range(1, N_STEPS):
        cur = (
            i1 * np.sin(2 * np.pi * 50.0 * ((i - 1) * ((1.0 / 50.0) / 19.0)))
            if ac
            else i1
        )
        a = acc(cur, x)
        x_new = x + v * dt + 0.5 * a * dt**2
        v = v + 0.5 * a * dt + 0.5 * acc(cur, x_new) * dt
        x = x_new
        rows.append(np.stack([x, v]))
    return np.stack(rows, axis=-1)


def simulate_trajectories_ref(
    system, ops, args, consts, prog_start, prog_len, const_start, C, n_points
):
    """Same contract as :func:`kernels.systems.simulate_trajectories`."""
    pk = (
        np.asarray(ops),
        np.asarray(args),
        np.asarray(consts, float),
        np.asarray(prog_start),
        np.asarray(prog_len),
        np.asarray(const_start),
    )
    C = np.asarray(C, dtype=np.float64)
    runs = {
        "m0_gravity/simple_system": lambda p: _m0_simple(pk, p, C),
        "m0_gravity/complex_system": lambda p: _m0_complex(pk, p, C),
        "m1_coulomb_force/simple_system": lambda p: _m1(pk, p, C, False),
        "m1_coulomb_force/complex_system": lambda p: _m1(pk, p, C, True),
        "m2_magnetic_force/simple_system": lambda p: _m2(pk, p, C, False),
        "m2_magnetic_force/complex_system": lambda p: _m2(pk, p, C, True),
    }
    outs = []
    with np.errstate(all="ignore"):
        for p in range(len(prog_start)):
            o = np.transpose(runs[system](p), (1, 0, 2)).copy()  # [n, ch, T]
            t = np.arange(N_STEPS)[None, None, :]
            o[np.broadcast_to(t >= np.asarray(n_points)[:, None, None], o.shape)] = (
                np.nan
            )
            outs.append(o)
    return np.stack(outs)
