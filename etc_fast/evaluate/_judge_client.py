"""The structural judge's algebra in a killable process, the harness side: a judge server per
harness process, one forked child per verdict, killed at the deadline.

The judge never executes a submission, but the sympy algebra on an untrusted expression can stall
inside a C call that no alarm in the harness interrupts. So :class:`StructuralJudge` hands each
verdict to this module:

* the **judge server** is ``python -m etc_fast.evaluate._judge_worker CONTROL_FD``
  (:mod:`etc_fast.evaluate._judge_worker`; this module is the harness side), started by exec
  (from the same long-lived starter thread as the sandbox zygote, so its ``PR_SET_PDEATHSIG`` holds)
  with a fixed environment that has no API key. It imports sympy and the judge once and keeps
  their caches (the truth of each task, built from the task's own text, is trusted work).
* per verdict the harness passes one stream socket by ``SCM_RIGHTS`` and writes the request on it
  (judge options, submission, the task with its truth on the judge's grid as a table, since a
  task's truth function does not pickle). The server reads it, builds (or finds) the truth, forks a
  child that runs the algebra on the submission and writes the verdict back on the socket, and
  kills that child when the harness closes its end (the deadline) or the harness goes away.

A deadline gives a verdict ``credited=False`` naming the limit; a server that died or would not
start is replaced once, then the verdict says the judge failed. Nothing here ever raises for a
submission.
"""

from __future__ import annotations

import dataclasses
import os
import pickle
import socket
import struct
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["JudgeServer", "judge_in_worker", "judge_server", "reached", "verdict_in_worker"]

_HEADER = struct.Struct("!Q")
#: Seconds a judge server may take to import sympy and say it is ready.
START_S = 120.0
#: Seconds a judge server may take to take a request (read it, build the task's truth, fork the
#: verdict's child) and say so; one that does not is taken for hung, replaced, and asked again.
ACCEPT_S = 30.0


@dataclasses.dataclass(frozen=True)
class _Tabled:
    """A task's truth on one grid, as a picklable table (the judge evaluates the truth only there)."""

    X: np.ndarray
    y: np.ndarray

    def __call__(self, X: np.ndarray) -> np.ndarray:
        X = np.asarray(X, dtype=np.float64)
        if X.shape != self.X.shape or not np.array_equal(X, self.X):
            raise ValueError("the judge worker has the task's truth only on its grid")
        return self.y.copy()


def _send_frame(sock: socket.socket, obj: Any) -> None:
    data = pickle.dumps(obj, protocol=pickle.HIGHEST_PROTOCOL)
    sock.sendall(_HEADER.pack(len(data)) + data)


def _recv_exact(sock: socket.socket, n: int) -> bytes | None:
    buf = bytearray()
    while len(buf) < n:
        chunk = sock.recv(min(1 << 20, n - len(buf)))
        if not chunk:
            return None
        buf += chunk
    return bytes(buf)


def _recv_frame(sock: socket.socket) -> Any:
    head = _recv_exact(sock, _HEADER.size)
    if head is None:
        raise EOFError("connection closed")
    body = _recv_exact(sock, _HEADER.unpack(head)[0])
    if body is None:
        raise EOFError("connection closed")
    return pickle.loads(body)  # noqa: S301 - frames come from this package's own processes only


def _env() -> dict:
    root = str(Path(__file__).resolve().parents[2])
    return {
        "PATH": "/usr/bin:/bin", "LANG": "C.UTF-8", "LC_ALL": "C.UTF-8", "HOME": "/nonexistent",
        "PYTHONPATH": root, "PYTHONHASHSEED": "0", "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1", "NUMBA_NUM_THREADS": "1",
    }


