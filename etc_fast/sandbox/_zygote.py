"""Harness side of the sandbox zygote: one per process, started lazily by exec, restarted when it dies.

The zygote (``_runner.py``, see its docstring and ``docs/sandbox.md``) is a ``python -I`` process
with the sandbox's fixed environment that has NumPy and SciPy imported and forks one child per job.
This module starts it (from one long-lived thread, so that its ``PR_SET_PDEATHSIG`` refers to a
thread that lives as long as the process), sends it fork requests over a ``SOCK_SEQPACKET`` control
socket, and replaces it when it has died, refused to fork or stopped answering. It is never forked
from the harness: the harness holds the API key and the hidden laws, the zygote only what the
sandbox's environment gives it.

A process that forks after starting a zygote (a ``fork`` start method) drops its copy in the child;
the child starts its own when it needs one. At exit the control socket is closed and the zygote,
which exits when it reads end-of-file there (and dies with the harness besides), is reaped.
"""

from __future__ import annotations

import atexit
import json
import os
import queue
import socket
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any, TypedDict

__all__ = ["LEAN_PRELOAD", "PRELOAD", "ZYGOTE_SCRIPT", "Zygote", "ZygoteError", "names_scipy", "preload_for", "zygote",
           "zygote_pids", "zygote_versions"]

ZYGOTE_SCRIPT = str(Path(__file__).with_name("_runner.py"))
#: Modules the zygote imports once (a law or interpreter child finds them loaded): NumPy and the
#: SciPy modules analysis code uses most (the interpreter's preload list) with ``scipy.special``.
PRELOAD: tuple[str, ...] = (
    "numpy", "scipy", "scipy.special", "scipy.optimize", "scipy.stats", "scipy.integrate", "scipy.linalg",
    "scipy.interpolate", "scipy.constants",
)
#: Modules of the second, lean zygote, which forks the jobs whose text does not name SciPy (the
#: offline agent's analyses and laws, most submissions). A fork copies the parent's page tables and
#: memory maps: with SciPy loaded that is about 830 maps and 60 MB of private memory, and a fork with
#: its exit costs about 4 ms; with NumPy alone, 150 maps, 20 MB and about 1 ms. The children of both
#: zygotes isolate themselves the same way; a lean child that imports SciPy after all (by a name the
#: text does not spell) imports it itself, slower, with the same layers.
LEAN_PRELOAD: tuple[str, ...] = ("numpy", "numpy.random")
#: Seconds a zygote may take to import its modules and say hello (SciPy on a loaded 2-core machine).
START_S = 120.0
#: Seconds a zygote may take to answer a fork request before it is taken for hung and replaced.
ANSWER_S = 30.0


class ZygoteError(RuntimeError):
    """The zygote could not be started, or died, refused or stopped answering (an infrastructure
    failure of the sandbox, never caused by a job)."""


def _clean_env() -> dict:
    """The zygote's whole environment (a child adds its own ``HOME``/``TMPDIR``)."""
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": "/nonexistent",
        "TMPDIR": "/nonexistent",
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
    }


# -- one long-lived thread starts every zygote (PR_SET_PDEATHSIG fires when the *thread* that forked
# -- a process ends, so a trial thread that started it must not be that thread) ----------------------
_starter: tuple[int, queue.SimpleQueue] | None = None
_starter_lock = threading.Lock()


class _StartBox(TypedDict, total=False):
    """One start request handed to the starter thread, and what it hands back."""

    kwargs: dict[str, Any]
    done: threading.Event
    proc: subprocess.Popen
    error: BaseException


def _starter_loop(q: queue.SimpleQueue) -> None:
    while True:
        box: _StartBox = q.get()
        try:
            box["proc"] = subprocess.Popen(**box["kwargs"])
        except BaseException as exc:  # noqa: BLE001 - handed to the caller
            box["error"] = exc
        finally:
            box["done"].set()


