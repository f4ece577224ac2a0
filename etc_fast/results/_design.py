"""A study's design read before its run: power per cell and time per part, from stored studies.

``python -m etc_fast.results design CONFIG`` (docs/howto/equal-budget.md#a-pre-registered-design).

*Variance components.* Each stored study (``results/*.json``) holds, per module (a law family) and
configuration, its trials and credited trials (the ``modules`` table). A study whose trials lie in
one tier (equations, or the two simulated systems) and one noise class (noiseless, or noisy: 0.1%
and 1% pooled, as the noise study pools them) gives, for every configuration of the design that
it ran beside the reference (``random_c``) on the same trials per module, the module differences
``d_c = pA_c - pB_c``. Then ``between = max(0, var(d_c) - mean_c v_c)`` (``v_c`` the binomial
variance of ``d_c``) and ``within = mean_c (pA_c (1 - pA_c) + pB_c (1 - pB_c))``, a trial pair's
variance (a module's law heterogeneity included, so at least the law's own). A class averages its
pairs (as ``power.md`` does); a class no stored study covers borrows, component by component, the
larger of the same tier's other noise class and the other tier's same noise class.

*Power.* A cell of the design (tier x noise x budget) compares every configuration with the
reference; the pooled paired difference has the variance of
:func:`etc_fast.report.design_variance` with ``between`` taken for the family level and,
as large again, for laws within a family (the stored modules cannot split the two), and
:func:`etc_fast.report.detectable_difference` gives the difference found with 80% power at
two-sided 5%, Holm over the cell's comparisons. The family: the module (NewtonBench, both tiers),
the generated class (generated laws), the law itself (a custom task file).

*Time.* Seconds per trial (wall, two workers) of the stored study closest to each suite and noise
class (:data:`TIMING_SOURCES`), from its provenance (``ended - started`` over its trials); a suite
and noise class without its own study scales the noiseless one by the NewtonBench noisy/noiseless
ratio. Uncapped studies: a budget only shortens a trial, so the estimate is an upper bound.
With a run of the design (``--run RUN_DIR``) its own finished trials time the rest instead: per
suite, noise class and input count of the law (laws of many inputs cost far more: on the generated
suite 10 to 30 times a law of one or two), the mean of their ``wall_s`` (a trial's play and judge
on one worker) divided by the workers. An input count the run has not reached in a suite and noise
class takes the nearest one it has (the larger of two as near), and the suite's row says which
counts were borrowed; a suite and noise class it has not reached keeps the stored studies'
estimate. Its parts cover the trials still to run, in grid order (``--limit`` counts those).
"""

from __future__ import annotations

import dataclasses
import math
from collections import defaultdict
from collections.abc import Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np

from etc_fast.report import design_variance, detectable_difference
from etc_fast.results._summary import ResultsError

__all__ = [
    "REFERENCE",
    "TIMING_SOURCES",
    "Components",
    "CellPower",
    "study_components",
    "variance_components",
    "family_of",
    "suite_of",
    "cell_power",
    "seconds_per_trial",
    "parts",
    "input_count",
    "RunTiming",
    "run_timing",
    "design_report",
]

#: The configuration every other one of a cell is compared with.
REFERENCE = "random_c"
#: (suite, noise class) -> the stored study whose seconds per trial stand for it.
TIMING_SOURCES: dict[tuple[str, str], str] = {
    ("newtonbench", "noiseless"): "all_laws",
    ("newtonbench", "noisy"): "noise",
    ("extended", "noiseless"): "extended",
    ("generated", "noiseless"): "generated_seeds",
    ("systems", "noiseless"): "systems",
    ("systems", "noisy"): "systems_noise",
}
_TIERS = {"vanilla_equation": "equations", "simple_system": "systems", "complex_system": "systems"}


