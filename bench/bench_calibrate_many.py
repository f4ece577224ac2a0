"""Many calibrations of one program through the simulator: ``[lockstep]`` vs ``[scipy]``.

``[lockstep]`` is :func:`etc_fast.systems.calibrate_many` (every fit's Jacobian steps in one
forward-model call, every trial step in another); ``[scipy]`` is :func:`etc_fast.systems.calibrate`
once per fit, the same method one fit at a time. The fits are those of a scan's refinement: 24
starts of ``K * I_0**a * exp(g * theta**b)`` on 7 records of m7's two-polarizer apparatus (a closed
form, whose forward-model call costs about as much for one program as for dozens). What bounds
``[scipy]``: per step one forward-model call of its fixed cost and SciPy's own bookkeeping.
"""

from __future__ import annotations

import numpy as np
import pytest

from etc_fast.expr import parse
from etc_fast.systems import calibrate, calibrate_many, simulate
from etc_fast.systems._forward import observe
from etc_fast.systems._hidden import hidden_law
from etc_fast.systems._pool import system_pool
from etc_fast.tasks import get_task

MODULE, SYSTEM = "m7_malus_law", "complex_system"


def _fits():
    requests = system_pool(MODULE, SYSTEM, seed=0)[:7]
    obs = observe(MODULE, SYSTEM, simulate(MODULE, SYSTEM, requests, hidden_law(MODULE, "easy", "v0")))
    prog = parse("K*I_0**a*exp(g*theta**b)", get_task(MODULE, "easy", "v0").variable_names)
    rng = np.random.default_rng(0)
    names = list(prog.const_names)
    consts = np.repeat(prog.consts[None], 24, axis=0)
    for name, (lo, hi) in {"K": (-2, 2), "a": (-0.5, 0.5), "g": (-2, 1), "b": (-0.5, 0.5)}.items():
        consts[:, names.index(name)] = 10.0 ** rng.uniform(lo, hi, 24)
    free = np.array([[n is not None for n in names]] * 24)
    return prog, requests, obs, consts, free


def _lockstep(prog, requests, obs, consts, free):
    return calibrate_many(prog, MODULE, SYSTEM, requests, obs, consts, free, max_nfev=60)[1]


def _scipy(prog, requests, obs, consts, free):
    return np.array([calibrate(prog.with_consts(c), MODULE, SYSTEM, requests, obs, max_nfev=60).rms for c in consts])


@pytest.mark.parametrize("impl", ["lockstep", "scipy"])
def test_calibrate_many(benchmark, impl):
    benchmark.group = "calibrate-many-24-fits"
    args = _fits()
    fn = _lockstep if impl == "lockstep" else _scipy
    fn(*args)
    rms = benchmark.pedantic(fn, args=args, rounds=3, iterations=1)
    assert np.all(np.isfinite(rms))
