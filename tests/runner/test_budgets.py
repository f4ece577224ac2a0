"""Measurement budgets as a grid dimension (``budgets:`` in a grid; docs/guide/configs.md, "Measurement budgets").

What must hold: the cap binds (no stored trial measures beyond its budget) for both families, with
and without the interpreter, on every tier, the noise-aware planner's replicates and the GP-surrogate
rules included; a bad
``budgets`` list or one that clashes with an ablation's own budget is a configuration error (exit 2,
naming the key); grids without budgets keep their trial ids; ``trials.parquet`` has the cap in
``measurement_budget`` (null without one); an LLM configuration with budgets runs against a scripted
server and its prompts state what is left.
"""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import polars as pl
import pytest
import yaml

from etc_fast.run import main
from etc_fast.runner import expand_grid, load_config, parse_config, read_trials, run_config
from etc_fast.store import entries_frame
from tests.llm._server import ChatServer, Reply, model_like
from tests.runner._fakes import FakeWorker

ROOT = Path(__file__).resolve().parents[2]
MAIN_IDS = json.loads((ROOT / "tests" / "data" / "vanilla_trial_ids.json").read_text())
TIERS = ("vanilla_equation", "simple_system", "complex_system")

#: Trial ids of system trials as the main branch computed them (commit af313b6), before budgets.
MAIN_SYSTEM_IDS = {
    ("simple_system", "baseline_n"): "d1485dda59d87a6d",
    ("simple_system", "variance_c"): "cca35765a821b9b0",
    ("complex_system", "baseline_n"): "e95e8a53a3f0d627",
    ("complex_system", "variance_c"): "f90ba654d9501c27",
}


def _write(tmp_path: Path, doc: dict, name: str = "run.yaml") -> Path:
    path = tmp_path / name
    path.write_text(yaml.safe_dump(doc))
    return path


def _records(out: Path) -> list[tuple[dict, dict]]:
    """``(summary, transcript)`` of every stored trial."""
    rows = []
    for e in read_trials(out / "trials.jsonl"):
        rows.append((e["summary"], json.loads((out / e["transcript"]).read_text())))
    return rows


def _observed(record: dict) -> int:
    """Experiments in a transcript's observations: rows on equations, requests on systems."""
    obs = record["observations"]
    return len(obs["requests"]) if "requests" in obs else len(obs["y"])