# ------------------------------------------------------------------------------------------------
# harness side
# ------------------------------------------------------------------------------------------------
class JudgeServer:
    """One judge server process; thread-safe, restarted when it has died."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._proc: subprocess.Popen | None = None
        self._sock: socket.socket | None = None
        self._owner = os.getpid()
        self.starts = 0

    @property
    def pid(self) -> int | None:
        self._forget_if_forked()
        return self._proc.pid if self._proc is not None and self._proc.poll() is None else None

    def _forget_if_forked(self) -> None:
        if self._owner != os.getpid():
            if self._sock is not None:
                self._sock.close()
            self._sock, self._proc, self._owner = None, None, os.getpid()
            self._lock = threading.Lock()

    def _start(self) -> None:
        from etc_fast.sandbox import popen_child

        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            proc = popen_child(
                args=[sys.executable, "-m", "etc_fast.evaluate._judge_worker", str(theirs.fileno()), str(os.getpid())],
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, cwd="/",
                env=_env(), pass_fds=(theirs.fileno(),), start_new_session=True, close_fds=True,
            )
        except BaseException:
            ours.close()
            raise
        finally:
            theirs.close()
        ours.settimeout(START_S)
        try:
            hello = ours.recv(64)
        except OSError:
            hello = b""
        if hello != b"ready":
            ours.close()
            _stop(proc)
            raise RuntimeError(f"the judge server did not start (exit code {proc.poll()})")
        ours.settimeout(ACCEPT_S)  # a server that stops reading its control socket fails the send
        self._proc, self._sock = proc, ours
        self.starts += 1

    def _ensure(self) -> tuple[socket.socket, subprocess.Popen]:
        with self._lock:
            self._forget_if_forked()
            if self._proc is None or self._proc.poll() is not None or self._sock is None:
                self._stop_locked()
                self._start()
            assert self._sock is not None and self._proc is not None
            return self._sock, self._proc

    def prestart(self) -> None:
        """Start the server in the background (a failure is retried by the first verdict)."""

        def go() -> None:
            try:
                self._ensure()
            except Exception:  # noqa: BLE001,S110 - the first verdict reports it
                pass

        threading.Thread(target=go, name="etc-judge-server-prestart", daemon=True).start()

    def connect(self) -> tuple[socket.socket, subprocess.Popen]:
        """A fresh stream socket to a new judge child's request slot, and the server it went to."""
        sock, proc = self._ensure()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            socket.send_fds(sock, [b"judge"], [theirs.fileno()])
        except OSError:
            ours.close()
            self.replace(proc)
            raise
        finally:
            theirs.close()
        return ours, proc

    def replace(self, proc: subprocess.Popen | None = None) -> None:
        with self._lock:
            self._forget_if_forked()
            if proc is None or proc is self._proc:
                self._stop_locked()

    def _stop_locked(self) -> None:
        sock, proc = self._sock, self._proc
        self._sock, self._proc = None, None
        if sock is not None:
            sock.close()
        if proc is not None:
            _stop(proc)

    def close(self) -> None:
        with self._lock:
            if self._owner == os.getpid():
                self._stop_locked()


def _stop(proc: subprocess.Popen) -> None:
    from etc_fast.sandbox import reap_child

    reap_child(proc, grace=2.0)


_SERVER: JudgeServer | None = None
_SERVER_LOCK = threading.Lock()


def judge_server() -> JudgeServer:
    """This process's judge server (started when the first verdict needs it)."""
    global _SERVER
    with _SERVER_LOCK:
        if _SERVER is None:
            _SERVER = JudgeServer()
        return _SERVER


#: Why a judge child gave no verdict (:data:`etc_fast.errors.ERROR_KINDS`): past its deadline, or
#: its process or server failed.
TIME_LIMIT, FAILED = "judge_time_limit", "judge_failed"


def judge_in_worker(options: dict, source: str, task: Any, grid: np.ndarray | None, timeout_s: float):
    """The structural judge's verdict on ``source``, computed in a judge child killed after ``timeout_s``.

    Returns a :class:`etc_fast.evaluate.Verdict`.

    Raises:
        etc_fast.errors.InfrastructureError: no verdict was reached (kind ``judge_time_limit`` or
            ``judge_failed``); a deadline or a failure of the machinery is never a verdict.
    """
    return reached(*verdict_in_worker(options, source, task, grid, timeout_s))