@dataclasses.dataclass(frozen=True)
class Components:
    """Variance components of the credited indicator's paired difference for one tier and noise class.

    Attributes:
        between: Between-family variance of the true differences.
        within: Variance of one trial pair's difference about its family's.
        pairs: Where they come from (``study: A - B``), empty when borrowed.
        borrowed: The classes borrowed from, or ``None``.
    """

    between: float
    within: float
    pairs: tuple[str, ...]
    borrowed: str | None = None


@dataclasses.dataclass(frozen=True)
class CellPower:
    """One cell of a design: its counts, variance and the smallest difference it detects."""

    system: str
    noise: float
    budget: int | None
    configurations: int
    comparisons: int
    families: int
    laws: int
    trials_per_arm: int
    rollouts: tuple[int, ...]
    between: float
    within: float
    variance: float
    detectable: float
    floor: float
    families_needed: int | None


def _rows(summary: Mapping[str, Any], table: str) -> list[dict[str, Any]]:
    t = summary.get("tables", {}).get(table)
    if not t:
        return []
    return [dict(zip(t["columns"], r, strict=True)) for r in t["rows"]]


def _classes(summary: Mapping[str, Any]) -> tuple[str, str] | None:
    """(tier, noise class) of a stored study, or ``None`` when it mixes tiers or noise classes."""
    pooled = _rows(summary, "pooled")
    tiers = {_TIERS.get(r["system"], "?") for r in pooled}
    noisy = {float(r["noise"] or 0.0) > 0.0 for r in pooled}
    if len(tiers) != 1 or len(noisy) != 1 or "?" in tiers:
        return None
    return tiers.pop(), "noisy" if noisy.pop() else "noiseless"


def study_components(summary: Mapping[str, Any], rules: Sequence[str],
                     reference: str = REFERENCE) -> list[tuple[str, float, float]]:
    """``(pair, between, within)`` for each of ``rules`` the study ran beside ``reference`` with the
    same trials on each of at least two modules (module docstring)."""
    by: dict[tuple[str, str], tuple[int, int]] = {(r["task"], r["configuration"]): (int(r["n"]), int(r["credited"]))
                                                  for r in _rows(summary, "modules")}
    tasks = sorted({t for t, _ in by})
    out = []
    for rule in rules:
        if rule == reference:
            continue
        shared = [(by[(t, rule)], by[(t, reference)]) for t in tasks if (t, rule) in by and (t, reference) in by]
        if len(shared) < 2 or any(a[0] != b[0] or a[0] < 1 for a, b in shared):
            continue
        pa = np.array([c / n for (n, c), _ in shared])
        pb = np.array([c / n for _, (n, c) in shared])
        n = np.array([a[0] for a, _ in shared], dtype=float)
        d = pa - pb
        v = (pa * (1 - pa) + pb * (1 - pb)) / np.maximum(n - 1, 1)
        between = max(0.0, float(np.var(d, ddof=1)) - float(v.mean()))
        within = float((pa * (1 - pa) + pb * (1 - pb)).mean())
        out.append((f"{summary['name']}: {rule} - {reference}", between, within))
    return out


def variance_components(summaries: Mapping[str, Mapping[str, Any]], rules: Sequence[str],
                        reference: str = REFERENCE) -> dict[tuple[str, str], Components]:
    """:class:`Components` for every (tier, noise class), from the stored studies (module docstring)."""
    found: dict[tuple[str, str], list[tuple[str, float, float]]] = defaultdict(list)
    for name in sorted(summaries):
        cls = _classes(summaries[name])
        if cls is not None:
            found[cls].extend(study_components(summaries[name], rules, reference))
    out: dict[tuple[str, str], Components] = {}
    for cls, items in found.items():
        if items:
            out[cls] = Components(float(np.mean([b for _, b, _ in items])), float(np.mean([w for _, _, w in items])),
                                  tuple(p for p, _, _ in items))
    for tier in ("equations", "systems"):
        for noise in ("noiseless", "noisy"):
            if (tier, noise) in out:
                continue
            other_tier = "systems" if tier == "equations" else "equations"
            other_noise = "noisy" if noise == "noiseless" else "noiseless"
            donors = [(k, out[k]) for k in ((tier, other_noise), (other_tier, noise)) if k in out and out[k].borrowed is None]
            if donors:
                out[(tier, noise)] = Components(max(c.between for _, c in donors), max(c.within for _, c in donors), (),
                                                " and ".join(f"{t} {n}" for (t, n), _ in donors))
    return out


