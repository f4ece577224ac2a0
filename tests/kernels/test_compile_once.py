"""Two processes needing the same cached kernel compile it once: the second waits, then loads it."""

from __future__ import annotations

import fcntl
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

from kernels import _once
from tests.kernels._jit_checks import needs_jit

ROOT = Path(__file__).resolve().parents[2]

MODULE = """
import numpy as np
from numba import njit


@njit(cache=True)
def total(x):
    s = 0.0
    for v in x:
        s += v * v
    return s
"""

# One process of the race. ROLE "first" calls the kernel once the second has said it is ready
# (READY file) and stalls 3 s inside its compilation, after saying so (STARTED file); ROLE "second"
# starts its call only once the first is compiling. GUARD says
# whether the kernel is guarded by the compile lock. Prints what this process compiled and waited.
WORKER = """
import json, os, sys, time
from pathlib import Path
sys.path.insert(0, os.environ["MODDIR"])
import numpy as np
from numba import njit
from numba.core import event
import racemod
from kernels._once import WAIT_EVENT, guard_dispatcher

role, started, ready = os.environ["ROLE"], Path(os.environ["STARTED"]), Path(os.environ["READY"])
if os.environ["GUARD"] == "1":
    assert guard_dispatcher(racemod.total)
compiled, waited = [], []

class Compiles(event.Listener):
    def on_start(self, ev):
        if ev.data["dispatcher"] is racemod.total and role == "first":
            started.touch()
            time.sleep(3.0)
    def on_end(self, ev):
        if ev.data["dispatcher"] is racemod.total:
            compiled.append(1)

class Waits(event.Listener):
    def on_start(self, ev):
        waited.append(1)
    def on_end(self, ev):
        pass

njit(lambda v: v + 1)(1)  # set up Numba's compiler here, before the race, so both reach it at once
event.register("numba:compile", Compiles())
event.register(WAIT_EVENT, Waits())

def wait_for(path, what):
    deadline = time.monotonic() + 120
    while not path.exists():
        assert time.monotonic() < deadline, what
        time.sleep(0.01)

if role == "solo":
    pass
elif role == "second":
    ready.touch()
    wait_for(started, "the first process never started compiling")
else:
    wait_for(ready, "the second process never got ready")
value = racemod.total(np.arange(4.0))
hits = sum(racemod.total._cache_hits.values())
print(json.dumps({"compiled": len(compiled), "waited": len(waited), "hits": hits, "value": value}))
"""


def _env(tmp_path: Path, guard: bool) -> dict[str, str]:
    moddir = tmp_path / "mod"
    moddir.mkdir(exist_ok=True)
    (moddir / "racemod.py").write_text(textwrap.dedent(MODULE))
    return dict(os.environ, MODDIR=str(moddir), STARTED=str(tmp_path / "started"), READY=str(tmp_path / "ready"),
                GUARD="1" if guard else "0", NUMBA_CACHE_DIR=str(tmp_path / "cache"), PYTHONPATH=str(ROOT))


def _solo(env: dict[str, str]) -> dict:
    out = subprocess.run([sys.executable, "-c", WORKER], env=dict(env, ROLE="solo"), capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout.strip().splitlines()[-1])


def _race(tmp_path: Path, guard: bool) -> tuple[dict, dict]:
    """Run the two processes of the race on a fresh cache; their reports (first, second)."""
    env = _env(tmp_path, guard)
    procs = [
        subprocess.Popen([sys.executable, "-c", WORKER], env=dict(env, ROLE=role), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
        for role in ("first", "second")
    ]
    reports = []
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err
        reports.append(json.loads(out.strip().splitlines()[-1]))
    return reports[0], reports[1]


@needs_jit
def test_second_process_loads_what_the_first_compiles(tmp_path: Path) -> None:
    first, second = _race(tmp_path, guard=True)
    assert first["compiled"] == 1 and first["waited"] == 0
    assert second["compiled"] == 0 and second["waited"] == 1 and second["hits"] == 1
    assert first["value"] == second["value"] == 14.0


@needs_jit
def test_unguarded_processes_both_compile(tmp_path: Path) -> None:
    """The control: without the lock the second process compiles the same kernel again."""
    first, second = _race(tmp_path, guard=False)
    assert first["compiled"] == 1 and second["compiled"] == 1 and second["waited"] == 0


@needs_jit
def test_a_cached_specialization_loads_while_another_process_holds_the_lock(tmp_path: Path) -> None:
    """On a warm cache nobody waits: a process loading a listed specialization takes no lock."""
    env = _env(tmp_path, guard=True)
    assert _solo(env)["compiled"] == 1  # fills the cache
    (lock,) = (tmp_path / "cache").rglob("racemod.total-*.lock")
    with open(lock, "a") as held:  # as if another process were compiling or loading it now
        fcntl.flock(held, fcntl.LOCK_EX)
        report = _solo(env)
    assert report == {"compiled": 0, "waited": 0, "hits": 1, "value": 14.0}


@needs_jit
def test_every_cached_kernel_is_guarded() -> None:
    import kernels.lm
    import kernels.programs

    assert _once.guard_package() > 100
    for disp in (kernels.programs._evaluate_programs, kernels.lm.__dict__[next(
            n for n, v in vars(kernels.lm).items() if hasattr(v, "py_func") and v.py_func.__module__ == "kernels.lm")]):
        assert getattr(disp, "_kernels_compile_once", False)
        path = _once.lock_path(disp)
        assert path is not None and path.endswith(".lock")
        assert Path(path).parent == Path(disp._cache._cache_path)


def test_unusable_lock_file_compiles_unguarded(tmp_path: Path) -> None:
    """Where the lock file cannot be created (here its folder would sit under a plain file), the
    compilation goes on without the lock instead of failing."""
    (tmp_path / "plain").write_text("x")
    ran = False
    with _once._exclusive(str(tmp_path / "plain" / "sub" / "f.lock")):
        ran = True
    assert ran
