"""Run configuration: YAML -> validated, frozen dataclasses.

A run configuration says *what* to run (one or more grids of trials) and *how* (workers, executor,
judge, policy settings). It is read once, here; nothing below the runner reads YAML or environment
variables. Values come from three layers, later ones winning: the defaults on the dataclasses below,
the YAML file, and command-line overrides (:meth:`RunConfig.with_overrides`).

Every problem is reported as one :class:`ConfigError` naming the file and the key path, e.g.
``configs/x.yaml: grids[0].difficulties[1]: 'meduim' is not one of easy, medium, hard``.
Every key the parser accepts is a row of :data:`CONFIG_KEYS` (or, under ``ablations``, a
:class:`ProtocolConfig` knob); docs/reference/config.md is generated from that table and the
dataclasses' docstrings (``python -m etc_fast.docs``).
"""

from __future__ import annotations

import dataclasses
import importlib.util
import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from etc_fast._urls import normalise_base_url
from etc_fast.core import NOISE_KNOB_DEFAULTS
from etc_fast.labs import lab_refusal
from etc_fast.protocol import CONFIGURATIONS, PAPER_CONFIGURATIONS, ProtocolConfig
from etc_fast.systems import SYSTEMS

__all__ = [
    "AnalysisConfig",
    "ConfigError",
    "GridConfig",
    "LLMSettings",
    "RayConfig",
    "RunConfig",
    "load_config",
    "parse_config",
    "config_identity",
    "default_workers",
]

DIFFICULTIES = ("easy", "medium", "hard")
LAW_VERSIONS = ("v0", "v1", "v2")
EXECUTORS = ("local", "threads", "processes", "ray")
#: Judge names (``etc_fast.evaluate.JUDGES``, repeated so that reading a config does not load the kernels).
JUDGES = ("structural", "llm", "none")
CACHE_MODES = ("use", "refresh", "off", "replay")
#: Most rollouts per grid cell, and most trials in a whole run (summed over grids before
#: deduplication). The paper's design has 576 trials; these only stop a typo (``rollouts:
#: 3000000``) from expanding millions of trial specs before anything runs.
MAX_ROLLOUTS = 10_000
MAX_TRIALS = 100_000
#: Largest configuration file read.
MAX_CONFIG_BYTES = 4 * 2**20
#: Models that are not LLMs (every other model name is passed the ``llm`` settings).
OFFLINE_MODELS = ("symbolic", "scripted", "sr")
#: A model name this similar to an offline model's (``difflib`` ratio, case ignored) is taken for a typo.
TYPO_CUTOFF = 0.8


def check_model_name(model: str, source: str, key: str) -> None:
    """Refuse a model name that is not an offline model but is a close match to one (``symbollic``):
    it would otherwise be sent to the LLM endpoint as a paid model. Other names are LLM names."""
    import difflib

    if model in OFFLINE_MODELS:
        return
    close = difflib.get_close_matches(model.lower(), OFFLINE_MODELS, n=1, cutoff=TYPO_CUTOFF)
    if close:
        raise ConfigError(source, key, f"unknown model {model!r}: did you mean {close[0]!r}? (offline models: "
                          f"{', '.join(OFFLINE_MODELS)}; any other name is an LLM sent to the llm endpoint)")


class ConfigError(ValueError):
    """A configuration problem, naming where it is.

    Attributes:
        source: The file (or ``command line``) the value came from.
        key: Key path inside it (``grids[0].tasks[2]``), or ``""`` for the whole document.
        message: What is wrong.
    """

    def __init__(self, source: str, key: str, message: str) -> None:
        self.source, self.key, self.message = source, key, message
        where = f"{source}: {key}: " if key else f"{source}: "
        super().__init__(where + message)


