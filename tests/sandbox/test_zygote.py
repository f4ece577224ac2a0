"""The zygote: started by exec with the clean environment, one per process, restarted when it dies or
hangs, refusing to fork while it has threads; nothing one child plants reaches a later child.

The planting and the checking jobs run with the kernel layers only (seccomp and the audit hook left
out), so what keeps one child's state from the next is the per-child isolation itself, not a refusal
of the planting call.
"""

from __future__ import annotations

import dataclasses
import json
import os
import signal
import sys
import time
import uuid
from pathlib import Path

import numpy as np
import pytest

from etc_fast.sandbox import _supervisor, call_law, run_code
from etc_fast.sandbox._supervisor import encode_data, run_job
from etc_fast.sandbox._zygote import Zygote, zygote
from tests.sandbox._util import FAKE_KEY, SHORT

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the zygote's isolation is Linux-only")
pytestmark = linux
LAW = "def discovered_law(a):\n    return a * 2.0\n"
X = np.array([[1.0], [2.0]])


def _kernel_job(code: str, data: dict | None = None):
    job = {
        "kind": "code", "code": code, "data": encode_data(data or {}), "preload": [],
        "allowed_imports": ["os", "sys", "socket", "ctypes", "threading", "time", "json", "numpy", "math", "errno"],
        "read_packages": ["numpy"], "second_layer": False,
    }
    return run_job(job, SHORT)


PLANT = """
import ctypes, json, os, socket, sys, threading, time, math
import numpy
out = {}
numpy.__etc_planted__ = "planted"
numpy.pi = 3.0
math.tau = 1.0
sys.modules["json"].etc_planted = True
open("planted.txt", "w").write("x")
try:
    open("/tmp/etc_planted_" + tag, "w").write("x")
    out["tmp_file"] = "written"
except OSError as e:
    out["tmp_file"] = type(e).__name__
os.environ["ETC_PLANTED"] = "1"
os.putenv("ETC_PLANTED_PUTENV", "1")
try:
    threading.Thread(target=time.sleep, args=(30,), name="etc-planted", daemon=False).start()
    out["thread"] = "started"
except Exception as e:
    out["thread"] = type(e).__name__
libc = ctypes.CDLL(None, use_errno=True)
out["shmget"] = libc.shmget(0x7E7C0001, 4096, 0o1666)
out["msgget"] = libc.msgget(0x7E7C0002, 0o1666)
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind("\\0etc-planted-" + tag)
    s.listen(1)
    numpy.__etc_socket__ = s
    out["abstract"] = "bound"
except OSError as e:
    out["abstract"] = type(e).__name__
fd = os.open("planted.txt", os.O_RDONLY)
os.set_inheritable(fd, True)
st = os.fstat(fd)
out["fd"] = [fd, st.st_dev, st.st_ino]
try:
    os.kill(os.getppid(), 9)
    out["kill_parent"] = "sent"
except OSError as e:
    out["kill_parent"] = e.errno
try:
    os.killpg(0, 0)
    out["killpg_own"] = "ok"
except OSError as e:
    out["killpg_own"] = e.errno
print(json.dumps(out))
"""

CHECK = """
import ctypes, errno, json, os, socket, sys, threading, math
import numpy
seen = {}
seen["numpy_attr"] = hasattr(numpy, "__etc_planted__") or hasattr(numpy, "__etc_socket__")
seen["numpy_pi"] = numpy.pi
seen["math_tau"] = math.tau
seen["json_attr"] = hasattr(sys.modules["json"], "etc_planted")
seen["box"] = sorted(os.listdir("."))
seen["tmp_file"] = os.path.exists("/tmp/etc_planted_" + tag)
seen["env"] = [os.environ.get("ETC_PLANTED"), os.environ.get("ETC_PLANTED_PUTENV")]
seen["threads"] = sorted(t.name for t in threading.enumerate())
libc = ctypes.CDLL(None, use_errno=True)
seen["shm"] = libc.shmget(0x7E7C0001, 0, 0)
seen["msg"] = libc.msgget(0x7E7C0002, 0)
try:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect("\\0etc-planted-" + tag)
    seen["abstract"] = "connected"
except OSError as e:
    seen["abstract"] = type(e).__name__
try:
    st = os.fstat(fd[0])
    seen["fd"] = [st.st_dev, st.st_ino] == fd[1:]
except OSError:
    seen["fd"] = False
seen["ppid"] = os.getppid()
print(json.dumps(seen))
"""


