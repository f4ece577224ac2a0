"""NewtonBench's hidden laws as data, below every package that uses them.

The 108 ``vanilla_equation`` laws as NewtonBench-style expressions with their hidden constants
(:data:`LAWS`, :data:`CONSTANTS`, :data:`NAN_IF_NEGATIVE`), and each module's law arguments
(:data:`LAW_ARGS`). ``etc_fast.tasks`` builds the equation tasks from them and ``etc_fast.systems``
the simulated systems' hidden laws; agents never see this package (the sandbox cannot read it).
"""

from etc_fast.laws._args import LAW_ARGS
from etc_fast.laws._table import CONSTANTS, LAWS, NAN_IF_NEGATIVE, ground_truth_text, law_expression

__all__ = ["CONSTANTS", "LAWS", "LAW_ARGS", "NAN_IF_NEGATIVE", "ground_truth_text", "law_expression"]
