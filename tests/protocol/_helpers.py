"""Builders for scripted trials."""

from __future__ import annotations

from etc_fast.protocol import Action, TrialSpec, get_configuration

GRAVITY_LAW = "def discovered_law(mass1, mass2, distance):\n    C = 6.674e-5\n    return C * mass1 * mass2 / distance ** 1.5\n"
HOOKE_LAW = "def discovered_law(x):\n    return 462.282 * x ** 2\n"


def make_spec(config: str = "variance_n", task: str = "m0_gravity", **overrides) -> TrialSpec:
    spec_keys = {"difficulty", "law_version", "noise", "rollout", "noise_seed"}
    spec_kw = {k: overrides.pop(k) for k in list(overrides) if k in spec_keys}
    cfg = get_configuration(config, **({"name": config + "_t", **overrides} if overrides else {}))
    return TrialSpec(model="scripted", config=cfg, task=task, **spec_kw)


def committee(*hyps: str, **kw) -> Action:
    return Action(kind="committee", hypotheses=tuple(hyps), raw="committee", **kw)


def draft(src: str = GRAVITY_LAW) -> Action:
    return Action(kind="draft", source=src, raw="draft")


def final(src: str = GRAVITY_LAW) -> Action:
    return Action(kind="final", source=src, raw="final")


def analysis(code: str) -> Action:
    return Action(kind="analysis", code=code, raw="analysis")


def experiment(*points: dict) -> Action:
    return Action(kind="experiment", points=tuple(points), raw="experiment")
