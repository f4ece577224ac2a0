"""Parse hypothesis text into a :class:`Program` by walking an allowlist of Python syntax.

The text is read with :mod:`ast` only; nothing is ever executed. Constant sub-expressions are
folded with NumPy float64 semantics (so ``1/0`` folds to ``inf``), except that a constant power
whose result overflows although its operands are finite is rejected.
"""

from __future__ import annotations

import ast
import keyword
import math
import textwrap
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NoReturn

import numpy as np

from etc_fast.expr._errors import ExprError
from etc_fast.expr._functions import BARE_NAMES, FUNCTIONS, MODULES, refusal
from etc_fast.expr._program import Program
from kernels.programs import OPCODES

__all__ = ["parse", "MAX_DEPTH", "MAX_LENGTH", "MAX_OPS"]

MAX_LENGTH = 2000
"""Longest accepted text, in characters."""
MAX_DEPTH = 64
"""Deepest accepted expression tree (a leaf has depth 1), after inlining assignments."""
MAX_OPS = 4096
"""Most instructions a program may have after inlining assignments."""

# Accepted name -> canonical name (etc_fast.expr._functions: the one table of the law's functions).
_MODULE_FUNCTIONS = {name: f.name for f in FUNCTIONS.values() for name in (f.name, *f.aliases)}
_BARE_FUNCTIONS = {name: canonical for name, canonical in _MODULE_FUNCTIONS.items() if name in BARE_NAMES}
_MODULES = MODULES
_MODULE_CONSTANTS = {"pi": math.pi, "e": math.e, "inf": math.inf, "nan": math.nan}
_BINOPS = {ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.Div: "div", ast.Pow: "pow"}
_BINOP_SYMBOL = {ast.FloorDiv: "//", ast.Mod: "%", ast.MatMult: "@", ast.LShift: "<<",
                 ast.RShift: ">>", ast.BitOr: "|", ast.BitXor: "^", ast.BitAnd: "&"}
# Constant folding: NumPy float64 semantics, the kernel's.
_NP_BINARY = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.divide} | {
    f.name: f.ufunc for f in FUNCTIONS.values() if f.arity == 2}
_NP_UNARY = {"neg": np.negative} | {f.name: f.ufunc for f in FUNCTIONS.values() if f.arity == 1}

_NOT_ALLOWED = {
    ast.Subscript: "subscripts are not allowed",
    ast.Lambda: "lambdas are not allowed",
    ast.ListComp: "comprehensions are not allowed",
    ast.SetComp: "comprehensions are not allowed",
    ast.DictComp: "comprehensions are not allowed",
    ast.GeneratorExp: "comprehensions are not allowed",
    ast.JoinedStr: "f-strings are not allowed",
    ast.FormattedValue: "f-strings are not allowed",
    ast.NamedExpr: "assignment expressions (:=) are not allowed",
    ast.Compare: "comparisons are not allowed",
    ast.BoolOp: "boolean operators (and/or) are not allowed",
    ast.IfExp: "conditional expressions are not allowed",
    ast.Starred: "starred arguments are not allowed",
    ast.List: "lists are not allowed",
    ast.Tuple: "tuples are not allowed",
    ast.Set: "sets are not allowed",
    ast.Dict: "dictionaries are not allowed",
    ast.Await: "await is not allowed",
    ast.Yield: "yield is not allowed",
    ast.YieldFrom: "yield is not allowed",
    ast.Slice: "slices are not allowed",
}
_STATEMENT_NAMES = {
    ast.If: "if statements", ast.For: "for loops", ast.AsyncFor: "for loops",
    ast.While: "while loops", ast.With: "with statements", ast.AsyncWith: "with statements",
    ast.Try: "try statements", ast.Raise: "raise statements", ast.Global: "global statements",
    ast.Nonlocal: "nonlocal statements", ast.FunctionDef: "nested function definitions",
    ast.AsyncFunctionDef: "nested function definitions", ast.ClassDef: "class definitions",
    ast.Delete: "del statements", ast.Assert: "assert statements", ast.Pass: "pass statements",
    ast.Break: "break statements", ast.Continue: "continue statements",
    ast.AnnAssign: "annotated assignments", ast.Match: "match statements",
}
if hasattr(ast, "TryStar"):  # Python 3.11+
    _STATEMENT_NAMES[ast.TryStar] = "try statements"


@dataclass(frozen=True, eq=False)
class _Node:
    """Expression tree node. ``kind``: var | num | param | un | bin."""

    kind: str
    op: str = ""
    value: float = 0.0
    label: str | None = None  # num: "pi"/"e" or None; param: the nuisance name
    slot: int = -1  # var: column index
    kids: tuple = ()
    size: int = 1
    depth: int = 1


def _leaf(kind, **kw):
    return _Node(kind, **kw)


