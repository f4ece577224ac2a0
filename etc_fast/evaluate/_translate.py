"""Translate a ``discovered_law`` source into one sympy expression valid on a task's domain.

The source is read with :mod:`ast` only and walked over an allowlist; nothing of it is executed.
Straight-line code is inlined (assignments, tuple assignments, augmented assignments, helper
functions, module-level constants); ``if`` statements and conditional expressions are resolved on
the domain sample: a branch never taken there is dropped, a branch always taken is kept, and a
branch taken on part of the domain is accepted only when it gives up (returns NaN/inf or raises),
which marks those points as undefined. ``min``/``max``/``abs`` whose choice is the same over the
whole sample are replaced by the chosen argument. Float literals become 60-digit sympy Floats,
integer literals exact Integers, so ``3/7`` stays exact while ``0.4286`` is a measured number.

Whatever cannot be translated raises :class:`Untranslatable` with a message that says what.
"""

from __future__ import annotations

import ast
import dataclasses
import math
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import sympy as sp

from etc_fast.expr import FUNCTIONS, accepted_text, sympy_functions

__all__ = ["Untranslatable", "Translation", "translate", "numeric", "FLOAT_DPS"]

#: Significant digits of a float literal's sympy Float.
FLOAT_DPS = 60
MAX_SOURCE = 20000
MAX_CALLS = 200
MAX_NODES = 20000


class Untranslatable(ValueError):
    """The source uses something the translator does not cover (the message says what)."""


def _float(value: float) -> sp.Expr:
    if math.isnan(value):
        return sp.nan
    if math.isinf(value):
        return sp.oo if value > 0 else -sp.oo
    return sp.Float(repr(float(value)), FLOAT_DPS)


def _pi_over(n):
    return lambda: sp.pi / n


# Functions by canonical name: builder(*args) -> sympy expression.
def _log(*a):
    if len(a) == 1:
        return sp.log(a[0])
    if len(a) == 2:
        return sp.log(a[0]) / sp.log(a[1])
    raise Untranslatable("log takes one or two arguments")


def _one(f):
    def g(*a):
        if len(a) != 1:
            raise Untranslatable(f"{f.__name__ if hasattr(f, '__name__') else 'function'} takes one argument")
        return f(a[0])
    return g


def _checked(f, name, arity):
    def g(*a):
        if len(a) != arity:
            raise Untranslatable(f"{name} takes {arity} argument{'s' if arity > 1 else ''}")
        return f(*a)
    return g


# Functions by canonical name: builder(*args) -> sympy expression. Every function of the law
# language (etc_fast.expr._functions, the one table the parser, the tasks and the policy read),
# ``log`` also with a base (math.log(x, b)), and what a submission may write beside them: array
# plumbing read as the value itself (``float``, ``np.asarray``), ``min``/``max`` resolved on the
# domain sample, and NumPy's compositions of the table's functions (``exp2``, ``square``, ``expit``).
_FUNCS: dict[str, Callable] = {
    name: _checked(build, name, FUNCTIONS[name].arity) for name, build in sympy_functions().items()
} | {
    "log": _log,
    "exp2": _one(lambda x: 2 ** x), "exp10": _one(lambda x: 10 ** x), "square": _one(lambda x: x ** 2),
    "reciprocal": _one(lambda x: 1 / x), "identity": _one(lambda x: x),
    "expit": _one(lambda x: 1 / (1 + sp.exp(-x))),
    "min": None, "max": None,  # resolved on the domain sample (see _Translator._minmax)
}
_ALIASES = {alias: f.name for f in FUNCTIONS.values() for alias in f.aliases} | {
    "float_power": "pow", "minimum": "min", "maximum": "max", "fmin": "min",
    "fmax": "max", "amin": "min", "amax": "max", "float": "identity", "float64": "identity", "double": "identity",
    "longdouble": "identity", "asarray": "identity", "array": "identity", "real": "identity",
}
_BUILTINS = {"abs": "abs", "pow": "pow", "min": "min", "max": "max", "float": "identity"}
_MODULE_CONSTANTS = {"pi": sp.pi, "e": sp.E, "tau": 2 * sp.pi, "inf": sp.oo, "nan": sp.nan, "Inf": sp.oo,
                     "NaN": sp.nan, "infty": sp.oo, "PINF": sp.oo, "NINF": -sp.oo}
