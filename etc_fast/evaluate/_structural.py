"""Structural judge: is the submission the hidden law, up to the values of its hidden constants?

NewtonBench's question, answered offline and deterministically:

1. **Translate** the submission (read with :mod:`ast`, never executed) into one sympy expression
   valid on the task's domain (:mod:`etc_fast.evaluate._translate`); the truth's text is translated
   the same way, its hidden constants (``HIDDEN_CONSTANT``, ``k``, ``CONSTANT2``, ...; a custom
   task's ``constants:``) kept as symbols of their sign.
2. **Compare symbolically.** The submission's numbers that lie within relative 1e-6 of a number of
   the truth (literals, exponents, ``180/pi``, ``e + 1``; exact rationals must be equal) are set to
   it; a decimal near none of them is read as a simple fraction or as a *combined number* of the
   truth, a product of powers of its numbers and named constants' values (``1/(16*pi**2)``,
   ``9.81/(4*pi**2)``, ``sqrt(2*9.81)``: :class:`_Combined`), the closest within 1e-6. Each hidden constant is then solved for so that the truth with it equals the submission:
   exactly (closed form) where the constant enters linearly, else by Newton's method at 60
   digits. The two sympy expressions are then evaluated exactly at generic domain points: they are
   the same law only if they agree to 1e-35 relative, which holds for any algebraic rewrite and
   fails for a changed exponent, literal, term, sign or function, however small the change is over
   the grid (e.g. a linearised Bose-Einstein law pinned near 0.5). A constant must keep its sign
   (zero means the term is missing); a missing constant counts as 1. Nothing else is free: no
   offset, no overall scale, no literal or exponent refit. Where that fails, the submission is
   compared once more with its logs of products and exponentials of sums taken apart, and then
   with its decimals moved together, each by at most 1e-6 of itself, while the constants are
   solved (decimals that hold the law's numbers only jointly: a fitted ``1/sqrt(a - b*v**2)`` for
   ``K/sqrt(1 - v**2/13400**2)``, where ``b/a`` is the literal and ``a`` the free ``K``).
3. **Confirm numerically** on the evaluation grid: with the solved constants, every point with a
   finite target must agree to relative ``rel_tol`` (1e-6) and be finite.
4. **Say why**: the reason names the difference (extra additive term, exponent on a variable,
   functions used, sign, a missing term) or, when credited, each constant's value against the truth's.
"""

from __future__ import annotations

import fractions
import math
import threading
from collections.abc import Sequence

import mpmath
import numpy as np
import sympy as sp

from etc_fast.evaluate._judge import Verdict
from etc_fast.evaluate._translate import Untranslatable, numeric, translate
from etc_fast.tasks import Task

__all__ = ["StructuralJudge", "JUDGE_VERSION"]

#: Version of the structural judge's rules (recorded with every re-judged run).
JUDGE_VERSION = "2.5"

_DPS = 60
#: Seconds the algebra on one submission may take (in a killable judge child); past it there is no
#: verdict (an infrastructure failure, kind ``judge_time_limit``: the trial is judged again later,
#: never counted as not credited). ``timeout_s=None`` judges in the calling process.
DEFAULT_TIMEOUT_S = 60.0
#: Verdicts remembered per process, shared by every judge instance (a trial thread has its own):
#: ``{(source, task, rel_tol, grid): Verdict}``, at most ``_MAX_VERDICTS`` (then it starts afresh);
#: and the verdicts being computed, which other threads asking for the same one wait for.
_MAX_VERDICTS = 4096
_VERDICTS: dict = {}
_PENDING: dict = {}
_VERDICTS_LOCK = threading.Lock()
_IDENTITY_TOL = mpmath.mpf("1e-35")
_SNAP_TOL = 1e-6
_RATIONAL_TOL = 1e-9
_MAX_DENOMINATOR = 10**6
_N_CHECK = 8
#: Newton's method for two or more constants entering nonlinearly: steps, and halvings of a step.
_NEWTON_STEPS = 100
_NEWTON_HALVINGS = 40
#: The joint move of a submission's decimals (StructuralJudge._relaxed): at most this many decimals,
#: tried only within this relative difference of the law, in this many Gauss-Newton steps.
_RELAX_MAX = 12
_RELAX_START = 1e-4
_RELAX_STEPS = 8


_MAX_LOG = 1e5  # |log| of the largest magnitude an exact evaluation may build (doubles stop near 709)
_SPOW = sp.Function("_judge_pow")


def _safe_exp(x):
    if abs(mpmath.re(x)) > _MAX_LOG:
        raise ValueError("an intermediate value is too large to evaluate exactly")
    return mpmath.exp(x)


def _safe_pow(b, e):
    if b != 0 and abs(mpmath.re(e)) * (abs(mpmath.log(abs(b))) + 1) > _MAX_LOG:
        raise ValueError("an intermediate value is too large to evaluate exactly")
    return b ** e


def _mp_lambda(symbols, expr):
    """An exact (mpmath) evaluator of ``expr`` that refuses astronomically large intermediates."""
    e = sp.sympify(expr).replace(lambda n: n.is_Pow, lambda n: _SPOW(*n.args))
    return sp.lambdify(list(symbols), e, modules=[{"_judge_pow": _safe_pow, "exp": _safe_exp}, "mpmath"])


def _fmt(v) -> str:
    return f"{float(v):.6g}"


def _show(e: sp.Expr) -> str:
    """``e`` for a reason, its decimals to six digits (``2.45250/pi**2``)."""
    return str(e.xreplace({f: sp.Float(f, 6) for f in e.atoms(sp.Float)}))


