"""Each NewtonBench module's law arguments, in NewtonBench's order (= the vanilla signature)."""

from __future__ import annotations

#: Module -> its law's argument names. ``etc_fast.tasks`` builds each module's variables in this
#: order (and checks it at import); the systems tier reads the names from here.
LAW_ARGS: dict[str, tuple[str, ...]] = {
    "m0_gravity": ("mass1", "mass2", "distance"),
    "m1_coulomb_force": ("q1", "q2", "distance"),
    "m2_magnetic_force": ("current1", "current2", "distance"),
    "m3_fourier_law": ("k", "A", "delta_T", "d"),
    "m4_snell_law": ("n1", "n2", "angle1"),
    "m5_radioactive_decay": ("N0", "lambda_constant", "t"),
    "m6_underdamped_harmonic": ("k", "m", "b"),
    "m7_malus_law": ("I_0", "theta"),
    "m8_sound_speed": ("gamma", "T", "M"),
    "m9_hooke_law": ("x",),
    "m10_be_distribution": ("omega", "T"),
    "m11_heat_transfer": ("m", "c", "delta_T"),
}
