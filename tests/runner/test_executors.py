import importlib.util

import pytest

from etc_fast.runner import LocalExecutor, RayExecutor, TrialWorker, expand_grid
from tests.runner._fakes import FakeWorker


def _strip(rec):
    rec = dict(rec)
    rec.pop("wall_s")
    return rec


def test_local_pool_runs_every_spec_and_matches_inline(small_config):
    specs = expand_grid(small_config)[:8]
    worker = FakeWorker()
    got = dict((s.trial_id, r) for s, r in LocalExecutor(2).run(specs, worker))
    assert set(got) == {s.trial_id for s in specs}
    for s in specs:
        assert _strip(got[s.trial_id]) == _strip(worker(s.to_dict()))


def test_errors_crashes_and_timeouts_become_failed_records(small_config):
    specs = [s for s in expand_grid(small_config) if s.difficulty == "easy" and s.rollout == 0]
    # m0_gravity trials kill their worker process; hooke raises, except baseline_n: it hangs past the timeout
    hang = [s for s in specs if s.task == "m9_hooke_law" and s.config.name == "baseline_n"]
    worker = FakeWorker(crash_on=("m0_gravity",), raise_on=("m9_hooke_law",), trial_timeout_s=1.0)
    hang_worker = FakeWorker(hang_on=("m9_hooke_law",), trial_timeout_s=1.0)
    out = dict((s.trial_id, r) for s, r in LocalExecutor(2).run(specs, worker))
    assert set(out) == {s.trial_id for s in specs}
    for s in specs:
        rec = out[s.trial_id]
        assert rec["status"] == "failed"
        if s.task == "m0_gravity":
            assert rec["error"] == "worker process died while running this trial"
        else:
            assert rec["error"] == "RuntimeError: policy exploded on m9_hooke_law"
            assert "Traceback" in rec["events"][0]["traceback"]
    (s, rec), = list(LocalExecutor(1).run(hang, hang_worker))
    assert rec["status"] == "failed" and "trial_timeout_s = 1 s" in rec["error"]


def test_crash_does_not_fail_innocent_trials(small_config, tmp_path):
    all_specs = expand_grid(small_config)
    m0 = [s for s in all_specs if s.task == "m0_gravity"][:2]
    m9 = [s for s in all_specs if s.task == "m9_hooke_law"][:4]
    specs = [m9[0], m0[0], m9[1], m9[2], m0[1], m9[3]]
    crashing = {s.trial_id for s in m0}
    worker = FakeWorker(crash_on=("m0_gravity",), sleep_s=0.05)
    out = dict((s.trial_id, r) for s, r in LocalExecutor(2).run(specs, worker))
    assert set(out) == {s.trial_id for s in specs}
    for tid, rec in out.items():
        assert (rec["status"] == "failed") == (tid in crashing)


@pytest.mark.skipif(importlib.util.find_spec("ray") is None, reason="ray is not installed")
def test_ray_and_local_records_identical(small_config):
    # real protocol + symbolic policy + structural judge on cheap trials, plus one failing trial
    cheap = [s for s in expand_grid(small_config) if s.task == "m9_hooke_law" and s.difficulty == "easy"
             and s.rollout == 0 and s.config.name in ("baseline_n", "random_c")]
    boom = [s for s in expand_grid(small_config) if s.task == "m0_gravity"][:1]
    worker = FakeWorker(TrialWorker.from_config(small_config).policy_options, judge="structural",
                        raise_on=("m0_gravity",), real=True)
    specs = cheap + boom
    local = {s.trial_id: _strip(r) for s, r in LocalExecutor(2).run(specs, worker)}
    ray = {s.trial_id: _strip(r) for s, r in RayExecutor(2).run(specs, worker)}
    for rec in list(local.values()) + list(ray.values()):
        for ev in rec["events"]:
            if isinstance(ev, dict):
                ev.pop("traceback", None)  # file paths / frames differ between executors
    assert [local[s.trial_id]["status"] == "failed" for s in specs] == [False, False, True]
    assert all(local[s.trial_id]["final_source"] for s in cheap)
    assert ray == local


def test_the_ray_driver_keeps_a_window_of_trials_in_flight():
    from etc_fast.runner._executors import _in_windows

    specs = list(range(10))  # stand-ins: the window only submits, waits and yields them
    inflight: dict = {}
    submitted, most = [], 0

    def submit(spec):
        submitted.append(spec)
        return f"ref{spec}"

    def wait(refs):
        nonlocal most
        most = max(most, len(refs))
        return refs[1:2] if len(refs) > 1 else refs  # finishes out of order, sometimes none ready
    got = list(_in_windows(specs, inflight, submit, wait, 3))
    assert submitted == specs and most == 3 and not inflight
    assert sorted(s for s, _ in got) == specs and all(ref == f"ref{s}" for s, ref in got)
    # a consumer that stops early leaves the unfinished trials in inflight, for the caller to cancel
    inflight = {}
    gen = _in_windows(specs, inflight, submit, lambda refs: refs[:1], 3)
    assert next(gen)[0] == 0
    gen.close()
    assert sorted(inflight.values()) == [1, 2]