def _is_custom(task: str) -> bool:
    """A custom task file's path (as the run config tells one from a module's name)."""
    return task.endswith((".yaml", ".yml")) or "/" in task or "\\" in task


def family_of(task: str) -> str:
    """A law's family, the cluster of the design's intervals: a NewtonBench module, a generated
    law's class (``generated:<class>``), or a custom task file's own law (``custom:<path>``)."""
    from etc_fast.report import task_family

    return f"custom:{task}" if _is_custom(task) else task_family(task)


def suite_of(spec: Any) -> str:
    """``newtonbench``, ``extended`` (a custom task file), ``generated`` or ``systems``."""
    from etc_fast.tasks.generate import is_generated_name

    if spec.system != "vanilla_equation":
        return "systems"
    if is_generated_name(spec.task):
        return "generated"
    return "extended" if _is_custom(spec.task) else "newtonbench"


def _noise_class(noise: float) -> str:
    return "noisy" if noise > 0.0 else "noiseless"


def cell_power(specs: Sequence[Any], components: Mapping[tuple[str, str], Components], *, reference: str = REFERENCE,
               alpha: float = 0.05, power: float = 0.8, target: float = 0.05) -> list[CellPower]:
    """Every (system, noise, budget) cell of ``specs`` (a design's trial specs, grid order) with
    the difference its comparisons with ``reference`` detect (module docstring). ``floor``: the
    difference with unlimited rollouts (the within term gone); ``families_needed``: families of
    equal weight, each with unlimited laws and rollouts, that detect ``target`` (``None`` where
    the between-family variance is 0)."""
    cells: dict[tuple[str, float, int | None], list[Any]] = defaultdict(list)
    for s in specs:
        cells[(s.system, s.noise, s.config.measurement_budget)].append(s)
    out = []
    for (system, noise, budget), part in cells.items():
        cfgs = list(dict.fromkeys(s.config.name for s in part))
        ref = [s for s in part if s.config.name == reference]
        if not ref:
            raise ResultsError(f"cell {system} / noise {noise:g} / budget {budget}: no {reference} trials to compare with")
        laws: dict[str, dict[tuple[str, str, str], int]] = defaultdict(lambda: defaultdict(int))
        for s in ref:
            laws[family_of(s.task)][(s.task, s.difficulty, s.law_version)] += 1
        counts = [list(fam.values()) for fam in laws.values()]
        comp = components.get((_TIERS[system], _noise_class(noise)))
        if comp is None:
            raise ResultsError(f"no stored study gives the variances of {_TIERS[system]} {_noise_class(noise)}")
        k = max(1, len(cfgs) - 1)
        var = design_variance(counts, between_family=comp.between, between_law=comp.between, within=comp.within)
        floor_var = design_variance(counts, between_family=comp.between, between_law=comp.between, within=0.0)
        z = detectable_difference(1.0, comparisons=k, alpha=alpha, power=power)
        needed = math.ceil(z**2 * comp.between / target**2 - 1e-9) if comp.between > 0 else None
        out.append(CellPower(system, noise, budget, len(cfgs), k, len(laws), sum(len(f) for f in counts), len(ref),
                             tuple(sorted({n for f in counts for n in f})), comp.between, comp.within, var,
                             detectable_difference(var, comparisons=k, alpha=alpha, power=power),
                             detectable_difference(floor_var, comparisons=k, alpha=alpha, power=power), needed))
    return out


