"""Vectorized evaluation of a scalar Python law expression with exact scalar semantics.

NewtonBench computes each law point by point on Python floats. Whether a value is undefined there
depends on *which kind of number* each intermediate is, because Python and NumPy disagree:

* Python ``float``: ``x / 0`` and ``0 ** -a`` raise ``ZeroDivisionError``; ``**`` raises
  ``OverflowError`` on overflow; a negative base with a fractional exponent gives a Python
  ``complex``; ``+ - *`` overflow silently to ``inf``.
* ``numpy.float64`` (anything that went through an ``np.`` function, or met one): IEEE results,
  and inside ``np.errstate(over/divide/invalid='raise')`` those events raise ``FloatingPointError``.
* ``math.*`` functions raise ``ValueError``/``OverflowError`` instead of returning inf/NaN, and
  ``TypeError`` on complex input.
* Python ``complex`` and ``numpy.complex128`` mix by Python's binary-operator rules (a NumPy
  scalar on the left, or a ``complex128`` on either side, makes the result a NumPy complex).

:func:`evaluate` walks the expression's AST once over whole arrays, tracking per element the
number kind (Python float, NumPy float, Python complex, NumPy complex) and whether an exception
would have been raised. The caller decides what an exception or a complex result means. Points
that pass through a complex intermediate are evaluated again with the C library's ``pow`` (as the
scalar code uses), so that even chaotic cases (a huge imaginary part fed to ``exp``) agree.
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import math
from collections.abc import Mapping

import numpy as np

from etc_fast.expr import FUNCTIONS

__all__ = ["PF", "NF", "PC", "NC", "Value", "evaluate", "compile_expression"]

#: Number kinds: Python float, NumPy float64, Python complex, NumPy complex128.
PF, NF, PC, NC = 0, 1, 2, 3

_DEG = math.pi / 180.0  # CPython's math.radians factor (degrees divides by it)


@dataclasses.dataclass
class Value:
    """Values of one sub-expression at ``n`` points.

    Attributes:
        re: float64[n] real part.
        im: float64[n] imaginary part (0 where the kind is real).
        kind: int8[n] one of :data:`PF`, :data:`NF`, :data:`PC`, :data:`NC`.
        err: bool[n] True where evaluating this (or any earlier) step raised.
        cx: bool[n] True where this or an earlier step was complex.
    """

    re: np.ndarray
    im: np.ndarray
    kind: np.ndarray
    err: np.ndarray
    cx: np.ndarray

    @property
    def z(self) -> np.ndarray:
        """complex128[n] (built part by part: ``re + 1j * im`` would turn an infinite ``im`` into NaN)."""
        z = np.empty(self.re.shape, dtype=np.complex128)
        z.real = self.re
        z.imag = self.im
        return z

    @property
    def is_complex(self) -> np.ndarray:
        return self.kind >= PC


def _real(x: np.ndarray, kind: int, err: np.ndarray | None = None, cx: np.ndarray | None = None) -> Value:
    n = x.shape[0]
    return Value(
        x.astype(np.float64, copy=False),
        np.zeros(n),
        np.full(n, kind, dtype=np.int8),
        np.zeros(n, dtype=bool) if err is None else err,
        np.zeros(n, dtype=bool) if cx is None else cx,
    )


def _merge(kind, real_res, complex_res, err, cx) -> Value:
    """Assemble a Value from a real and a complex candidate result, chosen by ``kind``."""
    cplx = kind >= PC
    re = np.where(cplx, complex_res.real, real_res)
    im = np.where(cplx, complex_res.imag, 0.0)
    return Value(re, im, kind, err, cx | cplx)


def _nonfinite_from_finite(result: np.ndarray, *operands: np.ndarray) -> np.ndarray:
    """Where an IEEE operation would set overflow/divide/invalid: a non-finite result from finite
    operands, or NaN from operands without NaN."""
    ok_in = np.ones(result.shape, dtype=bool)
    no_nan = np.ones(result.shape, dtype=bool)
    for o in operands:
        ok_in &= np.isfinite(o)
        no_nan &= ~np.isnan(o)
    return (~np.isfinite(result) & ok_in) | (np.isnan(result) & no_nan)


def _binary_kind(ka: np.ndarray, kb: np.ndarray) -> np.ndarray:
    """Result kind of ``a <op> b`` by Python's operator dispatch (before value-dependent pow rules)."""
    both_real = (ka <= NF) & (kb <= NF)
    real_kind = np.where((ka == PF) & (kb == PF), PF, NF)
    # Complex cases: a NumPy complex anywhere, or a NumPy float on the left of a Python complex,
    # yields complex128 (NumPy's method runs first); otherwise Python's complex wins.
    numpy_complex = (ka == NC) | (kb == NC) | ((ka == NF) & (kb == PC))
    cplx_kind = np.where(numpy_complex, NC, PC)
    return np.where(both_real, real_kind, cplx_kind).astype(np.int8)


