"""JSON encoding of records: dataclasses, NumPy arrays and non-finite floats as strict JSON."""

from __future__ import annotations

import dataclasses
from typing import Any

import numpy as np


def to_jsonable(obj: Any) -> Any:
    """Recursively convert dataclasses, numpy arrays/scalars, tuples, sets to JSON types.

    Non-finite floats become the strings ``"nan"``, ``"inf"``, ``"-inf"`` so files stay strict JSON.
    """
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {f.name: to_jsonable(getattr(obj, f.name)) for f in dataclasses.fields(obj)}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    if isinstance(obj, (set, frozenset)):
        return sorted(to_jsonable(v) for v in obj)
    if isinstance(obj, np.ndarray):
        return [to_jsonable(v) for v in obj.tolist()]
    if isinstance(obj, (np.bool_,)):
        return bool(obj)
    if isinstance(obj, (np.integer,)):
        return int(obj)
    if isinstance(obj, (float, np.floating)):
        f = float(obj)
        if f != f:
            return "nan"
        if f in (float("inf"), float("-inf")):
            return "inf" if f > 0 else "-inf"
        return f
    return obj


def from_json_float(v: Any) -> float:
    """Inverse of the float encoding of :func:`to_jsonable`."""
    if v is None:
        return float("nan")
    if isinstance(v, str):
        return float(v)
    return float(v)


#: Longest text field (raw reply, code, law source) kept in a record; the full length is recorded
#: beside it. Replies are parsed only up to this length too (``etc_fast.llm`` cuts them).
MAX_RECORDED_CHARS = 200_000


def clip_text(text: str, limit: int = MAX_RECORDED_CHARS) -> str:
    """``text`` cut to ``limit`` characters, with a note saying how much was left out."""
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n[... {len(text) - limit} more characters not recorded]"
