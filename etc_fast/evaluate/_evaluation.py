"""Score one submission on a task's evaluation grid: sandboxed replay, RMSLE and the coverage audit."""

from __future__ import annotations

import dataclasses
import hashlib
import math
from typing import TypedDict

import numpy as np

import kernels
from etc_fast.sampling import array_sha256, evaluation_grid, rounded_sha256
from etc_fast.sandbox import LAYERS, SandboxLimits, call_law
from etc_fast.tasks import Task

__all__ = ["TAUS", "Evaluation", "IntegrityError", "evaluate_submission", "median_relative_error"]

#: Coverage thresholds of ``Evaluation.q``.
TAUS: tuple[float, ...] = (0.01, 0.1, 1.0)


class IntegrityError(RuntimeError):
    """The evaluation grid or the target changed while a submission ran."""


def median_relative_error(y_true, y_pred) -> float:
    """The scale-free error beside RMSLE: the median over the grid of ``|pred - true| / |true|``.

    Only cells where the target is finite and non-zero and the prediction is finite count (the
    coverage audit reports the others). A prediction right everywhere gives 0; one off by a factor
    of two gives 0.5 (too small) or 1 (too large), whatever the outputs' magnitude: RMSLE, a
    difference of ``log(1 + |y|)``, cannot see such errors when the outputs are much smaller than 1.

    Returns:
        The median, or NaN when no cell counts.

    Raises:
        ValueError: the shapes differ.
    """
    t = np.asarray(y_true, dtype=np.float64).ravel()
    p = np.asarray(y_pred, dtype=np.float64).ravel()
    if t.shape != p.shape:
        raise ValueError(f"median_relative_error: y_true has {t.size} values but y_pred has {p.size}")
    keep = np.isfinite(t) & np.isfinite(p) & (t != 0.0)
    if not keep.any():
        return float("nan")
    with np.errstate(over="ignore"):
        ratio = np.abs(p[keep] - t[keep]) / np.abs(t[keep])
    return float(np.median(ratio))


def _tau_key(tau: float) -> str:
    return f"{tau:g}"


@dataclasses.dataclass(frozen=True)
class Evaluation:
    """Numerical evaluation of one submission (paper eq. 1, S5; NewtonBench semantics).

    Attributes:
        valid: The submission passed the signature check, ran, and returned numbers at every point.
        error: Why it is invalid, else ``None``.
        rmsle: NewtonBench RMSLE (NaN when invalid or when no pair is left; inf with a one-sided inf).
        n_points: Grid size.
        n_finite_target: Grid points with a finite target.
        n_finite_pred: Finite-target points with a finite prediction (0 when invalid).
        complete: Valid, finite-target set non-empty, and finite predictions on all of it.
        sign_disagreements: Finite pairs, both non-zero, with opposite signs.
        q: ``{"0.01": bool, "0.1": bool, "1": bool}``: complete and finite RMSLE at most tau.
        grid_sha256: Hash of the grid's exact bits (the grid is the same on every machine).
        truth_sha256: Hash of the target rounded to 9 significant digits (see
            :func:`etc_fast.sampling.rounded_sha256`); the exact bits may differ by an ulp between
            CPUs, so this fingerprint, not the bits, is what a run on another machine can match.
        predictions_sha256: The predictions' hash, rounded the same way; ``None`` when invalid.
        source_sha256: Hash of the submitted source text.
        wall_s: Seconds spent in the sandbox.
        sandbox_layers: Names of the sandbox isolation layers that were active for this run
            (``etc_fast.sandbox.LAYERS``; empty when the sandbox did not report them).
        median_rel_error: :func:`median_relative_error` of the predictions (NaN when invalid or
            when no finite, non-zero-target cell is left).
    """

    valid: bool
    error: str | None
    rmsle: float
    n_points: int
    n_finite_target: int
    n_finite_pred: int
    complete: bool
    sign_disagreements: int
    q: dict
    grid_sha256: str
    truth_sha256: str
    predictions_sha256: str | None
    source_sha256: str
    wall_s: float = 0.0
    sandbox_layers: tuple = ()
    median_rel_error: float = float("nan")

    @property
    def rmsle_finite(self) -> bool:
        return math.isfinite(self.rmsle)

    def to_dict(self) -> dict:
        """JSON-able dict; non-finite RMSLE becomes ``"nan"``/``"inf"`` (strict JSON)."""
        d = dataclasses.asdict(self)
        for key in ("rmsle", "median_rel_error"):
            r = d[key]
            d[key] = r if math.isfinite(r) else ("nan" if math.isnan(r) else ("inf" if r > 0 else "-inf"))
        d["q"] = dict(self.q)
        d["sandbox_layers"] = list(self.sandbox_layers)
        return d


