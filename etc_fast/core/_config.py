"""Configurations and trial specs: what a trial runs (plain, frozen, hashable data)."""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from typing import Any, Literal

import numpy as np

from etc_fast.core._json import to_jsonable

# ----------------------------------------------------------------------------------------
# Configurations
# ----------------------------------------------------------------------------------------
Family = Literal["baseline", "planner"]
Acquisition = Literal["none", "variance", "pairwise", "random", "gp_ucb", "gp_var", "mi"]

#: A planner's acquisition rules: the paper's three, the GP surrogate's two, then the information
#: rule (docs/guide/acquisition.md).
PLANNER_ACQUISITIONS: tuple[str, ...] = ("variance", "pairwise", "random", "gp_ucb", "gp_var", "mi")
#: The GP-surrogate rules: a Gaussian process fitted to the observed outputs picks the batch by
#: its upper confidence bound (``gp_ucb``) or its posterior sd (``gp_var``).
GP_ACQUISITIONS: tuple[str, ...] = ("gp_ucb", "gp_var")
#: The rules that refuse the noise knobs: they model the noise themselves (the GP's nugget; ``mi``'s
#: estimate inside each law's predictive distribution), docs/guide/acquisition.md.
OWN_NOISE_ACQUISITIONS: tuple[str, ...] = GP_ACQUISITIONS + ("mi",)


def scores_committee(acquisition: str) -> bool:
    """Whether a planner rule scores the pool by its committee (``variance``, ``pairwise``: its
    disagreement; ``mi``: the information a reading gives about which of its laws holds). Such a
    planner needs two parseable hypotheses and repairs otherwise; a rule that does not (``random``,
    the GP rules) selects on every committee turn whatever the committee holds, and the agent's
    hypotheses only shape what it is shown."""
    return acquisition in ("variance", "pairwise", "mi")


#: Allowed ranges of the integer knobs. The upper ends only stop absurd values (a pool of 2**30
#: points would allocate gigabytes before the first turn); the paper's values sit far inside.
KNOB_RANGES: dict[str, tuple[int, int]] = {
    "batch_cap": (1, 4096),
    "exploration_turns": (0, 1000),
    "pool_size": (8, 2**20),
    "bootstrap_min": (1, 4096),
    "baseline_rounds": (1, 1000),
}


