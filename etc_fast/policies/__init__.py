"""Policies: who decides in a trial. Built by name with :func:`create_policy`.

* ``scripted``: :class:`~etc_fast.policies.scripted.ScriptedPolicy` (replays actions).
* ``symbolic``: ``etc_fast.policies.symbolic.SymbolicPolicy`` (offline search, no network).
* ``sr``: ``etc_fast.policies.sr.SRPolicy`` (the symbolic agent's exploration, then pyoperon's
  symbolic regression as the committed law; needs the ``[sr]`` extra).
* any other name: ``etc_fast.policies.llm.LLMPolicy(model=name, ...)`` (an OpenAI-compatible model).

Implementations are imported only when asked for, so the LLM client is never loaded by an offline run.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from etc_fast.core import Policy

__all__ = ["create_policy", "register_policy", "registered_policies"]

PolicyFactory = Callable[..., Policy]


def _scripted(**options: Any) -> Policy:
    from etc_fast.policies.scripted import ScriptedPolicy

    return ScriptedPolicy(**options)


def _symbolic(**options: Any) -> Policy:
    from etc_fast.policies.symbolic import SymbolicPolicy

    return SymbolicPolicy(**options)


def _sr(**options: Any) -> Policy:
    from etc_fast.policies.sr import SRPolicy

    return SRPolicy(**options)


_REGISTRY: dict[str, PolicyFactory] = {"scripted": _scripted, "symbolic": _symbolic, "sr": _sr}


def register_policy(name: str, factory: PolicyFactory) -> None:
    """Make ``create_policy(name, **options)`` call ``factory(**options)``.

    Raises:
        ValueError: if ``name`` is empty or ``factory`` is not callable.
    """
    if not isinstance(name, str) or not name.strip():
        raise ValueError(f"policy name must be a non-empty string, got {name!r}")
    if not callable(factory):
        raise ValueError(f"policy factory for {name!r} must be callable, got {type(factory).__name__}")
    _REGISTRY[name] = factory


def registered_policies() -> tuple[str, ...]:
    """Names with their own factory (any other name is treated as an LLM model)."""
    return tuple(sorted(_REGISTRY))


def create_policy(model: str, **options: Any) -> Policy:
    """Build the policy for ``model``.

    Args:
        model: ``scripted``, ``symbolic``, a registered name, or an LLM model name/alias.
        **options: Passed to the policy's constructor.
    """
    if not isinstance(model, str) or not model.strip():
        raise ValueError(f"model must be a non-empty string, got {model!r}")
    factory = _REGISTRY.get(model)
    if factory is not None:
        return factory(**options)
    from etc_fast.policies.llm import LLMPolicy

    return LLMPolicy(model=model, **options)
