"""How the report writes numbers, laws and task names for a reader.

One number formatter serves every Markdown table of ``report.md`` and ``power.md``: a number keeps its
magnitude (an RMSLE of 1e-15 reads ``1.0e-15``, never ``0.000``). Submitted laws are shown as the
expression their function returns, and a custom task by its name, not by the path of its file.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable
from pathlib import Path

__all__ = ["format_number", "SCI_BELOW", "SCI_FROM", "law_expression_text", "task_labels", "task_label"]

#: Non-zero magnitudes below this are written in scientific notation.
SCI_BELOW = 1e-3
#: Magnitudes from this on are written in scientific notation.
SCI_FROM = 1e5


def format_number(v: float | int | bool | None, decimals: int | None = None) -> str:
    """A number as a table shows it, keeping its magnitude.

    - ``None`` -> ``–``; booleans -> ``yes``/``no``; integers as they are; ``nan``, ``inf``, ``-inf``.
    - A non-zero magnitude below :data:`SCI_BELOW` or from :data:`SCI_FROM` on: scientific notation
      with two significant digits (``1.0e-15``, ``2.5e+06``).
    - Otherwise fixed notation: with ``decimals`` given, that many decimals, or as many as two
      significant digits need where those decimals would move the value by more than 5% (``0.05``
      stays ``0.05`` at 2 decimals, ``0.0012`` reads ``0.0012`` at 3); without, three significant
      digits (``0.0123``, ``1.50``, ``12.3``, ``123``).
    - Exactly zero: ``0`` (so ``0.000`` never stands for a small number rounded away).
    """
    if v is None:
        return "–"
    if isinstance(v, bool):
        return "yes" if v else "no"
    if isinstance(v, int):
        return str(v)
    x = float(v)
    if math.isnan(x):
        return "nan"
    if math.isinf(x):
        return "inf" if x > 0 else "-inf"
    if x == 0.0:
        return "0"
    a = abs(x)
    if a < SCI_BELOW or a >= SCI_FROM:
        return f"{x:.1e}"
    exponent = math.floor(math.log10(a))
    if decimals is None:
        n = max(0, 2 - exponent)
    else:  # the column's decimals, unless they would move the value by more than 5% (under two digits)
        n = decimals if abs(round(x, decimals) - x) <= 0.05 * a else max(decimals, 1 - exponent)
    return f"{round(x, n) + 0.0:.{n}f}"  # + 0.0 turns -0.0 into 0.0


def law_expression_text(source: str | None, *, limit: int = 240) -> str | None:
    """The law a ``discovered_law`` source computes, for a table cell.

    A function whose body (imports and docstring aside) is one ``return`` gives the returned
    expression (``6.674e-05 * mass1 * mass2 / distance ** 1.5``); any other source gives its
    non-blank lines joined by ``; ``. Text over ``limit`` characters is cut with ``…``. ``None``
    or blank source gives ``None``.
    """
    if source is None or not source.strip():
        return None
    text = None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        tree = None
    if tree is not None and len(tree.body) == 1 and isinstance(tree.body[0], ast.FunctionDef):
        body = [s for s in tree.body[0].body if not isinstance(s, (ast.Import, ast.ImportFrom))
                and not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str))]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            text = ast.unparse(body[0].value)
    if text is None:
        text = "; ".join(line.strip() for line in source.splitlines() if line.strip())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def task_label(task: str) -> str:
    """A task's name for a reader: a module name as it is; a custom task file by the ``name:`` it
    declares (its file stem when the file cannot be read here)."""
    from etc_fast.tasks import get_task, is_custom_task

    if not is_custom_task(task):
        return task
    try:
        return get_task(task).name
    except Exception:  # noqa: BLE001 - a moved or damaged task file still has a readable stem
        return Path(task).stem


def task_labels(tasks: Iterable[str]) -> dict[str, str]:
    """:func:`task_label` of each distinct task; where two tasks would read the same, both keep
    their stored text (a path), so a table never merges two tasks under one name."""
    distinct = list(dict.fromkeys(tasks))
    labels = {t: task_label(t) for t in distinct}
    seen: dict[str, int] = {}
    for label in labels.values():
        seen[label] = seen.get(label, 0) + 1
    return {t: (label if seen[label] == 1 else t) for t, label in labels.items()}