# -- (a) the cap binds, every family and tier ------------------------------------------------------
@pytest.mark.slow
def test_the_cap_binds_for_every_family_and_tier(tmp_path):
    doc = {
        "name": "budgets", "out": str(tmp_path / "out"), "executor": "threads", "workers": 1, "judge": "none",
        "ablations": {"noisy_variance_n": {"base": "variance_n", "acquisition": {"noise_aware": True, "replicates": 2}}},
        "grids": [
            {"model": "symbolic", "configurations": ["baseline_n", "variance_n"], "tasks": ["m0_gravity"],
             "systems": list(TIERS), "budgets": [2, 5, 9]},
            {"model": "symbolic", "configurations": ["baseline_c", "variance_c"], "tasks": ["m0_gravity"],
             "systems": list(TIERS), "budgets": [9, 2]},
            {"model": "symbolic", "configurations": ["noisy_variance_n"], "tasks": ["m0_gravity"], "noise": [0.01],
             "systems": list(TIERS), "budgets": [2, 5, 9]},
            {"model": "symbolic", "configurations": ["gp_var_n", "gp_ucb_c"], "tasks": ["m0_gravity"],
             "systems": list(TIERS), "budgets": [2, 9]},
        ],
    }
    res = run_config(parse_config(doc, source="budgets.yaml"), tty=False, report=False)
    assert res.total == 3 * (2 * 3 + 2 * 2 + 3 + 2 * 2) and res.ran == res.total and not res.unfinished
    out = Path(doc["out"])
    rows = _records(out)
    hit: dict[tuple[str, str], int] = {}
    replicated_under_cap = 0
    for summary, record in rows:
        b, cfg, tier = summary["measurement_budget"], summary["configuration"], summary["system"]
        where = f"{cfg} on {tier} at budget {b}"
        assert b in (2, 5, 9) and summary["status"] != "failed", (where, summary["error"])
        # the cap binds: the counted measurements, the stored observations and what the events ran
        assert summary["measurements"] <= b and _observed(record) == summary["measurements"], where
        measured = [ev["measured"] for ev in record["events"] if isinstance(ev.get("measured"), dict)]
        boot_n = sum(ev.get("n", ev.get("measured", 0)) for ev in record["events"] if ev.get("event") == "bootstrap")
        ran = boot_n + sum(len(m["requests"]) if "requests" in m else len(m["X"]) for m in measured)
        assert ran == summary["measurements"], where
        if summary["measurements"] == b:
            hit[(cfg, tier)] = hit.get((cfg, tier), 0) + 1
        if summary["family"] == "planner":
            boot = next(ev for ev in record["events"] if ev.get("event") == "bootstrap")
            # a budget below the bootstrap (d + 1 = 4 probes on the equation, 6 experiments on the
            # m0 systems) cuts it, and exploration ends there
            if b == 2:
                assert boot.get("truncated_by_budget") is True and summary["status"] == "budget_exhausted", where
            if cfg == "noisy_variance_n":
                replicated_under_cap += sum(len(m.get("replicate_rows", [])) for m in measured)
    # every configuration reached its cap on every tier at least once (else the test could not fail)
    assert sorted(hit) == sorted((c, t) for c in ("baseline_n", "variance_n", "baseline_c", "variance_c",
                                                  "noisy_variance_n", "gp_var_n", "gp_ucb_c") for t in TIERS), hit
    assert replicated_under_cap > 0, "the noise-aware planner never replicated: its path is not exercised"
    frame = pl.read_parquet(out / "trials.parquet")
    assert frame.schema["measurement_budget"] == pl.Int64
    assert (frame["measurements"] <= frame["measurement_budget"]).all()


def test_a_budget_of_one_runs_every_family_and_tier(tmp_path):
    # a single measurement: the bootstrap is cut to one probe and nothing crashes downstream
    doc = {
        "name": "one", "out": str(tmp_path / "out"), "executor": "threads", "workers": 1, "judge": "none",
        "grids": [{"model": "symbolic", "configurations": ["baseline_n", "variance_n"], "tasks": ["m0_gravity"],
                   "systems": list(TIERS), "budgets": [1]}],
    }
    res = run_config(parse_config(doc), tty=False, report=False)
    assert res.ran == 6 and not res.unfinished
    for summary, record in _records(Path(doc["out"])):
        assert summary["measurements"] == 1 == _observed(record), (summary["configuration"], summary["system"])
        if summary["family"] == "planner":
            assert summary["status"] == "budget_exhausted"


# -- (b) validation -------------------------------------------------------------------------------
def _grid(**kw) -> dict:
    return {"model": "symbolic", "configurations": ["baseline_n", "variance_n"], "tasks": ["m0_gravity"], **kw}


