"""System as a trial dimension: spec, trial id, grid, config, summary column, pool.

Vanilla trial ids must stay exactly those of earlier runs (existing run directories resume):
``tests/data/vanilla_trial_ids.json`` holds the ids that the main branch (commit recorded in
the file) computed for the shipped configs.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import numpy as np
import pytest

from etc_fast.protocol import CONFIGURATIONS, TrialRecord, TrialSpec, run_trial
from etc_fast.report import condition_keys
from etc_fast.runner import ConfigError, expand_grid, load_config, parse_config
from etc_fast.store import trials_frame
from etc_fast.systems import SIM_SYSTEMS, is_error, simulate
from etc_fast.systems._hidden import hidden_law
from etc_fast.systems._pool import system_pool
from etc_fast.systems._spec import SPECS

ROOT = Path(__file__).resolve().parents[2]
MAIN_IDS = json.loads((ROOT / "tests" / "data" / "vanilla_trial_ids.json").read_text())


@pytest.mark.parametrize("name", sorted(MAIN_IDS["configs"]))
def test_vanilla_trial_ids_equal_those_of_main(name):
    # every trial of the config as it was keeps its id (a config may since have gained trials:
    # noise.yaml gained the noise-aware planners), so existing run directories resume
    ids = [s.trial_id for s in expand_grid(load_config(ROOT / "configs" / name))]
    missing = [i for i in MAIN_IDS["configs"][name] if i not in set(ids)]
    assert not missing, f"{len(missing)} trial ids of {name} changed, e.g. {missing[:3]}"
    kept = [i for i in ids if i in set(MAIN_IDS["configs"][name])]
    assert kept == MAIN_IDS["configs"][name]  # and in the same order


def _spec(**kw) -> TrialSpec:
    return TrialSpec(
        model="symbolic", config=CONFIGURATIONS["baseline_n"], task="m0_gravity", **kw
    )


def test_system_enters_the_spec_and_id_only_when_not_vanilla():
    vanilla, explicit = _spec(), _spec(system="vanilla_equation")
    assert "system" not in vanilla.to_dict() and vanilla.trial_id == explicit.trial_id
    ids = {_spec(system=s).trial_id for s in ("vanilla_equation", *SIM_SYSTEMS)}
    assert len(ids) == 3
    simple = _spec(system="simple_system")
    assert simple.to_dict()["system"] == "simple_system"
    assert (
        TrialSpec.from_dict(simple.to_dict()) == simple
        and TrialSpec.from_dict(vanilla.to_dict()) == vanilla
    )
    with pytest.raises(ValueError, match="system must be one of"):
        _spec(system="orbit")


def _raw(systems=None):
    grid = {
        "model": "symbolic",
        "configurations": ["baseline_n", "variance_c"],
        "tasks": ["m0_gravity", "m9_hooke_law"],
        "rollouts": 2,
    }
    if systems is not None:
        grid["systems"] = systems
    return {"name": "t", "grids": [grid]}


def test_grid_expands_systems_in_order_and_vanilla_is_the_default():
    base = parse_config(_raw())
    assert [s.trial_id for s in expand_grid(base)] == [
        s.trial_id for s in expand_grid(parse_config(_raw(["vanilla_equation"])))
    ]
    grid = dataclasses.replace(
        base.grids[0], systems=("vanilla_equation", "simple_system", "complex_system")
    )
    specs = expand_grid(dataclasses.replace(base, grids=(grid,)))
    assert len(specs) == 3 * len(expand_grid(base))
    assert [s.system for s in specs[:12]] == ["vanilla_equation"] * 4 + [
        "simple_system"
    ] * 4 + ["complex_system"] * 4
    assert all(s.task == "m0_gravity" for s in specs[:12])


def test_config_accepts_systems_and_refuses_unknown_ones_and_custom_tasks():
    cfg = parse_config(_raw(["vanilla_equation", "simple_system"]))
    assert cfg.grids[0].systems == ("vanilla_equation", "simple_system")
    with pytest.raises(ConfigError, match=r"grids\[0\]\.systems\[0\]"):
        parse_config(_raw(["orbit"]))


def test_a_system_trial_with_a_broken_policy_is_recorded_not_raised():
    record = run_trial(_spec(system="complex_system"), policy=None)
    assert record.spec.system == "complex_system"
    assert record.status != "completed" and record.final_source.startswith("def discovered_law(")


def test_summary_has_a_system_column_and_old_rows_read_as_vanilla():
    row = TrialRecord(spec=_spec(system="simple_system")).summary()
    assert row["system"] == "simple_system"
    old = TrialRecord(spec=_spec()).summary()
    del old["system"]
    frame = trials_frame([row, old])
    assert frame.get_column("system").to_list() == ["simple_system", "vanilla_equation"]
    assert "system" in condition_keys(frame) and "system" not in condition_keys(
        frame.head(1)
    )


def test_simulated_points_are_a_column_and_old_tables_still_load(tmp_path):
    import polars as pl

    from etc_fast.report import load_trials

    sysrec = TrialRecord(spec=_spec(system="simple_system"), measurements=3,
                         observations={"requests": [{}] * 3, "simulated_points": 41})
    vanilla = TrialRecord(spec=_spec(), measurements=7, observations={"X": [], "y": []})
    rows = [sysrec.summary(), vanilla.summary()]
    assert [r["simulated_points"] for r in rows] == [41, 7]
    # A table stored before the column existed: a vanilla row reads one point per measurement,
    # a system row reads null (its points were not kept), and a report still loads it.
    old = [{k: v for k, v in r.items() if k != "simulated_points"} for r in rows]
    assert trials_frame(old).get_column("simulated_points").to_list() == [None, 7]
    pl.DataFrame(old).write_parquet(tmp_path / "trials.parquet")
    assert load_trials(tmp_path).get_column("simulated_points").to_list() == [None, 7]


@pytest.mark.parametrize("module,system", sorted(SPECS))
def test_pool_is_deterministic_in_domain_and_runnable(module, system):
    pool = system_pool(module, system, seed=3)
    assert (
        len(pool) == 2048
        and pool == system_pool(module, system, seed=3)
        and pool != system_pool(module, system, seed=4)
    )
    sp = SPECS[(module, system)]
    for c in sp.controls:
        values = (
            np.array([r[c.key] for r in pool])
            if c.pool or c.pool_value is not None
            else None
        )
        if values is None:
            assert all(c.key not in r for r in pool)
        elif c.pool and c.high > c.low:
            assert (
                values.min() >= c.low
                and values.max() <= c.high
                and np.unique(values).size == 2048
            )
        else:
            assert (values == c.pool_value).all()
    assert all(
        c.key in pool[0] for c in sp.controls if c.default is None
    )  # required keys present
    outs = simulate(
        module, system, pool[:64], hidden_law(module, "easy", "v0"), rng_seed=0
    )
    assert not any(map(is_error, outs))
