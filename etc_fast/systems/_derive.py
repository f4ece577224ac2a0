"""Derived law values: what a system's observations say about the law, read through the public forward model.

For each observed experiment, :func:`derive_law_table` finds the constant law value that makes the
apparatus reproduce the observations best (the law replaced by a constant ``L``, fitted through
:func:`etc_fast.systems._forward.predict`), and the effective value of each law input in that
experiment: an input the apparatus sets directly (a control of the same name) is read from the
request, any other is the constant whose simulation matches the simulation of the law
"return x_j". The
pairs ``(x_e, L_e)`` are a table of (approximate) law samples on which a vanilla law search can run.

Nothing here knows a module: it calls the public forward model with constant and identity laws
only, never the hidden law. Where a law input stays constant during an experiment (the controls
set it), the derived values are exact up to the reading's precision; where it changes during the
record (a body moving under the force), they are effective averages, good enough for a search to
find the form, whose constants are then refitted through the simulator (``calibrate``). Where the
apparatus does not respond to a constant law in a way that pins it (a difference of two law calls,
a law whose input is the time axis), the fitted value is a poor sample; the fit residual says so.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence

import numpy as np

from etc_fast._median import nanmedian
from etc_fast.expr import pack, parse
from etc_fast.laws import LAW_ARGS
from etc_fast.systems._forward import FamilyPacker, controls_matrix, pack_family, predict, predict_paired
from etc_fast.systems._quiet import quiet
from etc_fast.systems._spec import spec

__all__ = ["DerivedTable", "derive_law_table", "fit_constant_law", "record_times", "time_axis_inputs"]

#: Mean squared misfit (reading precisions) up to which a constant law reproduces a record.
CONSISTENT = 100.0
#: Prefixes (returned points) tried, longest first, for records a constant law does not reproduce.
PREFIXES = (10, 5, 3)

#: Coarse scan of the constant law: sign x 10**(-30..30) in quarter decades.
_SCAN = np.concatenate([-(10.0 ** np.arange(30, -30.01, -0.25)), [0.0], 10.0 ** np.arange(-30, 30.01, 0.25)])


#: Relative precision of a reading (NewtonBench prints 7 significant digits).
PRECISION = 5e-7


def _cost(pred: np.ndarray, target: np.ndarray) -> np.ndarray:
    """Mean squared misfit per (program, experiment) in units of a reading's precision.

    pred [P, n, ch, T] vs target [n, ch, T]; a cell's unit is ``PRECISION |value|`` plus a
    billionth of the experiment's typical magnitude, so the law's part of a reading counts even
    when the controls' part (a starting velocity) dominates the value.
    """
    mask = np.isfinite(target)
    with quiet():
        typ = nanmedian(np.where(mask, np.abs(target), np.nan), (1, 2))
        typ = np.where(np.isfinite(typ) & (typ > 0), typ, 1.0)
        r = (pred - target[None]) / (PRECISION * np.abs(target) + 1e-9 * typ)[None]
        r = np.where(mask[None], np.where(np.isfinite(r), np.clip(r, -1e150, 1e150), 1e150), 0.0)
    return np.sum(r * r, axis=(2, 3)) / np.maximum(mask.sum(axis=(1, 2)), 1)[None]


def fit_constant_law(module: str, system: str, C: np.ndarray, target: np.ndarray, rounds: int = 6) -> tuple[np.ndarray, np.ndarray]:
    """Per experiment, the constant law value whose simulation best matches ``target``.

    Args:
        module, system: The system.
        C: float64[n, n_controls] controls (:func:`controls_matrix`).
        target: float64[n, ch, T] observations (or simulated observables).
        rounds: Grid refinements after the coarse scan (each narrows the bracket by 10).

    Returns:
        ``(values, cost)``: float64[n] fitted constants and their relative mean squared misfit.
    """
    names = LAW_ARGS[module]
    base = parse("L", names)
    n = C.shape[0]

    def run(values: np.ndarray) -> np.ndarray:  # values [K] shared by all experiments -> cost [K, n]
        return _cost(predict(module, system, pack_family(base, values[:, None]), C), target)

    costs = run(_SCAN)
    best_k = np.argmin(costs, axis=0)
    vals = _SCAN[best_k].copy()
    best = costs[best_k, np.arange(n)]
    width = np.full(n, 0.25)  # in decades
    for _ in range(rounds):
        # each experiment gets its own grid of 21 values around its best (log-spaced, sign kept)
        steps = np.linspace(-1.0, 1.0, 21)
        grid = np.where(vals[None] != 0, vals[None] * 10.0 ** (steps[:, None] * width[None]), steps[:, None] * 1e-30)
        # one forward call for the whole grid: experiment e at its own value grid[j, e]
        pred = predict_paired(module, system, pack_family(base, grid.reshape(-1, 1)), np.tile(C, (21, 1)))
        cand = _cost(pred.reshape(21, n, *pred.shape[1:]), target)
        k = np.argmin(cand, axis=0)
        improved = cand[k, np.arange(n)] < best
        vals = np.where(improved, grid[k, np.arange(n)], vals)
        best = np.minimum(best, cand[k, np.arange(n)])
        width = width / 10.0
    return vals, best


def value_uncertainty(module: str, system: str, C: np.ndarray, target: np.ndarray, vals: np.ndarray, best: np.ndarray,
                      delta: float = 1e-3) -> np.ndarray:
    """Relative uncertainty of each fitted constant: the relative change that costs one precision unit."""
    names = LAW_ARGS[module]
    base = parse("L", names)
    cost = _cost(predict_paired(module, system, pack_family(base, (vals * (1 + delta))[:, None]), C)[None], target)[0]
    rise = np.maximum(cost - best, 1e-300)
    return np.where(np.isfinite(rise), delta / np.sqrt(rise), np.inf)


class DerivedTable:
    """Derived law samples of a set of experiments.

    Attributes:
        X: float64[n, d] effective law inputs (the module's law arguments, signature order).
        y: float64[n] derived law values (NaN where the observation was unusable).
        misfit: float64[n] mean squared misfit of the constant-law fit, in reading precisions.
        sigma: float64[n] relative uncertainty of each derived value (the relative change of the
            constant that moves the record by one reading precision, rms).
    """

    def __init__(self, X: np.ndarray, y: np.ndarray, misfit: np.ndarray, sigma: np.ndarray | None = None) -> None:
        self.X, self.y, self.misfit = X, y, misfit
        self.sigma = np.zeros_like(y) if sigma is None else sigma

    def text(self, names: Sequence[str], max_rows: int = 40) -> str:
        head = "  ".join(f"{n:>12}" for n in names) + f"  {'law value':>12}  {'misfit':>8}"
        rows = [head]
        for i in range(min(len(self.y), max_rows)):
            rows.append("  ".join(f"{v:12.5g}" for v in self.X[i]) + f"  {self.y[i]:12.5g}  {self.misfit[i]:8.1e}")
        return "\n".join(rows)


#: Most time indices of a record read one by one when a law input is the record's time axis.
TIME_SAMPLES = 6


def _time_indices(T: int) -> np.ndarray:
    return np.unique(np.round(np.linspace(0, T - 1, min(T, TIME_SAMPLES))).astype(np.int64))


def _pointwise(C: np.ndarray, target: np.ndarray, ks: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each (experiment, time index k in ``ks``) as its own record holding only that time point."""
    n, ch, T = target.shape
    C_rep = np.repeat(C, len(ks), axis=0)
    t_rep = np.full((n * len(ks), ch, T), np.nan)
    rows = np.arange(n * len(ks))
    kk = np.tile(ks, n)
    t_rep[rows, :, kk] = target.reshape(n, ch, T)[np.repeat(np.arange(n), len(ks)), :, kk]
    return C_rep, t_rep


def time_axis_inputs(module: str, system: str, C: np.ndarray, times: np.ndarray, ks: np.ndarray) -> tuple[list[int], np.ndarray]:
    """Law inputs that are the records' time axis, and every input's value at each sampled time point.

    Each input's identity law ("return x_j") is simulated and read one time point at a time (the
    constant whose simulation matches that point); an input whose values equal the time stamps the
    apparatus returned (relative 1e-5, at every sampled point where both are finite, and not all
    zero) is the time axis. Returns ``(indices, values[n * len(ks), d])``.
    """
    vals = time_axis_values(module, system, C, ks)
    return axis_columns(vals, times[:, ks].reshape(-1)), vals


def time_axis_values(module: str, system: str, C: np.ndarray, ks: np.ndarray) -> np.ndarray:
    """float64[n * len(ks), d]: every law input's value read at each sampled time point of each
    experiment (NaN where the reading is not consistent); each experiment's rows on their own."""
    names = LAW_ARGS[module]
    n = C.shape[0]
    vals = np.full((n * len(ks), len(names)), np.nan)
    for j, name in enumerate(names):
        sim = predict(module, system, pack([parse(name, names)]), C)[0]
        Cr, tr = _pointwise(C, sim, ks)
        v, cost = fit_constant_law(module, system, Cr, tr)
        vals[:, j] = np.where(cost <= CONSISTENT, v, np.nan)
    return vals


def axis_columns(vals: np.ndarray, stamps: np.ndarray) -> list[int]:
    """The inputs whose read values (:func:`time_axis_values`) equal the time ``stamps`` [n * len(ks)]."""
    out = []
    for j in range(vals.shape[1]):
        both = np.isfinite(vals[:, j]) & np.isfinite(stamps)
        if both.sum() >= 2 and np.any(stamps[both] != 0) and np.allclose(vals[both, j], stamps[both], rtol=1e-5, atol=1e-12 * np.max(np.abs(stamps[both]))):
            out.append(j)
    return out


class TimeAxisRows:
    """The per-experiment part of a time-axis table: each experiment's rows (one per sampled time
    point) read on their own, so the rows of ``n + k`` experiments are those of the first ``n``
    followed by those of the ``k`` new ones (:class:`etc_fast.systems.DerivedTableCache`).

    Attributes:
        C_rep: float64[m, n_controls] each row's controls; vals: float64[m, d] the inputs read at
        each row (:func:`time_axis_values`); stamps: float64[m] the rows' time stamps; y, misfit,
        sigma: float64[m] the constant law value of each row, its misfit and uncertainty.
    """

    def __init__(self, C_rep: np.ndarray, vals: np.ndarray, stamps: np.ndarray, y: np.ndarray, misfit: np.ndarray,
                 sigma: np.ndarray) -> None:
        self.C_rep, self.vals, self.stamps, self.y, self.misfit, self.sigma = C_rep, vals, stamps, y, misfit, sigma

    @classmethod
    def derive(cls, module: str, system: str, C: np.ndarray, series: np.ndarray, times: np.ndarray) -> TimeAxisRows:
        """The rows of the experiments ``C`` with records ``series`` and time stamps ``times``."""
        ks = _time_indices(series.shape[2])
        vals = time_axis_values(module, system, C, ks)
        Cr, tr = _pointwise(C, series, ks)
        y, misfit = fit_constant_law(module, system, Cr, tr)
        sigma = value_uncertainty(module, system, Cr, tr, y, misfit)
        y = np.where(np.isfinite(tr).any(axis=(1, 2)), y, np.nan)
        return cls(Cr, vals, np.asarray(times, dtype=np.float64)[:, ks].reshape(-1), y, misfit, sigma)

    def extended(self, more: TimeAxisRows) -> TimeAxisRows:
        """These rows followed by ``more``'s."""
        return TimeAxisRows(*(np.concatenate([getattr(self, a), getattr(more, a)])
                              for a in ("C_rep", "vals", "stamps", "y", "misfit", "sigma")))

    def table(self, module: str, system: str) -> DerivedTable | None:
        """The derived table the rows give, or None when no input is the time axis over all of them
        (the record is then read as one constant law per experiment)."""
        axis = axis_columns(self.vals, self.stamps)
        if not axis:
            return None
        names = LAW_ARGS[module]
        keys = [c.key for c in spec(module, system).controls]
        X = self.vals.copy()
        for j, name in enumerate(names):
            if j in axis:
                X[:, j] = self.stamps
            elif name in keys:
                X[:, j] = self.C_rep[:, keys.index(name)]
        return DerivedTable(X, self.y.copy(), self.misfit.copy(), self.sigma.copy())


def record_times(module: str, system: str, outputs: Sequence[object]) -> np.ndarray:
    """float64[n, T]: the time stamps the apparatus returned with each output (NaN where none)."""
    from etc_fast.systems._forward import times_of

    T = spec(module, system).n_times
    out = np.full((len(outputs), T), np.nan)
    for i, t in enumerate(times_of(module, system, outputs)):
        v = np.array([x if isinstance(x, (int, float)) else np.nan for x in t[:T]], dtype=np.float64)
        out[i, : v.size] = v
    return out


def has_time_axis(module: str, system: str, C: np.ndarray, times: np.ndarray, n_times: int) -> bool:
    """Whether a law input is the records' time axis (:func:`time_axis_inputs`), decided on the
    first two records holding at least two time stamps (the check simulates every input)."""
    times = np.asarray(times, dtype=np.float64)
    probe = np.flatnonzero(np.isfinite(times).sum(axis=1) >= 2)[:2]
    if not probe.size:
        return False
    # A growing record keeps its first two records, and every table of a trial asks again (up to
    # 0.4 s a time on the slowest system): the answer is kept by the probe's exact content.
    Cp = np.ascontiguousarray(C[probe], dtype=np.float64)
    tp = np.ascontiguousarray(times[probe], dtype=np.float64)
    key = (module, system, int(n_times), Cp.shape, Cp.tobytes(), tp.shape, tp.tobytes())
    hit = _TIME_AXIS_SEEN.get(key)
    if hit is None:
        hit = bool(time_axis_inputs(module, system, Cp, tp, _time_indices(n_times))[0])
        if len(_TIME_AXIS_SEEN) >= 4096:
            _TIME_AXIS_SEEN.clear()
        _TIME_AXIS_SEEN[key] = hit
    return hit


#: has_time_axis's answers by probe content (a process-wide memo; bounded by clearing).
_TIME_AXIS_SEEN: dict[tuple, bool] = {}


def derive_law_table(module: str, system: str, requests: Sequence[Mapping[str, object]], series: np.ndarray,
                     times: np.ndarray | None = None) -> DerivedTable:
    """The derived law table of observed experiments (see the module docstring).

    Args:
        module, system: The system.
        requests: The experiments run (control dicts).
        series: float64[n, ch, T] their observations (``observe``).
        times: float64[n, T] the time stamps the apparatus returned with each record (NaN where
            none); when a law input is the records' time axis (:func:`time_axis_inputs`) the table
            holds one row per (experiment, sampled time point) instead of one per experiment.
    """
    sp = spec(module, system)
    names = LAW_ARGS[module]
    C = controls_matrix(sp, requests)
    series = np.asarray(series, dtype=np.float64)
    n = C.shape[0]
    if n == 0:
        return DerivedTable(np.empty((0, len(names))), np.empty(0), np.empty(0), np.empty(0))
    if times is not None and series.shape[2] > 1 and has_time_axis(module, system, C, times, series.shape[2]):
        table = TimeAxisRows.derive(module, system, C, series, times).table(module, system)
        if table is not None:
            return table
    return constant_law_table(module, system, C, series)


def constant_law_table(module: str, system: str, C: np.ndarray, series: np.ndarray) -> DerivedTable:
    """The table that reads each experiment's record as one constant law value (no time axis)."""
    names = LAW_ARGS[module]
    sp = spec(module, system)
    n = C.shape[0]
    y, misfit = fit_constant_law(module, system, C, series)
    sigma = value_uncertainty(module, system, C, series, y, misfit)
    if series.shape[2] > 1:
        # A record the constant law cannot reproduce (the law's inputs change while it runs: a body
        # moving under the force) is read from its start: the longest prefix that a constant law
        # reproduces to CONSISTENT precisions, else the shortest.
        bad = misfit > CONSISTENT
        for k in PREFIXES:
            if not bad.any() or k >= series.shape[2]:
                continue
            sub = series[bad].copy()
            sub[:, :, k:] = np.nan
            yk, mk = fit_constant_law(module, system, C[bad], sub)
            sk = value_uncertainty(module, system, C[bad], sub, yk, mk)
            rows = np.flatnonzero(bad)
            take = (mk <= CONSISTENT) | (k == PREFIXES[-1])
            y[rows[take]], misfit[rows[take]], sigma[rows[take]] = yk[take], mk[take], sk[take]
            bad[rows[take]] = False
    usable = np.isfinite(series).any(axis=(1, 2))
    y = np.where(usable, y, np.nan)
    X = np.empty((n, len(names)))
    keys = [c.key for c in sp.controls]
    for j, name in enumerate(names):
        if name in keys:  # the apparatus sets this input directly: read it from the request
            X[:, j] = C[:, keys.index(name)]
            continue
        X[:, j] = read_input(module, system, C, j, y)
    return DerivedTable(X, y, misfit, sigma)


def read_input(module: str, system: str, C: np.ndarray, j: int, y: np.ndarray) -> np.ndarray:
    """The effective value of law input ``j`` in each experiment, read through its scaled identity law.

    The law "return s * x_j" is simulated and read back as a constant law (then divided by ``s``).
    ``s = 1`` first; an experiment whose reading is not consistent (misfit over :data:`CONSISTENT`
    precisions, or a value at the scan's bound: an apparatus that clamps or refuses law values far
    from the ones it is built for) is read again with ``s`` set to the law values' typical magnitude
    (a power of ten of the derived values' median) and a hundred times either side of it.
    """
    names = LAW_ARGS[module]
    n = C.shape[0]
    out = np.full(n, np.nan)
    todo = np.ones(n, dtype=bool)
    mag = np.abs(y[np.isfinite(y) & (y != 0)])
    s0 = 10.0 ** np.round(np.log10(np.median(mag))) if mag.size else 1.0
    for s in dict.fromkeys(float(v) for v in (1.0, s0, s0 * 1e2, s0 * 1e-2)):
        if not todo.any():
            break
        sim = predict(module, system, pack([parse(f"{s!r} * {names[j]}", names)]), C[todo])[0]
        v, cost = fit_constant_law(module, system, C[todo], sim)
        good = (cost <= CONSISTENT) & (np.abs(v) > 1e-29) & (np.abs(v) < 1e29)
        rows = np.flatnonzero(todo)
        out[rows] = np.where(good | np.isnan(out[rows]), v / s, out[rows])
        todo[rows[good]] = False
    return out


# ----------------------------------------------------------------------------------------
# A power law fitted through the simulator
# ----------------------------------------------------------------------------------------
class PowerLawFit:
    """``K * prod x_j ** p_j`` fitted to the records through the public forward model.

    Attributes:
        K: The fitted factor.
        exponents: float64[d] fitted exponents (signature order).
        rms: Root-mean-square misfit over the observed cells, in reading precisions.
        expression: The law in the hypothesis language.
    """

    def __init__(self, K: float, exponents: Sequence[float] | np.ndarray, rms: float, names: Sequence[str]) -> None:
        self.K, self.exponents, self.rms = float(K), np.asarray(exponents, dtype=np.float64), float(rms)
        # an exponent 1 is written as the input itself, as the grammar search writes it, so one law
        # reached by both routes has one text whichever of the two ranks first
        terms = [n if p == 1 else f"{n}**{float(p)!r}" for n, p in zip(names, self.exponents) if p != 0]
        self.expression = " * ".join([repr(self.K), *terms])

    def __repr__(self) -> str:
        return f"PowerLawFit({self.expression!r}, rms={self.rms:.3g})"


#: Returned points of each record used by the successive stages of a fit through the simulator.
STAGES = (3, 6, 12, None)


def _stages(series: np.ndarray) -> tuple[int | None, ...]:
    """Continuation stages: a record's first points first (the law's inputs have hardly changed there,
    so the misfit is smooth in the constants), then longer prefixes up to the whole record."""
    T = series.shape[2]
    return tuple(k for k in STAGES if k is None or k < T)


def _residual_fn(module, system, C, series, names, fixed: np.ndarray | None, upto: int | None = None):
    """Residuals (reading precisions) of ``K * prod x**p`` for theta = (log|K|, free exponents).

    ``upto``: only the first ``upto`` returned points of each record count (None: all).
    """
    d = len(names)
    prog = parse("K * " + " * ".join(f"{n}**p{j}" for j, n in enumerate(names)), names)
    mask = np.isfinite(series)
    if upto is not None:
        mask[:, :, upto:] = False
    with quiet():
        typ = nanmedian(np.where(mask, np.abs(series), np.nan), (1, 2))
    typ = np.where(np.isfinite(typ) & (typ > 0), typ, 1.0)
    unit = (PRECISION * np.abs(series) + 1e-9 * typ)[mask]

    def consts(theta: np.ndarray, sign: float) -> np.ndarray:
        p = theta[1:] if fixed is None else fixed
        return np.concatenate([[sign * np.exp(theta[0])], p])[: d + 1]

    obs = series[mask]
    family = FamilyPacker(prog)

    def compress(pred: np.ndarray) -> np.ndarray:
        with np.errstate(all="ignore"):
            r = (pred[mask] - obs) / unit
        # compressed beyond 1e6 precisions so that a crashed trajectory does not dominate
        r = np.where(np.isfinite(r), r, 1e9)
        return np.sign(r) * np.log1p(np.abs(r) / 1e6) * 1e6

    def rows(tables: np.ndarray, _fits: np.ndarray | None = None) -> np.ndarray:
        """[B, n]: the residuals of each constant table ``K, p_1..p_d`` (rows of ``tables``) in one
        simulation (a family simulates each copy as it would alone: the same bits per row)."""
        sims = predict(module, system, family(tables), C)
        return np.stack([compress(sim) for sim in sims]) if len(sims) else np.zeros((0, obs.size))

    def residual(theta: np.ndarray, sign: float) -> np.ndarray:
        """The residual at ``theta``, or [B, n] at each row of ``theta`` [B, p]."""
        if theta.ndim == 1:
            return compress(predict(module, system, family(consts(theta, sign)[None]), C)[0])
        return rows(np.stack([consts(th, sign) for th in theta]))

    return residual, consts, rows


def _lockstep(module: str, system: str, C: np.ndarray, series: np.ndarray, names: Sequence[str], signs: np.ndarray,
              fixed: np.ndarray | None, theta0: np.ndarray, scan, max_nfev) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Fits of ``K * prod x**p`` through the simulator's continuation stages, all fits in lockstep.

    Fit ``i`` has the sign ``signs[i]`` of K and, with ``fixed`` (float64[F, d]), those exponents
    held; its parameters are ``log|K|`` and (without ``fixed``) the exponents, started from row
    ``i`` of ``theta0`` with ``log|K|`` as ``scan(rows, tables)`` places it on the first stage.
    Each stage is SciPy's ``trf`` (:func:`etc_fast.systems._lm.trf_lockstep`; ``max_nfev(upto)``
    steps) from the stage before. Returns the last stage's parameters, costs (half the residuals'
    sum of squares) and each fit's rms misfit over the finite records (in reading precisions,
    compressed as the residuals are).
    """
    from etc_fast.systems._lm import trf_lockstep

    theta = np.array(theta0, dtype=np.float64)
    F = len(theta)
    cost = np.zeros(F)

    def tables(th: np.ndarray, which: np.ndarray) -> np.ndarray:
        K = signs[which] * np.exp(th[:, 0])
        return np.column_stack([K, th[:, 1:] if fixed is None else fixed[which]])

    for stage, upto in enumerate(_stages(series)):
        _, _, rows = _residual_fn(module, system, C, series, names, None, upto)
        with np.errstate(all="ignore"):
            if stage == 0:
                theta[:, 0] = scan(rows, tables)
            theta, cost, _ = trf_lockstep(rows, tables, theta, np.arange(F), np.ones(theta.shape, dtype=bool),
                                          max_nfev(upto))
    return theta, cost, np.sqrt(2 * cost / max(1, int(np.sum(np.isfinite(series)))))


def _scan_log_k(rows, tables, theta: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Each fit's ``log|K|`` among its ``candidates`` row (float64[F, S]) with the least misfit
    (the smaller value on a tie), the exponents at ``theta``'s: every candidate of every fit in one
    simulation."""
    F, S = candidates.shape
    th = np.repeat(theta, S, axis=0)
    th[:, 0] = candidates.reshape(-1)
    which = np.repeat(np.arange(F), S)
    R = rows(tables(th, which), which)
    costs = np.sum(R**2, axis=1).reshape(F, S)
    return np.array([min(zip(costs[i].tolist(), candidates[i].tolist()))[1] for i in range(F)])


