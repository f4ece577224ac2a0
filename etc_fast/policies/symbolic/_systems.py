"""The symbolic agent on simulated systems (docs/guide/offline-agent.md, "On simulated systems").

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

import itertools
import math
from typing import Any

import numpy as np

from etc_fast.policies.symbolic._search import (
    Candidate,
    SearchLimits,
    SearchResult,
)
from etc_fast.policies.symbolic._units import COMPLEXITY_WEIGHT, DECISIVE_RATIO
from etc_fast.systems import PRECISION

__all__ = ["SYSTEM_ANALYSIS_CODE", "simulated_rank", "table_noise", "usable_rows"]

#: Analysis code of a system turn (the sandbox holds no law values; the search runs next turn).
SYSTEM_ANALYSIS_CODE = 'print("experiments run:", int(X.shape[0]), "| the law-sample table and search follow")\n'

#: Most mean squared misfit (in reading precisions) of a row of the derived table that is kept.
MAX_ROW_MISFIT = 1e4
#: The search's tolerance in units of the derived values' median uncertainty: a law a decade
#: (:data:`._units.DECISIVE_RATIO`) outside that uncertainty misfits decisively.
SIGMA_FACTOR = DECISIVE_RATIO
#: Largest relative uncertainty of a derived law value that is kept.
MAX_ROW_SIGMA = 1e-3
#: Largest relative uncertainty of a row kept when too few rows are good: a value uncertain by
#: more than itself says nothing of the law (m11-complex's constant law, pinned at a bound of its
#: fit with an uncertainty of 1e147, is no law sample).
MAX_FALLBACK_SIGMA = 1.0


def usable_rows(table: Any, d: int) -> np.ndarray:
    """Rows of the derived table to search on: finite, and reproduced by a constant law to 100
    precisions; when fewer than ``d + 2`` are, the better half of the finite rows whose value is
    known to within itself (relative uncertainty at most :data:`MAX_FALLBACK_SIGMA`)."""
    ok = np.isfinite(table.y) & np.all(np.isfinite(table.X), axis=1) & np.isfinite(table.misfit) & np.isfinite(table.sigma)
    good = ok & (table.misfit <= MAX_ROW_MISFIT) & (table.sigma <= MAX_ROW_SIGMA)
    if good.sum() >= d + 2:
        return good
    idx = np.flatnonzero(ok & (table.sigma <= MAX_FALLBACK_SIGMA))
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


def _fitted_literal(v: float) -> bool:
    """A literal that a fit produced (more than 3 significant digits), not a structural number."""
    if not math.isfinite(v) or v == 0.0:
        return False
    return float(f"{v:.3g}") != v


def free_literals(prog: Any) -> tuple[Any, list[int]]:
    """``prog`` with its fitted-looking literals (outside exponents) turned into free constants."""
    from etc_fast.expr import Program

    names = list(prog.const_names)
    idx = [i for i, (n, v, ex) in enumerate(zip(names, prog.consts.tolist(), prog.const_is_exponent.tolist()))
           if n is None and not ex and _fitted_literal(v)]
    for j, i in enumerate(idx):
        names[i] = f"lit{j}"
    return Program.build(prog.variables, prog.ops, prog.args, prog.consts, prog.const_is_exponent, names), idx


def fixed_literals(prog: Any, idx: list[int]) -> Any:
    """The inverse of :func:`free_literals`: the freed constants written back as literals."""
    from etc_fast.expr import Program

    names = list(prog.const_names)
    for i in idx:
        names[i] = None
    return Program.build(prog.variables, prog.ops, prog.args, prog.consts, prog.const_is_exponent, names)


def calibrated_all(programs: list, so: Any, reqs: list, series: np.ndarray, max_nfev: int) -> list:
    """``calibrate`` of every program through the simulator, the fits in lockstep
    (:func:`etc_fast.systems.calibrate_each`); ``None`` for a program the simulator cannot run
    (where one of them raises, each is fitted alone to find which)."""
    from etc_fast.systems import calibrate, calibrate_each

    if not programs:
        return []
    try:
        return list(calibrate_each(programs, so.module, so.system, reqs, series, max_nfev=max_nfev))
    except Exception:  # noqa: BLE001 - which program the simulator cannot run is found one by one
        out: list = []
        for prog in programs:
            try:
                out.append(calibrate(prog, so.module, so.system, reqs, series, max_nfev=max_nfev))
            except Exception:  # noqa: BLE001
                out.append(None)
        return out


#: Significant digits a fitted literal is shortened to, shortest first (:func:`short_literals`).
SHORT_DIGITS = (1, 2, 3)
#: The rank's leaders (at most ``SearchLimits.rank_simplified``) not decisively worse than the best
#: records' misfit (within a decade, :data:`._units.DECISIVE_RATIO`) are simplified.
SIMPLIFY_WITHIN = DECISIVE_RATIO


def short_literals(prog: Any, so: Any, reqs: list, series: np.ndarray, rms: float,
                   limits: SearchLimits | None = None) -> tuple[str, float] | None:
    """The law with its fitted literals shortened where the records allow it, or None.

    One literal at a time (at most ``limits.literals_shortened``; ``limits``: :class:`SearchLimits`,
    its defaults when ``None``), the shortest of 1, 2, 3 significant
    digits whose law, the other fitted literals refitted through the simulator, explains the records
    within a factor 1.5 of ``rms`` (an effective value off by a little, 0.99999 for a structural 1,
    is the records' round-off, not the law's). Returns ``(expression, rms)``.
    """
    from etc_fast.expr import Program

    freed, idx = free_literals(prog)
    if not idx or len(idx) > (SearchLimits() if limits is None else limits).literals_shortened:
        return None
    cur, changed, out_rms = freed, False, rms
    for i in idx:
        v = float(cur.consts[i])
        trials = []
        for digits in SHORT_DIGITS:  # the shorter writings, shortest first, fitted together
            sv = float(f"{v:.{digits}g}")
            if sv == v:
                break
            names = list(cur.const_names)
            names[i] = None
            consts = cur.consts.copy()
            consts[i] = sv
            trials.append(Program.build(cur.variables, cur.ops, cur.args, consts, cur.const_is_exponent, names))
        for cal in calibrated_all(trials, so, reqs, series, max_nfev=40):
            if cal is not None and math.isfinite(cal.rms) and cal.rms <= 1.5 * rms + 1e-9:
                cur, changed, out_rms = cal.program, True, float(cal.rms)
                break
    if not changed:
        return None
    return fixed_literals(cur, idx).text, out_rms


#: Relative misfit a reading of 7 printed digits cannot resolve, one unit of the last digit (twice the
#: reading's relative precision, :data:`etc_fast.systems.PRECISION`): a term below it is not seen.
UNSEEN = 2.0 * PRECISION
#: Significant digits a submitted law's fitted literal keeps, at least and at most (:func:`evidenced_literals`).
EVIDENCE_DIGITS = (3, 12)
#: A law whose literals are rounded may misfit the records by this factor more than before (and by
#: UNSEEN at least); past it, one more digit each is tried, up to ``SearchLimits.evidence_tries`` times.
EVIDENCE_RMS_FACTOR = 1.5


def evidenced_literals(text: str, names: tuple[str, ...] | list[str], so: Any, rms: float,
                       limits: SearchLimits | None = None) -> str:
    """``text`` with each fitted literal (exponents too) written to the digits the records determine.

    A literal's standard error on the records (:func:`etc_fast.systems.constant_errors` at the
    law's misfit ``rms``) says how many of its digits the records fix; the digits after that are the
    optimizer's stopping point, which a CPU's last bits move. Each literal keeps two digits beyond
    its error's first (``2 + ceil(-log10(se))``, within :data:`EVIDENCE_DIGITS`). The rounded law
    must still explain the records within ``EVIDENCE_RMS_FACTOR * max(rms, UNSEEN)``; otherwise
    one more digit each is tried, and after ``limits.evidence_tries`` (``limits``:
    :class:`SearchLimits`, its defaults when ``None``) the law is written as it is.
    """
    from etc_fast.expr import Program, parse
    from etc_fast.systems import calibrate, constant_errors

    try:
        prog = parse(text, list(names))
    except ValueError:  # the expression language cannot read it unsnapped: written as it is
        return text
    cn = list(prog.const_names)
    idx = [i for i, (n, v) in enumerate(zip(cn, prog.consts.tolist())) if n is None and _fitted_literal(v)]
    if not idx or any(n is not None and n not in ("pi", "e") for n in cn) or not math.isfinite(rms):
        return text
    for j, i in enumerate(idx):
        cn[i] = f"lit{j}"
    freed = Program.build(prog.variables, prog.ops, prog.args, prog.consts, prog.const_is_exponent, cn)
    reqs, series = list(so.requests), np.asarray(so.series)
    try:
        se = constant_errors(freed, so.module, so.system, reqs, series, max(rms, 1e-300))
    except Exception:  # noqa: BLE001 - a law the simulator cannot run is kept as written (as in simulated_rank)
        return text
    lo, hi = EVIDENCE_DIGITS
    with np.errstate(all="ignore"):
        base = np.where(np.isfinite(se) & (se > 0), 2 + np.ceil(-np.log10(se)), hi)
    base = np.clip(base, lo, hi).astype(int)
    limit = EVIDENCE_RMS_FACTOR * max(rms, UNSEEN)
    for extra in range((SearchLimits() if limits is None else limits).evidence_tries):
        digits = np.minimum(base + extra, hi)
        consts = prog.consts.copy()
        for d, i in zip(digits.tolist(), idx):
            consts[i] = float(f"{consts[i]:.{d}g}")
        rounded = Program.build(prog.variables, prog.ops, prog.args, consts, prog.const_is_exponent, prog.const_names)
        if np.array_equal(consts, prog.consts):
            return text
        try:
            r = calibrate(rounded, so.module, so.system, reqs, series).rms
        except Exception:  # noqa: BLE001 - a law the simulator cannot run is kept as written
            return text
        if math.isfinite(r) and r <= limit:
            return rounded.text
    return text
def pruned_terms(text: str, names: tuple[str, ...], so: Any, reqs: list, series: np.ndarray, rms: float,
                 limits: SearchLimits | None = None) -> tuple[str, float]:
    """The law without the additive terms the records do not need.

    Greedily, each term of a sum in the law (the first ``limits.sums_pruned`` sums of 2 to 5 terms,
    the top one first; ``limits``: :class:`SearchLimits`, its defaults when ``None``) is dropped, the remaining fitted
    literals refitted through the simulator; a drop is kept when the records' misfit stays within
    ``max(1.5 rms, UNSEEN)`` of the full law's. Returns ``(expression, rms)``.
    """
    import sympy as sp

    from etc_fast.expr import parse

    limit = max(1.5 * rms, UNSEEN)
    n_sums = (SearchLimits() if limits is None else limits).sums_pruned
    try:
        expr = sp.sympify(text, locals={n: sp.Symbol(n) for n in names})
    except Exception:  # noqa: BLE001 - a text sympy cannot read is kept as it is
        return text, rms
    while True:
        best = None
        sums = [a for a in sp.preorder_traversal(expr) if isinstance(a, sp.Add) and 2 <= len(a.args) <= 5]
        drops = []  # every term of the first sums dropped, in order; fitted together
        for node in sums[:n_sums]:
            for term in node.args:
                smaller = expr.xreplace({node: node - term})
                try:
                    drops.append((smaller, *free_literals(parse(str(smaller), names))))
                except Exception:  # noqa: BLE001, S112
                    continue
        cals = calibrated_all([freed for _, freed, _ in drops], so, reqs, series, max_nfev=40)
        for (smaller, _, idx), cal in zip(drops, cals):
            if cal is not None and math.isfinite(cal.rms) and cal.rms <= limit and (best is None or cal.rms < best[1]):
                best = (smaller, float(cal.rms), fixed_literals(cal.program, idx).text)
        if best is None:
            return text, rms
        expr, rms, text = best


#: A candidate whose best reading misfits the records by more than this many times the table's
#: tolerance is also read with its sign flipped (:func:`_flipped_reading`).
FLIP_ABOVE = 3.0


def _flipped_readings(expressions: list[str], names: tuple[str, ...], so: Any, reqs: list,
                      series: np.ndarray) -> list[tuple[str, float] | None]:
    """Each candidate negated, its fitted literals refitted through the simulator (all at once):
    ``(text, rms)``, or ``None`` where it has no fitted literal or the simulator cannot run it.

    A derived table's sign is a constant law's reading of each record: where the reading hides the
    law's sign (an energy, a magnitude, an angle that a constant law reproduces either way), the
    table can carry the opposite sign, and a refit cannot cross zero (``calibrate`` keeps each
    constant's sign). The caller keeps the negated reading where it explains the records better
    than the candidate's (by more than a factor 1.5).
    """
    from etc_fast.expr import parse

    out: list[tuple[str, float] | None] = [None] * len(expressions)
    todo = []
    for j, expression in enumerate(expressions):
        try:
            freed, idx = free_literals(parse(f"-({expression})", names))
        except Exception:  # noqa: BLE001, S112 - a reading the simulator cannot run is not taken
            continue
        if idx:
            todo.append((j, freed, idx))
    for (j, _, idx), ref in zip(todo, calibrated_all([f for _, f, _ in todo], so, reqs, series, max_nfev=60)):
        if ref is not None and math.isfinite(ref.rms):
            out[j] = (fixed_literals(ref.program, idx).text, float(ref.rms))
    return out


def simulated_rank(res: SearchResult, obs: Any, names: tuple[str, ...], top: int = 6,
                   limits: SearchLimits | None = None) -> list[tuple[Candidate, str, float]]:
    """The search's best candidates refitted and ranked through the public forward model.

    The readings of each candidate are simulated against the records: as it is; with its own
    fitted constants refitted through the simulator (the table's values are effective ones, off
    where the law's inputs change during a record), and where that still misfits the records by
    more than ``FLIP_ABOVE`` times the table's tolerance, negated and refitted
    (:func:`_flipped_reading`); with a free scale ``K`` (``calibrate``). A reading with more freedom is kept only when it improves the records' misfit by more than a
    factor 1.5 over the simpler one; the rank is the search's score with the table error replaced by
    the records' rms misfit. The leaders (at most ``limits.rank_simplified``; ``limits``:
    :class:`SearchLimits`, its defaults when ``None``) then get their literals shortened and their
    unneeded terms pruned. Returns ``(candidate, expression, rms)``, best first.
    """
    from etc_fast.expr import parse

    so = obs.system
    reqs, series = list(so.requests), np.asarray(so.series)
    # the laws that explain the records about as well as the best (an apparatus with random draws
    # has a misfit floor of its own) are simplified where the records allow
    floor = max(res.tol, 1e-9)
    # each reading below is fitted for every candidate at once (calibrated_all)
    cands, progs = [], []
    for cand in res.candidates[:top]:
        try:
            progs.append(parse(cand.expression, names))
        except Exception:  # noqa: BLE001, S112 - a candidate the simulator cannot run is skipped
            continue
        cands.append(cand)
    plains = calibrated_all(progs, so, reqs, series, max_nfev=200)
    kept = [(c, p, cal) for c, p, cal in zip(cands, progs, plains) if cal is not None]
    best = [(c.expression, float(cal.rms) if math.isfinite(cal.rms) else math.inf) for c, _, cal in kept]
    # with the candidate's fitted literals refitted through the simulator
    freed = [free_literals(p) for _, p, _ in kept]
    with_idx = [j for j, (_, idx) in enumerate(freed) if idx]
    for j, ref in zip(with_idx, calibrated_all([freed[j][0] for j in with_idx], so, reqs, series, max_nfev=60)):
        if ref is not None and math.isfinite(ref.rms) and 1.5 * ref.rms + 1e-9 < best[j][1]:
            best[j] = (fixed_literals(ref.program, freed[j][1]).text, float(ref.rms))
    # negated, where the best reading still misfits the records
    flips = [j for j in with_idx if best[j][1] > FLIP_ABOVE * floor]
    flipped = _flipped_readings([kept[j][0].expression for j in flips], names, so, reqs, series)
    for j, fl in zip(flips, flipped):
        if fl is not None and 1.5 * fl[1] + 1e-9 < best[j][1]:
            best[j] = fl
    # with a free scale K
    scaled = []
    for j in range(len(kept)):
        try:
            scaled.append(parse(f"K * ({best[j][0]})", names))
        except Exception:  # noqa: BLE001 - no scaled reading of this one
            scaled.append(None)
    fits = iter(calibrated_all([p for p in scaled if p is not None], so, reqs, series, max_nfev=40))
    out = []
    for j, (cand, _, _) in enumerate(kept):
        best_text, best_rms = best[j]
        cal = next(fits) if scaled[j] is not None else None
        if cal is not None and math.isfinite(cal.rms) and 1.5 * cal.rms + 1e-9 < best_rms:
            k = float(cal.program.consts[list(cal.program.const_names).index("K")])
            best_text, best_rms = f"({k!r}) * ({best_text})", float(cal.rms)
        if math.isfinite(best_rms):
            out.append((cand, best_text, best_rms))

    def score(t: tuple[Candidate, str, float]) -> float:
        return math.log10(max(t[2], floor)) + COMPLEXITY_WEIGHT * t[0].complexity

    out.sort(key=score)
    if out:  # the leaders by the rank's own score, within 10x of the best misfit
        lead = min(r for _, _, r in out)
        lim = SearchLimits() if limits is None else limits
        for i in range(min(lim.rank_simplified, len(out))):
            cand, text, rms = out[i]
            if rms > SIMPLIFY_WITHIN * lead:
                continue
            short = short_literals(parse(text, names), so, reqs, series, rms, lim)
            if short is not None:
                text, rms = short
            out[i] = (cand, *pruned_terms(text, names, so, reqs, series, rms, lim))
        out.sort(key=score)
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


def table_factor(table: Any, rows: np.ndarray, exponents: np.ndarray) -> float | None:
    """The factor ``K`` of ``K * prod x**p`` read from the derived table (median of ``y / prod x**p``)."""
    X, y = table.X[rows], table.y[rows]
    with np.errstate(all="ignore"):
        r = y / np.prod(X ** np.asarray(exponents)[None], axis=1)
    r = r[np.isfinite(r) & (r != 0)]
    if not r.size or not (np.all(r > 0) or np.all(r < 0)):
        return None
    return float(np.sign(r[0]) * np.exp(np.median(np.log(np.abs(r)))))


def power_law_candidates(obs: Any, table: Any, rows: np.ndarray) -> list[tuple[str, float, float]]:
    """Power laws fitted to the records through the public forward model (the interpreter's analysis).

    The continuous fit (factor and every exponent free, started from the table's log-linear fit),
    then its exponents snapped to halves and to integers with the factor refitted. Returns
    ``(expression, relative rms misfit, complexity)``.
    """
    from etc_fast.systems import (
        PRECISION,
        fit_power_law,
        power_law_rms,
        refit_factors,
    )

    so = obs.system
    reqs, series = list(so.requests), np.asarray(so.series)
    start = loglinear_exponents(table, rows)
    fit = fit_power_law(so.module, so.system, reqs, series, start=start)
    if fit is None or not np.all(np.isfinite(fit.exponents)):
        return []
    out = [(fit.expression, fit.rms * PRECISION, _power_complexity(fit.exponents) + 3.0)]
    seen = set()
    # snapped exponents of the continuous fit and of its start: a fit through a record that runs
    # away (a body that falls in) can stall near its start, whose snapped exponents may be right
    bases = [fit.exponents] + ([] if start is None or not np.all(np.isfinite(start)) else [np.asarray(start)])
    snaps = []
    for base, step in itertools.product(bases, (0.5, 1.0)):
        snap = np.round(base / step) * step
        key = tuple(snap.tolist())
        if key in seen:
            continue
        seen.add(key)
        # factor starts: the table's reading and the continuous fit's (its sign may differ from the
        # table's, whose constant-law reading of a record's start can miss a sign the record hides)
        k0s = [k for k in (table_factor(table, rows, snap), fit.K) if k is not None and math.isfinite(k) and k != 0]
        snaps.append((snap, list(dict.fromkeys(k0s))))
    refits = iter(refit_factors(so.module, so.system, reqs, series, [(snap, k0) for snap, k0s in snaps for k0 in k0s]))
    for snap, k0s in snaps:
        g = min((next(refits) for _ in k0s), key=lambda f: f.rms if math.isfinite(f.rms) else math.inf, default=None)
        if g is None:
            continue
        short = float(f"{g.K:.3g}")  # a factor that is a short number when the records allow it
        if short != g.K and math.isfinite(g.rms):
            h = power_law_rms(so.module, so.system, reqs, series, short, snap)
            if h.rms <= 1.5 * g.rms + 1e-3:
                g = h
        if math.isfinite(g.rms):
            out.append((g.expression, g.rms * PRECISION, _power_complexity(snap)))
    return out
