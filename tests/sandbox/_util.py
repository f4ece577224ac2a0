"""Helpers of the sandbox tests: kernel-only runs, the hostile corpus, process scans."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
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


def processes(*fields: str) -> Iterator[tuple[int, dict[str, bytes]]]:
    """``(pid, {field: bytes})`` of every live process whose ``/proc/PID/<field>`` files this user can
    read (``cmdline`` always among them); a process that ends during the scan is skipped."""
    names = ("cmdline", *(f for f in fields if f != "cmdline"))
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            yield int(entry), {name: Path(f"/proc/{entry}/{name}").read_bytes() for name in names}
        except OSError:
            continue


def parent_pid(stat: bytes) -> int:
    """The parent pid in a ``/proc/PID/stat`` line (the field after the command's closing parenthesis
    and the state; the command itself may hold spaces and parentheses)."""
    return int(stat.rsplit(b")", 1)[1].split()[1])


def own_processes(*fields: str) -> dict[int, dict[str, bytes]]:
    """:func:`processes` (``stat`` among the fields) less those another worker of a parallel test
    session started (:func:`sibling_workers_processes`): what a leftover scan may count."""
    live = dict(processes("stat", *fields))
    others = sibling_workers_processes(live)
    return {pid: f for pid, f in live.items() if pid not in others}


def sibling_workers_processes(live: dict[int, dict[str, bytes]] | None = None) -> set[int]:
    """Pids of the processes that the other workers of this test session started (``pytest -n``).

    The suite runs in parallel worker processes (pytest-xdist), children of one controller; a scan
    for leftover processes must not count a sibling's live sandboxes, zygotes or judge servers as
    this test's. A process is a sibling's when its chain of parents reaches another child of this
    worker's parent. A process that outlived its starter is re-parented to init and reaches no
    worker, so it is still counted, whoever left it. Empty outside a parallel session. ``live``:
    a scan made with ``processes("stat")`` (a fresh one when omitted).
    """
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        return set()
    if live is None:
        live = dict(processes("stat"))
    parent: dict[int, int] = {}
    for pid, f in live.items():
        try:
            parent[pid] = parent_pid(f["stat"])
        except (KeyError, ValueError, IndexError):
            continue
    me, controller = os.getpid(), os.getppid()
    roots = {pid for pid, pp in parent.items() if pp == controller and pid != me}
    out: set[int] = set()
    for pid in parent:
        cur, steps = pid, 0
        while cur not in roots and cur in parent and cur > 1 and steps < 4096:
            cur, steps = parent[cur], steps + 1
        if cur in roots:
            out.add(pid)
    return out


def sandbox_processes(*, zygotes: bool = False) -> list[int]:
    """Pids of live sandbox processes started from this checkout (zygotes and their children).

    This process's own zygotes live as long as the process and are left out unless ``zygotes``.
    """
    from etc_fast.sandbox._zygote import zygote_pids

    own = set() if zygotes else zygote_pids()
    needle = RUNNER.encode()
    return [pid for pid, f in own_processes().items() if needle in f["cmdline"] and pid not in own]


def judge_processes() -> list[int]:
    """Pids of live structural-judge servers started from this checkout.

    A judge server's environment names the checkout it runs (``PYTHONPATH``): those of a study run
    from another checkout on the same machine are left out, as :func:`sandbox_processes` leaves out
    the sandboxes of another checkout's runner.
    """
    mine = b"\0PYTHONPATH=" + str(Path(__file__).resolve().parents[2]).encode() + b"\0"
    return [pid for pid, f in own_processes("environ").items() if b"etc_fast.evaluate._judge_worker" in f["cmdline"]
            and mine in b"\0" + f["environ"] + b"\0"]