class _Truth:
    """Everything about a task the judge computes once."""

    def __init__(self, task: Task, grid: np.ndarray | None):
        from etc_fast.sampling import evaluation_grid

        self.names = list(task.variable_names)
        self.symbols = {}
        for v in task.variables:
            kw = {"positive": True} if v.low > 0 else {"nonnegative": True} if v.low >= 0 else \
                {"negative": True} if v.high < 0 else {"real": True}
            self.symbols[v.name] = sp.Symbol(v.name, **kw)
        self.syms = [self.symbols[n] for n in self.names]
        consts = dict(getattr(task, "constants", {}) or {})
        self.const_values = {k: float(v) for k, v in consts.items()}
        self.const_syms = {k: sp.Symbol(f"_hidden_{k}", positive=True) if v > 0 else
                           sp.Symbol(f"_hidden_{k}", negative=True) for k, v in self.const_values.items()}
        tr = translate(task.ground_truth_text, self.names, self.symbols, constants=self.const_syms)
        self.expr = tr.expr
        self.functions = tr.functions
        used = [k for k in self.const_values if self.const_syms[k] in self.expr.free_symbols]
        self.used = used
        self.csyms = [self.const_syms[k] for k in used]
        self.ctrue = [self.const_values[k] for k in used]
        self.X = grid if grid is not None else evaluation_grid(task)
        self.y = task.truth(self.X)
        self.finite = np.isfinite(self.y)
        self.linear = all(not sp.diff(self.expr, c).has(*self.csyms) for c in self.csyms)
        self.f_mp = _mp_lambda(self.syms + self.csyms, self.expr)
        if self.linear and self.csyms:
            zero = {c: 0 for c in self.csyms}
            self.h_mp = _mp_lambda(self.syms, self.expr.subs(zero))
            self.g_mp = [_mp_lambda(self.syms, sp.diff(self.expr, c)) for c in self.csyms]
        self.numbers = _numbers(self.expr) | _numbers(_canonical(self.expr)) | _numbers(_expanded(self.expr))
        self.combined = _Combined(*_bases(self.numbers, self.const_values.values()))
        # check that the translation is the law the simulator computes
        at_true = self.expr.subs({c: v for c, v in zip(self.csyms, self.ctrue)})
        vals = numeric(at_true, self.syms, self.X)
        fin = self.finite
        with np.errstate(all="ignore"):
            rel = np.abs(vals[fin] - self.y[fin]) / np.maximum(np.abs(self.y[fin]), 1e-300)
        self.sound = bool(fin.any() and np.all(rel <= 1e-9))
        idx = np.flatnonzero(fin)
        self.order = idx[np.unique(np.linspace(0, idx.size - 1, min(idx.size, 64)).astype(int))] if idx.size else idx


def _numbers(expr: sp.Expr) -> dict:
    """Constant sub-expressions of ``expr`` (and their negatives) -> float value."""
    out = {}
    for node in sp.preorder_traversal(expr):
        if isinstance(node, sp.Basic) and node.is_number and node.is_finite:
            try:
                v = float(node)
            except (TypeError, ValueError):
                continue
            if v != 0 and math.isfinite(v):
                out[node] = v
                out[-node] = -v
        if isinstance(node, sp.Pow) and node.exp.is_number:  # exponents of nested powers multiply
            for f in sp.Mul.make_args(node.base):
                inner = f.args[0] if isinstance(f, sp.Abs) else f
                if isinstance(inner, sp.Pow) and inner.exp.is_number:
                    c = inner.exp * node.exp
                    try:
                        out[c] = float(c)
                        out[-c] = -float(c)
                    except (TypeError, ValueError):
                        pass
                elif not f.is_number:
                    try:
                        out[node.exp] = float(node.exp)
                        out[-node.exp] = -float(node.exp)
                    except (TypeError, ValueError):
                        pass
        if isinstance(node, (sp.Mul, sp.Add)):  # the numeric part of a product or sum also counts
            nums = [a for a in node.args if a.is_number]
            if nums and len(nums) < len(node.args):
                c = node.func(*nums)
                if c.is_finite and c != 0:
                    try:
                        out[c] = float(c)
                        out[-c] = -float(c)
                    except (TypeError, ValueError):
                        pass
    return out


def _canonical(expr: sp.Expr) -> sp.Expr:
    e = expr.replace(lambda n: isinstance(n, sp.acos), lambda n: sp.pi / 2 - sp.asin(n.args[0]))
    e = e.replace(lambda n: isinstance(n, sp.tan), lambda n: sp.sin(n.args[0]) / sp.cos(n.args[0]))
    try:
        e = sp.expand_power_base(sp.powdenest(e, force=True), force=True)
    except Exception:  # noqa: BLE001 - canonicalisation is best effort
        pass
    return e


def _expanded(expr: sp.Expr) -> sp.Expr:
    """``expr`` with powers of numbers written as exponentials and exponentials and logs expanded.

    The numbers of this form are numbers of the same law written another way: ``exp(-12 - x)`` is
    ``exp(-12) * exp(-x)`` (a prefactor ``6.144e-06``), ``2.3**((T - 20)/10)`` is
    ``2.3**-2 * exp(T * log(2.3)/10)`` (a prefactor and a rate), ``log(5*x)`` is ``log(5) + log(x)``.
    A submission that writes one of them as a decimal is then compared with its exact value; the
    exact comparison that follows still decides whether the law is the same.
    """
    try:
        e = expr.replace(lambda n: isinstance(n, sp.Pow) and n.base.is_number and n.base.is_positive
                         and not n.exp.is_number, lambda n: sp.exp(n.exp * sp.log(n.base)))
        e = sp.expand(e, power_exp=True, deep=True)
        return sp.expand_log(e, force=True)
    except Exception:  # noqa: BLE001 - best effort, like _canonical
        return expr


