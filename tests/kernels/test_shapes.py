"""Every public kernel wrapper refuses a wrong number of dimensions, a transposed array and
mismatched lengths, with a message that names the function and the argument."""

from __future__ import annotations

import inspect
import re

import numpy as np
import pytest

import kernels

R = np.random.default_rng(7)
N_HYP, N, D = 3, 7, 2
P = R.random((N_HYP, N)) + 0.5
Y = R.random(N) + 0.5
U = R.random((N, D))
OPS = np.array([kernels.OPCODES[o] for o in ("var", "const", "mul", "var", "add")] * 2, dtype=np.int64)
ARGS = np.array([0, 0, 0, 1, 0] * 2, dtype=np.int64)
PACKED = (OPS, ARGS, np.array([2.0, 3.0]), np.array([0, 5]), np.array([5, 5]), np.array([0, 1]))
OPS1, ARGS1 = OPS[:5], ARGS[:5]
CTRL = R.random((4, 5)) + 0.5
NPTS = np.full(4, 5, dtype=np.int64)
LAW3 = (np.array([kernels.OPCODES[o] for o in ("var", "var", "mul", "var", "div")], dtype=np.int64),
        np.array([0, 1, 0, 2, 0], dtype=np.int64), np.zeros(0), np.array([0]), np.array([5]), np.array([0]))
GP = dict(lengths=np.full(D, 0.3), signal_var=1.0, noise=1e-6)
U_POOL = R.random((5, D))
MASK = np.ones(N, dtype=bool)
MU = R.random((N_HYP, N, 2)) + 0.5  # laws x points x readings
VAR = np.full_like(MU, 0.01)
LOG_W = np.zeros(N_HYP)


def _packed(**change):
    names = ("ops", "args", "consts", "prog_start", "prog_len", "const_start")
    return tuple(change.get(n, a) for n, a in zip(names, PACKED))


