"""The whole planner step: ``[numba]`` vs ``[numpy]``, at the paper's size and at 100x hypotheses.

One step = evaluate the committee on the observations and on the available pool, calibrate, fit
filter, score (variance or pairwise), rank-regularize, select a batch of 4. Problem: a
gravity-like task (3 log-scaled variables), 9 observations, 2048-point scrambled Sobol pool,
committees of 5 and 500 hypotheses.

* ``[numba]``: programs parsed and packed once (:class:`etc_fast.acquisition.Committee`), then
  :meth:`~etc_fast.acquisition.Committee.step`: argument checks, a compiled call that evaluates
  every program on the observations, calibrates and filters, evaluates only the kept programs on
  the pool (the rest take no part in scoring), scores and packs the rank keys; NumPy's sort of
  the keys; a compiled call that ranks, regularizes, cuts and picks (:mod:`kernels.step`); the
  result object. The pool is prepared once, as a trial prepares its pool once for all its turns:
  its transposed inputs and its boundary weights (``kernels.edge_weight``, passed as ``edge=``;
  the weights depend only on the pool's unit coordinates). That preparation is timed on its own in
  ``bench_rank_reg.py::test_edge_weight`` (~6 us with its argument checks at 2048 x 3).
* ``[numpy]``: the same programs evaluated by the NumPy twin (one array operation per
  instruction) on the observations and the whole pool, then the vectorized NumPy step
  ``acquisition_step_np_ref``.

Each timed call takes the next of ``N_INSTANCES`` problems (different pools, observations and
noise), its pool arrays freshly copied outside the timing as a trial gathers the available points
each turn: repeating one input lets the branch predictor learn data-dependent branches, which
makes branchy code look several times cheaper than it is on fresh data.

Where the time goes (numba, 5 hypotheses, 2 kept on these problems, on the 2-core development
machine, ~30 us variance / ~37 us pairwise): program evaluation ~5 us (5 programs on 9
observations, the 2 kept ones on 2048 points; ``exp`` and the powers dominate), calibration and
filter ~1 us, variance scores ~2 us, NumPy's sort of the 2048 packed rank keys ~4.3 us (an AVX-512
sorting network; a compiled LSD radix sort of these clustered scores took ~18 us), ranks and
regularized scores ~2 us, the eligibility cut ~3 us (counting bisection, then one pass collecting
the indices), greedy picks ~3 us, and ~5 us of calls (argument checks, two
dispatches, handing 8 arrays back, the result object). Pairwise adds the quartiles of each kept
hypothesis (a histogram select on each calibrated row, ``kernels._shared._select_ranks``) and
the pair differences. docs/reference/kernels.md has the step's times. The NumPy step spends its time in ~150 whole-array
calls, ``argsort(kind="stable")`` (~75 us on fresh data) and ``nanpercentile`` (~50 us per row). At
500 hypotheses the NumPy side evaluates all 500 programs on the pool (~9 ms) while the compiled
step evaluates only the <= 4 kept ones, hence the large ratio there.
"""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from etc_fast.acquisition import Committee
from etc_fast.expr import pack, parse
from etc_fast.sampling import pool_unit
from kernels.rank_reg import edge_weight
from tests.reference import acquisition_step_np_ref, evaluate_programs_ref

N_POOL = 2048
N_OBS = 9
K = 4
N_INSTANCES = 32
NAMES = ("m1", "m2", "r")
LOG_BOUNDS = np.log(np.array([[1e-3, 1e3], [1e-3, 1e3], [1e-2, 1e2]]))

FORMS = ["C*m1*m2/r**2", "C*m1*m2/r**1.5", "C*m1*m2/r**3", "C*(m1 + m2)/r**2", "C*m1*m2*exp(-r/L)/r**2"]


def committee_texts(n_hyp: int) -> list[str]:
    """The paper-size committee, or ``n_hyp`` distinct power-law / exponential variants."""
    if n_hyp <= len(FORMS):
        return FORMS[:n_hyp]
    out = list(FORMS)
    exps = [0.5, 1, 1.5, 2, 2.5, 3]
    for a, b, c in itertools.product(exps, exps, exps):
        if len(out) >= n_hyp:
            break
        out.append(f"C*m1**{a}*m2**{b}/r**{c}" if (a + b + c) % 1 == 0 else f"C*m1**{a}*m2**{b}*exp(-r/L)/r**{c}")
    return out[:n_hyp]


def to_inputs(U: np.ndarray) -> np.ndarray:
    lo, hi = LOG_BOUNDS[:, 0], LOG_BOUNDS[:, 1]
    return np.exp(lo + U * (hi - lo))


def make_instances(n_hyp: int, n_instances: int = N_INSTANCES):
    """Fixed-seed problems: (programs, X_obs, y_obs, pool_X, pool_U)."""
    progs = [parse(t, NAMES) for t in committee_texts(n_hyp)]
    out = []
    for seed in range(n_instances):
        rng = np.random.default_rng(1000 + seed)
        U = pool_unit(3, seed, N_POOL)
        X_obs = to_inputs(rng.random((N_OBS, 3)))
        y = 6.674e-11 * X_obs[:, 0] * X_obs[:, 1] / X_obs[:, 2] ** 2 * (1 + 0.01 * rng.normal(size=N_OBS))
        out.append((progs, X_obs, y, to_inputs(U), U))
    return out


