"""Lifetime: no sandbox process outlives a harness killed with SIGKILL or SIGTERM; temp dirs go too."""

from __future__ import annotations

import glob
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.sandbox._util import judge_processes, own_processes, sandbox_processes, sibling_workers_processes

REPO = Path(__file__).resolve().parents[2]
SLEEPER = ("def discovered_law(mass1, mass2, distance):\n"
           "    np.__dict__['__builtins__']['__import__']('time').sleep(60)\n    return mass1\n")
pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="parent-death signals are Linux-only")


def _wait_for(pred, timeout=30.0):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return True
        time.sleep(0.05)
    return False


def _start(args, tmpdir):
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": tmpdir}
    return subprocess.Popen(args, cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)


@pytest.mark.parametrize("sig", [signal.SIGKILL, signal.SIGTERM])
def test_sandbox_dies_with_its_harness(sig, tmp_path):
    law = tmp_path / "law.py"
    law.write_text(SLEEPER)
    tmpdir = tempfile.mkdtemp(prefix="etc-lifetime-")
    before = set(sandbox_processes())
    proc = _start([sys.executable, "-m", "etc_fast.replay", "--law", str(law), "--task", "m0_gravity",
                   "--wall-s", "120"], tmpdir)
    try:
        assert _wait_for(lambda: len(set(sandbox_processes()) - before) >= 2), "the sandbox did not start"
        proc.send_signal(sig)
        proc.wait(timeout=20)
        assert _wait_for(lambda: not (set(sandbox_processes()) - before), timeout=5), "sandbox outlived the harness"
        if sig == signal.SIGTERM:
            assert proc.returncode == 130
            assert b"Traceback" not in proc.stderr.read()
            assert not glob.glob(os.path.join(tmpdir, "etc-sandbox-*")), "temporary directory left behind"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for d in glob.glob(os.path.join(tmpdir, "etc-sandbox-*")):
            os.rmdir(d)
        os.rmdir(tmpdir)


def _run_processes() -> list[int]:
    """Pool helpers (forkserver and its workers) started from this checkout."""
    return [pid for pid, f in own_processes().items()
            if b"multiprocessing" in f["cmdline"] and f"'{REPO}'".encode() in f["cmdline"]]


def test_sigterm_of_a_run_leaves_nothing(tmp_path):
    tmpdir = tempfile.mkdtemp(prefix="etc-lifetime-")
    before_sb, before_pool = set(sandbox_processes()), set(_run_processes())
    before_judge = set(judge_processes())
    proc = _start([sys.executable, "-m", "etc_fast.run", str(REPO / "configs" / "smoke.yaml"), "--out",
                   str(tmp_path / "run"), "--workers", "2"], tmpdir)
    try:
        assert _wait_for(lambda: set(sandbox_processes()) - before_sb, timeout=120), "no sandbox started"
        assert _wait_for(lambda: set(judge_processes()) - before_judge, timeout=60), "no judge server started"
        proc.send_signal(signal.SIGTERM)
        proc.wait(timeout=60)
        assert proc.returncode == 130
        assert _wait_for(lambda: not (set(sandbox_processes()) - before_sb), timeout=10), "sandbox left behind"
        assert _wait_for(lambda: not (set(_run_processes()) - before_pool), timeout=10), "pool process left behind"
        assert _wait_for(lambda: not (set(judge_processes()) - before_judge), timeout=10), "judge server left behind"
        assert not glob.glob(os.path.join(tmpdir, "etc-sandbox-*")), "temporary directory left behind"
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        for d in glob.glob(os.path.join(tmpdir, "*")):
            shutil.rmtree(d, ignore_errors=True)
        os.rmdir(tmpdir)


def test_a_parallel_session_leaves_out_only_its_siblings_processes(monkeypatch):
    """The leftover scans of a parallel session (pytest -n) skip what another worker started, and
    still count an orphan (re-parented to init) and this worker's own processes."""
    me, controller = os.getpid(), os.getppid()
    sib, sib_zygote, sib_box, orphan, mine = 10**7 + 1, 10**7 + 2, 10**7 + 3, 10**7 + 4, 10**7 + 5

    def stat(pid: int, ppid: int) -> dict[str, bytes]:
        return {"stat": f"{pid} (py) S {ppid} 0 0".encode()}

    live = {me: stat(me, controller), sib: stat(sib, controller), sib_zygote: stat(sib_zygote, sib),
            sib_box: stat(sib_box, sib_zygote), orphan: stat(orphan, 1), mine: stat(mine, me)}
    monkeypatch.setenv("PYTEST_XDIST_WORKER", "gw0")
    assert sibling_workers_processes(live) == {sib, sib_zygote, sib_box}
    monkeypatch.delenv("PYTEST_XDIST_WORKER")
    assert sibling_workers_processes(live) == set()  # one process: nothing is another's
