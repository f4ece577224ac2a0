"""Law forms scanned through the simulator: the laws a derived table cannot show (docs/guide/offline-agent.md).

A derived law table (:mod:`etc_fast.systems._derive`) reads each record as if one constant law
value produced it. Where an apparatus calls the law more than once with different inputs (a second
interface fed the first one's angle, two polarizer stages, a ratio of two samples), no constant
reproduces the record and the table's rows are not law samples, so the grammar search on them finds
nothing that explains the records.

:func:`monomial_scan` asks the simulator directly. It simulates the forms ``outer(K * M)`` for
every outer transform of the grammar that takes a monomial and every monomial ``M`` of the
grammar's atoms (each input; sine and cosine of an angle) with exponents on a small grid, at a grid
of factors ``K``, and keeps the forms that reproduce the records best. Those are refitted through
the simulator, all of them in lockstep (``calibrate_many``: ``K`` and every exponent free), their
exponents are snapped to halves and their constants written shorter (0 where no reading sees
one) where the records allow it. Every count is fixed (grid sizes, ``SearchLimits.scan_cells``,
``SearchLimits.scan_refine``), so the result depends only on the records.

The policy runs it only where none of its ranked laws explains the records (``SCAN_ABOVE`` times
the floor), so a trial whose table works is not touched, and it keeps each scan's forms across the
trial's decisions (:class:`KeptScans`): on new records they are re-scored, and the scan runs again
only where the best of them stops explaining the records as it did. Nothing here names a module or
reads the hidden law.
"""

from __future__ import annotations

import functools
import hashlib
import itertools
import json
import math
from collections.abc import Callable, Sequence
from typing import Any, NamedTuple

import numpy as np

from etc_fast.policies.symbolic._grammar import OUTERS, Atom, VariableDomain, exponent_cost, make_atoms
from etc_fast.policies.symbolic._incremental import array_digest
from etc_fast.policies.symbolic._search import SearchLimits
from etc_fast.policies.symbolic._systems import EVIDENCE_RMS_FACTOR, UNSEEN
from etc_fast.policies.symbolic._units import ASSUMED_NOISE, DECISIVE_RATIO

__all__ = ["SCAN_ABOVE", "KeptScans", "exp_scan", "monomial_scan"]

#: The scan runs when the best ranked law misfits the records decisively (a decade,
#: :data:`._units.DECISIVE_RATIO`) more than the floor.
SCAN_ABOVE = DECISIVE_RATIO
#: A scan whose best form misfits the records decisively more than the relative noise the agent
#: assumes in a noisy lab (10%: a decade above 1%) found no law of its family; :class:`KeptScans`
#: re-scores its forms on later records of the same apparatus and does not scan again.
NO_LAW = DECISIVE_RATIO * ASSUMED_NOISE
#: Exponent grids: an input, an angle input that also has trigonometric atoms, a sine or cosine.
RAW_EXPONENTS = (-2.0, -1.0, 0.0, 1.0, 2.0)
ANGLE_EXPONENTS = (0.0, 1.0)
TRIG_EXPONENTS = (-1.0, 0.0, 1.0)
#: The smaller grid used when the full one would pass ``SearchLimits.scan_cells``.
SMALL_RAW_EXPONENTS = (-1.0, 0.0, 1.0)
#: Factors ``K`` of the scan: both signs, 1e-4 .. 1e4 in decades.
SCAN_FACTORS = np.concatenate([-(10.0 ** np.arange(4.0, -4.01, -1.0)), 10.0 ** np.arange(-4.0, 4.01, 1.0)])
#: Exponents within SNAP_CLOSE of a multiple of SNAP_STEP are snapped to it where the snapped law
#: (the other constants refitted) explains the records as well. The step is the grammar's
#: half-integer exponent grid; an exponent decisively nearer one of its points than the grid's
#: spacing (a decade nearer, :data:`._units.DECISIVE_RATIO`) is tried there.
SNAP_STEP = 0.5
SNAP_CLOSE = SNAP_STEP / DECISIVE_RATIO
#: A snapped law may misfit the records by this factor more than the refitted one (and by
#: ``UNSEEN``, what 7 printed digits cannot resolve, at least): the factor a rounded law may lose,
#: :data:`._systems.EVIDENCE_RMS_FACTOR`.
SNAP_FACTOR = EVIDENCE_RMS_FACTOR


