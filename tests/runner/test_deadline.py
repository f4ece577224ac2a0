"""The trial deadline (``_executors._deadline``): a timeout that cannot be lost, and JIT time not counted."""

from __future__ import annotations

import dataclasses
import gc
import sys
import time
import weakref

import numba
import pytest
from numba.core import event

from etc_fast.runner import _executors
from etc_fast.runner._executors import TrialTimeout, _deadline


class _Obj:
    pass


def _busy(seconds: float) -> None:
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        pass


def test_a_timeout_swallowed_by_a_weakref_callback_fires_again(monkeypatch):
    # The first alarm lands while Python runs a weakref callback (as in Numba's typing context
    # during compilation): Python hands it to sys.unraisablehook and drops it. The trial must
    # still end. The test takes the hook itself: pytest's own hook, interrupted by the refired
    # alarm, once failed the test with "Failed to process unraisable exception".
    monkeypatch.setattr(_executors, "REFIRE_S", 0.3)
    swallowed: list = []
    monkeypatch.setattr(sys, "unraisablehook", swallowed.append)  # one C call: not interruptible

    def callback(_ref):
        _busy(0.6)  # the deadline (0.2 s) passes in here

    t0 = time.monotonic()
    with pytest.raises(TrialTimeout), _deadline(0.2):
        o = _Obj()
        ref = weakref.ref(o, callback)  # noqa: F841 - kept alive so the callback runs
        del o
        gc.collect()
        _busy(5.0)
    assert time.monotonic() - t0 < 3.0
    assert any(isinstance(u.exc_value, TrialTimeout) for u in swallowed), swallowed


def test_jit_compilation_is_not_counted():
    # A compilation event (what Numba's dispatcher broadcasts around compiling a kernel) longer
    # than the deadline does not end the trial; the trial's own work afterwards is still limited.
    with _deadline(0.5):
        with event.trigger_event("numba:compile", data={}):
            with event.trigger_event("numba:compile", data={}):  # nested: a kernel's callee
                time.sleep(0.5)
            time.sleep(0.4)
        time.sleep(0.3)  # 0.3 s of the trial's own 0.5 s
    with pytest.raises(TrialTimeout), _deadline(0.5):
        with event.trigger_event("numba:compile", data={}):
            time.sleep(0.2)
        time.sleep(2.0)


def test_waiting_for_another_process_compilation_is_not_counted():
    # A worker blocked on a kernel's compile lock (kernels/_once.py) while another process compiles
    # it is in the same position as one compiling it: the wait does not end the trial either.
    from kernels._once import WAIT_EVENT

    with _deadline(0.5):
        with event.trigger_event(WAIT_EVENT, data={}):
            time.sleep(0.8)
        time.sleep(0.3)
    with pytest.raises(TrialTimeout), _deadline(0.5):
        with event.trigger_event(WAIT_EVENT, data={}):
            time.sleep(0.2)
        time.sleep(2.0)


def test_a_real_compilation_is_not_counted():
    def kernel(x):
        s = 0.0
        for i in range(x.shape[0]):
            s += x[i] * x[i]
        return s

    jitted = numba.njit(cache=False)(kernel)
    import numpy as np

    t0 = time.monotonic()
    with _deadline(0.01):
        jitted(np.ones(3))  # compiles here: 0.05 s at the fastest measured, far over the 0.01 s limit
    assert time.monotonic() - t0 > 0.01


def test_jit_allowance_is_bounded(monkeypatch):
    monkeypatch.setattr(_executors, "JIT_ALLOWANCE_S", 0.3)
    t0 = time.monotonic()
    with pytest.raises(TrialTimeout), _deadline(0.2), event.trigger_event("numba:compile", data={}):
        time.sleep(5.0)
    assert time.monotonic() - t0 < 2.0


@dataclasses.dataclass(frozen=True)
class _CompilingWorker(_executors.TrialWorker):
    def run_trial(self, spec):
        with event.trigger_event("numba:compile", data={}):
            time.sleep(1.0)
        raise RuntimeError("reached the end of the trial")


def test_worker_records_compilation_as_no_timeout(small_config):
    from etc_fast.runner import expand_grid

    spec = expand_grid(small_config)[0]
    rec = _CompilingWorker(trial_timeout_s=0.5)(spec.to_dict())
    assert rec["error"] == "RuntimeError: reached the end of the trial"
