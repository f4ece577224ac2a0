"""kernels: the compiled numeric core of etc_fast (NumPy + Numba only).

Each public submodule holds one step of the protocol: its formula in the docstring, a private
``@njit`` kernel and the checked public wrapper (docs/reference/kernels.md has the map). Helpers several
files share live in the private ``_shared`` (compiled) and ``_checks`` (argument checks) modules.
This package never imports :mod:`etc_fast`.
"""

from kernels.calibrate import calibrate, fit_denominator, fit_filter
from kernels.gp import gp_fit, gp_log_likelihood, gp_posterior, gp_select
from kernels.metrics import coverage_q, rmsle_coverage
from kernels.mi import mi_select, mutual_information, point_distances
from kernels.noise import maximin_pick, relative_disagreement, relative_residual_rms
from kernels.pairs import best_pairs
from kernels.programs import OP_ARITY, OPCODES, check_programs, evaluate_programs
from kernels.programs_family import evaluate_family
from kernels.programs_paired import evaluate_programs_paired
from kernels.rank_reg import edge_weight, ordinal_rank, rank_regularize, stable_argsort
from kernels.scores import finite_fraction, pairwise_scores, variance_scores
from kernels.select import eligible_set, select_batch, select_random
from kernels.stats import (
    SIGN_FLIP_MAX_M,
    leave_one_out_range,
    module_bootstrap_interval,
    module_resample_means,
    sign_flip_pvalue,
)
from kernels.step import acquisition_step, committee_step, step_constants
from kernels.systems import N_STEPS, TRAJECTORY_SYSTEMS, simulate_trajectories

__all__ = [
    "evaluate_programs", "evaluate_programs_paired", "evaluate_family", "check_programs", "OPCODES", "OP_ARITY",
    "calibrate", "fit_filter", "fit_denominator",
    "variance_scores", "pairwise_scores", "finite_fraction",
    "stable_argsort", "ordinal_rank", "edge_weight", "rank_regularize",
    "eligible_set", "select_batch", "select_random", "acquisition_step", "committee_step", "step_constants",
    "rmsle_coverage", "coverage_q",
    "module_bootstrap_interval", "module_resample_means", "leave_one_out_range", "sign_flip_pvalue", "SIGN_FLIP_MAX_M",
    "best_pairs",
    "maximin_pick", "relative_disagreement", "relative_residual_rms",
    "simulate_trajectories", "N_STEPS", "TRAJECTORY_SYSTEMS",
    "gp_fit", "gp_log_likelihood", "gp_posterior", "gp_select",
    "mi_select", "mutual_information", "point_distances",
    "COMPILE_WAIT_EVENT",
]  # fmt: skip

from kernels._once import guard_package as _guard_package  # noqa: E402 - after every kernel is defined

_guard_package()  # each kernel compiles once across the processes of a run (kernels/_once.py)

#: The Numba event a process emits while it waits for another process's compile (kernels/_once.py).
from kernels._once import WAIT_EVENT as COMPILE_WAIT_EVENT  # noqa: E402
