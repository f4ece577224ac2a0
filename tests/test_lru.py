"""The process-wide memos' map: bounded, least recently used dropped first, refreshed by a hit."""

from __future__ import annotations

import pytest

from etc_fast._lru import LRU


def test_the_least_recently_used_entry_goes_first():
    m: LRU[str, int] = LRU(2)
    m.put("a", 1)
    m.put("b", 2)
    assert m.get("a") == 1  # a is now the most recent
    m.put("c", 3)
    assert m.get("b") is None and m.get("a") == 1 and m.get("c") == 3 and len(m) == 2
    m.put("a", 4)  # a new value refreshes too
    m.put("d", 5)
    assert m.get("c") is None and m.get("a") == 4
    m.clear()
    assert len(m) == 0 and m.get("a") is None


@pytest.mark.parametrize("size", [0, -1, 1.5, "2"])
def test_a_size_that_is_not_a_positive_integer_is_refused(size):
    with pytest.raises(ValueError, match="positive integer"):
        LRU(size)
