"""Grid expansion: a run configuration -> the ordered list of trial specs."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

from etc_fast.protocol import ProtocolConfig, TrialSpec
from etc_fast.runner._config import RunConfig, _is_task_path

__all__ = ["expand_grid", "describe_grid"]


def expand_grid(config: RunConfig) -> list[TrialSpec]:
    """Every trial of ``config``, deduplicated, in a fixed order.

    Order: grids as listed; within a grid task, system, difficulty, law version, noise,
    measurement budget, configuration, rollout (so the trials of one cell are adjacent, and the
    configurations compared at one budget too). A spec that appears in two grids is kept
    once, at its first position. Custom tasks (YAML paths) have one law: they are expanded once
    with the default difficulty and law version.

    A grid's ``budgets`` give each configuration ``measurement_budget = b`` (its name kept); a grid
    without budgets plays its configurations as they are, so its trial ids are those of before
    budgets existed.

    Args:
        config: A validated run configuration.

    Returns:
        The trial specs.
    """
    specs: dict[str, TrialSpec] = {}
    configs: dict[tuple[str, int | None], ProtocolConfig] = {}  # one object per configuration and budget
    for grid in config.grids:
        for task in grid.tasks:
            custom = _is_task_path(task)
            diffs = ("easy",) if custom else grid.difficulties
            versions = ("v0",) if custom else grid.law_versions
            cells = [(system, diff, version) for system in grid.systems for diff in diffs for version in versions]
            for system, diff, version in cells:
                for noise in grid.noise:
                    for budget in grid.budgets or (None,):
                        for cfg_name in grid.configurations:
                            cfg = configs.get((cfg_name, budget))
                            if cfg is None:
                                cfg = configs[(cfg_name, budget)] = _with_budget(config.configuration(cfg_name), budget)
                            for rollout in range(grid.rollouts):
                                spec = TrialSpec(
                                    model=grid.model,
                                    config=cfg,
                                    task=task,
                                    difficulty=diff,
                                    law_version=version,
                                    noise=float(noise),
                                    rollout=rollout,
                                    noise_seed=grid.noise_seed,
                                    system=system,
                                )
                                specs.setdefault(spec.trial_id, spec)
    return list(specs.values())


def _with_budget(cfg: ProtocolConfig, budget: int | None) -> ProtocolConfig:
    """``cfg`` capped at ``budget`` measurements (``None``: ``cfg`` itself, untouched)."""
    return cfg if budget is None else dataclasses.replace(cfg, measurement_budget=budget)


def describe_grid(specs: list[TrialSpec]) -> str:
    """A short human-readable summary of a trial list: per model, difficulty, law version and noise
    level, the trial count, configurations, tasks and rollouts, and the measurement budgets when
    any trial has one (``none``: a configuration's own rule, no cap). Custom tasks (one law each, no
    difficulty or law version) form cells of their own, shown as ``custom``."""
    lines = [f"{len(specs)} trials"]
    by_cell: dict[tuple, list[TrialSpec]] = defaultdict(list)
    for s in specs:
        if _is_task_path(s.task):
            by_cell[(s.model, s.system, "custom", None, s.noise)].append(s)
        else:
            by_cell[(s.model, s.system, s.difficulty, s.law_version, s.noise)].append(s)
    for (model, system, diff, version, noise), cell in by_cell.items():
        n = len(cell)
        where = f"{model} / {diff}" if system == "vanilla_equation" else f"{model} / {system} / {diff}"
        if version is not None:
            where += f" / {version}"
        cfgs = list(dict.fromkeys(s.config.name for s in cell))
        tasks = list(dict.fromkeys(s.task for s in cell))
        rollouts = sorted({s.rollout for s in cell})
        budgets = list(dict.fromkeys(s.config.measurement_budget for s in cell))
        # A factor only when every trial has a budget (a grid's budgets); a cell mixing capped
        # ablations with uncapped configurations lists its budgets without one.
        factor = f"{len(budgets)} budget{'s' if len(budgets) != 1 else ''} x " if None not in budgets else ""
        lines.append(
            f"  {where} / noise {noise:g}: {n} trials = {factor}"
            f"{len(cfgs)} configurations x {len(tasks)} tasks x {len(rollouts)} rollout{'s' if len(rollouts) != 1 else ''}"
        )
        if budgets != [None]:
            lines.append(f"    measurement budgets: {', '.join('none' if b is None else str(b) for b in budgets)}")
        lines.append(f"    configurations: {', '.join(cfgs)}")
        lines.append(f"    tasks: {', '.join(tasks)}")
    return "\n".join(lines)