class _Common(TypedDict):
    """The :class:`Evaluation` fields a valid and an invalid submission's result share."""

    n_points: int
    grid_sha256: str
    truth_sha256: str
    source_sha256: str
    wall_s: float
    sandbox_layers: tuple


def _q(complete: bool, rmsle: float) -> dict:
    flags = kernels.coverage_q(complete, rmsle, TAUS)
    return {_tau_key(t): bool(f) for t, f in zip(TAUS, flags)}


def evaluate_submission(source: str, task: Task, *, grid=None, limits: SandboxLimits | None = None) -> Evaluation:
    """Replay ``source`` on ``task``'s evaluation grid in the sandbox and score it.

    Args:
        source: Submitted ``discovered_law`` code.
        task: The task (its noise-free truth is the target).
        grid: float64[n, d] inputs; defaults to :func:`etc_fast.sampling.evaluation_grid`.
        limits: Sandbox limits.

    Returns:
        :class:`Evaluation`; an invalid submission gets ``valid=False`` with the reason, never an exception.

    Raises:
        IntegrityError: the grid or the target changed during the run (never caused by a submission,
            which only sees a copy).
        TypeError: ``source`` is not a string.
        ValueError: a malformed grid.
    """
    if not isinstance(source, str):
        raise TypeError(f"evaluate_submission: source must be a string, got {type(source).__name__}")
    X = evaluation_grid(task) if grid is None else np.ascontiguousarray(np.asarray(grid, dtype=np.float64))
    if X.ndim != 2 or X.shape[1] != task.d:
        raise ValueError(f"evaluate_submission: grid must have shape (n, {task.d}) for task {task.key}, got {X.shape}")
    y_true = task.truth(X)
    grid_hash, truth_hash = array_sha256(X), array_sha256(y_true)
    # reuse: a replay is a function of the source and the grid (docs/guide/sandbox.md, "Jobs met again")
    call = call_law(source, X.copy(), arg_names=task.variable_names, limits=limits, reuse=True)
    if array_sha256(X) != grid_hash or array_sha256(y_true) != truth_hash:
        raise IntegrityError(f"evaluation data of task {task.key} changed while a submission ran")
    if array_sha256(task.truth(X)) != truth_hash:
        raise IntegrityError(f"the target of task {task.key} is not reproducible")
    common = _Common(
        n_points=int(X.shape[0]), grid_sha256=grid_hash, truth_sha256=rounded_sha256(y_true),
        source_sha256=hashlib.sha256(source.encode("utf-8", "surrogatepass")).hexdigest(), wall_s=call.wall_s,
        sandbox_layers=tuple(n for n in LAYERS if call.layers.get(n)),
    )
    if not call.ok:
        return Evaluation(
            valid=False, error=call.error, rmsle=float("nan"), n_finite_target=int(np.isfinite(y_true).sum()),
            n_finite_pred=0, complete=False, sign_disagreements=0, q=_q(False, float("nan")), predictions_sha256=None,
            **common,
        )
    rmsle, n_ft, n_fp, complete, n_sign = kernels.rmsle_coverage(y_true, call.values)
    return Evaluation(
        valid=True, error=None, rmsle=rmsle, n_finite_target=n_ft, n_finite_pred=n_fp, complete=complete,
        sign_disagreements=n_sign, q=_q(complete, rmsle), predictions_sha256=rounded_sha256(call.values),
        median_rel_error=median_relative_error(y_true, call.values), **common,
    )