def _wall(summary: Mapping[str, Any]) -> float:
    p = summary["provenance"]
    start = datetime.fromisoformat(p["started_utc"].replace("Z", "+00:00"))
    end = datetime.fromisoformat(p["ended_utc"].replace("Z", "+00:00"))
    return (end - start).total_seconds()


def seconds_per_trial(summaries: Mapping[str, Mapping[str, Any]]) -> dict[tuple[str, str], tuple[float, str]]:
    """(suite, noise class) -> (wall seconds per trial on the study's machine, where from) (module docstring)."""
    out: dict[tuple[str, str], tuple[float, str]] = {}
    for key, name in TIMING_SOURCES.items():
        if name not in summaries:
            raise ResultsError(f"results/{name}.json is missing: it times {key[0]} {key[1]}")
        s = summaries[name]
        out[key] = (_wall(s) / int(s["trials"]["done"]), name)
    ratio = out[("newtonbench", "noisy")][0] / out[("newtonbench", "noiseless")][0]
    for suite in ("extended", "generated"):
        if (suite, "noisy") not in out:
            base, src = out[(suite, "noiseless")]
            out[(suite, "noisy")] = (base * ratio, f"{src} x {ratio:.2f} (noise / all_laws)")
    return out


def input_count(spec: Any, cache: dict[tuple[str, str, str], int | None]) -> int | None:
    """The number of inputs of ``spec``'s law (the equation's, on a system tier too), or ``None``
    where its task cannot be loaded here (a task file named relative to another directory);
    ``cache`` keeps each law's count."""
    key = (spec.task, spec.difficulty, spec.law_version)
    if key not in cache:
        from etc_fast.tasks import TaskError, get_task

        try:
            cache[key] = int(get_task(spec.task, difficulty=spec.difficulty, law_version=spec.law_version).d)
        except TaskError:  # an estimate only: such a law is timed by its suite's mean
            cache[key] = None
    return cache[key]


@dataclasses.dataclass(frozen=True)
class RunTiming:
    """What a run of the design has finished and what its trials say a trial left will take.

    Attributes:
        done: Ids of the grid's finished trials.
        by_class: (suite, noise class) -> (wall seconds per trial on the workers, where from), the
            mean over the class's finished trials.
        by_inputs: (suite, noise class) -> {input count: wall seconds per trial on the workers}.
    """

    done: set[str]
    by_class: dict[tuple[str, str], tuple[float, str]]
    by_inputs: dict[tuple[str, str], dict[int, float]]

    def seconds(self, spec: Any, cache: dict[tuple[str, str, str], int | None]) -> tuple[float, int | None] | None:
        """``(seconds, input count it was timed by)`` for ``spec``: its class's time at its law's
        input count, else at the nearest count reached (the larger of two as near); ``None`` where
        the run has not reached its class."""
        key = (suite_of(spec), _noise_class(spec.noise))
        counts = self.by_inputs.get(key)
        if not counts:
            return None
        d = input_count(spec, cache)
        if d is None:
            return self.by_class[key][0], None
        near = min(counts, key=lambda c: (abs(c - d), -c))
        return counts[near], near