def reached(verdict: Any, failure: str | None) -> Any:
    """``verdict`` when the judge child reached it (``failure`` is ``None``), else the
    :class:`~etc_fast.errors.InfrastructureError` of ``failure`` (:func:`verdict_in_worker`)."""
    if failure is not None:
        from etc_fast.errors import InfrastructureError

        raise InfrastructureError(verdict.reason, kind=failure)
    return verdict


def _stopped(timeout_s: float) -> Any:
    """The reason-only verdict of a judge child past its deadline."""
    from etc_fast.errors import JUDGE_STOPPED
    from etc_fast.evaluate._judge import Verdict

    return Verdict("structural", False, f"{JUDGE_STOPPED} {timeout_s:g} s")


def verdict_in_worker(options: dict, source: str, task: Any, grid: np.ndarray | None, timeout_s: float):
    """``(verdict, failure)``: as :func:`judge_in_worker`, without raising. ``failure`` is ``None``
    for a verdict reached, else :data:`TIME_LIMIT` or :data:`FAILED`: the verdict then only says why
    there is none, and must be neither remembered nor recorded as a verdict."""
    from etc_fast.evaluate._judge import Verdict
    from etc_fast.sampling import evaluation_grid

    try:
        X = np.ascontiguousarray(grid if grid is not None else evaluation_grid(task), dtype=np.float64)
        portable = dataclasses.replace(task, truth_fn=_Tabled(X, np.asarray(task.truth(X), dtype=np.float64)),
                                       request_transform=None)
    except Exception as exc:  # noqa: BLE001 - as the in-process judge: a task that fails is a verdict
        return Verdict("structural", False, f"structural judge failed: {type(exc).__name__}: {exc}"), None
    request = {"options": dict(options), "grid": None if grid is None else X, "source": source, "task": portable}
    why = ""
    for _ in range(2):
        server = judge_server()
        try:
            sock, proc = server.connect()
        except (OSError, RuntimeError) as exc:
            why = str(exc)
            continue
        try:
            # the server first says it took the request (it forked the verdict's child): a server
            # that does not within ACCEPT_S is stuck, and every later verdict would wait on it too
            sock.settimeout(ACCEPT_S)
            try:
                _send_frame(sock, request)
                reply = _recv_frame(sock)
            except (EOFError, OSError, pickle.UnpicklingError) as exc:
                server.replace(proc)
                why = (f"the judge server did not take the request within {ACCEPT_S:g} s"
                       if isinstance(exc, TimeoutError) else f"the judge server failed ({exc})")
                continue
            if isinstance(reply, dict) and "accepted" in reply:
                sock.settimeout(timeout_s)
                start = time.monotonic()
                try:
                    reply = _recv_frame(sock)
                except TimeoutError:
                    return _stopped(timeout_s), TIME_LIMIT
                except (EOFError, OSError, pickle.UnpicklingError) as exc:
                    if time.monotonic() - start >= timeout_s:
                        return _stopped(timeout_s), TIME_LIMIT
                    if proc.poll() is not None:  # the server itself went: a new one gets the request
                        server.replace(proc)
                        why = "the judge server died"
                        continue
                    return (Verdict("structural", False,
                                    f"structural judge failed: its process ended ({exc or 'no reply'})"), FAILED)
        finally:
            sock.close()  # a child still running is killed by the server
        if isinstance(reply, dict) and "verdict" in reply:
            v = reply["verdict"]
            return Verdict(str(v[0]), bool(v[1]), str(v[2])), None
        return (Verdict("structural", False,
                        f"structural judge failed: {reply.get('error') if isinstance(reply, dict) else reply}"), FAILED)
    return Verdict("structural", False, f"structural judge failed: {why}"), FAILED


def _after_fork_in_child() -> None:
    global _SERVER_LOCK
    _SERVER_LOCK = threading.Lock()
    if _SERVER is not None:
        _SERVER._forget_if_forked()


def _at_exit() -> None:
    if _SERVER is not None:
        _SERVER.close()


import atexit  # noqa: E402 - registered once the module's names exist

atexit.register(_at_exit)
os.register_at_fork(after_in_child=_after_fork_in_child)
