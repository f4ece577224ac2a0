"""Deterministic point sets: candidate pools, evaluation grids and bootstrap probes.

* Candidate pool: ``n`` (default 2048 = 2**11) scrambled Sobol points, ``scipy.stats.qmc.Sobol``
  seeded with the pool seed (= rollout index), in the unit cube ``u``, mapped per variable
  (log: ``exp(ln a + u (ln b - ln a))``; linear: ``a + u (b - a)``).
* Evaluation grid: 5000 points per module from NumPy PCG64 seeded with the first 8 bytes
  (little-endian) of SHA-256 of ``"<grid_version>:<task name>"``; variables drawn in signature order
  (``n`` raw 64-bit outputs each, turned into doubles in [0, 1) by ``(raw >> 11) * 2**-53``), mapped
  log-uniformly or uniformly. Shared across models, configurations and difficulties; never shown to
  agents.

Both point sets are the same bits on every CPU and every supported NumPy/SciPy version: the unit
points are integer generator output scaled by powers of two, and the map to a domain uses only
exactly rounded operations (:mod:`etc_fast._portable`), never NumPy's SIMD ``exp``/``log``.
* Bootstrap probes: ``max(n_min, d + 1)`` points: the centre (u = 0.5), then each variable alone at
  u = 0.75, then each alone at u = 0.25 while more are needed.
"""

from __future__ import annotations

import hashlib
import warnings
from collections.abc import Sequence
from typing import Protocol

import numpy as np
from scipy.stats import qmc

from etc_fast._lru import LRU
from etc_fast._portable import unit_doubles

__all__ = [
    "GRID_VERSION",
    "POOL_SIZE",
    "GRID_SIZE",
    "grid_seed",
    "evaluation_grid",
    "candidate_pool",
    "pool_unit",
    "bootstrap_unit",
    "bootstrap_probes",
    "array_sha256",
    "rounded_sha256",
    "FINGERPRINT_DIGITS",
]

GRID_VERSION = "etc-grid-v1"
POOL_SIZE = 2048
GRID_SIZE = 5000


def array_sha256(a: np.ndarray) -> str:
    """SHA-256 of a float64 C-contiguous array's bytes, prefixed by its shape."""
    a = np.ascontiguousarray(a, dtype=np.float64)
    h = hashlib.sha256(repr(a.shape).encode())
    h.update(a.tobytes())
    return h.hexdigest()


#: Significant digits kept by :func:`rounded_sha256`.
FINGERPRINT_DIGITS = 9


def rounded_sha256(a: np.ndarray, digits: int = FINGERPRINT_DIGITS) -> str:
    """SHA-256 of values rounded to ``digits`` significant digits: a fingerprint machines can share.

    Values computed with transcendental functions (a law's truth, a submission's predictions) may
    differ in their last bits between CPUs; rounded to 9 digits they agree unless a value lies within
    a few ulps of a rounding boundary (about one value in 10**7 per ulp of difference). Each value is
    formatted by Python's correctly rounded float formatting (``nan``, ``inf`` spelled out); the shape
    comes first.
    """
    a = np.ascontiguousarray(a, dtype=np.float64)
    # formatting is the cost (about 2 ms for an evaluation grid); a study hashes the same truth and
    # the same predictions many times, so the result is kept by the array's exact bytes
    key = (a.shape, int(digits), hashlib.sha256(a.tobytes()).digest())
    hit = _ROUNDED.get(key)
    if hit is not None:
        return hit
    h = hashlib.sha256(repr(a.shape).encode())
    fmt = f"%.{int(digits) - 1}e"
    h.update(",".join(fmt % v for v in a.ravel().tolist()).encode())
    out = h.hexdigest()
    _ROUNDED.put(key, out)
    return out


_ROUNDED_KEPT = 4096
_ROUNDED: LRU[tuple, str] = LRU(_ROUNDED_KEPT)


def grid_seed(task_name: str, grid_version: str = GRID_VERSION) -> int:
    """First 8 bytes (little-endian) of SHA-256 of ``"<grid_version>:<task name>"``."""
    digest = hashlib.sha256(f"{grid_version}:{task_name}".encode()).digest()
    return int.from_bytes(digest[:8], "little")


class _Variable(Protocol):
    def from_unit(self, u: np.ndarray) -> np.ndarray: ...


class SampledTask(Protocol):
    """What sampling needs of a task (``etc_fast.tasks.Task`` has it): its module name, its
    variables (signature order, each mapping unit coordinates onto its domain), their number, and
    the unit cube's map onto the inputs."""

    @property
    def module(self) -> str: ...
    @property
    def variables(self) -> Sequence[_Variable]: ...
    @property
    def d(self) -> int: ...
    def unit_to_inputs(self, U: np.ndarray) -> np.ndarray: ...


def evaluation_grid(task: SampledTask, n: int = GRID_SIZE, grid_version: str = GRID_VERSION) -> np.ndarray:
    """The shared evaluation grid of a task's module: float64[n, d] in signature order."""
    if n < 1:
        raise ValueError(f"grid size must be >= 1, got {n}")
    bitgen = np.random.PCG64(grid_seed(task.module, grid_version))
    return np.column_stack([v.from_unit(unit_doubles(bitgen, n)) for v in task.variables])


def pool_unit(d: int, seed: int, n: int = POOL_SIZE) -> np.ndarray:
    """Scrambled Sobol points in [0, 1)^d: float64[n, d]. ``n`` should be a power of two."""
    if d < 1:
        raise ValueError(f"pool dimension must be >= 1, got {d}")
    if n < 1:
        raise ValueError(f"pool size must be >= 1, got {n}")
    sampler = qmc.Sobol(d=d, scramble=True, seed=int(seed))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)  # balance warning for non powers of two
        return np.ascontiguousarray(sampler.random(n), dtype=np.float64)


def candidate_pool(task: SampledTask, seed: int, n: int = POOL_SIZE) -> np.ndarray:
    """Candidate pool in task coordinates: float64[n, d] (see :func:`pool_unit`)."""
    return task.unit_to_inputs(pool_unit(task.d, seed, n))


def bootstrap_unit(d: int, n_min: int = 3) -> np.ndarray:
    """Unit-cube bootstrap probes: float64[max(n_min, d + 1), d]."""
    n = max(int(n_min), d + 1)
    rows = [np.full(d, 0.5)]
    for frac in (0.75, 0.25):
        for k in range(d):
            if len(rows) >= n:
                break
            r = np.full(d, 0.5)
            r[k] = frac
            rows.append(r)
    while len(rows) < n:  # more than 2d + 1 requested: cycle through farther one-at-a-time moves
        k = (len(rows) - 1) % d
        frac = 0.9 if ((len(rows) - 1) // d) % 2 == 0 else 0.1
        r = np.full(d, 0.5)
        r[k] = frac
        rows.append(r)
    return np.array(rows[:n], dtype=np.float64)


def bootstrap_probes(task: SampledTask, n_min: int = 3) -> tuple[np.ndarray, np.ndarray]:
    """Bootstrap probes of a task: ``(U, X)``, unit and task coordinates, each float64[n, d]."""
    U = bootstrap_unit(task.d, n_min)
    return U, task.unit_to_inputs(U)