_KNOWN_MODULES = {"numpy": "numpy", "math": "math", "cmath": "math", "scipy": "scipy", "scipy.special": "scipy.special",
                  "scipy.constants": "scipy.constants", "numpy.ma": "numpy"}
_CMP = {ast.Lt: np.less, ast.LtE: np.less_equal, ast.Gt: np.greater, ast.GtE: np.greater_equal,
        ast.Eq: np.equal, ast.NotEq: np.not_equal}


def _refused(what: str) -> str:
    """Why a call is not translated: ``what`` names the callee (``unknown function numpy.erf``)."""
    return f"{what}: the judge reads the law language's functions ({accepted_text()})"


@dataclasses.dataclass
class _Module:
    name: str


@dataclasses.dataclass
class _Func:
    node: ast.FunctionDef
    env: dict


@dataclasses.dataclass
class _Builtin:
    canonical: str


class _GiveUp(Exception):
    """A branch returns NaN/inf or raises: the points taking it are undefined."""


@dataclasses.dataclass(frozen=True)
class Translation:
    """A translated law.

    Attributes:
        expr: The sympy expression (task variables are its symbols).
        undefined: bool[n] mask over the domain sample where the submission gives up (returns NaN or
            raises on purpose); ``None`` when it never does.
        functions: Names of the functions the source calls (canonical names, e.g. ``"acos"``).
    """

    expr: sp.Expr
    undefined: np.ndarray | None
    functions: frozenset


def numeric(expr: sp.Expr, symbols: Sequence[sp.Symbol], X: np.ndarray) -> np.ndarray:
    """Evaluate a sympy expression at the rows of ``X`` with NumPy (NaN where undefined or complex)."""
    f = sp.lambdify(list(symbols), expr, modules="numpy")
    with np.errstate(all="ignore"):
        out = f(*[X[:, i] for i in range(X.shape[1])])
        out = np.asarray(out)
        if np.iscomplexobj(out):
            out = np.where(np.abs(out.imag) <= 1e-12 * np.abs(out.real), out.real, np.nan)
        out = np.broadcast_to(np.asarray(out, dtype=np.float64), (X.shape[0],)).copy()
    return out


