"""The sandbox's zygote and its children: started as ``python -I _runner.py CONTROL_FD CONFIG_JSON``
by :mod:`._zygote`, once per harness process (see ``docs/guide/sandbox.md``).

This file is self-contained (standard library and the sibling ``_isolate.py``, loaded by path;
NumPy/SciPy imported by the zygote), because ``-I`` keeps the repository off ``sys.path``.

Two kinds of process run here:

* the **zygote** (this script's main process) never executes untrusted code and never sees a job. It
  is started by exec with the sandbox's fixed environment (never forked from the harness), asks to
  die with the harness, imports NumPy and SciPy once, computes what every child needs (the library
  directories, the installation's roots), freezes its heap and then serves fork requests on its
  control socket (``SOCK_SEQPACKET``). A request carries the box settings (working directory, uid,
  disk quota, whether isolation is required: no job data) and, by ``SCM_RIGHTS``, a status socket
  and the job's four pipes (job, reply, stdout, stderr). The zygote refuses to fork unless it has
  exactly one thread, forks, closes its copies of the pipes, answers ``{"pid"}`` and later
  ``{"exit", "cpu_s"}`` on the status socket, and kills the child when that socket says ``kill`` or
  closes. It exits (killing its children) when the control socket closes, i.e. with the harness.
* each **child** starts a session, keeps only its job's descriptors (everything else the zygote held
  is closed), asks to die with the zygote, isolates itself with ``_isolate.enter_box`` (fresh mount,
  network, IPC and UTS namespaces, the tmpfs quota on its own working directory, the unprivileged
  identity or a user namespace, no capabilities, no new privileges), only then reads the job from
  its pipe, applies resource limits, a Landlock domain (``_isolate.restrict_fs``), a seccomp filter
  (Linux x86-64/aarch64) and an audit hook, reports which layers are active as the first line of
  its reply pipe, and only then runs the untrusted code.

The kernel layers are the boundary. The audit hook is a second layer; what it refuses (every refusal
raises ``PermissionError``):

* processes: ``os.system``, ``os.exec*``, ``os.spawn*``, ``os.posix_spawn*``, ``os.fork``,
  ``os.forkpty``, ``pty.spawn``, ``subprocess.Popen``; ``_posixsubprocess.fork_exec`` is replaced;
* signals to anything: ``os.kill``, ``os.killpg``, ``signal.pthread_kill``,
  ``signal.pidfd_send_signal``/``os.pidfd_open`` (replaced); setsid/setpgid (replaced);
* network: every ``socket.*`` event and the urllib/http/ftp/smtp/... connect events;
* files: opening for writing outside the working directory; opening for reading outside the working
  directory and the Python installation; listing directories outside those places;
  remove/rename/mkdir/rmdir/chmod/chown/utime/truncate/chdir and ``shutil`` operations outside the
  working directory, with relative paths judged against their ``dir_fd`` and descriptor paths
  resolved (``os.open(..., dir_fd=)`` is resolved to an absolute path before its audit event); links
  and symlinks anywhere;
* native code and introspection: every ``ctypes.*`` event, imports of ``cffi``, ``mmap``,
  ``multiprocessing``, ``ssl``, ``pty``, ``resource``, ``faulthandler`` and a few more; ``mmap.*``;
  ``gc.get_objects/get_referrers/get_referents``; ``sys._current_frames``, ``sys.settrace``,
  ``sys.setprofile``, ``sys.addaudithook``; ``resource.setrlimit``/``prlimit``.

``sys._getframe`` stays allowed: the standard library calls it while lazily importing modules
(``collections.namedtuple``), and the child holds no secret a frame could reveal.

Limits: RLIMIT_CPU (soft = limit, hard = limit + 1 s), RLIMIT_AS, RLIMIT_FSIZE, RLIMIT_CORE = 0,
RLIMIT_NPROC = 0, RLIMIT_NICE = RLIMIT_RTPRIO = 0; the zygote dies with the harness and each child
with the zygote (``PR_SET_PDEATHSIG``). Wall-clock time, output size and (without a tmpfs) the disk
budget are enforced by the supervisor.
"""

from __future__ import annotations

import json
import os
import signal
import sys

# typing is not imported at run time (the stdlib idiom; mypy reads the name as true)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_MAX_JOB = 256 * 1024 * 1024
_MAX_REPLY = 4 * 1024 * 1024  # a 5,000-point law reply is ~70 KB
_ADDRESS_SPACE_FLOOR_MB = 64
#: Descriptors of one request: status socket, job (read end), reply, stdout, stderr (write ends).
_REQUEST_FDS = 5


def _read_all(fd: int, cap: int) -> bytes | None:
    chunks: list[bytes] = []
    total = 0
    while True:
        try:
            b = os.read(fd, 1 << 16)
        except InterruptedError:  # pragma: no cover - PEP 475 retries
            continue
        if not b:
            return b"".join(chunks)
        total += len(b)
        if total > cap:
            return None
        chunks.append(b)


def _write_all(fd: int, data: bytes) -> None:
    view = memoryview(data)
    while view:
        n = os.write(fd, view)
        view = view[n:]