@pytest.mark.parametrize("budgets, key, words", [
    ([4, 0], "grids[0].budgets[1]", "0 is not a positive integer"),
    ([-3], "grids[0].budgets[0]", "-3 is not a positive integer"),
    ([2.5], "grids[0].budgets[0]", "2.5 is not a positive integer"),
    (["six"], "grids[0].budgets[0]", "'six' is not a positive integer"),
    ([True], "grids[0].budgets[0]", "True is not a positive integer"),
    ([8, 4, 8], "grids[0].budgets[2]", "8 is listed twice (also at [0])"),
    ([], "grids[0].budgets", "must not be empty"),
    (6, "grids[0].budgets", "expected a list, got int 6"),
])
def test_bad_budgets_exit_2_naming_the_key(tmp_path, capsys, budgets, key, words):
    path = _write(tmp_path, {"name": "bad", "grids": [_grid(budgets=budgets)]})
    assert main([str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: {key}: {words}" in err, err


def test_an_ablation_with_its_own_budget_cannot_take_a_grids_budgets(tmp_path, capsys):
    doc = {
        "name": "clash",
        "ablations": {"cap20": {"base": "baseline_n", "measurement_budget": 20}},
        "grids": [_grid(), _grid(configurations=["variance_n", "cap20"], budgets=[4, 8])],
    }
    path = _write(tmp_path, doc)
    assert main([str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert f"{path}: grids[1].budgets: configuration 'cap20' sets its own measurement_budget (20)" in err, err
    # the same ablation in a grid without budgets is the cap-matched baseline it always was
    doc["grids"][1].pop("budgets")
    assert main([str(_write(tmp_path, doc)), "--dry-run"]) == 0
    assert "measurement budgets: none, 20" in capsys.readouterr().out


# -- (c) trial ids ------------------------------------------------------------------------------
def test_grids_without_budgets_keep_their_trial_ids():
    cfg = load_config(ROOT / "configs" / "paper.yaml")
    assert [s.trial_id for s in expand_grid(cfg)] == MAIN_IDS["configs"]["paper.yaml"]
    assert all("budgets" not in g for g in cfg.to_dict()["grids"])  # the resolved config (and identity) as before
    systems = parse_config({"name": "s", "grids": [_grid(configurations=["baseline_n", "variance_c"],
                                                         systems=["simple_system", "complex_system"])]})
    ids = {(s.system, s.config.name): s.trial_id for s in expand_grid(systems)}
    assert ids == MAIN_SYSTEM_IDS


def test_a_spec_dict_is_its_fields_converted_whatever_the_config_dicts_kept():
    from etc_fast.core._config import _config_dict
    from etc_fast.core._json import to_jsonable

    base = load_config(ROOT / "configs" / "paper.yaml")
    grids = tuple(dataclasses.replace(g, budgets=(8, 4)) for g in base.grids)
    specs = expand_grid(dataclasses.replace(base, grids=grids))
    assert len({id(s.config) for s in specs}) == 16  # a grid shares one object per configuration and budget
    for s in specs:
        want = to_jsonable(dataclasses.asdict(s))  # the whole spec converted, then the config's view of it
        want["config"] = _config_dict(s.config)
        del want["system"]  # vanilla: left out
        got = s.to_dict()
        assert json.dumps(got) == json.dumps(want)
        got["config"]["batch_cap"] = -1  # a caller's change reaches no other dict
    assert all(s.to_dict()["config"]["batch_cap"] == 4 for s in specs)


def test_each_budget_is_its_own_trial_and_the_order_keeps_budgets_together():
    base = load_config(ROOT / "configs" / "paper.yaml")
    plain = expand_grid(base)
    grids = tuple(dataclasses.replace(g, budgets=(8, 4)) for g in base.grids)
    budgeted = expand_grid(dataclasses.replace(base, grids=grids))
    assert len(budgeted) == 2 * len(plain) and len({s.trial_id for s in budgeted}) == len(budgeted)
    assert not {s.trial_id for s in budgeted} & {s.trial_id for s in plain}
    assert {s.config.measurement_budget for s in budgeted} == {4, 8}
    # names kept; a spec is its unbudgeted self with the cap set
    assert [dataclasses.replace(s, config=dataclasses.replace(s.config, measurement_budget=None)).trial_id
            for s in budgeted if s.config.measurement_budget == 8] == [s.trial_id for s in plain]
    # within one (task, system, difficulty, version, noise) cell: every configuration at 8, then at 4
    first = budgeted[0]
    cell = [s for s in budgeted if (s.task, s.system, s.difficulty, s.law_version, s.noise, s.model)
            == (first.task, first.system, first.difficulty, first.law_version, first.noise, first.model)]
    order = [s.config.measurement_budget for s in cell]
    assert order == sorted(order, reverse=True) and budgeted[: len(cell)] == cell
    # the resolved config round-trips with its budgets, and the trial count check counts them
    cfg = dataclasses.replace(base, grids=grids)
    assert parse_config(cfg.to_dict()) == cfg and cfg.identity() != base.identity()


# -- (d) the column -------------------------------------------------------------------------------
def test_trials_parquet_has_the_budget_and_old_stores_still_load(tmp_path):
    doc = {
        "name": "col", "out": str(tmp_path / "out"), "judge": "none", "workers": 1, "executor": "threads",
        "grids": [_grid(tasks=["m9_hooke_law"]), _grid(budgets=[3, 7])],
    }
    cfg = parse_config(doc)
    res = run_config(cfg, worker=FakeWorker(), tty=False, report=True)
    assert res.ran == 2 + 4 and res.report_error is None  # the report groups by configuration without trouble
    out = Path(doc["out"])
    frame = pl.read_parquet(out / "trials.parquet")
    assert frame.schema["measurement_budget"] == pl.Int64
    got = sorted(zip(frame["task"].to_list(), frame["configuration"].to_list(),
                     frame["measurement_budget"].to_list(), strict=True), key=str)
    assert got == sorted([("m9_hooke_law", c, None) for c in ("baseline_n", "variance_n")]
                         + [("m0_gravity", c, b) for c in ("baseline_n", "variance_n") for b in (3, 7)], key=str)
    # a store written before the column existed: its lines read the cap from their spec
    entries = read_trials(out / "trials.jsonl")
    old = [{**e, "summary": {k: v for k, v in e["summary"].items() if k != "measurement_budget"}} for e in entries]
    assert entries_frame(old)["measurement_budget"].to_list() == [e["summary"]["measurement_budget"] for e in entries]
    from etc_fast.report import load_trials

    legacy = tmp_path / "legacy"
    legacy.mkdir()
    frame.drop("measurement_budget").write_parquet(legacy / "trials.parquet")
    assert load_trials(legacy)["measurement_budget"].null_count() == frame.height
    # and the run resumes: nothing left to do
    assert run_config(cfg, worker=FakeWorker(), tty=False, report=False).skipped == 6


# -- (e) an LLM configuration with budgets, against a scripted server -------------------------------
_POINTS = [{"mass1": 10.0 * (i + 1), "mass2": 20.0, "distance": 2.0 + i} for i in range(5)]
_LAW = "def discovered_law(mass1, mass2, distance):\n    C = 1.0\n    return C * mass1 * mass2 / distance ** 2"


def _stand_in(body: dict, index: int) -> Reply:
    """Planners: model_like's committees then a draft; baselines: three requests of five points, then the law."""
    messages = body.get("messages") or []
    system = str(messages[0].get("content") or "") if messages else ""
    if "you propose candidate laws" in system or "finalizing the law" in system:
        return model_like(8)(body, index)
    turn = sum(1 for m in messages if m.get("role") == "assistant")
    if turn < 3:
        return Reply(content=f"<run_experiment>\n{json.dumps(_POINTS)}\n</run_experiment>")
    return Reply(content=f"<final_law>\n{_LAW}\n</final_law>")


def test_an_llm_config_with_budgets_runs_against_a_scripted_server(tmp_path, capsys):
    doc = {
        "name": "llm-budgets", "judge": "none", "workers": 2,
        "grids": [{"model": "test-model", "configurations": ["baseline_n", "variance_n"], "tasks": ["m0_gravity"],
                   "systems": ["vanilla_equation", "simple_system"], "budgets": [3, 8]}],
    }
    with ChatServer(_stand_in, max_requests=200, models=["test-model"]) as srv:
        doc["llm"] = {"base_url": srv.base_url, "timeout_s": 10, "max_retries": 2, "cache": {"mode": "off"}}
        path = _write(tmp_path, doc)
        assert main([str(path), "--dry-run"]) == 0
        dry = capsys.readouterr().out
        assert dry.startswith("llm-budgets: 8 trials") and dry.count("measurement budgets: 3, 8") == 2
        assert srv.n_requests == 0
        assert main([str(path), "--out", str(tmp_path / "out"), "--no-report"]) == 0
        bodies = list(srv.requests)
    rows = _records(tmp_path / "out")
    assert len(rows) == 8
    for summary, record in rows:
        b, tier, family = summary["measurement_budget"], summary["system"], summary["family"]
        where = f"{summary['configuration']} on {tier} at budget {b}"
        assert summary["status"] != "failed" and summary["llm_calls"] > 0, (where, summary["error"])
        # the cap binds and is reached: 5-point requests are cut; the planner's bootstrap (4 or 6) or batch is
        assert summary["measurements"] == b == _observed(record), where
        if family == "planner":
            assert summary["status"] == "budget_exhausted", where
        sent = [m["content"] for m in record["chat"] if m.get("role") == "user"]
        if family == "baseline":
            # every message states what is left; the request that meets the cap is cut and says
            # so, and any request after it runs nothing and says so
            assert len(sent) == 4 and f"(Measurement budget: {b} left.)" in sent[0], where
            left = b
            for k in (1, 2, 3):
                n = min(5, left)
                if n == 0:
                    assert f"The measurement budget ({b}) is spent; no experiment was run." in sent[k], where
                elif n < 5:
                    assert (f"Only the first {n} of 5 requested experiments were run: the measurement budget "
                            f"({b}) is now spent.") in sent[k], where
                left -= n
                assert f"(Measurement budget: {left} left.)" in sent[k], (where, k)
        elif b == 8:  # an exploration turn happened: its status line says what is left
            boot = 4 if tier == "vanilla_equation" else 6
            status = "Measurements so far" if tier == "vanilla_equation" else "Experiments run so far"
            assert f"{status}: {boot}, {b - boot} left in the budget." in sent[0], (where, sent[0][-400:])
    assert all(b["model"] == "test-model" for b in bodies)


def test_a_narrowed_copy_of_the_followups_config_runs_with_an_llm(tmp_path):
    """configs/followups.yaml itself, narrowed to m0_gravity, one rollout and budget 8 in every grid,
    with its model replaced by an LLM served by a scripted server: every configuration of the
    study (the GP rules, the noise-aware planner, the ablations), on every tier it names, runs."""
    doc = yaml.safe_load((ROOT / "configs" / "followups.yaml").read_text())
    assert all(8 in g["budgets"] for g in doc["grids"]), "the narrowing below needs budget 8 in every grid"
    for g in doc["grids"]:
        g.update(tasks=["m0_gravity"], rollouts=1, budgets=[8])
    doc.update(out=str(tmp_path / "out"), workers=2)
    want = {(c, s, n) for g in doc["grids"] for c in g["configurations"]
            for s in g.get("systems", ["vanilla_equation"]) for n in g["noise"]}
    with ChatServer(_stand_in, max_requests=2000, models=["test-model"]) as srv:
        doc["llm"] = {"base_url": srv.base_url, "timeout_s": 10, "max_retries": 2, "cache": {"mode": "off"}}
        path = _write(tmp_path, doc, "followups_narrow.yaml")
        assert main([str(path), "--model", "test-model", "--no-report"]) == 0
    rows = _records(tmp_path / "out")
    got = {(s["configuration"], s["system"], s["noise"]) for s, _ in rows}
    assert got == want and len(rows) == len(want) == 33
    for summary, record in rows:
        where = f"{summary['configuration']} on {summary['system']} at noise {summary['noise']}"
        assert summary["status"] != "failed" and summary["llm_calls"] > 0, (where, summary["error"])
        assert summary["model"] == "test-model" and summary["measurement_budget"] == 8, where
        assert summary["measurements"] <= 8 and _observed(record) == summary["measurements"], where
