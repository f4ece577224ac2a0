"""Helpers of the sandbox tests: kernel-only runs, the hostile corpus, process scans."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from etc_fast.sandbox import LAYERS, SandboxLimits
from etc_fast.sandbox._supervisor import RUNNER, encode_data, run_job

CORPUS = Path(__file__).with_name("hostile")
FAKE_KEY = "sk-test-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
SHORT = SandboxLimits(wall_s=6.0, cpu_s=3.0, memory_mb=512, output_bytes=4096, disk_bytes=1 << 20, disk_files=64)


def kernel_only(code: str, data: dict | None = None, limits: SandboxLimits = SHORT):
    """Run analysis ``code`` with seccomp and the audit hook left out: only the kernel layers act.

    Returns the raw run; ``run.reply["ok"]``/``["error"]`` say how the code ended.
    """
    job = {
        "kind": "code", "code": code, "data": encode_data(data or {}), "preload": [],
        "allowed_imports": ["os", "socket", "ctypes", "resource", "signal", "errno", "math", "sys", "time"],
        "read_packages": [], "second_layer": False,
    }
    return run_job(job, limits)


def full_isolation(layers: dict) -> bool:
    return all(layers.get(n) for n in LAYERS if n not in ("seccomp", "audit_hook"))


def load_corpus() -> dict:
    """``{name: module}`` of every attack file (each has ATTEMPT, SAFE and SOURCE)."""
    out = {}
    for path in sorted(CORPUS.glob("*.py")):
        spec = importlib.util.spec_from_file_location(f"hostile_{path.stem}", path)
        mod = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(mod)
        out[path.stem] = mod
    return out


def sandbox_processes(*, zygotes: bool = False) -> list[int]:
    """Pids of live sandbox processes started from this checkout (zygotes and their children).

    This process's own zygotes live as long as the process and are left out unless ``zygotes``.
    """
    from etc_fast.sandbox._zygote import zygote_pids

    own = set() if zygotes else zygote_pids()
    found = []
    needle = RUNNER.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if needle in f.read() and int(entry) not in own:
                    found.append(int(entry))
        except OSError:
            continue
    return found


def judge_processes() -> list[int]:
    """Pids of live structural-judge servers started from this checkout.

    A judge server's environment names the checkout it runs (``PYTHONPATH``): those of a study run
    from another checkout on the same machine are left out, as :func:`sandbox_processes` leaves out
    the sandboxes of another checkout's runner.
    """
    found = []
    mine = b"\0PYTHONPATH=" + str(Path(__file__).resolve().parents[2]).encode() + b"\0"
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                with open(f"/proc/{entry}/cmdline", "rb") as f:
                    if b"etc_fast.evaluate._judge_worker" not in f.read():
                        continue
                with open(f"/proc/{entry}/environ", "rb") as f:
                    env = b"\0" + f.read() + b"\0"
            except OSError:
                continue
            if mine in env:
                found.append(int(entry))
    return found
