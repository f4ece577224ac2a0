"""Parent side of the sandbox: have the zygote fork a child for a job, feed it, watch it, kill it, read its reply."""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import json
import os
import selectors
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from etc_fast._lru import LRU
from etc_fast.sandbox._limits import SandboxLimits
from etc_fast.sandbox._runner import (  # limits the child applies too
    _MAX_JOB,
    _MAX_REPLY,
    _describe_exit,
    _write_all,
)
from etc_fast.sandbox._zygote import ANSWER_S, Zygote, ZygoteError, preload_for, zygote

__all__ = ["RUNNER", "RawRun", "clean_text", "encode_data", "isolation_settings", "run_job"]

#: The script of the zygote and of its children (their command line names it).
RUNNER = str(Path(__file__).with_name("_runner.py"))
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
            by the child before any untrusted code ran; empty when unknown.
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


#: Seconds the supervisor waits for the zygote's exit report after it asked for a kill.
_KILL_WAIT_S = 5.0


class _Retry(Exception):
    """The zygote died, refused or stopped answering before the job's child ran: try a new zygote."""


def _close(*fds: int) -> None:
    for fd in fds:
        try:
            os.close(fd)
        except OSError:
            pass


#: Successful runs kept for ``run_job(..., reuse=True)``, by the SHA-256 of the job's whole text
#: (code or law, data, limits, allowed imports): at most this many, the oldest dropped first.
REUSE_SIZE = 256
_REUSED: LRU[str, RawRun] = LRU(REUSE_SIZE)


def run_job(job: dict, limits: SandboxLimits, *, reuse: bool = False) -> RawRun:
    """Run one job (``kind`` = ``law`` or ``code``) in a fresh child of this process's zygote.

    With ``reuse``, a job whose text (code, data, limits) equals one that already completed in this
    process with a reply of ``ok`` returns that run again instead of running (:data:`REUSE_SIZE`
    runs are kept). For the callers whose job is a function of its text: a replay of a law on a
    grid, an analysis of records. A run that failed, hit a limit or met a broken sandbox is never
    kept, so it runs again. A job that draws random numbers gets the first run's draws, which are
    as valid a draw as a new run's; what it would print about time or process ids is that run's.

    Never raises because of what the job does; raises ``OSError`` only when no process can be started.
    """
    start = time.monotonic()
    job = dict(job, limits=limits.to_job())
    payload = json.dumps(job, allow_nan=True).encode()
    settings = isolation_settings()
    if reuse:  # the sandbox's identity and isolation requirement are part of what ran
        key = hashlib.sha256(payload + json.dumps(settings, sort_keys=True).encode()).hexdigest()
        hit = _REUSED.get(key)
        if hit is not None:
            return hit
        run = _run_payload(job, payload, settings, limits, start)
        if run.ok and run.reply is not None and run.reply.get("ok") is True:
            _REUSED.put(key, run)
        return run
    return _run_payload(job, payload, settings, limits, start)


def _run_payload(job: dict, payload: bytes, settings: dict, limits: SandboxLimits, start: float) -> RawRun:
    if len(payload) > _MAX_JOB:  # the child would read a cut job and its reply could not be trusted
        what = "submission" if job.get("kind") == "law" else "analysis job (code and data)"
        return RawRun(
            ok=False, error=f"the {what} is too large: {len(payload) / 2**20:.0f} MiB to send into the sandbox "
            f"(limit {_MAX_JOB // 2**20} MiB)", reply=None, stdout="", stderr="", truncated=False,
            wall_s=time.monotonic() - start,
        )
    zyg = zygote(preload_for(job))
    why = ""
    for _ in range(2):  # a zygote that failed before the job ran is replaced once
        workdir = tempfile.mkdtemp(prefix="etc-sandbox-")
        try:
            return _attempt(zyg, payload, workdir, settings, limits, start)
        except _Retry as exc:
            why = str(exc)
        except ZygoteError as exc:
            why = str(exc)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
    return RawRun(ok=False, error=clean_text(f"sandbox unavailable: {why}", ERROR_CHARS), reply=None, stdout="",
                  stderr="", truncated=False, wall_s=time.monotonic() - start)