@dataclasses.dataclass(frozen=True)
class ProtocolConfig:
    """How one trial is played. The paper's eight configurations are presets of this.

    Attributes:
        name: Configuration name recorded in results (``variance_c``, ``baseline_n``, ...).
        family: ``baseline`` (free-form agent) or ``planner`` (explore-then-commit).
        acquisition: ``variance``/``pairwise``/``random`` (the paper's), ``gp_ucb``/``gp_var``
            (a GP surrogate) or ``mi`` (the information about which committee law holds;
            docs/guide/acquisition.md) for planners, ``none`` for baselines.
        interpreter: Whether the policy may request Python analysis (the ``C`` variants).
        diagnostics: Planner diagnostics shown (``True`` in the paper; ablation knob).
        synthesis: ``fresh`` (paper) or ``none`` (the draft / last committee best is submitted).
        synthesis_diagnostics: Whether fresh synthesis also sees the automatic diagnostics
            (``False`` in the paper: synthesis gets the task, the observations and the draft;
            ablation knob).
        batch_cap: Planner measurements per exploration turn (paper: 4).
        measurement_budget: Total simulator evaluations allowed (``None`` = unlimited); a
            cap-matched baseline sets this.
        exploration_turns: Planner exploration turns (paper: 8).
        pool_size: Candidate pool size (paper: 2048).
        bootstrap_min: Configured bootstrap probes (raised to d + 1; paper: 3).
        baseline_rounds: Free-form agent rounds before the forced final call (NewtonBench: 10).
        synthesis_turns: Synthesis turns; ``None`` = 1 without interpreter, 3 with.
        max_experiment_points: Most points one baseline experiment request may run (``None`` =
            10,000; NewtonBench sets no limit, this only stops a runaway reply).
        interpreter_data: What the analysis interpreter starts with: ``preloaded`` (the
            observations as ``X``, ``y``, one array per input and ``data``) or ``empty`` (no
            observation variables: the agent types the numbers into its code, as in NewtonBench).
            ``None`` = the family's default: ``empty`` for baselines (NewtonBench), ``preloaded``
            for planners (the paper's protocol).
        parsing: How an LLM's baseline reply is read: ``newtonbench`` (NewtonBench's rules: case-
            sensitive tags, strict JSON with nothing repaired, no code fences removed, its
            action order per agent) or ``lenient`` (fences and case tolerated). ``None`` = the
            family's default: ``newtonbench`` for baselines, ``lenient`` for planners (planner
            replies are not NewtonBench actions).
        max_validation_retries: Analysis replies failing validation that one baseline round
            absorbs without being used (``None`` = 3; NewtonBench sets no bound).
        noise_aware: Planners only: in a noisy lab, estimate the noise level and judge fits and
            disagreement against it (docs/guide/noise.md; ``False`` = the paper's rules).
        explore_fraction: Planners only: share of each batch chosen by maximin distance to the
            observations (0 = the paper's rules).
        replicates: Planners only, noisy labs: most re-measurements of observed points per batch.
        stop_when_settled: Planners only, noisy labs, with ``noise_aware``: once the best law
            predicted the last batch (before it was measured) to within the noise, scored slots with nothing left to tell
            apart (no point where the consistent laws differ by more than the noise, or only one
            law consistent) are not measured (docs/guide/noise.md, rule 8).
        test_extremes: Planners only, noisy labs, with ``explore_fraction`` > 0: the first
            exploration slot of a batch tests the best consistent law where its prediction lies
            farthest outside the measured outputs (docs/guide/noise.md, rule 6).

    The noise knobs are the YAML ablation block ``acquisition: {noise_aware, explore_fraction,
    replicates, stop_when_settled, test_extremes}``, for ``variance``, ``pairwise`` and ``random`` only (a GP planner
    refuses them: its nugget is its noise model; so does ``mi``, which estimates the noise itself,
    docs/guide/acquisition.md); at their defaults they
    are left out of :meth:`TrialSpec.to_dict`, so trial ids of configurations without them are
    those of before they existed.
    ``interpreter_data``, ``parsing`` and ``max_validation_retries`` are left out of the trial id
    while ``None`` (see :data:`ID_OMITTED_WHEN_NONE`), so trial ids of earlier runs stay valid.
    """

    name: str
    family: Family
    acquisition: Acquisition = "none"
    interpreter: bool = False
    diagnostics: bool = True
    synthesis: Literal["fresh", "none"] = "fresh"
    synthesis_diagnostics: bool = False
    batch_cap: int = 4
    measurement_budget: int | None = None
    exploration_turns: int = 8
    pool_size: int = 2048
    bootstrap_min: int = 3
    baseline_rounds: int = 10
    synthesis_turns: int | None = None
    max_experiment_points: int | None = None
    interpreter_data: Literal["preloaded", "empty"] | None = None
    parsing: Literal["newtonbench", "lenient"] | None = None
    max_validation_retries: int | None = None
    noise_aware: bool = False
    explore_fraction: float = 0.0
    replicates: int = 0
    stop_when_settled: bool = False
    test_extremes: bool = False

    def __post_init__(self) -> None:
        errors = []
        ef = self.explore_fraction
        if isinstance(ef, bool) or not isinstance(ef, (int, float)) or not 0.0 <= ef <= 1.0:
            errors.append(f"explore_fraction must be a number from 0 to 1, got {ef!r}")
        if isinstance(self.replicates, bool) or not isinstance(self.replicates, int) or not 0 <= self.replicates <= 4096:
            errors.append(f"replicates must be an integer from 0 to 4,096, got {self.replicates!r}")
        if self.family not in ("baseline", "planner"):
            errors.append(f"family must be 'baseline' or 'planner', got {self.family!r}")
        if self.family == "planner" and self.acquisition not in PLANNER_ACQUISITIONS:
            errors.append(f"a planner's acquisition must be one of {', '.join(PLANNER_ACQUISITIONS)}, got {self.acquisition!r}")
        if self.family == "baseline" and self.acquisition != "none":
            errors.append(f"a baseline has acquisition 'none', got {self.acquisition!r}")
        if self.synthesis not in ("fresh", "none"):
            errors.append(f"synthesis must be 'fresh' or 'none', got {self.synthesis!r}")
        for field, (lo, hi) in KNOB_RANGES.items():
            val = getattr(self, field)
            if not isinstance(val, int) or isinstance(val, bool) or not lo <= val <= hi:
                errors.append(f"{field} must be an integer from {lo} to {hi:,}, got {val!r}")
        if self.measurement_budget is not None and (
            not isinstance(self.measurement_budget, int) or isinstance(self.measurement_budget, bool) or self.measurement_budget < 1
        ):
            errors.append(f"measurement_budget must be a positive integer or null, got {self.measurement_budget!r}")
        if not isinstance(self.name, str) or not self.name.strip():
            errors.append(f"name must be a non-empty string, got {self.name!r}")
        if self.max_experiment_points is not None and (
            isinstance(self.max_experiment_points, bool) or not isinstance(self.max_experiment_points, int)
            or self.max_experiment_points < 1
        ):
            errors.append(f"max_experiment_points must be a positive integer or null, got {self.max_experiment_points!r}")
        if self.synthesis_turns is not None and (
            not isinstance(self.synthesis_turns, int) or isinstance(self.synthesis_turns, bool) or self.synthesis_turns < 1
        ):
            errors.append(f"synthesis_turns must be a positive integer or null, got {self.synthesis_turns!r}")
        if self.interpreter_data not in (None, "preloaded", "empty"):
            errors.append(f"interpreter_data must be 'preloaded', 'empty' or null, got {self.interpreter_data!r}")
        if self.family == "planner" and self.interpreter_data == "empty":
            errors.append("interpreter_data: empty is a baseline setting (NewtonBench's interpreter); a planner's "
                          "analysis always sees its observations (leave interpreter_data null or 'preloaded')")
        if self.parsing not in (None, "newtonbench", "lenient"):
            errors.append(f"parsing must be 'newtonbench', 'lenient' or null, got {self.parsing!r}")
        if self.max_validation_retries is not None and (
            isinstance(self.max_validation_retries, bool) or not isinstance(self.max_validation_retries, int)
            or not 0 <= self.max_validation_retries <= 1000
        ):
            errors.append(f"max_validation_retries must be an integer from 0 to 1,000 or null, got {self.max_validation_retries!r}")
        for field in ("interpreter", "diagnostics", "synthesis_diagnostics", "noise_aware", "stop_when_settled",
                      "test_extremes"):
            if not isinstance(getattr(self, field), bool):
                errors.append(f"{field} must be a boolean (true or false), got {getattr(self, field)!r}")
        if self.stop_when_settled is True and self.noise_aware is not True:
            errors.append("stop_when_settled needs noise_aware: true (the rule compares with the estimated noise)")
        if self.test_extremes is True and not (isinstance(ef, (int, float)) and ef > 0):
            errors.append("test_extremes needs explore_fraction > 0 (it takes an exploration slot)")
        if self.acquisition in OWN_NOISE_ACQUISITIONS:
            on = [n for n, default in NOISE_KNOB_DEFAULTS.items() if getattr(self, n) != default]
            if on and self.acquisition == "mi":
                errors.append(f"the noise knobs ({', '.join(on)}) belong to the committee planners' noise-aware step "
                              "(docs/guide/noise.md); the information planner (mi) always estimates the noise and "
                              "puts it in each law's predictive distribution, and explores only where no point "
                              "adds information (docs/guide/acquisition.md): leave them at their defaults")
            elif on:
                errors.append(f"the noise knobs ({', '.join(on)}) belong to the committee planners' noise-aware step "
                              f"(docs/guide/noise.md); a GP planner ({self.acquisition}) models the noise by its "
                              "nugget instead (docs/guide/acquisition.md): leave them at their defaults")
        if errors:
            raise ValueError(f"configuration {self.name!r}: " + "; ".join(errors))

    @property
    def n_synthesis_turns(self) -> int:
        return self.synthesis_turns if self.synthesis_turns is not None else (3 if self.interpreter else 1)

    @property
    def resolved_interpreter_data(self) -> str:
        """``interpreter_data`` with the family default applied."""
        if self.interpreter_data is not None:
            return self.interpreter_data
        return "empty" if self.family == "baseline" else "preloaded"

    @property
    def resolved_parsing(self) -> str:
        """``parsing`` with the family default applied."""
        if self.parsing is not None:
            return self.parsing
        return "newtonbench" if self.family == "baseline" else "lenient"

    @property
    def resolved_validation_retries(self) -> int:
        """``max_validation_retries`` with its default (3) applied."""
        return 3 if self.max_validation_retries is None else self.max_validation_retries


