import copy
import dataclasses
import json

import pytest
import yaml

from etc_fast.protocol import CONFIGURATIONS
from etc_fast.run import main
from etc_fast.runner import AnalysisConfig, ConfigError, expand_grid, load_config, parse_config
from tests.runner.conftest import SMALL


def _raw(**changes):
    raw = copy.deepcopy(SMALL)
    raw.update(changes)
    return raw


def _grid(**changes):
    raw = copy.deepcopy(SMALL)
    raw["grids"][0].update(changes)
    return raw


def _error(raw, tmp_path, name="x.yaml"):
    path = tmp_path / name
    path.write_text(yaml.safe_dump(raw))
    with pytest.raises(ConfigError) as info:
        load_config(path)
    return str(info.value)


def test_bad_difficulty_names_file_and_key(tmp_path):
    msg = _error(_grid(difficulties=["easy", "meduim"]), tmp_path)
    assert msg == f"{tmp_path / 'x.yaml'}: grids[0].difficulties[1]: 'meduim' is not one of easy, medium, hard"


@pytest.mark.parametrize(
    ("raw", "key", "words"),
    [
        (_raw(wrokers=3), "wrokers", "unknown key"),
        (_grid(rollout=2), "grids[0].rollout", "unknown key"),
        (_grid(configurations=["baseline_n", "variance"]), "grids[0].configurations[1]", "'variance' is not one of"),
        (_grid(tasks=["m0_gravity", "m99_nothing"]), "grids[0].tasks[1]", "not a known task"),
        (_grid(tasks=["missing/task.yaml"]), "grids[0].tasks[0]", "does not exist"),
        (_grid(rollouts=0), "grids[0].rollouts", "must be >= 1"),
        (_grid(noise=[0.0, -0.1]), "grids[0].noise[1]", "must be >= 0"),
        (_grid(law_versions=["v3"]), "grids[0].law_versions[0]", "not one of v0, v1, v2"),
        (_raw(executor="dask"), "executor", "not one of local, threads, processes, ray"),
        (_raw(judge="gpt"), "judge", "not one of structural, llm, none"),
        (_raw(workers="many"), "workers", "not an integer"),
        (_raw(llm={"temperature": "hot"}), "llm.temperature", "not a number"),
        (_raw(llm={"cache": {"mode": "sometimes"}}), "llm.cache.mode", "not one of"),
        (_raw(ablations={"nodiag": {"base": "variance_c", "diagnostics": "no"}}), "ablations.nodiag", "must be a boolean"),
        (_raw(ablations={"syndiag": {"base": "variance_c", "synthesis_diagnostics": 1}}), "ablations.syndiag", "synthesis_diagnostics must be a boolean"),
        (_raw(ablations={"nodiag": {"base": "variance_c", "diagnostic": False}}), "ablations.nodiag.diagnostic", "unknown key"),
        (_raw(ablations={"nodiag": {"diagnostics": False}}), "ablations.nodiag.base", "missing"),
        (_raw(ablations={"variance_c": {"base": "variance_c"}}), "ablations.variance_c", "preset"),
        (_raw(symbolic={"time_budget_s": 10}), "symbolic.time_budget_s", "silently shortened searches"),
        (_raw(grids=[]), "grids", "must not be empty"),
        (_raw(grids=[{"configurations": ["baseline_n"], "tasks": ["m0_gravity"]}]), "grids[0].model", "missing"),
    ],
)
def test_errors_name_the_key(tmp_path, raw, key, words):
    msg = _error(raw, tmp_path)
    assert f"x.yaml: {key}: " in msg
    assert words in msg


def test_bad_custom_task_file(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "bad_task.yaml").write_text("name: broken\nlaw: x +\n")
    msg = _error(_grid(tasks=["bad_task.yaml"]), tmp_path)
    assert "grids[0].tasks[0]: bad custom task file 'bad_task.yaml'" in msg


def test_not_yaml_and_duplicate_keys(tmp_path):
    p = tmp_path / "dup.yaml"
    p.write_text("name: a\nname: b\ngrids: []\n")
    with pytest.raises(ConfigError, match="duplicate key 'name'"):
        load_config(p)
    with pytest.raises(ConfigError, match="cannot read"):
        load_config(tmp_path / "nope.yaml")


