"""Checks shared by the kernel tests: the compiled kernels keep IEEE NaN/Inf semantics."""

from __future__ import annotations

import os

import pytest

JIT_OFF = os.environ.get("NUMBA_DISABLE_JIT") == "1"
"""The JIT is disabled for this run (kernels run as plain Python)."""

needs_jit = pytest.mark.skipif(JIT_OFF, reason="JIT off")
"""Skip a test that inspects compiled-kernel options when the JIT is disabled."""


def assert_safe_jit_options(*kernels) -> None:
    """Each kernel keeps NaN/Inf semantics (no ``nnan``/``ninf`` fastmath), releases the GIL, runs serially."""
    for fn in kernels:
        opts = fn.targetoptions
        assert "nnan" not in opts["fastmath"] and "ninf" not in opts["fastmath"], fn
        assert opts["nogil"] and not opts.get("parallel", False), fn