#: Configuration fields left out of the trial id (and of a stored spec) while ``None``: fields
#: added after results were stored, so that those results keep their ids.
ID_OMITTED_WHEN_NONE = ("interpreter_data", "parsing", "max_validation_retries")


#: id(cfg) -> (cfg, its config_dict): the configurations whose dict was built, each kept alive by
#: its entry so that its id is not reused (a grid's trials share a few configuration objects)
_CONFIG_DICTS: dict[int, tuple[ProtocolConfig, dict[str, Any]]] = {}


def config_dict(cfg: ProtocolConfig) -> dict[str, Any]:
    """``cfg`` as a JSON dict without the :data:`ID_OMITTED_WHEN_NONE` fields that are ``None`` and
    the :data:`NOISE_KNOB_DEFAULTS` knobs at their defaults (the trial id's view of a config).

    Built once per configuration object (a new dict each call: its values are scalars). Cached by
    identity, never by equality: configurations that compare equal can still differ in their JSON
    (``0`` and ``0.0``, ``0.0`` and ``-0.0``), and so in their trial ids."""
    kept = _CONFIG_DICTS.get(id(cfg))
    if kept is not None and kept[0] is cfg:
        return dict(kept[1])
    d = _config_dict(cfg)
    if len(_CONFIG_DICTS) >= 4096:
        _CONFIG_DICTS.clear()
    _CONFIG_DICTS[id(cfg)] = (cfg, d)
    return dict(d)


