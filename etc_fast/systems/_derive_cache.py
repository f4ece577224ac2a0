"""The derived law table of a growing record, re-deriving only the experiments added since the last call.

:func:`etc_fast.systems._derive.derive_law_table` derives every experiment on its own (its constant
law fit, uncertainty, prefix rule and effective inputs read that experiment's controls and series
only), so the table of ``n + k`` experiments is the table of the first ``n`` followed by the table
of the ``k`` new ones, value for value; ``tests/systems/test_planning.py`` checks that identity. A
trial's record only grows, and the table used to be derived again from scratch at every turn (a
baseline of ten turns derived 550 rows for a 100-experiment record). A record whose time axis is a
law input (``has_time_axis``: its table reads each sampled time point) keeps its rows the same way
(:class:`etc_fast.systems._derive.TimeAxisRows`: each experiment's sampled points read on their
own); only which inputs are the axis is decided again over the whole record at every call.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np

from etc_fast.systems._derive import DerivedTable, TimeAxisRows, constant_law_table, derive_law_table, has_time_axis

__all__ = ["DerivedTableCache"]


@dataclasses.dataclass
class _Kept:
    """What the last call derived: for which system, from which requests and arrays (the series,
    and the time stamps for a time-axis record), and the rows it gave."""

    key: tuple[str, str]
    requests: list[dict]
    arrays: tuple[np.ndarray, ...]
    rows: Any

    def prefix_of(self, key: tuple[str, str], requests: Sequence[Mapping[str, object]],
                  arrays: tuple[np.ndarray, ...]) -> int | None:
        """How many experiments of ``requests`` / ``arrays`` are the kept ones unchanged (compared
        exactly), or None when they do not extend the kept record."""
        n0 = len(self.requests)
        same = (
            self.key == key
            and n0 <= len(requests)
            and [dict(r) for r in requests[:n0]] == self.requests
            and all(a.shape[1:] == k.shape[1:] and np.array_equal(a[:n0], k, equal_nan=True)
                    for a, k in zip(arrays, self.arrays, strict=True))
        )
        return n0 if same else None


class DerivedTableCache:
    """``table(module, system, requests, series)`` == ``derive_law_table(...)``, reusing earlier rows.

    The rows are reused only while the earlier requests and series rows (and time stamps) are
    unchanged (compared exactly); any other change derives the whole table again.
    """

    def __init__(self) -> None:
        self._kept: _Kept | None = None  # the last table, or a time-axis record's TimeAxisRows

    def table(self, module: str, system: str, requests: Sequence[Mapping[str, object]], series: np.ndarray,
              times: np.ndarray | None = None) -> DerivedTable:
        series = np.asarray(series, dtype=np.float64)
        if times is not None and series.shape[2] > 1 and len(requests):
            from etc_fast.systems._forward import controls_matrix
            from etc_fast.systems._spec import spec

            C = controls_matrix(spec(module, system), requests)
            if has_time_axis(module, system, C, times, series.shape[2]):
                times = np.asarray(times, dtype=np.float64)
                rows = self._rows(
                    (module, system, "time axis"), requests, (series, times),
                    lambda lo: TimeAxisRows.derive(module, system, C[lo:], series[lo:], times[lo:]),
                    TimeAxisRows.extended,
                )
                table = rows.table(module, system)
                return table if table is not None else constant_law_table(module, system, C, series)
        return self._rows(
            (module, system), requests, (series,),
            lambda lo: derive_law_table(module, system, requests[lo:], series[lo:]),
            lambda old, new: DerivedTable(*(np.concatenate([getattr(old, a), getattr(new, a)])
                                            for a in ("X", "y", "misfit", "sigma"))),
        )

    def _rows(self, key: tuple, requests: Sequence[Mapping[str, object]], arrays: tuple[np.ndarray, ...],
              derive_from: Any, extend: Any) -> Any:
        """The rows of the whole record: the kept ones when it extends the kept record, followed by
        ``derive_from(n0)`` (the experiments from ``n0`` on); else ``derive_from(0)``."""
        kept = self._kept
        n0 = None if kept is None else kept.prefix_of(key, requests, arrays)
        if kept is None or n0 is None:  # n0 is None whenever nothing is kept
            rows = derive_from(0)
        elif n0 == len(requests):
            rows = kept.rows
        else:
            rows = extend(kept.rows, derive_from(n0))
        self._kept = _Kept(key, [dict(r) for r in requests], tuple(a.copy() for a in arrays), rows)
        return rows
