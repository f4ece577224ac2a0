"""Which isolation layers the sandbox gets on this machine, and refusing to run without all of them."""

from __future__ import annotations

import os

import numpy as np

from etc_fast.sandbox._isolate import LAYERS
from etc_fast.sandbox._supervisor import ENV_REQUIRE

__all__ = ["IsolationError", "probe_layers", "require_isolation"]

_cache: dict | None = None


class IsolationError(RuntimeError):
    """The sandbox cannot have every isolation layer here and isolation is required."""


def probe_layers() -> dict:
    """Layers of one trivial sandboxed call (``{layer: description or False}``), cached per process."""
    global _cache
    if _cache is None:
        from etc_fast.sandbox._law import call_law

        call = call_law("def discovered_law(a):\n    return a\n", np.zeros((1, 1)), arg_names=["a"])
        _cache = {n: call.layers.get(n, False) for n in LAYERS}
        if call.layers.get("notes"):
            _cache["notes"] = call.layers["notes"]
    return dict(_cache)


def require_isolation() -> dict:
    """Make every later sandbox call in this process and its children refuse to run without every
    layer, and check now; returns the layers or raises :class:`IsolationError` naming what is missing."""
    os.environ[ENV_REQUIRE] = "1"
    layers = probe_layers()
    missing = [n for n in LAYERS if not layers.get(n)]
    if missing:
        note = f" ({layers['notes']})" if layers.get("notes") else ""
        raise IsolationError(f"sandbox isolation required but not available: {', '.join(missing)}{note}")
    return layers
