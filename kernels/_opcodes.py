"""The opcodes of the program stack machine (:mod:`kernels.programs`): their numbers, names, arities
and the messages of the program checker."""

import numpy as np

# Opcodes. Leaves push one value, unary ops replace the top, binary ops pop two and push one.
VAR = 0  # push X[:, arg]
CONST = 1  # push consts[const_start[p] + arg]
ADD = 2
SUB = 3
MUL = 4
DIV = 5
POW = 6
NEG = 7
SIN = 8
COS = 9
TAN = 10
ASIN = 11
ACOS = 12
ATAN = 13
EXP = 14
LOG = 15
SQRT = 16
ABS = 17
DEGREES = 18
RADIANS = 19
SINH = 20
COSH = 21
TANH = 22
ASINH = 23
ACOSH = 24
ATANH = 25
EXPM1 = 26
LOG10 = 27
LOG2 = 28
LOG1P = 29
CBRT = 30
ATAN2 = 31  # atan2(y, x): pops x, then y
HYPOT = 32
N_OPCODES = 33

OPCODES = {
    "var": VAR, "const": CONST, "add": ADD, "sub": SUB, "mul": MUL, "div": DIV, "pow": POW,
    "neg": NEG, "sin": SIN, "cos": COS, "tan": TAN, "asin": ASIN, "acos": ACOS, "atan": ATAN,
    "exp": EXP, "log": LOG, "sqrt": SQRT, "abs": ABS, "degrees": DEGREES, "radians": RADIANS,
    "sinh": SINH, "cosh": COSH, "tanh": TANH, "asinh": ASINH, "acosh": ACOSH, "atanh": ATANH,
    "expm1": EXPM1, "log10": LOG10, "log2": LOG2, "log1p": LOG1P, "cbrt": CBRT, "atan2": ATAN2,
    "hypot": HYPOT,
}
"""Name -> opcode of every instruction the machine understands."""

# Number of stack operands each opcode consumes (leaves consume none and push one).
OP_ARITY = np.array([0, 0, 2, 2, 2, 2, 2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
                     1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2], dtype=np.int64)

# Why :func:`kernels.programs.check_programs` refused a program, by the code its checker returns.
_CHECK_MESSAGES = {
    1: "is empty",
    2: "runs past the end of ops",
    3: "has a constant range outside consts",
    4: "has an unknown opcode",
    5: "reads a variable column outside X",
    6: "reads a constant index outside its own constants",
    7: "pops from an empty stack",
    8: "does not leave exactly one value on the stack",
}