def _fn(name: str) -> str:
    return name


def _grids(atoms: Sequence[Atom], small: bool) -> list[tuple[float, ...]]:
    trig_vars = {a.var for a in atoms if a.kind in ("sin", "cos")}
    out: list[tuple[float, ...]] = []
    for a in atoms:
        if a.kind in ("sin", "cos"):
            out.append(TRIG_EXPONENTS)
        elif a.var in trig_vars:
            out.append(ANGLE_EXPONENTS)
        else:
            out.append(SMALL_RAW_EXPONENTS if small else RAW_EXPONENTS)
    return out


def _power(base: str, p: Any) -> str:
    """``base**p``: ``p`` a number (1 is left out) or a constant's name."""
    if isinstance(p, str):
        return f"{base}**{p}"
    return base if p == 1.0 else f"{base}**{float(p)!r}"


def _monomial(atoms: Sequence[Atom], exps: Sequence[Any], factor: Any) -> str:
    """``factor * prod atom**p`` (zero exponents left out; ``factor`` a number or a name)."""
    parts = [factor if isinstance(factor, str) else repr(float(factor))]
    parts += [_power(a.render(_fn), p) for a, p in zip(atoms, exps) if isinstance(p, str) or p != 0.0]
    return "*".join(parts)


def _rms(r: np.ndarray) -> np.ndarray:
    """float64[k]: the rms of each row of residuals ``r`` [k, cells] (inf without cells; a huge
    finite residual squares to inf: a misfit of inf)."""
    with np.errstate(over="ignore"):
        return np.sqrt(np.mean(r * r, axis=1)) if r.shape[1] else np.full(len(r), np.inf)


def _seen(rms: np.ndarray) -> np.ndarray:
    """A misfit as the refinements compare it: 1e3 and above (a residual counted as 1e3, a
    simulation that failed) is inf."""
    return np.where(rms < 1e3, rms, np.inf)


class _Records:
    """The records and the misfit of simulated ones (``calibrate``'s residuals, as rms per program)."""

    def __init__(self, so: Any, chunk: int) -> None:
        from etc_fast.systems._forward import controls_matrix
        from etc_fast.systems._planning import record_scale
        from etc_fast.systems._spec import spec

        self.so = so
        self.chunk = chunk  # programs per forward-model call (SearchLimits.scan_chunk)
        self.reqs = list(so.requests)
        self.series = np.asarray(so.series, dtype=np.float64)
        self.C = controls_matrix(spec(so.module, so.system), self.reqs)
        self.mask, self.den = record_scale(self.series)

    @property
    def cells(self) -> int:
        return int(np.prod(self.series.shape))

    def residuals(self, program: Any, consts: np.ndarray) -> np.ndarray:
        """float64[k, cells]: the relative residuals of ``program`` at each row of ``consts`` on the
        finite records (``calibrate``'s: a non-finite one counts as 1e3)."""
        from etc_fast.systems._forward import pack_family, predict
        from etc_fast.systems._planning import relative_residuals
        from etc_fast.systems._quiet import quiet

        with quiet():
            sims = predict(self.so.module, self.so.system, pack_family(program, consts), self.C)
            return relative_residuals(sims, self.series, self.mask, self.den)

    def rms(self, program: Any, consts: np.ndarray) -> np.ndarray:
        """float64[k]: the records' rms misfit of ``program`` at each row of ``consts``."""
        out = np.empty(len(consts))
        for lo in range(0, len(consts), self.chunk):
            out[lo:lo + self.chunk] = _rms(self.residuals(program, consts[lo:lo + self.chunk]))
        return out

    def text_rms(self, text: str, names: Sequence[str]) -> float:
        """The misfit of ``text`` as written (no constant refitted); inf where it cannot run."""
        from etc_fast.expr import parse

        try:
            prog = parse(text, list(names))
        except ValueError:
            return math.inf
        return float(_seen(self.rms(prog, prog.consts[None]))[0])