def _c_pow(x: float, y: float) -> float:
    """C ``pow(x, y)`` on floats, through Python (raising cases are flagged by the caller)."""
    try:
        r = x**y
    except OverflowError:
        return math.inf
    except ZeroDivisionError:
        return math.inf
    return r if isinstance(r, float) else math.nan


_libm_cos = np.frompyfunc(math.cos, 1, 1)
_libm_sin = np.frompyfunc(math.sin, 1, 1)
_libm_pow = np.frompyfunc(_c_pow, 2, 1)


def _py_complex_pow(base_re: np.ndarray, exponent: np.ndarray) -> np.ndarray:
    """CPython's ``float ** float`` for a negative base and a non-integral exponent (``c_pow``).

    Uses the C library's pow/cos/sin (through Python floats), as CPython does: the result often
    feeds ``np.exp``, whose real part can swing on a last-bit change of a large imaginary argument.
    Called only on the (few) points that turn complex.
    """
    length = _libm_pow(np.abs(base_re), exponent).astype(np.float64)
    phase = np.arctan2(0.0, base_re) * exponent
    z = np.empty(length.shape, dtype=np.complex128)
    z.real = length * _libm_cos(phase).astype(np.float64)
    z.imag = length * _libm_sin(phase).astype(np.float64)
    return z


