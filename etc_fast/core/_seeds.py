"""Seeds derived from integers, the same on every machine and in every process."""

from __future__ import annotations

import numpy as np


def derive_seed(*parts: int) -> int:
    """A 32-bit seed derived from integers (stable across machines and processes)."""
    return int(np.random.SeedSequence([int(p) for p in parts]).generate_state(1, dtype=np.uint32)[0])
