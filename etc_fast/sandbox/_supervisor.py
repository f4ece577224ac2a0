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

__all__ = ["RUNNER", "RawRun", "clean_text", "encode_data", "isolation_settings", "run_job"]

RUNNER = str(Path(__file__).with_name("_runner.py"))
#: Bytes of the result frame read from the runner; a 5,000-point law reply is ~70 KB.
_MAX_RESULT = 8 * 1024 * 1024
#: Characters of an error message kept.
ERROR_CHARS = 2048
#: Environment variables read by every sandbox call (set by the run/replay front ends, inherited by
#: their worker processes): refuse to run without every layer; the uid/gid of the sandbox when root.
ENV_REQUIRE = "ETC_SANDBOX_REQUIRE_ISOLATION"
ENV_UID = "ETC_SANDBOX_UID"
ENV_GID = "ETC_SANDBOX_GID"
_warned = False
_CONTROL = {c: f"\\x{c:02x}" for c in [*range(0x00, 0x20), 0x7F, *range(0x80, 0xA0)] if c not in (0x09, 0x0A)}


def clean_text(text: str, limit: int | None = None, *, newlines: bool = True) -> str:
    """``text`` clipped to ``limit`` characters with control characters (terminal escapes included)
    written as ``\\xNN``; tabs, and newlines when ``newlines``, are kept."""
    if limit is not None and len(text) > limit:
        text = text[:limit] + f"... [{len(text) - limit} more characters]"
    table = _CONTROL if newlines else {**_CONTROL, 0x0A: "\\n"}
    return text.translate(table)


def isolation_settings() -> dict:
    """The sandbox identity and the isolation requirement, from the environment."""
    def _id(name):
        v = os.environ.get(name, "65534")
        try:
            return int(v)
        except ValueError:
            raise ValueError(f"{name} must be a numeric id, got {v!r}") from None

    return {"uid": _id(ENV_UID), "gid": _id(ENV_GID), "require": os.environ.get(ENV_REQUIRE, "") not in ("", "0")}


def _warn_layers(layers: dict) -> None:
    global _warned
    if _warned or not layers:
        return
    from etc_fast.sandbox._isolate import LAYERS

    missing = [n for n in LAYERS if not layers.get(n)]
    if missing:
        _warned = True
        note = f" ({clean_text(str(layers['notes']), 300, newlines=False)})" if layers.get("notes") else ""
        print(f"etc_fast.sandbox: warning: running without isolation layers: {', '.join(missing)}{note}",
              file=sys.stderr, flush=True)


def _dir_usage(path: str, max_files: int) -> tuple[int, int]:
    """(bytes, entries) beneath ``path``; stops counting past ``max_files`` entries."""
    total, count = 0, 0
    stack = [path]
    while stack and count <= max_files:
        try:
            with os.scandir(stack.pop()) as it:
                for e in it:
                    count += 1
                    try:
                        if e.is_dir(follow_symlinks=False):
                            stack.append(e.path)
                        else:
                            total += e.stat(follow_symlinks=False).st_blocks * 512
                    except OSError:
                        pass
        except OSError:
            pass
    return total, count


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
        layers: Isolation layers that were active (``{layer: description or False}``), as reported
            by the runner before any untrusted code ran; empty when unknown.
    """

    ok: bool
    error: str | None
    reply: dict | None
    stdout: str
    stderr: str
    truncated: bool
    wall_s: float
    layers: dict = dataclasses.field(default_factory=dict)


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
    settings = isolation_settings()
    box = dict(settings, ppid=os.getpid(), disk_bytes=limits.disk_bytes, disk_files=limits.disk_files)
    res_r, res_w = os.pipe()
    try:
        proc = subprocess.Popen(
            [sys.executable, "-I", RUNNER, str(res_w), json.dumps(box)],
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
    next_disk_check = start + 0.2
    try:
        while sel.get_map():
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0:
                error = f"timed out after {limits.wall_s:g} s"
                break
            if now >= next_disk_check:  # the quota where no tmpfs holds the directory
                used, files = _dir_usage(workdir, limits.disk_files)
                if used > limits.disk_bytes or files > limits.disk_files:
                    error = (f"disk quota exceeded ({used} bytes in {files} files; "
                             f"{limits.disk_bytes} bytes, {limits.disk_files} files allowed)")
                    break
                next_disk_check = now + 0.2
            for key, _ in sel.select(timeout=min(remaining, 0.2)):
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
    layers: dict = {}
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
                layers = frame.get("layers") if isinstance(frame.get("layers"), dict) else {}
                _warn_layers(layers)
                if frame.get("ok"):
                    reply = frame.get("reply")
                    ok = isinstance(reply, dict)
                    if not ok:
                        error = "the result channel was tampered with"
                else:
                    error = str(frame.get("error") or "failed without a reason")
    return RawRun(
        ok=ok,
        error=None if error is None else clean_text(error, ERROR_CHARS),
        reply=reply,
        stdout=clean_text(bytes(bufs["stdout"]).decode("utf-8", "replace")),
        stderr=clean_text(bytes(bufs["stderr"]).decode("utf-8", "replace")),
        truncated=truncated,
        wall_s=time.monotonic() - start,
        layers=layers,
    )
