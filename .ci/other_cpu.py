"""Print shell assignments that make this machine compute as a narrower CPU would.

NumPy picks its SIMD code paths at run time; ``NPY_DISABLE_CPU_FEATURES`` turns the widest ones off.
Numba compiles for the host CPU; ``NUMBA_CPU_NAME`` makes it compile for an older one. On an AVX-512
machine the result computes as an AVX2 machine does; on an AVX2 machine, as an SSE4 machine. Used by
``.ci/run`` to run the sampling, task and kernel tests a second time.
"""

from __future__ import annotations

import platform
import shlex

from numpy._core._multiarray_umath import __cpu_dispatch__, __cpu_features__

enabled = [name for name in __cpu_dispatch__ if __cpu_features__.get(name)]
levels = [name for name in enabled if name.startswith("X86_V")]
if levels:  # x86-64: drop the widest microarchitecture level and every target above it
    widest = max(levels)
    drop = [name for name in __cpu_dispatch__[__cpu_dispatch__.index(widest):] if __cpu_features__.get(name)]
    numba_cpu = {"X86_V4": "haswell", "X86_V3": "nehalem"}.get(widest, "")
else:  # other architectures: fall back to the build's baseline
    drop, numba_cpu = enabled, ""
print(f"export NPY_DISABLE_CPU_FEATURES={shlex.quote(' '.join(drop))}")
if numba_cpu and platform.machine() in ("x86_64", "AMD64"):
    print(f"export NUMBA_CPU_NAME={numba_cpu}")