def _float_pow(a: np.ndarray, b: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Python ``float ** float``: returns (real result, complex result, becomes_complex, raised)."""
    real = np.power(a, b)
    b_integral = np.isfinite(b) & (np.floor(b) == b)
    to_complex = (a < 0) & np.isfinite(a) & ~b_integral & np.isfinite(b)
    zero_div = (a == 0) & (b < 0)
    overflow = np.isinf(real) & np.isfinite(a) & np.isfinite(b) & (a != 0)
    real = np.where(b == 0, 1.0, real)  # x ** 0 == 1.0 even for NaN x
    cres = np.zeros(a.shape, dtype=np.complex128)
    if to_complex.any():
        cres[to_complex] = _py_complex_pow(a[to_complex], b[to_complex])
    cplx_overflow = to_complex & ~np.isfinite(cres)
    raised = zero_div | (overflow & ~to_complex) | cplx_overflow
    return real, cres, to_complex, raised


class _Evaluator:
    def __init__(self, names: Mapping[str, Value], constants: Mapping[str, float], fp_raise: bool, n: int, exact: bool):
        self.names = names
        self.constants = constants
        self.fp_raise = fp_raise
        self.n = n
        self.exact = exact  # real powers through the C library's pow(), as Python and NumPy scalars do

    # -- dispatch ---------------------------------------------------------------------------
    def visit(self, node: ast.AST) -> Value:
        if isinstance(node, ast.Expression):
            return self.visit(node.body)
        if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
            return _real(np.full(self.n, float(node.value)), PF)
        if isinstance(node, ast.Name):
            if node.id in self.names:
                return self.names[node.id]
            if node.id in self.constants:
                return _real(np.full(self.n, float(self.constants[node.id])), PF)
            raise ValueError(f"unknown name {node.id!r} in law expression")
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            v = self.visit(node.operand)
            return Value(-v.re, np.where(v.is_complex, -v.im, 0.0), v.kind, v.err, v.cx)
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd):
            return self.visit(node.operand)
        if isinstance(node, ast.BinOp):
            return self._binop(node.op, self.visit(node.left), self.visit(node.right))
        if isinstance(node, ast.Call):
            return self._call(node)
        raise ValueError(f"unsupported law syntax: {ast.unparse(node)!r}")

    # -- operators --------------------------------------------------------------------------
    def _binop(self, op: ast.operator, a: Value, b: Value) -> Value:
        kind = _binary_kind(a.kind, b.kind)
        err = a.err | b.err
        za, zb = a.z, b.z
        if isinstance(op, ast.Add):
            real, cres = a.re + b.re, za + zb
        elif isinstance(op, ast.Sub):
            real, cres = a.re - b.re, za - zb
        elif isinstance(op, ast.Mult):
            real, cres = a.re * b.re, za * zb
        elif isinstance(op, ast.Div):
            real, cres = a.re / b.re, za / zb
            py_zero = (kind == PF) & (b.re == 0)
            py_czero = (kind == PC) & (b.re == 0) & (b.im == 0)
            err = err | py_zero | py_czero
        elif isinstance(op, ast.Pow):
            real = _libm_pow(a.re, b.re).astype(np.float64) if self.exact else np.power(a.re, b.re)
            cres = np.power(za, zb)
            pf = kind == PF
            f_real, f_cres, f_cplx, f_raised = _float_pow(a.re, b.re)
            real = np.where(pf, f_real, real)
            cres = np.where(pf & f_cplx, f_cres, cres)
            err = err | (pf & f_raised)
            kind = np.where(pf & f_cplx, PC, kind).astype(np.int8)
            # Python complex power: 0 to a negative power raises; overflow raises.
            pc = kind == PC
            c_zero = pc & ~(pf & f_cplx) & (a.re == 0) & (a.im == 0) & ((b.re < 0) | (b.im != 0))
            c_over = pc & ~np.isfinite(cres) & np.isfinite(za) & np.isfinite(zb)
            err = err | c_zero | c_over
        else:
            raise ValueError(f"unsupported operator {type(op).__name__} in law expression")
        out = _merge(kind, real, cres, err, a.cx | b.cx)
        if self.fp_raise:  # NumPy scalars raise FloatingPointError on overflow/divide/invalid
            nf = kind == NF
            nc = kind == NC
            err = out.err | (nf & _nonfinite_from_finite(real, a.re, b.re))
            cflag = _nonfinite_from_finite(cres.real, a.re, b.re, a.im, b.im) | _nonfinite_from_finite(
                cres.imag, a.re, b.re, a.im, b.im
            )
            out.err = err | (nc & cflag)
        return out

    # -- calls --------------------------------------------------------------------------------
    def _call(self, node: ast.Call) -> Value:
        func = node.func
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("np", "math")):
            raise ValueError(f"unsupported call {ast.unparse(node)!r} in law expression")
        lib, name = func.value.id, func.attr
        table = _NUMPY_FUNCS if lib == "np" else _MATH_FUNCS
        fn = table.get(name)
        if fn is None:
            raise ValueError(f"unsupported function {lib}.{name} in a law expression (the law language's "
                             f"functions, as {lib} spells them: {', '.join(sorted(table))})")
        if len(node.args) != fn.arity or node.keywords:
            raise ValueError(f"{lib}.{name} takes {fn.arity} argument{'s' if fn.arity > 1 else ''} in a law expression")
        args = [self.visit(a) for a in node.args]
        if lib == "np":
            return self._numpy_call(fn.ufunc, args)
        return self._math_call(name, args)

    def _numpy_call(self, fn, args: list[Value]) -> Value:
        is_complex = np.zeros(self.n, dtype=bool)
        err = np.zeros(self.n, dtype=bool)
        cx = np.zeros(self.n, dtype=bool)
        for a in args:
            is_complex |= a.is_complex
            err |= a.err
            cx |= a.cx
        real = fn(*[a.re for a in args])
        cres = np.zeros(self.n, dtype=np.complex128)
        if is_complex.any():
            try:
                res = fn(*[a.z for a in args])
            except TypeError:  # a function of reals only (cbrt, arctan2, hypot, ...): Python raises
                err = err | is_complex
            else:
                if np.iscomplexobj(res):
                    cres = res
                else:  # abs of a complex number is its real modulus
                    real = np.where(is_complex, res, real)
                    is_complex = np.zeros(self.n, dtype=bool)
        kind = np.where(is_complex, NC, NF).astype(np.int8)
        out = _merge(kind, real, cres, err, cx)
        if self.fp_raise:
            flag_r = _nonfinite_from_finite(real, *[a.re for a in args])
            parts = [p for a in args for p in (a.re, a.im)]
            flag_c = _nonfinite_from_finite(cres.real, *parts) | _nonfinite_from_finite(cres.imag, *parts)
            out.err |= np.where(is_complex, flag_c, flag_r)
        return out

    def _math_call(self, name: str, args: list[Value]) -> Value:
        x = args[0]
        err = np.zeros(self.n, dtype=bool)
        cx = np.zeros(self.n, dtype=bool)
        for a in args:
            err |= a.err | a.is_complex  # math.* of a complex: TypeError
            cx |= a.cx | a.is_complex
        if name == "radians":
            real, raised = x.re * _DEG, np.zeros(self.n, dtype=bool)
        elif name == "degrees":
            real, raised = x.re / _DEG, np.zeros(self.n, dtype=bool)
        else:
            real = _MATH_FUNCS[name].ufunc(*[a.re for a in args])
            raised = _nonfinite_from_finite(real, *[a.re for a in args])  # ValueError (domain) / OverflowError
        return _real(real, PF, err | raised, cx)


def _spelled(module) -> dict:
    """The law language's functions under the names ``module`` has for them (``np.arcsin``,
    ``math.asin``); ``pow`` is left out (a law writes ``**``)."""
    out = {}
    for f in FUNCTIONS.values():
        if f.name == "pow":
            continue
        for name in (f.name, *f.aliases):
            if hasattr(module, name):
                out[name] = f
    return out


_NUMPY_FUNCS = _spelled(np)
_MATH_FUNCS = _spelled(math)


@functools.lru_cache(maxsize=512)
def compile_expression(text: str) -> ast.Expression:
    """Parse a law expression once (cached)."""
    return ast.parse(text, mode="eval")


def evaluate(
    text: str,
    inputs: Mapping[str, np.ndarray],
    constants: Mapping[str, float] | None = None,
    *,
    fp_raise: bool = False,
) -> Value:
    """Evaluate ``text`` at every point as NewtonBench would on Python float inputs.

    Args:
        text: A Python expression over input names, module constants, numbers, ``np.``/``math.``
            calls of the law language's functions (:mod:`etc_fast.expr._functions`) under the names
            the module has for them, and ``+ - * / **``.
        inputs: name -> float64[n] (each treated as a Python float per point).
        constants: module constant name -> value (Python floats).
        fp_raise: evaluate inside ``np.errstate(over/divide/invalid='raise', under='ignore')``.

    Returns:
        The per-point :class:`Value` (kind and raised flags included).
    """
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in inputs.items()}
    n = next(iter(arrays.values())).shape[0] if arrays else 1
    tree = compile_expression(text)
    with np.errstate(all="ignore"):
        names = {k: _real(v, PF) for k, v in arrays.items()}
        value = _Evaluator(names, constants or {}, fp_raise, n, exact=False).visit(tree)
        redo = np.flatnonzero(value.cx)
        if redo.size:
            # NumPy's vectorized pow may differ from C pow() in the last bit. That is harmless for
            # real results, but a complex intermediate (negative inputs) can carry a huge imaginary
            # part into exp(), whose real part then depends on that bit: redo those few points
            # with pow() exactly as the scalar code computes it.
            sub = {k: _real(v[redo], PF) for k, v in arrays.items()}
            exact = _Evaluator(sub, constants or {}, fp_raise, redo.size, exact=True).visit(tree)
            for field in ("re", "im", "kind", "err", "cx"):
                getattr(value, field)[redo] = getattr(exact, field)
    return value
