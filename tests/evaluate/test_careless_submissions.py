"""Submissions that misbehave in ways a careless (not hostile) author produces: each is invalid and
the reason says what happened."""

from __future__ import annotations

import pytest

from etc_fast.evaluate import evaluate_submission
from etc_fast.sandbox import SandboxLimits, run_code
from etc_fast.tasks import get_task

LIMITS = SandboxLimits(wall_s=20.0, cpu_s=10.0, memory_mb=1024, output_bytes=20_000)

RAISING_STR = '''\
def discovered_law(mass1, mass2, distance):
    class Odd(Exception):
        def __str__(self):
            raise RuntimeError("no message")
    raise Odd()
    return 1.0
'''

STR_NOT_TEXT = '''\
def discovered_law(mass1, mass2, distance):
    class Odd(ValueError):
        def __str__(self):
            return 42
    raise Odd()
    return 1.0
'''


@pytest.mark.parametrize("source", [RAISING_STR, STR_NOT_TEXT], ids=["raises", "returns-int"])
def test_exception_whose_str_fails_is_the_submissions_error(source):
    ev = evaluate_submission(source, get_task("m0_gravity"), limits=LIMITS)
    assert ev.valid is False
    assert "harness failure" not in ev.error
    assert "Odd" in ev.error and "message could not be produced" in ev.error and "at point 0" in ev.error


def test_analysis_exception_whose_str_fails():
    res = run_code("class Odd(Exception):\n    def __str__(self):\n        raise KeyError('x')\nraise Odd()\n", limits=LIMITS)
    assert res.ok is False and "harness failure" not in res.error and "Odd" in res.error


def test_oversized_submission_is_called_too_large(monkeypatch):
    from etc_fast.sandbox import _supervisor

    monkeypatch.setattr(_supervisor, "_MAX_JOB", 200_000)  # the real cap is 256 MiB; same code path
    padding = "#" + "x" * 300_000
    source = f"def discovered_law(mass1, mass2, distance):\n    {padding}\n    return mass1\n"
    ev = evaluate_submission(source, get_task("m0_gravity"), limits=LIMITS)
    assert ev.valid is False
    assert "submission is too large" in ev.error and "tamper" not in ev.error
    res = run_code("x = 1\n" + padding, limits=LIMITS)
    assert res.ok is False and "too large" in res.error
