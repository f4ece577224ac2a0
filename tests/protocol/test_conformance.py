"""The conformance matrix: one awkward scripted policy on every tier x family x interpreter x noise.

The loops are written once against the Lab interface (``etc_fast.labs``); this matrix shows every
lab answers the same awkward actions the same way: an invalid reply, a reply cut off at the token
limit, an analysis without an interpreter, code that fails validation, a request that cannot be run,
an experiment during exploration and during synthesis, an invalid final law. Each cell's event log
(phase, turn, action kind, feedback kind, outcome) is pinned in ``data/conformance.json``; after an
intended change, regenerate with ``ETC_FAST_REGEN_CONFORMANCE=1 python -m pytest
tests/protocol/test_conformance.py`` and review the diff.
"""

from __future__ import annotations

import itertools
import json
import os
from pathlib import Path
from typing import Any

import pytest

from etc_fast.core import Action, Observation, TrialSpec, get_configuration
from etc_fast.policies.scripted import ScriptedPolicy

PINNED = Path(__file__).parent / "data" / "conformance.json"
TIERS = ("vanilla_equation", "simple_system", "complex_system")
TASK = "m0_gravity"
GOOD = ("mass1 * mass2 / distance ** 2", "mass1 * mass2 / distance")
LAW = "def discovered_law(mass1, mass2, distance):\n    return 6.674e-5 * mass1 * mass2 / distance ** 2\n"
CUT_OFF = Action(kind="invalid", error="the reply was cut off at the token limit (finish_reason=length)",
                 raw="<committee>\nmass1 * mass2 /")


def _request(obs: Observation) -> dict[str, Any]:
    """One valid experiment for the tier: the law's inputs, or the system's controls at mid-domain."""
    if obs.system is not None:
        out = {}
        for c in obs.system.spec.controls:
            if c.fixed is not None:
                continue
            out[c.key] = c.default if c.default is not None else (c.low * c.high) ** 0.5 if c.scale == "log" else (c.low + c.high) / 2
        return out
    return {v["name"]: float(v.get("default") or (v["low"] + v["high"]) / 2) for v in obs.task.variables}


def awkward_script() -> ScriptedPolicy:
    """The same awkward actions, by phase and turn, whatever the tier."""

    def act(obs: Observation) -> Action:
        t = obs.turn
        if obs.phase == "explore":
            script = [
                lambda: Action(kind="invalid", error="no action block found", raw="I think the law is simple."),
                lambda: CUT_OFF,
                lambda: Action(kind="analysis", code="print(len(X))", raw="analysis"),
                lambda: Action(kind="experiment", points=(_request(obs),), raw="experiment"),
                lambda: Action(kind="committee", hypotheses=("mass1 * (", GOOD[0]), raw="committee"),
                lambda: Action(kind="committee", hypotheses=(*GOOD, "mass1 +* 2", "a", "b", "c"), raw="committee"),
                lambda: Action(kind="draft", source=LAW, raw="draft"),
            ]
        elif obs.phase == "synthesis":
            script = [
                lambda: Action(kind="experiment", points=(_request(obs),), raw="experiment"),
                lambda: Action(kind="final", source="def discovered_law(mass1):\n    return mass1\n", raw="final"),
                lambda: Action(kind="final", source=LAW, raw="final"),
            ]
        elif obs.phase == "baseline":
            script = [
                lambda: CUT_OFF,
                lambda: Action(kind="analysis", code="import os\nprint(os.getcwd())", raw="analysis"),
                lambda: Action(kind="experiment", points=({"nonsense": 1.0},), raw="experiment"),
                lambda: Action(kind="experiment", points=(_request(obs), _request(obs)), raw="experiment"),
                lambda: Action(kind="analysis", code="print('rows', len(data))", raw="analysis"),
                lambda: Action(kind="committee", hypotheses=GOOD, raw="committee"),
            ]
        else:  # the forced final call
            return Action(kind="final", source=LAW, raw="final")
        return script[t]() if t < len(script) else Action(kind="final", source=LAW, raw="final")

    return ScriptedPolicy(act)


CELLS = list(itertools.product(TIERS, ("planner", "baseline"), (False, True), (0.0, 0.01)))


