"""Benchmarks: every kernel as a ``[numba]`` and a ``[numpy]`` variant in one group.

Run with ``pytest bench --benchmark-only``. Compile time is excluded: each benchmark calls the
kernel once before timing.

The benches run in one process: the parallel workers the test suite's options ask for
(``-n auto``, pyproject.toml) would time both variants on a shared machine, and pytest-benchmark
turns itself off under them.
"""

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """No parallel workers where the benches are collected (``-n auto`` becomes ``-n 0``)."""
    return 0