def test_one_zygote_serves_many_calls_and_was_started_by_exec(monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    z = Zygote()
    monkeypatch.setattr(_supervisor, "zygote", lambda *_: z)
    try:
        for _ in range(3):
            r = call_law(LAW, X, arg_names=["a"], limits=SHORT)
            assert r.ok, r.error
            np.testing.assert_allclose(r.values, [2.0, 4.0])
        assert z.starts == 1
        pid = z.pid
        cmd = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
        assert cmd[:3] == [sys.executable.encode(), b"-I", _supervisor.RUNNER.encode()]
        env = Path(f"/proc/{pid}/environ").read_bytes()
        assert FAKE_KEY.encode() not in env and b"OPENAI_API_KEY" not in env
        assert b"PYTHONPATH" not in env
        status = Path(f"/proc/{pid}/status").read_text()
        assert "\nThreads:\t1\n" in status
        assert json.loads(json.dumps(z.versions()))["numpy"] == np.__version__
        assert "scipy.special" in z.versions()["preloaded"]
    finally:
        z.close()
    assert not Path(f"/proc/{pid}").exists() or "zombie" in Path(f"/proc/{pid}/status").read_text()


def _check_planted(out: dict, tag: str) -> None:
    planted, seen = out["planted"], out["seen"]
    assert planted is not None and seen is not None, out["errors"]
    assert planted["kill_parent"] != "sent"  # the zygote is out of the child's reach
    assert planted["shmget"] >= 0 and planted["msgget"] >= 0  # planted in the child's IPC namespace
    assert planted["abstract"] == "bound"  # in the child's network namespace
    assert seen["numpy_attr"] is False and seen["json_attr"] is False
    assert seen["numpy_pi"] == pytest.approx(np.pi, rel=1e-15) and seen["math_tau"] == pytest.approx(2 * np.pi)
    assert seen["box"] == []
    assert seen["tmp_file"] is False and not Path(f"/tmp/etc_planted_{tag}").exists()
    assert seen["env"] == [None, None]
    assert seen["threads"] == ["MainThread"]
    assert seen["shm"] == -1 and seen["msg"] == -1  # ENOENT: a fresh IPC namespace
    assert seen["abstract"] in ("ConnectionRefusedError", "FileNotFoundError")
    assert seen["fd"] is False
    assert out["zygote_before"] == out["zygote_after"] == seen["ppid"]  # the zygote survived and was reused


@pytest.mark.parametrize("full", [False, True], ids=["lean zygote", "full zygote"])
def test_nothing_a_child_plants_reaches_the_next_child_as_an_unprivileged_user(full):
    """The same as user 65534 (a user namespace per child instead of the uid drop)."""
    import shutil
    import subprocess
    import tempfile

    from tests.sandbox.test_hostile import NOBODY, _python_for_nobody, _readable_copy

    if os.geteuid() != 0:
        pytest.skip("not root: the test above already runs unprivileged")
    if not shutil.which("setpriv"):
        pytest.skip("setpriv is not installed")
    tag = uuid.uuid4().hex[:12]
    shim = Path(tempfile.mkdtemp(prefix="etc-nobody-py-", dir="/tmp"))
    try:
        py = _python_for_nobody(shim)
        if py is None:
            pytest.skip("no Python with NumPy/SciPy that user 65534 can run")
        main = _readable_copy(shim / "src") / "tests" / "sandbox" / "_planted_main.py"
        proc = subprocess.run([*NOBODY, py, str(main), tag, *(["full"] if full else [])], capture_output=True, text=True, timeout=300, cwd="/tmp",
                              env={"PATH": "/usr/bin:/bin", "LANG": "C.UTF-8"})
    finally:
        shutil.rmtree(shim, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    out = json.loads(proc.stdout)
    assert out["layers"].get("identity"), out["layers"]  # a user namespace
    _check_planted(out, tag)


@pytest.mark.parametrize("full", [False, True], ids=["lean zygote", "full zygote"])
def test_nothing_a_child_plants_reaches_the_next_child(full):
    from tests.sandbox._planted_main import plant_and_check

    tag = uuid.uuid4().hex[:12]
    _check_planted(plant_and_check(tag, full=full), tag)


def test_planting_runs_concurrently_do_not_meet():
    """Two children alive at once: one plants, the other (started while it runs) does not see it."""
    from concurrent.futures import ThreadPoolExecutor

    tag = uuid.uuid4().hex[:12]
    hold = PLANT + "\ntime.sleep(1.5)\n"
    with ThreadPoolExecutor(2) as ex:
        first = ex.submit(_kernel_job, hold, {"tag": tag})
        time.sleep(0.7)
        second = ex.submit(_kernel_job, CHECK, {"tag": tag, "fd": [99, 0, 0]})
        a, b = first.result(), second.result()
    assert a.ok and a.reply["ok"], (a.error, a.stderr)
    assert b.ok and b.reply["ok"], (b.error, b.stderr)
    seen = json.loads(b.stdout.strip().splitlines()[-1])
    assert seen["shm"] == -1 and seen["msg"] == -1
    assert seen["abstract"] in ("ConnectionRefusedError", "FileNotFoundError")
    assert seen["box"] == [] and seen["env"] == [None, None] and seen["numpy_attr"] is False


def test_a_killed_zygote_is_restarted(monkeypatch):
    z = Zygote()
    monkeypatch.setattr(_supervisor, "zygote", lambda *_: z)
    try:
        assert call_law(LAW, X, arg_names=["a"], limits=SHORT).ok
        first = z.pid
        os.kill(first, signal.SIGKILL)
        for _ in range(100):
            if z.pid is None:
                break
            time.sleep(0.02)
        r = call_law(LAW, X, arg_names=["a"], limits=SHORT)
        assert r.ok, r.error
        assert z.pid not in (None, first) and z.starts == 2
    finally:
        z.close()


def test_a_zygote_that_stops_answering_is_replaced(monkeypatch):
    z = Zygote()
    monkeypatch.setattr(_supervisor, "zygote", lambda *_: z)
    monkeypatch.setattr(_supervisor, "ANSWER_S", 3.0)
    try:
        assert call_law(LAW, X, arg_names=["a"], limits=SHORT).ok
        first = z.pid
        os.kill(first, signal.SIGSTOP)
        r = call_law(LAW, X, arg_names=["a"], limits=SHORT)
        assert r.ok, r.error
        assert z.pid not in (None, first) and z.starts == 2
        assert not Path(f"/proc/{first}").exists() or "zombie" in Path(f"/proc/{first}/status").read_text() \
            or "(dead)" in Path(f"/proc/{first}/status").read_text()
    finally:
        z.close()


def test_a_zygote_with_threads_refuses_to_fork(monkeypatch):
    z = Zygote(extra={"test_thread": True})
    monkeypatch.setattr(_supervisor, "zygote", lambda *_: z)
    try:
        r = call_law(LAW, X, arg_names=["a"], limits=SHORT)
        assert not r.ok
        assert "threads" in r.error and "single-threaded" in r.error
        assert z.starts == 2  # replaced once, and the new one refused too
    finally:
        z.close()


def test_a_fork_of_the_harness_starts_its_own_zygote():
    z = zygote()
    assert call_law(LAW, X, arg_names=["a"], limits=SHORT).ok
    parent_zygote = z.pid
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child reports through the pipe
        code = 1
        try:
            res = call_law(LAW, X, arg_names=["a"], limits=SHORT)
            os.write(w, json.dumps([res.ok, zygote().pid]).encode())
            zygote().close()
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    data = b""
    while chunk := os.read(r, 4096):
        data += chunk
    os.close(r)
    _, st = os.waitpid(pid, 0)
    ok, child_zygote = json.loads(data)
    assert ok and child_zygote != parent_zygote
    assert z.pid == parent_zygote
    assert call_law(LAW, X, arg_names=["a"], limits=SHORT).ok


def test_interpreter_calls_find_scipy_preloaded():
    code = ("import scipy.stats\nsys = np.__dict__['__builtins__']['__import__']('sys')\n"
            "print('scipy.stats' in sys.modules, scipy.stats.norm.cdf(0.0))")
    r = run_code(code, limits=SHORT)
    assert r.ok, r.error
    assert r.stdout.split() == ["True", "0.5"]


def test_jobs_that_do_not_name_scipy_are_forked_by_the_lean_zygote():
    from etc_fast.sandbox._zygote import LEAN_PRELOAD, PRELOAD, preload_for, zygote_pids

    # the job's text must not spell the name: 'sci' + 'py'
    look = "sys = np.__dict__['__builtins__']['__import__']('sys')\nprint('sci' + 'py' in sys.modules, os_pid())\n"
    look = look.replace("os_pid()", "np.__dict__['__builtins__']['__import__']('os').getppid()")
    lean = run_code(look, limits=SHORT)
    full = run_code(look + "# scipy\n", limits=SHORT)
    assert lean.ok and full.ok, (lean.error, full.error)
    (lean_loaded, lean_parent), (full_loaded, full_parent) = (r.stdout.split() for r in (lean, full))
    assert (lean_loaded, full_loaded) == ("False", "True")
    assert lean_parent != full_parent and {int(lean_parent), int(full_parent)} <= zygote_pids()
    assert preload_for({"kind": "law", "source": "def discovered_law(a):\n    return a\n"}) == LEAN_PRELOAD
    assert preload_for({"kind": "law", "source": "import scipy.special\n"}) == PRELOAD
    assert preload_for({"kind": "code", "code": None}) == PRELOAD  # not text: the full zygote


def test_a_job_met_again_with_reuse_returns_the_run_that_completed(monkeypatch):
    from etc_fast.sandbox import _supervisor as sup

    monkeypatch.setattr(sup, "_REUSED", sup.LRU(sup.REUSE_SIZE))
    ran = []
    real = sup._run_payload
    monkeypatch.setattr(sup, "_run_payload", lambda *a: ran.append(1) or real(*a))
    law = "def discovered_law(a):\n    return a * np.random.random()\n"
    first = call_law(law, X, arg_names=["a"], limits=SHORT, reuse=True)
    again = call_law(law, X, arg_names=["a"], limits=SHORT, reuse=True)
    assert first.ok and again.ok and len(ran) == 1
    np.testing.assert_array_equal(first.values, again.values)  # the first run's draws, not new ones
    assert not np.shares_memory(first.values, again.values)
    fresh = call_law(law, X, arg_names=["a"], limits=SHORT)  # without reuse: a run of its own
    assert len(ran) == 2 and not np.array_equal(fresh.values, first.values)
    # other inputs, other limits, another text: each runs
    call_law(law, X + 1.0, arg_names=["a"], limits=SHORT, reuse=True)
    call_law(law, X, arg_names=["a"], limits=dataclasses.replace(SHORT, wall_s=SHORT.wall_s + 1), reuse=True)
    call_law(law + "\n", X, arg_names=["a"], limits=SHORT, reuse=True)
    assert len(ran) == 5
    # a failure is never kept: it runs again
    bad = "def discovered_law(a):\n    raise ValueError('no')\n    return a\n"
    assert not call_law(bad, X, arg_names=["a"], limits=SHORT, reuse=True).ok
    assert not call_law(bad, X, arg_names=["a"], limits=SHORT, reuse=True).ok
    assert len(ran) == 7
    # analysis code as well, and the isolation requirement is part of the job
    code = "print(np.random.random())"
    a, b = (run_code(code, {"z": 1}, limits=SHORT, reuse=True) for _ in range(2))
    assert a.ok and a.stdout == b.stdout and len(ran) == 8
    monkeypatch.setenv(sup.ENV_REQUIRE, "1")
    run_code(code, {"z": 1}, limits=SHORT, reuse=True)
    assert len(ran) == 9
