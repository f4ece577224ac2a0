"""Kernel-level isolation of a sandbox process (Linux): identity, namespaces, disk quota, Landlock.

This file is standalone (standard library and ``ctypes`` only): the sandbox zygote loads it by path,
outside the project's import path. Two entry points:

* :func:`enter_box` — in each child of the zygote, before it reads its job: new mount/network/IPC/UTS
  namespaces (a new user namespace first when not root), a size- and inode-limited tmpfs over the
  working directory, the Python installation made reachable for the sandbox user when one of its
  ancestors is not (a tmpfs over that ancestor with read-only bind mounts of what is needed),
  identity drop to an unprivileged uid/gid without supplementary groups and without capabilities,
  ``RLIMIT_NICE``/``RLIMIT_RTPRIO`` at 0, ``PR_SET_NO_NEW_PRIVS``, not dumpable, parent-death signal.
* :func:`restrict_fs` — in the child, just before untrusted code runs: a Landlock ruleset that
  allows reading only the given read-only roots (files and directories), reading and writing only the
  working directory, no TCP bind/connect (ABI >= 4), no signals or abstract unix sockets leaving the
  domain (ABI >= 6).

Each step that the kernel (or the platform) refuses is skipped and reported; the caller decides
whether a missing layer is acceptable. Nothing here raises for an unavailable feature.
"""

from __future__ import annotations

import os
import struct
import sys

__all__ = ["LAYERS", "die_with_parent", "enter_box", "restrict_fs", "landlock_abi"]

#: Every layer a fully isolated run has (the names used in reports and in ``versions.json``).
LAYERS = (
    "identity", "no_new_privs", "mount_ns", "net_ns", "ipc_ns", "disk_quota", "landlock_fs", "landlock_net",
    "landlock_scope", "seccomp", "audit_hook",
)

_CLONE_NEWNS, _CLONE_NEWUTS, _CLONE_NEWIPC = 0x00020000, 0x04000000, 0x08000000
_CLONE_NEWUSER, _CLONE_NEWNET = 0x10000000, 0x40000000
_MS_RDONLY, _MS_NOSUID, _MS_NODEV, _MS_NOEXEC = 1, 2, 4, 8
_MS_REMOUNT, _MS_BIND, _MS_REC, _MS_PRIVATE = 32, 4096, 0x4000, 1 << 18
_PR_SET_PDEATHSIG, _PR_SET_DUMPABLE, _PR_SET_NO_NEW_PRIVS = 1, 4, 38
_SYS_CAPSET = {"x86_64": 126, "aarch64": 91}
# Landlock syscalls have the same numbers on every architecture (generic syscall table, Linux 5.13).
_SYS_LANDLOCK_CREATE, _SYS_LANDLOCK_ADD_RULE, _SYS_LANDLOCK_RESTRICT = 444, 445, 446
_LANDLOCK_CREATE_RULESET_VERSION = 1
_LANDLOCK_RULE_PATH_BENEATH = 1
# handled_access_fs bits and the ABI that introduced them
_FS_EXECUTE, _FS_WRITE_FILE, _FS_READ_FILE, _FS_READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ABI1 = (1 << 13) - 1  # EXECUTE .. MAKE_SYM
_FS_REFER, _FS_TRUNCATE, _FS_IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FS_FILE_ONLY = _FS_EXECUTE | _FS_WRITE_FILE | _FS_READ_FILE | _FS_TRUNCATE | _FS_IOCTL_DEV
_NET_BIND_TCP, _NET_CONNECT_TCP = 1 << 0, 1 << 1  # ABI 4
_SCOPE_ABSTRACT_UNIX, _SCOPE_SIGNAL = 1 << 0, 1 << 1  # ABI 6


def _libc():
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    libc.prctl.argtypes = [ctypes.c_int, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong, ctypes.c_ulong]
    libc.mount.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_char_p, ctypes.c_ulong, ctypes.c_char_p]
    return ctypes, libc


def _err(ctypes) -> str:
    e = ctypes.get_errno()
    return f"{os.strerror(e)} (errno {e})"