def _num(value, label=None):
    return _Node("num", value=float(value), label=label)


class _Parser:
    def __init__(self, text: str, variables: tuple[str, ...]):
        self.lines = text.split("\n")
        self.variables = variables
        self.slots = {name: j for j, name in enumerate(variables)}
        self.bindings: dict[str, _Node] = {}
        self.line_offset = 0

    # -- positions ----------------------------------------------------------------------------
    def where(self, node) -> str | None:
        line = getattr(node, "lineno", None)
        col = getattr(node, "col_offset", None)
        if line is None or col is None:
            return None
        return self.position(line, col)

    def position(self, line: int, col_bytes: int) -> str:
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        col = len(text.encode("utf-8")[:col_bytes].decode("utf-8", errors="ignore"))
        return f"line {line + self.line_offset}, col {col + 1}"

    def fail(self, message: str, node=None) -> NoReturn:
        raise ExprError(message, self.where(node) if node is not None else None)

    # -- tree construction --------------------------------------------------------------------
    def make(self, kind, op, kids, node):
        size = 1 + sum(k.size for k in kids)
        depth = 1 + max(k.depth for k in kids)
        if depth > MAX_DEPTH:
            self.fail(f"expression nested deeper than {MAX_DEPTH} levels", node)
        if size > MAX_OPS:
            self.fail(f"expression longer than {MAX_OPS} operations", node)
        if all(k.kind == "num" for k in kids):
            return self.fold(op, kids, node)
        return _Node(kind, op=op, kids=tuple(kids), size=size, depth=depth)

    def fold(self, op, kids, node):
        """Evaluate a constant operation with the kernel's NumPy float64 semantics."""
        values = [np.array([k.value]) for k in kids]
        with np.errstate(all="ignore"):
            if len(values) == 2:
                result = float(_NP_BINARY[op](values[0], values[1])[0])
            else:
                result = float(_NP_UNARY[op](values[0])[0])
        if (op == "pow" and math.isinf(result) and all(math.isfinite(k.value) for k in kids)
                and kids[0].value != 0):
            self.fail("constant power too large", node)
        return _num(result)

    # -- expressions --------------------------------------------------------------------------
    def expr(self, node, depth: int = 1) -> _Node:
        if depth > MAX_DEPTH:
            self.fail(f"expression nested deeper than {MAX_DEPTH} levels", node)
        if isinstance(node, ast.BinOp):
            op = _BINOPS.get(type(node.op))
            if op is None:
                sym = _BINOP_SYMBOL.get(type(node.op), type(node.op).__name__)
                self.fail(f"operator {sym} is not allowed", node)
            left = self.expr(node.left, depth + 1)
            right = self.expr(node.right, depth + 1)
            return self.make("bin", op, (left, right), node)
        if isinstance(node, ast.UnaryOp):
            if isinstance(node.op, ast.UAdd):
                return self.expr(node.operand, depth + 1)
            if not isinstance(node.op, ast.USub):
                sym = {ast.Not: "not", ast.Invert: "~"}.get(type(node.op), "?")
                self.fail(f"operator {sym} is not allowed", node)
            return self.make("un", "neg", (self.expr(node.operand, depth + 1),), node)
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, (int, float)):
                kind = "strings" if isinstance(value, (str, bytes)) else f"{type(value).__name__} constants"
                if isinstance(value, complex):
                    kind = "complex numbers"
                self.fail(f"{kind} are not allowed", node)
            try:
                return _num(float(value))
            except OverflowError:
                self.fail("number too large", node)
        if isinstance(node, ast.Name):
            return self.name(node)
        if isinstance(node, ast.Attribute):
            module = node.value.id if isinstance(node.value, ast.Name) else None
            if module in _MODULES and node.attr in _MODULE_CONSTANTS:
                label = node.attr if node.attr in ("pi", "e") else None
                return _num(_MODULE_CONSTANTS[node.attr], label)
            if module in _MODULES and node.attr in _MODULE_FUNCTIONS:
                self.fail(f"function {module}.{node.attr} used without a call", node)
            self.fail(f"attribute {ast.unparse(node)} is not allowed", node)
        if isinstance(node, ast.Call):
            return self.call(node, depth)
        message = _NOT_ALLOWED.get(type(node), f"{type(node).__name__} is not allowed")
        self.fail(message, node)

    def name(self, node: ast.Name) -> _Node:
        ident = node.id
        if ident in self.bindings:
            return self.bindings[ident]
        if ident in self.slots:
            return _leaf("var", slot=self.slots[ident])
        if ident == "pi":
            return _num(math.pi, "pi")
        if ident == "e":
            return _num(math.e, "e")
        if ident in _MODULES:
            self.fail(f"module {ident} used as a value", node)
        if ident in _BARE_FUNCTIONS:
            self.fail(f"function {ident} used without a call", node)
        return _leaf("param", label=ident)

    def call(self, node: ast.Call, depth: int) -> _Node:
        func = node.func
        if isinstance(func, ast.Name):
            if func.id in self.bindings or func.id in self.slots:
                self.fail(f"call to {func.id} is not allowed ({func.id} is a value, not a function)", node)
            if func.id not in _BARE_FUNCTIONS:
                self.fail(refusal(func.id), node)
            fname, shown = _BARE_FUNCTIONS[func.id], func.id
        elif (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
              and func.value.id in _MODULES):
            if func.attr not in _MODULE_FUNCTIONS:
                self.fail(refusal(f"{func.value.id}.{func.attr}"), node)
            fname, shown = _MODULE_FUNCTIONS[func.attr], f"{func.value.id}.{func.attr}"
        else:
            self.fail(f"call to {ast.unparse(func)} is not allowed", node)
        if node.keywords:
            self.fail(f"keyword arguments are not allowed in {shown}()", node.keywords[0])
        for a in node.args:
            if isinstance(a, ast.Starred):
                self.fail(f"starred arguments are not allowed in {shown}()", a)
        arity = FUNCTIONS[fname].arity
        if len(node.args) != arity:
            self.fail(
                f"{shown}() takes {arity} argument{'s' if arity > 1 else ''}, got {len(node.args)}",
                node,
            )
        kids = tuple(self.expr(a, depth + 1) for a in node.args)
        return self.make("bin" if arity == 2 else "un", fname, kids, node)

    # -- discovered_law sources ---------------------------------------------------------------
    def function(self, module: ast.Module) -> _Node:
        body = list(module.body)
        if body and _is_docstring(body[0]):
            body = body[1:]
        defs = []
        for stmt in body:
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.check_import(stmt)
            elif isinstance(stmt, ast.FunctionDef):
                defs.append(stmt)
            elif isinstance(stmt, ast.Expr):
                self.fail("expected a single expression or one def discovered_law(...)", stmt)
            else:
                self.fail(f"{_statement_name(stmt)} outside the function are not allowed", stmt)
        if len(defs) != 1:
            self.fail(f"expected exactly one function definition, found {len(defs)}",
                      defs[1] if len(defs) > 1 else None)
        fn = defs[0]
        if fn.name != "discovered_law":
            self.fail(f"the function must be named discovered_law, not {fn.name}", fn)
        if fn.decorator_list:
            self.fail("decorators are not allowed", fn.decorator_list[0])
        a = fn.args
        if a.vararg or a.kwarg or a.kwonlyargs or a.posonlyargs or a.defaults or a.kw_defaults:
            self.fail("discovered_law takes plain positional arguments only", fn)
        names = tuple(arg.arg for arg in a.args)
        if names != self.variables:
            self.fail(
                f"discovered_law({', '.join(names)}) does not match the variables "
                f"({', '.join(self.variables)})",
                fn,
            )
        stmts = list(fn.body)
        if stmts and _is_docstring(stmts[0]):
            stmts = stmts[1:]
        result = None
        for stmt in stmts:
            if result is not None:
                self.fail("statements after return are not allowed", stmt)
            if isinstance(stmt, (ast.Import, ast.ImportFrom)):
                self.check_import(stmt)
            elif isinstance(stmt, ast.Assign):
                if len(stmt.targets) != 1 or not isinstance(stmt.targets[0], ast.Name):
                    self.fail("only assignments to a single name are allowed", stmt)
                self.bind(stmt.targets[0], self.expr(stmt.value))
            elif isinstance(stmt, ast.AugAssign):
                if not isinstance(stmt.target, ast.Name):
                    self.fail("only assignments to a single name are allowed", stmt)
                op = _BINOPS.get(type(stmt.op))
                if op is None:
                    sym = _BINOP_SYMBOL.get(type(stmt.op), type(stmt.op).__name__)
                    self.fail(f"operator {sym}= is not allowed", stmt)
                current = self.name(ast.Name(stmt.target.id, lineno=stmt.lineno,
                                             col_offset=stmt.col_offset))
                self.bind(stmt.target, self.make("bin", op, (current, self.expr(stmt.value)), stmt))
            elif isinstance(stmt, ast.Return):
                if stmt.value is None:
                    self.fail("return needs a value", stmt)
                result = self.expr(stmt.value)
            elif isinstance(stmt, ast.Expr):
                self.fail("expression statements are not allowed", stmt)
            else:
                self.fail(f"{_statement_name(stmt)} are not allowed", stmt)
        if result is None:
            self.fail("discovered_law has no return statement", fn)
        return result

    def bind(self, target: ast.Name, value: _Node):
        name = target.id
        if name in _MODULES or name in _BARE_FUNCTIONS or name in ("pi", "e"):
            self.fail(f"assignment to {name} is not allowed", target)
        self.bindings[name] = value

    def check_import(self, stmt):
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                ok = (alias.name == "math" and alias.asname in (None, "math")) or (
                    alias.name == "numpy" and alias.asname in (None, "np", "numpy"))
                if not ok:
                    shown = alias.name + (f" as {alias.asname}" if alias.asname else "")
                    self.fail(f"import {shown} is not allowed (only math and numpy as np)", stmt)
        else:
            if stmt.module not in ("math", "numpy") or stmt.level:
                self.fail(f"from {stmt.module} import is not allowed", stmt)
            for alias in stmt.names:
                if alias.asname or (alias.name not in _BARE_FUNCTIONS
                                    and alias.name not in ("pi", "e")):
                    self.fail(f"from {stmt.module} import {alias.name} is not allowed", stmt)


