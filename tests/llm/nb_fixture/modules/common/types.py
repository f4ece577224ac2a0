# ruff: noqa  (a stand-in for NewtonBench's code: its shape is kept on purpose)
from enum import Enum


class ExperimentSystem(str, Enum):
    VANILLA_EQUATION = "vanilla_equation"
    SIMPLE_SYSTEM = "simple_system"
    COMPLEX_SYSTEM = "complex_system"
