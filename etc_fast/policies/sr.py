"""The ``sr`` policy: symbolic regression (pyoperon) on the observations the symbolic agent gathered.

Exploration is the symbolic agent's, unchanged (:class:`~etc_fast.policies.symbolic.SymbolicPolicy`:
committees and drafts under the planner, space-filling experiments under the baseline). Only the
commit differs: whenever the symbolic agent would send its ``final`` law, this policy instead fits
Operon's genetic-programming symbolic regression (``pyoperon.sklearn.SymbolicRegressor``) on exactly
the observations of that moment (``obs.X``, ``obs.y``; rows with a non-finite output dropped) and
submits the selected model as a ``discovered_law`` source. When every output is positive and they
span more than two decades, the engine fits ``log(y)`` (Operon's R^2 on the raw scale would be
decided by the largest values alone) and the submitted law is ``exp`` of its model. The judge scores it like any other law.
So symbolic and SR are compared on the same observations, with the same exploration.

The engine's work is bounded by counts (population, generations, evaluations, optimizer
iterations; no wall-time limit) and it runs single-threaded with a seed derived from the policy's
seed and the trial's seed, so a trial is reproducible.

pyoperon is an optional dependency (``pip install 'etc-fast[sr]'``).
"""

from __future__ import annotations

import dataclasses
import re

import numpy as np

from etc_fast.core import Action, Observation, ProtocolConfig, TaskView
from etc_fast.policies.symbolic import SymbolicPolicy

__all__ = ["SRPolicy", "SR_EXTRA_HINT", "sr_available", "operon_expression"]

SR_EXTRA_HINT = "the sr policy needs pyoperon: pip install 'etc-fast[sr]' (or pip install pyoperon)"

#: Operon's function set used here: the arithmetic of the hypothesis language plus its unary functions.
SYMBOLS = "add,sub,mul,div,constant,variable,exp,log,sqrt,pow,sin,cos,tan"


def sr_available() -> bool:
    """Whether pyoperon can be imported."""
    import importlib.util

    return importlib.util.find_spec("pyoperon") is not None


_FUNC = re.compile(r"\b(exp|log|sqrt|sin|cos|tan|abs)\(")


def operon_expression(text: str) -> str:
    """An Operon model string as a hypothesis-language expression using NumPy functions.

    Operon writes ``a ^ b`` for powers and bare function names; the result writes ``a ** b`` and
    ``np.exp(...)`` etc., so undefined points give NaN rather than raising.
    """
    out = text.replace("^", "**")
    return _FUNC.sub(lambda m: f"np.{m.group(1)}(", out)


class SRPolicy(SymbolicPolicy):
    """The symbolic agent's exploration, then a pyoperon fit as the committed law.

    Args:
        seed: Seed of the exploration (as :class:`SymbolicPolicy`) and of the engine.
        population_size: Operon population.
        generations: Generations (a count; the run stops at this or at ``max_evaluations``).
        max_evaluations: Fitness evaluations in all.
        max_length: Largest expression (tree nodes).
        optimizer_iterations: Levenberg-Marquardt iterations on each individual's constants.
        **symbolic: Passed to :class:`SymbolicPolicy`.

    Attributes:
        last_sr: ``(expression, training R^2)`` of the latest fit, or ``None``.
    """

    name = "sr"

    def __init__(self, seed: int = 0, *, population_size: int = 300, generations: int = 40,
                 max_evaluations: int = 50_000, max_length: int = 30, optimizer_iterations: int = 10,
                 **symbolic) -> None:
        if not sr_available():
            raise ImportError(SR_EXTRA_HINT)
        for k, v in (("population_size", population_size), ("generations", generations),
                     ("max_evaluations", max_evaluations), ("max_length", max_length),
                     ("optimizer_iterations", optimizer_iterations)):
            if not (isinstance(v, int) and not isinstance(v, bool) and v >= 1):
                raise ValueError(f"SRPolicy: {k} must be a positive integer, got {v!r}")
        super().__init__(seed=seed, **symbolic)
        self.engine = dict(population_size=population_size, generations=generations, max_evaluations=max_evaluations,
                           max_length=max_length, optimizer_iterations=optimizer_iterations)
        self._trial_seed = 0
        self.last_sr: tuple[str, float] | None = None

    def begin(self, phase: str, task: TaskView, config: ProtocolConfig, seed: int) -> None:
        super().begin(phase, task, config, seed)
        self._trial_seed = int(np.random.SeedSequence([self.seed, int(seed), 7]).generate_state(1, dtype=np.uint32)[0])

    def act(self, obs: Observation) -> Action:
        action = super().act(obs)
        if action.kind != "final":
            return action
        fitted = self._fit(obs)
        if fitted is None:
            return dataclasses.replace(action, raw=(action.raw or "") + " [sr: no usable fit; symbolic law kept]")
        source, expr, r2, log_space = fitted
        return Action(kind="final", source=source, raw=f"sr final: {expr} (training R^2 {r2:.6g}{' of log y' if log_space else ''})")

    def _fit(self, obs: Observation) -> tuple[str, str, float, bool] | None:
        from pyoperon.sklearn import SymbolicRegressor

        from etc_fast.expr import ExprError, parse

        fin = np.isfinite(obs.y)
        X, y = np.asarray(obs.X, dtype=np.float64)[fin], np.asarray(obs.y, dtype=np.float64)[fin]
        if y.size < 2:
            return None
        names = [d.name for d in self._domains]
        log_space = bool(np.all(y > 0) and y.max() > 100.0 * y.min())
        target = np.log(y) if log_space else y
        reg = SymbolicRegressor(allowed_symbols=SYMBOLS, n_threads=1, random_state=self._trial_seed,
                                max_time=None, objectives=["r2"], **self.engine)
        try:
            reg.fit(X, target)
            text = reg.get_model_string(reg.model_, 12, names)
            r2 = float(reg.score(X, target))
        except Exception:  # noqa: BLE001 - an engine failure loses only this fit; the symbolic law stands
            return None
        expr = operon_expression(text)
        if log_space:
            expr = f"np.exp({expr})"
        try:
            parse(expr, names)
        except ExprError:
            return None
        self.last_sr = (expr, r2)
        src = f"def discovered_law({', '.join(names)}):\n    import numpy as np\n    return {expr}\n"
        return src, expr, r2, log_space
