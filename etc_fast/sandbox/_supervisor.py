"""Parent side of the sandbox: start the runner, feed it, watch it, kill it, read its one result."""

from __future__ import annotations

import base64
import dataclasses
import json
import os
import secrets
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from etc_fast.sandbox._limits import SandboxLimits
from etc_fast.sandbox._runner import _MAX_JOB  # the largest job the runner reads

__all__ = ["RUNNER", "RawRun", "encode_data", "run_job"]

RUNNER = str(Path(__file__).with_name("_runner.py"))
_MAX_RESULT = 256 * 1024 * 1024


@dataclasses.dataclass
class RawRun:
    """What one sandboxed job produced (internal).

    Attributes:
        ok: The worker returned a well-formed reply (the job itself may still have failed).
        error: Why there is no reply (timeout, crash, limit, tampering), else ``None``.
        reply: The worker's reply object, else ``None``.
        stdout: Captured stdout, at most ``output_bytes`` bytes, decoded leniently.
        stderr: Captured stderr, same cap.
        truncated: Output was cut at the cap.
        wall_s: Seconds the run took.
    """

    ok: bool
    error: str | None
    reply: dict | None
    stdout: str
    stderr: str
    truncated: bool
    wall_s: float


def encode_data(obj, where: str = "data"):
    """Encode numbers, strings, lists, dicts and numeric arrays as JSON for the worker."""
    if isinstance(obj, np.ndarray):
        if obj.dtype.kind not in "biuf":
            raise TypeError(f"{where}: only numeric arrays can be passed, got dtype {obj.dtype}")
        a = np.ascontiguousarray(obj)
        return {"__ndarray__": base64.b64encode(a.tobytes()).decode("ascii"), "dtype": a.dtype.str, "shape": list(a.shape)}
    if isinstance(obj, np.generic):
        return obj.item()
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    if isinstance(obj, dict):
        out = {}
        for k, v in obj.items():
            if not isinstance(k, str):
                raise TypeError(f"{where}: dictionary keys must be strings, got {k!r}")
            out[k] = encode_data(v, f"{where}[{k!r}]")
        return out
    if isinstance(obj, (list, tuple)):
        return [encode_data(v, f"{where}[{i}]") for i, v in enumerate(obj)]
    raise TypeError(f"{where}: cannot pass a {type(obj).__name__} into the sandbox")


def _clean_env(workdir: str) -> dict:
    return {
        "PATH": "/usr/bin:/bin",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "HOME": workdir,
        "TMPDIR": workdir,
        "PYTHONHASHSEED": "0",
        "PYTHONDONTWRITEBYTECODE": "1",
        "OPENBLAS_NUM_THREADS": "1",
        "OMP_NUM_THREADS": "1",
        "MKL_NUM_THREADS": "1",
        "NUMEXPR_NUM_THREADS": "1",
    }


def _killpg(pgid: int) -> None:
    try:
        os.killpg(pgid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def run_job(job: dict, limits: SandboxLimits) -> RawRun:
    """Run one job (``kind`` = ``law`` or ``code``) in a fresh sandbox and return what came back.

    Never raises because of what the job does; raises ``OSError`` only when no process can be started.
    """
    start = time.monotonic()
    token = secrets.token_hex(16).encode()
    job = dict(job, limits=limits.to_job())
    payload = token + b"\n" + json.dumps(job, allow_nan=True).encode()
    if len(payload) > _MAX_JOB:  # the runner would read a cut job and its reply could not be trusted
        what = "submission" if job.get("kind") == "law" else "analysis job (code and data)"
        return RawRun(
            ok=False, error=f"the {what} is too large: {len(payload) / 2**20:.0f} MiB to send into the sandbox "
            f"(limit {_MAX_JOB // 2**20} MiB)", reply=None, stdout="", stderr="", truncated=False,
            wall_s=time.monotonic() - start,
        )
    workdir = tempfile.mkdtemp(prefix="etc-sandbox-")
    res_r, res_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", RUNNER, str(res_w)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            cwd=workdir,
            env=_clean_env(workdir),
            pass_fds=(res_w,),
            start_new_session=True,
            close_fds=True,
        )
    except BaseException:
        os.close(res_r)
        os.close(res_w)
        shutil.rmtree(workdir, ignore_errors=True)
        raise
    os.close(res_w)
    pgid = proc.pid

    def feed() -> None:
        try:
            proc.stdin.write(payload)
        except (BrokenPipeError, OSError, ValueError):
            pass
        finally:
            try:
                proc.stdin.close()
            except (BrokenPipeError, OSError, ValueError):
                pass

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()

    cap = limits.output_bytes
    kill_at = limits.kill_output_bytes
    bufs = {"stdout": bytearray(), "stderr": bytearray()}
    total_out = 0
    truncated = False
    result = bytearray()
    error: str | None = None
    sel = selectors.DefaultSelector()
    sel.register(proc.stdout, selectors.EVENT_READ, "stdout")
    sel.register(proc.stderr, selectors.EVENT_READ, "stderr")
    res_file = os.fdopen(res_r, "rb", buffering=0)
    sel.register(res_file, selectors.EVENT_READ, "result")
    deadline = start + limits.wall_s
    try:
        while sel.get_map():
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                error = f"timed out after {limits.wall_s:g} s"
                break
            for key, _ in sel.select(timeout=min(remaining, 0.5)):
                chunk = os.read(key.fd, 1 << 16)
                if not chunk:
                    sel.unregister(key.fileobj)
                    continue
                if key.data == "result":
                    result += chunk
                    if len(result) > _MAX_RESULT:
                        error = "returned more than the allowed result size"
                        break
                    continue
                total_out += len(chunk)
                buf = bufs[key.data]
                room = cap - len(buf)
                if room > 0:
                    buf += chunk[:room]
                if len(chunk) > room:
                    truncated = True
                if total_out > kill_at:
                    error = f"output limit exceeded ({total_out} bytes written, {cap} kept)"
                    break
            if error:
                break
    finally:
        _killpg(pgid)
        sel.close()
        for f in (res_file, proc.stdout, proc.stderr):
            try:
                f.close()
            except OSError:
                pass
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:  # pragma: no cover - SIGKILL was sent
            proc.kill()
            proc.wait()
        feeder.join(timeout=1)
        shutil.rmtree(workdir, ignore_errors=True)

    reply = None
    ok = False
    if error is None:
        head, sep, body = bytes(result).partition(b"\n")
        if not result:
            error = f"sandbox runner exited with code {proc.returncode} without a result"
        elif not sep or not secrets.compare_digest(head, token):
            error = "the result channel was tampered with"
        else:
            try:
                frame = json.loads(body)
            except ValueError:
                error = "the result channel was tampered with"
            else:
                if frame.get("ok"):
                    reply = frame.get("reply")
                    ok = isinstance(reply, dict)
                    if not ok:
                        error = "the result channel was tampered with"
                else:
                    error = str(frame.get("error") or "failed without a reason")
    return RawRun(
        ok=ok,
        error=error,
        reply=reply,
        stdout=bytes(bufs["stdout"]).decode("utf-8", "replace"),
        stderr=bytes(bufs["stderr"]).decode("utf-8", "replace"),
        truncated=truncated,
        wall_s=time.monotonic() - start,
    )
