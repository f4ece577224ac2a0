"""The system definitions, one file per NewtonBench module (docs/howto/new-lab.md).

Each ``mN_<name>.py`` defines its module's :class:`~etc_fast.systems._definition.SystemDefinition`
for ``simple_system`` and ``complex_system`` (spec, simulator, forward model, points and
observation rules, hidden-law guard, prompt response shape) and lists them in ``DEFINITIONS``;
:data:`MODULES` below is what :mod:`etc_fast.systems._registry` registers, in this order.
"""

from __future__ import annotations

from etc_fast.systems.defs import (
    m0_gravity,
    m1_coulomb_force,
    m2_magnetic_force,
    m3_fourier_law,
    m4_snell_law,
    m5_radioactive_decay,
    m6_underdamped_harmonic,
    m7_malus_law,
    m8_sound_speed,
    m9_hooke_law,
    m10_be_distribution,
    m11_heat_transfer,
)

__all__ = ["MODULES"]

#: The module files, in NewtonBench's module order.
MODULES = (
    m0_gravity,
    m1_coulomb_force,
    m2_magnetic_force,
    m3_fourier_law,
    m4_snell_law,
    m5_radioactive_decay,
    m6_underdamped_harmonic,
    m7_malus_law,
    m8_sound_speed,
    m9_hooke_law,
    m10_be_distribution,
    m11_heat_transfer,
)
