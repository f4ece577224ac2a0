"""The paper's planner step: choose the next batch of pool points to measure (DESIGN "Planner step" 1-7).

Scored methods (``variance``, ``pairwise``):

1. parse the committee's hypotheses and evaluate the parseable ones on the observations and on the
   available (unused) pool points;
2. calibrate each hypothesis affinely to the observations (:func:`kernels.calibrate`);
3. keep the hypotheses that fit (:func:`kernels.fit_filter`), or the whole committee as a fallback;
4. score every available pool point by committee disagreement (eq. S2 or S3);
5. regularize the scores by rank, boundary distance and finite fraction (eq. S4);
6. pick a diverse batch among the top quarter.

Steps 1-6 run as two compiled calls around one NumPy sort (:meth:`Committee.step`, on
:func:`kernels.committee_step`), which evaluate only the kept hypotheses on the pool. ``random`` skips 1-6 and draws available pool
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
from kernels.programs import check_programs, evaluate_programs
from kernels.select import select_random
from kernels.step import DEFAULT_CONSTANTS, acquisition_step, committee_step, step_constants
from kernels.step import METHODS as _METHOD_CODES

__all__ = ["StepResult", "Committee", "plan_step", "plan_step_arrays", "METHODS"]

METHODS = ("variance", "pairwise", "random")
"""Acquisition methods a planner step accepts."""

_JIT_OFF = _numba_config.DISABLE_JIT  # type: ignore[attr-defined]  # numba.config sets its options at import; the stubs omit them
_EMPTY_I = np.zeros(0, dtype=np.int64)


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

    __slots__ = ("programs", "n_vars", "_packed", "_n_prog", "_rows")

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
        check_programs(*packed, self.n_vars)  # a malformed program raises here, not at its first use
        ops, args, consts, prog_start, prog_len, const_start = (np.ascontiguousarray(a) for a in packed)
        self._packed = (ops, args, consts, prog_start, prog_len, const_start)  # a 6-tuple: calls that spread it type-check
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
        the kept ones on the pool, scores, regularizes and selects (:func:`kernels.committee_step`).

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
        if _JIT_OFF:
            with np.errstate(all="ignore"):
                out = committee_step(*self._packed, XT_obs, y, XT_pool, U, method, k, C, edge=edge)
        else:
            out = committee_step(*self._packed, XT_obs, y, XT_pool, U, method, k, C, edge=edge)
        fit3, n_pairs, flags, scores, elig, picks, fallback = out
        fit = np.vstack([fit3, n_pairs, flags]).astype(np.float64, copy=False)  # rows a, b, err, n_pairs, ok, keep
        error = None
        if picks.size == 0 and k > 0:
            error = "no available pool points" if n_avail == 0 else "no pool point received a finite score"
        identity = pool_indices is None
        return StepResult(
            method, k, seed, picks if identity else cols[picks], error, fallback, (), (), (), self._rows, fit, cols,
            scores, elig if identity else cols[elig], U[picks],
        )  # fmt: skip

    def evaluate_transposed(self, XT: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Like :meth:`evaluate` on ``XT`` = float64[d, n] C-contiguous (one row per variable)."""
        values = evaluate_programs(*self._packed, XT.T, n_points=XT.shape[1])  # takes X[n, d]; its X.T is XT again, not a copy
        if out is None:
            return values
        out[...] = values
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