def _config_dict(cfg: ProtocolConfig) -> dict[str, Any]:
    d = to_jsonable(cfg)
    for name in ID_OMITTED_WHEN_NONE:
        if d.get(name) is None:
            d.pop(name, None)
    for name, default in NOISE_KNOB_DEFAULTS.items():  # absent at default: trial ids unchanged
        if d.get(name) == default:
            d.pop(name, None)
    return d


#: The noise knobs and their defaults (the paper's rules); omitted from spec dicts at default.
NOISE_KNOB_DEFAULTS: dict[str, Any] = {"noise_aware": False, "explore_fraction": 0.0, "replicates": 0,
                                       "stop_when_settled": False, "test_extremes": False}


def _preset(name: str, family: Family, acquisition: Acquisition, interpreter: bool) -> ProtocolConfig:
    return ProtocolConfig(name=name, family=family, acquisition=acquisition, interpreter=interpreter)


#: The preset configurations (N = no interpreter, C = interpreter): the paper's eight
#: (:data:`PAPER_CONFIGURATIONS`), then the GP-surrogate planners (docs/guide/acquisition.md), a peer rule
#: compared with the same agent at the same budgets, then the information planner (``mi``).
CONFIGURATIONS: dict[str, ProtocolConfig] = {
    c.name: c
    for c in (
        _preset("baseline_n", "baseline", "none", False),
        _preset("baseline_c", "baseline", "none", True),
        _preset("variance_n", "planner", "variance", False),
        _preset("pairwise_n", "planner", "pairwise", False),
        _preset("random_n", "planner", "random", False),
        _preset("variance_c", "planner", "variance", True),
        _preset("pairwise_c", "planner", "pairwise", True),
        _preset("random_c", "planner", "random", True),
        _preset("gp_ucb_n", "planner", "gp_ucb", False),
        _preset("gp_var_n", "planner", "gp_var", False),
        _preset("gp_ucb_c", "planner", "gp_ucb", True),
        _preset("gp_var_c", "planner", "gp_var", True),
        _preset("mi_n", "planner", "mi", False),
        _preset("mi_c", "planner", "mi", True),
    )
}

