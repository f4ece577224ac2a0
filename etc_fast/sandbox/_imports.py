"""The modules sandboxed code may import: held below the sandbox's runners so the zygote, which
preloads them, and the law and code runners that allow them read one list (no import circle)."""

from __future__ import annotations

__all__ = ["CODE_IMPORTS", "CODE_READ", "LAW_IMPORTS"]

#: Top-level modules a submission may import.
LAW_IMPORTS: tuple[str, ...] = ("math", "cmath", "numpy", "scipy")
#: Top-level modules the analysis code may import.
CODE_IMPORTS: tuple[str, ...] = (
    "math", "cmath", "numpy", "scipy", "sympy", "statistics", "itertools", "functools", "collections",
    "fractions", "decimal", "random", "json", "re", "string", "operator", "heapq", "bisect", "typing",
    "dataclasses", "warnings", "time", "datetime", "textwrap", "pprint", "copy", "numbers",
)
#: Packages whose directories the interpreter may read (sympy imports mpmath).
CODE_READ: tuple[str, ...] = (*CODE_IMPORTS, "mpmath")
