"""``python -m etc_fast.replay RUN_DIR --play N``: stored trials played again, records compared."""

import dataclasses
import json

import pytest

from etc_fast.replay import main
from etc_fast.store import file_hashes


@pytest.fixture(scope="module")
def smoke_run(tmp_path_factory):
    from etc_fast.runner import load_config, run_config

    out = tmp_path_factory.mktemp("play") / "smoke"
    run_config(dataclasses.replace(load_config("configs/smoke.yaml"), out=str(out), workers=1))
    return out


def _edit_first(run, fn):
    lines = (run / "trials.jsonl").read_text().splitlines()
    first = json.loads(lines[0])
    fn(first)
    lines[0] = json.dumps(first, sort_keys=True)
    (run / "trials.jsonl").write_text("\n".join(lines) + "\n")
    return first["trial_id"]


def test_every_trial_played_again_gives_its_record_and_nothing_is_written(smoke_run, capsys):
    before = file_hashes(smoke_run)
    assert main([str(smoke_run), "--play", "100"]) == 0
    out = capsys.readouterr().out
    assert "6 of 6 trials" in out and "6 the same, 0 within 1e-9 relative, 0 different" in out
    assert file_hashes(smoke_run) == before


def test_a_draw_is_seeded_and_a_difference_is_named(smoke_run, tmp_path, capsys):
    import shutil

    from etc_fast.runner import play_again

    run = tmp_path / "run"
    shutil.copytree(smoke_run, run)
    first = [t.trial_id for t in play_again(run, count=3, seed=5).trials]
    assert first == [t.trial_id for t in play_again(run, count=3, seed=5).trials] and len(set(first)) == 3
    # the last digits of a metric (as another CPU gives them): close, and the exit status is 0
    tid = _edit_first(run, lambda e: e["summary"].update(rmsle=e["summary"]["rmsle"] * (1 + 1e-12)))
    report = play_again(run, ids=[tid])
    assert [t.verdict for t in report.trials] == ["close"] and report.ok
    # a credit that does not repeat: differs, named, exit status 1
    _edit_first(run, lambda e: e["summary"].update(credited=not e["summary"]["credited"]))
    capsys.readouterr()
    assert main([str(run), "--play", "6"]) == 1
    out = capsys.readouterr().out
    assert f"{tid} " in out and "differs at summary.credited" in out and "1 different" in out


def test_only_offline_trials_are_played(smoke_run, tmp_path, capsys):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(smoke_run, run)
    _edit_first(run, lambda e: e["spec"].update(model="gpt41mini"))
    assert main([str(run), "--play", "6"]) == 2
    assert "gpt41mini would call that model again" in capsys.readouterr().err
    assert main(["--play", "2"]) == 2
    assert "--play needs a RUN_DIR" in capsys.readouterr().err
    assert main([str(tmp_path / "nowhere"), "--play", "2"]) == 2
