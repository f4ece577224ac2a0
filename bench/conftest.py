"""Benchmarks: every kernel as a ``[numba]`` and a ``[numpy]`` variant in one group.

Run with ``pytest bench --benchmark-only``. Compile time is excluded: each benchmark calls the
kernel once before timing.
"""