def _is_docstring(stmt) -> bool:
    return (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant)
            and isinstance(stmt.value.value, str))


def _statement_name(stmt) -> str:
    return _STATEMENT_NAMES.get(type(stmt), f"{type(stmt).__name__} statements")


def _compile(root: _Node, variables: tuple[str, ...]) -> Program:
    """Postfix code generation; literals get one constant each, nuisance names one shared."""
    ops: list[int] = []
    args: list[int] = []
    consts: list[float] = []
    names: list[str | None] = []
    exponent: list[bool] = []
    param_index: dict[str, int] = {}

    def emit(node: _Node, in_exponent: bool):
        if node.kind == "var":
            ops.append(OPCODES["var"])
            args.append(node.slot)
        elif node.kind == "num":
            ops.append(OPCODES["const"])
            args.append(len(consts))
            consts.append(node.value)
            names.append(node.label)
            exponent.append(in_exponent)
        elif node.kind == "param":
            idx = param_index.get(node.label)
            if idx is None:
                idx = param_index[node.label] = len(consts)
                consts.append(1.0)
                names.append(node.label)
                exponent.append(in_exponent)
            elif in_exponent:
                exponent[idx] = True
            ops.append(OPCODES["const"])
            args.append(idx)
        else:
            if node.op == "pow":
                emit(node.kids[0], in_exponent)
                emit(node.kids[1], True)
            else:
                for kid in node.kids:
                    emit(kid, in_exponent)
            ops.append(OPCODES[node.op])
            args.append(0)

    emit(root, False)
    return Program.build(variables, ops, args, consts, exponent, names)


