"""Candidate pools over a system's control domain (scrambled Sobol, deterministic per seed)."""

from __future__ import annotations

import numpy as np

from etc_fast._portable import linear_uniform, log_uniform
from etc_fast.sampling import POOL_SIZE, pool_unit
from etc_fast.systems._spec import spec

__all__ = ["system_pool"]


def system_pool(
    module: str, system: str, seed: int, n: int = POOL_SIZE
) -> list[dict[str, float]]:
    """``n`` experiment requests over the system's pool domain (docs/guide/labs.md).

    Each pool control is a coordinate of a scrambled Sobol point (``etc_fast.sampling.pool_unit``,
    the vanilla pools' sampler) mapped to its domain on its scale, with exactly rounded operations
    (``etc_fast._portable``), so a seed gives the same requests on every machine. Controls the pool
    does not vary keep their fixed value; required controls are always present.

    Args:
        module, system: The system.
        seed: Pool seed (a trial's rollout).
        n: Pool size (a power of two).

    Returns:
        One request dict per point, keys in the spec's control order.
    """
    sp = spec(module, system)
    varied = sp.pool_controls
    U = pool_unit(len(varied), seed, n)
    cols = {}
    for j, c in enumerate(varied):
        u = U[:, j]
        if c.high == c.low:
            cols[c.key] = np.full(n, c.low)
        else:
            cols[c.key] = (
                log_uniform(u, c.low, c.high)
                if c.scale == "log"
                else linear_uniform(u, c.low, c.high)
            )
    out = []
    for i in range(n):
        req: dict[str, float] = {}
        for c in sp.controls:
            if c.key in cols:
                req[c.key] = float(cols[c.key][i])
            elif c.pool_value is not None:
                req[c.key] = c.pool_value
        out.append(req)
    return out