def test_defaults_and_overrides():
    cfg = parse_config({k: v for k, v in SMALL.items() if k != "workers"})
    assert cfg.out == "runs/t" and cfg.workers >= 1 and cfg.executor == "local"
    assert cfg.llm.temperature == 0.4
    over = cfg.with_overrides(model="gpt41mini", workers=7, executor="ray", out="elsewhere")
    assert [g.model for g in over.grids] == ["gpt41mini"]
    assert (over.workers, over.executor, over.out) == (7, "ray", "elsewhere")
    assert cfg.with_overrides() is cfg
    with pytest.raises(ConfigError, match="command line: --workers: 0 must be >= 1"):
        cfg.with_overrides(workers=0)


def test_ray_address_override_needs_the_ray_executor():
    cfg = parse_config(SMALL)
    over = cfg.with_overrides(executor="ray", ray_address=" auto ")
    assert over.ray.address == "auto" and over.to_dict()["ray"] == {"address": "auto"}
    assert over.identity() == cfg.identity()  # where the trials run is not what they record
    ray_cfg = parse_config({**SMALL, "executor": "ray"})
    assert ray_cfg.with_overrides(ray_address="ray://head:10001").ray.address == "ray://head:10001"
    with pytest.raises(ConfigError, match=r"--ray-address: is used only by the Ray executor.*'local'.*--executor ray"):
        cfg.with_overrides(ray_address="auto")
    with pytest.raises(ConfigError, match="--ray-address: '' is not a Ray address"):
        cfg.with_overrides(executor="ray", ray_address="")
    # the LLM settings go to LLM models only
    assert cfg.policy_options("symbolic") == {}
    assert over.policy_options("gpt41mini")["temperature"] == 0.4


def test_round_trip_and_ablation():
    raw = _raw(ablations={"nodiag_c": {"base": "variance_c", "diagnostics": False, "batch_cap": 2}})
    raw["grids"][0]["configurations"] = ["variance_c", "nodiag_c"]
    cfg = parse_config(raw)
    abl = cfg.configuration("nodiag_c")
    assert abl == dataclasses.replace(CONFIGURATIONS["variance_c"], name="nodiag_c", diagnostics=False, batch_cap=2)
    again = parse_config(cfg.to_dict())
    assert again == cfg
    assert again.to_dict() == cfg.to_dict()


def test_expand_grid_order_dedup_and_custom_tasks(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "t.yaml").write_text(
        "name: lin\ndescription: a line\noutput: {name: y, description: out}\n"
        "variables:\n  - {name: x, description: in, scale: linear, low: 1, high: 2}\nlaw: 3 * x\n"
    )
    raw = _raw()
    raw["grids"].append(dict(raw["grids"][0], tasks=["m0_gravity", "t.yaml"]))
    cfg = parse_config(raw)
    specs = expand_grid(cfg)
    # grid 1: 3 cfg x 2 tasks x 2 diffs x 2 rollouts = 24; grid 2 repeats m0 (deduplicated) and adds
    # the custom task once per configuration and rollout (not per difficulty): 6
    assert len(specs) == 30
    assert len({s.trial_id for s in specs}) == 30
    assert [s.trial_id for s in specs] == [s.trial_id for s in expand_grid(cfg)]
    first = specs[0]
    assert (first.task, first.difficulty, first.config.name, first.rollout) == ("m0_gravity", "easy", "baseline_n", 0)
    assert (specs[1].config.name, specs[1].rollout) == ("baseline_n", 1)
    custom = [s for s in specs if s.task == "t.yaml"]
    assert len(custom) == 6 and {s.difficulty for s in custom} == {"easy"}


@pytest.mark.parametrize(("config", "extra", "count"), [
    ("configs/full.yaml", [], 384),
    ("configs/paper.yaml", [], 576),
    ("configs/paper.yaml", ["--model", "symbolic"], 384),  # the two grids overlap on medium
    ("configs/smoke.yaml", [], 6),
    ("configs/followups.yaml", [], 8400),
])
def test_dry_run_counts(capsys, config, extra, count):
    assert main([config, "--dry-run", *extra]) == 0
    out = capsys.readouterr().out
    assert f": {count} trials -> " in out.splitlines()[0]