def _check_variables(variables) -> tuple[str, ...]:
    if isinstance(variables, str):
        raise ValueError("variables must be a sequence of names, not a single string")
    names = tuple(variables)
    for name in names:
        if not isinstance(name, str) or not name.isidentifier() or keyword.iskeyword(name):
            raise ValueError(f"variable name {name!r} is not a Python identifier")
        if name in _MODULES:
            raise ValueError(f"variable name {name!r} would shadow a module")
    if len(set(names)) != len(names):
        raise ValueError(f"variable names repeat: {names}")
    return names


def parse(text: str, variables: Sequence[str]) -> Program:
    """Compile a hypothesis into a :class:`Program`.

    Args:
        text: A Python expression over ``variables`` (e.g. ``"C*m1*m2/r**2"``), or a
            ``def discovered_law(<variables>):`` source with straight-line assignments and one
            final return.
        variables: The task's variable names, in column order of ``X``.

    Returns:
        The compiled program.

    Raises:
        ExprError: the text is outside the hypothesis language; says what and where.
        ValueError: ``variables`` is malformed.
    """
    variables = _check_variables(variables)
    if not isinstance(text, str):
        raise ExprError(f"a hypothesis must be a string, got {type(text).__name__}")
    if len(text) > MAX_LENGTH:
        raise ExprError(f"text longer than {MAX_LENGTH} characters ({len(text)})")
    source = textwrap.dedent(text).strip()
    if not source:
        raise ExprError("empty hypothesis")
    parser = _Parser(source, variables)
    try:
        try:
            tree = ast.parse(source, mode="eval")
        except SyntaxError:
            tree = None
        if tree is not None:
            root = parser.expr(tree.body)
        else:
            try:
                module = ast.parse(source, mode="exec")
            except SyntaxError as exc:
                where = parser.position(exc.lineno, (exc.offset or 1) - 1) if exc.lineno else None
                # SyntaxError offsets are character based already.
                if exc.lineno:
                    where = f"line {exc.lineno}, col {exc.offset or 1}"
                raise ExprError(f"syntax error: {exc.msg}", where) from None
            root = parser.function(module)
    except (RecursionError, MemoryError):
        raise ExprError(f"expression nested deeper than {MAX_DEPTH} levels") from None
    return _compile(root, variables)
