"""The judge server: ``python -m etc_fast.evaluate._judge_worker CONTROL_FD PPID``.

It serves the verdicts that :mod:`etc_fast.evaluate._judge_client` (the harness side, re-exported
here) asks for: one forked child per verdict, killed when the harness closes its end. The harness
side lives apart so that :mod:`etc_fast.evaluate._structural`, which hands verdicts to the server,
and this server, which runs the structural judge, import one way.
"""

from __future__ import annotations

import os
import select
import signal
import socket
import sys

from etc_fast.evaluate._judge_client import (
    START_S,
    JudgeServer,
    _recv_frame,
    _send_frame,
    judge_in_worker,
    judge_server,
    verdict_in_worker,
)

__all__ = ["START_S", "JudgeServer", "judge_in_worker", "judge_server", "verdict_in_worker"]


def _serve(ctl: socket.socket, ppid: int) -> None:
    import ctypes
    import gc

    ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
    if os.getppid() != ppid:
        os._exit(71)
    from etc_fast.evaluate._structural import StructuralJudge

    judges: dict = {}
    ctl.send(b"ready")
    poller = select.poll()
    poller.register(ctl.fileno(), select.POLLIN)
    children: dict = {}  # pidfd -> (pid, conn)
    by_conn: dict = {}  # conn fd -> pidfd

    def kill(pidfd: int) -> None:
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except OSError:
            pass

    while True:
        for fd, _ in poller.poll():
            if fd == ctl.fileno():
                try:
                    msg, fds, _, _ = socket.recv_fds(ctl, 64, 1)
                except OSError:
                    msg, fds = b"", []
                if not msg and not fds:  # the harness is gone
                    for pidfd in children:
                        kill(pidfd)
                    os._exit(0)
                for extra in fds[1:]:
                    os.close(extra)
                if not fds:
                    continue
                conn = socket.socket(fileno=fds[0])
                try:
                    conn.settimeout(30.0)
                    req = _recv_frame(conn)
                    conn.settimeout(None)
                    key = repr(sorted((k, v) for k, v in req["options"].items()))
                    if req.get("grid") is not None:
                        key += repr(req["grid"].tobytes())
                    judge = judges.get(key)
                    if judge is None:
                        judge = judges[key] = StructuralJudge(**req["options"], grid=req.get("grid"), timeout_s=None)
                    try:
                        judge._truth(req["task"])  # trusted: the task's own text; cached across verdicts
                    except Exception:  # noqa: BLE001,S110 - the child reports it as the judge would
                        pass
                except Exception as exc:  # noqa: BLE001 - a broken request: say so, take the next
                    try:
                        _send_frame(conn, {"error": f"{type(exc).__name__}: {exc}"})
                    except OSError:
                        pass
                    conn.close()
                    continue
                try:
                    conn.settimeout(30.0)
                    _send_frame(conn, {"accepted": True})  # before the fork: the verdict comes after it
                    conn.settimeout(None)
                except OSError:
                    conn.close()
                    continue
                gc.freeze()  # what the server holds now stays out of the child's collections (no copy-on-write)
                pid = os.fork()
                if pid == 0:
                    code = 0
                    try:
                        os.setsid()
                        ctl.close()
                        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL), 0, 0, 0)
                        v = judge.judge(req["source"], req["task"])
                        _send_frame(conn, {"verdict": (v.judge, v.credited, v.reason)})
                    except BaseException:  # noqa: BLE001 - the harness reads a closed socket
                        code = 70
                    os._exit(code)
                pidfd = os.pidfd_open(pid)
                children[pidfd] = (pid, conn)
                by_conn[conn.fileno()] = pidfd
                poller.register(pidfd, select.POLLIN)
                poller.register(conn.fileno(), select.POLLIN)
            elif fd in children:
                pid, conn = children.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                try:
                    os.waitpid(pid, 0)
                except ChildProcessError:  # pragma: no cover
                    pass
                if by_conn.pop(conn.fileno(), None) is not None:
                    poller.unregister(conn.fileno())
                conn.close()
            elif fd in by_conn:  # the harness closed its end (deadline) while the child computes
                pidfd = by_conn.pop(fd)
                poller.unregister(fd)
                kill(pidfd)


if __name__ == "__main__":
    _serve(socket.socket(fileno=int(sys.argv[1])), int(sys.argv[2]))
