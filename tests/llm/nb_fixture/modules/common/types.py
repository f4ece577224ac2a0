from enum import Enum


class ExperimentSystem(str, Enum):
    VANILLA_EQUATION = "vanilla_equation"
    SIMPLE_SYSTEM = "simple_system"
    COMPLEX_SYSTEM = "complex_system"