def run_timing(run_dir: str | Path, specs: Sequence[Any], workers: int = 2,
               cache: dict[tuple[str, str, str], int | None] | None = None) -> RunTiming:
    """A run of the design's finished trials (ids in the grid) and, per (suite, noise class) it has
    reached and per input count within it, wall seconds per trial on ``workers`` workers: the mean
    ``wall_s`` over ``workers`` (module docstring). ``cache``: laws' input counts already loaded.

    Raises:
        ResultsError: ``run_dir`` has no ``trials.jsonl``, or none of its finished trials is in the grid.
    """
    from etc_fast.store import TRIALS, RunDirError, is_finished, read_trials

    path = Path(run_dir) / TRIALS
    if not path.is_file():
        raise ResultsError(f"--run {run_dir}: no {TRIALS} there (is it a run directory?)")
    try:
        entries = {e["trial_id"]: e for e in read_trials(path)}
    except RunDirError as exc:
        raise ResultsError(f"--run {run_dir}: {exc}") from None
    cache = {} if cache is None else cache
    done: set[str] = set()
    sums: dict[tuple[str, str], list[float]] = defaultdict(lambda: [0.0, 0.0])
    per_count: dict[tuple[str, str], dict[int, list[float]]] = defaultdict(lambda: defaultdict(lambda: [0.0, 0.0]))
    for s in specs:
        e = entries.get(s.trial_id)
        if e is None or not is_finished(e):
            continue
        done.add(s.trial_id)
        wall = e["summary"].get("wall_s")
        if isinstance(wall, (int, float)) and math.isfinite(wall) and wall >= 0:
            key = (suite_of(s), _noise_class(s.noise))
            accs = [sums[key]]
            d = input_count(s, cache)
            if d is not None:
                accs.append(per_count[key][d])
            for acc in accs:
                acc[0] += float(wall)
                acc[1] += 1
    if not done:
        raise ResultsError(f"--run {run_dir}: none of its {len(entries):,} stored trials is a finished trial "
                           f"of this design (another config's run?)")
    by_class = {k: (t / n / workers, f"this run: {int(n):,} trials") for k, (t, n) in sums.items() if n}
    by_inputs = {k: {d: t / n / workers for d, (t, n) in sorted(v.items())} for k, v in per_count.items()}
    return RunTiming(done, by_class, by_inputs)


def parts(specs: Sequence[Any], timing: Mapping[tuple[str, str], tuple[float, str]] | Sequence[float],
          hours: float) -> list[tuple[int, float]]:
    """The run split, in grid order, into parts of at most ``hours`` each (estimated):
    ``(trials, seconds)`` per part. ``timing``: seconds per (suite, noise class), or each spec's
    own seconds. A single trial longer than a part makes a part of its own."""
    out: list[tuple[int, float]] = []
    n, t = 0, 0.0
    for i, s in enumerate(specs):
        sec = timing[i] if isinstance(timing, Sequence) else timing[(suite_of(s), _noise_class(s.noise))][0]
        if n and t + sec > hours * 3600.0:
            out.append((n, t))
            n, t = 0, 0.0
        n += 1
        t += sec
    if n:
        out.append((n, t))
    return out


def _pct(x: float) -> str:
    return f"{100 * x:.1f}"


