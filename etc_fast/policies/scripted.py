"""A policy that replays prepared actions (tests, demos, replays of recorded decisions)."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from etc_fast.core import Action, Observation, ProtocolConfig, TaskView

__all__ = ["ScriptedPolicy"]

ActionLike = Action | Mapping[str, Any]


def _as_action(a: ActionLike, where: str) -> Action:
    if isinstance(a, Action):
        return a
    if isinstance(a, Mapping):
        fields = dict(a)
        for key in ("hypotheses", "points"):
            if key in fields and isinstance(fields[key], list):
                fields[key] = tuple(fields[key])
        try:
            return Action(**fields)
        except TypeError as exc:
            raise ValueError(f"scripted action {where}: {exc}") from None
    raise ValueError(f"scripted action {where}: expected an Action or a dict of its fields, got {type(a).__name__}")


class ScriptedPolicy:
    """Replays a fixed list of actions, or asks a function per observation.

    Args:
        actions: A sequence of :class:`~etc_fast.protocol.Action` (or dicts of their fields),
            handed out one per decision across all phases in order; or a callable
            ``f(observation) -> Action`` (whatever it returns is passed on unchecked, so tests
            can feed the protocol garbage).
        name: Policy name recorded by the runner.

    Attributes:
        observations: Every observation seen, in order.
        begins: ``(phase, seed)`` of every ``begin`` call, in order.
    """

    def __init__(self, actions: Sequence[ActionLike] | Callable[[Observation], Any] = (), name: str = "scripted") -> None:
        self.name = name
        if callable(actions):
            self._fn: Callable[[Observation], Any] | None = actions
            self._actions: list[Action] = []
        else:
            if isinstance(actions, (str, bytes)) or not isinstance(actions, Sequence):
                raise ValueError(f"actions must be a sequence of actions or a callable, got {type(actions).__name__}")
            self._fn = None
            self._actions = [_as_action(a, f"#{i}") for i, a in enumerate(actions)]
        self._next = 0
        self.observations: list[Observation] = []
        self.begins: list[tuple[str, int]] = []

    def begin(self, phase: str, task: TaskView, config: ProtocolConfig, seed: int) -> None:
        self.begins.append((phase, seed))

    def act(self, obs: Observation) -> Any:
        self.observations.append(obs)
        if self._fn is not None:
            return self._fn(obs)
        if self._next >= len(self._actions):
            return Action(kind="invalid", error="the script has no more actions", raw="")
        a = self._actions[self._next]
        self._next += 1
        return a

    @property
    def remaining(self) -> int:
        """Scripted actions not yet used (0 for a callable script)."""
        return max(0, len(self._actions) - self._next)
