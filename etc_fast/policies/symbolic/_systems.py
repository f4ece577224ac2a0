"""The symbolic agent on simulated systems (docs/systems.md, "The offline agent on systems").

It reads what an LLM agent reads: the apparatus (controls, defaults, declared channels), the law's
signature and the observations (NewtonBench's outputs). From them it builds a table of law samples
through the public forward model (``etc_fast.systems._derive``: for each experiment the constant law
value that reproduces the record, and the effective law inputs), or takes that table from the
planner's diagnostics when they are shown, and runs its vanilla search on it:

* without an interpreter: the diagnostic search (power law from the table's log-linear fit and
  its small edits);
* with one, and only on the decision after an analysis turn paid for it: the full grammar search,
  then its best candidates are simulated through the public forward model (its candidate in place
  of the hidden law) with a fitted scale (``calibrate``), and ranked by how well they reproduce the
  records themselves.

Nothing here names a module or reads the hidden law.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from etc_fast.policies.symbolic._search import (
    COMPLEXITY_WEIGHT,
    Candidate,
    SearchResult,
)

__all__ = ["SYSTEM_ANALYSIS_CODE", "simulated_rank", "table_noise", "usable_rows"]

#: Analysis code of a system turn (the sandbox holds no law values; the search runs next turn).
SYSTEM_ANALYSIS_CODE = 'print("experiments run:", int(X.shape[0]), "| the law-sample table and search follow")\n'

#: Most mean squared misfit (in reading precisions) of a row of the derived table that is kept.
MAX_ROW_MISFIT = 1e4
#: The search's tolerance in units of the derived values' median uncertainty.
SIGMA_FACTOR = 10.0
#: Largest relative uncertainty of a derived law value that is kept.
MAX_ROW_SIGMA = 1e-3


def usable_rows(table: Any, d: int) -> np.ndarray:
    """Rows of the derived table to search on: finite, and reproduced by a constant law to 100 precisions."""
    ok = np.isfinite(table.y) & np.all(np.isfinite(table.X), axis=1) & np.isfinite(table.misfit) & np.isfinite(table.sigma)
    good = ok & (table.misfit <= MAX_ROW_MISFIT) & (table.sigma <= MAX_ROW_SIGMA)
    if good.sum() >= d + 2:
        return good
    idx = np.flatnonzero(ok)
    keep = idx[np.argsort(table.sigma[idx], kind="stable")[: max(d + 2, idx.size // 2)]]
    out = np.zeros_like(ok)
    out[keep] = True
    return out


def table_noise(table: Any, rows: np.ndarray, noisy: bool, assumed: float) -> float:
    """The relative error level the search should treat the table with."""
    m = table.sigma[rows]
    # ten times the median uncertainty: the uncertainty sees the reading's precision, not the law's
    # change while a record runs (a moving body), which leaves derived values off by more
    level = SIGMA_FACTOR * float(np.median(m)) if m.size else 0.0
    level = min(max(level, 1e-6), 0.05)
    return max(level, assumed) if noisy else level


def simulated_rank(res: SearchResult, obs: Any, names: tuple[str, ...], top: int = 6) -> list[tuple[Candidate, str, float]]:
    """The search's best candidates refitted and ranked through the public forward model.

    Each candidate gets a free scale ``K`` fitted to the records (``calibrate``), kept only when it
    improves the records' misfit by more than a factor 1.5 over the candidate as it is; the rank is the
    search's score with the table error replaced by the records' rms misfit. Returns
    ``(candidate, calibrated expression, rms)``, best first.
    """
    from etc_fast.expr import parse
    from etc_fast.systems._planning import calibrate

    so = obs.system
    out = []
    for cand in res.candidates[:top]:
        try:
            prog = parse(f"K * ({cand.expression})", names)
            cal = calibrate(prog, so.module, so.system, list(so.requests), np.asarray(so.series), max_nfev=40)
        except Exception:  # noqa: BLE001, S112 - a candidate the simulator cannot run is skipped
            continue
        if not math.isfinite(cal.rms):
            continue
        k = float(cal.program.consts[list(cal.program.const_names).index("K")])
        try:  # the candidate as it is: kept when the scale does not improve the fit (one parameter fewer)
            plain = calibrate(parse(cand.expression, names), so.module, so.system, list(so.requests), np.asarray(so.series))
        except Exception:  # noqa: BLE001
            plain = None
        if plain is not None and math.isfinite(plain.rms) and plain.rms <= 1.5 * cal.rms + 1e-9:
            out.append((cand, cand.expression, float(plain.rms)))
        else:
            out.append((cand, f"({k!r}) * ({cand.expression})", float(cal.rms)))
    floor = max(res.tol, 1e-9)
    out.sort(key=lambda t: math.log10(max(t[2], floor)) + COMPLEXITY_WEIGHT * t[0].complexity)
    return out


def _power_complexity(exponents: np.ndarray) -> float:
    """The search's complexity of a monomial ``C * prod x**p`` (identity atoms)."""
    from etc_fast.policies.symbolic._grammar import exponent_cost

    return 1.0 + sum(1.0 + exponent_cost(float(p)) for p in exponents if p != 0.0)


def loglinear_exponents(table: Any, rows: np.ndarray) -> np.ndarray | None:
    """Exponents of a log-linear fit of the derived table (positive inputs, one-signed values)."""
    X, y = table.X[rows], table.y[rows]
    ok = np.all(X > 0, axis=1) & (y != 0)
    if ok.sum() < X.shape[1] + 1 or not (np.all(y[ok] > 0) or np.all(y[ok] < 0)):
        return None
    A = np.column_stack([np.ones(int(ok.sum())), np.log(X[ok])])
    b, *_ = np.linalg.lstsq(A, np.log(np.abs(y[ok])), rcond=None)
    return b[1:]


def power_law_candidates(obs: Any, table: Any, rows: np.ndarray) -> list[tuple[str, float, float]]:
    """Power laws fitted to the records through the public forward model (the interpreter's analysis).

    The continuous fit (factor and every exponent free, started from the table's log-linear fit),
    then its exponents snapped to halves and to integers with the factor refitted. Returns
    ``(expression, relative rms misfit, complexity)``.
    """
    from etc_fast.systems._derive import (
        PRECISION,
        fit_power_law,
        power_law_rms,
        refit_factor,
    )

    so = obs.system
    reqs, series = list(so.requests), np.asarray(so.series)
    start = loglinear_exponents(table, rows)
    fit = fit_power_law(so.module, so.system, reqs, series, start=start)
    if fit is None or not np.all(np.isfinite(fit.exponents)):
        return []
    out = [(fit.expression, fit.rms * PRECISION, _power_complexity(fit.exponents) + 3.0)]
    seen = set()
    for step in (0.5, 1.0):
        snap = np.round(fit.exponents / step) * step
        key = tuple(snap.tolist())
        if key in seen:
            continue
        seen.add(key)
        g = refit_factor(so.module, so.system, reqs, series, snap, fit.K)
        short = float(f"{g.K:.3g}")  # a factor that is a short number when the records allow it
        if short != g.K and math.isfinite(g.rms):
            h = power_law_rms(so.module, so.system, reqs, series, short, snap)
            if h.rms <= 1.5 * g.rms + 1e-3:
                g = h
        if math.isfinite(g.rms):
            out.append((g.expression, g.rms * PRECISION, _power_complexity(snap)))
    return out