# name -> (good call, {kind: (bad call, argument named)}); a call is (args, kwargs). A kind left
# out does not apply (one-dimensional arguments cannot be transposed).
CASES = {
    "variance_scores": ((P,), {"ndim": ((P[0],), "P"), "transposed": ((P.T,), "P"),
                               "lengths": ((P,), "P", {"n_points": N - 1})}),
    "pairwise_scores": ((P,), {"ndim": ((P[0],), "P"), "transposed": ((P.T,), "P"),
                               "lengths": ((P,), "P", {"n_points": N - 1})}),
    "finite_fraction": ((P,), {"ndim": ((P[0],), "P"), "transposed": ((P.T,), "P"),
                               "lengths": ((P,), "P", {"n_points": N - 1})}),
    "relative_disagreement": ((P,), {"ndim": ((P[0],), "P"), "transposed": ((P.T,), "P"),
                                     "lengths": ((P,), "P", {"n_points": N - 1})}),
    "relative_residual_rms": ((P, Y), {"ndim": ((P[0], Y), "P"), "transposed": ((P.T, Y), "P"),
                                       "lengths": ((P, Y[:-1]), "y")}),
    "calibrate": ((P, Y), {"ndim": ((P[0], Y), "H_obs"), "transposed": ((P.T, Y), "H_obs"),
                           "lengths": ((P, Y[:-1]), "y_obs")}),
    "fit_filter": ((Y, MASK), {"ndim": ((Y[None], MASK), "err"), "lengths": ((Y, MASK[:-1]), "ok")}),
    "fit_denominator": ((Y,), {"ndim": ((Y[None],), "y")}),
    "stable_argsort": ((Y,), {"ndim": ((Y[None],), "x")}),
    "ordinal_rank": ((Y,), {"ndim": ((Y[None],), "scores")}),
    "edge_weight": ((U,), {"ndim": ((U[0],), "U"), "transposed": ((U.T,), "U"),
                           "lengths": ((U,), "U", {"n_points": N - 1})}),
    "rank_regularize": ((Y, U, Y / 2), {"ndim": ((Y[None], U, Y / 2), "raw"), "transposed": ((Y, U.T, Y / 2), "U"),
                                        "lengths": ((Y, U, Y[:-1] / 2), "v")}),
    "eligible_set": ((Y, 2), {"ndim": ((Y[None], 2), "scores")}),
    "select_batch": ((Y, U, 2), {"ndim": ((Y[None], U, 2), "scores"), "transposed": ((Y, U.T, 2), "U"),
                                 "lengths": ((Y[:-1], U, 2), "U")}),
    "select_random": ((MASK, 2), {"ndim": ((MASK[None], 2), "available"),
                                  "lengths": ((MASK, 2), "uniforms", {"uniforms": np.array([0.5])})}),
    "acquisition_step": ((P[:, :5], Y[:5], P, U, "variance", 2), {
        "ndim": ((P[0, :5], Y[:5], P, U, "variance", 2), "H_obs"),
        "transposed": ((P[:, :5], Y[:5], P.T, U, "variance", 2), "H_pool"),
        "lengths": ((P[:, :5], Y[:5], P, U[:-1], "variance", 2), "U_pool")}),
    "committee_step": ((*PACKED, U[:5].T, Y[:5], U.T, U, "variance", 2), {
        "ndim": ((*PACKED, U[:5, 0], Y[:5], U.T, U, "variance", 2), "XT_obs"),
        "transposed": ((*PACKED, U[:5].T, Y[:5], U, U, "variance", 2), "XT_pool"),
        "lengths": ((*PACKED, U[:5].T, Y[:5], U.T, U[:-1], "variance", 2), "U_pool")}),
    "rmsle_coverage": ((Y, Y), {"ndim": ((Y[None], Y[None]), "y_true"), "lengths": ((Y, Y[:-1]), "y_pred")}),
    "coverage_q": ((MASK, Y), {"transposed": ((MASK.reshape(1, N), Y.reshape(N, 1)), "rmsle"),
                               "lengths": ((MASK, Y[:-1]), "rmsle")}),
    "module_bootstrap_interval": ((Y,), {"ndim": ((Y[None],), "effects")}),
    "module_resample_means": ((U,), {"ndim": ((U[None],), "values"),
                                     "transposed": ((U.T,), "values", {"n_modules": N}),
                                     "lengths": ((U,), "values", {"n_modules": N - 1})}),
    "leave_one_out_range": ((Y,), {"ndim": ((Y[None],), "effects")}),
    "sign_flip_pvalue": ((Y,), {"ndim": ((Y[None],), "effects")}),
    "best_pairs": ((U, Y, 1), {"ndim": ((U[0], Y, 1), "U"), "transposed": ((U.T, Y, 1), "U"),
                               "lengths": ((U, Y[:-1], 1), "t")}),
    "maximin_pick": ((U[:3], U, 2), {"ndim": ((U[:3], U[0], 2), "U_cand"), "transposed": ((U[:3].T, U, 2), "U_ref"),
                                      "lengths": ((U[:3], U[:, :1], 2), "U_ref")}),
    "simulate_trajectories": (("m0_gravity/simple_system", *LAW3, CTRL, NPTS), {
        "ndim": (("m0_gravity/simple_system", *LAW3, CTRL[0], NPTS), "C"),
        "transposed": (("m0_gravity/simple_system", *LAW3, CTRL.T, NPTS), "C"),
        "lengths": (("m0_gravity/simple_system", *LAW3, CTRL, NPTS[:-1]), "n_points")}),
    "gp_fit": ((U, Y), {"ndim": ((U, Y[None]), "z"), "transposed": ((U.T, Y), "U_obs"),
                        "lengths": ((U, Y[:-1]), "z")}),
    "gp_log_likelihood": ((U, Y, *GP.values()), {"ndim": ((U[0], Y, *GP.values()), "U_obs"),
                                                 "transposed": ((U.T, Y, *GP.values()), "U_obs"),
                                                 "lengths": ((U, Y, GP["lengths"][:1], 1.0, 1e-6), "lengths")}),
    "gp_posterior": ((U, Y, U_POOL, *GP.values()), {"ndim": ((U, Y, U_POOL[0], *GP.values()), "U_pool"),
                                                    "transposed": ((U, Y, U_POOL.T, *GP.values()), "U_pool"),
                                                    "lengths": ((U, Y[:-1], U_POOL, *GP.values()), "z")}),
    "gp_select": ((U, Y, U_POOL, MASK[:5], 2, *GP.values()), {
        "ndim": ((U, Y, U_POOL, MASK[None, :5], 2, *GP.values()), "available"),
        "transposed": ((U, Y, U_POOL.T, MASK[:5], 2, *GP.values()), "U_pool"),
        "lengths": ((U, Y, U_POOL, MASK[:4], 2, *GP.values()), "available")}),
    "evaluate_programs": ((*PACKED, U), {"ndim": ((*PACKED, U[0]), "X"), "transposed": ((*PACKED, U.T), "X"),
                                         "lengths": ((*_packed(args=ARGS[:-1]), U), "args")}),
    "evaluate_programs_paired": ((*PACKED, U[:6]), {
        "ndim": ((*PACKED, U[0]), "X"), "transposed": ((*PACKED, U[:6].T), "X"),
        "lengths": ((*_packed(prog_len=np.array([5])), U[:6]), "prog_len")}),
    "evaluate_family": ((OPS1, ARGS1, Y[:4, None], U), {
        "ndim": ((OPS1, ARGS1, Y[:4], U), "consts"), "transposed": ((OPS1, ARGS1, Y[None, :4], U), "consts"),
        "lengths": ((OPS1, ARGS1[:-1], Y[:4, None], U), "args")}),
    "point_distances": ((MU, VAR), {"ndim": ((MU[0], VAR), "mu"), "lengths": ((MU, VAR[:, :-1]), "var")}),
    "mutual_information": ((MU, VAR, LOG_W), {"ndim": ((MU, VAR, LOG_W[None]), "log_w"),
                                              "lengths": ((MU, VAR, LOG_W[:-1]), "log_w")}),
    "mi_select": ((MU, VAR, LOG_W, MASK, 2), {"ndim": ((MU, VAR, LOG_W, MASK[None], 2), "available"),
                                               "lengths": ((MU, VAR, LOG_W, MASK[:-1], 2), "available")}),
    "check_programs": ((*PACKED, D), {"ndim": ((*_packed(ops=OPS[None]), D), "ops"),
                                      "lengths": ((*_packed(const_start=np.array([0])), D), "const_start")}),
}
# Keywords a good call needs besides its arrays.
GOOD_KW = {"select_random": {"seed": 0}}
# Public names that take no arrays.
NO_ARRAYS = {"step_constants"}


