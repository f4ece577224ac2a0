"""The 24 NewtonBench system simulators (12 modules x simple_system/complex_system).

Each simulator takes one experiment's keyword arguments (the agent's JSON object, unvalidated,
as NewtonBench receives it), a scalar ``law`` (the hidden law on the trusted side, or a
candidate law in the public forward model), a :class:`Noise` source and NewtonBench's global
``RandomState`` where the system draws from it (m11), and returns exactly what NewtonBench's
``run_experiment_for_module`` returns for the same call, or raises what it raises. Facts, with
NewtonBench file and line: ``/work/shared/newtonbench_systems.md``. The arithmetic is done in
NewtonBench's order and on the same kinds of numbers (NumPy arrays where it stores states in
arrays, Python floats where it does not), so outputs agree to the bit.

The simulators are part of their systems' definitions (:mod:`etc_fast.systems.defs`, one file per
module; the shared helpers are :mod:`etc_fast.systems._simkit`); :data:`SIMULATORS` is the
registry's view of them.

Two deliberate departures, both outside anything NewtonBench can return:

* Trajectory modules (m0, m1, m2-simple) integrate only the first ``min(n, 20)`` steps: NewtonBench
  integrates all ``n`` and returns the first 20, so the later steps never reach the output (they
  would only cost time; noise is drawn for the returned points only, with the same distribution).
* ``num_points`` above :data:`MAX_POINTS` (m3, m5, uncapped in NewtonBench) is refused with a
  ``ValueError`` instead of allocating without bound.
"""

from __future__ import annotations

from etc_fast.systems._definition import Simulator
from etc_fast.systems._registry import definitions
from etc_fast.systems._simkit import MAX_POINTS, MAX_RETURNED, Noise

__all__ = ["MAX_POINTS", "MAX_RETURNED", "SIMULATORS", "Noise"]

#: (module, system) -> simulator(kwargs, law, noise, legacy_rng)
SIMULATORS: dict[tuple[str, str], Simulator] = {d.key: d.simulator for d in definitions()}