def numba_step(committee: Committee, XT_obs, y, XT_pool, U, edge, method):
    return committee.step(XT_obs, y, XT_pool, U, method, K, edge=edge)


def numpy_step(packed, X_obs, y, pool_X, U, method):
    H_obs = evaluate_programs_ref(*packed, X_obs)
    H_pool = evaluate_programs_ref(*packed, pool_X)
    return acquisition_step_np_ref(H_obs, y, H_pool, U, method, K)


def _numba_call(progs, X_obs, y, pool_X, U):
    com = Committee(progs)
    XT_obs, XT_pool = np.ascontiguousarray(X_obs.T), np.ascontiguousarray(pool_X.T)
    edge = edge_weight(U)

    def gather():  # the available pool arrays, as a trial gathers them each turn
        return XT_pool.copy(), U.copy(), edge.copy()

    def run(method, XT_p, U_p, edge_p):
        return numba_step(com, XT_obs, y, XT_p, U_p, edge_p, method)

    return gather, run


def _numpy_call(progs, X_obs, y, pool_X, U):
    pk = pack(progs)

    def gather():
        return pool_X.copy(), U.copy()

    def run(method, pool_X_p, U_p):
        return numpy_step(pk, X_obs, y, pool_X_p, U_p, method)

    return gather, run


def prepared(n_hyp: int, impl: str):
    """Per instance ``(gather, run)``: ``run(method, *gather())`` is one step (packing and boundary weights prepared once)."""
    make = _numba_call if impl == "numba" else _numpy_call
    return [make(*inst) for inst in make_instances(n_hyp)]


def one_step(method: str, gather_run):
    gather, run = gather_run
    return run(method, *gather())


CASES = [(n_hyp, method) for n_hyp in (5, 500) for method in ("variance", "pairwise")]
ROUNDS = {("numba", 5): 4000, ("numpy", 5): 400, ("numba", 500): 2000, ("numpy", 500): 40}
"""Timed calls per benchmark (about a second or less each)."""


@pytest.mark.parametrize("impl", ["numba", "numpy"])
@pytest.mark.parametrize("n_hyp, method", CASES, ids=[f"{m}-{n}x{N_POOL}" for n, m in CASES])
def test_acquisition_step(benchmark, n_hyp, method, impl):
    benchmark.group = f"acquisition-step-{method}-{n_hyp}x{N_POOL}"
    calls = prepared(n_hyp, impl)
    for c in calls:
        one_step(method, c)  # compile and warm every instance outside the timing
    cycle = itertools.cycle(calls)

    def setup():  # untimed: the next problem, its pool arrays freshly gathered
        gather, run = next(cycle)
        return (run, method, *gather()), {}

    out = benchmark.pedantic(lambda run, *a: run(*a), setup=setup, rounds=ROUNDS[impl, n_hyp])
    picks = out.indices if impl == "numba" else out[-1]
    assert len(picks) == K and len(set(np.asarray(picks).tolist())) == K


def test_numba_and_numpy_steps_agree():
    """Both benchmarked paths choose the same batch on every instance (checked outside timing)."""
    for method in ("variance", "pairwise"):
        for a, b in zip(prepared(5, "numba"), prepared(5, "numpy")):
            np.testing.assert_array_equal(one_step(method, a).indices, one_step(method, b)[-1])


# ------------------------------------------------------------------------------------------------
# Inputs of the individual kernels (shared by bench_calibrate/scores/rank_reg/select)
# ------------------------------------------------------------------------------------------------


def stage_inputs(n_hyp: int, method: str = "variance"):
    """Per instance: dict of the arrays each stage of the step sees (from the real step)."""
    from kernels.calibrate import calibrate, fit_filter
    from kernels.rank_reg import rank_regularize
    from kernels.scores import finite_fraction, pairwise_scores, variance_scores

    out = []
    for progs, X_obs, y, pool_X, U in make_instances(n_hyp):
        com = Committee(progs)
        H_obs, H_pool = com.evaluate(X_obs), com.evaluate(pool_X)
        a, b, _, ok, err = calibrate(H_obs, y)
        keep, _ = fit_filter(err, ok)
        with np.errstate(all="ignore"):
            P_all = a[:, None] * H_pool + b[:, None]
        P = P_all[keep]
        raw = (variance_scores if method == "variance" else pairwise_scores)(P)
        v = finite_fraction(P)
        reg = rank_regularize(raw, U, v)
        out.append(dict(H_obs=H_obs, y=y, err=err, ok=ok, P_all=P_all, raw=raw, v=v, U=U, reg=reg))
    return out


def cycled(fn, instances, *names):
    """A zero-argument callable applying ``fn`` to the next instance's named arrays."""
    args = [tuple(inst[n] for n in names) for inst in instances]
    it = itertools.cycle(args)
    for a in args:
        fn(*a)  # compile and warm outside the timing
    return lambda: fn(*next(it))
