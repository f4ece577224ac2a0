"""``kernels`` stands alone: it imports NumPy and Numba only, never etc_fast."""

import ast
import subprocess
import sys
from pathlib import Path

KERNELS = Path(__file__).resolve().parents[2] / "kernels"
# typing: the TypedDict of the JIT options (kernels/_jit.py), so `@njit(**JIT)` type-checks
ALLOWED = {"numpy", "numba", "kernels", "math", "hashlib", "pathlib", "importlib", "__future__", "typing", "functools", "ast", "json"}  # standard-library modules the cache guard (_jit.py) reads sources and stamps with


def test_kernel_sources_import_only_numpy_and_numba():
    for path in sorted(KERNELS.glob("*.py")):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [node.module or ""] if node.level == 0 else ["kernels"]
            else:
                continue
            for name in names:
                assert name.split(".")[0] in ALLOWED, f"{path.name}:{node.lineno} imports {name}"


def test_import_kernels_loads_no_etc_fast():
    code = "import sys, kernels; bad = [m for m in sys.modules if m.split('.')[0] in ('etc_fast', 'polars', 'openai')]; print(bad)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=KERNELS.parent, timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[]"
