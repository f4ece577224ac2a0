"""What an agent may know of each system: its controls (keys, defaults, pool domains) and observables.

The controls, keys and defaults are NewtonBench's (``newtonbench_systems.md``). The pool domain of
each control is ours: the law's own inputs span the module's vanilla evaluation domain (paper
Table S1, the domain the submitted law is scored on), so every scored input is reachable; the
apparatus controls (masses, time steps, tube sizes) span ranges where NewtonBench's defaults and
prompts place them and where the 20 returned points are informative. A control with
``pool=False`` keeps its default in the pool (e.g. ``duration``: the defaults already give the
full 20 points for every pool time step). docs/guide/labs.md shows how to read them.

Each spec is part of its system's definition (:mod:`etc_fast.systems.defs`); :func:`spec` looks it
up in the registry and :data:`SPECS` is the registry's view of the specs.
"""

from __future__ import annotations

from etc_fast.systems._definition import Control, SystemSpec
from etc_fast.systems._registry import definition, definitions

__all__ = ["SPECS", "Control", "SystemSpec", "spec"]

#: ``(module, system)`` -> spec, for every registered definition (in registration order).
SPECS: dict[tuple[str, str], SystemSpec] = {d.key: d.spec for d in definitions()}


def spec(module: str, system: str) -> SystemSpec:
    """The public description of ``module`` in ``system``."""
    return definition(module, system).spec
