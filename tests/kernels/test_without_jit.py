"""The kernel tests also pass as plain Python (``NUMBA_DISABLE_JIT=1``).

With the JIT off every kernel runs as ordinary Python/NumPy, which checks that the kernels'
semantics do not depend on compilation and gives Python tracebacks and line coverage inside them.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TARGETS = ["tests/kernels", "tests/test_expr.py", "tests/acquisition/test_acquisition.py"]


@pytest.mark.skipif(os.environ.get("NUMBA_DISABLE_JIT") == "1", reason="already running without the JIT")
def test_kernel_suite_passes_without_jit():
    env = dict(os.environ, NUMBA_DISABLE_JIT="1")
    proc = subprocess.run(
        # in this process (-n 0): the test already runs beside the suite's other worker
        [sys.executable, "-m", "pytest", "-q", "-n", "0", "-p", "no:cacheprovider", *TARGETS],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=900,
    )
    tail = "\n".join(proc.stdout.splitlines()[-25:])
    assert proc.returncode == 0, f"kernel tests failed with NUMBA_DISABLE_JIT=1:\n{tail}\n{proc.stderr[-2000:]}"
    assert " passed" in tail
