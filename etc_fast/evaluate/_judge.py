"""Judge contract: decides whether a submitted law expresses the hidden law."""

from __future__ import annotations

import dataclasses
from typing import Protocol, runtime_checkable

from etc_fast.tasks import Task


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A judge's decision.

    Attributes:
        judge: Name of the judge that decided (``structural``, ``llm``, ``none``).
        credited: Whether the submission is credited as the hidden law.
        reason: Short human-readable reason (always set, also when credited).
    """

    judge: str
    credited: bool
    reason: str

    def to_dict(self) -> dict:
        return dataclasses.asdict(self)


@runtime_checkable
class Judge(Protocol):
    """Anything that can judge a ``discovered_law`` source against a task."""

    name: str

    def judge(self, source: str, task: Task) -> Verdict:
        """Decide; must not raise for bad submissions (return ``credited=False`` with a reason)."""
        ...
