"""The run starts the kernels' background warm-up (kernels/warmup.py) for local trials only, and stops it."""

from __future__ import annotations

import dataclasses
import io

import pytest

from etc_fast.runner import _run
from etc_fast.runner._executors import TrialWorker
from etc_fast.runner._grid import expand_grid
from etc_fast.runner._progress import Progress


class _Proc:
    def __init__(self) -> None:
        self.terminated = False

    def terminate(self) -> None:
        self.terminated = True


def test_warm_up_starts_for_local_trials_only(small_config, monkeypatch) -> None:
    import kernels.warmup

    started: list[_Proc] = []

    def start() -> _Proc:
        started.append(_Proc())
        return started[-1]

    monkeypatch.setattr(kernels.warmup, "start", start)
    specs = expand_grid(small_config)
    assert _run._start_warm_up(small_config, specs) is started[0]
    assert _run._start_warm_up(small_config, []) is None  # nothing to run: nothing to compile for
    ray = dataclasses.replace(small_config, executor="ray")
    assert _run._start_warm_up(ray, specs) is None  # Ray trials may run on other machines
    assert len(started) == 1


def test_the_run_stops_its_warm_up(small_config, monkeypatch) -> None:
    procs: list[_Proc] = []

    def fake_start(config, pending):
        procs.append(_Proc())
        return procs[-1]

    class _Executor:
        def run(self, specs, worker):
            assert procs and not procs[0].terminated  # started before the first trial
            raise KeyboardInterrupt  # the run stops early: the warm-up must stop all the same
            yield

    monkeypatch.setattr(_run, "_start_warm_up", fake_start)
    monkeypatch.setattr(_run, "create_executor", lambda *a, **k: _Executor())
    specs = expand_grid(small_config)
    progress = Progress(len(specs), stream=io.StringIO())
    with pytest.raises(KeyboardInterrupt):
        _run._run_pending(small_config, specs, TrialWorker.from_config(small_config), None, progress)
    assert len(procs) == 1 and procs[0].terminated
