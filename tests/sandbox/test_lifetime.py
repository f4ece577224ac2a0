"""Lifetime: no sandbox process outlives a harness killed with SIGKILL or SIGTERM; temp dirs go too."""

from __future__ import annotations

import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.sandbox._util import sandbox_processes

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
