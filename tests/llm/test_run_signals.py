"""Stopping ``python -m etc_fast.run`` (SIGTERM, SIGINT, SIGKILL) leaves no process behind and no
request goes out afterwards, with the thread executor, the process pool and a local Ray instance."""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from tests.llm._server import ChatServer, model_like
from tests.llm.test_run_llm import write_config

REPO = Path(__file__).resolve().parents[2]
# a local Ray instance of the run's own: its raylet and workers inherit the mark, so all of them are looked for
_NEEDS_RAY = pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")


def _marked(mark: str) -> list[int]:
    """Pids of live processes whose environment holds ``mark``."""
    found = []
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            env = (d / "environ").read_bytes()
            state = (d / "stat").read_text().split(") ", 1)[1].split()[0]
        except OSError:
            continue
        if mark.encode() in env and state != "Z":
            found.append(int(d.name))
    return found


def _wait_gone(mark: str, seconds: float) -> list[int]:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        left = _marked(mark)
        if not left:
            return []
        time.sleep(0.2)
    return _marked(mark)


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
@pytest.mark.parametrize("sig, executor", [
    (signal.SIGTERM, "threads"), (signal.SIGTERM, "processes"), (signal.SIGKILL, "threads"), (signal.SIGKILL, "processes"),
    (signal.SIGINT, "processes"),
    pytest.param(signal.SIGTERM, "ray", marks=_NEEDS_RAY), pytest.param(signal.SIGINT, "ray", marks=_NEEDS_RAY),
])
def test_no_process_survives_the_run(tmp_path, executor, sig):
    mark = f"ETC_FAST_TEST_MARK={uuid.uuid4().hex}"
    with ChatServer(model_like(6, delay_s=1.0), models=["test-model"], max_requests=10_000) as srv:
        cfg = write_config(tmp_path, srv.base_url, rollouts=4, workers=2, cache_mode="off")
        env = {**os.environ, "PYTHONPATH": str(REPO), mark.split("=")[0]: mark.split("=")[1]}
        proc = subprocess.Popen(
            [sys.executable, "-m", "etc_fast.run", str(cfg), "--out", str(tmp_path / "out"), "--no-report",
             "--executor", executor],
            cwd=REPO, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        )
        try:
            deadline = time.monotonic() + 60
            while srv.n_requests < 3 and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            assert srv.n_requests >= 3, "the run never reached the server"
            proc.send_signal(sig)
            proc.wait(timeout=30)
            # A trial takes 7 calls of 1 s: a worker left running would go on calling for seconds.
            left = _wait_gone(mark, 3)
            assert not left, f"processes left after {sig.name}: {left}"
            seen = srv.n_requests
            time.sleep(3)
            assert srv.n_requests == seen, "a request went out after the run had ended"
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            for pid in _marked(mark):
                os.kill(pid, signal.SIGKILL)
    if sig != signal.SIGKILL:
        assert proc.returncode == 130, proc.stderr.read().decode()[-2000:]