def design_report(config_path: str | Path, root: str | Path = ".", *, hours: float = 2.0, target: float = 0.05,
                  run: str | Path | None = None, workers: int = 2) -> str:
    """The Markdown of ``python -m etc_fast.results design``: the variance components, the power per
    cell, the time per suite and the parts of at most ``hours`` on ``workers`` workers, each with its
    command; with ``run`` (a run of the design) the time and parts of what is left of it."""
    from etc_fast.results._pages import load_summaries
    from etc_fast.runner import expand_grid, load_config

    config = load_config(config_path)
    specs = expand_grid(config)
    summaries = load_summaries(Path(root) / "results")
    rules = list(dict.fromkeys(s.config.name for s in specs))
    comps = variance_components(summaries, rules)
    cells = cell_power(specs, comps, target=target)
    lines = [f"Design `{config.name}` ({config_path}): {len(specs):,} trials. Generated by "
             f"`python -m etc_fast.results design {config_path}` from results/*.json.", "",
             "Variance components of the credited indicator's paired difference (vs `random_c`):", "",
             "| tier | noise | between-family | within (a trial pair) | from |", "|---|---|---:|---:|---|"]
    for (tier, noise), comp in sorted(comps.items()):
        src = ", ".join(comp.pairs) if comp.pairs else f"borrowed: the larger of {comp.borrowed}"
        lines.append(f"| {tier} | {noise} | {comp.between:.4f} | {comp.within:.4f} | {src} |")
    lines += ["", f"Smallest paired difference detected with 80% power (two-sided 5%, Holm over a cell's comparisons "
              f"with `random_c`), in points; target {_pct(target)} on equations:", "",
              "| tier | noise | budget | families | laws | trials/arm | rollouts | comparisons | detectable | "
              "floor (rollouts unlimited) | equal-weight families for target |",
              "|---|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|"]
    for c in cells:
        ok = "" if c.system != "vanilla_equation" else (" ✓" if c.detectable <= target + 1e-12 else " ✗")
        lines.append(f"| {c.system} | {c.noise:g} | {c.budget if c.budget is not None else 'none'} | {c.families} | "
                     f"{c.laws} | {c.trials_per_arm} | {'/'.join(map(str, c.rollouts))} | {c.comparisons} | "
                     f"{_pct(c.detectable)}{ok} | {_pct(c.floor)} | {c.families_needed or '-'} |")
    # the stored studies' seconds per trial were measured on two workers
    timing = {k: (sec * 2 / workers, src) for k, (sec, src) in seconds_per_trial(summaries).items()}
    done: set[str] = set()
    measured: RunTiming | None = None
    cache: dict[tuple[str, str, str], int | None] = {}
    if run is not None:
        measured = run_timing(run, specs, workers, cache)
        done = measured.done
        timing.update(measured.by_class)
    left = [s for s in specs if s.trial_id not in done]
    by_suite: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for s in specs:
        by_suite[(suite_of(s), _noise_class(s.noise))][0] += 1
    seconds: list[float] = []
    left_sec: dict[tuple[str, str], float] = defaultdict(float)
    borrowed: dict[tuple[str, str], dict[int, int]] = defaultdict(dict)  # class -> {count left: count timing it}
    for s in left:
        key = (suite_of(s), _noise_class(s.noise))
        by_suite[key][1] += 1
        got = measured.seconds(s, cache) if measured is not None else None
        sec = timing[key][0] if got is None else got[0]
        d = input_count(s, cache)
        if got is not None and got[1] is not None and d is not None and got[1] != d:
            borrowed[key][d] = got[1]
        seconds.append(sec)
        left_sec[key] += sec
    total = sum(seconds)
    where = ("from this run's finished trials where it has them (per input count), else from the stored studies"
             if run is not None else "from the stored studies' seconds per trial (uncapped runs: an upper bound)")
    lines += ["", f"Time on {workers} worker{'s' if workers != 1 else ''} (wall; {workers}x that in CPU), {where}:", "",
              "| suite | noise | trials | to run | s/trial | hours | timed by |", "|---|---|---:|---:|---:|---:|---|"]
    for k in sorted(by_suite):
        sec, src = timing[k]
        n, n_left = by_suite[k]
        if measured is not None and k in measured.by_inputs and n_left:
            sec = left_sec[k] / n_left  # the trials left, each at its input count's time
            counts = ", ".join(str(c) for c in measured.by_inputs[k])
            src += f", by inputs ({counts})"
            if borrowed[k]:
                src += "; " + ", ".join(f"{c} as {b}" for c, b in sorted(borrowed[k].items()))
        lines.append(f"| {k[0]} | {k[1]} | {n:,} | {n_left:,} | {sec:.3f} | {left_sec[k] / 3600:.2f} | {src} |")
    lines.append(f"| all | | {len(specs):,} | {len(left):,} | | {total / 3600:.2f} | |")
    split = parts(left, seconds, hours)
    run_opt = f" --out {run}" if run is not None else ""
    lines += ["", f"Parts of at most {hours:g} h each (estimated) of the {len(left):,} trials to run, in grid order; "
              "a run resumes, so each part is the same command with its own `--limit`:", "",
              "| part | trials | hours | command |", "|---:|---:|---:|---|"]
    for i, (n, sec) in enumerate(split, 1):
        lines.append(f"| {i} | {n:,} | {sec / 3600:.2f} | `python -m etc_fast.run {config_path}{run_opt} --limit {n}` |")
    return "\n".join(lines) + "\n"