def fit_power_law(module: str, system: str, requests: Sequence[Mapping[str, object]], series: np.ndarray,
                  start: Sequence[float] | np.ndarray | None = None, max_nfev: int = 200) -> PowerLawFit | None:
    """Fit ``K * prod x_j ** p_j`` (K and every p_j free) to the records through the simulator.

    Starts: the exponents ``start`` (e.g. a derived table's log-linear fit) and zeros, each with
    either sign of K; K from a scan of log-magnitudes; then SciPy's ``trf`` through the
    continuation stages, the starts in lockstep; the best fit (the first of equals) is kept.
    """
    sp = spec(module, system)
    names = LAW_ARGS[module]
    C = controls_matrix(sp, requests)
    series = np.asarray(series, dtype=np.float64)
    if not np.isfinite(series).any():
        return None
    starts = [np.zeros(len(names))] if start is None else [np.asarray(start, dtype=np.float64), np.zeros(len(names))]
    pairs = list(itertools.product((1.0, -1.0), starts))
    signs = np.array([sg for sg, _ in pairs])
    theta0 = np.array([np.concatenate([[0.0], p0]) for _, p0 in pairs])
    lks = np.arange(-70.0, 70.1, 3.5)
    theta, cost, rms = _lockstep(module, system, C, series, names, signs, None, theta0,
                                 lambda rows, tables: _scan_log_k(rows, tables, theta0, np.tile(lks, (len(pairs), 1))),
                                 lambda upto: max_nfev if upto is None else max(20, max_nfev // 4))
    i = int(np.argmin(cost))  # the first of equals, in the order of the starts
    return PowerLawFit(signs[i] * np.exp(theta[i, 0]), theta[i, 1:], float(rms[i]), names)


def refit_factors(module: str, system: str, requests: Sequence[Mapping[str, object]], series: np.ndarray,
                  laws: Sequence[tuple[Sequence[float], float]]) -> list[PowerLawFit]:
    """Power laws with their exponents held fixed and only K refitted through the simulator, each
    ``(exponents, K0)`` of ``laws`` from its own ``K0``, all fits in lockstep."""
    sp = spec(module, system)
    names = LAW_ARGS[module]
    C = controls_matrix(sp, requests)
    series = np.asarray(series, dtype=np.float64)
    if not laws:
        return []
    fixed = np.array([np.asarray(e, dtype=np.float64) for e, _ in laws]).reshape(len(laws), len(names))
    signs = np.array([1.0 if k0 >= 0 else -1.0 for _, k0 in laws])
    start = np.array([np.log(abs(k0)) if k0 != 0 else 0.0 for _, k0 in laws])
    # K0 belongs to other exponents: scan log|K| around it first (the misfit of a record that runs
    # away is flat far from the right factor), then refine the best through the stages
    shifts = np.concatenate([np.arange(-23.0, 23.1, 1.15), np.linspace(-4.6, 4.6, 81)])
    theta0 = start[:, None]
    theta, _, rms = _lockstep(module, system, C, series, names, signs, fixed, theta0,
                              lambda rows, tables: _scan_log_k(rows, tables, theta0, start[:, None] + shifts[None, :]),
                              lambda upto: 60)
    return [PowerLawFit(signs[i] * np.exp(theta[i, 0]), fixed[i], float(rms[i]), names) for i in range(len(laws))]


def refit_factor(module: str, system: str, requests: Sequence[Mapping[str, object]], series: np.ndarray,
                 exponents: Sequence[float], K0: float) -> PowerLawFit:
    """The power law with ``exponents`` held fixed and only K refitted through the simulator."""
    return refit_factors(module, system, requests, series, [(exponents, K0)])[0]


def power_law_rms(module: str, system: str, requests: Sequence[Mapping[str, object]], series: np.ndarray,
                  K: float, exponents: Sequence[float]) -> PowerLawFit:
    """The power law ``K * prod x**p`` as given (nothing fitted), with its misfit in reading precisions."""
    sp = spec(module, system)
    names = LAW_ARGS[module]
    C = controls_matrix(sp, requests)
    residual, _, _ = _residual_fn(module, system, C, np.asarray(series, dtype=np.float64), names, np.asarray(exponents, dtype=np.float64))
    r = residual(np.array([np.log(abs(K)) if K != 0 else -700.0]), 1.0 if K >= 0 else -1.0)
    return PowerLawFit(K, exponents, float(np.sqrt(np.mean(r * r))) if r.size else math.inf, names)
