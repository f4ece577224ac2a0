"""Law forms of the symbolic search and their two evaluators.

A :class:`Form` is ``outer(inner)`` with fitted constants (see :mod:`._grammar`). It is evaluated

* in batches on the compiled program machine (:func:`kernels.programs.evaluate_programs`):
  :func:`compile_forms` writes each form straight into the packed postfix layout of
  :func:`etc_fast.expr.pack` (same opcodes, same constant tables), and one kernel call evaluates
  every form of a batch over an *atom table* (one column per atom: ``x``, ``sin(x)``, ...). This is
  how the search scores its candidates. Writing the postfix code directly costs a few microseconds
  per form, where rendering the text and running :func:`etc_fast.expr.parse` on it would cost more
  than the evaluation itself;
* one at a time with NumPy (:func:`predict`), inside optimizers that move the constants of one
  form (``scipy.optimize.least_squares`` calls it once per residual).

Both give the values of the form's rendered expression (up to rounding in the last bits).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Protocol

import numpy as np

from etc_fast.policies.symbolic._grammar import Atom, Outer, exponent_cost
from kernels.programs import OPCODES, evaluate_programs

__all__ = ["Form", "common_factor", "mono_values", "predict", "form_code", "pack_codes", "compile_forms", "evaluate_forms"]

_VAR, _CONST = OPCODES["var"], OPCODES["const"]
_MUL, _ADD, _POW, _EXP = OPCODES["mul"], OPCODES["add"], OPCODES["pow"], OPCODES["exp"]
_DIV = OPCODES["div"]


class _CompoundSpec(Protocol):
    """What a ``compound`` form's ``spec`` provides: :class:`._expfamilies.Template` (a protocol
    here, since ``_expfamilies`` imports this module)."""

    @property
    def name(self) -> str: ...

    def values(self, A: np.ndarray, exps, prm) -> np.ndarray: ...

    def emit(self, exps, params, const: Callable, factors: Callable, op: Callable) -> None: ...

    def render(self, exps, params, fmt: Callable[[float], str], fn: Callable[[str], str],
               mono: Callable[[Sequence[float]], str]) -> str: ...

    def complexity(self, exps, mono_cost: Callable[[Sequence[float]], float]) -> float: ...


@dataclasses.dataclass(frozen=True)
class Form:
    """One law of the grammar with its constants.

    Attributes:
        atoms: The atoms monomials are built from (a *view*).
        outer: The outer transform.
        kind: ``"mono"``, ``"expmono"``, ``"sum"`` or ``"ratio"``.
        exps: One exponent vector per term (aligned with ``atoms``); for ``ratio`` the numerator's
            terms, then the denominator's.
        params: ``mono``/``sum``/``ratio``: one coefficient per term; ``expmono``: ``(C, g)``.
        exp_exps: ``expmono`` only: exponents of the monomial inside the exponential.
        n_num: ``ratio`` only: numerator terms; the law is ``sum(num) / (1 + sum(den))``.
        spec: ``compound`` only: the :class:`._expfamilies.Template` (``exps``: ``(M, N)``).
    """

    atoms: tuple[Atom, ...]
    outer: Outer
    kind: str
    exps: tuple[tuple[float, ...], ...]
    params: tuple[float, ...]
    exp_exps: tuple[float, ...] | None = None
    n_num: int = 0
    spec: _CompoundSpec | None = None


# ----------------------------------------------------------------------------------------
# NumPy evaluation (one form, varying constants)
# ----------------------------------------------------------------------------------------
def mono_values(A: np.ndarray, p: Sequence[float] | np.ndarray) -> np.ndarray:
    """``prod_j A[:, j] ** p[j]`` (float64[n]) for an atom matrix ``A`` float64[n, m]."""
    out = np.ones(A.shape[0])
    for j, pj in enumerate(p):
        if pj != 0.0:
            out = out * (A[:, j] if pj == 1.0 else A[:, j] ** pj)
    return out


def _inner(form: Form, A: np.ndarray, prm) -> np.ndarray:
    if form.kind == "compound":
        return form.spec.values(A, form.exps, prm)
    if np.ndim(prm) == 2:  # a batch [B, P]: each constant a column, the same element-wise operations
        prm = [prm[:, i, None] for i in range(np.shape(prm)[1])]
    if form.kind == "expmono":
        return prm[0] * mono_values(A, form.exps[0]) * np.exp(prm[1] * mono_values(A, form.exp_exps))
    if form.kind == "ratio":
        k = form.n_num
        num = sum((c * mono_values(A, p) for c, p in zip(prm[:k], form.exps[:k])), np.zeros(A.shape[0]))
        den = sum((c * mono_values(A, p) for c, p in zip(prm[k:], form.exps[k:])), np.ones(A.shape[0]))
        return num / den
    s = np.zeros(A.shape[0])
    for c, p in zip(prm, form.exps):
        s = s + c * mono_values(A, p)
    return s


def predict(form: Form, A: np.ndarray, params: Sequence[float] | None = None) -> np.ndarray:
    """Values of ``form`` (float64[n]) on the atom matrix of its view ``A`` float64[n, len(form.atoms)].

    Args:
        form: The form.
        A: ``A[:, j]`` holds the values of ``form.atoms[j]``.
        params: Constants to use instead of ``form.params``; a batch float64[B, P] gives the values
            [B, n] of every row, each with the bits of that row's single call.
    """
    with np.errstate(all="ignore"):
        return form.outer.forward(_inner(form, A, form.params if params is None else params))


# ----------------------------------------------------------------------------------------
# Compiled evaluation (many forms, one kernel call)
# ----------------------------------------------------------------------------------------
def form_code(form: Form, column: Callable[[Atom], int]) -> tuple[list[int], list[int], list[float], list[int]]:
    """Postfix code of one form.

    Args:
        form: The form.
        column: Column of the atom table holding a given atom.

    Returns:
        ``(ops, args, consts, slots)``: opcodes, their arguments, the program's constant table and
        the positions of ``form.params`` in it (so the code can be reused with other constants).
    """
    ops: list[int] = []
    args: list[int] = []
    consts: list[float] = []
    slots: list[int] = []

    def const(v: float, param: bool = False) -> None:
        ops.append(_CONST)
        args.append(len(consts))
        if param:
            slots.append(len(consts))
        consts.append(float(v))

    def factors(p: Sequence[float]) -> None:  # multiplies prod_j atom_j ** p_j onto the top
        for a, pj in zip(form.atoms, p):
            if pj != 0.0:
                ops.append(_VAR)
                args.append(column(a))
                if pj != 1.0:
                    const(pj)
                    ops.append(_POW)
                    args.append(0)
                ops.append(_MUL)
                args.append(0)

    def instructions(code) -> None:
        for ins in code:
            if ins[0] == "const":
                const(ins[1])
            else:
                ops.append(OPCODES[ins[0]])
                args.append(0)

    before, after = form.outer.code
    instructions(before)
    if form.kind == "compound":
        def op(name: str) -> None:
            ops.append(OPCODES[name])
            args.append(0)

        form.spec.emit(form.exps, form.params, const, factors, op)
    elif form.kind == "expmono":
        const(form.params[0], True)
        factors(form.exps[0])
        const(form.params[1], True)
        factors(form.exp_exps)
        ops.extend((_EXP, _MUL))
        args.extend((0, 0))
    elif form.kind == "ratio":
        k = form.n_num
        for i, (c, p) in enumerate(zip(form.params[:k], form.exps[:k])):
            const(c, True)
            factors(p)
            if i:
                ops.append(_ADD)
                args.append(0)
        const(1.0)
        for c, p in zip(form.params[k:], form.exps[k:]):
            const(c, True)
            factors(p)
            ops.append(_ADD)
            args.append(0)
        ops.append(_DIV)
        args.append(0)
    else:
        for i, (c, p) in enumerate(zip(form.params, form.exps)):
            const(c, True)
            factors(p)
            if i:
                ops.append(_ADD)
                args.append(0)
    instructions(after)
    return ops, args, consts, slots


def pack_codes(
    codes: Sequence[tuple[list[int], list[int], list[float]]],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Pack ``(ops, args, consts)`` per program into the arrays :func:`kernels.programs.evaluate_programs` reads.

    Returns:
        ``(ops, args, consts, prog_start, prog_len, const_start)``.
    """
    ops: list[int] = []
    args: list[int] = []
    consts: list[float] = []
    starts, lens, cstarts = [], [], []
    for o, a, c in codes:
        starts.append(len(ops))
        cstarts.append(len(consts))
        lens.append(len(o))
        ops.extend(o)
        args.extend(a)
        consts.extend(c)
    i64 = np.int64
    return (np.array(ops, dtype=i64), np.array(args, dtype=i64), np.array(consts, dtype=np.float64),
            np.array(starts, dtype=i64), np.array(lens, dtype=i64), np.array(cstarts, dtype=i64))