def _mount(ctypes, libc, src, target, fstype, flags, data=None) -> str | None:
    def enc(s):
        return None if s is None else os.fsencode(s)

    if libc.mount(enc(src), enc(target), enc(fstype), flags, enc(data)) != 0:
        return _err(ctypes)
    return None


def _traversable(path: str, uid: int, gid: int) -> bool:
    try:
        st = os.stat(path)
    except OSError:
        return False
    if st.st_uid == uid:
        return bool(st.st_mode & 0o100)
    if st.st_gid == gid:
        return bool(st.st_mode & 0o010)
    return bool(st.st_mode & 0o001)


def _reachable(path: str, uid: int, gid: int) -> bool:
    """Whether ``uid``/``gid`` may traverse every ancestor of ``path`` and list ``path`` itself."""
    parts = path.strip("/").split("/")
    for i in range(1, len(parts) + 1):
        if not _traversable("/" + "/".join(parts[:i]), uid, gid):
            return False
    try:
        st = os.stat(path)
    except OSError:
        return False
    bit = 0o400 if st.st_uid == uid else (0o040 if st.st_gid == gid else 0o004)
    return bool(st.st_mode & bit)


def _minimal(roots) -> list:
    out: list = []
    for r in sorted({os.path.realpath(r) for r in roots if r and os.path.isdir(r)}, key=len):
        if not any(r == o or r.startswith(o.rstrip("/") + "/") for o in out):
            out.append(r)
    return out


def _expose(ctypes, libc, roots, uid: int, gid: int, workdir: str) -> list:
    """Make each read root reachable for ``uid`` when an ancestor is not traversable for it.

    Over the topmost blocking ancestor a small tmpfs is mounted (which also hides everything else
    there) and each root below it is bind-mounted back, read-only. Needs ``CAP_SYS_ADMIN`` in a
    private mount namespace. Returns what was done, for the record.
    """
    blocked: dict = {}
    for r in _minimal(roots):
        parts = r.strip("/").split("/")
        for i in range(1, len(parts)):
            anc = "/" + "/".join(parts[:i])
            if not _traversable(anc, uid, gid):
                if not (workdir == anc or workdir.startswith(anc + "/")):
                    blocked.setdefault(anc, []).append(r)
                break
    done = []
    for anc, below in blocked.items():
        fds = [(r, os.open(r, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)) for r in below]
        try:
            if _mount(ctypes, libc, "tmpfs", anc, "tmpfs", _MS_NOSUID | _MS_NODEV, "size=64k,nr_inodes=256,mode=0755"):
                continue
            for r, fd in fds:
                os.makedirs(r, mode=0o755, exist_ok=True)
                if _mount(ctypes, libc, f"/proc/self/fd/{fd}", r, None, _MS_BIND | _MS_REC) is None:
                    _mount(ctypes, libc, None, r, None, _MS_REMOUNT | _MS_BIND | _MS_RDONLY | _MS_NOSUID | _MS_NODEV)
                    done.append(r)
        finally:
            for _, fd in fds:
                os.close(fd)
    return done


def _drop_caps(ctypes, libc) -> bool:
    import platform

    nr = _SYS_CAPSET.get(platform.machine())
    if nr is None:
        return False
    header = ctypes.create_string_buffer(struct.pack("=Ii", 0x20080522, 0))  # _LINUX_CAPABILITY_VERSION_3
    data = ctypes.create_string_buffer(24)  # two zeroed {effective, permitted, inheritable}
    return libc.syscall(nr, header, data) == 0


def mapped_library_dirs() -> list:
    """Directories of the shared libraries mapped into this process (read from /proc/self/maps)."""
    dirs = set()
    try:
        with open("/proc/self/maps") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6 and ".so" in parts[5]:
                    dirs.add(os.path.dirname(os.path.realpath(parts[5].strip())))
    except OSError:
        pass
    return sorted(dirs)


