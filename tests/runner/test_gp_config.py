"""Config load of the GP-surrogate planners (docs/guide/acquisition.md): accepted for planners on every tier,
refused for baselines and with the noise knobs, left out of ``configurations: all``."""

from __future__ import annotations

import pytest

from etc_fast.core import (
    CONFIGURATIONS,
    GP_ACQUISITIONS,
    PAPER_CONFIGURATIONS,
    PLANNER_ACQUISITIONS,
    ProtocolConfig,
    scores_committee,
)
from etc_fast.runner import ConfigError, parse_config

GP_PRESETS = ("gp_ucb_n", "gp_var_n", "gp_ucb_c", "gp_var_c")
SYSTEMS = ["vanilla_equation", "simple_system", "complex_system"]


def _raw(configurations, ablations=None):
    raw = {"name": "t", "judge": "none",
           "grids": [{"model": "symbolic", "configurations": configurations, "tasks": ["m0_gravity"], "systems": SYSTEMS}]}
    if ablations:
        raw["ablations"] = ablations
    return raw


def test_the_presets():
    for name in GP_PRESETS:
        cfg = CONFIGURATIONS[name]
        assert cfg.family == "planner" and cfg.acquisition in GP_ACQUISITIONS
        assert cfg.interpreter == name.endswith("_c")
        assert not scores_committee(cfg.acquisition)
    assert [a for a in PLANNER_ACQUISITIONS if scores_committee(a)] == ["variance", "pairwise", "mi"]


def test_gp_presets_load_on_every_tier_and_all_is_the_papers_eight():
    assert parse_config(_raw(list(GP_PRESETS))).grids[0].configurations == GP_PRESETS
    assert parse_config(_raw("all")).grids[0].configurations == PAPER_CONFIGURATIONS
    assert len(PAPER_CONFIGURATIONS) == 8 and not set(GP_PRESETS) & set(PAPER_CONFIGURATIONS)


def test_an_ablation_on_a_gp_preset_round_trips():
    cfg = parse_config(_raw(["gp_ucb_cap2"], {"gp_ucb_cap2": {"base": "gp_ucb_c", "batch_cap": 2}}))
    abl = cfg.configuration("gp_ucb_cap2")
    assert abl.acquisition == "gp_ucb" and abl.batch_cap == 2 and abl.interpreter
    assert parse_config(cfg.to_dict()) == cfg


@pytest.mark.parametrize("knobs", [{"noise_aware": True}, {"explore_fraction": 0.25}, {"replicates": 2}])
def test_the_noise_knobs_are_refused_with_a_gp_rule(knobs):
    with pytest.raises(ConfigError, match=r"ablations\.gpn: .*noise knobs .*GP planner \(gp_var\)"):
        parse_config(_raw(["gpn"], {"gpn": {"base": "gp_var_n", "acquisition": knobs}}))
    with pytest.raises(ValueError, match="leave them at their defaults"):
        ProtocolConfig(name="x", family="planner", acquisition="gp_ucb", **knobs)


def test_a_baseline_has_no_gp_rule():
    with pytest.raises(ValueError, match="a baseline has acquisition 'none'"):
        ProtocolConfig(name="x", family="baseline", acquisition="gp_ucb")
    with pytest.raises(ValueError, match="gp_ucb, gp_var"):
        ProtocolConfig(name="x", family="planner", acquisition="gp_ei")  # type: ignore[arg-type]
