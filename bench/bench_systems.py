"""Committee simulation through a system (the planner's step): ``[numba]`` kernel vs ``[numpy]`` twin.

A 5-hypothesis committee (realistic alternatives to each module's easy law, constants of the
right order) integrated over a 2048-experiment pool of each trajectory system: 20 steps, one law
evaluation per experiment and step (two in m2's AC system). The twin integrates the whole pool
with NumPy arrays, one program at a time, evaluating the law with the NumPy program twin at each
step (and again at the old position of each Verlet step, as NewtonBench does): it pays one NumPy
call per instruction and per state update on 2048-element arrays. The kernel runs each
(program, block of 128 experiments) pair in turn on one core (kernels run serially; the runner
parallelizes trials), the law evaluated by the ``kernels.programs`` stack machine on the rows of a
scratch matrix holding the block's current states (``kernels._rows``). Each committee holds one
hypothesis with a general power (``distance**2.6``), which the kernel takes by ``exp(c log x)``
and the twin by NumPy's ``pow``.
"""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.expr import pack, parse
from etc_fast.systems import simulate
from etc_fast.systems._forward import _KERNEL_COLUMNS
from kernels.systems import TRAJECTORY_SYSTEMS, simulate_trajectories
from tests._ref_systems import simulate_trajectories_ref

N = 2048
_ARGS = {
    "m0": ("mass1", "mass2", "distance"),
    "m1": ("q1", "q2", "distance"),
    "m2": ("current1", "current2", "distance"),
}
_FORMS = {
    "m0": [
        "6.7e-5*mass1*mass2/distance**1.5",
        "6.7e-5*mass1*mass2/distance**2",
        "6.7e-5*mass1/distance**2.6",
        "6.7e-5*(mass1*mass2)**2/distance**1.5",
        "6.7e-5*mass1*mass2*exp(-distance/3)/distance**2",
    ],
    "m1": [
        "2*q1*q2/distance**3",
        "2*q1*q2/distance**2",
        "2*(q1*q2)**3/distance**2",
        "2*q1**3*q2/distance**2",
        "2*q1*q2*(q1 + q2)/distance**2.7",
    ],
    "m2": [
        "0.0478*current1*current2/distance**3",
        "0.0478*current1*current2/distance",
        "0.0478*current2/distance**3.8",
        "0.0478*(current1*current2)**1.5/distance**3",
        "0.0478*(current1 + current2)**1.5/distance**3",
    ],
}


def pool(system: str):
    sid, n_ctrl, _ = TRAJECTORY_SYSTEMS[system]
    mod = system[:2]
    rng = np.random.default_rng(0)
    u = rng.uniform(size=(N, n_ctrl))
    lo, hi = {"m0": (1.0, 1e3), "m1": (0.1, 10.0), "m2": (1e-3, 1e-1)}[mod]
    C = lo * (hi / lo) ** u
    if mod == "m0":
        C[:, 2] = 1.0 + 9.0 * u[:, 2]
        C[:, 3] = u[:, 3] - 0.5
    if sid != 5:
        C[:, -1] = 0.01 * 25.0 ** u[:, -1]  # time step 0.01 .. 0.25
    return pack([parse(f, _ARGS[mod]) for f in _FORMS[mod]]), C, np.full(N, 20)


@pytest.fixture(scope="module", params=sorted(TRAJECTORY_SYSTEMS))
def case(request):
    pk, C, npts = pool(request.param)
    simulate_trajectories(request.param, *pk, C, npts)  # compile outside the timing
    return request.param, pk, C, npts


def _per_experiment(system, pk, C, npts):
    """What a planner without compiled forward models does: NewtonBench's simulator, experiment
    by experiment, with each candidate as a Python law (``etc_fast.systems.simulate``)."""
    module, sysname = system.split("/")
    keys = _KERNEL_COLUMNS[system]
    requests = [dict(zip(keys, row.tolist())) for row in C]
    for p in range(len(pk.prog_start)):
        program = Program_at(pk, p)
        simulate(
            module,
            sysname,
            requests,
            lambda a, b, r, _p=program: float(_p.evaluate([[a, b, r]])[0]),
        )


def Program_at(pk, p):
    from etc_fast.expr import Program

    s, n, c = pk.prog_start[p], pk.prog_len[p], pk.const_start[p]
    n_c = (pk.const_start[p + 1] if p + 1 < len(pk.const_start) else len(pk.consts)) - c
    return Program.build(
        ("a", "b", "r"),
        pk.ops[s : s + n],
        pk.args[s : s + n],
        pk.consts[c : c + n_c],
        [False] * n_c,
        [None] * n_c,
    )


@pytest.mark.parametrize("impl", ["numba", "numpy"])
def test_simulate_committee(benchmark, case, impl):
    system, pk, C, npts = case
    benchmark.group = f"systems-{system}-5x{N}"
    fn = simulate_trajectories if impl == "numba" else simulate_trajectories_ref
    out = benchmark(fn, system, *pk, C, npts)
    ref = simulate_trajectories_ref(system, *pk, C, npts)
    np.testing.assert_array_equal(np.isnan(out), np.isnan(ref))
    # Close passes of the singular forces amplify round-off along a few trajectories: almost all agree.
    close = np.isclose(out, ref, rtol=1e-9, atol=1e-300) | np.isnan(ref)
    assert close.mean() > 0.999


def test_simulate_committee_per_experiment(benchmark):
    """The same m0 simple committee through the per-experiment Python simulator, for scale (one round)."""
    system = "m0_gravity/simple_system"
    pk, C, npts = pool(system)
    benchmark.group = f"systems-{system}-5x{N}"
    benchmark.pedantic(
        _per_experiment, args=(system, pk, C, npts), rounds=1, iterations=1
    )