#: The paper's eight presets, in its order: what a study's ``configurations: all`` runs and what
#: the report's family tables average.
PAPER_CONFIGURATIONS: tuple[str, ...] = (
    "baseline_n", "baseline_c", "variance_n", "pairwise_n", "random_n", "variance_c", "pairwise_c", "random_c",
)


def get_configuration(preset: str, /, **overrides: Any) -> ProtocolConfig:
    """A preset by name, optionally with knob overrides (give a new ``name=`` with them).

    Example: ``get_configuration("variance_n", name="variance_n_cap2", batch_cap=2)``.
    """
    if preset not in CONFIGURATIONS:
        raise KeyError(f"unknown configuration {preset!r}; known: {', '.join(CONFIGURATIONS)}")
    base = CONFIGURATIONS[preset]
    return dataclasses.replace(base, **overrides) if overrides else base


# ----------------------------------------------------------------------------------------
# Trial identity
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class TrialSpec:
    """Everything that identifies one trial.

    Attributes:
        model: Policy/model name (``symbolic``, ``scripted``, ``gpt41mini``, ...).
        config: The protocol configuration.
        task: Module name (``m0_gravity``) or path of a custom task YAML.
        difficulty: easy/medium/hard (ignored for custom tasks).
        law_version: v0/v1/v2 (ignored for custom tasks).
        noise: Relative noise level (0 = noiseless).
        rollout: Rollout index; also the pool seed.
        noise_seed: Seed of the measurement-noise generator (default 0).
        system: NewtonBench system: ``vanilla_equation`` (default), ``simple_system`` or
            ``complex_system`` (:mod:`etc_fast.systems`). Left out of :meth:`to_dict` (and so of
            the trial id) at its default, so vanilla trial ids are those of earlier runs.
    """

    model: str
    config: ProtocolConfig
    task: str
    difficulty: str = "easy"
    law_version: str = "v0"
    noise: float = 0.0
    rollout: int = 0
    noise_seed: int = 0
    system: str = "vanilla_equation"

    def __post_init__(self) -> None:
        errors = []
        if not isinstance(self.config, ProtocolConfig):
            errors.append(f"config must be a ProtocolConfig, got {type(self.config).__name__}")
        for field in ("model", "task", "difficulty", "law_version"):
            val = getattr(self, field)
            if not isinstance(val, str) or not val.strip():
                errors.append(f"{field} must be a non-empty string, got {val!r}")
        noise = self.noise
        if isinstance(noise, bool) or not isinstance(noise, (int, float, np.integer, np.floating)) or not (noise >= 0 and noise < float("inf")):
            errors.append(f"noise must be a finite number >= 0, got {noise!r}")
        for field in ("rollout", "noise_seed"):
            val = getattr(self, field)
            if isinstance(val, bool) or not isinstance(val, (int, np.integer)) or val < 0:
                errors.append(f"{field} must be an integer >= 0, got {val!r}")
        if self.system not in _SYSTEMS:
            errors.append(f"system must be one of {', '.join(_SYSTEMS)}, got {self.system!r}")
        if errors:
            raise ValueError("trial spec: " + "; ".join(errors))

    @property
    def pool_seed(self) -> int:
        return self.rollout

    def to_dict(self) -> dict[str, Any]:
        # field by field, the config converted once, by config_dict (cached per object)
        d = {f.name: config_dict(self.config) if f.name == "config" else to_jsonable(getattr(self, f.name))
             for f in dataclasses.fields(self)}
        if d.get("system") == "vanilla_equation":  # absent at its default: vanilla ids stay unchanged
            del d["system"]
        return d

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TrialSpec:
        d = dict(d)
        d["config"] = ProtocolConfig(**d["config"])
        return cls(**d)

    @functools.cached_property
    def trial_id(self) -> str:
        """Stable 16-hex-digit hash of the spec (same spec -> same id on every machine); computed
        once per spec object (a spec is frozen)."""
        blob = json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(blob.encode()).hexdigest()[:16]


#: NewtonBench's systems (the same tuple as ``etc_fast.systems.SYSTEMS``, kept here so that the
#: protocol types import nothing heavy).
_SYSTEMS = ("vanilla_equation", "simple_system", "complex_system")