def popen_child(**kwargs) -> subprocess.Popen:
    """Start ``subprocess.Popen(**kwargs)`` from the one long-lived starter thread and return the process.

    Starting every helper process from that thread keeps its ``PR_SET_PDEATHSIG`` tied to a thread that
    lives as long as this process (not to the calling trial thread). A fork done after a start gets a
    starter of its own.

    Raises:
        ZygoteError: The starter did not answer within ``START_S`` seconds.
        Exception: Whatever ``Popen`` raised, re-raised here.
    """
    global _starter
    with _starter_lock:
        if _starter is None or _starter[0] != os.getpid():
            q: queue.SimpleQueue = queue.SimpleQueue()
            threading.Thread(target=_starter_loop, args=(q,), name="etc-sandbox-zygote-starter", daemon=True).start()
            _starter = (os.getpid(), q)
        q = _starter[1]
    box: _StartBox = {"kwargs": kwargs, "done": threading.Event()}
    q.put(box)
    if not box["done"].wait(START_S):  # the starter is stuck (in fork or exec): fail, do not wait on it
        raise ZygoteError(f"no helper process could be started within {START_S:g} s")
    if "error" in box:
        raise box["error"]
    return box["proc"]


class Zygote:
    """One zygote process and its control socket; thread-safe.

    Args:
        preload: Modules the zygote imports.
        extra: More settings for the zygote (tests: ``{"test_thread": True}`` makes a zygote that
            is not single-threaded).
    """

    def __init__(self, preload=PRELOAD, extra: dict | None = None) -> None:
        self.preload = tuple(preload)
        self.extra = dict(extra or {})
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._owner = os.getpid()
        self.hello: dict = {}
        self.starts = 0

    # -- lifetime -----------------------------------------------------------------------------
    def _forget_if_forked(self) -> None:
        if self._owner != os.getpid():  # inherited through fork: the zygote is the parent's
            if self._sock is not None:
                self._sock.close()  # only this copy: the parent's connection stays open
            self._sock, self._proc, self.hello, self._owner = None, None, {}, os.getpid()
            self._lock = threading.Lock()

    def _alive(self) -> bool:
        return self._proc is not None and self._proc.poll() is None and self._sock is not None

    def _start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        from etc_fast.sandbox._imports import CODE_READ, LAW_IMPORTS

        cfg = {"ppid": os.getpid(), "preload": list(self.preload), "package_sets": [list(LAW_IMPORTS), list(CODE_READ)],
               **self.extra}
        try:
            proc = popen_child(
                args=[sys.executable, "-I", ZYGOTE_SCRIPT, str(theirs.fileno()), json.dumps(cfg)],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                cwd="/", env=_clean_env(), pass_fds=(theirs.fileno(),), start_new_session=True, close_fds=True,
            )
        except BaseException:
            ours.close()
            theirs.close()
            raise
        theirs.close()
        ours.settimeout(START_S)
        try:
            msg = ours.recv(1 << 16)
        except OSError:
            msg = b""
        hello: dict[str, Any]
        try:
            hello = json.loads(msg) if msg else {"error": f"zygote exited (code {proc.poll()}) before it was ready"}
        except ValueError:
            hello = {"error": "zygote sent a malformed greeting"}
        if "hello" not in hello:
            reap_child(proc)
            ours.close()
            raise ZygoteError(f"sandbox zygote could not start: {hello.get('error')}")
        ours.settimeout(ANSWER_S)  # a zygote that stops reading its control socket fails the send
        self._proc, self._sock, self.hello = proc, ours, hello["hello"]
        self.starts += 1

    def _ensure(self) -> socket.socket:
        with self._lock:
            self._forget_if_forked()
            if not self._alive():
                self._stop_locked()
                self._start()
            assert self._sock is not None
            return self._sock

    def prestart(self) -> None:
        """Start the zygote in the background (its imports overlap whatever the caller does next);
        a failure here is only retried by the next request."""

        def go() -> None:
            try:
                self._ensure()
            except Exception:  # noqa: BLE001,S110 - the first job reports it
                pass

        threading.Thread(target=go, name="etc-sandbox-zygote-prestart", daemon=True).start()

    @property
    def pid(self) -> int | None:
        """The zygote's pid (``None`` before it is started or after it stopped)."""
        self._forget_if_forked()
        return self._proc.pid if self._alive() else None

    def versions(self) -> dict:
        """What the zygote runs (Python, NumPy, SciPy, the preloaded modules); starts it if needed."""
        self._ensure()
        return {k: v for k, v in self.hello.items() if k not in ("pid", "threads")}

    def replace(self, proc: subprocess.Popen | None = None) -> None:
        """Kill the zygote (if it is still ``proc``, when given); the next request starts a new one."""
        with self._lock:
            self._forget_if_forked()
            if proc is None or proc is self._proc:
                self._stop_locked()

    def _stop_locked(self) -> None:
        sock, proc = self._sock, self._proc
        self._sock, self._proc = None, None
        if sock is not None:
            sock.close()  # the zygote reads end-of-file, kills its children and exits
        if proc is not None:
            reap_child(proc, grace=2.0)

    def close(self) -> None:
        with self._lock:
            if self._owner == os.getpid():
                self._stop_locked()

    # -- requests ---------------------------------------------------------------------------------
    def fork(self, box: dict, fds: list[int]) -> tuple[socket.socket, subprocess.Popen]:
        """Ask for one child with ``fds`` (job, reply, stdout, stderr); returns the job's status
        socket (the zygote sends ``{"pid"}`` then ``{"exit", "cpu_s"}``, or ``{"refused"}``; sending
        ``kill`` or closing it kills the child) and the zygote process that got the request.

        Raises:
            ZygoteError: no zygote could be started or reached.
        """
        sock = self._ensure()
        proc = self._proc
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            socket.send_fds(sock, [json.dumps(box).encode()], [theirs.fileno(), *fds])
        except OSError as exc:
            ours.close()
            self.replace(proc)
            raise ZygoteError(f"sandbox zygote unreachable: {exc}") from None
        finally:
            theirs.close()
        assert proc is not None
        return ours, proc