def test_cli_config_error_exit_2(tmp_path, capsys):
    p = tmp_path / "x.yaml"
    p.write_text(yaml.safe_dump(_grid(difficulties=["hardest"])))
    assert main([str(p), "--dry-run"]) == 2
    assert "grids[0].difficulties[0]: 'hardest' is not one of" in capsys.readouterr().err
    assert main(["configs/smoke.yaml", "--workers", "0", "--dry-run"]) == 2
    assert "--workers" in capsys.readouterr().err


def test_full_config_documents_every_field():
    text = open("configs/full.yaml").read()
    header = "\n".join(line for line in text.splitlines() if line.startswith("#"))
    cfg = load_config("configs/full.yaml")
    for key in cfg.to_dict():
        assert key in header, key
    for key in cfg.to_dict()["grids"][0]:
        assert key in header, key
    for key in cfg.to_dict()["llm"]:
        assert key in header, key


def test_llm_cache_mode_off_unquoted_and_new_llm_keys(tmp_path):
    path = tmp_path / "c.yaml"
    path.write_text(
        "name: x\nllm:\n  base_url: http://127.0.0.1:8000/v1/\n  max_tokens: 512\n  model_id: my-served-name\n"
        "  retry_budget_s: 30\n  max_consecutive_failures: 2\n  cache:\n    mode: off\n"
        "grids:\n  - {model: gpt41mini, configurations: [baseline_n], tasks: [m0_gravity]}\n"
    )
    cfg = load_config(path)
    assert cfg.llm.cache_mode == "off" and cfg.llm.max_tokens == 512 and cfg.llm.model_id == "my-served-name"
    assert cfg.llm.max_consecutive_failures == 2 and "max_consecutive_failures" not in cfg.policy_options("gpt41mini")
    assert "model_id" not in cfg.judge_kwargs() or cfg.judge != "llm"
    assert parse_config(cfg.to_dict()).llm == cfg.llm


def test_run_identity_ignores_base_url_spelling():
    base = {"name": "x", "grids": [{"model": "m", "configurations": ["baseline_n"], "tasks": ["m0_gravity"]}]}
    ids = {
        json.dumps(parse_config({**base, "llm": {"base_url": url}}).identity(), sort_keys=True)
        for url in ("http://127.0.0.1:8000/v1", "http://localhost:8000/v1/", "HTTP://LOCALHOST:8000/v1")
    }
    assert len(ids) == 1
    other = parse_config({**base, "llm": {"base_url": "http://localhost:8001/v1"}}).identity()
    assert json.dumps(other, sort_keys=True) not in ids


def test_analysis_section_is_checked_and_kept_out_of_the_identity():
    cfg = parse_config(SMALL)
    assert cfg.analysis == AnalysisConfig() and "analysis" not in cfg.to_dict()  # older resolved configs unchanged
    first = SMALL["grids"][0]["configurations"][0]
    set_ = parse_config({**SMALL, "analysis": {"reference": first, "cluster": "family"}})
    assert set_.analysis == AnalysisConfig(reference=first, cluster="family")
    assert set_.to_dict()["analysis"] == {"reference": first, "cluster": "family"}
    assert set_.identity() == cfg.identity()  # it changes no trial
    assert parse_config(set_.to_dict()).analysis == set_.analysis  # the resolved config reads back
    with pytest.raises(ConfigError, match=r"analysis\.reference: 'nope_c' is not a configuration of the grids"):
        parse_config({**SMALL, "analysis": {"reference": "nope_c"}})
    with pytest.raises(ConfigError, match=r"analysis\.cluster: 'law' is not one of task, family"):
        parse_config({**SMALL, "analysis": {"cluster": "law"}})
    with pytest.raises(ConfigError, match=r"analysis"):
        parse_config({**SMALL, "analysis": {"refrence": first}})