def default_workers() -> int:
    """Cores available to this process (at least 1)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


# ----------------------------------------------------------------------------------------
# Dataclasses
# ----------------------------------------------------------------------------------------
@dataclasses.dataclass(frozen=True)
class RayConfig:
    """Ray executor settings.

    Attributes:
        address: Address of an existing Ray cluster (``auto``, ``ray://host:10001``, ...);
            ``None`` starts a local Ray instance with ``workers`` CPUs.
    """

    address: str | None = None


#: Units of the report's cluster bootstrap (``analysis.cluster``; :data:`etc_fast.report.CLUSTERS`).
ANALYSIS_CLUSTERS: tuple[str, ...] = ("task", "family")


@dataclasses.dataclass(frozen=True)
class AnalysisConfig:
    """How the report analyses the run: it changes no trial, so it is not part of the run's identity
    and can be set (or changed) before a report is rewritten.

    Attributes:
        reference: A configuration of the grids that the paired table compares every other one
            with, at each system, noise and budget (Holm then adjusts over those comparisons);
            ``None``: every two configurations are compared.
        cluster: The unit the intervals resample: ``task`` (a NewtonBench module, a generated law,
            a custom task) or ``family`` (a module, a generated law's class, a custom task).
    """

    reference: str | None = None
    cluster: str = "task"


@dataclasses.dataclass(frozen=True)
class LLMSettings:
    """Settings handed to LLM policies (and the LLM judge); unused for offline models.

    Attributes:
        base_url: OpenAI-compatible endpoint; ``None`` = the provider default.
        api_key_env: Name of the environment variable holding the API key.
        temperature: Generation temperature (paper: 0.4).
        timeout_s: Per-request timeout in seconds.
        max_retries: Retries of a call after transient failures (jittered exponential backoff).
        retry_budget_s: Most seconds one call may take, attempts and waits together.
        seed: Sampling seed sent to the server (``None`` = not sent); part of the cache key.
        cache_path: SQLite response cache file; ``None`` = no cache.
        cache_mode: ``use`` (read and fill), ``refresh`` (always call, store replies), ``off``
            or ``replay`` (cached replies only: a miss fails the trial).
        max_tokens: Longest reply in tokens (``None`` = the server's default).
        model_id: Id sent to the server instead of the model name's resolution.
        max_consecutive_failures: The run stops after this many trials in a row failed for want of
            a reply (circuit breaker); not passed to the policies.
        prompts: The baselines' and the judge's messages: ``etc_fast`` (this project's words,
            NewtonBench's content) or ``newtonbench`` (NewtonBench's own texts, read at run time
            from the checkout ``newtonbench_path``; see docs/guide/fidelity.md). Planner prompts are
            etc_fast's in both.
        newtonbench_path: The NewtonBench checkout for ``prompts: newtonbench`` (``None``: the
            ``NEWTONBENCH_PATH`` environment variable); stored resolved.
        newtonbench_version: Set by the loader, not by users: the checkout's commit and the
            SHA-256 of the files read (part of the run's identity).
        prices: ``{model: {prompt: USD per 1M tokens, completion: USD per 1M tokens}}`` (a grid's
            model name or the id sent), for the cost estimate of ``--dry-run`` and the report; not part
            of the run's identity.
    """

    base_url: str | None = None
    api_key_env: str = "OPENAI_API_KEY"
    temperature: float = 0.4
    timeout_s: float = 60.0
    max_retries: int = 6
    retry_budget_s: float = 300.0
    seed: int | None = None
    cache_path: str | None = None
    cache_mode: str = "use"
    max_tokens: int | None = None
    model_id: str | None = None
    max_consecutive_failures: int = 5
    prompts: str = "etc_fast"
    newtonbench_path: str | None = None
    newtonbench_version: str | None = None
    prices: Mapping[str, Mapping[str, float]] = dataclasses.field(default_factory=dict)

    def policy_options(self) -> dict[str, Any]:
        """Keyword arguments for ``create_policy(model, **options)``."""
        opts = dataclasses.asdict(self)
        del opts["max_consecutive_failures"]
        del opts["newtonbench_version"]
        del opts["prices"]
        if opts["prompts"] == "etc_fast":
            del opts["prompts"], opts["newtonbench_path"]
        return opts

    def judge_options(self) -> dict[str, Any]:
        """Client keyword arguments for the LLM judge (its model, temperature and reply length are its own)."""
        opts = self.policy_options()
        for k in ("temperature", "model_id", "max_tokens"):
            del opts[k]
        return opts


@dataclasses.dataclass(frozen=True)
class GridConfig:
    """One block of trials: the Cartesian product of its lists.

    Attributes:
        model: Policy/model name (``symbolic``, ``gpt41mini``, ...).
        configurations: Configuration names: presets of :data:`etc_fast.protocol.CONFIGURATIONS`
            or names defined under ``ablations``.
        tasks: Module names (``m0_gravity``), paths of custom task YAML files (relative paths
            are taken from the working directory) or generated laws' names (``gen-s0-0042``; the
            source ``{generated: {seed, n}}`` is stored as its names). A custom task has one law,
            so difficulties and law versions do not multiply it.
        difficulties: Subset of easy, medium, hard.
        law_versions: Subset of v0, v1, v2.
        noise: Relative noise levels (each >= 0).
        rollouts: Rollouts per cell; rollout ``i`` uses pool seed ``i``.
        noise_seed: Seed of the measurement-noise generator.
        systems: NewtonBench systems: ``vanilla_equation`` (default), ``simple_system``,
            ``complex_system`` (custom tasks: vanilla only). See docs/guide/labs.md.
        budgets: Measurement budgets, a grid dimension: each trial of the grid is played once per
            budget ``b`` with its configuration's ``measurement_budget`` set to ``b`` (the name is
            kept). Empty (the default) = each configuration's own rule; such grids keep their trial
            ids and are left out of the resolved config's grid entry. See docs/guide/configs.md.
    """

    model: str
    configurations: tuple[str, ...]
    tasks: tuple[str, ...]
    difficulties: tuple[str, ...] = ("easy",)
    law_versions: tuple[str, ...] = ("v0",)
    noise: tuple[float, ...] = (0.0,)
    rollouts: int = 1
    noise_seed: int = 0
    systems: tuple[str, ...] = ("vanilla_equation",)
    budgets: tuple[int, ...] = ()


@dataclasses.dataclass(frozen=True)
class RunConfig:
    """A whole run.

    Attributes:
        name: Run name (letters, digits, ``-``, ``_``, ``.``).
        out: Output directory; default ``runs/<name>``.
        workers: Parallel trials; default = cores available.
        executor: ``local`` (process pool; threads in this process when every model is an LLM,
            whose trials wait on the network), ``threads``, ``processes`` (always the pool) or ``ray``.
        ray: Ray settings (used with ``executor: ray``).
        judge: ``structural`` (offline), ``llm`` (NewtonBench judge prompt) or ``none``.
        judge_options: Extra keyword arguments for ``create_judge`` (e.g. the LLM judge's model).
        llm: Settings for LLM models.
        symbolic: Keyword arguments for the symbolic policy.
        trial_timeout_s: Wall-clock limit per trial (``None`` = none); a trial over it is
            recorded as failed and the run goes on.
        require_isolation: ``sandbox.require_isolation``: refuse to run unless every sandbox isolation
            layer (``etc_fast.sandbox.LAYERS``) is available.
        ablations: Named protocol variants: ``{name: ProtocolConfig}`` built from a preset ``base``
            plus overridden knobs.
        grids: The trial blocks.
        analysis: How the report analyses the run (:class:`AnalysisConfig`).
        source: Where the config came from (not part of the resolved config).
    """

    name: str
    grids: tuple[GridConfig, ...]
    out: str = ""
    workers: int = dataclasses.field(default_factory=default_workers)
    executor: str = "local"
    ray: RayConfig = RayConfig()
    judge: str = "structural"
    judge_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    llm: LLMSettings = LLMSettings()
    symbolic: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    trial_timeout_s: float | None = None
    ablations: Mapping[str, ProtocolConfig] = dataclasses.field(default_factory=dict)
    require_isolation: bool = False
    analysis: AnalysisConfig = AnalysisConfig()
    source: str = dataclasses.field(default="<dict>", compare=False)

    def __post_init__(self) -> None:
        if not self.out:
            object.__setattr__(self, "out", str(Path("runs") / self.name))

    # -- lookups ----------------------------------------------------------------------------
    def configuration(self, name: str) -> ProtocolConfig:
        """The protocol configuration called ``name`` (ablation or preset)."""
        if name in self.ablations:
            return self.ablations[name]
        return CONFIGURATIONS[name]

    def policy_options(self, model: str) -> dict[str, Any]:
        """Keyword arguments for ``create_policy(model, ...)``."""
        if model in ("symbolic", "sr"):  # sr explores as the symbolic agent does
            return dict(self.symbolic)
        if model in OFFLINE_MODELS:
            return {}
        return self.llm.policy_options()

    def judge_kwargs(self) -> dict[str, Any]:
        """Keyword arguments for ``create_judge(self.judge, ...)``."""
        kwargs = dict(self.judge_options)
        if self.judge == "llm":
            kwargs = {**self.llm.judge_options(), **kwargs}
        return kwargs

    @property
    def models(self) -> tuple[str, ...]:
        """Distinct models, in order of appearance."""
        return tuple(dict.fromkeys(g.model for g in self.grids))

    # -- overrides --------------------------------------------------------------------------
    def with_overrides(
        self,
        *,
        model: str | None = None,
        workers: int | None = None,
        executor: str | None = None,
        out: str | None = None,
        ray_address: str | None = None,
    ) -> RunConfig:
        """A copy with command-line values applied (``None`` = keep).

        ``ray_address`` (``--ray-address``) points the Ray executor at an existing cluster; it is
        refused unless the resolved executor is ``ray``, where it would do nothing.
        """
        src = "command line"
        changes: dict[str, Any] = {}
        if model is not None:
            if not isinstance(model, str) or not model.strip():
                raise ConfigError(src, "--model", f"{model!r} is not a model name")
            check_model_name(model.strip(), src, "--model")
            changes["grids"] = tuple(dataclasses.replace(g, model=model.strip()) for g in self.grids)
        if workers is not None:
            changes["workers"] = _positive_int(workers, src, "--workers")
        if executor is not None:
            changes["executor"] = _one_of(executor, EXECUTORS, src, "--executor")
        if out is not None:
            if not isinstance(out, str) or not out:
                raise ConfigError(src, "--out", f"{out!r} is not a directory path")
            changes["out"] = out
        if ray_address is not None:
            if not isinstance(ray_address, str) or not ray_address.strip():
                raise ConfigError(src, "--ray-address", f"{ray_address!r} is not a Ray address (e.g. auto, ray://host:10001)")
            resolved = changes.get("executor", self.executor)
            if resolved != "ray":
                raise ConfigError(src, "--ray-address", f"is used only by the Ray executor, and this run's executor is "
                                  f"{resolved!r}: add --executor ray")
            changes["ray"] = RayConfig(address=ray_address.strip())
        return dataclasses.replace(self, **changes) if changes else self

    # -- serialization ----------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        """The resolved config in the YAML schema (``parse_config(cfg.to_dict())`` round-trips)."""
        llm = dataclasses.asdict(self.llm)
        llm["cache"] = {"path": llm.pop("cache_path"), "mode": llm.pop("cache_mode")}
        if not llm["prices"]:  # left out when unset: resolved configs of earlier runs stay byte-identical
            del llm["prices"]
        return {
            "name": self.name,
            "out": self.out,
            "workers": self.workers,
            "executor": self.executor,
            "ray": {"address": self.ray.address},
            "judge": self.judge,
            "judge_options": _plain(dict(self.judge_options)),
            "llm": llm,
            "symbolic": _plain(dict(self.symbolic)),
            "trial_timeout_s": self.trial_timeout_s,
            "sandbox": {"require_isolation": self.require_isolation},
            "ablations": {name: _ablation_dict(cfg) for name, cfg in self.ablations.items()},
            "grids": [_grid_dict(g) for g in self.grids],
            # left out at its default: resolved configs of earlier runs stay byte-identical
            **({"analysis": dataclasses.asdict(self.analysis)} if self.analysis != AnalysisConfig() else {}),
        }

    def identity(self) -> dict[str, Any]:
        """The fields that change trial results; a run directory can only be resumed when equal."""
        return config_identity(self.to_dict())


def config_identity(resolved: Mapping[str, Any]) -> dict[str, Any]:
    """The result-relevant part of a resolved config dict (see :meth:`RunConfig.to_dict`).

    Workers, executor, output directory, timeouts, retries, cache and key settings are left out:
    they change how a run goes, not what a trial records.
    """
    grids = list(resolved.get("grids") or [])
    keep: dict[str, Any] = {
        "judge": resolved.get("judge"),
        "judge_options": resolved.get("judge_options") or {},
        "symbolic": resolved.get("symbolic") or {},
        "ablations": resolved.get("ablations") or {},
        "grids": grids,
    }
    uses_llm = resolved.get("judge") == "llm" or any(g.get("model") not in OFFLINE_MODELS for g in grids)
    if uses_llm:
        llm = resolved.get("llm") or {}
        keep["llm"] = {k: llm.get(k) for k in ("base_url", "temperature", "seed")}
        keep["llm"]["base_url"] = normalise_base_url(keep["llm"]["base_url"])
        for k in ("model_id", "max_tokens"):  # only when set, so runs stored before they existed still match
            if llm.get(k) is not None:
                keep["llm"][k] = llm[k]
        if llm.get("prompts", "etc_fast") != "etc_fast":
            keep["llm"]["prompts"] = llm["prompts"]
            keep["llm"]["newtonbench_version"] = llm.get("newtonbench_version")
        if resolved.get("judge") == "llm":
            # The judge's prompt and verdict rule as NewtonBench's (docs/guide/fidelity.md): verdicts
            # stored before that change are not resumed into the same run directory.
            keep["llm"]["judge_prompt"] = "newtonbench"
        if _llm_baselines(resolved):
            # Baseline agents that behave as NewtonBench's (docs/guide/fidelity.md): LLM baseline results
            # stored before that change are not resumed into the same run directory.
            keep["llm"]["baselines"] = "newtonbench"
    return keep


def _llm_baselines(resolved: Mapping[str, Any]) -> bool:
    """Whether a grid of ``resolved`` plays a baseline configuration with an LLM model."""
    ablations = resolved.get("ablations") or {}
    for g in resolved.get("grids") or []:
        if g.get("model") in OFFLINE_MODELS:
            continue
        for name in g.get("configurations") or []:
            base = ablations.get(name, {}).get("base", name) if isinstance(ablations.get(name), Mapping) else name
            preset = CONFIGURATIONS.get(base)
            if preset is not None and preset.family == "baseline":
                return True
    return False


def _grid_dict(g: GridConfig) -> dict[str, Any]:
    """A grid in the YAML schema; ``budgets`` only when it has some, so that the resolved config (and
    the identity) of a grid without budgets is that of before budgets existed and its runs resume."""
    d = {k: list(v) if isinstance(v, tuple) else v for k, v in dataclasses.asdict(g).items()}
    if not g.budgets:
        del d["budgets"]
    return d


def _ablation_dict(cfg: ProtocolConfig) -> dict[str, Any]:
    """An ablation as ``{base: preset, knob: value, ...}`` (only knobs that differ)."""
    base = _closest_preset(cfg)
    out: dict[str, Any] = {"base": base.name}
    for f in dataclasses.fields(ProtocolConfig):
        if f.name == "name":
            continue
        val = getattr(cfg, f.name)
        if val != getattr(base, f.name):
            if f.name in NOISE_KNOB_DEFAULTS:
                out.setdefault("acquisition", {})[f.name] = val
            else:
                out[f.name] = val
    return out


def _closest_preset(cfg: ProtocolConfig) -> ProtocolConfig:
    for preset in CONFIGURATIONS.values():
        if (preset.family, preset.acquisition, preset.interpreter) == (cfg.family, cfg.acquisition, cfg.interpreter):
            return preset
    return next(iter(CONFIGURATIONS.values()))  # pragma: no cover - every valid family/acquisition pair has a preset


def _plain(obj: Any) -> Any:
    if isinstance(obj, Mapping):
        return {str(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [_plain(v) for v in obj]
    return obj


# ----------------------------------------------------------------------------------------
# Loading
# ----------------------------------------------------------------------------------------
class _UniqueKeyLoader(yaml.SafeLoader):
    """Safe YAML loader that rejects duplicate mapping keys."""


def _construct_mapping(loader: _UniqueKeyLoader, node: yaml.MappingNode, deep: bool = False) -> dict:
    seen: dict[Any, int] = {}
    for key_node, _ in node.value:
        key = loader.construct_object(key_node, deep=deep)
        if key in seen:
            raise yaml.constructor.ConstructorError(
                None, None, f"duplicate key {key!r} (first on line {seen[key] + 1})", key_node.start_mark
            )
        seen[key] = key_node.start_mark.line
    return yaml.SafeLoader.construct_mapping(loader, node, deep=deep)


_UniqueKeyLoader.add_constructor(yaml.resolver.BaseResolver.DEFAULT_MAPPING_TAG, _construct_mapping)


def read_yaml_file(path: str | os.PathLike[str], source: str, limit: int, too_large: str) -> Any:
    """Read a small YAML document with the checks every configuration file gets: at most ``limit`` bytes
    (else ``too_large`` is the message), UTF-8, a bounded nesting depth, no duplicate keys.

    Raises:
        ConfigError: naming ``source`` and what is wrong.
    """
    from etc_fast._yaml import decode_text, nesting_problem

    try:
        with open(path, "rb") as fh:
            data = fh.read(limit + 1)
    except OSError as exc:
        raise ConfigError(source, "", f"cannot read the file ({exc.strerror or exc})") from None
    if len(data) > limit:
        raise ConfigError(source, "", too_large)
    try:
        text = decode_text(data)
    except ValueError as exc:
        raise ConfigError(source, "", str(exc)) from None
    problem = nesting_problem(text)
    if problem is not None:
        raise ConfigError(source, "", problem)
    try:
        return yaml.load(text, Loader=_UniqueKeyLoader)  # noqa: S506 - a SafeLoader subclass
    except yaml.YAMLError as exc:
        raise ConfigError(source, "", f"not valid YAML: {exc}") from None
    except RecursionError:  # a second guard; the nesting check refuses such files first
        raise ConfigError(source, "", "nested too deeply to load") from None


def load_config(path: str | os.PathLike[str]) -> RunConfig:
    """Read and validate a run configuration file.

    Args:
        path: YAML file.

    Returns:
        The validated configuration.

    Raises:
        ConfigError: The file is missing, not YAML, or a value is wrong (the message names the key).
    """
    source = str(path)
    raw = read_yaml_file(path, source, MAX_CONFIG_BYTES,
                         f"the file is larger than {MAX_CONFIG_BYTES // 2**20} MiB; a run configuration is a few kilobytes")
    return parse_config(raw, source=source)


def parse_config(raw: Any, *, source: str = "<dict>") -> RunConfig:
    """Validate an already-parsed YAML document (a mapping) into a :class:`RunConfig`."""
    return _Parser(source).run(raw)


# ----------------------------------------------------------------------------------------
# Validation helpers
# ----------------------------------------------------------------------------------------
def _one_of(value: Any, allowed: Sequence[str], source: str, key: str) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ConfigError(source, key, f"{value!r} is not one of {', '.join(allowed)}")
    return value


def _positive_int(value: Any, source: str, key: str, *, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        if isinstance(value, str) and value.strip().lstrip("+").isdigit():
            value = int(value)
        else:
            raise ConfigError(source, key, f"{value!r} is not an integer")
    if value < minimum:
        raise ConfigError(source, key, f"{value} must be >= {minimum}")
    return value


def _number(value: Any, source: str, key: str, *, minimum: float | None = None, positive: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ConfigError(source, key, f"{value!r} is not a number")
    value = float(value)
    if not math.isfinite(value):
        raise ConfigError(source, key, f"{value} is not finite")
    if positive and value <= 0:
        raise ConfigError(source, key, f"{value} must be > 0")
    if minimum is not None and value < minimum:
        raise ConfigError(source, key, f"{value} must be >= {minimum}")
    return value


def _string(value: Any, source: str, key: str, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(source, key, f"{value!r} is not a non-empty string")
    return value.strip()


def _mapping(value: Any, source: str, key: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, Mapping):
        raise ConfigError(source, key, f"expected a mapping, got {type(value).__name__} {value!r}")
    for k in value:
        if not isinstance(k, str):
            raise ConfigError(source, _join(key, str(k)), f"keys must be strings, got {k!r}")
    return dict(value)


def _list(value: Any, source: str, key: str, *, nonempty: bool = True) -> list:
    if isinstance(value, (str, Mapping)) or not isinstance(value, Sequence):
        raise ConfigError(source, key, f"expected a list, got {type(value).__name__} {value!r}")
    if nonempty and not value:
        raise ConfigError(source, key, "must not be empty")
    return list(value)


def _check_keys(d: Mapping[str, Any], allowed: Sequence[str], source: str, key: str) -> None:
    for k in d:
        if k not in allowed:
            raise ConfigError(source, _join(key, k), f"unknown key; allowed keys: {', '.join(allowed)}")


def _check_name(name: str, source: str, key: str) -> None:
    if not all(c.isalnum() or c in "-_." for c in name):
        raise ConfigError(source, key, f"{name!r} may only contain letters, digits, '-', '_' and '.'")


def _join(prefix: str, key: str) -> str:
    return f"{prefix}.{key}" if prefix else key


def _unique(items: list, source: str, key: str) -> None:
    seen: dict[Any, int] = {}
    for i, item in enumerate(items):
        if item in seen:
            raise ConfigError(source, f"{key}[{i}]", f"{item!r} is listed twice (also at [{seen[item]}])")
        seen[item] = i


def _known_task_names() -> list[str]:
    from etc_fast.tasks import list_tasks

    return list(list_tasks())


def _check_custom_task(path: str) -> None:
    """Load a custom task file; raises with the loader's message when it is bad."""
    from etc_fast.tasks import get_task

    get_task(path)


def _is_generated(name: str) -> bool:
    from etc_fast.tasks.generate import is_generated_name

    return is_generated_name(name)


def _is_task_path(name: str) -> bool:
    """Whether a grid's task is a custom task (one law: a task file's path or a generated law's name)."""
    from etc_fast.tasks.generate import is_generated_name

    return name.endswith((".yaml", ".yml")) or "/" in name or os.sep in name or is_generated_name(name)


@dataclasses.dataclass(frozen=True)
class ConfigKey:
    """One key of the run-configuration schema (:data:`CONFIG_KEYS`).

    Attributes:
        path: Where the key sits: ``workers``, ``llm.cache.mode``, ``grids[].tasks``.
        kind: What value it takes, in words (``integer >= 1``, ``string or null``).
        attr: ``Class.attribute`` whose default and docstring entry are this key's (``None``: the
            key has no attribute of its own and ``meaning`` says what it is).
        allowed: The values it accepts, when it is one of a closed set (the validator checks these).
        default: The default in words, where the attribute's own default does not say it (``""``:
            take the attribute's).
        meaning: What it does, where no attribute documents it.
    """

    path: str
    kind: str
    attr: str | None = None
    allowed: tuple[str, ...] = ()
    default: str = ""
    meaning: str = ""

    @property
    def section(self) -> str:
        """The mapping that holds the key (``""`` for the top level, ``llm.cache``, ``grids[]``)."""
        return self.path.rpartition(".")[0]

    @property
    def name(self) -> str:
        """The key's own name, last part of :attr:`path`."""
        return self.path.rpartition(".")[2]


#: Every key a run configuration may hold outside ``ablations`` (whose keys are the
#: :class:`ProtocolConfig` knobs, :data:`_PROTOCOL_KNOBS`). The parser's allowed-key checks and its
#: closed sets of values are read from this table, and the configuration reference page is
#: generated from it (``python -m etc_fast.docs``), so the two cannot disagree.
CONFIG_KEYS: tuple[ConfigKey, ...] = (
    ConfigKey("name", "string (required)", "RunConfig.name", default="required"),
    ConfigKey("out", "string (a directory)", "RunConfig.out", default="runs/<name>"),
    ConfigKey("workers", "integer >= 1", "RunConfig.workers"),
    ConfigKey("executor", "choice", "RunConfig.executor", EXECUTORS),
    ConfigKey("ray", "mapping (keys below)", "RunConfig.ray", default="{}"),
    ConfigKey("judge", "choice", "RunConfig.judge", JUDGES),
    ConfigKey("judge_options", "mapping", "RunConfig.judge_options"),
    ConfigKey("llm", "mapping (keys below)", "RunConfig.llm", default="{}"),
    ConfigKey("symbolic", "mapping", "RunConfig.symbolic"),
    ConfigKey("trial_timeout_s", "number > 0, or null", "RunConfig.trial_timeout_s"),
    ConfigKey("ablations", "mapping of names to ablations (keys below)", "RunConfig.ablations"),
    ConfigKey("grids", "non-empty list of grids (keys below; required)", "RunConfig.grids", default="required"),
    ConfigKey("sandbox", "mapping (keys below)", default="{}", meaning="Settings of the sandbox that scores submissions."),
    ConfigKey("inputs", "mapping (written by the runner)", default="absent",
              meaning="Written into a run's config.resolved.yaml (the SHA-256 of each input file the run read); "
                      "accepted so that a resolved configuration reads back, never read from a configuration."),
    ConfigKey("analysis", "mapping (keys below)", "RunConfig.analysis", default="{}"),
    ConfigKey("ray.address", "string, or null", "RayConfig.address"),
    ConfigKey("analysis.reference", "a configuration of the grids, or null", "AnalysisConfig.reference"),
    ConfigKey("analysis.cluster", "choice", "AnalysisConfig.cluster", ANALYSIS_CLUSTERS),
    ConfigKey("llm.base_url", "string (URL), or null", "LLMSettings.base_url"),
    ConfigKey("llm.api_key_env", "string", "LLMSettings.api_key_env"),
    ConfigKey("llm.temperature", "number >= 0", "LLMSettings.temperature"),
    ConfigKey("llm.timeout_s", "number > 0", "LLMSettings.timeout_s"),
    ConfigKey("llm.max_retries", "integer >= 0", "LLMSettings.max_retries"),
    ConfigKey("llm.retry_budget_s", "number > 0", "LLMSettings.retry_budget_s"),
    ConfigKey("llm.seed", "integer >= 0, or null", "LLMSettings.seed"),
    ConfigKey("llm.cache", "mapping (keys below)", default="{}", meaning="The reply cache: its file and its mode."),
    ConfigKey("llm.max_tokens", "integer >= 1, or null", "LLMSettings.max_tokens"),
    ConfigKey("llm.model_id", "string, or null", "LLMSettings.model_id"),
    ConfigKey("llm.max_consecutive_failures", "integer >= 1", "LLMSettings.max_consecutive_failures"),
    ConfigKey("llm.prompts", "choice", "LLMSettings.prompts", ("etc_fast", "newtonbench")),
    ConfigKey("llm.newtonbench_path", "string, or null", "LLMSettings.newtonbench_path"),
    ConfigKey("llm.newtonbench_version", "string (written by the loader)", "LLMSettings.newtonbench_version"),
    ConfigKey("llm.prices", "mapping {model: {prompt: number >= 0, completion: number >= 0}}", "LLMSettings.prices"),
    ConfigKey("llm.cache.path", "string (a file), or null", "LLMSettings.cache_path"),
    ConfigKey("llm.cache.mode", "choice", "LLMSettings.cache_mode", CACHE_MODES),
    ConfigKey("sandbox.require_isolation", "boolean", "RunConfig.require_isolation"),
    ConfigKey("grids[].model", "string (required)", "GridConfig.model", default="required"),
    ConfigKey("grids[].configurations", "list of configuration names, or all (the paper's eight; required)",
              "GridConfig.configurations", default="required"),
    ConfigKey("grids[].tasks", "list of task names, task files or {generated: {seed, n}}, or all (required)",
              "GridConfig.tasks", default="required"),
    ConfigKey("grids[].difficulties", "list of distinct allowed values", "GridConfig.difficulties", DIFFICULTIES),
    ConfigKey("grids[].law_versions", "list of distinct allowed values", "GridConfig.law_versions", LAW_VERSIONS),
    ConfigKey("grids[].noise", "list of distinct numbers >= 0, or one number", "GridConfig.noise"),
    ConfigKey("grids[].rollouts", f"integer from 1 to {MAX_ROLLOUTS:,}", "GridConfig.rollouts"),
    ConfigKey("grids[].noise_seed", "integer >= 0", "GridConfig.noise_seed"),
    ConfigKey("grids[].systems", "list of distinct allowed values", "GridConfig.systems", SYSTEMS),
    ConfigKey("grids[].budgets", "list of distinct integers >= 1", "GridConfig.budgets"),
)


def _section_keys(section: str) -> tuple[str, ...]:
    """The names of :data:`CONFIG_KEYS` directly under ``section``, in table order."""
    return tuple(k.name for k in CONFIG_KEYS if k.section == section)


def _allowed(path: str) -> tuple[str, ...]:
    """The closed set of values :data:`CONFIG_KEYS` gives the key at ``path``."""
    return next(k.allowed for k in CONFIG_KEYS if k.path == path)


_TOP_KEYS = _section_keys("")
_GRID_KEYS = _section_keys("grids[]")
_LLM_KEYS = _section_keys("llm")
_PROTOCOL_KNOBS = tuple(
    f.name for f in dataclasses.fields(ProtocolConfig)
    if f.name not in ("name", "family", "acquisition") and f.name not in NOISE_KNOB_DEFAULTS
)
#: The :class:`ProtocolConfig` knobs an ablation sets directly, besides ``base`` (the noise knobs go
#: under its ``acquisition``).
ABLATION_KNOBS = _PROTOCOL_KNOBS


def _grid_size(g: GridConfig) -> int:
    """Trials of one grid block before deduplication (custom tasks are not multiplied by
    difficulties and law versions)."""
    n_custom = sum(1 for t in g.tasks if _is_task_path(t))
    n_modules = len(g.tasks) - n_custom
    per_task_cells = n_modules * len(g.difficulties) * len(g.law_versions) + n_custom
    return per_task_cells * len(g.systems) * len(g.noise) * max(1, len(g.budgets)) * len(g.configurations) * g.rollouts


class _Parser:
    def __init__(self, source: str) -> None:
        self.src = source
        self._ablations: dict[str, ProtocolConfig] = {}

    def err(self, key: str, message: str) -> ConfigError:
        return ConfigError(self.src, key, message)

    def run(self, raw: Any) -> RunConfig:
        src = self.src
        if raw is None:
            raise self.err("", "the file is empty")
        doc = _mapping(raw, src, "")
        _check_keys(doc, _TOP_KEYS, src, "")
        for required in ("name", "grids"):
            if required not in doc:
                raise self.err(required, "missing (required)")
        name = _string(doc["name"], src, "name")
        _check_name(name, src, "name")
        kwargs: dict[str, Any] = {"name": name, "source": src}
        if doc.get("out") is not None:
            kwargs["out"] = _string(doc["out"], src, "out")
        if doc.get("workers") is not None:
            kwargs["workers"] = _positive_int(doc["workers"], src, "workers")
        if "executor" in doc:
            kwargs["executor"] = _one_of(doc["executor"], _allowed("executor"), src, "executor")
        if "ray" in doc:
            ray = _mapping(doc["ray"], src, "ray")
            _check_keys(ray, _section_keys("ray"), src, "ray")
            kwargs["ray"] = RayConfig(address=_string(ray.get("address"), src, "ray.address", optional=True))
        if "judge" in doc:
            kwargs["judge"] = _one_of(doc["judge"], _allowed("judge"), src, "judge")
        if "judge_options" in doc:
            kwargs["judge_options"] = _mapping(doc["judge_options"], src, "judge_options")
        if "llm" in doc:
            kwargs["llm"] = self.llm(doc["llm"])
        if "symbolic" in doc:
            kwargs["symbolic"] = _mapping(doc["symbolic"], src, "symbolic")
            if "time_budget_s" in kwargs["symbolic"]:
                raise self.err("symbolic.time_budget_s", "is gone: it silently shortened searches on a busy machine. "
                               "The search is bounded by counts; symbolic.time_limit_s (default 300 s) is a "
                               "wall-clock limit that fails the trial instead")
        if doc.get("trial_timeout_s") is not None:
            kwargs["trial_timeout_s"] = _number(doc["trial_timeout_s"], src, "trial_timeout_s", positive=True)
        if doc.get("sandbox") is not None:
            sb = _mapping(doc["sandbox"], src, "sandbox")
            _check_keys(sb, _section_keys("sandbox"), src, "sandbox")
            flag = sb.get("require_isolation", False)
            if not isinstance(flag, bool):
                raise self.err("sandbox.require_isolation", f"{flag!r} is not true or false")
            kwargs["require_isolation"] = flag
        ablations = self.ablations(doc.get("ablations"))
        kwargs["ablations"] = ablations
        self._ablations = ablations
        grids = _list(doc["grids"], src, "grids")
        kwargs["grids"] = tuple(self.grid(g, f"grids[{i}]", ablations) for i, g in enumerate(grids))
        total = 0
        for i, g in enumerate(kwargs["grids"]):
            total += _grid_size(g)
            if total > MAX_TRIALS:
                raise self.err(
                    f"grids[{i}]", f"the run would have more than {MAX_TRIALS:,} trials ({total:,} up to this grid); "
                    "split it into several runs or reduce rollouts, tasks or configurations"
                )
        if doc.get("analysis") is not None:
            kwargs["analysis"] = self.analysis(doc["analysis"], kwargs["grids"])
        if "llm" in kwargs and kwargs["llm"].prompts == "newtonbench":
            kwargs["llm"] = self.newtonbench(kwargs["llm"], kwargs["grids"], kwargs.get("judge", "structural"))
        return RunConfig(**kwargs)

    def analysis(self, raw: Any, grids: Sequence[GridConfig]) -> AnalysisConfig:
        """The ``analysis`` section; its reference must be a configuration some grid plays."""
        src = self.src
        sec = _mapping(raw, src, "analysis")
        _check_keys(sec, _section_keys("analysis"), src, "analysis")
        cluster = _one_of(sec.get("cluster", "task"), ANALYSIS_CLUSTERS, src, "analysis.cluster")
        reference = _string(sec.get("reference"), src, "analysis.reference", optional=True)
        if reference is not None:
            played = list(dict.fromkeys(c for g in grids for c in g.configurations))
            if reference not in played:
                raise self.err("analysis.reference", f"{reference!r} is not a configuration of the grids "
                               f"({', '.join(played)}): the paired table would have nothing to compare with")
        return AnalysisConfig(reference=reference, cluster=cluster)

    def _plays_baseline(self, g: GridConfig) -> bool:
        return any(
            (self._ablations[c].family if c in self._ablations else CONFIGURATIONS[c].family) == "baseline"
            for c in g.configurations if c in self._ablations or c in CONFIGURATIONS
        )

    def newtonbench(self, llm: LLMSettings, grids: Sequence[GridConfig], judge: str) -> LLMSettings:
        """Load the NewtonBench checkout of ``prompts: newtonbench`` now: every LLM-played task's
        module must be there (a missing or incompatible checkout is a configuration error)."""
        from etc_fast.llm import NewtonBenchCheckoutError, NewtonBenchTexts

        try:
            texts = NewtonBenchTexts(llm.newtonbench_path)
            names = {t for g in grids if g.model not in OFFLINE_MODELS and self._plays_baseline(g) for t in g.tasks}
            texts.check_tasks(sorted(names))
            for g in grids:
                if g.model in OFFLINE_MODELS or not self._plays_baseline(g):
                    continue
                for system in g.systems:
                    if system != "vanilla_equation":
                        for t in g.tasks:
                            texts.check_system(t, system)
        except NewtonBenchCheckoutError as exc:
            raise self.err("llm.newtonbench_path", str(exc)) from None
        return dataclasses.replace(llm, newtonbench_path=str(texts.root), newtonbench_version=texts.version())

    def llm(self, raw: Any) -> LLMSettings:
        src = self.src
        d = _mapping(raw, src, "llm")
        _check_keys(d, _LLM_KEYS, src, "llm")
        kw: dict[str, Any] = {}
        if "base_url" in d:
            kw["base_url"] = _string(d["base_url"], src, "llm.base_url", optional=True)
        if "api_key_env" in d:
            kw["api_key_env"] = _string(d["api_key_env"], src, "llm.api_key_env")
        if "temperature" in d:
            kw["temperature"] = _number(d["temperature"], src, "llm.temperature", minimum=0.0)
        if "timeout_s" in d:
            kw["timeout_s"] = _number(d["timeout_s"], src, "llm.timeout_s", positive=True)
        if "max_retries" in d:
            kw["max_retries"] = _positive_int(d["max_retries"], src, "llm.max_retries", minimum=0)
        if "retry_budget_s" in d:
            kw["retry_budget_s"] = _number(d["retry_budget_s"], src, "llm.retry_budget_s", positive=True)
        if d.get("max_tokens") is not None:
            kw["max_tokens"] = _positive_int(d["max_tokens"], src, "llm.max_tokens")
        if "model_id" in d:
            kw["model_id"] = _string(d["model_id"], src, "llm.model_id", optional=True)
        if "max_consecutive_failures" in d:
            kw["max_consecutive_failures"] = _positive_int(d["max_consecutive_failures"], src, "llm.max_consecutive_failures")
        if d.get("seed") is not None:
            kw["seed"] = _positive_int(d["seed"], src, "llm.seed", minimum=0)
        if d.get("prompts") is not None:
            kw["prompts"] = _one_of(d["prompts"], _allowed("llm.prompts"), src, "llm.prompts")
        if d.get("newtonbench_path") is not None:
            kw["newtonbench_path"] = _string(d["newtonbench_path"], src, "llm.newtonbench_path")
        if d.get("prices") is not None:
            kw["prices"] = self.prices(d["prices"])
        if "cache" in d:
            cache = _mapping(d["cache"], src, "llm.cache")
            _check_keys(cache, _section_keys("llm.cache"), src, "llm.cache")
            if "path" in cache:
                kw["cache_path"] = _string(cache["path"], src, "llm.cache.path", optional=True)
            if "mode" in cache:
                mode = cache["mode"]
                if mode is False:  # YAML 1.1 reads an unquoted `off` (or `no`) as false
                    mode = "off"
                kw["cache_mode"] = _one_of(mode, _allowed("llm.cache.mode"), src, "llm.cache.mode")
        return LLMSettings(**kw)

    def prices(self, raw: Any, key: str = "llm.prices") -> dict[str, dict[str, float]]:
        """``{model: {prompt, completion}}`` USD per 1M tokens, under ``key`` (``""``: a prices file's top level)."""
        src = self.src
        d = _mapping(raw, src, key)
        out: dict[str, dict[str, float]] = {}
        for model, rate in d.items():
            where = _join(key, model) if key else model
            if not isinstance(model, str) or not model.strip():
                raise self.err(key, f"a model name must be a non-empty string, got {model!r}")
            body = _mapping(rate, src, where)
            _check_keys(body, ("prompt", "completion"), src, where)
            for part in ("prompt", "completion"):
                if part not in body:
                    raise self.err(_join(where, part), "missing (required): USD per 1M tokens")
            out[model] = {part: _number(body[part], src, _join(where, part), minimum=0.0) for part in ("prompt", "completion")}
        return out

    def ablations(self, raw: Any) -> dict[str, ProtocolConfig]:
        src = self.src
        d = _mapping(raw, src, "ablations")
        out: dict[str, ProtocolConfig] = {}
        for name, spec in d.items():
            key = f"ablations.{name}"
            if name in CONFIGURATIONS:
                raise self.err(key, f"{name!r} is a preset configuration name; choose another name")
            _check_name(name, src, key)
            body = _mapping(spec, src, key)
            _check_keys(body, ("base", "acquisition") + _PROTOCOL_KNOBS, src, key)
            if "base" not in body:
                raise self.err(_join(key, "base"), f"missing (required): one of {', '.join(CONFIGURATIONS)}")
            base = _one_of(body.pop("base"), tuple(CONFIGURATIONS), src, _join(key, "base"))
            if "acquisition" in body:  # the noise knobs: acquisition: {noise_aware, explore_fraction, replicates, stop_when_settled, test_extremes}
                akey = _join(key, "acquisition")
                acq = _mapping(body.pop("acquisition"), src, akey)
                _check_keys(acq, tuple(NOISE_KNOB_DEFAULTS), src, akey)
                if acq and CONFIGURATIONS[base].family != "planner":
                    raise self.err(akey, f"the acquisition knobs apply to planners; {base!r} is a baseline")
                body.update(acq)
            try:
                cfg = dataclasses.replace(CONFIGURATIONS[base], name=name, **body)
            except (ValueError, TypeError) as exc:
                raise self.err(key, str(exc)) from None
            out[name] = cfg
        return out

    def grid(self, raw: Any, key: str, ablations: Mapping[str, ProtocolConfig]) -> GridConfig:
        src = self.src
        d = _mapping(raw, src, key)
        _check_keys(d, _GRID_KEYS, src, key)
        for required in ("model", "configurations", "tasks"):
            if required not in d:
                raise self.err(_join(key, required), "missing (required)")
        model = _string(d["model"], src, _join(key, "model"))
        check_model_name(model, src, _join(key, "model"))
        if model == "sr" and importlib.util.find_spec("pyoperon") is None:
            raise self.err(_join(key, "model"), "the sr policy needs pyoperon: pip install 'etc-fast[sr]'")

        raw_cfgs = d["configurations"]
        if raw_cfgs == "all":  # the paper's eight; the GP presets are named when wanted
            cfgs = list(PAPER_CONFIGURATIONS)
        else:
            cfgs = self.choices(raw_cfgs, tuple(CONFIGURATIONS) + tuple(ablations), _join(key, "configurations"))
        tasks = self.tasks(d["tasks"], _join(key, "tasks"))
        diffs = self.choices(d.get("difficulties", ["easy"]), _allowed("grids[].difficulties"), _join(key, "difficulties"))
        versions = self.choices(d.get("law_versions", ["v0"]), _allowed("grids[].law_versions"), _join(key, "law_versions"))

        raw_noise = d.get("noise", [0.0])
        if isinstance(raw_noise, (int, float)) and not isinstance(raw_noise, bool):
            raw_noise = [raw_noise]
        noise = [
            _number(v, src, f"{key}.noise[{i}]", minimum=0.0)
            for i, v in enumerate(_list(raw_noise, src, _join(key, "noise")))
        ]
        _unique(noise, src, _join(key, "noise"))
        rollouts = _positive_int(d.get("rollouts", 1), src, _join(key, "rollouts"))
        if rollouts > MAX_ROLLOUTS:
            raise self.err(_join(key, "rollouts"), f"{rollouts:,} is more than the limit of {MAX_ROLLOUTS:,} rollouts per cell")
        noise_seed = _positive_int(d.get("noise_seed", 0), src, _join(key, "noise_seed"), minimum=0)
        systems = self.choices(d.get("systems", ["vanilla_equation"]), _allowed("grids[].systems"), _join(key, "systems"))
        if systems != ["vanilla_equation"]:
            custom = [t for t in tasks if _is_task_path(t)]
            if custom:
                raise self.err(_join(key, "systems"), f"custom tasks have only the vanilla_equation system ({custom[0]})")
        for system in systems:
            for name in cfgs:
                why = lab_refusal(system, ablations[name] if name in ablations else CONFIGURATIONS[name])
                if why is not None:
                    raise self.err(_join(key, "systems"), f"configuration {name!r} on {system}: {why}")
        budgets = self.budgets(d.get("budgets"), _join(key, "budgets"), cfgs, ablations)
        return GridConfig(
            model=model,
            configurations=tuple(cfgs),
            tasks=tuple(tasks),
            difficulties=tuple(diffs),
            law_versions=tuple(versions),
            noise=tuple(noise),
            rollouts=rollouts,
            noise_seed=noise_seed,
            systems=tuple(systems),
            budgets=tuple(budgets),
        )

    def budgets(self, raw: Any, key: str, cfgs: Sequence[str], ablations: Mapping[str, ProtocolConfig]) -> list[int]:
        """A grid's ``budgets``: distinct positive integers (any order; absent or null = none). A
        configuration with its own ``measurement_budget`` (an ablation) cannot take a grid's
        budgets: which cap applies would be ambiguous."""
        if raw is None:
            return []
        items = _list(raw, self.src, key)
        for i, v in enumerate(items):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise self.err(f"{key}[{i}]", f"{v!r} is not a positive integer (a budget is the most "
                               "simulator evaluations a trial may run)")
        _unique(items, self.src, key)
        for name in cfgs:
            own = ablations[name].measurement_budget if name in ablations else CONFIGURATIONS[name].measurement_budget
            if own is not None:
                raise self.err(key, f"configuration {name!r} sets its own measurement_budget ({own}); a grid with "
                               "budgets sets that cap for each of its configurations. Remove measurement_budget "
                               "from the ablation, or play it in a grid without budgets")
        return items

    def choices(self, raw: Any, allowed: Sequence[str], key: str) -> list[str]:
        """A non-empty list of distinct values, each one of ``allowed``."""
        items = _list(raw, self.src, key)
        for i, v in enumerate(items):
            _one_of(v, allowed, self.src, f"{key}[{i}]")
        _unique(items, self.src, key)
        return items

    def tasks(self, raw: Any, key: str) -> list[str]:
        src = self.src
        try:
            known = _known_task_names()
        except ImportError as exc:  # the task registry itself is broken: say so, with the key
            raise self.err(key, f"cannot load the task registry ({exc})") from None
        if raw == "all":
            return list(known)
        if isinstance(raw, Mapping) and "generated" in raw:  # tasks: {generated: {...}}, a one-entry list
            raw = [raw]
        items = _list(raw, src, key)
        out: list[str] = []
        for i, t in enumerate(items):
            k = f"{key}[{i}]"
            if isinstance(t, Mapping):
                out.extend(self.generated(t, k))
                continue
            t = _string(t, src, k)
            if _is_generated(t):
                out.append(t)
            elif _is_task_path(t):
                path = os.path.normpath(t)
                if not Path(path).is_file():
                    raise self.err(k, f"custom task file {t!r} does not exist (relative paths are taken from {os.getcwd()})")
                try:
                    _check_custom_task(path)
                except (ValueError, OSError) as exc:
                    raise self.err(k, f"bad custom task file {t!r}: {exc}") from None
                out.append(path)
            elif t in known:
                out.append(t)
            elif t.startswith("gen-"):
                raise self.err(k, f"{t!r} is not a generated law's name: write gen-s<seed>-<index> with the index "
                               "zero-padded to four digits (gen-s0-0042), or list a suite as {generated: {seed: 0, n: 20}}")
            else:
                raise self.err(k, f"{t!r} is not a known task (modules: {', '.join(known)}; or a path to a task .yaml; "
                               "or {generated: {seed: 0, n: 20}})")
        _unique(out, src, key)
        return out

    def generated(self, raw: Mapping, key: str) -> list[str]:
        """A task source ``{generated: {seed: S, n: N}}``: the names of the first ``N`` generated laws
        of seed ``S`` (:mod:`etc_fast.tasks.generate`)."""
        from etc_fast.tasks.generate import MAX_N, MAX_SEED, generated_names

        _check_keys(raw, ("generated",), self.src, key)
        gkey = _join(key, "generated")
        if "generated" not in raw:
            raise self.err(gkey, "missing (required): a task entry that is a mapping is {generated: {seed: S, n: N}}")
        body = _mapping(raw["generated"], self.src, gkey)
        _check_keys(body, ("seed", "n"), self.src, gkey)
        for field in ("seed", "n"):
            if field not in body:
                raise self.err(_join(gkey, field), "missing (required)")
        seed = body["seed"]
        if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed <= MAX_SEED:
            raise self.err(_join(gkey, "seed"), f"{seed!r} is not an integer from 0 to {MAX_SEED}")
        n = body["n"]
        if isinstance(n, bool) or not isinstance(n, int) or not 1 <= n <= MAX_N:
            raise self.err(_join(gkey, "n"), f"{n!r} is not an integer from 1 to {MAX_N}")
        return generated_names(seed, n)
