"""``python -m etc_fast.replay`` as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
tasks = pytest.importorskip("etc_fast.tasks")


def replay(*args):
    return subprocess.run([sys.executable, "-m", "etc_fast.replay", *map(str, args)], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def gravity():
    return tasks.get_task("m0_gravity")


def _law_for(task, tmp_path, body):
    p = tmp_path / "law.py"
    p.write_text(f"{task.signature}\n    return {body}\n")
    return p


def test_json_scores_a_law(gravity, tmp_path):
    expr = gravity.law_expression
    if expr is None:
        pytest.skip("no law expression for this task")
    p = _law_for(gravity, tmp_path, expr)
    r = replay("--law", p, "--task", "m0_gravity", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["valid"] and d["error"] is None and d["complete"]
    assert d["rmsle"] < 1e-9 and d["n_finite_target"] == d["n_finite_pred"] == 5000 and d["sign_disagreements"] == 0


def test_invalid_law_exits_zero(tmp_path):
    p = tmp_path / "bad.py"
    p.write_text("def discovered_law(a):\n    return a\n")
    r = replay("--law", p, "--task", "m0_gravity", "--json")
    assert r.returncode == 0
    d = json.loads(r.stdout)
    assert not d["valid"] and "Invalid function signature" in d["error"] and d["rmsle"] == "nan"
    r = replay("--law", p, "--task", "m0_gravity")
    assert r.returncode == 0 and "valid" in r.stdout and "False" in r.stdout


def test_bad_arguments_exit_two(tmp_path):
    p = tmp_path / "law.py"
    p.write_text("def discovered_law(a):\n    return a\n")
    r = replay("--law", p, "--task", "no_such_task")
    assert r.returncode == 2 and "no_such_task" in r.stderr
    r = replay("--law", tmp_path / "missing.py", "--task", "m0_gravity")
    assert r.returncode == 2 and "not found" in r.stderr
    r = replay()
    assert r.returncode == 2 and "nothing to do" in r.stderr
    r = replay(tmp_path / "no_run_dir")
    assert r.returncode == 2 and "not found" in r.stderr


@pytest.mark.parametrize("body,credited,fragment", [
    ("1e-4 * mass1 * mass2 / distance ** 1.5", True, "HIDDEN_CONSTANT 0.0001 vs 6.674e-05: allowed"),
    ("6.674e-5 * mass1 * mass2 / distance ** 1.5 + 1", False, "extra additive term 1"),
])
def test_json_with_structural_judge(gravity, tmp_path, body, credited, fragment):
    p = _law_for(gravity, tmp_path, body)
    r = replay("--law", p, "--task", "m0_gravity", "--judge", "structural", "--json")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["credited"] is credited and fragment in d["judge_reason"]
    assert d["judge"] == "structural" and d["judge_version"]


def test_unknown_judge_exits_two(gravity, tmp_path):
    p = _law_for(gravity, tmp_path, "mass1")
    r = replay("--law", p, "--task", "m0_gravity", "--judge", "oracle")
    assert r.returncode == 2 and "unknown judge" in r.stderr