def enter_box(workdir: str, *, uid: int = 65534, gid: int = 65534, disk_bytes: int = 64 << 20,
              disk_files: int = 2048, read_roots=()) -> dict:
    """Isolate the calling (single-threaded) process; returns ``{layer: description or False}``.

    With a private mount namespace, ``/proc`` is covered by an empty read-only tmpfs: read what is
    needed from it (:func:`mapped_library_dirs`) before calling this.

    ``workdir`` must be the current directory; it is re-entered after the tmpfs is mounted on it.
    """
    layers: dict = {"identity": False, "no_new_privs": False, "mount_ns": False, "net_ns": False,
                    "ipc_ns": False, "disk_quota": False}
    if not sys.platform.startswith("linux"):
        return layers
    try:
        ctypes, libc = _libc()
    except OSError:  # pragma: no cover - no libc to load
        return layers
    notes = []
    root = os.geteuid() == 0
    my_uid, my_gid = os.geteuid(), os.getegid()
    admin = False
    if root:
        if libc.unshare(_CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS) == 0:
            admin = True
        else:
            notes.append(f"unshare: {_err(ctypes)}")
    else:
        if libc.unshare(_CLONE_NEWUSER | _CLONE_NEWNS | _CLONE_NEWNET | _CLONE_NEWIPC | _CLONE_NEWUTS) == 0:
            try:
                for name, text in (("setgroups", "deny"), ("uid_map", f"{my_uid} {my_uid} 1\n"),
                                   ("gid_map", f"{my_gid} {my_gid} 1\n")):
                    with open(f"/proc/self/{name}", "w") as f:
                        f.write(text)
                admin = True
                layers["identity"] = f"user namespace (uid {my_uid})"
            except OSError as exc:
                notes.append(f"user namespace maps: {exc}")
        else:
            notes.append(f"unshare(user): {_err(ctypes)}")
    if admin:
        layers["net_ns"] = layers["ipc_ns"] = True
        if _mount(ctypes, libc, None, "/", None, _MS_REC | _MS_PRIVATE) is None:
            layers["mount_ns"] = True
            tuid, tgid = (uid, gid) if root else (my_uid, my_gid)
            opts = f"size={int(disk_bytes)},nr_inodes={int(disk_files)},mode=0700,uid={tuid},gid={tgid}"
            err = _mount(ctypes, libc, "tmpfs", workdir, "tmpfs", _MS_NOSUID | _MS_NODEV | _MS_NOEXEC, opts)
            if err is None:
                os.chdir(workdir)
                layers["disk_quota"] = f"tmpfs {int(disk_bytes)} bytes, {int(disk_files)} inodes"
            else:
                notes.append(f"tmpfs: {err}")
            if root:
                exposed = _expose(ctypes, libc, read_roots, uid, gid, workdir)
                if exposed:
                    layers["exposed"] = exposed
            # other processes' /proc entries (the harness's environ): an empty read-only tmpfs over /proc
            err = _mount(ctypes, libc, "tmpfs", "/proc", "tmpfs", _MS_RDONLY | _MS_NOSUID | _MS_NODEV | _MS_NOEXEC,
                         "size=4k,nr_inodes=4,mode=0555")
            if err is None:
                layers["proc_hidden"] = True
            else:
                notes.append(f"hiding /proc: {err}")
        else:
            notes.append(f"private mounts: {_err(ctypes)}")
    if root:
        exposed_roots = set(layers.get("exposed", ()))
        unreachable = [r for r in _minimal(read_roots) if r not in exposed_roots and not _reachable(r, uid, gid)]
    if root and unreachable:
        # dropping to uid would leave the interpreter unable to import: keep root (other layers still apply)
        notes.append(f"identity kept: uid {uid} cannot read {', '.join(unreachable)} and no mount namespace "
                     "could expose it")
    elif root:
        if not layers["disk_quota"]:
            try:
                os.chown(workdir, uid, gid)
            except OSError as exc:
                notes.append(f"chown: {exc}")
        try:
            os.setgroups([])
            os.setresgid(gid, gid, gid)
            os.setresuid(uid, uid, uid)
            layers["identity"] = f"uid {uid} gid {gid}"
        except OSError as exc:  # pragma: no cover - root without CAP_SETUID
            notes.append(f"identity: {exc}")
    if layers["identity"] and not _drop_caps(ctypes, libc):
        notes.append("capset failed")
    import resource

    for lim in ("RLIMIT_NICE", "RLIMIT_RTPRIO"):
        if hasattr(resource, lim):
            try:
                resource.setrlimit(getattr(resource, lim), (0, 0))
            except (ValueError, OSError) as exc:  # pragma: no cover
                notes.append(f"{lim}: {exc}")
    if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0:
        layers["no_new_privs"] = True
    libc.prctl(_PR_SET_DUMPABLE, 0, 0, 0, 0)
    # credential changes clear the parent-death signal: set it (again) last
    libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
    if notes:
        layers["notes"] = "; ".join(notes)
    return layers