def reap_child(proc: subprocess.Popen, grace: float = 0.0) -> None:
    """End ``proc`` and collect it: wait up to ``grace`` seconds for it to exit on its own, then SIGKILL its
    process group and the process itself, and wait for it (at most 5 s more).
    """
    if grace:
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            pass
    try:
        os.killpg(proc.pid, 9)  # its session: the zygote and any child it still has
    except OSError:
        pass
    try:
        proc.kill()
    except OSError:
        pass
    try:
        proc.wait(timeout=5)
    except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
        pass


_ZYGOTES: dict[tuple[str, ...], Zygote] = {}
_ZYGOTE_LOCK = threading.Lock()


def zygote(preload: tuple[str, ...] = PRELOAD) -> Zygote:
    """This process's zygote for ``preload`` (created on first use; not started until a job needs it)."""
    with _ZYGOTE_LOCK:
        z = _ZYGOTES.get(preload)
        if z is None:
            z = _ZYGOTES[preload] = Zygote(preload)
        return z


def names_scipy(text: str) -> bool:
    """Whether a job's text (a law's source, an analysis's code) names SciPy: such a job is forked
    by the full zygote, and an analysis gets SciPy's modules loaded before its code runs."""
    return "scipy" in text


def preload_for(job: dict) -> tuple[str, ...]:
    """The zygote a job is forked from: the full one when the job's text names SciPy
    (:func:`names_scipy`) or is not text, else the lean one. A choice of speed only: both children
    run under the same layers."""
    text = job.get("source") if job.get("kind") == "law" else job.get("code")
    return PRELOAD if not isinstance(text, str) or names_scipy(text) else LEAN_PRELOAD


def zygote_pids() -> set[int]:
    """Pids of this process's live zygotes."""
    with _ZYGOTE_LOCK:
        zs = list(_ZYGOTES.values())
    return {pid for z in zs if (pid := z.pid) is not None}


def zygote_versions() -> dict:
    """Versions of this process's zygote, for ``versions.json`` (starts it if needed)."""
    z = zygote()
    return {**z.versions(), "lean_preloaded": list(LEAN_PRELOAD), "script": "etc_fast/sandbox/_runner.py"}


def _at_exit() -> None:
    for z in list(_ZYGOTES.values()):
        z.close()


def _after_fork_in_child() -> None:
    global _ZYGOTE_LOCK, _starter_lock
    _ZYGOTE_LOCK = threading.Lock()
    _starter_lock = threading.Lock()
    for z in _ZYGOTES.values():
        z._forget_if_forked()


atexit.register(_at_exit)
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)
