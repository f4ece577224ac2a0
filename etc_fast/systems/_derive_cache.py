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

from collections.abc import Mapping, Sequence

import numpy as np

from etc_fast.systems._derive import DerivedTable, TimeAxisRows, constant_law_table, derive_law_table, has_time_axis

__all__ = ["DerivedTableCache"]


class DerivedTableCache:
    """``table(module, system, requests, series)`` == ``derive_law_table(...)``, reusing earlier rows.

    The rows are reused only while the earlier requests and series rows are unchanged (compared
    exactly); any other change derives the whole table again.
    """

    def __init__(self) -> None:
        self._key: tuple[str, str] | None = None
        self._requests: list[dict] = []
        self._series = np.empty((0, 0, 0))
        self._table: DerivedTable | None = None
        # a time-axis record's rows: (module, system, requests, series, times, rows)
        self._timed: tuple | None = None

    def table(self, module: str, system: str, requests: Sequence[Mapping[str, object]], series: np.ndarray,
              times: np.ndarray | None = None) -> DerivedTable:
        series = np.asarray(series, dtype=np.float64)
        if times is not None and series.shape[2] > 1 and len(requests):
            from etc_fast.systems._forward import controls_matrix
            from etc_fast.systems._spec import spec

            C = controls_matrix(spec(module, system), requests)
            if has_time_axis(module, system, C, times, series.shape[2]):
                self._key, self._requests, self._series, self._table = None, [], np.empty((0, 0, 0)), None
                rows = self._time_rows(module, system, requests, C, series, np.asarray(times, dtype=np.float64))
                table = rows.table(module, system)
                return table if table is not None else constant_law_table(module, system, C, series)
            self._timed = None
        n0 = len(self._requests)
        reuse = (
            self._table is not None
            and self._key == (module, system)
            and n0 <= len(requests)
            and [dict(r) for r in requests[:n0]] == self._requests
            and series.shape[1:] == self._series.shape[1:]
            and np.array_equal(series[:n0], self._series, equal_nan=True)
        )
        if not reuse:
            table = derive_law_table(module, system, requests, series)
        elif n0 == len(requests):
            table = self._table
        else:
            new = derive_law_table(module, system, requests[n0:], series[n0:])
            old = self._table
            table = DerivedTable(
                np.concatenate([old.X, new.X]),
                np.concatenate([old.y, new.y]),
                np.concatenate([old.misfit, new.misfit]),
                np.concatenate([old.sigma, new.sigma]),
            )
        self._key, self._requests, self._series, self._table = (module, system), [dict(r) for r in requests], series.copy(), table
        return table

    def _time_rows(self, module: str, system: str, requests: Sequence[Mapping[str, object]], C: np.ndarray,
                   series: np.ndarray, times: np.ndarray) -> TimeAxisRows:
        """The time-axis rows of the record, the earlier experiments' reused while unchanged."""
        kept = self._timed
        n0 = 0 if kept is None else len(kept[2])
        reuse = (
            kept is not None
            and kept[:2] == (module, system)
            and n0 <= len(requests)
            and [dict(r) for r in requests[:n0]] == kept[2]
            and series.shape[1:] == kept[3].shape[1:]
            and np.array_equal(series[:n0], kept[3], equal_nan=True)
            and times.shape[1:] == kept[4].shape[1:]
            and np.array_equal(times[:n0], kept[4], equal_nan=True)
        )
        if not reuse:
            rows = TimeAxisRows.derive(module, system, C, series, times)
        elif n0 == len(requests):
            rows = kept[5]
        else:
            rows = kept[5].extended(TimeAxisRows.derive(module, system, C[n0:], series[n0:], times[n0:]))
        self._timed = (module, system, [dict(r) for r in requests], series.copy(), times.copy(), rows)
        return rows
