"""The structural judge's algebra runs in a killable judge child: a deadline really stops it."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest

from etc_fast.errors import InfrastructureError
from etc_fast.evaluate._judge_worker import judge_server
from etc_fast.evaluate._structural import StructuralJudge
from etc_fast.tasks import get_task
from tests.sandbox._util import parent_pid, processes

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="pidfds and fork are Linux-only here")
GRAV = get_task("m0_gravity", "easy", "v0")
# ~100 terms of sines: seconds of sympy work (about 3 s here), far past a 0.1 s deadline
SLOW = "def discovered_law(mass1, mass2, distance):\n    return " + " + ".join(
    f"np.sin({i}*mass1 + distance)**{i % 7 + 1} * np.cos(mass2 / {i})" for i in range(1, 100)) + "\n"


def _children(pid: int) -> list[int]:
    return [c for c, f in processes("stat") if parent_pid(f["stat"]) == pid]


def test_verdicts_in_the_worker_equal_those_in_process():
    subs = [
        "def discovered_law(mass1, mass2, distance):\n    return 3.2 * mass1 * mass2 / distance ** 1.5\n",
        "def discovered_law(mass1, mass2, distance):\n    return 3.2 * mass1 * mass2 / distance ** 2\n",
        "def discovered_law(mass1, mass2, distance):\n    return mass1 +\n",
    ]
    here, there = StructuralJudge(timeout_s=None), StructuralJudge()
    for src in subs:
        assert there.judge(src, GRAV) == here.judge(src, GRAV)
    assert judge_server().pid is not None


def test_a_stalled_verdict_is_stopped_and_its_child_killed():
    judge = StructuralJudge(timeout_s=0.1)
    t0 = time.monotonic()
    with pytest.raises(InfrastructureError, match="no verdict within 0.1 s") as info:
        judge.judge(SLOW, GRAV)  # a deadline is no verdict, never "not credited"
    took = time.monotonic() - t0
    assert info.value.kind == "judge_time_limit"
    assert took < 10
    server = judge_server().pid
    for _ in range(100):
        if not _children(server):
            break
        time.sleep(0.05)
    assert _children(server) == []  # the child doing the algebra was killed
    # the same server goes on judging (a deadline that a loaded machine cannot miss: this checks
    # the server, not its speed)
    ok = StructuralJudge(timeout_s=60).judge(
        "def discovered_law(mass1, mass2, distance):\n    return 2.0 * mass1 * mass2 / distance ** 1.5\n", GRAV)
    assert ok.credited, ok.reason
    assert judge_server().pid == server


def test_a_dead_judge_server_is_replaced():
    judge = StructuralJudge()
    src = "def discovered_law(mass1, mass2, distance):\n    return 2.0 * mass1 * mass2 / distance ** 1.5\n"
    assert judge.judge(src, GRAV).credited
    server = judge_server()
    first, starts = server.pid, server.starts
    os.kill(first, 9)
    for _ in range(100):
        if server.pid is None:
            break
        time.sleep(0.02)
    assert judge.judge(src.replace("2.0", "3.0"), GRAV).credited  # not a remembered verdict
    assert server.pid not in (None, first) and server.starts == starts + 1


def test_a_stuck_judge_server_is_replaced(monkeypatch):
    # A server that is alive but answers nothing (stopped here; a deadlock would look the same) is
    # found out by the missing acknowledgement, killed and replaced, and the verdict is still reached.
    # Before that, each verdict waited its whole timeout_s on it and the server was never replaced.
    from etc_fast.evaluate import _judge_client

    monkeypatch.setattr(_judge_client, "ACCEPT_S", 2.0)
    judge = StructuralJudge(timeout_s=60.0)
    src = "def discovered_law(mass1, mass2, distance):\n    return 2.5 * mass1 * mass2 / distance ** 1.5\n"
    assert judge.judge(src, GRAV).credited
    server = judge_server()
    first, starts = server.pid, server.starts
    os.kill(first, signal.SIGSTOP)
    try:
        t0 = time.monotonic()
        v = judge.judge(src.replace("2.5", "3.5"), GRAV)  # not a remembered verdict
        took = time.monotonic() - t0
    finally:
        try:
            os.kill(first, signal.SIGCONT)
        except ProcessLookupError:
            pass
    assert v.credited, v.reason
    assert took < 30  # ACCEPT_S and a new server's start, not the 60 s verdict deadline
    assert server.pid not in (None, first) and server.starts == starts + 1
    assert not Path(f"/proc/{first}").exists() or "Z" in Path(f"/proc/{first}/stat").read_text().split()[2]


def test_judge_server_environment_has_no_key(monkeypatch):
    server = judge_server()
    server.close()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-judge-env")
    assert StructuralJudge().judge("def discovered_law(mass1, mass2, distance):\n    return mass1\n", GRAV) is not None
    env = Path(f"/proc/{server.pid}/environ").read_bytes()
    assert b"sk-test-judge-env" not in env and b"OPENAI_API_KEY" not in env


def test_a_trial_whose_judge_passes_its_deadline_is_judged_again_not_uncredited():
    from etc_fast.protocol._trial import judge_submission

    out = judge_submission(SLOW, GRAV, StructuralJudge(timeout_s=0.1))
    assert out["status"] == "error" and out["error_kind"] == "judge_time_limit" and not out["credited"]
    assert "no verdict within 0.1 s" in out["reason"]
    ok = judge_submission(SLOW, GRAV, StructuralJudge(timeout_s=None))  # the same algebra, no deadline
    assert ok["status"] == "ok" and not ok["credited"]


def test_reached_verdicts_are_remembered_deadlines_are_not():
    judge = StructuralJudge(timeout_s=0.1)
    with pytest.raises(InfrastructureError, match="no verdict within"):
        judge.judge(SLOW, GRAV)
    from etc_fast.evaluate import _structural

    assert not [k for k in _structural._VERDICTS if k[0] == SLOW]  # a deadline is not a verdict
    src = "def discovered_law(mass1, mass2, distance):\n    return 5.0 * mass1 * mass2 / distance ** 1.5\n"
    first = judge.judge(src, GRAV)
    server = judge_server()
    server.close()  # a remembered verdict needs no server
    assert judge.judge(src, GRAV) == first and server.pid is None


def test_timeout_option_is_checked():
    with pytest.raises(ValueError, match="timeout_s"):
        StructuralJudge(timeout_s=0)
