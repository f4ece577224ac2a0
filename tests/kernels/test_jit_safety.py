"""Every compiled function in ``kernels`` keeps IEEE NaN/Inf semantics and releases the GIL."""

from __future__ import annotations

import importlib
import pkgutil

from numba.core.registry import CPUDispatcher

import kernels
from tests.kernels._jit_checks import assert_safe_jit_options, needs_jit


def _dispatchers():
    for info in pkgutil.iter_modules(kernels.__path__):
        module = importlib.import_module(f"kernels.{info.name}")
        for name, obj in vars(module).items():
            if isinstance(obj, CPUDispatcher) and obj.py_func.__module__ == module.__name__:
                yield f"{module.__name__}.{name}", obj


@needs_jit
def test_every_kernel_keeps_nan_semantics():
    found = dict(_dispatchers())
    assert len(found) > 40  # the walk reaches the whole package
    for name, fn in found.items():
        try:
            assert_safe_jit_options(fn)
        except AssertionError as exc:
            raise AssertionError(f"{name}: unsafe JIT options {fn.targetoptions}") from exc
