"""The registry of system definitions: ``(module, system)`` -> :class:`SystemDefinition`.

Every per-module fact of the systems tier is read through :func:`definition` (or :func:`lookup`,
which answers ``None`` for an unknown pair); the definitions themselves are in
:mod:`etc_fast.systems.defs`, registered here in NewtonBench's module order when this module is
first imported. :func:`register` checks a definition before it is added (its trajectory kernel
exists and reads as many columns as it is given, the points rule has its controls, the module's
definitions share one hidden-law guard).
"""

from __future__ import annotations

from etc_fast.systems import defs as _defs
from etc_fast.systems._definition import SIM_SYSTEMS, SystemDefinition
from kernels.systems import TRAJECTORY_SYSTEMS

__all__ = ["definition", "definitions", "lookup", "module_definitions", "register"]

_REGISTRY: dict[tuple[str, str], SystemDefinition] = {}


def register(defn: SystemDefinition) -> SystemDefinition:
    """Add ``defn`` under ``(defn.module, defn.system)``; ``ValueError`` (naming what is wrong) if it
    is inconsistent, its system is not a simulated one, or the pair is already registered."""
    errors = defn.check(TRAJECTORY_SYSTEMS)
    if defn.system not in SIM_SYSTEMS:
        errors.append(f"system must be one of {', '.join(SIM_SYSTEMS)}")
    if defn.key in _REGISTRY:
        errors.append("already registered")
    siblings = module_definitions(defn.module)
    if siblings and siblings[0].guard is not defn.guard:
        errors.append(f"its hidden-law guard differs from {siblings[0].name}'s (one guard per module)")
    if errors:
        raise ValueError(f"system definition {defn.name}: " + "; ".join(errors))
    _REGISTRY[defn.key] = defn
    return defn


def lookup(module: str, system: str) -> SystemDefinition | None:
    """The definition of ``module`` in ``system``, or ``None``."""
    return _REGISTRY.get((module, system))


def definition(module: str, system: str) -> SystemDefinition:
    """The definition of ``module`` in ``system`` (``ValueError`` if there is none)."""
    found = _REGISTRY.get((module, system))
    if found is None:
        raise ValueError(f"no system spec for {module!r} / {system!r}")
    return found


def definitions() -> tuple[SystemDefinition, ...]:
    """Every registered definition, in registration order."""
    return tuple(_REGISTRY.values())


def module_definitions(module: str) -> tuple[SystemDefinition, ...]:
    """The registered definitions of ``module`` (its systems), in registration order."""
    return tuple(d for d in _REGISTRY.values() if d.module == module)


for _module in _defs.MODULES:
    for _defn in _module.DEFINITIONS:
        register(_defn)