class _Translator:
    def __init__(self, variables: Sequence[str], symbols: Mapping[str, sp.Symbol], sample: np.ndarray | None,
                 constants: Mapping[str, sp.Symbol]):
        self.variables = list(variables)
        self.symbols = dict(symbols)
        self.sample = sample
        self.constants = dict(constants)
        self.undefined = None if sample is None else np.zeros(sample.shape[0], dtype=bool)
        self.calls = 0
        self.functions: set[str] = set()
        self.reachable = None if sample is None else np.ones(sample.shape[0], dtype=bool)

    # ---- numeric view of the domain sample ---------------------------------------------
    def _values(self, expr) -> np.ndarray:
        if self.sample is None:
            raise Untranslatable("a condition cannot be decided without the task's domain")
        syms = [self.symbols[v] for v in self.variables]
        if isinstance(expr, sp.Expr) and expr.free_symbols - set(syms):
            raise Untranslatable("a condition depends on something other than the inputs")
        return numeric(sp.sympify(expr), syms, self.sample)

    def _decide(self, mask: np.ndarray) -> bool | None:
        live = self.reachable & ~self.undefined
        m = mask[live]
        if m.all():
            return True
        if not m.any():
            return False
        return None

    # ---- statements --------------------------------------------------------------------
    def run_block(self, stmts: list[ast.stmt], env: dict, *, top: bool):
        """Run statements; returns the returned value, or ``None`` when the block falls through."""
        for st in stmts:
            out = self.run_stmt(st, env, top=top)
            if out is not None:
                return out
        return None

    def run_stmt(self, st: ast.stmt, env: dict, *, top: bool):
        if isinstance(st, ast.Return):
            if st.value is None:
                raise Untranslatable(f"line {st.lineno}: return without a value")
            return ("value", self.value(st.value, env))
        if isinstance(st, ast.Assign):
            value = self.value(st.value, env)
            for target in st.targets:
                self.assign(target, value, env)
            return None
        if isinstance(st, ast.AnnAssign):
            if st.value is not None:
                self.assign(st.target, self.value(st.value, env), env)
            return None
        if isinstance(st, ast.AugAssign):
            if not isinstance(st.target, ast.Name):
                raise Untranslatable(f"line {st.lineno}: augmented assignment to something other than a name")
            cur = self.lookup(st.target.id, env, st)
            env[st.target.id] = self.binop(st.op, cur, self.expr(st.value, env), st)
            return None
        if isinstance(st, ast.Expr):
            if isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                return None  # a docstring
            raise Untranslatable(f"line {st.lineno}: an expression statement that is not a docstring")
        if isinstance(st, (ast.Import, ast.ImportFrom)):
            self.imports(st, env)
            return None
        if isinstance(st, ast.FunctionDef):
            if st.decorator_list:
                raise Untranslatable(f"line {st.lineno}: decorated function {st.name!r}")
            env[st.name] = _Func(st, env)
            return None
        if isinstance(st, ast.Pass):
            return None
        if isinstance(st, ast.Assert):
            return None  # an assertion either holds or raises: neither changes a returned value
        if isinstance(st, ast.Raise):
            raise _GiveUp()
        if isinstance(st, ast.If):
            return self.run_if(st, env, top=top)
        if isinstance(st, ast.Try):
            if st.finalbody or st.orelse:
                raise Untranslatable(f"line {st.lineno}: try with else/finally")
            return self.run_block(st.body, env, top=top)  # handlers run only where the body raises
        what = type(st).__name__
        names = {"For": "for loops", "While": "while loops", "With": "with statements", "ClassDef": "class definitions",
                 "Global": "global statements", "Nonlocal": "nonlocal statements", "Delete": "del statements"}
        raise Untranslatable(f"line {getattr(st, 'lineno', '?')}: {names.get(what, what)} are not translated")

    def run_if(self, st: ast.If, env: dict, *, top: bool):
        mask = self.condition(st.test, env)
        choice = self._decide(mask)
        if choice is True:
            return self.run_block(st.body, env, top=top)
        if choice is False:
            return self.run_block(st.orelse, env, top=top)
        # taken on part of the domain: accepted only when one side gives up there
        for branch, where, other in ((st.body, mask, st.orelse), (st.orelse, ~mask, st.body)):
            if self._gives_up(branch, env):
                self.undefined |= where & self.reachable
                return self.run_block(other, env, top=top)
        src = ast.unparse(st.test)
        raise Untranslatable(f"line {st.lineno}: the branch on `{src}` splits the domain (a piecewise law)")

    def _gives_up(self, branch: list[ast.stmt], env: dict) -> bool:
        if not branch:
            return False
        try:
            out = self.run_block(branch, dict(env), top=False)
        except _GiveUp:
            return True
        if out is None:
            return False
        val = out[1]
        return isinstance(val, sp.Basic) and val.is_number and not val.is_finite

    def assign(self, target: ast.expr, value, env: dict) -> None:
        if isinstance(target, ast.Name):
            env[target.id] = value
            return
        if isinstance(target, (ast.Tuple, ast.List)):
            if not isinstance(value, tuple) or len(value) != len(target.elts):
                raise Untranslatable(f"line {target.lineno}: tuple assignment with a mismatched value")
            for t, v in zip(target.elts, value):
                self.assign(t, v, env)
            return
        raise Untranslatable(f"line {target.lineno}: assignment to {type(target).__name__}")

    def imports(self, st, env: dict) -> None:
        if isinstance(st, ast.Import):
            for a in st.names:
                mod = _KNOWN_MODULES.get(a.name)
                if mod is None:
                    raise Untranslatable(f"line {st.lineno}: import of module {a.name!r}")
                env[a.asname or a.name.split(".")[0]] = _Module(mod if a.asname else _KNOWN_MODULES[a.name.split(".")[0]])
            return
        mod = _KNOWN_MODULES.get(st.module or "")
        if mod is None:
            raise Untranslatable(f"line {st.lineno}: import from module {st.module!r}")
        for a in st.names:
            if a.name == "*":
                raise Untranslatable(f"line {st.lineno}: star import")
            full = f"{mod}.{a.name}"
            if full in _KNOWN_MODULES:
                env[a.asname or a.name] = _Module(_KNOWN_MODULES[full])
            else:
                env[a.asname or a.name] = self.attribute(_Module(mod), a.name, st)

    # ---- expressions -------------------------------------------------------------------
    def lookup(self, name: str, env: dict, node):
        if name in env:
            return env[name]
        if name in self.symbols:
            return self.symbols[name]
        if name in self.constants:
            return self.constants[name]
        if name in _BUILTINS:
            return _Builtin(_BUILTINS[name])
        if name in ("pi", "e"):
            return _MODULE_CONSTANTS[name]
        if name in ("np", "numpy", "math"):
            return _Module("math" if name == "math" else "numpy")
        if name in _FUNCS or name in _ALIASES:
            return _Builtin(_ALIASES.get(name, name))  # bare names of the hypothesis language
        raise Untranslatable(f"line {getattr(node, 'lineno', '?')}: unknown name {name!r}")

    def attribute(self, mod: _Module, attr: str, node):
        line = getattr(node, "lineno", "?")
        if mod.name == "scipy.constants":
            import scipy.constants as sc

            v = getattr(sc, attr, None)
            if isinstance(v, float) and not attr.startswith("_"):
                return _float(v)
            raise Untranslatable(f"line {line}: scipy.constants.{attr} is not a number the judge knows")
        if mod.name == "scipy":
            if attr in ("special", "constants"):
                return _Module(f"scipy.{attr}")
            raise Untranslatable(f"line {line}: scipy.{attr}")
        if attr in _MODULE_CONSTANTS and mod.name in ("numpy", "math"):
            return _MODULE_CONSTANTS[attr]
        canonical = _ALIASES.get(attr, attr)
        if canonical in _FUNCS:
            return _Builtin(canonical)
        raise Untranslatable(f"line {line}: {_refused(f'unknown function {mod.name}.{attr}')}")

    def value(self, node: ast.expr, env: dict):
        """An expression or a tuple of expressions (for tuple assignment and helper returns)."""
        if isinstance(node, (ast.Tuple, ast.List)):
            return tuple(self.expr(e, env) for e in node.elts)
        if isinstance(node, ast.Call):
            return self.call(node, env, allow_tuple=True)
        return self.expr(node, env)

    def expr(self, node: ast.expr, env: dict) -> sp.Expr:
        out = self._expr(node, env)
        if not isinstance(out, sp.Basic):
            what = "a module" if isinstance(out, _Module) else "a function" if isinstance(out, (_Func, _Builtin)) else "a tuple"
            raise Untranslatable(f"line {getattr(node, 'lineno', '?')}: {what} used as a number")
        return out

    def _expr(self, node: ast.expr, env: dict):
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.Constant):
            v = node.value
            if isinstance(v, bool) or not isinstance(v, (int, float)):
                raise Untranslatable(f"line {line}: constant {v!r} is not a real number")
            return sp.Integer(v) if isinstance(v, int) else _float(v)
        if isinstance(node, ast.Name):
            return self.lookup(node.id, env, node)
        if isinstance(node, ast.Attribute):
            base = self._expr(node.value, env)
            if isinstance(base, _Module):
                return self.attribute(base, node.attr, node)
            raise Untranslatable(f"line {line}: attribute .{node.attr} of a value")
        if isinstance(node, ast.BinOp):
            return self.binop(node.op, self.expr(node.left, env), self.expr(node.right, env), node)
        if isinstance(node, ast.UnaryOp):
            v = self.expr(node.operand, env)
            if isinstance(node.op, ast.USub):
                return -v
            if isinstance(node.op, ast.UAdd):
                return v
            raise Untranslatable(f"line {line}: operator {type(node.op).__name__} outside a condition")
        if isinstance(node, ast.Call):
            return self.call(node, env, allow_tuple=False)
        if isinstance(node, ast.IfExp):
            mask = self.condition(node.test, env)
            choice = self._decide(mask)
            if choice is True:
                return self.expr(node.body, env)
            if choice is False:
                return self.expr(node.orelse, env)
            for side, where, other in ((node.body, mask, node.orelse), (node.orelse, ~mask, node.body)):
                try:
                    v = self.expr(side, env)
                    gives_up = v.is_number and not v.is_finite
                except _GiveUp:
                    gives_up = True
                if gives_up:
                    self.undefined |= where & self.reachable
                    return self.expr(other, env)
            raise Untranslatable(f"line {line}: the conditional `{ast.unparse(node.test)}` splits the domain (a piecewise law)")
        raise Untranslatable(f"line {line}: {type(node).__name__} is not translated")

    def binop(self, op, a, b, node) -> sp.Expr:
        line = getattr(node, "lineno", "?")
        if isinstance(op, ast.Add):
            return a + b
        if isinstance(op, ast.Sub):
            return a - b
        if isinstance(op, ast.Mult):
            return a * b
        if isinstance(op, ast.Div):
            if b == 0:
                raise _GiveUp()
            return a / b
        if isinstance(op, ast.Pow):
            if a.is_number and b.is_number and b.is_Integer and abs(int(b)) > 64:
                try:
                    return _float(float(a) ** int(b))
                except (OverflowError, ZeroDivisionError, TypeError):
                    raise Untranslatable(f"line {line}: a constant power that overflows") from None
            return a ** b
        raise Untranslatable(f"line {line}: operator {type(op).__name__}")

    def call(self, node: ast.Call, env: dict, *, allow_tuple: bool):
        line = getattr(node, "lineno", "?")
        self.calls += 1
        if self.calls > MAX_CALLS:
            raise Untranslatable("too many calls to translate")
        if isinstance(node.func, ast.Name) and node.func.id not in env and node.func.id not in self.symbols \
                and node.func.id not in self.constants and node.func.id not in _BUILTINS \
                and node.func.id not in _FUNCS and node.func.id not in _ALIASES:
            raise Untranslatable(f"line {line}: {_refused(f'unknown name {node.func.id!r} called as a function')}")
        func = self._expr(node.func, env)
        if isinstance(func, _Func):
            out = self.call_helper(func, node, env)
            if isinstance(out, tuple) and not allow_tuple:
                raise Untranslatable(f"line {line}: helper {func.node.name!r} returns a tuple used as a number")
            return out
        if not isinstance(func, _Builtin):
            raise Untranslatable(f"line {line}: call of something that is not a known function")
        name = func.canonical
        if node.keywords:
            raise Untranslatable(f"line {line}: keyword arguments to {name}")
        if name == "identity" and len(node.args) == 1 and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            s = node.args[0].value.strip().lower()
            if s in ("nan", "+nan", "-nan"):
                return sp.nan
            if s in ("inf", "+inf", "infinity", "-inf", "-infinity"):
                return -sp.oo if s.startswith("-") else sp.oo
            raise Untranslatable(f"line {line}: float of the string {s!r}")
        args = [self.expr(a, env) for a in node.args]
        if not all(a.is_number for a in args):  # np.exp(1) is a number, not a use of exp
            self.functions.add(name)
        if name in ("min", "max"):
            return self._minmax(name, args, node)
        out = _FUNCS[name](*args)
        if name == "abs":
            return self._abs(args[0], out)
        return out

    def _minmax(self, name, args, node):
        if len(args) < 2:
            raise Untranslatable(f"line {getattr(node, 'lineno', '?')}: {name} needs at least two arguments")
        if self.sample is None:
            return (sp.Max if name == "max" else sp.Min)(*args)
        vals = [self._values(a) for a in args]
        live = self.reachable & ~self.undefined
        for i, vi in enumerate(vals):
            ok = True
            for j, vj in enumerate(vals):
                if i != j:
                    with np.errstate(invalid="ignore"):
                        dominates = vi[live] >= vj[live] if name == "max" else vi[live] <= vj[live]
                    if not dominates.all():
                        ok = False
                        break
            if ok:
                return args[i]
        return (sp.Max if name == "max" else sp.Min)(*args)

    def _abs(self, arg, out):
        if self.sample is None or arg.is_number:
            return out
        v = self._values(arg)[self.reachable & ~self.undefined]
        if (v >= 0).all():
            return arg
        if (v <= 0).all():
            return -arg
        return out

    def call_helper(self, func: _Func, node: ast.Call, env: dict):
        fd = func.node
        params = [a.arg for a in fd.args.args]
        if fd.args.vararg or fd.args.kwarg or fd.args.kwonlyargs or fd.args.posonlyargs:
            raise Untranslatable(f"line {fd.lineno}: helper {fd.name!r} has an unsupported signature")
        local = dict(func.env)
        local[fd.name] = func  # allows the helper to be found by name
        defaults = fd.args.defaults
        bound: dict[str, object] = {}
        for p, d in zip(params[len(params) - len(defaults):], defaults):
            bound[p] = self.value(d, func.env)
        if len(node.args) > len(params):
            raise Untranslatable(f"line {node.lineno}: too many arguments to {fd.name!r}")
        for p, a in zip(params, node.args):
            bound[p] = self.value(a, env)
        for kw in node.keywords:
            if kw.arg not in params:
                raise Untranslatable(f"line {node.lineno}: unknown keyword {kw.arg!r} for {fd.name!r}")
            bound[kw.arg] = self.value(kw.value, env)
        missing = [p for p in params if p not in bound]
        if missing:
            raise Untranslatable(f"line {node.lineno}: missing argument(s) {missing} to {fd.name!r}")
        local.update(bound)
        out = self.run_block(fd.body, local, top=False)
        if out is None:
            raise Untranslatable(f"line {fd.lineno}: helper {fd.name!r} may end without returning a value")
        return out[1]

    def condition(self, node: ast.expr, env: dict) -> np.ndarray:
        """A condition evaluated over the domain sample (bool mask)."""
        line = getattr(node, "lineno", "?")
        if isinstance(node, ast.BoolOp):
            masks = [self.condition(v, env) for v in node.values]
            out = masks[0]
            for m in masks[1:]:
                out = (out & m) if isinstance(node.op, ast.And) else (out | m)
            return out
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            return ~self.condition(node.operand, env)
        if isinstance(node, ast.Compare):
            left = self._values(self.expr(node.left, env))
            out = None
            for op, comp in zip(node.ops, node.comparators):
                right = self._values(self.expr(comp, env))
                f = _CMP.get(type(op))
                if f is None:
                    raise Untranslatable(f"line {line}: comparison {type(op).__name__}")
                with np.errstate(invalid="ignore"):
                    m = f(left, right)
                out = m if out is None else out & m
                left = right
            return out
        if isinstance(node, ast.Call):
            func = self._expr(node.func, env)
            name = getattr(func, "canonical", None) if isinstance(func, _Builtin) else None
            attr = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", "")
            if attr in ("isnan", "isinf", "isfinite", "any", "all", "iscomplexobj", "iscomplex") and len(node.args) == 1 \
                    and not node.keywords:
                if attr in ("any", "all"):
                    return self.condition(node.args[0], env)
                if attr in ("iscomplexobj", "iscomplex"):
                    return np.zeros(self.sample.shape[0], dtype=bool)
                v = self._values(self.expr(node.args[0], env))
                return {"isnan": np.isnan, "isinf": np.isinf, "isfinite": np.isfinite}[attr](v)
            del name
        v = self._values(self.expr(node, env))
        return v != 0


