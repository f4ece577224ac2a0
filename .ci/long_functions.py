"""List the functions longer than N lines (default 80) in etc_fast/ and kernels/, longest first.

    python .ci/long_functions.py [N]

A row is a place to look, not a verdict: split a function where named steps read better.
"""

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def long_functions(limit: int = 80) -> list[tuple[int, str, str]]:
    """``(lines, path:line, name)`` of every function (methods and nested ones too) over ``limit``."""
    rows = []
    for package in ("etc_fast", "kernels"):
        for path in sorted((ROOT / package).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
                if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    n = node.end_lineno - node.lineno + 1
                    if n > limit:
                        rows.append((n, f"{path.relative_to(ROOT)}:{node.lineno}", node.name))
    return sorted(rows, reverse=True)


if __name__ == "__main__":
    for n, where, name in long_functions(int(sys.argv[1]) if len(sys.argv) > 1 else 80):
        print(f"{n:5d}  {where}  {name}")
