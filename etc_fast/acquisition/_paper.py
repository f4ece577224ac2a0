"""One planner step: choose the next batch of pool points to measure (DESIGN "Planner step" 1-7).

Scored methods (``variance``, ``pairwise``):

1. parse the committee's hypotheses and evaluate the parseable ones on the observations and on the
   available (unused) pool points;
2. calibrate each hypothesis affinely to the observations (:func:`kernels.calibrate`);
3. keep the hypotheses that fit (:func:`kernels.fit_filter`), or the whole committee as a fallback;
4. score every available pool point by committee disagreement (eq. S2 or S3);
5. regularize the scores by rank, boundary distance and finite fraction (eq. S4);
6. pick a diverse batch among the top quarter.

Steps 1-6 run as two compiled calls around one NumPy sort (:meth:`Committee.step`, on
:func:`kernels.step._committee_run`), which evaluate only the kept hypotheses on the pool. ``random`` skips 1-6 and draws available pool
points uniformly without replacement from ``seed`` (:func:`kernels.select_random`).
:func:`plan_step_arrays` is steps 2-6 on hypothesis values that are already evaluated
(:func:`kernels.acquisition_step`); :class:`Committee` packs parsed programs once for repeated steps.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
from numba import config as _numba_config

from kernels._checks import as_float_array
from kernels._checks import check_k as _check_k
from kernels.programs import _evaluate_programs, check_programs
from kernels.rank_reg import EDGE_LO
from kernels.select import select_random
from kernels.step import (
    DEFAULT_CONSTANTS,
    _check_edge,
    _committee_run,
    _raise_bad_unit,
    acquisition_step,
    step_constants,
)
from kernels.step import METHODS as _METHOD_CODES

__all__ = ["StepResult", "Committee", "plan_step", "plan_step_arrays", "METHODS", "PredictionCheck", "check_prediction",
           "prediction_error", "relative_scale", "fitted_constants", "law_noise"]

METHODS = ("variance", "pairwise", "random")
"""Acquisition methods a planner step accepts."""

_JIT_OFF = _numba_config.DISABLE_JIT  # type: ignore[attr-defined]  # numba.config sets its options at import; the stubs omit them
_EMPTY_I = np.zeros(0, dtype=np.int64)
_EMPTY_F = np.zeros(0, dtype=np.float64)


@dataclasses.dataclass(slots=True)
class StepResult:
    """Everything one planner step computed.

    Per-hypothesis arrays have one entry per *scored row*: the parseable hypotheses, in committee
    order (``rows[r]`` is the committee position of row ``r``). Per-point arrays have one entry per
    available pool point (``pool_indices[c]`` is the pool index of column ``c``).

    Attributes:
        method: ``variance``, ``pairwise`` or ``random``.
        k: Requested batch size.
        seed: Seed of the step (used by ``random`` only).
        indices: int64[k'] chosen pool indices in pick order (k' <= min(k, #available)).
        error: None, or why no scored selection was possible.
        fallback_used: The fit filter kept the whole committee (fewer than 2 valid fits).
        hypotheses: The committee texts as given.
        parsed: Canonical text of each parsed hypothesis, None where parsing failed.
        parse_errors: Parse error of each hypothesis (message and position), None where it parsed.
        rows: int64[n_rows] committee position of each scored row.
        fit: float64[6, n_rows] the calibration of each row: ``a`` (scale, 1 where the fit is
            invalid), ``b`` (offset), ``fit_error`` (RMS residual / median |y|, NaN where invalid),
            ``n_pairs`` (finite observation pairs used), ``fit_ok`` (valid fit, 1/0) and ``keep``
            (kept by the fit filter, 1/0); read them through the properties of those names.
        pool_indices: int64[n_avail] pool index of each available point.
        scores: float64[3, n_avail] rows ``raw_scores`` (eq. S2/S3, NaN where not scored),
            ``finite_fraction`` (of the kept predictions) and ``regularized`` (eq. S4).
        eligible: int64[m] pool indices of the eligible points (ascending).
        chosen_u: float64[k', d] unit coordinates of the chosen points.
    """

    method: str
    k: int
    seed: int | None
    indices: np.ndarray
    error: str | None = None
    fallback_used: bool = False
    hypotheses: tuple[str, ...] = ()
    parsed: tuple[str | None, ...] = ()
    parse_errors: tuple[str | None, ...] = ()
    rows: np.ndarray = dataclasses.field(default_factory=lambda: _EMPTY_I)
    fit: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((6, 0)))
    pool_indices: np.ndarray = dataclasses.field(default_factory=lambda: _EMPTY_I)
    scores: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((3, 0)))
    eligible: np.ndarray = dataclasses.field(default_factory=lambda: _EMPTY_I)
    chosen_u: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))

    @property
    def a(self) -> np.ndarray:
        """float64[n_rows] calibration scale (row 0 of ``fit``)."""
        return self.fit[0]

    @property
    def b(self) -> np.ndarray:
        """float64[n_rows] calibration offset (row 1 of ``fit``)."""
        return self.fit[1]

    @property
    def fit_error(self) -> np.ndarray:
        """float64[n_rows] RMS residual / median |y|, NaN where the fit is invalid (row 2 of ``fit``)."""
        return self.fit[2]

    @property
    def n_pairs(self) -> np.ndarray:
        """int64[n_rows] finite observation pairs used by the fit (row 3 of ``fit``)."""
        return self.fit[3].astype(np.int64)

    @property
    def fit_ok(self) -> np.ndarray:
        """bool[n_rows] valid fit (row 4 of ``fit``)."""
        return self.fit[4] != 0.0

    @property
    def keep(self) -> np.ndarray:
        """bool[n_rows] kept by the fit filter (row 5 of ``fit``)."""
        return self.fit[5] != 0.0

    @property
    def raw_scores(self) -> np.ndarray:
        """float64[n_avail] raw score (eq. S2/S3), NaN where not scored (row 0 of ``scores``)."""
        return self.scores[0]

    @property
    def finite_fraction(self) -> np.ndarray:
        """float64[n_avail] fraction of finite kept predictions (row 1 of ``scores``)."""
        return self.scores[1]

    @property
    def regularized(self) -> np.ndarray:
        """float64[n_avail] regularized score, eq. S4 (row 2 of ``scores``)."""
        return self.scores[2]

    @property
    def kept(self) -> np.ndarray:
        """int64 committee positions of the hypotheses kept by the fit filter."""
        return self.rows[self.keep] if self.keep.size else _EMPTY_I

    def to_record(self) -> dict[str, Any]:
        """Compact JSON-able summary: per-hypothesis fits, chosen points with scores, score summaries."""
        row_of = {int(p): r for r, p in enumerate(self.rows.tolist())}
        n_hyp = max(len(self.hypotheses), len(self.rows))
        hyps = []
        for h in range(n_hyp):
            item: dict[str, Any] = {"position": h}
            if h < len(self.hypotheses):
                item["text"] = self.hypotheses[h]
            if h < len(self.parsed):
                item["parsed"] = self.parsed[h]
                item["parse_error"] = self.parse_errors[h]
            r = row_of.get(h)
            if r is not None and r < self.a.size:
                item.update(
                    a=_num(self.a[r]), b=_num(self.b[r]), n_pairs=int(self.n_pairs[r]),
                    fit_ok=bool(self.fit_ok[r]), fit_error=_num(self.fit_error[r]), kept=bool(self.keep[r]),
                )  # fmt: skip
            hyps.append(item)
        col_of = _column_lookup(self.pool_indices, self.indices)
        chosen = []
        for t, p in enumerate(self.indices.tolist()):
            c = col_of[t]
            entry: dict[str, Any] = {"index": int(p)}
            if c >= 0 and self.raw_scores.size:
                entry.update(
                    raw=_num(self.raw_scores[c]), regularized=_num(self.regularized[c]),
                    finite_fraction=_num(self.finite_fraction[c]),
                )  # fmt: skip
            if t < self.chosen_u.shape[0]:
                entry["u"] = [_num(x) for x in self.chosen_u[t]]
            chosen.append(entry)
        return {
            "method": self.method,
            "k": int(self.k),
            "seed": None if self.seed is None else int(self.seed),
            "error": self.error,
            "fallback_used": bool(self.fallback_used),
            "n_available": int(self.pool_indices.size),
            "hypotheses": hyps,
            "kept": [int(x) for x in self.kept],
            "chosen": chosen,
            "n_eligible": int(self.eligible.size),
            "raw_scores": _summary(self.raw_scores),
            "regularized": _summary(self.regularized),
        }


def _num(x) -> float | None:
    """A float for JSON: None where not finite."""
    x = float(x)
    return x if np.isfinite(x) else None


def _summary(a: np.ndarray) -> dict[str, Any]:
    fin = a[np.isfinite(a)] if a.size else a
    if fin.size == 0:
        return {"n": int(a.size), "n_finite": 0}
    q = np.percentile(fin, [0, 25, 50, 75, 100])
    return {
        "n": int(a.size), "n_finite": int(fin.size), "mean": float(fin.mean()),
        "min": float(q[0]), "q25": float(q[1]), "median": float(q[2]), "q75": float(q[3]), "max": float(q[4]),
    }  # fmt: skip


def _column_lookup(pool_indices: np.ndarray, indices: np.ndarray) -> list[int]:
    """Column of each chosen pool index within ``pool_indices`` (-1 if absent)."""
    if pool_indices.size == 0:
        return [-1] * indices.size
    pos = np.searchsorted(pool_indices, indices)
    pos = np.minimum(pos, pool_indices.size - 1)
    return [int(c) if pool_indices[c] == p else -1 for c, p in zip(pos.tolist(), indices.tolist())]


# ------------------------------------------------------------------------------------------------
# Evaluation of parsed hypotheses
# ------------------------------------------------------------------------------------------------


class Committee:
    """Parsed programs packed and validated once, evaluated many times by :mod:`kernels.programs`.

    Args:
        programs: ``etc_fast.expr.Program`` objects over the same variables.
    """

    __slots__ = ("programs", "n_vars", "_packed", "_depth", "_n_prog", "_rows")

    def __init__(self, programs: Sequence[Any]):
        from etc_fast.expr import pack

        self.programs = tuple(programs)
        if not self.programs:
            raise ValueError("a committee needs at least one program")
        variables = self.programs[0].variables
        for i, p in enumerate(self.programs):
            if p.variables != variables:
                raise ValueError(f"program {i} is over variables {p.variables}, program 0 over {variables}")
        self.n_vars = len(variables)
        packed = pack(self.programs)
        self._depth = check_programs(*packed, self.n_vars)
        self._packed = tuple(np.ascontiguousarray(a) for a in packed)
        self._n_prog = len(self.programs)
        self._rows = np.arange(self._n_prog, dtype=np.int64)
        self._rows.flags.writeable = False

    def evaluate(self, X, out: np.ndarray | None = None) -> np.ndarray:
        """Values of every program at points ``X`` (float64[n, d]): float64[n_prog, n] (NaN = undefined)."""
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.n_vars:
            raise ValueError(f"X must have shape [n, {self.n_vars}] (one column per variable), got {X.shape}")
        return self.evaluate_transposed(np.ascontiguousarray(X.T), out)

    def step(
        self,
        XT_obs: np.ndarray,
        y_obs: np.ndarray,
        XT_pool: np.ndarray,
        U_pool: np.ndarray,
        method: str,
        k: int,
        *,
        seed: int | None = None,
        pool_indices: np.ndarray | None = None,
        constants: np.ndarray | None = None,
        edge: np.ndarray | None = None,
    ) -> StepResult:
        """Planner step 1-6 for this committee (``variance`` or ``pairwise``), compiled.

        Evaluates every program on the observations, calibrates and filters them, evaluates only
        the kept ones on the pool, scores, regularizes and selects (:func:`kernels.step._committee_run`).

        Args:
            XT_obs: float64[d, n_obs] observed inputs, one row per variable.
            y_obs: float64[n_obs] observed outputs.
            XT_pool: float64[d, n_avail] available pool points, one row per variable.
            U_pool: float64[n_avail, d] their unit coordinates, in [0, 1].
            method: ``variance`` or ``pairwise``.
            k: Batch size.
            seed: Recorded in the result.
            pool_indices: int64[n_avail] pool index of each column (default ``0 .. n_avail - 1``).
            constants: Vector from :func:`kernels.step_constants` (default: the paper's constants).
            edge: float64[n_avail] boundary weights of the available points,
                ``kernels.edge_weight(U_pool)`` with the edge constants of ``constants``. They depend
                only on the pool, so a trial can compute them once for its whole pool and pass the
                available ones each step (default: computed in the call).

        Returns:
            The :class:`StepResult`; its rows are the committee's programs in order.
        """
        code = _METHOD_CODES.get(method)
        if code is None:
            raise ValueError(f"Committee.step scores with 'variance' or 'pairwise', got {method!r}")
        if type(k) is not int or k < 0:
            k = _check_k(k)
        XT_obs = _f64(XT_obs)
        y = _f64(y_obs)
        XT_pool = _f64(XT_pool)
        U = _f64(U_pool)
        d = self.n_vars
        so, sy, sp, su = XT_obs.shape, y.shape, XT_pool.shape, U.shape
        if len(so) != 2 or so[0] != d or len(sy) != 1 or sy[0] != so[1]:
            raise ValueError(f"XT_obs must be [{d}, n_obs] and y_obs [n_obs]; got {so} and {sy}")
        if len(sp) != 2 or sp[0] != d:
            raise ValueError(f"XT_pool must be [{d}, n_avail] (one row per variable), got {sp}")
        n_avail = sp[1]
        if len(su) != 2 or su[0] != n_avail or su[1] < 1:
            raise ValueError(f"U_pool must be [{n_avail}, d] (one row per pool point), got {su}")
        cols = _pool_columns(pool_indices, n_avail)
        if constants is None:
            C = DEFAULT_CONSTANTS
        else:
            C = _f64(constants)
            if C.shape != DEFAULT_CONSTANTS.shape:
                raise ValueError(f"constants must come from kernels.step_constants(), got shape {C.shape}")
        if self._n_prog < 2:
            return StepResult(
                method, k, seed, _EMPTY_I, f"fewer than 2 hypotheses to score ({self._n_prog})",
                rows=np.arange(self._n_prog, dtype=np.int64), pool_indices=cols, chosen_u=U[:0],
            )  # fmt: skip
        W = _check_edge(edge, n_avail)
        if _JIT_OFF:
            with np.errstate(all="ignore"):
                out = _committee_run(*self._packed, self._depth, XT_obs, y, XT_pool, U, W, code, k, C)
        else:
            out = _committee_run(*self._packed, self._depth, XT_obs, y, XT_pool, U, W, code, k, C)
        fit, scores, elig, picks, chosen, fallback, bad = out
        if bad != -1:
            _raise_bad_unit(int(bad), U, W)
        error = None
        if picks.size == 0 and k > 0:
            error = "no available pool points" if n_avail == 0 else "no pool point received a finite score"
        identity = pool_indices is None
        return StepResult(
            method, k, seed, picks if identity else cols[picks], error, fallback, (), (), (), self._rows, fit, cols,
            scores, elig if identity else cols[elig], chosen,
        )  # fmt: skip

    def evaluate_transposed(self, XT: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Like :meth:`evaluate` on ``XT`` = float64[d, n] C-contiguous (one row per variable), unchecked."""
        if out is None:
            out = np.empty((len(self.programs), XT.shape[1]))
        if XT.shape[1]:
            with np.errstate(all="ignore"):  # only matters when the JIT is disabled
                _evaluate_programs(*self._packed, XT, self._depth, out)
        return out


# ------------------------------------------------------------------------------------------------
# The step
# ------------------------------------------------------------------------------------------------


_IDENTITY: dict[int, np.ndarray] = {}


def _identity(n: int) -> np.ndarray:
    """Read-only ``arange(n)`` (int64), cached: the pool index map when columns are pool indices."""
    a = _IDENTITY.get(n)
    if a is None:
        a = np.arange(n, dtype=np.int64)
        a.flags.writeable = False
        if len(_IDENTITY) < 64:
            _IDENTITY[n] = a
    return a


def _pool_columns(pool_indices, n_avail: int) -> np.ndarray:
    """The pool index of each available column as int64[n_avail] (identity when ``pool_indices`` is None)."""
    if pool_indices is None:
        return _identity(n_avail)
    cols = np.asarray(pool_indices)
    if cols.shape != (n_avail,) or cols.dtype.kind not in "iu":
        raise ValueError(f"pool_indices must be an integer array of shape ({n_avail},), got {cols.dtype} {cols.shape}")
    return cols.astype(np.int64, copy=False)


def _check_method_k(method: str, k) -> int:
    if method not in METHODS:
        raise ValueError(f"method must be one of {METHODS}, got {method!r}")
    return _check_k(k)


_F64 = np.dtype(np.float64)


def _f64(x) -> np.ndarray:
    """``x`` as a C-contiguous float64 array (no copy when it already is one)."""
    if type(x) is np.ndarray and x.dtype is _F64 and x.flags.c_contiguous:
        return x
    a = np.asarray(x)
    if a.dtype.kind not in "fiu":
        raise TypeError(f"expected real numbers, got dtype {a.dtype}")
    return np.ascontiguousarray(a, dtype=np.float64)


def _float_array(x, name: str, ndim: int) -> np.ndarray:
    return as_float_array(x, name, ndim, kinds="fiu")


def plan_step_arrays(
    H_obs,
    y_obs,
    H_pool,
    U_pool,
    method: str,
    k: int,
    *,
    seed: int | None = None,
    pool_indices=None,
    **constants: Any,
) -> StepResult:
    """Planner step 2-7 on hypothesis values already evaluated.

    Args:
        H_obs: float64[n_hyp, n_obs] hypothesis values at the observed inputs.
        y_obs: float64[n_obs] observed outputs.
        H_pool: float64[n_hyp, n_avail] hypothesis values at the available pool points.
        U_pool: float64[n_avail, d] unit coordinates of the available pool points, in [0, 1].
        method: ``variance``, ``pairwise`` or ``random``.
        k: Batch size.
        seed: Seed for ``random`` (required there; recorded otherwise).
        pool_indices: int64[n_avail] pool index of each column (default ``0 .. n_avail - 1``).
        **constants: Overrides of the paper constants, passed to :func:`kernels.acquisition_step`
            (``max_keep``, ``threshold``, ``min_keep``, ``edge_lo``, ``edge_hi``, ``power``,
            ``top_fraction``, ``w_score``, ``w_div``).

    Returns:
        The :class:`StepResult`; ``indices`` are pool indices (through ``pool_indices``).
    """
    k = _check_method_k(method, k)
    U = _float_array(U_pool, "U_pool", 2)
    n_avail = U.shape[0]
    identity = pool_indices is None
    cols = _pool_columns(pool_indices, n_avail)
    if method == "random":
        if seed is None:
            raise ValueError("method 'random' needs a seed")
        picks = select_random(np.ones(n_avail, dtype=bool), k, seed=seed)
        err = None if (picks.size or k == 0) else "no available pool points"
        return StepResult(method, k, seed, cols[picks], err, pool_indices=cols, chosen_u=U[picks])
    H_obs = _float_array(H_obs, "H_obs", 2)
    y = _float_array(y_obs, "y_obs", 1)
    H_pool = _float_array(H_pool, "H_pool", 2)
    n_hyp = H_obs.shape[0]
    if H_obs.shape[1] != y.shape[0]:
        raise ValueError(f"H_obs has {H_obs.shape[1]} observation columns but y_obs has {y.shape[0]} values")
    if H_pool.shape != (n_hyp, n_avail):
        raise ValueError(f"H_pool must have shape ({n_hyp}, {n_avail}) (hypotheses x available points), got {H_pool.shape}")
    rows = np.arange(n_hyp, dtype=np.int64)
    if n_hyp < 2:
        return StepResult(
            method, k, seed, _EMPTY_I, f"fewer than 2 hypotheses to score ({n_hyp})", rows=rows, pool_indices=cols,
            chosen_u=U[:0],
        )  # fmt: skip
    a, b, n_pairs, ok, err, keep, fallback, raw, v, reg, elig, picks = acquisition_step(H_obs, y, H_pool, U, method, k, **constants)
    error = None
    if picks.size == 0 and k > 0:
        error = "no available pool points" if n_avail == 0 else "no pool point received a finite score"
    return StepResult(
        method, k, seed, picks if identity else cols[picks], error, bool(fallback), rows=rows,
        fit=np.stack([a, b, err, n_pairs, ok, keep]).astype(np.float64), pool_indices=cols, scores=np.stack([raw, v, reg]),
        eligible=elig if identity else cols[elig], chosen_u=U[picks],
    )  # fmt: skip


def plan_step(
    hypotheses: Sequence[str],
    variables: Sequence[str],
    X_obs,
    y_obs,
    pool_X,
    pool_U,
    available,
    *,
    method: str,
    k: int,
    seed: int,
    **constants: Any,
) -> StepResult:
    """One planner step (DESIGN "Planner step" 1-7).

    Args:
        hypotheses: Committee texts (expressions or ``discovered_law`` sources).
        variables: Task variable names, in signature order (the columns of ``X_obs``/``pool_X``).
        X_obs: float64[n_obs, d] observed inputs.
        y_obs: float64[n_obs] observed outputs (NaN allowed; such rows are ignored by calibration).
        pool_X: float64[n_pool, d] candidate pool in task coordinates.
        pool_U: float64[n_pool, d] the pool's unit coordinates, in [0, 1].
        available: bool[n_pool] unused pool points.
        method: ``variance``, ``pairwise`` or ``random``.
        k: Batch size.
        seed: Seed of the step (``random`` draws from it).
        **constants: Overrides of the paper constants (see :func:`plan_step_arrays`).

    Returns:
        The :class:`StepResult`. Unparseable hypotheses are recorded, not raised; a scored step with
        fewer than 2 parseable hypotheses selects nothing and says so in ``error``.

    Raises:
        ValueError / TypeError: on malformed arrays, method or k.
    """
    from etc_fast.expr import ExprError, parse

    k = _check_method_k(method, k)
    variables = tuple(variables)
    d = len(variables)
    X_obs = _float_array(X_obs, "X_obs", 2)
    y = _float_array(y_obs, "y_obs", 1)
    pool_X = _float_array(pool_X, "pool_X", 2)
    pool_U = _float_array(pool_U, "pool_U", 2)
    mask = np.asarray(available)
    if X_obs.shape[1] != d:
        raise ValueError(f"X_obs must have {d} columns (one per variable {variables}), got shape {X_obs.shape}")
    if X_obs.shape[0] != y.shape[0]:
        raise ValueError(f"X_obs has {X_obs.shape[0]} rows but y_obs has {y.shape[0]} values")
    if pool_X.shape[1] != d or pool_U.shape != pool_X.shape:
        raise ValueError(f"pool_X and pool_U must both have shape [n_pool, {d}], got {pool_X.shape} and {pool_U.shape}")
    if mask.dtype != np.bool_ or mask.shape != (pool_X.shape[0],):
        raise ValueError(f"available must be a boolean mask of shape ({pool_X.shape[0]},), got {mask.dtype} {mask.shape}")
    if isinstance(hypotheses, str):
        raise TypeError("hypotheses must be a sequence of strings, not one string")
    texts = tuple(hypotheses)
    parsed: list[str | None] = []
    errors: list[str | None] = []
    programs = []
    rows = []
    for h, text in enumerate(texts):
        if not isinstance(text, str):
            parsed.append(None)
            errors.append(f"hypothesis must be a string, got {type(text).__name__}")
            continue
        try:
            prog = parse(text, variables)
        except ExprError as exc:
            parsed.append(None)
            errors.append(exc.message + (f" ({exc.position})" if exc.position else ""))
            continue
        parsed.append(prog.text)
        errors.append(None)
        programs.append(prog)
        rows.append(h)
    cols = np.flatnonzero(mask).astype(np.int64)
    U = pool_U[cols]
    if method != "random" and len(programs) >= 2:
        C = step_constants(**constants) if constants else None
        res = Committee(programs).step(
            np.ascontiguousarray(X_obs.T), y, np.ascontiguousarray(pool_X[cols].T), U, method, k, seed=seed,
            pool_indices=cols, constants=C,
        )  # fmt: skip
    else:
        H_obs = np.zeros((len(programs), X_obs.shape[0]))
        H_pool = np.zeros((len(programs), cols.size))
        res = plan_step_arrays(H_obs, y, H_pool, U, method, k, seed=seed, pool_indices=cols, **constants)
    res.hypotheses = tuple(t if isinstance(t, str) else repr(t) for t in texts)
    res.parsed = tuple(parsed)
    res.parse_errors = tuple(errors)
    if method != "random":
        res.rows = np.asarray(rows, dtype=np.int64)
        if len(programs) < 2:
            res.error = f"fewer than 2 parseable hypotheses ({len(programs)} of {len(texts)})"
    return res


# ------------------------------------------------------------------------------------------------
# The noise-aware step (docs/noise.md)
# ------------------------------------------------------------------------------------------------

#: A point's relative disagreement must exceed this many estimated noise levels to drive scored
#: selection (docs/noise.md: how it was chosen).
KAPPA_DISAGREE = 2.0
#: A hypothesis is consistent with the observations when its relative residual RMS is at most
#: this many estimated noise levels.
KAPPA_FIT = 3.0
#: Smallest noise level the planner estimates (relative).
NOISE_FLOOR = 1e-6
#: Exploration stays this far (unit coordinates) inside the domain's edges, where the paper's
#: boundary ramp (eq. S4, ``edge_lo``) also gives scored points no weight: the corners of a log
#: domain are where laws are most extreme (overflow, singular angles) and least typical.
EXPLORE_MARGIN = EDGE_LO
#: Replicate pairs needed before the replicate estimate replaces the residual estimate.
MIN_REPLICATE_PAIRS = 2


@dataclasses.dataclass(frozen=True)
class NoiseOptions:
    """The noise knobs of a planner (``acquisition: {noise_aware, explore_fraction, replicates}``).

    Attributes:
        noise_aware: Estimate the noise level and judge fits and disagreement against it.
        explore_fraction: Share of each batch chosen by maximin distance to the observations.
        replicates: Most re-measurements of observed points per batch.
        stop_when_settled: With ``noise_aware``: once the best consistent law predicted the last
            batch (before it was measured) to within ``KAPPA_FIT`` noise levels, scored slots that
            find nothing to tell apart are dropped instead of explored (the batch shrinks; see
            :func:`plan_noisy_step`).
        test_extremes: In a noisy lab, the first exploration slot of a batch goes to the pool point
            where the best consistent law's calibrated prediction lies farthest outside the measured
            outputs (:func:`extreme_pick`; the whole domain, no margin), when one predicts beyond
            them by more than ``KAPPA_DISAGREE`` noise levels.
    """

    noise_aware: bool = False
    explore_fraction: float = 0.0
    replicates: int = 0
    stop_when_settled: bool = False
    test_extremes: bool = False


@dataclasses.dataclass(frozen=True)
class NoiseEstimate:
    """The planner's estimate of the relative noise level.

    Attributes:
        sigma: Estimated relative noise (standard deviation of ``y_measured / y_true - 1``).
        basis: ``replicates`` or ``residuals`` (the best-fitting hypothesis), or ``none``.
        n: Replicate pairs or observations it rests on.
        hypothesis: Committee position of the best-fitting hypothesis (residual basis), else -1.
    """

    sigma: float | None
    basis: str
    n: int
    hypothesis: int = -1

    def describe(self) -> str:
        if self.sigma is None:
            return "no noise estimate yet (no hypothesis fits the observations)"
        pct = f"{100 * self.sigma:.3g}%"
        if self.basis == "residuals" and self.sigma > 0.5:
            return (f"unknown: no hypothesis fits the {self.n} observations to within 50% (best relative residual "
                    f"{pct}); the planner explores instead of trusting the hypotheses' disagreement")
        if self.basis == "replicates":
            return f"about {pct} relative (from {self.n} pairs of repeated measurements)"
        return (f"about {pct} relative (upper estimate from the residuals of the best-fitting hypothesis on "
                f"{self.n} observations; lower if that hypothesis is incomplete)")


def replicate_noise(X_obs, y_obs) -> tuple[float | None, int]:
    """Relative noise from repeated measurements: rows of ``X_obs`` that are equal.

    Each group of ``m >= 2`` finite, nonzero outputs at one input contributes ``m - 1`` degrees of
    freedom of the relative deviations from its mean. Returns ``(sigma, pairs)``; sigma is None
    without a repeated point.
    """
    X = np.asarray(X_obs, dtype=np.float64)
    y = np.asarray(y_obs, dtype=np.float64)
    if X.shape[0] < 2:
        return None, 0
    _, inv, counts = np.unique(X, axis=0, return_inverse=True, return_counts=True)
    inv = inv.reshape(-1)
    ss = 0.0
    dof = 0
    for g in np.flatnonzero(counts >= 2):
        v = y[inv == g]
        v = v[np.isfinite(v) & (v != 0)]
        if v.size < 2:
            continue
        mu = v.mean()
        if mu == 0:
            continue
        r = (v - mu) / abs(mu)
        ss += float(r @ r)
        dof += v.size - 1
    if dof == 0:
        return None, 0
    return float(np.sqrt(ss / dof)), dof


def estimate_noise(rel_rms: np.ndarray, counts: np.ndarray, X_obs, y_obs, n_params: int = 2) -> NoiseEstimate:
    """The planner's noise estimate from replicates, else from the committee's residuals.

    Args:
        rel_rms: float64[n_hyp] relative residual RMS of each calibrated hypothesis (NaN: no fit).
        counts: int64[n_hyp] observations behind each.
        X_obs, y_obs: The observations (for replicates).
        n_params: Parameters fitted per hypothesis by the calibration (``a``, ``b``): the residual
            RMS is scaled by ``sqrt(n / (n - n_params))``.
    """
    sig, pairs = replicate_noise(X_obs, y_obs)
    if sig is not None and pairs >= MIN_REPLICATE_PAIRS:
        return NoiseEstimate(max(sig, NOISE_FLOOR), "replicates", pairs)
    best, best_h, best_n = None, -1, 0
    for h in range(rel_rms.size):
        e, c = float(rel_rms[h]), int(counts[h])
        if not np.isfinite(e) or c <= n_params:
            continue
        s = e * float(np.sqrt(c / (c - n_params)))
        if best is None or s < best:
            best, best_h, best_n = s, h, c
    if best is None:
        if sig is not None:
            return NoiseEstimate(max(sig, NOISE_FLOOR), "replicates", pairs)
        return NoiseEstimate(None, "none", 0)
    if sig is not None:  # one replicate pair: the residual estimate bounded by it from above is not safe; average
        best = float(np.sqrt((best * best + sig * sig) / 2.0))
        return NoiseEstimate(max(best, NOISE_FLOOR), "residuals", best_n, best_h)
    return NoiseEstimate(max(best, NOISE_FLOOR), "residuals", best_n, best_h)


@dataclasses.dataclass(slots=True)
class NoisyStepResult:
    """One noise-aware planner step: scored picks, exploration picks and replicates.

    Attributes:
        method: ``variance``, ``pairwise`` or ``random``.
        k: Batch size (pool points and replicates together).
        seed: Seed of the step.
        indices: int64 pool indices to measure, in pick order (scored first, then exploration).
        explored: int64 the pool indices among ``indices`` chosen by exploration.
        replicate_rows: int64 observation rows to measure again.
        noise: The :class:`NoiseEstimate`.
        kept: Committee positions judged consistent with the noise (or the two best fits).
        n_consistent: How many fitted to the noise level.
        n_informative: Available pool points where the kept hypotheses disagree by more than
            ``KAPPA_DISAGREE`` noise levels.
        scored: The paper's step on the informative points (None when none was run).
        error: None, or why nothing could be selected.
        fallback_used: As in :class:`StepResult`.
        chosen_u: float64[len(indices), d] unit coordinates of the picks.
        notes: Plain-language account of the step (shown to the policy).
        explored_X: float64[len(explored), d] task inputs of the exploration picks.
        prior: The :class:`PredictionCheck` of the previous batch this step was given (None: none).
        settled: The stopping rule held: the previous batch was predicted to within the noise
            and the scored slots found nothing left to tell apart.
        n_dropped: Batch slots left unmeasured by the stopping rule.
        best: Text of the best consistent hypothesis (committee order), None without a fit.
        best_ab: Its calibration for the prediction check: ``(a, 0)`` with ``a`` the relative
            least-squares scale on the observations of this step (:func:`relative_scale`).
        best_noise: The noise its residuals imply (:func:`law_noise`), None where undefined.
    """

    method: str
    k: int
    seed: int | None
    indices: np.ndarray
    explored: np.ndarray
    replicate_rows: np.ndarray
    noise: NoiseEstimate
    kept: tuple[int, ...] = ()
    n_consistent: int = 0
    n_informative: int = 0
    scored: StepResult | None = None
    error: str | None = None
    fallback_used: bool = False
    chosen_u: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))
    notes: tuple[str, ...] = ()
    explored_X: np.ndarray = dataclasses.field(default_factory=lambda: np.zeros((0, 0)))
    prior: PredictionCheck | None = None
    settled: bool = False
    n_dropped: int = 0
    best: str | None = None
    best_ab: tuple[float, float] = (1.0, 0.0)
    best_noise: float | None = None

    def to_record(self) -> dict[str, Any]:
        rec: dict[str, Any] = {
            "method": self.method, "k": int(self.k), "seed": None if self.seed is None else int(self.seed),
            "noise_aware": True, "error": self.error, "fallback_used": bool(self.fallback_used),
            "noise_estimate": {"sigma": self.noise.sigma, "basis": self.noise.basis, "n": self.noise.n,
                               "hypothesis": self.noise.hypothesis},
            "kept": list(self.kept), "n_consistent": self.n_consistent, "n_informative": self.n_informative,
            "chosen": [int(i) for i in self.indices], "explored": [int(i) for i in self.explored],
            "replicate_rows": [int(i) for i in self.replicate_rows],
            "chosen_u": [[_num(x) for x in row] for row in self.chosen_u], "notes": list(self.notes),
        }
        if self.prior is not None or self.settled or self.n_dropped:
            rec.update(prior_check=None if self.prior is None else dataclasses.asdict(self.prior),
                       settled=self.settled, n_dropped=self.n_dropped)
        if self.scored is not None:
            rec["scored"] = self.scored.to_record()
        return rec


@dataclasses.dataclass(frozen=True)
class PredictionCheck:
    """How a planner step's best law predicted the batch it chose, measured after the step.

    Attributes:
        hypothesis: The law's text as the committee gave it.
        error: Relative RMS error ``sqrt(mean(((a h - y) / |y|)^2))`` of its prediction on the new
            measurements (finite, nonzero ones), ``a`` its relative scale before the batch.
        sigma: The noise the prediction is judged against: the larger of the step's estimate
            and the noise the law's own residuals implied then (:func:`law_noise`).
        n: Measurements compared.
    """

    hypothesis: str
    error: float
    sigma: float
    n: int

    @property
    def passed(self) -> bool:
        """The law predicted the batch to within ``KAPPA_FIT`` times the noise it was fitted to."""
        return self.error <= KAPPA_FIT * max(self.sigma, NOISE_FLOOR)


def prediction_error(h_new, y_new, a: float, b: float) -> tuple[float, int] | None:
    """Relative RMS error of the calibrated prediction ``a h + b`` on new measurements.

    Args:
        h_new: float64[m] the hypothesis' values at the new inputs.
        y_new: float64[m] the new measurements.
        a, b: The calibration the step fitted on the observations before them.

    Returns:
        ``(error, n)`` over the finite, nonzero measurements with a finite prediction, or None
        when there is none.
    """
    h = np.asarray(h_new, dtype=np.float64).reshape(-1)
    y = np.asarray(y_new, dtype=np.float64).reshape(-1)
    if h.shape != y.shape:
        raise ValueError(f"prediction_error: h_new and y_new must have the same length, got {h.shape} and {y.shape}")
    with np.errstate(all="ignore"):
        r = (a * h + b - y) / np.abs(y)
    r = r[np.isfinite(r)]
    if r.size == 0:
        return None
    return float(np.sqrt(np.mean(r * r))), int(r.size)


def check_prediction(step: NoisyStepResult, variables: Sequence[str], X_new, y_new) -> PredictionCheck | None:
    """The :class:`PredictionCheck` of ``step``'s best law on the batch measured after it (None
    without a best law, a noise estimate, or a comparable measurement)."""
    from etc_fast.expr import ExprError, parse

    if step.best is None or not step.noise.sigma:
        return None
    sigma = max(float(step.noise.sigma), float(step.best_noise or 0.0))
    X = np.asarray(X_new, dtype=np.float64)
    if X.ndim != 2 or X.shape[0] == 0:
        return None
    try:
        prog = parse(step.best, tuple(variables))
    except ExprError:
        return None
    out = prediction_error(Committee([prog]).evaluate(X)[0], y_new, *step.best_ab)
    if out is None:
        return None
    return PredictionCheck(step.best, out[0], sigma, out[1])


def relative_scale(h, y) -> float:
    """The scale ``a`` minimizing ``sum(((a h - y) / y)^2)`` over finite, nonzero pairs (1 without any).

    The prediction check scales a law without an offset: the paper's affine calibration fits
    ``b`` in absolute terms, dominated by the largest outputs, and such an offset is a large
    relative error where outputs are small (laws span decades).
    """
    h = np.asarray(h, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        u = h / y
    ok = np.isfinite(u) & (y != 0)
    den = float(u[ok] @ u[ok]) if ok.any() else 0.0
    return float(u[ok].sum() / den) if den > 0 else 1.0


def fitted_constants(text: str) -> int:
    """Numbers in a law's text that are not simple (``p/q``, ``q <= 4``, ``|p/q| <= 10``): the
    constants the proposer fitted, which its residuals must be corrected for."""
    import re

    n = 0
    for tok in re.findall(r"(?<![A-Za-z_])\d+\.?\d*(?:[eE][-+]?\d+)?", text):
        v = float(tok)
        if not any(abs(v * q - round(v * q)) <= 1e-9 * max(1.0, v * q) and v <= 10 for q in (1, 2, 3, 4)):
            n += 1
    return n


def law_noise(h, y, a: float, n_fitted: int) -> float | None:
    """The relative noise a law's residuals imply: RMS of ``(a h - y) / y`` times
    ``sqrt(n / (n - 1 - n_fitted))`` (the scale and the law's own fitted constants); None when
    fewer than one degree of freedom is left."""
    h = np.asarray(h, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    with np.errstate(all="ignore"):
        r = (a * h - y) / np.abs(y)
    r = r[np.isfinite(r)]
    dof = r.size - 1 - int(n_fitted)
    if dof < 1:
        return None
    return float(np.sqrt(float(r @ r) / dof))


def extreme_pick(pred, y_obs, min_gap: float, available) -> int:
    """The candidate where a calibrated law's prediction lies farthest outside the measured outputs.

    The distance is in log output (relative noise) when the measured outputs and the prediction
    have one sign, else in units of the measured range. Returns the candidate's row, or -1 when no
    available candidate's prediction leaves the measured range by more than ``min_gap`` (relative).
    """
    p = np.asarray(pred, dtype=np.float64)
    y = np.asarray(y_obs, dtype=np.float64)
    y = y[np.isfinite(y)]
    ok = np.isfinite(p) & np.asarray(available, dtype=bool)
    if y.size < 2 or not ok.any():
        return -1
    lo, hi = float(y.min()), float(y.max())
    with np.errstate(all="ignore"):
        if lo > 0 or hi < 0:
            sgn = 1.0 if lo > 0 else -1.0
            ok &= p * sgn > 0
            lp = np.log(np.abs(p))
            llo, lhi = np.log(min(abs(lo), abs(hi))), np.log(max(abs(lo), abs(hi)))
            d = np.maximum(np.maximum(lp - lhi, llo - lp), 0.0)
            gap = np.log1p(min_gap)
        else:
            d = np.maximum(np.maximum(p - hi, lo - p), 0.0) / max(hi - lo, 1e-300)
            gap = min_gap
    d = np.where(ok, d, -1.0)
    j = int(np.argmax(d))
    return j if d[j] > gap else -1


def _batch_split(k: int, explore_fraction: float, replicates: int, n_obs: int) -> tuple[int, int, int]:
    """``(scored, explore, replicate)`` slots of a batch of ``k``."""
    n_rep = min(int(replicates), k, n_obs)
    n_exp = min(int(np.floor(explore_fraction * k + 0.5)), k - n_rep)
    if explore_fraction > 0 and n_exp == 0 and k - n_rep > 1:
        n_exp = 1
    return k - n_rep - n_exp, n_exp, n_rep


def _stop_slots(method: str, picks: list[int], n_score: int, n_exp: int, n_rep: int, n_consistent: int,
                prior: PredictionCheck, notes: list[str]) -> tuple[list[int], int, int]:
    """The stopping rule (rule 7 of :func:`plan_noisy_step`) once the previous batch was predicted:
    ``(picks, exploration slots, dropped slots)``, with a note for the policy when slots are dropped."""
    if method == "random":  # its scored share is uniform: dropped only when one law is left
        n_dropped, picks = (len(picks), []) if n_consistent < 2 else (0, picks)
    else:
        n_dropped = n_score - len(picks)
    if n_dropped and not picks and n_exp + n_rep == 0:
        n_dropped -= 1  # a batch is never empty: one slot explores
        n_exp += 1
    if n_dropped:
        why = "only one law fits" if n_consistent < 2 else "no unmeasured point is left where the laws differ by more than the noise"
        notes.append(f"the best law predicted the last batch's {prior.n} measurement(s) before they were made to within "
                     f"the noise (relative RMS {100 * prior.error:.3g}%) and {why}: {n_dropped} slot(s) of this batch "
                     "were not measured")
    return picks, n_exp, n_dropped


def plan_noisy_step(
    hypotheses: Sequence[str],
    variables: Sequence[str],
    X_obs,
    y_obs,
    U_obs,
    pool_X,
    pool_U,
    available,
    *,
    method: str,
    k: int,
    seed: int,
    options: NoiseOptions,
    noisy: bool,
    prior: PredictionCheck | None = None,
) -> NoisyStepResult:
    """One noise-aware planner step (docs/noise.md).

    1. Parse and calibrate the committee as the paper does; relative residual RMS of each fit.
    2. Estimate the relative noise: replicate pairs, else the best fit's residuals (``noisy`` only;
       a noiseless lab has noise 0).
    3. Keep the hypotheses consistent with that noise (residual <= ``KAPPA_FIT`` sigma, the best
       ``max_keep`` = 4), else the two best fits.
    4. Informative points: where the kept hypotheses' calibrated predictions differ by more than
       ``KAPPA_DISAGREE`` sigma. The paper's scored step (eq. S2/S3, S4, diversity) runs on those
       only, for the scored share of the batch; ``random`` draws from every available point.
    5. Replicates: the observed point where the kept hypotheses disagree most (at least
       ``KAPPA_DISAGREE`` sigma), else, before any repeat exists, the best fit's worst residual.
    6. Exploration: with ``test_extremes``, the first slot goes to the point where the best
       kept law's calibrated prediction lies farthest outside the measured outputs
       (:func:`extreme_pick`, whole domain); the rest of the batch by greedy maximin distance
       (unit coordinates, inside ``EXPLORE_MARGIN``) to the observations and the points picked.
    7. Stopping rule (``stop_when_settled``): ``prior`` says how the previous step's best law
       predicted the batch measured after it (:func:`check_prediction`: calibrated before the
       batch, compared with the batch; the batch's explored points lie far from what it was
       fitted to). If that error was at most ``KAPPA_FIT`` times the noise estimate of that step,
       scored slots that find no informative point (all of them when fewer than two laws are
       consistent) are dropped, not explored; a batch keeps at least one point.

    Args:
        U_obs: float64[n_obs, d] unit coordinates of the observations.
        options: The :class:`NoiseOptions`.
        noisy: The task says the lab is noisy.
        prior: The previous batch's :class:`PredictionCheck` (the stopping rule; None: none).
        (others as :func:`plan_step`)
    """
    from etc_fast.expr import ExprError, parse
    from kernels.calibrate import calibrate
    from kernels.noise import maximin_pick, relative_disagreement, relative_residual_rms

    k = _check_method_k(method, k)
    variables = tuple(variables)
    X_obs = _float_array(X_obs, "X_obs", 2)
    y = _float_array(y_obs, "y_obs", 1)
    U_obs = _float_array(U_obs, "U_obs", 2)
    pool_X = _float_array(pool_X, "pool_X", 2)
    pool_U = _float_array(pool_U, "pool_U", 2)
    mask = np.asarray(available)
    if U_obs.shape != X_obs.shape:
        raise ValueError(f"U_obs must have the shape of X_obs {X_obs.shape}, got {U_obs.shape}")
    if mask.dtype != np.bool_ or mask.shape != (pool_X.shape[0],):
        raise ValueError(f"available must be a boolean mask of shape ({pool_X.shape[0]},), got {mask.dtype} {mask.shape}")
    programs, positions = [], []
    for h, text in enumerate(hypotheses):
        if not isinstance(text, str):
            continue
        try:
            programs.append(parse(text, variables))
        except ExprError:
            continue
        positions.append(h)
    cols = np.flatnonzero(mask).astype(np.int64)
    n_obs = int(y.size)
    n_score, n_exp, n_rep = _batch_split(k, options.explore_fraction, options.replicates if noisy else 0, n_obs)
    notes: list[str] = []

    # 1-3: calibration, noise, consistent hypotheses
    kept_rows = np.zeros(0, dtype=np.int64)
    noise = NoiseEstimate(0.0 if not noisy else None, "noiseless" if not noisy else "none", 0)
    n_consistent = 0
    P_obs = H_pool = None
    if programs:
        com = Committee(programs)
        H_obs = com.evaluate(X_obs)
        a, b, _n_pairs, ok, _err = calibrate(H_obs, y)
        P_obs = a[:, None] * H_obs + b[:, None]
        P_obs[~ok] = np.nan
        rel, cnt = relative_residual_rms(P_obs, y)
        if noisy and options.noise_aware:
            noise = estimate_noise(rel, cnt, X_obs, y)
            if noise.hypothesis >= 0:
                noise = dataclasses.replace(noise, hypothesis=positions[noise.hypothesis])
        valid = np.flatnonzero(ok & np.isfinite(rel))
        order = valid[np.argsort(rel[valid], kind="stable")]
        if options.noise_aware and noise.sigma is not None:
            tol = KAPPA_FIT * max(noise.sigma, NOISE_FLOOR) if noisy else np.inf
            consistent = order[rel[order] <= tol]
            n_consistent = int(consistent.size)
            kept_rows = consistent[:4] if consistent.size >= 2 else order[:2]
        else:
            kept_rows = order[:4]
        H_pool = com.evaluate(pool_X[cols])
    sigma = noise.sigma if (options.noise_aware and noise.sigma is not None) else 0.0
    best_text, best_ab, best_noise = None, (1.0, 0.0), None
    if kept_rows.size:
        r0 = int(kept_rows[0])
        best_text = str(hypotheses[positions[r0]])
        best_ab = (relative_scale(H_obs[r0], y), 0.0)
        best_noise = law_noise(H_obs[r0], y, best_ab[0], fitted_constants(best_text))
    predicted = bool(options.stop_when_settled and options.noise_aware and noisy and prior is not None and prior.passed)

    # 4: scored picks on the informative points
    picks: list[int] = []
    scored: StepResult | None = None
    n_inf = 0
    fallback = False
    if method == "random":
        if n_score and cols.size:
            r = select_random(np.ones(cols.size, dtype=bool), n_score, seed=seed)
            picks = [int(cols[j]) for j in r]
    elif kept_rows.size >= 2 and cols.size:
        P_pool = a[kept_rows, None] * H_pool[kept_rows] + b[kept_rows, None]
        D = relative_disagreement(P_pool)
        if options.noise_aware and noisy and n_consistent < 2:
            inf_mask = np.zeros(cols.size, dtype=bool)  # one law fits: nothing to choose between
            notes.append("only one hypothesis fits to the noise level, so the batch checks it in unexplored regions")
        else:
            with np.errstate(invalid="ignore"):
                inf_mask = np.isfinite(D) & (D > KAPPA_DISAGREE * sigma)
        n_inf = int(inf_mask.sum())
        if n_score and n_inf:
            sub = np.flatnonzero(inf_mask)
            scored = plan_step_arrays(
                H_obs[kept_rows], y, H_pool[kept_rows][:, sub], pool_U[cols[sub]], method, min(n_score, n_inf),
                seed=seed, pool_indices=cols[sub], threshold=np.inf, max_keep=max(2, int(kept_rows.size)), min_keep=2,
            )  # fmt: skip
            fallback = scored.fallback_used
            picks = [int(i) for i in scored.indices]
        if n_score > len(picks) and options.noise_aware and noisy and not predicted:
            notes.append(
                f"{n_inf} unmeasured point(s) where the hypotheses differ by more than {KAPPA_DISAGREE:g}x the noise; "
                f"{n_score - len(picks)} scored slot(s) moved to exploration"
            )
    elif n_score:
        notes.append("fewer than 2 usable hypotheses: the batch explores")

    # 5: replicates
    rep_rows: list[int] = []
    if n_rep and P_obs is not None and kept_rows.size >= 1 and n_obs:
        _sig_rep, pairs = replicate_noise(X_obs, y)
        cand = np.zeros(n_obs)
        if kept_rows.size >= 2 and sigma > 0:
            Dobs = relative_disagreement(P_obs[kept_rows])
            cand = np.where(np.isfinite(Dobs) & (Dobs > KAPPA_DISAGREE * sigma), Dobs, 0.0)
        if not cand.any() and pairs == 0:
            best = kept_rows[0]
            with np.errstate(all="ignore"):
                res = np.abs((P_obs[best] - y) / np.abs(y))
            cand = np.where(np.isfinite(res), res, 0.0)
        for j in np.argsort(-cand, kind="stable")[:n_rep]:
            if cand[j] > 0:
                rep_rows.append(int(j))
    n_exp += n_rep - len(rep_rows)
    if predicted:
        picks, n_exp, n_dropped = _stop_slots(method, picks, n_score, n_exp, len(rep_rows), n_consistent, prior, notes)
    else:
        n_exp, n_dropped = n_exp + n_score - len(picks), 0

    # 6: exploration
    explored: list[int] = []
    taken = np.zeros(pool_X.shape[0], dtype=bool)
    taken[picks] = True
    if n_exp and options.test_extremes and noisy and kept_rows.size and H_pool is not None:
        r0 = int(kept_rows[0])
        ext = extreme_pick(a[r0] * H_pool[r0] + b[r0], y, KAPPA_DISAGREE * max(sigma, NOISE_FLOOR), ~taken[cols])
        if ext >= 0:
            explored.append(int(cols[ext]))
            taken[cols[ext]] = True
            n_exp -= 1
            notes.append("one exploration point tests the best-fitting hypothesis where it predicts an output "
                         "outside the measured range")
    left = cols[~taken[cols]]
    inner = left[np.all((pool_U[left] >= EXPLORE_MARGIN) & (pool_U[left] <= 1.0 - EXPLORE_MARGIN), axis=1)]
    if inner.size >= n_exp:
        left = inner
    if n_exp and left.size:
        ref = np.vstack([U_obs, pool_U[picks + explored]]) if picks or explored else U_obs
        e = maximin_pick(ref, pool_U[left], n_exp)
        explored += [int(left[j]) for j in e]
    indices = np.asarray(picks + explored, dtype=np.int64)
    error = None
    if indices.size == 0 and not rep_rows and k > 0:
        error = "no available pool points" if cols.size == 0 else "nothing could be selected"
    return NoisyStepResult(
        method, k, seed, indices, np.asarray(explored, dtype=np.int64), np.asarray(rep_rows, dtype=np.int64), noise,
        tuple(positions[int(r)] for r in kept_rows), n_consistent, n_inf, scored, error, fallback,
        pool_U[indices] if indices.size else np.zeros((0, pool_U.shape[1])), tuple(notes),
        pool_X[np.asarray(explored, dtype=np.int64)], prior, bool(predicted and n_dropped), n_dropped,
        best_text, best_ab, best_noise,
    )  # fmt: skip