def _describe_exit(status: int, cpu_used: float, limits: dict) -> str:
    """Why a child that returned no reply ended (used by the supervisor with the zygote's status)."""
    if os.WIFSIGNALED(status):
        sig = os.WTERMSIG(status)
        try:
            name = signal.Signals(sig).name
        except ValueError:  # pragma: no cover
            name = f"signal {sig}"
        cpu_limit = float(limits["cpu_s"])
        if sig == signal.SIGXCPU or (sig == signal.SIGKILL and cpu_used >= cpu_limit - 0.05):
            return f"CPU time limit {cpu_limit:g} s exceeded"
        if sig == signal.SIGXFSZ:
            return "file size limit exceeded"
        if sig == signal.SIGSEGV:
            return "crashed with SIGSEGV (segmentation fault)"
        return f"killed by {name} before returning results"
    code = os.WEXITSTATUS(status)
    return f"exited with code {code} before returning results"


_LIB_DIRS: list = []


def _load_isolate():
    """The kernel-isolation helpers, loaded by path (``-I`` keeps this directory off ``sys.path``)."""
    import importlib.util

    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "_isolate.py")
    spec = importlib.util.spec_from_file_location("_etc_sandbox_isolate", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _install_roots() -> list:
    """Directories of the Python installation and of the packages on ``sys.path``."""
    import sysconfig

    roots = set()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        p = sysconfig.get_paths().get(key)
        if p:
            roots.add(os.path.realpath(p))
    for p in sys.path:
        if p and os.path.isdir(p):
            roots.add(os.path.realpath(p))
    return sorted(roots)


def _missing(layers: dict, names) -> list:
    return [n for n in names if not layers.get(n)]


def _thread_count() -> int:
    """Threads of this process (0 when unknown: the zygote then refuses to fork)."""
    try:
        return len(os.listdir("/proc/self/task"))
    except OSError:
        return 0


# ------------------------------------------------------------------------------------------------
# zygote (trusted, never runs submitted code, never reads a job)
# ------------------------------------------------------------------------------------------------
def _send(fd: int, obj: dict) -> bool:
    try:
        os.write(fd, json.dumps(obj).encode())
        return True
    except OSError:
        return False


def _zygote_main() -> None:
    import socket

    ctl = socket.socket(fileno=int(sys.argv[1]))
    cfg = json.loads(sys.argv[2])
    iso = _load_isolate()
    iso.die_with_parent(int(cfg["ppid"]))
    try:
        # what every child uses, imported once here (the child only finds them in sys.modules)
        import base64  # noqa: F401
        import cmath  # noqa: F401
        import ctypes  # noqa: F401
        import importlib.util  # noqa: F401
        import math  # noqa: F401
        import platform  # noqa: F401
        import resource  # noqa: F401
        import struct  # noqa: F401
        import sysconfig  # noqa: F401
        import traceback  # noqa: F401

        import numpy

        loaded = []
        for name in cfg.get("preload", ()):
            try:
                __import__(name)
                loaded.append(name)
            except Exception:  # noqa: BLE001 - an optional module that fails to load is only not preloaded
                pass
        if cfg.get("test_thread"):  # tests: a zygote that is not single-threaded must refuse to fork
            import threading
            import time

            threading.Thread(target=time.sleep, args=(3600,), daemon=True).start()
        _LIB_DIRS.extend(iso.mapped_library_dirs())
        roots = _install_roots()
        _ROOTS.extend(_read_roots())
        for packages in cfg.get("package_sets", ()):
            _PRECOMPUTED[tuple(packages)] = _landlock_sets(packages)
        scipy = sys.modules.get("scipy")
        hello = {"pid": os.getpid(), "python": sys.version.split()[0], "numpy": numpy.__version__,
                 "scipy": getattr(scipy, "__version__", None), "preloaded": loaded, "threads": _thread_count()}
        import gc

        gc.collect()
        gc.freeze()  # the heap as it is now stays out of the collector: children do not dirty its pages
    except BaseException as exc:  # noqa: BLE001 - reported to the harness, which gives up on this zygote
        _send(ctl.fileno(), {"error": f"zygote start failed: {type(exc).__name__}: {exc}"})
        os._exit(70)
    if not _send(ctl.fileno(), {"hello": hello}):
        os._exit(71)
    _serve(ctl, iso, roots)


def _serve(ctl, iso, roots) -> None:
    import select
    import socket

    zpid = os.getpid()
    poller = select.poll()
    poller.register(ctl.fileno(), select.POLLIN)
    by_pidfd: dict = {}  # pidfd -> [pid, status fd or None]
    by_status: dict = {}  # status fd -> pidfd

    def kill(pidfd: int) -> None:
        pid = by_pidfd[pidfd][0]
        try:
            signal.pidfd_send_signal(pidfd, signal.SIGKILL)
        except OSError:
            pass
        try:  # its process group (the child is its leader; unreaped, so the id is still its own)
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass

    def drop_status(fd: int) -> None:
        poller.unregister(fd)
        by_pidfd[by_status.pop(fd)][1] = None
        os.close(fd)

    def shutdown() -> None:
        for pidfd in list(by_pidfd):
            kill(pidfd)
        for pid, _ in list(by_pidfd.values()):
            try:
                os.waitpid(pid, 0)
            except OSError:
                pass
        os._exit(0)

    def start(msg: bytes, fds: list) -> None:
        if len(fds) != _REQUEST_FDS:
            for fd in fds:
                os.close(fd)
            return
        status, job_r, rep_w, out_w, err_w = fds
        try:
            box = json.loads(msg)
            if not isinstance(box, dict):
                raise ValueError("not an object")
        except ValueError as exc:
            _send(status, {"refused": f"malformed request: {exc}"})
            box = None
        threads = _thread_count()
        if box is not None and threads != 1:
            _send(status, {"refused": f"the sandbox zygote has {threads or 'an unknown number of'} threads; "
                                      "it forks only while single-threaded"})
            box = None
        if box is None:
            for fd in fds:
                os.close(fd)
            return
        try:
            pid = os.fork()
        except OSError as exc:  # no memory or process slot: the supervisor replaces this zygote
            _send(status, {"refused": f"the sandbox zygote could not fork: {exc}"})
            for fd in fds:
                os.close(fd)
            return
        if pid == 0:
            try:
                _child_main(box, job_r, rep_w, out_w, err_w, iso, roots, zpid)
            finally:
                os._exit(70)
        for fd in (job_r, rep_w, out_w, err_w):
            os.close(fd)
        pidfd = os.pidfd_open(pid)
        by_pidfd[pidfd] = [pid, status]
        by_status[status] = pidfd
        poller.register(pidfd, select.POLLIN)
        poller.register(status, select.POLLIN)
        if not _send(status, {"pid": pid}):
            kill(pidfd)
            drop_status(status)

    while True:
        for fd, _ev in poller.poll():
            if fd == ctl.fileno():
                try:
                    msg, fds, _, _ = socket.recv_fds(ctl, 1 << 16, _REQUEST_FDS + 1)
                except OSError:
                    msg, fds = b"", []
                if not msg and not fds:  # the harness is gone
                    shutdown()
                start(msg, fds)
            elif fd in by_pidfd:  # a child ended
                pid, status = by_pidfd.pop(fd)
                poller.unregister(fd)
                os.close(fd)
                try:
                    _, st, ru = os.wait4(pid, 0)
                except ChildProcessError:  # pragma: no cover
                    st, ru = 0, None
                if status is not None:
                    cpu = (ru.ru_utime + ru.ru_stime) if ru is not None else 0.0
                    _send(status, {"exit": st, "cpu_s": cpu})
                    poller.unregister(status)
                    by_status.pop(status, None)
                    os.close(status)
            elif fd in by_status:  # "kill", or the supervisor closed its end: the child goes
                try:
                    data = os.read(fd, 64)
                except OSError:
                    data = b""
                kill(by_status[fd])
                if not data:
                    drop_status(fd)


# ------------------------------------------------------------------------------------------------
# child (one per job: isolates itself, then runs submitted code)
# ------------------------------------------------------------------------------------------------
def _keep_only(keep) -> None:
    """Close every descriptor but ``keep`` (the zygote's control socket, other jobs' sockets, ...)."""
    hi = 3
    for fd in sorted(keep):
        if fd >= hi:
            os.closerange(hi, fd)
            hi = fd + 1
    os.closerange(hi, max(hi + 1, os.sysconf("SC_OPEN_MAX")))


def _child_main(box: dict, job_r: int, rep_w: int, out_w: int, err_w: int, iso, roots, zpid: int) -> None:
    os.setsid()
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.dup2(out_w, 1)
    os.dup2(err_w, 2)
    _keep_only({0, 1, 2, job_r, rep_w})
    iso.die_with_parent(zpid)
    workdir = str(box["workdir"])
    os.chdir(workdir)
    os.environ["HOME"] = os.environ["TMPDIR"] = workdir
    tempfile: Any = sys.modules.get("tempfile")  # a module, read by name: its attributes are dynamic
    if tempfile is not None:
        tempfile.tempdir = None
    layers = iso.enter_box(
        workdir, uid=int(box.get("uid", 65534)), gid=int(box.get("gid", 65534)),
        disk_bytes=int(box.get("disk_bytes", 64 << 20)), disk_files=int(box.get("disk_files", 2048)),
        read_roots=roots,
    )
    if os.getppid() != zpid:  # the zygote died while the box was built
        os._exit(71)
    require = bool(box.get("require"))
    missing = _missing(layers, [n for n in iso.LAYERS if n in layers]) if require else []
    if missing:
        os.close(job_r)
        _write_all(rep_w, json.dumps(layers).encode() + b"\n")
        _write_all(rep_w, json.dumps({"ok": False, "error": "isolation required but not available: "
                                      + ", ".join(missing) + (f" ({layers['notes']})" if layers.get("notes") else "")
                                      }).encode())
        os._exit(0)
    code = 0
    try:
        _worker_main(job_r, rep_w, iso, require, layers)
    except BaseException:  # the child's own failure; the supervisor reports the exit code
        code = 70
        try:
            import traceback

            traceback.print_exc()
            sys.stderr.flush()
        except BaseException:
            pass
    os._exit(code)


# ------------------------------------------------------------------------------------------------
# worker (runs submitted code after locking itself down)
# ------------------------------------------------------------------------------------------------
_DENIED_EVENTS = frozenset(
    {
        "os.system", "os.exec", "os.spawn", "os.posix_spawn", "os.fork", "os.forkpty", "pty.spawn",
        "subprocess.Popen", "os.kill", "os.killpg", "signal.pthread_kill", "os.startfile",
        "os.add_dll_directory", "os.link", "os.symlink", "os.setxattr", "os.removexattr",
        "gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys._current_frames",
        "sys._current_exceptions", "sys.settrace", "sys.setprofile", "sys.addaudithook",
        "sys.remote_exec", "resource.setrlimit", "resource.prlimit", "webbrowser.open",
        "urllib.Request", "http.client.connect", "http.client.send", "ftplib.connect",
        "smtplib.connect", "imaplib.open", "poplib.connect", "nntplib.connect", "telnetlib.Telnet.open",
        "fcntl.ioctl", "os.chroot",
    }
)
_DENIED_PREFIXES = ("socket.", "ctypes.", "_ctypes.", "mmap.", "winreg.", "msvcrt.", "_winapi.")
# Imports refused even from library code. Modules that NumPy, SciPy or SymPy import while loading
# (ctypes, subprocess, socket, select, fcntl, ...) stay importable: what they could do is refused
# by the operation's audit event, by seccomp and by the kernel layers, not at import.
_DENIED_MODULES = frozenset(
    {
        "cffi", "_cffi_backend", "mmap", "multiprocessing", "_multiprocessing", "ssl", "_ssl", "pty", "asyncio",
        "_posixshmem", "termios", "resource", "faulthandler", "_xxsubinterpreters", "_testcapi", "_testinternalcapi",
    }
)
# events whose listed argument positions are paths that must lie inside the working directory
_WRITE_PATH_EVENTS = {
    "os.remove": (0,), "os.rename": (0, 1), "os.rmdir": (0,), "os.mkdir": (0,), "os.chmod": (0,),
    "os.chown": (0,), "os.utime": (0,), "os.truncate": (0,), "os.chdir": (0,), "os.chflags": (0,),
    "os.lchflags": (0,), "os.lchmod": (0,), "os.lchown": (0,), "os.mkfifo": (0,), "os.mknod": (0,),
    "shutil.copyfile": (1,), "shutil.copymode": (1,), "shutil.copystat": (1,), "shutil.copytree": (1,),
    "shutil.rmtree": (0,), "shutil.move": (0, 1), "shutil.chown": (0,), "shutil.make_archive": (0,),
    "shutil.unpack_archive": (1,),
}
_DIR_FD_EVENTS = {"os.remove": 1, "os.rename": 2, "os.rmdir": 1, "os.mkdir": 2, "os.chmod": 2, "os.chown": 3,
                  "os.utime": 3, "os.mkfifo": 2, "os.mknod": 3, "shutil.rmtree": 1}
_READ_PATH_EVENTS = {"os.listdir": 0, "os.scandir": 0, "os.listxattr": 0, "os.getxattr": 0,
                     "shutil.copyfile": 0, "shutil.copytree": 0, "shutil.unpack_archive": 0}


def _make_hook(workdir: str, read_roots: tuple):
    """Build the audit hook. Every helper it uses is bound here, so patching modules later changes nothing."""
    import posix

    _lstat, _readlink, _getcwd, _fspath = posix.lstat, posix.readlink, posix.getcwd, posix.fspath
    _open, _fchdir, _close, _o_dir = posix.open, posix.fchdir, posix.close, os.O_RDONLY | os.O_DIRECTORY
    _isinstance, _int, _str, _bytes, _len, _tuple = isinstance, int, str, bytes, len, tuple
    _perm = PermissionError
    denied_events, denied_prefixes, denied_modules = _DENIED_EVENTS, _DENIED_PREFIXES, _DENIED_MODULES
    write_events, dirfd_events, read_events = dict(_WRITE_PATH_EVENTS), dict(_DIR_FD_EVENTS), dict(_READ_PATH_EVENTS)
    flags_write = os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND
    wd = workdir.rstrip("/") or "/"
    roots = _tuple(r.rstrip("/") for r in read_roots)

    def normalize(parts_text):
        out = []
        for part in parts_text.split("/"):
            if part in ("", "."):
                continue
            if part == "..":
                if out:
                    out.pop()
                continue
            out.append(part)
        return out

    def resolve(path):
        """Absolute, symlink-free form of ``path`` (missing tails kept lexically)."""
        if _isinstance(path, _bytes):
            path = path.decode("utf-8", "surrogateescape")
        if not _isinstance(path, _str):
            path = _fspath(path)
            if _isinstance(path, _bytes):
                path = path.decode("utf-8", "surrogateescape")
        if not path.startswith("/"):
            path = _getcwd() + "/" + path
        pending = normalize(path)
        done = []
        hops = 0
        while pending:
            part = pending.pop(0)
            if part == "..":
                if done:
                    done.pop()
                continue
            candidate = "/" + "/".join(done + [part])
            try:
                st = _lstat(candidate)
                is_link = (st.st_mode & 0o170000) == 0o120000
            except OSError:
                is_link = False
            if is_link:
                hops += 1
                if hops > 40:
                    raise _perm("sandbox: too many symbolic links")
                target = _readlink(candidate)
                if target.startswith("/"):
                    done = []
                pending = normalize(target) + pending
                continue
            done.append(part)
        return "/" + "/".join(done)

    def inside(p, root):
        return p == root or p.startswith(root + "/") or root == "/"

    busy = [False]

    def fd_dir(fd):
        """Path of the directory open as ``fd`` (``None`` for a non-directory), via fchdir/getcwd."""
        busy[0] = True
        try:
            here = _open(".", _o_dir)
            try:
                _fchdir(fd)
                return _getcwd()
            finally:
                _fchdir(here)
                _close(here)
        except OSError:
            return None
        finally:
            busy[0] = False

    def target(path, dir_fd, event):
        """Absolute path named by ``path`` (relative to ``dir_fd`` when one is given), or ``None`` for
        an open file descriptor that is not a directory (its opening was checked)."""
        if _isinstance(path, _int):
            return fd_dir(path)
        if dir_fd is not None and dir_fd != -1:
            base = fd_dir(dir_fd)
            if base is None:
                raise _perm(f"sandbox: {event} with a dir_fd that is not a directory is not allowed")
            if _isinstance(path, _bytes):
                path = path.decode("utf-8", "surrogateescape")
            path = _fspath(path)
            if _isinstance(path, _bytes):
                path = path.decode("utf-8", "surrogateescape")
            if not path.startswith("/"):
                path = base + "/" + path
        return resolve(path)

    def check_write(path, event, dir_fd=None):
        p = target(path, dir_fd, event)
        if p is not None and not inside(p, wd):
            raise _perm(f"sandbox: {event} outside the working directory is not allowed: {p}")

    def check_read(path, event):
        if path is None:
            path = "."
        p = target(path, None, event)
        if p is None or inside(p, wd):
            return
        for r in roots:
            if inside(p, r):
                return
        if p in ("/dev/null", "/dev/urandom", "/dev/random"):
            return
        raise _perm(f"sandbox: {event} of {p} is not allowed (only the working directory and the Python installation)")

    def hook(event, args):
        if busy[0]:  # the hook's own fchdir/getcwd
            return
        if event in denied_events:
            raise _perm(f"sandbox: {event} is not allowed")
        for pre in denied_prefixes:
            if event.startswith(pre):
                raise _perm(f"sandbox: {event} is not allowed")
        if event == "import":
            name = args[0]
            if _isinstance(name, _str) and name.split(".")[0] in denied_modules:
                raise _perm(f"sandbox: importing {name} is not allowed")
            return
        if event == "open":
            path = args[0]
            mode = args[1] if _len(args) > 1 else None
            flags = args[2] if _len(args) > 2 else 0
            writing = False
            if _isinstance(mode, _str) and any(c in mode for c in "wax+"):
                writing = True
            if _isinstance(flags, _int) and flags & flags_write:
                writing = True
            if writing:
                check_write(path, "opening for writing")
            else:
                check_read(path, "opening")
            return
        if event in read_events:
            i = read_events[event]
            if _len(args) > i:
                check_read(args[i], event)
            if event not in write_events:
                return
        if event in write_events:
            j = dirfd_events.get(event)
            dir_fd = args[j] if j is not None and _len(args) > j else None
            for k, i in enumerate(write_events[event]):
                if _len(args) > i and args[i] is not None:
                    fd = dir_fd
                    if event == "os.rename":
                        fd = args[2 + k] if _len(args) > 2 + k else None
                    check_write(args[i], event, fd)

    return hook


def _refuse(name):
    def refused(*args, **kwargs):
        raise PermissionError(f"sandbox: {name} is not allowed")

    refused.__name__ = name.rsplit(".", 1)[-1]
    return refused


def _open_dir_fd_absolute() -> None:
    """``os.open(path, ..., dir_fd=fd)`` resolved to an absolute path first: the ``open`` audit event
    carries no dir_fd, so the hook would otherwise judge ``path`` against the current directory."""
    import posix

    real_open, fchdir, getcwd, close = posix.open, posix.fchdir, posix.getcwd, posix.close

    def open(path, flags, mode=0o777, *, dir_fd=None):  # noqa: A001 - replaces os.open
        if dir_fd is not None and not isinstance(path, int) and not os.fsdecode(path).startswith("/"):
            here = real_open(".", os.O_RDONLY | os.O_DIRECTORY)
            try:
                fchdir(dir_fd)  # audited as os.chdir: refused for a directory outside the box
                path = getcwd() + "/" + os.fsdecode(path)
            finally:
                fchdir(here)
                close(here)
        return real_open(path, flags, mode)

    os.open = posix.open = open


def _ignore_at_fork(**_handlers) -> None:
    """``os.register_at_fork`` without effect: the worker cannot fork."""


def _disable_primitives() -> None:
    """Replace process/signal primitives that raise no audit event in Python 3.11."""
    import _posixsubprocess
    import posix

    _posixsubprocess.fork_exec = _refuse("_posixsubprocess.fork_exec")
    _open_dir_fd_absolute()
    mod: Any  # os, posix, signal or _signal: patched by name
    for mod in (os, posix):
        for name in ("pidfd_open", "setsid", "setpgid", "setpgrp", "fork", "forkpty"):
            if hasattr(mod, name):
                setattr(mod, name, _refuse(f"os.{name}"))
        if hasattr(mod, "register_at_fork"):  # the standard library registers handlers on import (random)
            mod.register_at_fork = _ignore_at_fork
    for name in ("pidfd_send_signal", "pthread_kill", "sigqueue"):
        for mod in (signal, sys.modules.get("_signal")):
            if mod is not None and hasattr(mod, name):
                setattr(mod, name, _refuse(f"signal.{name}"))
    subprocess: Any = sys.modules.get("subprocess")  # a module, read by name: its attributes are dynamic
    if subprocess is not None and hasattr(subprocess, "_fork_exec"):
        subprocess._fork_exec = _refuse("_posixsubprocess.fork_exec")


# x86-64 syscall numbers refused by the seccomp filter
_SECCOMP_DENY = {
    56: 1, 57: 1, 58: 1, 59: 1, 322: 1,  # clone fork vfork execve execveat
    435: 38,  # clone3 -> ENOSYS
    62: 1, 200: 1, 234: 1, 129: 1, 297: 1,  # kill tkill tgkill rt_sigqueueinfo rt_tgsigqueueinfo
    424: 1, 434: 1, 438: 1,  # pidfd_send_signal pidfd_open pidfd_getfd
    101: 1, 310: 1, 311: 1,  # ptrace process_vm_readv/writev
    41: 1, 53: 1, 42: 1, 49: 1, 50: 1, 43: 1, 288: 1,  # socket socketpair connect bind listen accept accept4
    112: 1, 109: 1, 272: 1, 308: 1, 165: 1, 166: 1, 161: 1, 155: 1,  # setsid setpgid unshare setns mount umount2 chroot pivot_root
    425: 1, 426: 1, 427: 1, 321: 1, 298: 1, 248: 1, 249: 1, 250: 1, 323: 1,  # io_uring_* bpf perf add_key request_key keyctl userfaultfd
    88: 1, 266: 1, 86: 1, 265: 1, 133: 1, 259: 1,  # symlink symlinkat link linkat mknod mknodat
}


# aarch64 (generic table: no fork/vfork/symlink/link/mknod, only their *at forms and clone)
_SECCOMP_DENY_AARCH64 = {
    220: 1, 221: 1, 281: 1, 435: 38,  # clone execve execveat clone3 -> ENOSYS
    129: 1, 130: 1, 131: 1, 138: 1, 240: 1,  # kill tkill tgkill rt_sigqueueinfo rt_tgsigqueueinfo
    424: 1, 434: 1, 438: 1,  # pidfd_send_signal pidfd_open pidfd_getfd
    117: 1, 270: 1, 271: 1,  # ptrace process_vm_readv/writev
    198: 1, 199: 1, 203: 1, 200: 1, 201: 1, 202: 1, 242: 1,  # socket socketpair connect bind listen accept accept4
    157: 1, 154: 1, 97: 1, 268: 1, 40: 1, 39: 1, 51: 1, 41: 1,  # setsid setpgid unshare setns mount umount2 chroot pivot_root
    425: 1, 426: 1, 427: 1, 280: 1, 241: 1, 217: 1, 218: 1, 219: 1, 282: 1,  # io_uring_* bpf perf add_key request_key keyctl userfaultfd
    36: 1, 37: 1, 33: 1,  # symlinkat linkat mknodat
}
# (AUDIT_ARCH value, deny table, refuse syscall numbers >= 0x40000000 (x32 ABI))
_SECCOMP_ARCH = {
    "x86_64": (0xC000003E, _SECCOMP_DENY, True), "AMD64": (0xC000003E, _SECCOMP_DENY, True),
    "aarch64": (0xC00000B7, _SECCOMP_DENY_AARCH64, False), "arm64": (0xC00000B7, _SECCOMP_DENY_AARCH64, False),
}


def _install_seccomp(ctypes) -> bool:
    """Install the seccomp filter on Linux x86-64 or aarch64; returns whether it is active."""
    import platform
    import struct

    arch = _SECCOMP_ARCH.get(platform.machine())
    if sys.platform != "linux" or arch is None:
        return False
    audit_arch, deny, x32 = arch
    ld, jeq, jge, ret = 0x20, 0x15, 0x35, 0x06
    allow, errno_ret = 0x7FFF0000, 0x00050000
    # other ABIs of the same kernel (i386, arm32 compat) are refused outright
    ins = [(ld, 0, 0, 4), (jeq, 1, 0, audit_arch), (ret, 0, 0, errno_ret | 1), (ld, 0, 0, 0)]
    if x32:
        ins += [(jge, 0, 1, 0x40000000), (ret, 0, 0, errno_ret | 1)]
    for nr, err in sorted(deny.items()):
        ins += [(jeq, 0, 1, nr), (ret, 0, 0, errno_ret | err)]
    ins.append((ret, 0, 0, allow))
    buf = b"".join(struct.pack("=HBBI", *i) for i in ins)

    class Prog(ctypes.Structure):
        _fields_ = [("len", ctypes.c_ushort), ("filter", ctypes.c_char_p)]

    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_void_p, ctypes.c_ulong, ctypes.c_ulong]
    if libc.prctl(38, 1, None, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        return False
    prog = Prog(len(ins), buf)
    return libc.prctl(22, 2, ctypes.cast(ctypes.pointer(prog), ctypes.c_void_p), 0, 0) == 0  # PR_SET_SECCOMP, FILTER


def _set_limits(limits: dict) -> None:
    import resource

    cpu = max(1, int(-(-float(limits["cpu_s"]) // 1)))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 1))
    mem = max(_ADDRESS_SPACE_FLOOR_MB, int(limits["memory_mb"])) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (mem, mem))
    fsize = int(limits.get("file_bytes", 64 * 1024 * 1024))
    resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    try:
        resource.setrlimit(resource.RLIMIT_NPROC, (0, 0))
    except (ValueError, OSError):  # pragma: no cover
        pass


def _read_roots() -> tuple:
    """Directories the audit hook lets the worker read (the Python installation and site-packages)."""
    import sysconfig

    roots = set()
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            roots.add(os.path.realpath(paths[key]))
    for mod in ("os", "numpy", "scipy", "sympy"):
        m = sys.modules.get(mod)
        f = getattr(m, "__file__", None)
        if f:
            d = os.path.dirname(os.path.realpath(f))
            roots.add(d if mod == "os" else os.path.dirname(d))
    for p in sys.path:
        if p and os.path.isdir(p) and not os.path.exists(os.path.join(p, "etc_fast")):
            roots.add(os.path.realpath(p))
    return tuple(sorted(roots))


def _site_dirs() -> set:
    import sysconfig

    paths = sysconfig.get_paths()
    return {os.path.realpath(paths[k]) for k in ("purelib", "platlib") if paths.get(k)}


def _hidden_names(sites, read) -> frozenset:
    """Top-level names in site-packages outside the Landlock read set."""
    hidden = set()
    for s in sites:
        try:
            names = os.listdir(s)
        except OSError:
            continue
        for entry in names:
            if os.path.join(s, entry) not in read:
                name = entry.split(".")[0]
                if name.isidentifier():
                    hidden.add(name)
    hidden -= {os.path.basename(p).split(".")[0] for p in read}
    return frozenset(hidden)


def _hide(hidden: frozenset) -> None:
    """Make site-packages modules outside the Landlock read set absent (``ModuleNotFoundError``) rather
    than unreadable (``PermissionError``), so that libraries probing optional dependencies carry on."""

    class _Absent:
        @staticmethod
        def find_spec(name, path=None, target=None):
            if path is None and name in hidden:
                raise ModuleNotFoundError(f"No module named {name!r}", name=name)

    sys.meta_path.insert(0, _Absent)


#: Landlock sets the zygote computed before forking, for the package lists of its configuration:
#: ``{tuple(packages): (read dirs, read files, list-only dirs, hidden names)}``; and the audit hook's
#: read roots. A child whose job names another list computes its own (slower, same result).
_PRECOMPUTED: dict = {}
_ROOTS: list = []


def _landlock_sets(packages) -> tuple:
    """What the Landlock domain of the child allows: (read dirs, read files, list-only dirs, hidden).

    Read: the standard library (and ``lib-dynload``), the package directories of ``packages`` and of
    every module already loaded from site-packages (with their ``<name>.libs`` siblings), and the
    directories of the shared libraries mapped into the process. Site-packages itself may be listed
    (names only) so that imports can find the allowed packages; nothing else is readable. ``hidden``:
    the other top-level names there, made absent rather than unreadable.
    """
    import importlib.util
    import sysconfig

    sites = _site_dirs()
    paths = sysconfig.get_paths()
    read = set()
    for key in ("stdlib", "platstdlib"):
        if paths.get(key):
            read.add(os.path.realpath(paths[key]))
    for p in sys.path:
        rp = os.path.realpath(p) if p else ""
        if rp and os.path.isdir(rp) and rp not in sites and not any(rp.startswith(s + "/") for s in sites):
            read.add(rp)  # stdlib zip/dir, lib-dynload

    def add_top(file):
        rp = os.path.realpath(file)
        for s in sites:
            if rp.startswith(s + "/"):
                top = rp[len(s) + 1:].split("/")[0]
                read.add(os.path.join(s, top))
                libs = os.path.join(s, top.removesuffix(".py") + ".libs")
                if os.path.isdir(libs):
                    read.add(libs)

    for m in list(sys.modules.values()):
        f = getattr(m, "__file__", None)
        if isinstance(f, str):
            add_top(f)
    for name in packages:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            continue
        if spec is not None and spec.origin and spec.origin not in ("built-in", "frozen"):
            add_top(spec.origin)
    hidden = _hidden_names(sites, read)
    files = {"/etc/ld.so.cache", "/dev/urandom", "/dev/random"}
    read.update(_LIB_DIRS)  # the zygote's mapped libraries, read before /proc was hidden
    return tuple(sorted(read)), tuple(sorted(files)), tuple(sorted(sites)), hidden


def _landlock_paths(packages) -> tuple:
    """(read dirs, read files, list-only dirs) for ``packages``; hides the rest of site-packages."""
    got = _PRECOMPUTED.get(tuple(packages))
    if got is None:
        got = _landlock_sets(packages)
    read_dirs, read_files, list_dirs, hidden = got
    _hide(hidden)
    return read_dirs, read_files, list_dirs


def _decode(obj):
    import base64

    import numpy as np

    if isinstance(obj, dict):
        if set(obj) == {"__ndarray__", "dtype", "shape"}:
            raw = base64.b64decode(obj["__ndarray__"])
            return np.frombuffer(raw, dtype=np.dtype(obj["dtype"])).reshape(obj["shape"]).copy()
        return {k: _decode(v) for k, v in obj.items()}
    if isinstance(obj, list):
        return [_decode(v) for v in obj]
    return obj


_builtin_import = __import__


class _GuardedImport:
    """``__import__`` of a submission: top-level names in ``allowed`` only.

    Holds no reference to the real import (it is looked up as a module global at call time), so
    nothing is gained by taking the guard apart. The allowlist keeps honest code honest; it is not
    a security boundary (the kernel layers are).
    """

    __slots__ = ("_allowed", "_text")

    def __init__(self, allowed: frozenset) -> None:
        self._allowed = allowed
        self._text = ", ".join(sorted(allowed))

    def __call__(self, name, globals=None, locals=None, fromlist=(), level=0):
        top = name.split(".")[0]
        if level != 0 or top not in self._allowed:
            raise ImportError(f"import of {name!r} is not allowed here (allowed: {self._text})")
        return _builtin_import(name, globals, locals, fromlist, level)


def _guarded_builtins(allowed: frozenset) -> dict:
    import builtins

    b = dict(builtins.__dict__)
    b["__import__"] = _GuardedImport(allowed)
    return b


def _describe_exc(exc: BaseException, limits: dict) -> str:
    if isinstance(exc, MemoryError):
        return f"memory limit {int(limits['memory_mb'])} MB exceeded (MemoryError)"
    try:
        name = str(type(exc).__name__)
    except BaseException:  # a metaclass may make even the class name raise
        name = "an exception"
    try:  # the submission's own exception class: its __str__ may raise, or return a non-string
        text = str(exc)
    except BaseException as inner:
        try:
            inner_name = str(type(inner).__name__)
        except BaseException:
            inner_name = "an exception"
        return f"{name} (its message could not be produced: __str__ raised {inner_name})"
    if len(text) > 500:
        text = text[:500] + "..."
    return f"{name}: {text}" if text else name


def _run_law(job: dict, allowed: frozenset) -> dict:
    import math

    import numpy as np

    limits = job["limits"]
    X = _decode(job["X"])
    names = job["arg_names"]
    ns = {"__builtins__": _guarded_builtins(allowed), "__name__": "submission", "math": math, "np": np}
    local_vars: dict = {}
    try:
        exec(compile(job["source"], "<discovered_law>", "exec"), ns, local_vars)
    except BaseException as exc:
        return {"ok": False, "error": f"could not execute the submission: {_describe_exc(exc, limits)}"}
    fn = local_vars.get("discovered_law")
    if not callable(fn):
        return {"ok": False, "error": "the submission does not define a callable discovered_law"}
    n = X.shape[0]
    out = []
    fast = (float, np.float64)
    # numpy float64 scalars, signature order (list() of a column yields them, as X[i][k] would)
    for i, args in enumerate(zip(*[list(X[:, k]) for k in range(X.shape[1])])):
        try:
            value = fn(*args)
        except BaseException as exc:
            where = ", ".join(f"{a}={float(v)!r}" for a, v in zip(names, args))
            return {"ok": False, "error": f"{_describe_exc(exc, limits)} at point {i} ({where})"}
        if type(value) in fast:
            out.append(float(value))
            continue
        try:
            if isinstance(value, (str, bytes, bytearray)):
                raise TypeError(f"returned a string {value[:40]!r}")
            if isinstance(value, (complex, np.complexfloating)):
                raise TypeError(f"returned a complex number {value!r}")
            if isinstance(value, np.ndarray):
                if value.dtype.kind == "c":
                    raise TypeError(f"returned a complex array {value!r}")
                if value.size != 1:
                    raise TypeError(f"returned an array of shape {value.shape}, expected a number")
                value = value.reshape(()).item()
            out.append(float(value))
        except BaseException as exc:
            text = str(exc)[:200]
            return {"ok": False, "error": f"non-numeric return value at point {i}: {type(exc).__name__}: {text}"}
    values = np.array(out, dtype=np.float64).reshape(n)
    import base64

    return {"ok": True, "error": None, "values": base64.b64encode(values.tobytes()).decode("ascii"), "n": n}


def _run_code(job: dict, allowed: frozenset) -> dict:
    import math

    import numpy as np

    limits = job["limits"]
    ns = {"__builtins__": _guarded_builtins(allowed), "__name__": "__main__", "np": np, "numpy": np, "math": math}
    ns.update(_decode(job["data"]))
    try:
        exec(compile(job["code"], "<analysis>", "exec"), ns)
    except BaseException as exc:
        return {"ok": False, "error": _describe_exc(exc, limits)}
    return {"ok": True, "error": None}


def _worker_main(job_r: int, rep_w: int, iso, require: bool, box_layers: dict) -> None:
    """The child after ``enter_box``: read the job, lock down further, report the layers, run the code."""
    import ctypes

    raw = _read_all(job_r, _MAX_JOB)
    os.close(job_r)
    job = json.loads(raw)
    import cmath  # noqa: F401
    import math  # noqa: F401

    import numpy

    # the legacy global generator: 128 bits of fresh entropy per job, as a new process has (a seed
    # array goes through init_by_array; seed() with no argument spends ~0.4 ms in a SeedSequence)
    numpy.random.seed(numpy.frombuffer(os.urandom(16), dtype=numpy.uint32))
    if job["kind"] == "code":
        for name in job.get("preload", ()):
            try:
                __import__(name)
            except Exception:  # noqa: BLE001 - an optional module that fails to load is only not preloaded;
                pass  # importing it from the analysis code then reports the failure there
    allowed = frozenset(job["allowed_imports"])
    roots = tuple(_ROOTS) or _read_roots()
    workdir = os.getcwd()
    read_dirs, read_files, list_dirs = _landlock_paths(job.get("read_packages", job["allowed_imports"]))
    _set_limits(job["limits"])
    # "second_layer": False (tests of the kernel layers alone) leaves out seccomp and the audit hook
    second = job.get("second_layer", True)
    if second:
        _disable_primitives()
    layers = dict(box_layers)
    layers.update(iso.restrict_fs(read_dirs, read_files, (workdir,), ("/dev/null",), list_dirs))
    layers["seccomp"] = _install_seccomp(ctypes) if second else False
    if second:
        sys.addaudithook(_make_hook(workdir, roots))
    layers["audit_hook"] = bool(second)
    del ctypes
    _write_all(rep_w, json.dumps(layers).encode() + b"\n")
    missing = [n for n in ("landlock_fs", "landlock_net", "landlock_scope", "seccomp") if not layers[n]]
    if require and missing:
        reply = {"ok": False, "error": "isolation required but not available: " + ", ".join(missing)}
    else:
        try:
            if job["kind"] == "law":
                reply = _run_law(job, allowed)
            else:
                reply = _run_code(job, allowed)
        except BaseException as exc:
            reply = {"ok": False, "error": f"harness failure: {_describe_exc(exc, job['limits'])}"}
    for stream in (sys.stdout, sys.stderr, sys.__stdout__, sys.__stderr__):
        try:
            stream.flush()
        except BaseException:
            pass
    _write_all(rep_w, json.dumps(reply).encode())
    # the supervisor has everything once these close: it need not wait for the teardown of the
    # address space and the namespaces (the zygote reaps the child)
    for fd in (rep_w, 1, 2):
        try:
            os.close(fd)
        except OSError:
            pass
    os._exit(0)


if __name__ == "__main__":
    _zygote_main()