def die_with_parent(ppid: int) -> None:
    """Ask for SIGKILL when the parent dies; exit at once when ``ppid`` is already gone."""
    if sys.platform.startswith("linux"):
        try:
            _, libc = _libc()
            libc.prctl(_PR_SET_PDEATHSIG, 9, 0, 0, 0)
        except OSError:  # pragma: no cover
            pass
    if os.getppid() != ppid:
        os._exit(71)


def landlock_abi() -> int:
    """The kernel's Landlock ABI version (0 when unavailable)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        _, libc = _libc()
    except OSError:  # pragma: no cover
        return 0
    v = libc.syscall(_SYS_LANDLOCK_CREATE, None, 0, _LANDLOCK_CREATE_RULESET_VERSION)
    return int(v) if v > 0 else 0


def restrict_fs(read_dirs, read_files, rw_dirs, rw_files=(), list_dirs=()) -> dict:
    """Apply a Landlock domain to the calling thread (and its future children).

    Reading (files and directory listings) is allowed beneath ``read_dirs`` and of ``read_files``,
    everything beneath ``rw_dirs``, reading/writing of ``rw_files`` and listing (names only) of the
    directories beneath ``list_dirs``; every other filesystem access
    this ABI can restrict is refused, as are TCP bind/connect (ABI >= 4), signals to and abstract unix
    sockets of processes outside the domain (ABI >= 6). Missing paths are skipped. Returns
    ``{"landlock_fs": "ABI n" or False, "landlock_net": bool, "landlock_scope": bool}``.
    """
    out: dict = {"landlock_fs": False, "landlock_net": False, "landlock_scope": False}
    abi = landlock_abi()
    if abi <= 0:
        return out
    ctypes, libc = _libc()
    fs = _FS_ABI1
    if abi >= 2:
        fs |= _FS_REFER
    if abi >= 3:
        fs |= _FS_TRUNCATE
    if abi >= 5:
        fs |= _FS_IOCTL_DEV
    net = (_NET_BIND_TCP | _NET_CONNECT_TCP) if abi >= 4 else 0
    scoped = (_SCOPE_ABSTRACT_UNIX | _SCOPE_SIGNAL) if abi >= 6 else 0
    if abi >= 6:
        attr = struct.pack("=QQQ", fs, net, scoped)
    elif abi >= 4:
        attr = struct.pack("=QQ", fs, net)
    else:
        attr = struct.pack("=Q", fs)
    buf = ctypes.create_string_buffer(attr, len(attr))
    rfd = libc.syscall(_SYS_LANDLOCK_CREATE, buf, ctypes.c_size_t(len(attr)), 0)
    if rfd < 0:
        return out
    try:
        read = _FS_READ_FILE | _FS_READ_DIR
        rules = [(p, _FS_READ_DIR) for p in list_dirs] + [(p, read) for p in read_dirs] + [(p, _FS_READ_FILE) for p in read_files]
        rules += [(p, fs) for p in rw_dirs] + [(p, _FS_READ_FILE | _FS_WRITE_FILE | (fs & _FS_TRUNCATE)) for p in rw_files]
        for path, access in rules:
            try:
                fd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    access &= _FS_FILE_ONLY
                access &= fs
                rule = ctypes.create_string_buffer(struct.pack("=Qi", access, fd), 12)
                if libc.syscall(_SYS_LANDLOCK_ADD_RULE, rfd, _LANDLOCK_RULE_PATH_BENEATH, rule, 0) != 0:
                    return out
            finally:
                os.close(fd)
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            return out
        if libc.syscall(_SYS_LANDLOCK_RESTRICT, rfd, 0) != 0:
            return out
    finally:
        os.close(rfd)
    out["landlock_fs"] = f"ABI {abi}"
    out["landlock_net"] = bool(net)
    out["landlock_scope"] = bool(scoped)
    return out
