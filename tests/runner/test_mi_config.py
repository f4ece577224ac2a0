"""Config load and CLI of the information planner (``acquisition: mi``, presets ``mi_n``/``mi_c``;
docs/guide/acquisition.md): accepted for planners on every tier, refused with the noise knobs (exit
2), left out of ``configurations: all``; a tiny run end to end offline."""

from __future__ import annotations

import json

import polars as pl
import pytest
import yaml

from etc_fast.core import CONFIGURATIONS, PAPER_CONFIGURATIONS, ProtocolConfig, scores_committee
from etc_fast.report import config_label
from etc_fast.report._load import variant_label
from etc_fast.run import main
from etc_fast.runner import ConfigError, parse_config

SYSTEMS = ["vanilla_equation", "simple_system", "complex_system"]


def _raw(configurations, ablations=None, **grid):
    raw = {"name": "t", "judge": "none",
           "grids": [{"model": "symbolic", "configurations": configurations, "tasks": ["m0_gravity"], "systems": SYSTEMS,
                      **grid}]}
    if ablations:
        raw["ablations"] = ablations
    return raw


def test_the_presets_mirror_the_others():
    for name, interpreter in (("mi_n", False), ("mi_c", True)):
        cfg = CONFIGURATIONS[name]
        assert (cfg.family, cfg.acquisition, cfg.interpreter) == ("planner", "mi", interpreter)
    assert scores_committee("mi") and not {"mi_n", "mi_c"} & set(PAPER_CONFIGURATIONS)
    assert parse_config(_raw(["mi_n", "mi_c"], noise=[0.0, 0.01])).grids[0].configurations == ("mi_n", "mi_c")
    assert (variant_label("mi_c"), config_label("mi_n")) == ("MI", "MI, no int.")


def test_an_ablation_on_an_mi_preset_round_trips():
    cfg = parse_config(_raw(["mi_cap2"], {"mi_cap2": {"base": "mi_c", "batch_cap": 2}}))
    assert cfg.configuration("mi_cap2").acquisition == "mi" and cfg.configuration("mi_cap2").batch_cap == 2
    assert parse_config(cfg.to_dict()) == cfg


@pytest.mark.parametrize("knobs", [{"noise_aware": True}, {"explore_fraction": 0.25}, {"replicates": 2}])
def test_the_noise_knobs_are_refused_with_mi(knobs, tmp_path, capsys):
    with pytest.raises(ConfigError, match=r"ablations\.mix: .*noise knobs .*information planner \(mi\)"):
        parse_config(_raw(["mix"], {"mix": {"base": "mi_n", "acquisition": knobs}}))
    with pytest.raises(ValueError, match="leave them at their defaults"):
        ProtocolConfig(name="x", family="planner", acquisition="mi", **knobs)
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump(_raw(["mix"], {"mix": {"base": "mi_c", "acquisition": knobs}})))
    assert main([str(p), "--dry-run"]) == 2
    assert "ablations.mix" in capsys.readouterr().err


def test_a_baseline_has_no_mi_rule():
    with pytest.raises(ValueError, match="a baseline has acquisition 'none'"):
        ProtocolConfig(name="x", family="baseline", acquisition="mi")


def test_mi_c_runs_end_to_end_offline(tmp_path):
    raw = {"name": "mi_tiny", "judge": "structural", "workers": 1,
           "grids": [{"model": "symbolic", "configurations": ["mi_c", "mi_n"], "tasks": ["m0_gravity"],
                      "systems": ["vanilla_equation", "simple_system"], "noise": [0.01]}]}
    p = tmp_path / "mi.yaml"
    p.write_text(yaml.safe_dump(raw))
    out = tmp_path / "run"
    assert main([str(p), "--out", str(out), "--no-report"]) == 0
    frame = pl.read_parquet(out / "trials.parquet")
    assert frame.height == 4 and set(frame["configuration"]) == {"mi_c", "mi_n"}
    assert set(frame["acquisition"]) == {"mi"} and (frame["status"] != "failed").all()
    assert (frame["measurements"] > 0).all()
    transcripts = [json.loads(f.read_text()) for f in sorted((out / "transcripts").glob("*.json"))]
    assert len(transcripts) == 4 and "'method': 'mi'" in repr(transcripts)