def test_every_public_wrapper_is_covered():
    public = {n for n in kernels.__all__ if inspect.isfunction(getattr(kernels, n))}
    assert public - NO_ARRAYS == set(CASES)


@pytest.mark.parametrize("name", sorted(CASES))
def test_good_call_is_accepted(name):
    args = CASES[name][0]
    getattr(kernels, name)(*args, **GOOD_KW.get(name, {}))


BAD = [(name, kind) for name, (_, kinds) in sorted(CASES.items()) for kind in kinds]


@pytest.mark.parametrize("name,kind", BAD, ids=[f"{n}-{k}" for n, k in BAD])
def test_bad_shape_is_refused_naming_function_and_argument(name, kind):
    args, argname, *kw = CASES[name][1][kind]
    with pytest.raises((ValueError, TypeError)) as info:
        getattr(kernels, name)(*args, **(kw[0] if kw else {}))
    message = str(info.value)
    assert message.startswith(f"{name}: ")
    assert re.search(rf"\b{argname}\b", message.split(": ", 1)[1]), message


def test_transposed_committee_is_refused_and_a_stated_size_allows_a_large_committee():
    H = R.random((300, 5))
    with pytest.raises(ValueError, match=r"variance_scores: P must have shape \(n_hyp, n_points\).*\(300, 5\)"):
        kernels.variance_scores(H)
    assert kernels.variance_scores(H.T).shape == (300,)
    np.testing.assert_array_equal(kernels.variance_scores(H, n_points=5),
                                  kernels.variance_scores(np.ascontiguousarray(H), n_points=5))
    assert kernels.variance_scores(H, n_points=5).shape == (5,)


def test_stated_sizes_do_not_change_results():
    np.testing.assert_array_equal(kernels.evaluate_programs(*PACKED, U), kernels.evaluate_programs(*PACKED, U, n_points=N))
    np.testing.assert_array_equal(kernels.pairwise_scores(P), kernels.pairwise_scores(P, n_points=N))
    np.testing.assert_array_equal(kernels.edge_weight(U), kernels.edge_weight(U, n_points=N))


def test_one_point_read_by_every_column_is_not_taken_for_transposed():
    # one point, two variables, both read: the shape says points x variables
    assert kernels.evaluate_programs(*PACKED, U[:1]).shape == (2, 1)