def _check_points(pts: Sequence[int | np.integer]) -> list:
    """The grid points :meth:`StructuralJudge._identical` compares at: the first :data:`_N_CHECK` and
    four from the middle (the joint move of decimals fits on others)."""
    return list(pts[:_N_CHECK]) + list(pts[len(pts) // 2: len(pts) // 2 + 4])


def _jacobian(f, z: list, r: list, h):
    """The forward-difference Jacobian (step ``h``) of ``f`` (a list of values from a list of
    unknowns) at ``z``, where ``f(z) = r``; ``None`` where ``f`` gives ``None``."""
    J = mpmath.matrix(len(r), len(z))
    for j in range(len(z)):
        zj = list(z)
        zj[j] += h
        rj = f(zj)
        if rj is None:
            return None
        for i in range(len(r)):
            J[i, j] = (rj[i] - r[i]) / h
    return J


def _newton(eqs, start: list) -> list:
    """Damped Newton's method on the square system ``eqs(*u) = 0`` at the working precision, bounded by
    counts: at most :data:`_NEWTON_STEPS` steps, each halved at most :data:`_NEWTON_HALVINGS` times
    until the residual falls (a forward-difference Jacobian of step 1e-30). Returns the point reached;
    the caller checks its residual. A complex residual counts as no decrease."""
    k = len(start)
    u = [mpmath.mpf(v) for v in start]
    r = eqs(*u)
    if any(isinstance(v, mpmath.mpc) for v in r):
        raise ValueError("complex at the start")
    size = max(abs(v) for v in r)
    h = mpmath.mpf(10) ** -30
    for _ in range(_NEWTON_STEPS):
        if size <= mpmath.mpf(10) ** (-2 * _DPS + 20):
            break
        J = _jacobian(lambda z: eqs(*z), u, r, h)
        step = mpmath.lu_solve(J, mpmath.matrix([-v for v in r]))
        lam = mpmath.mpf(1)
        for _ in range(_NEWTON_HALVINGS):
            cand = [u[j] + lam * mpmath.re(step[j]) for j in range(k)]
            try:
                rc = eqs(*cand)
            except (ValueError, ZeroDivisionError, OverflowError):
                rc = None
            if rc is not None and not any(isinstance(v, mpmath.mpc) for v in rc):
                new_size = max(abs(v) for v in rc)
                if new_size < size:
                    u, r, size = cand, rc, new_size
                    break
            lam /= 2
        else:
            break  # no decrease along Newton's direction
    return u


def _split(expr: sp.Expr) -> sp.Expr | None:
    """``expr`` with logs of products and exponentials of sums taken apart where that holds on the
    variables' domains (``log(5*x)`` is ``log(5) + log(x)`` for a positive ``x``), or ``None`` when
    nothing changes. The exact comparison that follows still decides whether the law is the same."""
    try:
        e = sp.expand_log(expr)
        e = e.replace(lambda n: isinstance(n, sp.exp) and isinstance(n.args[0], sp.Add),
                      lambda n: sp.Mul(*[sp.exp(a) for a in n.args[0].args]))
    except Exception:  # noqa: BLE001 - best effort, like _canonical
        return None
    return None if e == expr else e


#: Largest |exponent| of a number in a combined number (4 in a product of three), how many of
#: the truth's numbers one may multiply, and how many the truth offers (pi, e, then the rest by size).
_COMBINED_MAX_EXP = 6
_COMBINED_MAX_FACTORS = 3
_COMBINED_MAX_BASES = 6
#: Largest numerator and denominator of a combined number's rational factor.
_COMBINED_MAX_RATIONAL = 256
#: Denominator up to which a decimal that is a simple fraction is read as that fraction before it
#: is compared with the combined numbers (0.2333333333 is 7/30, not some product of the law's).
_SMALL_DENOMINATOR = 1000
#: A decimal of the truth that is a fraction of at most this denominator is that fraction (its
#: primes are bases); any other decimal (9.81, 0.47) is a base itself.
_BASE_DENOMINATOR = 12
#: A fraction of the truth whose numerator and denominator are at most this size gives its primes as
#: bases (2, 3, 5 of 15/4); a larger one (14700000, 1/40000000) is a base itself, as a decimal is.
_PRIME_PART_MAX = 10**6


def _bases(numbers, constant_values) -> tuple[list[int], list[sp.Expr]]:
    """The primes and the other numbers that a combined number of the truth is made of.

    The primes are those of the truth's exact rationals, and 2 and 3 (which halving, squaring and
    rewriting produce everywhere); the other numbers are the truth's numbers taken apart into
    factors (``pi``, ``E``, ``9.81``, ``log(2.3)``, ``e + 1``) and the values of its named constants.
    """
    primes: set[int] = {2, 3}
    others: dict[float, sp.Expr] = {}

    def add(f: sp.Expr) -> None:
        if f.is_Pow and f.exp.is_Rational:
            add(f.base)
            return
        if f.is_Rational and max(abs(f.p), f.q) <= _PRIME_PART_MAX:
            for part in (abs(f.p), f.q):
                if part > 1:
                    primes.update(int(q) for q in sp.primefactors(part))
            return
        if isinstance(f, sp.Float):  # 2.0, 0.25 and 1.5 are rationals; 9.81 and 0.47 stay numbers
            fr = fractions.Fraction(str(f)).limit_denominator(_BASE_DENOMINATOR)
            if fr and abs(float(fr) - float(f)) <= _RATIONAL_TOL * abs(float(f)):
                add(sp.Rational(fr.numerator, fr.denominator))
                return
        try:
            v = abs(float(f))
        except (TypeError, ValueError):
            return
        if v > 0 and math.isfinite(v) and abs(v - 1) > 1e-12 and not any(abs(v - u) <= 1e-12 * u for u in others):
            others[v] = f if float(f) > 0 else -f

    for n in numbers:
        for f in sp.Mul.make_args(n):
            add(f)
    for c in constant_values:
        add(sp.Float(repr(float(c)), _DPS))
    named = [e for e in (sp.pi, sp.E) if e in others.values()]
    rest = sorted((e for e in others.values() if e not in named), key=lambda e: (sp.count_ops(e), float(e)))
    return sorted(primes), (named + rest)[:_COMBINED_MAX_BASES]


class _Combined:
    """The combined numbers of a truth, searchable by value.

    A combined number is ``r * prod(b_i ** k_i)``: ``r`` a fraction whose numerator and denominator
    are products of the truth's primes up to :data:`_COMBINED_MAX_RATIONAL`, or its square root, times at most
    :data:`_COMBINED_MAX_FACTORS` of its other numbers ``b_i``, each to a nonzero multiple of 1/2 up
    to :data:`_COMBINED_MAX_EXP` in size (4 in a product of three): ``1/(16*pi**2)`` and
    ``9.81/(4*pi**2)`` in a damped pendulum's period, ``sqrt(2*9.81)``, ``3*pi**2*e/2``.
    """

    def __init__(self, primes: list[int], bases: list[sp.Expr]) -> None:
        import itertools

        smooth = [1]
        for p in primes:
            smooth = sorted({m * p ** j for m in smooth for j in range(0, 64)
                             if m * p ** j <= _COMBINED_MAX_RATIONAL})
        rats = sorted({fractions.Fraction(p, q) for p in smooth for q in smooth})
        # the fractions and their square roots (sqrt(2*9.81) is sqrt(2) * 9.81**(1/2))
        roots = [r for r in rats if math.isqrt(r.numerator) ** 2 != r.numerator or math.isqrt(r.denominator) ** 2 != r.denominator]
        self.rationals = [(r, 2) for r in rats] + [(r, 1) for r in roots]  # (fraction, twice its exponent)
        self.rat_logs = np.array([math.log(r) * e / 2 for r, e in self.rationals])
        order = np.argsort(self.rat_logs, kind="stable")
        self.rat_logs = self.rat_logs[order]
        self.rationals = [self.rationals[i] for i in order]
        self.bases = bases
        logs = np.array([math.log(float(b)) for b in bases])
        n = _COMBINED_MAX_FACTORS
        values, keys = [np.zeros(1)], [np.zeros((1, 2 * n), dtype=np.int8)]
        for r in range(1, min(n, len(bases)) + 1):
            top = 2 * (_COMBINED_MAX_EXP if r < 3 else 4)
            halves = np.array([k for k in range(-top, top + 1) if k != 0], dtype=np.int8)
            grids = np.meshgrid(*[halves] * r, indexing="ij")
            ks = np.stack([g.ravel() for g in grids], axis=1)  # (m, r) exponents in halves
            for combo in itertools.combinations(range(len(bases)), r):
                values.append(ks @ (logs[list(combo)] / 2))
                key = np.zeros((ks.shape[0], 2 * n), dtype=np.int8)
                key[:, :r] = np.array(combo) + 1  # base index + 1 (0: unused)
                key[:, n:n + r] = ks
                keys.append(key)
        self.logs, self.keys = np.concatenate(values), np.concatenate(keys)

    def match(self, value: float) -> sp.Expr | None:
        """The combined number within relative :data:`_SNAP_TOL` of ``value`` (the closest), or ``None``."""
        if value == 0 or not math.isfinite(value):
            return None
        want = math.log(abs(value)) - self.logs  # the rational factor each product would need
        j = np.clip(np.searchsorted(self.rat_logs, want), 1, self.rat_logs.size - 1)
        near = np.where(np.abs(self.rat_logs[j - 1] - want) <= np.abs(self.rat_logs[j] - want), j - 1, j)
        miss = np.abs(self.rat_logs[near] - want)
        i = int(np.argmin(miss))
        if not miss[i] <= math.log1p(_SNAP_TOL):
            return None
        r, e = self.rationals[int(near[i])]
        out: sp.Expr = sp.Rational(r.numerator, r.denominator) ** sp.Rational(e, 2) * (1 if value > 0 else -1)
        n = _COMBINED_MAX_FACTORS
        for b, k in zip(self.keys[i][:n], self.keys[i][n:]):
            if b:
                out = out * self.bases[int(b) - 1] ** sp.Rational(int(k), 2)
        return out


def _fraction(node: sp.Float, max_denominator: int) -> sp.Rational | None:
    """The fraction of denominator at most ``max_denominator`` within :data:`_RATIONAL_TOL` of the
    decimal ``node``, or ``None``; a numerator above :data:`_PRIME_PART_MAX` makes no fraction, as
    with the truth's numbers (``8.988004e16`` is a rounded number, not the integer 89880040000000000)."""
    v = float(node)
    f = fractions.Fraction(str(node)).limit_denominator(max_denominator)
    if f and abs(f.numerator) <= _PRIME_PART_MAX and abs(float(f) - v) <= _RATIONAL_TOL * abs(v):
        return sp.Rational(f.numerator, f.denominator)
    return None


def _snap(expr: sp.Expr, numbers: dict, combined: _Combined | None = None, *,
          wide_fractions: bool = True) -> tuple[sp.Expr, list]:
    """Set numbers of ``expr`` within relative 1e-6 of a number of the truth to it.

    A decimal that no number of the truth is within 1e-6 of is read, in this order, as a fraction
    of denominator at most :data:`_SMALL_DENOMINATOR` (to 1e-9), as a combined number of the truth
    (``combined``, to 1e-6), or as a fraction of denominator at most 1e6 (to 1e-9; not with
    ``wide_fractions=False``, which leaves such decimals as they are: nearly every decimal of 12
    digits is within 1e-9 of one of those fractions).
    """
    changed: list = []
    items = list(numbers.items())

    def match(node):
        try:
            v = float(node)
        except (TypeError, ValueError):
            return None
        if v == 0 or not math.isfinite(v):
            return None
        if node in numbers:
            return None
        best, bd = None, None
        for t, tv in items:
            d = abs(v - tv) / abs(tv)
            if d <= _SNAP_TOL and (bd is None or d < bd):
                if node.is_Rational and t.is_Rational:
                    continue  # exact rationals must be equal
                best, bd = t, d
        if best is None and isinstance(node, sp.Float):
            small = _fraction(node, _SMALL_DENOMINATOR)
            if small is not None:
                return small
        if best is None and combined is not None and not node.is_Rational:
            best = combined.match(v)
            if best is not None and best in numbers:
                best = None if node == best else best
        if best is None and wide_fractions and isinstance(node, sp.Float):
            # A decimal that is a simple fraction to 1e-9 is that fraction (0.333333333333 -> 1/3,
            # 0.00294117647059 -> 1/340): a law rewritten with rounded coefficients, such as
            # 1/(0.3333/b + 0.2333/(a*b)) for 3*a*b/(a + 0.7), stays the same law. Numbers that are not
            # simple fractions keep their value, so an extra term or a changed number still shows.
            best = _fraction(node, _MAX_DENOMINATOR)
        return best

    def walk(node):
        if not isinstance(node, sp.Basic) or not node.args and not node.is_number:
            return node
        if node.is_number:
            t = match(node)
            if t is not None:
                changed.append((node, t))
                return t
            if not node.args:
                return node
        if isinstance(node, (sp.Mul, sp.Add)):
            const = [a for a in node.args if a.is_number]
            rest = [a for a in node.args if not a.is_number]
            if len(const) > 1 and rest:
                c = node.func(*const)
                t = match(c)
                if t is not None:
                    changed.append((c, t))
                    return node.func(t, *[walk(a) for a in rest])
        return node.func(*[walk(a) for a in node.args])

    return walk(expr), changed


class StructuralJudge:
    """Credits a submission that is the hidden law up to the values of its hidden constants.

    Args:
        rel_tol: Largest relative difference allowed at any finite-target grid point, and between a
            submitted number and the truth's.
        grid: Optional float64[n, d] points to judge on (default: the task's evaluation grid).
        timeout_s: Seconds one verdict's algebra may take; it runs in a child of the judge server
            (:mod:`etc_fast.evaluate._judge_client`) that is killed at the limit. ``None``: judge in
            this process.

    :meth:`judge` raises :class:`etc_fast.errors.InfrastructureError` when the child reaches no
    verdict (past ``timeout_s``: kind ``judge_time_limit``; its process or server failed:
    ``judge_failed``): a deadline depends on the machine, so it is never a verdict.
    """

    name = "structural"
    version = JUDGE_VERSION

    def __init__(self, rel_tol: float = 1e-6, grid: np.ndarray | None = None,
                 timeout_s: float | None = DEFAULT_TIMEOUT_S) -> None:
        if not rel_tol > 0:
            raise ValueError(f"tolerances must be positive, got rel_tol={rel_tol!r}")
        if timeout_s is not None and not (isinstance(timeout_s, (int, float)) and math.isfinite(timeout_s)
                                          and timeout_s > 0):
            raise ValueError(f"timeout_s must be a positive number of seconds or None, got {timeout_s!r}")
        self.rel_tol = float(rel_tol)
        self.timeout_s = None if timeout_s is None else float(timeout_s)
        self.grid = None if grid is None else np.ascontiguousarray(grid, dtype=np.float64)
        self._cache: dict = {}
        self._grid_key = None if self.grid is None else (self.grid.shape, hash(self.grid.tobytes()))
        self._lock = threading.Lock()

    def judge(self, source: str, task: Task) -> Verdict:
        if self.timeout_s is None:
            return self.judge_here(source, task)
        # the algebra in a judge child that the deadline kills; a verdict it reached is remembered
        # (the judge is a function of the submission and the task: many trials submit the same law)
        from etc_fast.evaluate._judge_client import reached, verdict_in_worker

        try:
            key = (source, self._task_key(task), self.rel_tol, self._grid_key)
        except Exception:  # noqa: BLE001 - an odd task object: judge without remembering
            key = None
        if key is None:
            return reached(*verdict_in_worker({"rel_tol": self.rel_tol}, source, task, self.grid, self.timeout_s))
        while True:
            with _VERDICTS_LOCK:
                v = _VERDICTS.get(key)
                if v is not None:
                    return v
                busy = _PENDING.get(key)
                if busy is None:  # this thread computes it; others asking meanwhile wait for it
                    busy = _PENDING[key] = threading.Event()
                    break
            busy.wait()
        try:
            v, failure = verdict_in_worker({"rel_tol": self.rel_tol}, source, task, self.grid, self.timeout_s)
            if failure is None:
                with _VERDICTS_LOCK:
                    if len(_VERDICTS) >= _MAX_VERDICTS:
                        _VERDICTS.clear()
                    _VERDICTS[key] = v
            return reached(v, failure)
        finally:
            with _VERDICTS_LOCK:
                _PENDING.pop(key, None)
            busy.set()

    def judge_here(self, source: str, task: Task) -> Verdict:
        """The verdict computed in this process (no deadline: a stalled sympy call stalls the caller)."""
        try:
            return self._judge(source, task)
        except Untranslatable as exc:
            return Verdict(self.name, False, f"cannot translate: {exc}")
        except Exception as exc:  # noqa: BLE001 - a judge never raises for a submission
            return Verdict(self.name, False, f"structural judge failed: {type(exc).__name__}: {exc}")

    @staticmethod
    def _task_key(task: Task) -> tuple:
        return (task.key, task.source, task.ground_truth_text, tuple(sorted((getattr(task, "constants", {}) or {}).items())),
                tuple((v.name, v.low, v.high, v.scale) for v in task.variables))

    def _truth(self, task: Task) -> _Truth:
        key = self._task_key(task)
        with self._lock:
            t = self._cache.get(key)
            if t is None:
                t = _Truth(task, self.grid)
                if len(self._cache) > 256:
                    self._cache.clear()
                self._cache[key] = t
            return t

    def _judge(self, source: str, task: Task) -> Verdict:
        if not isinstance(source, str) or not source.strip():
            return Verdict(self.name, False, "no submission to judge")
        try:
            T = self._truth(task)
        except Untranslatable as exc:
            return Verdict(self.name, False, f"the truth of {task.key} cannot be translated: {exc}")
        if not T.sound:
            return Verdict(self.name, False, f"the truth of {task.key} does not translate faithfully; not judged")
        n_fin = int(T.finite.sum())
        if n_fin == 0:
            return Verdict(self.name, False, "the truth is not finite at any grid point")
        sub = translate(source, T.names, T.symbols, sample=T.X)
        S, changed = _snap(sub.expr, T.numbers, T.combined)
        S = sp.sympify(S)
        if S.free_symbols - set(T.syms):
            return Verdict(self.name, False, "cannot translate: the law uses unknown symbols")
        # numeric view of the submission on the grid
        pred = numeric(S, T.syms, T.X)
        if sub.undefined is not None:
            pred[sub.undefined] = np.nan
        bad = T.finite & ~np.isfinite(pred)
        if bad.any():
            return Verdict(self.name, False, f"not finite at {int(bad.sum())}/{n_fin} finite-target points")
        pts = [i for i in T.order if np.isfinite(pred[i])]
        consts, mp_consts, solved = self._solve(T, S, pts)
        same = solved and self._identical(T, S, mp_consts, pts)
        moved = 0.0
        if not same:
            other = self._other_form(T, sub, pts, pred, mp_consts if solved else None)
            if other is not None:
                S, changed, pred, consts, mp_consts, moved = other
                solved = same = True
        if not solved:
            return Verdict(self.name, False, self._explain(T, S, sub, pts, None))
        if not same:
            return Verdict(self.name, False, self._explain(T, S, sub, pts, consts))
        for name, c, ct in zip(T.used, consts, T.ctrue):
            if abs(c) <= 1e-30 * abs(ct):
                c = 0.0
            if not (c != 0 and (c > 0) == (ct > 0)):
                what = "zero: the law's term with it is missing" if c == 0 else f"{_fmt(c)}, the opposite sign of {_fmt(ct)}"
                return Verdict(self.name, False, f"{name} would have to be {what}")
        # numeric confirmation on the grid with the solved constants
        fit = T.expr.subs({s: sp.Float(str(c), _DPS) for s, c in zip(T.csyms, consts)})
        model = numeric(fit, T.syms, T.X)
        fin = T.finite
        with np.errstate(all="ignore"):
            rel = np.abs(pred[fin] - model[fin]) / np.maximum(np.abs(model[fin]), 1e-300)
            rel_truth = np.abs(pred[fin] - T.y[fin]) / np.maximum(np.abs(T.y[fin]), 1e-300)
        worst = float(np.max(rel)) if rel.size else 0.0
        nbad = int(np.sum(~(rel <= self.rel_tol)))
        if nbad:
            return Verdict(self.name, False, f"symbolically the law, but {nbad}/{n_fin} grid points differ by more than "
                                             f"{self.rel_tol:.0e} (max {worst:.1e}): a branch or min/max differs")
        parts = [f"{n} {_fmt(c)} vs {_fmt(ct)}: allowed" for n, c, ct in zip(T.used, consts, T.ctrue)]
        if moved:
            parts.append(f"decimals moved together by at most {moved:.1e} (relative) to make the law exact")
        if changed:
            parts.append("numbers taken as the law's: " + ", ".join(f"{_fmt(a)}~{_show(b)}" for a, b in changed[:3]))
        if not parts:
            parts.append("no hidden constant")
        close = float(np.max(rel_truth)) if rel_truth.size else 0.0
        return Verdict(self.name, True, f"same law: {'; '.join(parts)}; agrees at {n_fin} grid points "
                                        f"(max rel. diff. {worst:.1e}; {close:.1e} against the truth's constants)")

    # ---- constants ---------------------------------------------------------------------
    def _solve(self, T: _Truth, S: sp.Expr, pts: Sequence[int | np.integer]) -> tuple[list, list, bool]:
        k = len(T.csyms)
        if k == 0:
            return [], [], True
        if len(pts) < k + 2:
            return [], [], False
        s_mp = _mp_lambda(T.syms, S)
        with mpmath.workdps(_DPS):
            xs = [[mpmath.mpf(float(v)) for v in T.X[i]] for i in pts]
            try:
                if T.linear:
                    use = xs[-k:]  # solve at the last points, check at the first ones
                    A = mpmath.matrix([[g(*x) for g in T.g_mp] for x in use])
                    b = mpmath.matrix([s_mp(*x) - T.h_mp(*x) for x in use])
                    sol = mpmath.lu_solve(A, b)
                    vals = [sol[i] for i in range(k)]
                    if any(isinstance(v, mpmath.mpc) for v in vals):
                        return [], [], False
                    return [float(v) for v in vals], vals, True
                use = xs[-k:]
                target = [s_mp(*x) for x in use]

                ct = [mpmath.mpf(v) for v in T.ctrue]

                def eqs(*u):  # constants move on a log scale around the truth's values, keeping their sign
                    if any(abs(mpmath.re(b)) > 120 for b in u):
                        raise ValueError("a constant left the searched range (1e-52 to 1e52 times the truth's)")
                    c = [a * mpmath.exp(b) for a, b in zip(ct, u)]
                    return [(T.f_mp(*x, *c) - t) / (abs(t) + mpmath.mpf(10) ** -300) for x, t in zip(use, target)]

                for p in (0, 1, -1, 2, -2, 4, -4, 8, -8, 12, -12, 20, -20):
                    st = [mpmath.mpf(p) * mpmath.log(10)] * k
                    try:
                        if k == 1:
                            u = [mpmath.findroot(lambda a: eqs(a)[0], (st[0], st[0] + mpmath.mpf("0.1")),
                                                 solver="secant", tol=mpmath.mpf(10) ** (-2 * _DPS + 20), maxsteps=200)]
                        else:
                            u = _newton(eqs, st)
                    except (ValueError, ZeroDivisionError, TypeError, OverflowError):
                        continue
                    if any(isinstance(v, mpmath.mpc) and v.imag != 0 for v in u):
                        continue
                    u = [mpmath.re(v) for v in u]
                    try:
                        resid = [abs(r) for r in eqs(*u)]
                    except (ValueError, ZeroDivisionError, TypeError, OverflowError):
                        continue
                    if all(r <= mpmath.mpf(10) ** (-_DPS + 15) for r in resid):
                        cs = [a * mpmath.exp(b) for a, b in zip(ct, u)]
                        return [float(v) for v in cs], cs, True
            except (ZeroDivisionError, ValueError, TypeError):
                return [], [], False
        return [], [], False

    def _other_form(self, T: _Truth, sub, pts: Sequence[int | np.integer], pred: np.ndarray, consts: list | None
                    ) -> tuple[sp.Expr, list, np.ndarray, list, list, float] | None:
        """The submission read another way in which it is the law exactly: ``(S, changed, pred, consts,
        mp_consts, moved)`` as :meth:`_judge` uses them, or ``None``.

        First taken apart as the truth's numbers were (a number of the law may sit inside a log of a
        product or an exponential of a sum: ``log(116.75*b**0.4343)`` holds 4.76), then with its
        decimals moved jointly within :data:`_SNAP_TOL` (:meth:`_relaxed`: a fitted
        ``1/sqrt(a - b*v**2)`` for ``K/sqrt(1 - v**2/13400**2)``, where ``b/a`` is the literal).
        """
        alt = _split(sub.expr)
        if alt is not None:
            S, changed = _snap(alt, T.numbers, T.combined)
            S = sp.sympify(S)
            if not S.free_symbols - set(T.syms):
                alt_pred = numeric(S, T.syms, T.X)
                if np.all(np.isfinite(alt_pred[T.finite])):
                    c, m, ok = self._solve(T, S, pts)
                    if ok and self._identical(T, S, m, pts):
                        return S, changed, alt_pred, c, m, 0.0
        near, changed = _snap(sub.expr, T.numbers, T.combined, wide_fractions=False)
        relaxed = self._relaxed(T, sp.sympify(near), pts, consts)
        if relaxed is not None:
            S, moved = relaxed
            c, m, ok = self._solve(T, S, pts)
            if ok and self._identical(T, S, m, pts):
                return S, changed, pred, c, m, moved
        return None

    def _relaxed(self, T: _Truth, S: sp.Expr, pts: Sequence[int | np.integer], consts: list | None
                 ) -> tuple[sp.Expr, float] | None:
        """``S`` with its decimals moved, each by at most :data:`_SNAP_TOL` of itself, to where it is the
        law exactly for some hidden constants, and the largest move; ``None`` where there is no such place.

        Decimals and constants are solved for together (Gauss-Newton at 60 digits, minimum-norm steps,
        which the many equivalent placements of a free constant need) on points that the exact check
        afterwards does not use. Only a submission already within 1e-4 of the law is tried.
        """
        floats = sorted({f for f in S.atoms(sp.Float) if f != 0}, key=lambda f: (float(f), str(f)))
        k, m = len(T.csyms), len(floats)
        if not floats or m > _RELAX_MAX or (k and consts is None) and not T.linear:
            return None
        checked = set(_check_points(pts)) | set(pts[-k:] if k else [])
        free = [i for i in pts if i not in checked]
        n = k + m + 4
        if len(free) < n:
            return None
        use = [free[int(j)] for j in np.linspace(0, len(free) - 1, n).round()]
        qs = [sp.Symbol(f"_relax_{i}") for i in range(m)]
        s_mp = _mp_lambda(list(T.syms) + qs, S.xreplace(dict(zip(floats, qs))))
        with mpmath.workdps(_DPS):
            xs = [[mpmath.mpf(float(v)) for v in T.X[i]] for i in use]
            d = [mpmath.mpf(str(f)) for f in floats]
            if k and consts is None:  # constants entering linearly: solved from the first points
                lin = self._exact_linear(T, _mp_lambda(T.syms, S), use[:k], 1)
                if lin is None:
                    return None
                consts = lin
            c0 = [mpmath.mpf(mpmath.re(c)) for c in (consts or [])]
            scale = [abs(c) if c != 0 else mpmath.mpf(1) for c in c0]
            tiny = mpmath.mpf(10) ** -300

            def resid(z: list) -> list | None:
                c = [c0[j] + scale[j] * z[j] for j in range(k)]
                p = [d[i] * (1 + z[k + i]) for i in range(m)]
                out = []
                for x in xs:
                    try:
                        a, b = s_mp(*x, *p), T.f_mp(*x, *c)
                    except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                        return None
                    if isinstance(a, mpmath.mpc) or isinstance(b, mpmath.mpc):
                        return None
                    out.append((a - b) / (abs(b) + tiny))
                return out

            z = [mpmath.mpf(0)] * (k + m)
            r = resid(z)
            if r is None or max(abs(v) for v in r) > _RELAX_START:
                return None
            h = mpmath.mpf(10) ** -30
            last = None
            for _ in range(_RELAX_STEPS):
                size = max(abs(v) for v in r)
                if size <= _IDENTITY_TOL ** 2 or last is not None and not size <= last / 100:
                    break  # exact, or stalled: a consistent system converges fast, another one does not
                last = size
                J = _jacobian(resid, z, r, h)
                if J is None:
                    return None
                try:
                    U, sv, V = mpmath.svd_r(J)
                except (ZeroDivisionError, ValueError):
                    return None
                top = max(abs(sv[i]) for i in range(sv.rows))
                ur = U.T * mpmath.matrix([-v for v in r])
                w = mpmath.matrix([ur[i] / sv[i] if abs(sv[i]) > top * mpmath.mpf(10) ** -20 else 0
                                   for i in range(sv.rows)])
                step = V.T * w
                z = [z[j] + step[j] for j in range(k + m)]
                r = resid(z)
                if r is None:
                    return None
            worst = max(abs(z[k + i]) for i in range(m))
            if max(abs(v) for v in r) > _IDENTITY_TOL or worst > _SNAP_TOL:
                return None
            moved = {f: sp.Float(d[i] * (1 + z[k + i]), _DPS) for i, f in enumerate(floats)}
        return S.xreplace(moved), float(worst)

    def _identical(self, T: _Truth, S: sp.Expr, consts: list, pts: Sequence[int | np.integer], *,
                   sign: int = 1) -> bool:
        s_mp = _mp_lambda(T.syms, S)
        with mpmath.workdps(_DPS):
            if T.linear or not T.csyms:
                cs = self._exact_linear(T, s_mp, pts, sign) if T.csyms else []
                if cs is None:
                    return False
            else:
                cs = list(consts)
            check = _check_points(pts)
            for i in check:
                x = [mpmath.mpf(float(v)) for v in T.X[i]]
                try:
                    a = sign * s_mp(*x)
                    b = T.f_mp(*x, *cs)
                except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                    return False
                if not abs(a - b) <= _IDENTITY_TOL * (abs(b) + mpmath.mpf(10) ** -300):
                    return False
        return True

    @staticmethod
    def _exact_linear(T: _Truth, s_mp, pts, sign):
        k = len(T.csyms)
        xs = [[mpmath.mpf(float(v)) for v in T.X[i]] for i in pts[-k:]]
        try:
            A = mpmath.matrix([[g(*x) for g in T.g_mp] for x in xs])
            b = mpmath.matrix([sign * s_mp(*x) - T.h_mp(*x) for x in xs])
            sol = mpmath.lu_solve(A, b)
        except (ZeroDivisionError, ValueError, TypeError):
            return None
        return [sol[i] for i in range(k)]

    # ---- reasons -----------------------------------------------------------------------
    def _explain(self, T: _Truth, S: sp.Expr, sub, pts, consts) -> str:
        reasons: list[str] = []
        try:
            reasons += self._why(T, S, sub, pts)
        except Exception:  # noqa: BLE001 - the explanation is best effort
            pass
        if not reasons:
            reasons.append("not the same function of " + ", ".join(T.names))
        return "not the law: " + "; ".join(reasons[:3])

    def _why(self, T: _Truth, S: sp.Expr, sub, pts) -> list[str]:
        out: list[str] = []
        # a negated law
        if T.csyms == [] or T.linear:
            if self._identical(T, S, [], pts, sign=-1):
                return ["sign flipped (the law negated)"]
        # an overall factor the law has no constant for
        if pts:
            f = self._factor(T, S, pts)
            if f is not None:
                return [f"overall factor {_fmt(f)} (no hidden constant of the law absorbs it)"]
        # an extra additive constant
        if pts:
            d = self._offset(T, S, pts)
            if d is not None:
                out.append(f"extra additive term {_fmt(d)}")
                return out
        # functions used
        fs = {f for f in sub.functions if f not in ("identity",)}
        ft = {f for f in T.functions if f not in ("identity",)}
        trig = {"sin", "cos", "tan", "asin", "acos", "atan", "exp", "log", "sinh", "cosh", "tanh"}
        only_s, only_t = sorted((fs - ft) & trig), sorted((ft - fs) & trig)
        if only_s and only_t:
            out.append(f"{'/'.join(only_s)} vs {'/'.join(only_t)}")
        elif only_t and not _has_func(S, only_t):
            out.append(f"no {'/'.join(only_t)} (the law has it)")
        # exponents on each variable (log-derivatives of power-law dependences)
        out += self._exponents(T, S, pts)
        # exponents of each variable over the additive terms
        if not out:
            out += _term_exponents(T, S)
        # term counts
        if not out:
            ns, nt = len(sp.Add.make_args(_expand_small(S))), len(sp.Add.make_args(_expand_small(T.expr)))
            if ns != nt:
                out.append(f"{ns} additive terms vs {nt}")
        return out

    def _factor(self, T: _Truth, S: sp.Expr, pts) -> float | None:
        """A constant ``f != 1`` with ``S = f * law`` (truth's constants), else ``None``."""
        s_mp = _mp_lambda(T.syms, S)
        with mpmath.workdps(_DPS):
            ratios = []
            for i in pts[:_N_CHECK]:
                x = [mpmath.mpf(float(v)) for v in T.X[i]]
                try:
                    ratios.append(s_mp(*x) / T.f_mp(*x, *[mpmath.mpf(c) for c in T.ctrue]))
                except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                    return None
            if not ratios or any(abs(r - ratios[0]) > mpmath.mpf("1e-30") * abs(ratios[0]) for r in ratios):
                return None
            f = ratios[0]
            if isinstance(f, mpmath.mpc) or abs(f - 1) <= mpmath.mpf("1e-30"):
                return None
            return float(f)

    def _offset(self, T: _Truth, S: sp.Expr, pts) -> float | None:
        """An additive constant ``d`` with ``S - d`` the law (constants solved), else ``None``."""
        if not (T.linear or not T.csyms):
            return None
        d = sp.Symbol("_offset_")
        k = len(T.csyms)
        if len(pts) < k + 3:
            return None
        s_mp = _mp_lambda(T.syms, S)
        with mpmath.workdps(_DPS):
            xs = [[mpmath.mpf(float(v)) for v in T.X[i]] for i in pts[-(k + 1):]]
            try:
                A = mpmath.matrix([[*(g(*x) for g in (T.g_mp if k else [])), 1] for x in xs])
                b = mpmath.matrix([s_mp(*x) - (T.h_mp(*x) if k else T.f_mp(*x)) for x in xs])
                sol = mpmath.lu_solve(A, b)
            except (ZeroDivisionError, ValueError, TypeError):
                return None
            cs, off = [sol[i] for i in range(k)], sol[k]
            if abs(off) == 0:
                return None
            for i in pts[:_N_CHECK]:
                x = [mpmath.mpf(float(v)) for v in T.X[i]]
                try:
                    a, b_ = s_mp(*x) - off, T.f_mp(*x, *cs)
                except (ZeroDivisionError, ValueError, TypeError, OverflowError):
                    return None
                if not abs(a - b_) <= mpmath.mpf("1e-30") * (abs(b_) + abs(off)):
                    return None
        del d
        return float(off)

    def _exponents(self, T: _Truth, S: sp.Expr, pts) -> list[str]:
        out = []
        fixed = T.expr.subs({c: v for c, v in zip(T.csyms, T.ctrue)})
        for name, x in zip(T.names, T.syms):
            vs: list[complex] = []
            vt: list[complex] = []
            for e, acc in ((S, vs), (fixed, vt)):
                ld = _mp_lambda(T.syms, x * sp.diff(e, x) / e)
                with mpmath.workdps(30):
                    for i in pts[:4]:
                        try:
                            acc.append(complex(ld(*[mpmath.mpf(float(v)) for v in T.X[i]])))
                        except (ZeroDivisionError, ValueError, TypeError):
                            acc.append(complex("nan"))
            def const(a):
                return all(np.isfinite(a)) and max(abs(u - a[0]) for u in a) <= 1e-9 * (1 + abs(a[0]))
            if vs and const(vs) and const(vt) and abs(vs[0] - vt[0]) > 1e-9 * (1 + abs(vt[0])):
                out.append(f"exponent {vs[0].real:.6g} vs {vt[0].real:.6g} on {name}")
            elif vs and const(vt) and not const(vs) and abs(vt[0]) > 0:
                out.append(f"not a power {vt[0].real:.6g} of {name}")
        return out


def _has_func(expr: sp.Expr, names: list[str]) -> bool:
    heads = {type(n).__name__ for n in sp.preorder_traversal(expr)}
    return any(n in heads for n in names)


def _term_exponents(T: _Truth, S: sp.Expr) -> list[str]:
    """Exponents of each variable over the additive terms that only one side has."""
    def exps(e, x):
        found = set()
        for term in sp.Add.make_args(_expand_small(_canonical(e))):
            p = term.as_powers_dict().get(x, 0)
            if p != 0 and p.is_number:
                found.add(float(p))
        return found
    out = []
    for name, x in zip(T.names, T.syms):
        es, et = exps(S, x), exps(T.expr, x)
        only_s = sorted(a for a in es if not any(abs(a - b) <= 1e-6 * abs(b) for b in et))
        only_t = sorted(b for b in et if not any(abs(a - b) <= 1e-6 * abs(b) for a in es))
        if only_s and only_t:
            out.append(f"exponent {', '.join(f'{a:.6g}' for a in only_s)} vs {', '.join(f'{b:.6g}' for b in only_t)} on {name}")
        elif only_s:
            out.append(f"extra term with {name}**{only_s[0]:.6g}")
        elif only_t:
            out.append(f"missing the term with {name}**{only_t[0]:.6g}")
    return out


#: Largest submission (``sympy.count_ops``) whose terms the explanation expands.
_EXPAND_MAX_OPS = 80


def _expand_small(e: sp.Expr) -> sp.Expr:
    """``expand`` unless that could take long (then the expression as it is).

    Expanding is only for the explanation, so it is skipped where it could blow up or stall: a
    large power of a sum, an expression of more than :data:`_EXPAND_MAX_OPS` operations, or a
    function of a function (a genetic-programming model such as ``exp(cos((a*x + b)**c))`` made
    sympy factor huge integers for minutes).
    """
    if sp.count_ops(e) > _EXPAND_MAX_OPS:
        return e
    for n in sp.preorder_traversal(e):
        if n.is_Pow and n.base.is_Add and n.exp.is_Integer and abs(int(n.exp)) > 12:
            return e
        if isinstance(n, sp.Function) and any(isinstance(m, sp.Function) for a in n.args for m in sp.preorder_traversal(a)):
            return e
    return sp.expand(e)
