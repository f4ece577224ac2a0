"""The LLM estimate of ``--dry-run``, the prices field, and the report's estimate-and-actual table."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from etc_fast.run import main
from etc_fast.runner import read_trials
from etc_fast.runner._estimate import text_tokens
from tests.llm._server import ChatServer, model_like


def config(tmp_path: Path, base_url: str = "http://127.0.0.1:9/v1", *, configurations=("baseline_n",), rollouts=2,
           out: str | None = None, **llm) -> Path:
    cfg = {
        "name": "estimate", "workers": 2, "judge": "structural",
        "llm": {"base_url": base_url, "timeout_s": 10, "max_retries": 1, "max_tokens": 100,
                "cache": {"path": str(tmp_path / "cache.db"), "mode": "use"}, **llm},
        "grids": [{"model": "test-model", "configurations": list(configurations), "tasks": ["m0_gravity"],
                   "rollouts": rollouts}],
    }
    if out:
        cfg["out"] = out
    path = tmp_path / "run.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


@pytest.mark.parametrize("prices, key, why", [
    ("cheap", "llm.prices", "expected a mapping"),
    ({"test-model": {"prompt": 0.4}}, "llm.prices.test-model.completion", "missing"),
    ({"test-model": {"prompt": -1, "completion": 1}}, "llm.prices.test-model.prompt", ">= 0"),
    ({"test-model": {"prompt": "1$", "completion": 1}}, "llm.prices.test-model.prompt", "not a number"),
    ({"test-model": {"prompt": 1, "completion": 1, "cached": 0.1}}, "llm.prices.test-model", "cached"),
])
def test_bad_prices_exit_2_naming_file_and_key(tmp_path, capsys, prices, key, why):
    path = config(tmp_path, prices=prices)
    assert main([str(path), "--dry-run"]) == 2
    err = capsys.readouterr().err
    assert str(path) in err and key in err and why in err, err


def test_dry_run_states_each_number_as_a_bound_or_an_approximation_and_writes_nothing(tmp_path, capsys):
    path = config(tmp_path, configurations=("baseline_n", "variance_c"), out=str(tmp_path / "out"),
                  prices={"test-model": {"prompt": 2.0, "completion": 8.0}})
    assert main([str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    start = next(i for i, x in enumerate(lines) if x.strip() == "test-model (test-model): 4 trials")
    calls, prompt, completion, usd, pay = (x.strip() for x in lines[start + 1:start + 6])
    # baseline_n: 1 to 10 rounds + the forced final call; variance_c: the first exploration call and the
    # first synthesis call, up to 8 exploration turns + 3 synthesis turns; 2 rollouts each
    assert calls == ("calls: at least 6 (a law at the first call), 44 if every turn is used, "
                     "at most 44 (the protocol's caps, validation retries included)"), calls
    assert prompt.startswith("prompt tokens (approximate, not bounds): about ") and "if every turn is used" in prompt
    assert completion == "completion tokens: at most 4,400 at the caps (llm.max_tokens = 100 per reply)", completion
    assert usd.startswith("USD at $2 prompt / $8 completion per 1M tokens: at least ~$") and "at most ~$" in usd, usd
    assert pay.startswith("to pay: at most 44 calls, at most ~$"), pay
    assert "Basis: 2 distinct trial(s) (each played)" in out and "chars/4" in out and "no file yet" in out
    assert not (tmp_path / "cache.db").exists() and not (tmp_path / "out").exists()


def test_without_max_tokens_the_completion_tokens_are_an_assumption(tmp_path, capsys):
    path = config(tmp_path, max_tokens=None)
    assert main([str(path), "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "completion tokens: about 8,800 at the caps (400 per reply assumed: llm.max_tokens unset)" in out, out


@pytest.mark.parametrize("name, bounds", [
    ("baseline_n", (1, 11)),   # 10 rounds + the forced final call
    ("baseline_c", (1, 41)),   # each round may absorb 3 replies whose code fails validation
    ("variance_n", (2, 9)),    # 8 exploration turns + 1 synthesis turn
    ("variance_c", (2, 11)),   # 8 exploration turns + 3 synthesis turns
    ("random_c", (2, 11)),
])
def test_call_bounds_are_the_protocols_caps(name, bounds):
    from etc_fast.core import CONFIGURATIONS
    from etc_fast.runner._estimate import call_bounds

    assert call_bounds(CONFIGURATIONS[name]) == bounds


def test_under_a_measurement_budget_a_planner_may_make_no_exploration_call():
    import dataclasses

    from etc_fast.core import CONFIGURATIONS
    from etc_fast.runner._estimate import call_bounds

    # the bootstrap may spend a budget of 4: only the synthesis call is certain
    assert call_bounds(dataclasses.replace(CONFIGURATIONS["variance_c"], measurement_budget=4)) == (1, 11)
    assert call_bounds(dataclasses.replace(CONFIGURATIONS["variance_c"], measurement_budget=4, synthesis="none")) == (0, 8)


def _slow_estimate(cfg, specs):
    """What the estimate was before sampling: every distinct trial played in full, summed per trial."""
    from etc_fast.runner._estimate import _play, _policy, _shape

    texts: dict = {}
    seen: dict[str, tuple[int, int, int, int]] = {}
    total = [0, 0, 0, 0]
    for spec in specs:
        shape = _shape(spec)
        if shape not in seen:
            policy, client = _policy(cfg, spec.model, (cfg.llm.max_tokens or 400, None), texts)
            _play(spec, policy)
            fewest = [t for i, (t, ph) in enumerate(zip(client.prompt_tokens, client.phases))
                      if i == 0 or (ph == "synthesis" and client.phases[i - 1] != "synthesis")]
            seen[shape] = (len(fewest), len(client.prompt_tokens), sum(fewest), sum(client.prompt_tokens))
        total = [a + b for a, b in zip(total, seen[shape])]
    return total


@pytest.mark.parametrize("configurations", [("baseline_n", "baseline_c", "variance_n", "random_c")])
def test_the_fast_estimate_has_the_slow_estimates_counts(tmp_path, monkeypatch, configurations):
    from etc_fast.runner import _estimate, expand_grid, load_config

    raw = yaml.safe_load(config(tmp_path, configurations=configurations, rollouts=2).read_text())
    raw["grids"][0]["tasks"] = ["m0_gravity", "m9_hooke_law", "m4_snell_law"]
    raw["grids"][0]["difficulties"] = ["easy", "medium"]
    (tmp_path / "run.yaml").write_text(yaml.safe_dump(raw))
    cfg = load_config(tmp_path / "run.yaml")
    specs = expand_grid(cfg)
    calls_min, calls_every, tokens_min, tokens_every = _slow_estimate(cfg, specs)
    exact = _estimate.estimate_run(cfg, specs)
    [m] = exact.models
    assert exact.played == exact.distinct == 24 and m.trials == 48
    assert (m.calls_min, m.calls_every_turn, m.prompt_tokens_min, m.prompt_tokens_every_turn) == (
        calls_min, calls_every, tokens_min, tokens_every)
    # The caps bound every played trial's calls; only baseline_c's validation retries lie beyond them.
    assert m.calls == calls_every + 12 * 30
    # Sampled (one played trial per configuration): the call counts stay exact, the tokens come from
    # trials of the same configuration.
    monkeypatch.setattr(_estimate, "PLAY_BUDGET", 1)
    sampled = _estimate.estimate_run(cfg, specs)
    [s] = sampled.models
    assert sampled.played == 4 and sampled.distinct == 24
    assert (s.calls_min, s.calls_every_turn, s.calls) == (m.calls_min, m.calls_every_turn, m.calls)
    assert "4 of them played" in "\n".join(sampled.lines())
    by_id = {sp.trial_id: sp for sp in specs}
    for tid, k in sampled.trial_shapes.items():
        assert len(sampled.shapes[k]) == len(exact.shapes[exact.trial_shapes[tid]])
        assert by_id[tid].config.name in {sp.config.name for sp in specs
                                          if sampled.trial_shapes[sp.trial_id] == k}
    assert 0.8 < s.prompt_tokens_every_turn / m.prompt_tokens_every_turn < 1.25


def test_progress_lines_only_once_the_work_takes_a_second():
    import io

    from etc_fast.runner._estimate import _Ticker

    now = [0.0]
    stream = io.StringIO()
    ticker = _Ticker(10, stream)
    ticker._clock = lambda: now[0]
    ticker.start = ticker.last = 0.0
    ticker.tick(1, "trials played")
    now[0] = 0.5
    ticker.tick(2, "trials played")
    assert stream.getvalue() == ""
    now[0] = 1.5
    ticker.tick(3, "trials played")
    now[0] = 1.6
    ticker.tick(4, "trials played")  # within a second of the last line: quiet
    ticker.tick(10, "trials played")  # the last one is always shown
    assert stream.getvalue().splitlines() == ["estimate: trials played 3 of 10 (2s)", "estimate: trials played 10 of 10 (2s)"]


def test_the_estimate_bounds_a_run_and_the_report_sets_actual_beside_it(tmp_path, capsys, monkeypatch):
    with ChatServer(model_like(2), models=["test-model"]) as srv:
        path = config(tmp_path, srv.base_url, configurations=("baseline_n", "variance_n"),
                      prices={"test-model": {"prompt": 1.0, "completion": 1.0}})
        assert main([str(path), "--out", str(tmp_path / "out")]) == 0
    est = json.loads((tmp_path / "out" / "estimate.json").read_text())
    [m] = est["models"]
    rows = [e["summary"] for e in read_trials(tmp_path / "out" / "trials.jsonl")]
    calls = sum(r["llm_calls"] for r in rows)
    assert m["trials"] == len(rows) == 4 and m["calls_min"] <= calls <= m["calls"]
    assert sorted(est["trial_ids"]) == sorted(r["trial_id"] for r in rows)
    # The first call of each trial is its exact prompt, counted as stated (the stand-in server's own
    # counts are scripted, so the text sent is the reference).
    entry = read_trials(tmp_path / "out" / "trials.jsonl")[0]
    record = json.loads((tmp_path / "out" / entry["transcript"]).read_text())
    sent = [c for c in record["chat"] if "role" in c][:2]
    assert [c["role"] for c in sent] == ["system", "user"]
    assert est["shapes"][est["trial_shapes"][entry["trial_id"]]][0] == sum(text_tokens(c["content"]) for c in sent)
    report = (tmp_path / "out" / "report" / "report.md").read_text()
    assert "## LLM calls: estimate and actual" in report
    assert f"| test-model | 4 (4) | {m['calls']} / {calls} / {calls} |" in report
    capsys.readouterr()
    # Once recorded, a fresh run directory replays: the estimate says every first call is cached, also
    # when it plays one trial per configuration (every other trial is played to its first call).
    from etc_fast.runner import _estimate

    monkeypatch.setattr(_estimate, "PLAY_BUDGET", 1)
    assert main([str(path), "--dry-run", "--out", str(tmp_path / "again")]) == 0
    out = capsys.readouterr().out
    assert "first call already cached for 4 trial(s), so at most 0 calls" in out, out
    assert "stored replies" in out
    # And the finished run directory has nothing left to pay.
    assert main([str(path), "--dry-run", "--out", str(tmp_path / "out")]) == 0
    assert "0 pending trial(s) (4 already finished" in capsys.readouterr().out
