"""The hostile corpus (tests/sandbox/hostile/, one attack per file), as root and as an unprivileged user.

Every attack must end invalid with a reason, or with the honest score its file names; and after the
whole corpus: the canary outside the box is unchanged, the fake key set in the harness's environment
appears in no output, no sandbox process is left, time and harness memory stayed bounded.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest
import scipy.special

from tests.sandbox._corpus_main import X, run_corpus
from tests.sandbox._util import FAKE_KEY, SHORT, load_corpus, sandbox_processes

REPO = Path(__file__).resolve().parents[2]
CANARY_TEXT = "canary: the harness's own file"
NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


@pytest.fixture()
def scene():
    d = tempfile.mkdtemp(prefix="etc-canary-", dir="/tmp")
    os.chmod(d, 0o777)
    Path(d, "canary.txt").write_text(CANARY_TEXT)
    os.chmod(Path(d, "canary.txt"), 0o666)
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)
    srv.settimeout(0.05)
    params = {"canary_dir": d, "harness_pid": os.getpid(), "port": srv.getsockname()[1],
              "laws": str(REPO / "etc_fast" / "laws" / "_table.py")}
    yield params, srv
    srv.close()
    shutil.rmtree(d, ignore_errors=True)


def check(results: dict, params: dict, srv) -> list:
    problems = []
    corpus = load_corpus()
    assert set(results) == set(corpus)
    for name, r in results.items():
        expect = getattr(corpus[name], "EXPECT", None)
        text = json.dumps(r)
        if FAKE_KEY in text:
            problems.append(f"{name}: the harness's key leaked")
        if "\x1b" in text or len(r["error"] or "") > 2300:
            problems.append(f"{name}: error not clipped/escaped ({len(r['error'] or '')} chars)")
        if r["wall_s"] > SHORT.wall_s + 5:
            problems.append(f"{name}: took {r['wall_s']:.1f} s")
        if expect is None:
            if r["ok"] or not r["error"]:
                problems.append(f"{name}: accepted: {r['values']}")
        elif expect == "gamma":
            if not r["ok"] or max(abs(a - b) for a, b in zip(r["values"], scipy.special.gamma(X[:, 0]))) > 1e-12:
                problems.append(f"{name}: honest law not scored: {r['error']}")
        elif not r["ok"] or r["values"] != [expect] * len(X):
            problems.append(f"{name}: expected {expect}, got {r['values']} ({r['error']})")
    if sorted(os.listdir(params["canary_dir"])) != ["canary.txt"]:
        problems.append(f"canary dir changed: {os.listdir(params['canary_dir'])}")
    if Path(params["canary_dir"], "canary.txt").read_text() != CANARY_TEXT:
        problems.append("canary file changed")
    if Path("/tmp/etc_closure_pwned").exists():
        problems.append("a process was started")
    import numpy

    if list(Path(numpy.__file__).parents[1].glob("zz_etc_pwned*")):
        problems.append(".pth file dropped into site-packages")
    try:
        srv.accept()
        problems.append("the listener got a connection")
    except TimeoutError:
        pass
    for _ in range(20):
        if not sandbox_processes():
            break
        time.sleep(0.1)
    else:
        problems.append(f"sandbox processes outlived the harness calls: {sandbox_processes()}")
    return problems


@pytest.mark.parametrize("full", [False, True], ids=["lean zygote", "full zygote"])
def test_corpus_as_root_or_current_user(scene, monkeypatch, full):
    params, srv = scene
    monkeypatch.setenv("OPENAI_API_KEY", FAKE_KEY)
    rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    results = json.loads(json.dumps(run_corpus(params, full=full)))
    grew_mb = (resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - rss0) / 1024
    problems = check(results, params, srv)
    assert grew_mb < 200, f"harness memory grew by {grew_mb:.0f} MB"
    assert not problems, "\n".join(problems)


def _python_for_nobody(shim: Path) -> str | None:
    """An interpreter user 65534 can run with NumPy/SciPy importable (sys.executable, or the system
    Python of the same version with this environment's site-packages)."""
    def works(py):
        try:
            r = subprocess.run([*NOBODY, py, "-c", "import numpy, scipy.special"], capture_output=True, timeout=60,
                               cwd="/tmp")
            return r.returncode == 0 and not r.stderr
        except (OSError, subprocess.TimeoutExpired):
            return False

    probe = subprocess.run([*NOBODY, "test", "-x", sys.executable], capture_output=True)
    if probe.returncode == 0 and works(sys.executable):
        return sys.executable
    system = shutil.which(f"python{sys.version_info[0]}.{sys.version_info[1]}", path="/usr/bin:/bin")
    site = next((p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p)), None)
    if not system or not site:
        return None
    ver = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    (shim / "bin").mkdir()
    (shim / "lib" / ver).mkdir(parents=True)
    (shim / "bin" / "python").symlink_to(system)
    (shim / "lib" / ver / "site-packages").symlink_to(site)
    (shim / "pyvenv.cfg").write_text(f"home = {os.path.dirname(system)}\ninclude-system-site-packages = false\n")
    for p in (shim, shim / "bin", shim / "lib", shim / "lib" / ver, shim / "pyvenv.cfg"):
        os.chmod(p, 0o755)
    py = str(shim / "bin" / "python")
    return py if works(py) else None


def _readable_copy(dest: Path) -> Path:
    """Copy the packages and the corpus where user 65534 can read them: the checkout itself may lie
    in a directory only root can enter (a clone under /root, as CI may make)."""
    root = Path(__file__).resolve().parents[2]
    skip = shutil.ignore_patterns("__pycache__", "*.pyc", "*.nbi", "*.nbc")
    for rel in ("etc_fast", "kernels", "tests/sandbox"):
        shutil.copytree(root / rel, dest / rel, ignore=skip)
    (dest / "tests" / "__init__.py").touch()
    for dirpath, _dirnames, filenames in os.walk(dest):
        os.chmod(dirpath, 0o755)
        for f in filenames:
            os.chmod(os.path.join(dirpath, f), 0o644)
    os.chmod(dest.parent, 0o755)
    return dest


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="setpriv and the kernel layers are Linux-only")
@pytest.mark.parametrize("full", [False, True], ids=["lean zygote", "full zygote"])
def test_corpus_as_unprivileged_user(scene, full):
    if os.geteuid() != 0:
        pytest.skip("not root: the suite already runs unprivileged (the test above)")
    if not shutil.which("setpriv"):
        pytest.skip("setpriv is not installed")
    shim = Path(tempfile.mkdtemp(prefix="etc-nobody-py-", dir="/tmp"))
    try:
        py = _python_for_nobody(shim)
        if py is None:
            pytest.skip("no Python with NumPy/SciPy that user 65534 can run")
        params, srv = scene
        main = _readable_copy(shim / "src") / "tests" / "sandbox" / "_corpus_main.py"
        env = {"PATH": "/usr/bin:/bin", "OPENAI_API_KEY": FAKE_KEY, "LANG": "C.UTF-8"}
        proc = subprocess.run([*NOBODY, py, str(main), json.dumps(params), *(["full"] if full else [])],
                              capture_output=True, text=True, timeout=300, cwd="/tmp", env=env)
    finally:
        shutil.rmtree(shim, ignore_errors=True)
    assert proc.returncode == 0, proc.stderr[-3000:]
    results = json.loads(proc.stdout)
    assert FAKE_KEY not in proc.stderr
    layers = next(iter(results.values()))["layers"]
    assert layers.get("identity"), layers  # a user namespace where the kernel allows one
    problems = check(results, params, srv)
    assert not problems, "\n".join(problems)