def _attempt(zyg: Zygote, payload: bytes, workdir: str, settings: dict, limits: SandboxLimits,
             start: float) -> RawRun:
    box = dict(settings, workdir=workdir, disk_bytes=limits.disk_bytes, disk_files=limits.disk_files)
    job_r, job_w = os.pipe()
    rep_r, rep_w = os.pipe()
    out_r, out_w = os.pipe()
    err_r, err_w = os.pipe()
    try:
        status, zproc = zyg.fork(box, [job_r, rep_w, out_w, err_w])
    except BaseException:
        _close(job_w, rep_r, out_r, err_r)
        raise
    finally:
        _close(job_r, rep_w, out_w, err_w)  # only the child holds these now

    def feed() -> None:
        try:
            _write_all(job_w, payload)
        except OSError:
            pass
        finally:
            _close(job_w)

    feeder = threading.Thread(target=feed, daemon=True)
    feeder.start()

    cap = limits.output_bytes
    kill_at = limits.kill_output_bytes
    bufs = {out_r: bytearray(), err_r: bytearray()}
    total_out = 0
    truncated = False
    reply_bytes = bytearray()
    error: str | None = None
    pid: int | None = None
    exit_info: dict | None = None
    sel = selectors.DefaultSelector()
    for fd in (out_r, err_r, rep_r):
        sel.register(fd, selectors.EVENT_READ)
    sel.register(status, selectors.EVENT_READ)
    deadline = time.monotonic() + limits.wall_s  # reset when the child exists: its run is what is limited
    answer_by = time.monotonic() + ANSWER_S
    next_disk_check = time.monotonic() + 0.2
    retry: str | None = None
    complete = False
    try:
        while sel.get_map():
            if pid is not None and len(sel.get_map()) == 1 and exit_info is None and b"\n" in reply_bytes \
                    and reply_bytes.partition(b"\n")[2]:
                complete = True  # every pipe closed after a reply: the child is only exiting now
                break
            now = time.monotonic()
            if pid is None and now > answer_by:
                retry = f"the sandbox zygote did not answer within {ANSWER_S:g} s"
                zyg.replace(zproc)
                break
            remaining = deadline - now
            if remaining <= 0 and pid is not None:
                error = f"timed out after {limits.wall_s:g} s"
                break
            if now >= next_disk_check:  # the quota where no tmpfs holds the directory
                used, files = _dir_usage(workdir, limits.disk_files)
                if used > limits.disk_bytes or files > limits.disk_files:
                    error = (f"disk quota exceeded ({used} bytes in {files} files; "
                             f"{limits.disk_bytes} bytes, {limits.disk_files} files allowed)")
                    break
                next_disk_check = now + 0.2
            for key, _ in sel.select(timeout=max(0.0, min(remaining, 0.2)) if pid is not None else 0.2):
                if key.fileobj is status:
                    msg = _recv(status)
                    if msg is None:  # the zygote is gone
                        sel.unregister(status)
                        if exit_info is None:
                            if pid is None:
                                retry = "the sandbox zygote ended before it forked"
                            else:
                                error = "the sandbox zygote ended while the job ran"
                            zyg.replace(zproc)
                        continue
                    if "refused" in msg:
                        retry = str(msg["refused"])
                        zyg.replace(zproc)
                        break
                    if "pid" in msg:
                        pid = int(msg["pid"])
                        deadline = time.monotonic() + limits.wall_s
                    elif "exit" in msg:
                        exit_info = msg
                        sel.unregister(status)
                    continue
                fd = key.fd
                chunk = os.read(fd, 1 << 16)
                if not chunk:
                    sel.unregister(fd)
                    continue
                if fd == rep_r:
                    reply_bytes += chunk
                    if len(reply_bytes) > _MAX_REPLY:
                        error = "returned more than the allowed result size"
                        break
                    continue
                total_out += len(chunk)
                buf = bufs[fd]
                room = cap - len(buf)
                if room > 0:
                    buf += chunk[:room]
                if len(chunk) > room:
                    truncated = True
                if total_out > kill_at:
                    error = f"output limit exceeded ({total_out} bytes written, {cap} kept)"
                    break
            if error or retry:
                break
    finally:
        if exit_info is None and not complete:
            exit_info = _kill_and_wait(status)
        sel.close()
        status.close()
        _close(rep_r, out_r, err_r)
        feeder.join(timeout=1)
    if retry is not None:
        raise _Retry(retry)

    layers: dict = {}
    reply = None
    ok = False
    head, sep, body = bytes(reply_bytes).partition(b"\n")
    try:
        parsed = json.loads(head) if sep else {}
        layers = parsed if isinstance(parsed, dict) else {}
    except ValueError:
        layers = {}
    if error is None:
        if not body:
            if exit_info is None:
                error = "the sandbox child ended without a status"
            else:
                error = _describe_exit(int(exit_info["exit"]), float(exit_info.get("cpu_s", 0.0)), limits.to_job())
        else:
            try:
                reply = json.loads(body)
                if not isinstance(reply, dict) or not isinstance(reply.get("ok"), bool):
                    raise ValueError("reply is not an object with a boolean 'ok'")
                ok = True
            except Exception:  # noqa: BLE001 - the child ran untrusted code: any bytes (even nesting
                # deep enough for RecursionError) must turn into this error, never into a crash
                reply = None
                error = "returned a malformed result (the result channel was written to)"
    if layers:
        _warn_layers(layers)
    return RawRun(
        ok=ok,
        error=None if error is None else clean_text(error, ERROR_CHARS),
        reply=reply,
        stdout=clean_text(bytes(bufs[out_r]).decode("utf-8", "replace")),
        stderr=clean_text(bytes(bufs[err_r]).decode("utf-8", "replace")),
        truncated=truncated,
        wall_s=time.monotonic() - start,
        layers=layers,
    )


def _recv(sock) -> dict | None:
    """One message of the zygote on a status socket (``None`` at end-of-file or when unreadable)."""
    try:
        data = sock.recv(1 << 16)
    except OSError:
        return None
    if not data:
        return None
    try:
        msg = json.loads(data)
    except ValueError:
        return None
    return msg if isinstance(msg, dict) else None


def _kill_and_wait(status) -> dict | None:
    """Ask the zygote to kill the child and wait for its exit report (``None`` if none comes)."""
    status.settimeout(_KILL_WAIT_S)
    try:
        status.sendall(b"kill")
    except OSError:
        return None
    end = time.monotonic() + _KILL_WAIT_S
    while time.monotonic() < end:
        msg = _recv(status)
        if msg is None:
            return None
        if "exit" in msg:
            return msg
    return None
