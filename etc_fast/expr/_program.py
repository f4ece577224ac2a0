"""Compiled hypotheses: postfix programs, their text forms, packing and batch evaluation."""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from etc_fast.expr._functions import FUNCTIONS
from kernels.programs import OPCODES, evaluate_programs

__all__ = ["Program", "Packed", "pack", "evaluate_many", "format_number"]

VAR = OPCODES["var"]
CONST = OPCODES["const"]
_BINARY_SYMBOL = {
    OPCODES["add"]: "+", OPCODES["sub"]: "-", OPCODES["mul"]: "*", OPCODES["div"]: "/",
    OPCODES["pow"]: "**",
}
# Functions written as calls: opcode -> (canonical name, how a source calls it, arity); ``pow`` is
# written as ``**``.
_FUNCTION_CALL = {
    OPCODES[f.name]: (f.name, f.python, f.arity) for f in FUNCTIONS.values() if f.name != "pow"
}
# Python precedence levels used when printing (higher binds tighter).
_P_ADD, _P_MUL, _P_UNARY, _P_POW, _P_ATOM = 1, 2, 3, 4, 5
_PREC = {"+": _P_ADD, "-": _P_ADD, "*": _P_MUL, "/": _P_MUL, "**": _P_POW}


def format_number(value: float) -> tuple[str, int]:
    """Exact text of a float constant and its printing precedence.

    Integral values below 1e15 print as integers; other finite values as ``repr`` (shortest
    round-trip form); infinities and NaN as ``math.inf`` / ``math.nan``.
    """
    value = float(value)
    if math.isnan(value):
        return "math.nan", _P_ATOM
    if math.isinf(value):
        return ("math.inf", _P_ATOM) if value > 0 else ("-math.inf", _P_UNARY)
    if value == int(value) and abs(value) < 1e15 and not (value == 0 and math.copysign(1, value) < 0):
        text = str(int(value))
    else:
        text = repr(value)
    return text, (_P_UNARY if text.startswith("-") else _P_ATOM)


def _render(ops, args, consts, const_names, variables, source: bool) -> str:
    """Print a postfix program as a Python expression with minimal parentheses."""
    stack: list[tuple[str, int]] = []

    def wrap(item, needs):
        text, prec = item
        return f"({text})" if needs(prec) else text

    for op, a in zip(ops.tolist(), args.tolist()):
        if op == VAR:
            stack.append((variables[a], _P_ATOM))
        elif op == CONST:
            name = const_names[a]
            if name == "pi" or name == "e":
                stack.append((f"math.{name}" if source else name, _P_ATOM))
            elif name is not None:  # nuisance constant, by name
                stack.append((name, _P_ATOM))
            else:
                stack.append(format_number(consts[a]))
        elif op in _BINARY_SYMBOL:
            right = stack.pop()
            left = stack.pop()
            sym = _BINARY_SYMBOL[op]
            prec = _PREC[sym]
            if sym == "**":
                lt = wrap(left, lambda p: p <= _P_POW)
                rt = wrap(right, lambda p: p < _P_UNARY)
                stack.append((f"{lt}**{rt}", _P_POW))
            else:
                lt = wrap(left, lambda p, prec=prec: p < prec)
                rt = wrap(right, lambda p, prec=prec: p <= prec)
                text = f"{lt} {sym} {rt}" if prec == _P_ADD else f"{lt}{sym}{rt}"
                stack.append((text, prec))
        elif op == OPCODES["neg"]:
            operand = stack.pop()
            stack.append((f"-{wrap(operand, lambda p: p <= _P_UNARY)}", _P_UNARY))
        else:
            name, python, arity = _FUNCTION_CALL[op]
            operands = [stack.pop()[0] for _ in range(arity)][::-1]
            stack.append((f"{python if source else name}({', '.join(operands)})", _P_ATOM))
    if len(stack) != 1:
        raise ValueError("malformed program: it does not leave exactly one value")
    return stack[0][0]


def _frozen_array(a, dtype):
    a = np.array(a, dtype=dtype, copy=True)
    a.flags.writeable = False
    return a


