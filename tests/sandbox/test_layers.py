"""One test per kernel layer, with seccomp and the audit hook left out so that only the kernel acts.

Each test skips (with the reason) where the layer it needs is not available on this machine.
"""

from __future__ import annotations

import os
import socket
import sys

import numpy as np
import pytest

from etc_fast.sandbox import SandboxLimits, call_law
from etc_fast.sandbox._isolate import landlock_abi
from tests.sandbox._util import SHORT, kernel_only

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the kernel layers are Linux-only")
needs_landlock = pytest.mark.skipif(landlock_abi() < 1, reason="this kernel offers no Landlock")


def outcome(run) -> tuple[bool, str]:
    assert run.ok, run.error  # the worker itself returned
    return bool(run.reply["ok"]), str(run.reply.get("error"))


@linux
@needs_landlock
def test_cannot_open_etc_hostname():
    ok, err = outcome(kernel_only("open('/etc/hostname').read()\n"))
    assert not ok and "PermissionError" in err


@linux
def test_cannot_read_parent_environ():
    code = (
        "import os\nbad = []\n"
        "for pid in (os.getppid(), harness):\n"
        "    try:\n        bad.append(len(open(f'/proc/{pid}/environ', 'rb').read()))\n"
        "    except OSError as e:\n        pass\n"
        "print('read', bad)\n"
    )
    run = kernel_only(code, {"harness": os.getpid()})
    ok, err = outcome(run)
    assert ok, err
    assert "read []" in run.stdout


@linux
def test_cannot_connect_to_localhost_listener():
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(1)
    srv.settimeout(0.1)
    try:
        code = "import socket\ns = socket.create_connection(('127.0.0.1', port), timeout=2)\nprint('connected')\n"
        run = kernel_only(code, {"port": srv.getsockname()[1]})
        ok, err = outcome(run)
        assert not ok and "connected" not in run.stdout, err
        with pytest.raises(TimeoutError):
            srv.accept()
    finally:
        srv.close()


@linux
@needs_landlock
def test_cannot_write_outside_even_via_dir_fd_or_fchdir():
    import shutil
    import tempfile

    tmp_path = tempfile.mkdtemp(prefix="etc-canary-", dir="/tmp")
    os.chmod(tmp_path, 0o777)  # even a world-writable directory the sandbox user could reach
    code = (
        "import os\nhits = []\n"
        "fd = os.open(target, os.O_PATH | os.O_DIRECTORY)  # O_PATH: no read access needed\n"
        "for attempt in ('dirfd', 'fchdir', 'mkdir'):\n"
        "    try:\n"
        "        if attempt == 'dirfd':\n"
        "            os.close(os.open('via_dirfd', os.O_WRONLY | os.O_CREAT, dir_fd=fd))\n"
        "        elif attempt == 'fchdir':\n"
        "            os.fchdir(fd)\n            open('via_fchdir', 'w').write('x')\n"
        "        else:\n            os.mkdir('via_mkdir', dir_fd=fd)\n"
        "        hits.append(attempt)\n"
        "    except OSError:\n        pass\n"
        "print('hits', hits)\n"
    )
    try:
        run = kernel_only(code, {"target": str(tmp_path)})
        ok, err = outcome(run)
        assert ok, err
        assert "hits []" in run.stdout
        assert os.listdir(tmp_path) == []
    finally:
        shutil.rmtree(tmp_path)


@linux
def test_cannot_raise_priority():
    code = (
        "import os\nraised = []\n"
        "try:\n    os.nice(-5)\n    raised.append('nice')\nexcept OSError:\n    pass\n"
        "try:\n    os.sched_setscheduler(0, os.SCHED_FIFO, os.sched_param(10))\n    raised.append('fifo')\n"
        "except OSError:\n    pass\n"
        "print('raised', raised, os.getpriority(os.PRIO_PROCESS, 0))\n"
    )
    run = kernel_only(code)
    ok, err = outcome(run)
    assert ok, err
    assert "raised []" in run.stdout


@linux
def test_cannot_exceed_disk_quota():
    limits = SandboxLimits(wall_s=10.0, cpu_s=5.0, memory_mb=512, disk_bytes=1 << 20, disk_files=64)
    code = (
        "import os\nwritten = 0\n"
        "try:\n"
        "    for i in range(40):\n"
        "        with open(f'f{i}', 'wb') as f:\n            f.write(b'x' * 100_000)\n"
        "        written += 100_000\n"
        "except OSError as e:\n    print('stopped', type(e).__name__)\n"
        "n = 0\n"
        "try:\n"
        "    for i in range(500):\n        os.mkdir(f'd{i}')\n        n += 1\n"
        "except OSError as e:\n    print('dirs stopped', n)\n"
        "print('written', written)\n"
    )
    run = kernel_only(code, limits=limits)
    if run.ok:  # the tmpfs quota: the writes failed inside the box
        assert run.reply["ok"], run.reply
        written = int(run.stdout.split("written")[1])
        assert written <= 1 << 20
        assert "dirs stopped" in run.stdout
    else:  # no tmpfs here: the supervisor's budget stopped the run
        assert "disk quota exceeded" in run.error or "file size limit" in run.error


@linux
def test_layers_are_recorded():
    r = call_law("def discovered_law(a):\n    return a\n", np.array([[1.0]]), arg_names=["a"], limits=SHORT)
    assert r.ok, r.error
    assert {"identity", "net_ns", "landlock_fs", "seccomp", "audit_hook"} <= set(r.layers)
    assert r.layers["audit_hook"] is True


def test_honest_scipy_special_law_scores_exactly():
    import scipy.special

    X = np.array([[0.5, 1.0], [1.5, 2.0], [3.25, 0.1]])
    src = (
        "def discovered_law(x, y):\n"
        "    import scipy.special\n    from scipy import constants\n    import cmath\n"
        "    return scipy.special.gamma(x) * scipy.special.erf(y) + constants.pi * 0.0 + cmath.sqrt(4).real\n"
    )
    r = call_law(src, X, arg_names=["x", "y"])
    assert r.ok, r.error
    expected = scipy.special.gamma(X[:, 0]) * scipy.special.erf(X[:, 1]) + 2.0
    np.testing.assert_allclose(r.values, expected, rtol=1e-14, atol=0)