def translate(source: str, variables: Sequence[str], symbols: Mapping[str, sp.Symbol], *,
              sample: np.ndarray | None = None, constants: Mapping[str, sp.Symbol] | None = None) -> Translation:
    """Translate a law into a sympy expression.

    Args:
        source: A ``discovered_law`` definition (with optional imports, constants and helpers) or a
            bare expression.
        variables: The task's variable names in signature order.
        symbols: Variable name -> sympy symbol.
        sample: float64[n, d] points of the domain used to resolve branches, ``min``/``max``/``abs``
            (``None``: no branches allowed).
        constants: Names the law may use for hidden constants -> sympy symbols (truth only).

    Raises:
        Untranslatable: what could not be translated.
    """
    if not isinstance(source, str) or not source.strip():
        raise Untranslatable("no source to translate")
    if len(source) > MAX_SOURCE:
        raise Untranslatable(f"the source is longer than {MAX_SOURCE} characters")
    import textwrap

    text = textwrap.dedent(source).strip()
    tr = _Translator(variables, symbols, sample, constants or {})
    try:
        try:
            tree = ast.parse(text, mode="eval")
        except SyntaxError:
            tree = None
        if tree is not None:
            expr = tr.expr(tree.body, {})
        else:
            try:
                module = ast.parse(text)
            except SyntaxError as exc:
                raise Untranslatable(f"not valid Python: {exc.msg} (line {exc.lineno})") from None
            if sum(1 for _ in ast.walk(module)) > MAX_NODES:
                raise Untranslatable("the source is too large to translate")
            env: dict = {}
            law = None
            for st in module.body:
                if isinstance(st, ast.FunctionDef) and st.name == "discovered_law":
                    law = st
                    continue
                if isinstance(st, ast.Expr) and isinstance(st.value, ast.Constant) and isinstance(st.value.value, str):
                    continue
                if isinstance(st, ast.Return):
                    raise Untranslatable(f"line {st.lineno}: return outside a function")
                out = tr.run_stmt(st, env, top=True)
                del out
            if law is None:
                raise Untranslatable("no function named discovered_law")
            params = [a.arg for a in law.args.args]
            if len(params) != len(variables) or law.args.vararg or law.args.kwarg or law.args.kwonlyargs:
                raise Untranslatable(f"discovered_law must take ({', '.join(variables)})")
            local = dict(env)
            for p, v in zip(params, variables):
                local[p] = symbols[v]
            out = tr.run_block(law.body, local, top=True)
            if out is None:
                raise Untranslatable("discovered_law may end without returning a value")
            expr = out[1]
            if not isinstance(expr, sp.Basic):
                raise Untranslatable("discovered_law returns a tuple, not a number")
    except _GiveUp:
        raise Untranslatable("the law gives up (returns NaN or raises) on the whole domain") from None
    except RecursionError:
        raise Untranslatable("the source nests too deeply to translate") from None
    except (TypeError, ValueError, ZeroDivisionError, OverflowError, AttributeError) as exc:
        if isinstance(exc, Untranslatable):
            raise
        raise Untranslatable(f"cannot build the expression: {type(exc).__name__}: {exc}") from None
    if expr.is_number and not expr.is_finite:
        raise Untranslatable("the law returns NaN or infinity")
    if expr.has(sp.nan, sp.zoo, sp.oo):
        raise Untranslatable("the expression contains NaN or infinity")
    undefined = tr.undefined if tr.undefined is not None and tr.undefined.any() else None
    return Translation(expr=expr, undefined=undefined, functions=frozenset(tr.functions))