@dataclass(frozen=True, eq=False)
class Program:
    """A compiled hypothesis: a postfix program over the task's variables.

    Attributes:
        text: Canonical expression (bare function names, nuisance constants by name).
        variables: Variable names; ``X[:, j]`` is ``variables[j]``.
        ops: int64[L] opcodes (``kernels.programs.OPCODES``).
        args: int64[L] variable column for ``var``, constant index for ``const``, else 0.
        consts: float64[C] constant table: literals, ``pi``/``e`` and nuisance constants.
        const_is_exponent: bool[C] the constant lies inside the exponent of a power
            (e.g. the 1.5 in ``r**1.5``).
        nuisance: Names of the nuisance constants, in order of first appearance.
        const_names: For each constant: None for a literal, ``"pi"``/``"e"``, or the nuisance name.
    """

    text: str
    variables: tuple[str, ...]
    ops: np.ndarray
    args: np.ndarray
    consts: np.ndarray
    const_is_exponent: np.ndarray
    nuisance: tuple[str, ...]
    const_names: tuple[str | None, ...]

    @classmethod
    def build(cls, variables, ops, args, consts, const_is_exponent, const_names) -> Program:
        """Assemble a program from its arrays, deriving ``text`` and ``nuisance``."""
        variables = tuple(variables)
        ops = _frozen_array(ops, np.int64)
        args = _frozen_array(args, np.int64)
        consts = np.array(consts, dtype=np.float64)
        consts[np.isnan(consts)] = np.nan  # one NaN bit pattern, so equal programs compare equal
        consts = _frozen_array(consts, np.float64)
        const_is_exponent = _frozen_array(const_is_exponent, bool)
        const_names = tuple(const_names)
        if not (len(consts) == len(const_is_exponent) == len(const_names)):
            raise ValueError("consts, const_is_exponent and const_names differ in length")
        nuisance = tuple(n for n in const_names if n is not None and n not in ("pi", "e"))
        text = _render(ops, args, consts, const_names, variables, source=False)
        return cls(text, variables, ops, args, consts, const_is_exponent, nuisance, const_names)

    # -- evaluation ---------------------------------------------------------------------------
    def evaluate(self, X) -> np.ndarray:
        """Values at each row of ``X`` (float64[n, d], or float64[n] when d == 1).

        Returns float64[n]; NaN where undefined. Numeric problems never raise.
        """
        return evaluate_many([self], X)[0]

    def with_consts(self, consts) -> Program:
        """The same program with a new constant table (float64[C])."""
        consts = np.asarray(consts, dtype=np.float64)
        if consts.shape != self.consts.shape:
            raise ValueError(
                f"with_consts needs {self.consts.shape[0]} constants, got shape {consts.shape}"
            )
        return Program.build(
            self.variables, self.ops, self.args, consts, self.const_is_exponent, self.const_names
        )

    def to_source(self) -> str:
        """A ``def discovered_law(<variables>):`` source reproducing the program with ``math``.

        Nuisance constants become local assignments holding their current values.
        """
        body = _render(self.ops, self.args, self.consts, self.const_names, self.variables, True)
        lines = [f"def discovered_law({', '.join(self.variables)}):", "    import math"]
        seen = set()
        for name, value in zip(self.const_names, self.consts.tolist()):
            if name is None or name in ("pi", "e") or name in seen:
                continue
            seen.add(name)
            lines.append(f"    {name} = {format_number(value)[0]}")
        lines.append(f"    return {body}")
        return "\n".join(lines) + "\n"

    # -- identity -----------------------------------------------------------------------------
    def _key(self):
        return (self.variables, self.ops.tobytes(), self.args.tobytes(), self.consts.tobytes(),
                self.const_names)

    def __eq__(self, other):
        if not isinstance(other, Program):
            return NotImplemented
        return self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"Program({self.text!r}, variables={self.variables!r})"


class Packed(NamedTuple):
    """Programs flattened for :func:`kernels.evaluate_programs`.

    ``ops[prog_start[p]:prog_start[p] + prog_len[p]]`` is program ``p``; its constants start at
    ``consts[const_start[p]]``.
    """

    ops: np.ndarray
    args: np.ndarray
    consts: np.ndarray
    prog_start: np.ndarray
    prog_len: np.ndarray
    const_start: np.ndarray


class FamilyPacked(Packed):
    """``Packed`` copies of one program, copy ``k`` with its own constant table (a family: a grid
    of constants, a fit's steps; ``etc_fast.systems.pack_family``). Any consumer of ``Packed``
    reads it as such; an evaluator that knows the copies share their instructions may evaluate the
    program once per constant table (:func:`kernels.programs_family.evaluate_family`)."""

    __slots__ = ()

    def family(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The program's ``ops`` and ``args`` and the constant tables, float64[K, n_consts]."""
        K = int(self.prog_start.shape[0])
        L = int(self.prog_len[0]) if K else 0
        return self.ops[:L], self.args[:L], self.consts.reshape(K, -1) if K else np.zeros((0, 0))


def pack(programs: Sequence[Program]) -> Packed:
    """Concatenate programs into the flat arrays the kernel reads."""
    programs = list(programs)
    lens = np.array([len(p.ops) for p in programs], dtype=np.int64)
    nconst = np.array([len(p.consts) for p in programs], dtype=np.int64)
    prog_start = np.zeros(len(programs), dtype=np.int64)
    const_start = np.zeros(len(programs), dtype=np.int64)
    if programs:
        prog_start[1:] = np.cumsum(lens)[:-1]
        const_start[1:] = np.cumsum(nconst)[:-1]
        ops = np.concatenate([p.ops for p in programs]).astype(np.int64, copy=False)
        args = np.concatenate([p.args for p in programs]).astype(np.int64, copy=False)
        consts = np.concatenate([p.consts for p in programs]).astype(np.float64, copy=False)
    else:
        ops = np.zeros(0, dtype=np.int64)
        args = np.zeros(0, dtype=np.int64)
        consts = np.zeros(0, dtype=np.float64)
    return Packed(ops, args, consts, prog_start, lens, const_start)


def _as_points(X, d: int) -> np.ndarray:
    X = np.asarray(X, dtype=np.float64)
    if X.ndim == 1 and d == 1:
        X = X[:, None]
    if X.ndim != 2 or X.shape[1] != d:
        raise ValueError(f"X must have shape [n, {d}] (one column per variable), got {X.shape}")
    return X


def evaluate_many(programs: Sequence[Program], X) -> np.ndarray:
    """Evaluate several programs over the same points in one kernel call.

    Args:
        programs: Programs over the same variables.
        X: float64[n, d] points, one column per variable.

    Returns:
        float64[n_prog, n]; NaN where a program is undefined.
    """
    programs = list(programs)
    if not programs:
        X = np.asarray(X, dtype=np.float64)
        return np.empty((0, X.shape[0] if X.ndim else 0))
    variables = programs[0].variables
    for i, p in enumerate(programs):
        if p.variables != variables:
            raise ValueError(
                f"program {i} is over variables {p.variables}, program 0 over {variables}"
            )
    X = _as_points(X, len(variables))
    return evaluate_programs(*pack(programs), X, n_points=len(X))
