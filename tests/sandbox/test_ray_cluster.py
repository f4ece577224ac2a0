"""The sandbox on a Ray cluster of two nodes (``ray start --head`` and ``ray start --address`` on this
machine): every worker gets its own zygote with every layer, and nothing is left once the nodes stop.

The nodes get a temporary directory of their own; they are stopped by killing the processes that
belong to it (and their descendants) by pid, not with ``ray stop``, which would also stop any other
Ray instance on the machine.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from tests.sandbox._util import full_isolation, parent_pid, processes, sandbox_processes

REPO = Path(__file__).resolve().parents[2]
pytestmark = [
    pytest.mark.ray, pytest.mark.slow,
    pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed"),
    pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel layers are Linux-only"),
]


def _ray(*args: str, env: dict) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "ray.scripts.scripts", *args], env=env, capture_output=True,
                          text=True, timeout=180, cwd="/tmp")


def _procs() -> dict[int, tuple[int, bytes]]:
    """``{pid: (parent pid, command line)}`` of the live processes."""
    out = {}
    for pid, f in processes("stat"):
        try:
            out[pid] = (parent_pid(f["stat"]), f["cmdline"])
        except (ValueError, IndexError):
            continue
    return out


def _stop_nodes(temp_dir: str) -> None:
    """Kill the processes of the nodes under ``temp_dir`` and all their descendants, by pid."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        procs = _procs()
        mine = {pid for pid, (_, cmd) in procs.items() if temp_dir.encode() in cmd and pid != os.getpid()}
        grew = True
        while grew:
            more = {pid for pid, (ppid, _) in procs.items() if ppid in mine} - mine
            grew = bool(more)
            mine |= more
        for pid in mine:
            try:
                os.kill(pid, sig)
            except OSError:
                pass
        end = time.monotonic() + 10
        while time.monotonic() < end and any(Path(f"/proc/{p}").exists() and
                                             "zombie" not in Path(f"/proc/{p}/status").read_text(errors="replace")
                                             for p in mine if Path(f"/proc/{p}/status").exists()):
            time.sleep(0.2)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture()
def cluster():
    temp_dir = tempfile.mkdtemp(prefix="etcray-", dir="/tmp")
    port = _free_port()
    # a HOME of its own: Ray keeps state there (~/.ray, e.g. an auth token another cluster on this
    # machine left behind), which must not decide whether this test's cluster accepts its driver
    # and none of the RAY_* variables an earlier ray.init() of this process set (it sets
    # RAY_AUTH_MODE=token, which with a fresh HOME would ask for a token no one made)
    env = {k: v for k, v in os.environ.items() if not k.startswith("RAY_")}
    env.update({"PYTHONPATH": str(REPO), "RAY_USAGE_STATS_ENABLED": "0", "HOME": temp_dir})
    env.pop("OPENAI_API_KEY", None)
    try:
        head = _ray("start", "--head", f"--port={port}", "--num-cpus=1", "--include-dashboard=false",
                    f"--temp-dir={temp_dir}", "--disable-usage-stats", env=env)
        if head.returncode != 0:  # CI must run this test; elsewhere a machine may forbid it
            (pytest.fail if os.environ.get("CI", "").lower() == "true" else pytest.skip)(
                f"ray start --head failed here: {head.stderr[-500:]}")
        node = _ray("start", f"--address=127.0.0.1:{port}", "--num-cpus=1", "--disable-usage-stats", env=env)
        assert node.returncode == 0, node.stderr[-2000:]
        yield f"127.0.0.1:{port}", temp_dir
    finally:
        _stop_nodes(temp_dir)
        subprocess.run(["rm", "-rf", temp_dir], check=False)


def _probe(i: int):
    import numpy as np
    import ray

    from etc_fast.sandbox import call_law, run_code
    from etc_fast.sandbox._zygote import zygote

    law = call_law("def discovered_law(a):\n    import scipy.special\n    return scipy.special.gamma(a) * 2\n",
                   np.array([[1.0], [3.0]]), arg_names=["a"])
    code = run_code("print(sum(range(5)))")
    return {"ok": law.ok and code.ok, "values": None if law.values is None else law.values.tolist(),
            "stdout": code.stdout, "layers": law.layers, "worker": os.getpid(), "zygote": zygote().pid,
            "node": ray.get_runtime_context().get_node_id()}


def test_two_ray_nodes_sandbox_with_every_layer_and_leave_nothing(cluster, tmp_path, monkeypatch):
    import ray

    from etc_fast.runner import RayExecutor, TrialWorker, expand_grid, parse_config
    from tests.runner._fakes import FakeWorker
    from tests.runner.conftest import SMALL

    small_config = parse_config({**SMALL, "out": str(tmp_path / "run")}, source="small.yaml")

    address, temp_dir = cluster
    monkeypatch.setenv("HOME", temp_dir)  # the driver reads the same Ray state as the nodes
    for key in [k for k in os.environ if k.startswith("RAY_") and k != "RAY_USAGE_STATS_ENABLED"]:
        monkeypatch.delenv(key)
    before = set(sandbox_processes(zygotes=True))
    ray.init(address=address, include_dashboard=False, log_to_driver=False, logging_level="ERROR")
    try:
        remote = ray.remote(num_cpus=1, scheduling_strategy="SPREAD")(_probe)
        results = ray.get([remote.remote(i) for i in range(6)])
    finally:
        ray.shutdown()
    assert all(r["ok"] for r in results), results
    assert all(r["values"] == [2.0, 4.0] and r["stdout"] == "10\n" for r in results)
    assert all(full_isolation(r["layers"]) and r["layers"]["seccomp"] and r["layers"]["audit_hook"] for r in results)
    assert len({r["node"] for r in results}) == 2  # both nodes ran sandboxes
    per_worker: dict = {}
    for r in results:
        per_worker.setdefault(r["worker"], set()).add(r["zygote"])
    assert all(len(z) == 1 and None not in z for z in per_worker.values())  # one zygote per worker process

    # the runner's Ray executor on the same cluster: real trials, evaluated in the workers' zygotes
    specs = [s for s in expand_grid(small_config) if s.task == "m9_hooke_law" and s.difficulty == "easy"
             and s.rollout == 0 and s.config.name == "baseline_n"]
    worker = FakeWorker(TrialWorker.from_config(small_config).policy_options, judge="structural", real=True)
    records = [rec for _, rec in RayExecutor(2, address=address).run(specs, worker)]
    assert records and all(rec["status"] != "failed" for rec in records), records
    assert all(set(rec["evaluation"]["sandbox_layers"]) >= {"identity", "landlock_fs", "seccomp"} for rec in records)

    _stop_nodes(temp_dir)
    for _ in range(50):
        if not (set(sandbox_processes(zygotes=True)) - before):
            break
        time.sleep(0.1)
    assert not (set(sandbox_processes(zygotes=True)) - before), "a zygote outlived its Ray worker"
