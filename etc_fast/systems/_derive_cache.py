"""The derived law table of a growing record, re-deriving only the experiments added since the last call.

:func:`etc_fast.systems._derive.derive_law_table` derives every experiment on its own (its constant
law fit, uncertainty, prefix rule and effective inputs read that experiment's controls and series
only), so the table of ``n + k`` experiments is the table of the first ``n`` followed by the table
of the ``k`` new ones, value for value; ``tests/systems/test_planning.py`` checks that identity. A
trial's record only grows, and the table used to be derived again from scratch at every turn (a
baseline of ten turns derived 550 rows for a 100-experiment record). A record whose time axis is a
law input (``has_time_axis``: its table reads each sampled time point, and which inputs are the axis
is decided over the whole record) is derived whole every time.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np

from etc_fast.systems._derive import DerivedTable, derive_law_table, has_time_axis

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

    def table(self, module: str, system: str, requests: Sequence[Mapping[str, object]], series: np.ndarray,
              times: np.ndarray | None = None) -> DerivedTable:
        series = np.asarray(series, dtype=np.float64)
        if times is not None and series.shape[2] > 1 and len(requests):
            from etc_fast.systems._forward import controls_matrix
            from etc_fast.systems._spec import spec

            if has_time_axis(module, system, controls_matrix(spec(module, system), requests), times, series.shape[2]):
                self._key, self._requests, self._series, self._table = None, [], np.empty((0, 0, 0)), None
                return derive_law_table(module, system, requests, series, times=times)
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