def _short_values(v: float, factor: bool) -> list[float]:
    """Shorter writings of a fitted ``v`` to try, simplest first: for a factor 1 and -1 (a factor
    the records do not see, as in a ratio of two law values, is written as 1), for any other
    constant 0 (an exponent or a rate the records do not see: a fitted ``-5.8e-17`` is the
    optimizer's stopping point, whose digits a CPU's last bits move), then ``v`` to 3 significant
    digits."""
    out = [1.0, -1.0] if factor else [0.0]
    out.append(float(f"{v:.3g}"))
    return [x for x in dict.fromkeys(out) if x != v]


class _Refit(NamedTuple):
    """One form to refit: ``build(values)`` writes it (a value is a number or, to fit it, its own
    name); ``start`` the constants fitted and their starts; ``held`` the program's other scan
    constants (an exponent 0 leaves its atom out); ``exponents`` and ``factors`` the fitted ones
    that are snapped and written simply."""

    build: Callable[[dict[str, Any]], str]
    start: dict[str, float]
    held: dict[str, float]
    exponents: Sequence[str]
    factors: Sequence[str]


def _fit_many(prog: Any, forms: Sequence[_Refit], recs: _Records) -> list[tuple[dict[str, float], float] | None]:
    """Every form's constants refitted through the simulator from its start, then written simply.

    All forms are constant tables of the one program ``prog`` (whose named constants include every
    key), so the fits run together (:func:`etc_fast.systems.calibrate_many`: one forward-model call
    per step for all of them). After the refit, the exponents within :data:`SNAP_CLOSE` of a
    multiple of :data:`SNAP_STEP` are snapped (the rest refitted), and then each constant is tried
    shorter (:func:`_short_values`); each step is kept where the law still explains the records
    within ``SNAP_FACTOR * max(rms, UNSEEN)``, and a constant written 0 only where no simulated
    reading moves by more than ``UNSEEN`` of its residual's scale. Returns ``(values, rms)`` per form, or ``None``
    where the fit has no finite misfit.
    """
    cn = list(prog.const_names)

    def table(f: _Refit, vals: dict[str, float]) -> np.ndarray:
        v = prog.consts.copy()
        for k, x in {**f.held, **vals}.items():
            v[cn.index(k)] = x
        return v

    def freed(keys: Sequence[str]) -> np.ndarray:
        m = np.zeros(len(cn), dtype=bool)
        m[[cn.index(k) for k in keys]] = True
        return m

    def fitted(tables: list[np.ndarray], frees: list[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
        from etc_fast.systems import calibrate_many

        try:
            fits = calibrate_many(prog, recs.so.module, recs.so.system, recs.reqs, recs.series, np.array(tables),
                                  np.array(frees), max_nfev=60)
            return fits.fitted, fits.rms
        except ValueError:  # a form the simulator cannot run is not a candidate
            return np.array(tables), np.full(len(tables), np.nan)

    def misfit(tables: list[np.ndarray]) -> np.ndarray:
        return _seen(recs.rms(prog, np.array(tables))) if tables else np.zeros(0)

    out: list[tuple[dict[str, float], float] | None] = [None] * len(forms)
    if not forms:
        return out
    V, r = fitted([table(f, f.start) for f in forms], [freed(list(f.start)) for f in forms])
    state: dict[int, tuple[dict[str, float], float]] = {}
    for i, f in enumerate(forms):
        if math.isfinite(r[i]):
            state[i] = ({k: float(V[i, cn.index(k)]) for k in f.start}, float(r[i]))
    # exponents near a multiple of SNAP_STEP: snapped, the rest refitted (all such forms at once)
    snaps: dict[int, dict[str, float]] = {}
    for i, (vals, _) in state.items():
        snapped = {k: float(np.round(vals[k] / SNAP_STEP) * SNAP_STEP) for k in forms[i].exponents
                   if abs(vals[k] - np.round(vals[k] / SNAP_STEP) * SNAP_STEP) <= SNAP_CLOSE and vals[k] % SNAP_STEP != 0.0}
        if snapped:
            snaps[i] = snapped
    refit = [i for i in snaps if len(snaps[i]) < len(state[i][0])]
    if refit:
        V2, r2 = fitted([table(forms[i], {**state[i][0], **snaps[i]}) for i in refit],
                        [freed([k for k in state[i][0] if k not in snaps[i]]) for i in refit])
        for j, i in enumerate(refit):
            vals, rms = state[i]
            if math.isfinite(r2[j]) and r2[j] <= SNAP_FACTOR * max(rms, UNSEEN):
                rest = {k: float(V2[j, cn.index(k)]) for k in vals if k not in snaps[i]}
                state[i] = ({**snaps[i], **rest}, float(r2[j]))
    whole = [i for i in snaps if len(snaps[i]) == len(state[i][0])]
    for i, r_s in zip(whole, misfit([table(forms[i], snaps[i]) for i in whole])):
        if r_s <= SNAP_FACTOR * max(state[i][1], UNSEEN):
            state[i] = (dict(snaps[i]), float(r_s))
    # each constant in turn written shorter, the first shorter value that still explains the records
    order = {i: list(vals) for i, (vals, _) in state.items()}
    for pos in range(max((len(o) for o in order.values()), default=0)):
        trials = []
        for i, keys in order.items():
            if pos < len(keys):
                k = keys[pos]
                vals = state[i][0]
                trials += [(i, k, short) for short in _short_values(vals[k], k in forms[i].factors)]
        # a constant written 0 must leave every simulated reading as it was (within UNSEEN of the
        # residuals' scale): it is one the records do not see, whatever the law's misfit
        zeroed = sorted({i for i, k, short in trials if short == 0.0 and k not in forms[i].factors})
        R = recs.residuals(prog, np.array([table(forms[i], {**state[i][0], k: short}) for i, k, short in trials]
                                          + [table(forms[i], state[i][0]) for i in zeroed])) if trials else np.zeros((0, 0))
        now = dict(zip(zeroed, R[len(trials):]))
        scores = _seen(_rms(R[:len(trials)]))
        decided: set[int] = set()
        for (i, k, short), r, r_s in zip(trials, R, scores.tolist()):
            if i in decided:
                continue
            vals, rms = state[i]
            if short == 0.0 and i in now:
                keep = bool(np.max(np.abs(r - now[i]), initial=0.0) <= UNSEEN)
            else:
                keep = r_s <= SNAP_FACTOR * max(rms, UNSEEN)
            if keep:
                state[i] = ({**vals, k: short}, r_s)
                decided.add(i)
    for i, st in state.items():
        out[i] = st
    return out


def _scan(recs: _Records, program: Any, columns: list[int], rows: np.ndarray) -> np.ndarray:
    """The records' misfit of ``program`` with its constants ``columns`` set to each row of ``rows``."""
    consts = np.repeat(program.consts[None], len(rows), axis=0)
    consts[:, columns] = rows
    return recs.rms(program, consts)


def _closed_form(so: Any) -> bool:
    """Whether the apparatus is a closed form (no trajectory integrated). A trajectory calls the
    law continuously along one path, so the derived table's effective inputs are law samples, and a
    scan would pay an integration per program."""
    from etc_fast.systems._registry import definition

    return definition(so.module, so.system).kernel is None


def _tag(names: Sequence[str]) -> str:
    """A prefix for the scans' own constants that no law input's name starts with (an input may
    be called ``q1`` or ``K``)."""
    tag = "s"
    while any(n.startswith(tag) for n in names):
        tag += "s"
    return tag


def _columns(program: Any, keys: Sequence[str]) -> list[int]:
    cn = list(program.const_names)
    return [cn.index(k) for k in keys]


def _monomial_build(v: dict[str, Any], outer: Any, atoms: Sequence[Atom], used: Sequence[int], pk: Sequence[str],
                    fk: str) -> str:
    """``outer(K * prod atom**p)`` over the ``used`` atoms (a value a number or its name)."""
    return outer.render(_monomial([atoms[j] for j in used], [v[pk[j]] for j in used], v[fk]), _fn)


def monomial_scan(obs: Any, domains: Sequence[VariableDomain], output_unit: str | None,
                  limits: SearchLimits | None = None) -> list[tuple[str, float, float]]:
    """The forms ``outer(K * M)`` that reproduce the records best, fitted through the simulator.

    ``outer``: each transform of the grammar that takes a monomial (the angle ones in the output's
    unit); ``M``: the grammar's atoms with exponents on :func:`_grids`; ``K`` on
    :data:`SCAN_FACTORS`. Returns ``(expression, records rms misfit, complexity)`` of the best
    ``limits.scan_refine`` forms after :func:`_fit_many`; empty where even the small grid would pass
    ``limits.scan_cells`` (``limits``: :class:`SearchLimits`, its defaults when ``None``).
    """
    from etc_fast.expr import parse

    lim = SearchLimits() if limits is None else limits
    if not _closed_form(obs.system):
        return []
    recs = _Records(obs.system, lim.scan_chunk)
    names = [d.name for d in domains]
    atoms = [a for per in make_atoms(domains) for a in per]
    if not recs.mask.any() or not atoms:
        return []
    outers = [o for o in OUTERS if o.allows_monomial and (output_unit == "deg" or not o.degrees_output)]
    grid = None
    for small in (False, True):
        g = list(itertools.product(*_grids(atoms, small)))
        if len(g) * len(SCAN_FACTORS) * len(outers) * recs.cells <= lim.scan_cells:
            grid = np.array(g, dtype=np.float64)
            break
    if grid is None:
        return []
    tag = _tag(names)
    fk, pk = f"{tag}K", [f"{tag}p{j}" for j in range(len(atoms))]
    keys = [fk, *pk]
    scored = []
    # row (e, k) is [k, *grid[e]], e major: the order of the grid's points and then the factors
    block = np.empty((len(grid), len(SCAN_FACTORS), 1 + grid.shape[1]))
    block[:, :, 0] = SCAN_FACTORS[None, :]
    block[:, :, 1:] = grid[:, None, :]
    rows = block.reshape(-1, 1 + grid.shape[1])
    progs = [parse(outer.render(_monomial(atoms, pk, fk), _fn), names) for outer in outers]
    for oi, prog in enumerate(progs):
        rms = _scan(recs, prog, _columns(prog, keys), rows).reshape(len(grid), len(SCAN_FACTORS))
        best = np.argmin(rms, axis=1)  # the first of equals: a fixed order
        scored += [(float(rms[gi, best[gi]]), oi, gi, float(SCAN_FACTORS[best[gi]])) for gi in range(len(grid))
                   if rms[gi, best[gi]] < 1e3]
    scored.sort(key=lambda t: (t[0], t[1], t[2]))
    # the best forms refitted, those of one outer transform together (one program each)
    picked = scored[:lim.scan_refine]
    fits: dict[int, tuple[dict[str, float], float] | None] = {}
    for oi in sorted({t[1] for t in picked}):
        mine = [n for n, t in enumerate(picked) if t[1] == oi]
        forms = []
        for n in mine:
            exps = grid[picked[n][2]]
            used = [j for j in range(len(atoms)) if exps[j] != 0.0]
            forms.append(_Refit(functools.partial(_monomial_build, outer=outers[oi], atoms=atoms, used=used, pk=pk, fk=fk),
                                {fk: picked[n][3], **{pk[j]: float(exps[j]) for j in used}},
                                {pk[j]: 0.0 for j in range(len(atoms)) if j not in used},
                                [pk[j] for j in used], [fk]))
        fits.update(zip(mine, _fit_many(progs[oi], forms, recs)))
    out = []
    for n, (_, oi, gi, _) in enumerate(picked):
        fit = fits[n]
        if fit is None:
            continue
        vals, r = fit
        outer, exps = outers[oi], grid[gi]
        used = [j for j in range(len(atoms)) if exps[j] != 0.0]
        cx = outer.cost + 1.0 + sum(1.0 + atoms[j].cost + exponent_cost(vals[pk[j]]) for j in used if vals[pk[j]] != 0.0)
        out.append((_monomial_build(vals, outer, atoms, used, pk, fk), r, cx))
    return out


#: The exponential scan ``K * M1 * exp(g * M2)``: prefactor exponents, argument exponents, and the
#: factor and rate grids (both signs, 1e-3 .. 1e3 in decades); ``SearchLimits.exp_scan_inputs``
#: bounds the inputs in the argument.
EXP_PREFIX_EXPONENTS = (0.0, 1.0)
EXP_ARG_EXPONENTS = (0.5, 1.0, 1.5, 2.0)
EXP_GRID = np.concatenate([-(10.0 ** np.arange(3.0, -3.01, -1.0)), 10.0 ** np.arange(-3.0, 3.01, 1.0)])
#: The complexity of the exponential and its rate.
EXP_COST = 2.0


def exp_scan(obs: Any, domains: Sequence[VariableDomain],
             limits: SearchLimits | None = None) -> list[tuple[str, float, float]]:
    """The forms ``K * M1 * exp(g * M2)`` that reproduce the records best, fitted through the simulator.

    ``M1`` is a product of the inputs (exponents 0 or 1), ``M2`` a monomial of at most
    ``limits.exp_scan_inputs`` inputs (exponents 0.5 to 2), ``K`` and ``g`` on :data:`EXP_GRID`. The
    best ``limits.exp_scan_refine`` structures go through :func:`_fit_many`. Returns ``(expression,
    records rms misfit, complexity)``; empty where the grid would pass ``limits.scan_cells``
    (``limits``: :class:`SearchLimits`, its defaults when ``None``).
    """
    from etc_fast.expr import parse

    lim = SearchLimits() if limits is None else limits
    if not _closed_form(obs.system):
        return []
    recs = _Records(obs.system, lim.scan_chunk)
    names = [d.name for d in domains]
    atoms = [a for per in make_atoms(domains) for a in per if a.kind == "raw"]
    d = len(atoms)
    if not recs.mask.any() or not d:
        return []
    prefixes = list(itertools.product(EXP_PREFIX_EXPONENTS, repeat=d))
    args: list[tuple[float, ...]] = []
    for k in range(1, min(lim.exp_scan_inputs, d) + 1):
        for sub in itertools.combinations(range(d), k):
            for es in itertools.product(EXP_ARG_EXPONENTS, repeat=k):
                at = dict(zip(sub, es))
                args.append(tuple(at.get(j, 0.0) for j in range(d)))
    structures = [(p, q) for p in prefixes for q in args]
    if len(structures) * len(EXP_GRID) ** 2 * recs.cells > lim.scan_cells:
        return []
    tag = _tag(names)
    fk, gk = f"{tag}K", f"{tag}g"
    pk, qk = [f"{tag}p{j}" for j in range(d)], [f"{tag}q{j}" for j in range(d)]

    def build(v: dict[str, Any], up: Sequence[int], uq: Sequence[int]) -> str:
        head = _monomial([atoms[j] for j in up], [v[pk[j]] for j in up], v[fk])
        if isinstance(v[gk], float) and v[gk] == 0.0:  # a rate written 0: no exponential
            return head
        arg = _monomial([atoms[j] for j in uq], [v[qk[j]] for j in uq], v[gk])
        return f"{head}*exp({arg})"

    everything = list(range(d))
    prog = parse(build({k: k for k in [fk, gk, *pk, *qk]}, everything, everything), names)
    # row (s, g, K) is [K, g, *p, *q] of structure s = (p, q): structures, then g, then K
    n_grid = len(EXP_GRID)
    cube = np.empty((len(structures), n_grid, n_grid, 2 + 2 * d))
    cube[:, :, :, 0] = EXP_GRID[None, None, :]
    cube[:, :, :, 1] = EXP_GRID[None, :, None]
    cube[:, :, :, 2:] = np.array([[*p, *q] for p, q in structures], dtype=np.float64)[:, None, None, :]
    rows = cube.reshape(-1, 2 + 2 * d)
    rms = _scan(recs, prog, _columns(prog, [fk, gk, *pk, *qk]), rows).reshape(len(structures), -1)
    best = np.argmin(rms, axis=1)  # the first of equals: a fixed order
    order = sorted(range(len(structures)), key=lambda i: (float(rms[i, best[i]]), i))
    picked = []
    for i in order[:lim.exp_scan_refine]:
        if not rms[i, best[i]] < 1e3:
            break
        picked.append(i)
    forms = []
    for i in picked:
        p, q = structures[i]
        up, uq = [j for j in everything if p[j]], [j for j in everything if q[j]]
        g, K = float(EXP_GRID[best[i] // len(EXP_GRID)]), float(EXP_GRID[best[i] % len(EXP_GRID)])
        forms.append(_Refit(functools.partial(build, up=up, uq=uq),
                            {fk: K, gk: g, **{pk[j]: p[j] for j in up}, **{qk[j]: q[j] for j in uq}},
                            {**{pk[j]: 0.0 for j in everything if not p[j]}, **{qk[j]: 0.0 for j in everything if not q[j]}},
                            [pk[j] for j in up] + [qk[j] for j in uq], [fk]))
    out = []
    for f, fit in zip(forms, _fit_many(prog, forms, recs)):
        if fit is None:
            continue
        vals, r = fit
        inner = () if vals[gk] == 0.0 else qk  # a rate written 0 leaves no exponential
        cx = 1.0 + (EXP_COST if vals[gk] != 0.0 else 0.0) + sum(
            1.0 + exponent_cost(vals[k]) for k in (*pk, *inner) if k in vals and vals[k] != 0.0)
        out.append((f.build(vals), r, cx))
    return out


class _Kept(NamedTuple):
    """One scan's state: the apparatus and inputs it ran for, its forms, their best misfit then,
    and the experiments it read (their count and :func:`_records_digest`)."""

    key: tuple
    forms: list[tuple[str, float, float]]
    best: float
    n: int
    digest: str


class KeptScans:
    """The forms of one trial's scans, re-used while they still explain the records.

    A scan is a fixed grid refitted through the simulator, seconds of forward-model calls, and an
    apparatus whose records no ranked law explains (a reading with its own random loss, a noisy
    difference of two samples) asks for it at every decision. :meth:`forms` runs a scan the first
    time; afterwards it re-scores the forms the last run found on the records as they are now (their
    constants as fitted, one forward-model call each) and runs the scan again only where the best
    re-scored misfit exceeds ``SNAP_FACTOR * max(m, UNSEEN)``, ``m`` the best misfit when the scan
    last ran: the test the scan's own simplifications use for "explains the records as well". The
    reference is the scan's, not the last re-score's, so a slow drift cannot pass the test step by
    step. A scan whose best misfit was above :data:`NO_LAW` found no law of its family: more
    records of the same apparatus cannot put one in it, so its forms are re-scored and it is not run
    again. Only records that extend the ones the scan read (the same first experiments, the same
    readings) re-use it; a scan that found nothing runs again. Where the test passes, the answer
    can differ from a scan from scratch only by what the new records would move: the kept
    constants are not refitted (docs/guide/offline-agent.md, "On simulated systems").
    """

    def __init__(self) -> None:
        self._kept: dict[str, _Kept] = {}
        #: Scans run and scans answered by their kept forms, for tests and profiles.
        self.runs = 0
        self.reuses = 0

    def forms(self, name: str, obs: Any, domains: Sequence[VariableDomain],
              scan: Callable[[], list[tuple[str, float, float]]]) -> list[tuple[str, float, float]]:
        """``scan()``'s forms ``(expression, records rms misfit, complexity)``, or the kept ones re-scored."""
        so = obs.system
        key = (so.module, so.system, tuple(d.name for d in domains))
        kept = self._kept.get(name)
        if (kept is not None and kept.key == key and kept.forms and len(so.requests) >= kept.n
                and _records_digest(so, kept.n) == kept.digest):  # the records the scan read, extended
            recs = _Records(so, 1)  # one program per call: the kept forms as written
            names = [d.name for d in domains]
            again = [(text, recs.text_rms(text, names), cx) for text, _, cx in kept.forms]
            if kept.best > NO_LAW or min(r for _, r, _ in again) <= SNAP_FACTOR * max(kept.best, UNSEEN):
                self.reuses += 1
                return again
        out = scan()
        self.runs += 1
        n = len(so.requests)
        self._kept[name] = _Kept(key, list(out), min((r for _, r, _ in out), default=math.inf), n, _records_digest(so, n))
        return out


def _records_digest(so: Any, n: int) -> str:
    """SHA-256 of the first ``n`` experiments: their controls and their records (hashed as the
    policy's system-search key hashes them)."""
    h = hashlib.sha256(json.dumps(list(so.requests)[:n], sort_keys=True, default=repr).encode())
    return array_digest(np.asarray(so.series, dtype=np.float64)[:n], h=h)
