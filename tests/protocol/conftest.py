"""Protocol test fixtures: short sandbox limits and a trial player."""

from __future__ import annotations

import pytest

from etc_fast.policies.scripted import ScriptedPolicy
from etc_fast.protocol import TrialRecord, TrialSpec, run_trial


@pytest.fixture(scope="session")
def limits():
    from etc_fast.sandbox import SandboxLimits

    # CPU time stays short; the wall clock is generous so that a loaded machine (a sandbox start waits
    # for the CPU) does not turn an honest analysis into a time-out and the record into another one.
    return SandboxLimits(wall_s=60.0, cpu_s=5.0, memory_mb=1024, output_bytes=20_000)


@pytest.fixture
def play(limits):
    """play(spec, actions) -> (record, policy); asserts the trial did not fail in the protocol."""

    def _play(spec: TrialSpec, actions, *, allow_failed: bool = False, judge=None) -> tuple[TrialRecord, ScriptedPolicy]:
        policy = actions if hasattr(actions, "act") else ScriptedPolicy(actions)
        rec = run_trial(spec, policy, judge=judge, limits=limits)
        if not allow_failed:
            assert rec.status != "failed", (rec.error, [e for e in rec.events if e.get("event") == "protocol_error"])
        return rec, policy

    return _play