def _cell_id(cell: tuple[str, str, bool, float]) -> str:
    tier, family, interp, noise = cell
    return f"{tier}-{family}-{'code' if interp else 'vanilla'}-noise{noise:g}"


def _log(rec: Any) -> dict[str, Any]:
    """The pinned projection of a record: what happened, not the numbers measured."""
    events = []
    for e in rec.events:
        row = {k: e[k] for k in ("phase", "turn", "event", "feedback_kind", "outcome", "reason", "origin") if k in e}
        if "action" in e:
            row["action"] = e["action"]["kind"]
        if "policy_error" in e:
            row["policy_error"] = True
        if "analysis" in e:
            row["analysis_ok"] = bool(e["analysis"]["ok"])
        events.append(row)
    return {"status": rec.status, "origin": rec.submission_origin, "measurements": rec.measurements, "events": events}


def _play(cell, limits) -> Any:
    from etc_fast.protocol import run_trial

    tier, family, interp, noise = cell
    preset = ("variance_c" if interp else "variance_n") if family == "planner" else ("baseline_c" if interp else "baseline_n")
    cfg = get_configuration(preset, name=preset + "_awkward", synthesis_turns=3, exploration_turns=7, baseline_rounds=6,
                            batch_cap=2, max_validation_retries=1)
    spec = TrialSpec(model="scripted", config=cfg, task=TASK, system=tier, noise=noise)
    return run_trial(spec, awkward_script(), limits=limits)


@pytest.fixture(scope="module")
def logs(limits):
    return {_cell_id(c): _log(_play(c, limits)) for c in CELLS}


def test_matrix_matches_the_pinned_event_logs(logs):
    if os.environ.get("ETC_FAST_REGEN_CONFORMANCE"):
        PINNED.parent.mkdir(exist_ok=True)
        PINNED.write_text(json.dumps(logs, indent=1, sort_keys=True) + "\n")
    pinned = json.loads(PINNED.read_text())
    assert sorted(pinned) == sorted(logs)
    changed = [cell for cell in logs if logs[cell] != pinned[cell]]
    assert not changed, f"event logs changed in {changed} (see the module docstring to regenerate)"


@pytest.mark.parametrize("family", ["planner", "baseline"])
@pytest.mark.parametrize("interp", [False, True])
def test_every_tier_answers_an_awkward_action_alike(logs, family, interp):
    """Kind by kind, the feedback is the same on every tier: one loop, many labs."""
    def kinds(cell):
        return [(e.get("phase"), e.get("action"), e.get("feedback_kind"))
                for e in logs[_cell_id(cell)]["events"] if "action" in e]

    ref = kinds(("vanilla_equation", family, interp, 0.0))
    for tier, noise in itertools.product(TIERS, (0.0, 0.01)):
        assert kinds((tier, family, interp, noise)) == ref, (tier, noise)


def test_awkward_actions_get_the_documented_answers(logs):
    vanilla_planner = logs[_cell_id(("simple_system", "planner", False, 0.0))]["events"]
    by_turn = {(e["phase"], e.get("turn")): e for e in vanilla_planner if "action" in e}
    assert by_turn[("explore", 0)]["feedback_kind"] == "repair"  # an invalid reply
    assert by_turn[("explore", 1)]["feedback_kind"] == "repair"  # cut off
    assert by_turn[("explore", 2)]["feedback_kind"] == "refusal"  # analysis without an interpreter
    assert by_turn[("explore", 3)]["feedback_kind"] == "refusal"  # an experiment during exploration
    assert by_turn[("explore", 4)]["feedback_kind"] == "repair"  # one parseable hypothesis
    assert by_turn[("explore", 5)]["feedback_kind"] == "selection"
    assert by_turn[("synthesis", 0)]["feedback_kind"] == "refusal"  # an experiment during synthesis
    assert by_turn[("synthesis", 1)]["feedback_kind"] == "repair"  # an invalid final law
    code_baseline = [e for e in logs[_cell_id(("complex_system", "baseline", True, 0.01))]["events"] if "action" in e]
    assert [e.get("feedback_kind") for e in code_baseline[:6]] == [
        "repair", "validation", "validation", "request_error", "experiment", "analysis",
    ]  # cut off; blocked code twice (one retry, then the round is used); a bad request; rows; analysis