def compile_forms(
    forms: Sequence[Form], column: Callable[[Atom], int],
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Packed postfix programs of ``forms`` over an atom table (one program per form).

    Args:
        forms: Forms to compile.
        column: Column of the atom table holding a given atom.

    Returns:
        ``(ops, args, consts, prog_start, prog_len, const_start)`` as
        :func:`kernels.programs.evaluate_programs` reads them.
    """
    return pack_codes([form_code(f, column)[:3] for f in forms])


def evaluate_forms(forms: Sequence[Form], table: np.ndarray, column: Callable[[Atom], int]) -> np.ndarray:
    """Values of many forms in one kernel call.

    Args:
        forms: Forms whose atoms all have a column in ``table``.
        table: float64[n, n_atoms] atom table.
        column: Column of ``table`` holding a given atom.

    Returns:
        float64[len(forms), n]; NaN where a form is undefined.
    """
    if not len(forms):
        return np.empty((0, table.shape[0]))
    return evaluate_programs(*compile_forms(forms, column), table, n_points=table.shape[0])


def common_factor(form: Form) -> tuple[tuple[float, ...], tuple[tuple[float, ...], ...]]:
    """A sum's monomials written as a factor every term shares (an atom's power that is the same,
    and not 0, in every term) times what remains of each term: ``(factor, terms)``. A form that is
    not a sum of two or more terms has the empty factor (all zeros) and its monomials unchanged.
    The law is the same either way; its description (:func:`_complexity`, the search's parameter
    count) states the shared factor once, as one would write it."""
    exps = form.exps
    if form.kind != "sum" or len(exps) < 2:
        return tuple(0.0 for _ in form.atoms), exps
    shared = tuple(p0 if p0 != 0.0 and all(p[j] == p0 for p in exps[1:]) else 0.0 for j, p0 in enumerate(exps[0]))
    return shared, tuple(tuple(pj - sj for pj, sj in zip(p, shared)) for p in exps)


def _complexity(form: Form) -> float:
    """The description length a form's law is ranked by (outer, monomials, exponents, extras); a
    factor all terms of a sum share is counted once (:func:`common_factor`)."""
    def mono_cost(p):
        return sum(1.0 + exponent_cost(pj) + a.cost for a, pj in zip(form.atoms, p) if pj != 0.0)

    if form.kind == "compound":
        return form.outer.cost + form.spec.complexity(form.exps, mono_cost)
    shared, terms = common_factor(form)
    c = form.outer.cost + sum(1.0 + mono_cost(p) for p in terms) + 0.5 * (len(terms) - 1)
    if any(shared):
        c += 1.0 + mono_cost(shared)
    if form.kind == "ratio":
        c += 1.0
    if form.kind == "expmono":
        c += 2.0 + mono_cost(form.exp_exps)
    return c
