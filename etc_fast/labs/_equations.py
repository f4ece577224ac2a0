"""The equation lab (``vanilla_equation``): an experiment is one input row, the answer one law value.

The pool is ``pool_size`` scrambled Sobol points over the task's sampling box; the bootstrap is the
structured probes of :func:`etc_fast.sampling.bootstrap_probes` (centre and one-at-a-time
variations, not pool points); a committee turn runs the paper's acquisition step
(:func:`etc_fast.acquisition.plan_step`) or, with a noise knob on in a noisy lab, the noise-aware
step (:func:`etc_fast.acquisition.plan_noisy_step`), or a GP rule's surrogate of the observed law
values (:func:`etc_fast.acquisition.plan_gp_step`, docs/guide/acquisition.md); diagnostics are the
probe sensitivities and the log-log fit (``etc_fast.diagnostics``), recomputed after every batch.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import numpy as np

from etc_fast.core import (
    GP_ACQUISITIONS,
    NOISE_KNOB_DEFAULTS,
    Diagnostics,
    Observation,
    TaskView,
    TrialSpec,
    to_jsonable,
)
from etc_fast.labs._base import Lab, Pool, RequestError

#: Most points one baseline experiment request runs on equations when the configuration sets no
#: ``max_experiment_points`` (the rest are not measured; the feedback says so).
MAX_EXPERIMENT_POINTS = 10_000


#: Names analysis code finds preloaded besides the variables; a variable of the same name is not
#: preloaded on its own (the feedback says so).
_RESERVED = frozenset({"X", "y", "data", "np", "math"})


def format_experiment_output(y: np.ndarray, interpreter: bool) -> str:
    """The reply to an experiment in NewtonBench's format: ``{:.15e}`` strings (vanilla) or raw
    numbers, NaN written bare (interpreter variant). The LLM prompts use this formatter too."""
    vals = [float(v) for v in np.asarray(y, dtype=np.float64).reshape(-1)]
    if interpreter:
        return (
            f"<experiment_output>\n{json.dumps(vals)}\n</experiment_output>\n"
            "You can analyse these values with a <python> block."
        )
    return "<experiment_output>\n" + json.dumps([f"{v:.15e}" for v in vals]) + "\n</experiment_output>"


class _Diagnostics:
    """Current diagnostics, whether the shown version is already logged, and the noise-aware
    step's last prediction check (shown with the planner's noise estimate)."""

    def __init__(self, lab: EquationLab, n_probe: int) -> None:
        self.lab = lab
        self.n_probe = n_probe
        self.value: Diagnostics | None = None
        self.index: int | None = None
        self.check: Any = None  # PredictionCheck of the last noise-aware step
        self.refresh()

    def refresh(self, planner: Any = None) -> None:
        """Recompute on the current observations; ``planner`` (a noise-aware step) adds its estimate."""
        from etc_fast.diagnostics import compute_diagnostics, with_planner_estimate

        lab = self.lab
        names = lab.task.variable_names
        self.value = compute_diagnostics(names, lab.X, lab.y, self.n_probe)
        if planner is not None:
            self.value = with_planner_estimate(self.value, planner, names, self.check)
        self.index = None

    def shown(self, phase: str, turn: int) -> tuple[Diagnostics | None, int | None]:
        if self.index is None:
            self.index = self.lab.log_diagnostics(self.value, phase, turn)
        return self.value, self.index


class EquationLab(Lab):
    """A vanilla equation task: rows of inputs in, law values (with the trial's noise) out."""

    name = "equations"
    default_request_cap = MAX_EXPERIMENT_POINTS
    noun = "point"
    nothing_taken = "No measurement was taken"

    def __init__(self, spec: TrialSpec, task: Any, view: TaskView) -> None:
        super().__init__(spec, task, view)
        self.X = np.empty((0, task.d), dtype=np.float64)
        self.y = np.empty(0, dtype=np.float64)
        self.rng = np.random.default_rng([int(spec.noise_seed), int(spec.rollout)])
        self._diag: _Diagnostics | None = None

    # -- measuring -------------------------------------------------------------------------
    @property
    def measurements(self) -> int:
        return int(self.y.shape[0])

    @staticmethod
    def count(items: Any) -> int:
        return int(np.asarray(items).shape[0])

    def run(self, items: Any, source: str) -> np.ndarray:
        X = np.ascontiguousarray(items, dtype=np.float64).reshape(-1, self.task.d)
        if X.shape[0] == 0:
            return np.empty(0)
        y = np.asarray(self.task.measure(X, float(self.spec.noise), self.rng), dtype=np.float64).reshape(X.shape[0])
        self.X = np.vstack([self.X, X])
        self.y = np.concatenate([self.y, y])
        self.sources.extend([source] * X.shape[0])
        return y

    def record(self) -> dict[str, Any]:
        return {"X": self.X.tolist(), "y": self.y.tolist(), "source": list(self.sources)}

    def frozen_observations(self) -> tuple[np.ndarray, np.ndarray]:
        X, y = self.X.copy(), self.y.copy()
        X.flags.writeable = False
        y.flags.writeable = False
        return X, y

    # -- pool and bootstrap ----------------------------------------------------------------
    def pool(self) -> Pool:
        from etc_fast.sampling import pool_unit

        U = pool_unit(self.task.d, self.spec.pool_seed, self.config.pool_size)
        X = self.task.unit_to_inputs(U)
        return Pool(U=U, items=X, X=X)

    def bootstrap(self, pool: Pool, available: np.ndarray, allowance: int | None) -> tuple[int, dict[str, Any]]:
        from etc_fast.sampling import bootstrap_probes

        _, X_boot = bootstrap_probes(self.task, self.config.bootstrap_min)
        n_boot = int(X_boot.shape[0]) if allowance is None else min(int(X_boot.shape[0]), allowance)
        y_boot = self.run(X_boot[:n_boot], "bootstrap")
        self._diag = _Diagnostics(self, n_boot)
        return n_boot, {
            "phase": "bootstrap",
            "event": "bootstrap",
            "n_probes": int(X_boot.shape[0]),
            "measured": int(n_boot),
            "X": X_boot[:n_boot].tolist(),
            "y": to_jsonable(y_boot),
            "truncated_by_budget": bool(n_boot < X_boot.shape[0]),
        }

    # -- baseline requests -----------------------------------------------------------------
    def parse_request(self, points: list[Any]) -> np.ndarray:
        try:
            return self.task.inputs_from_request(list(points))
        except Exception as exc:  # noqa: BLE001 - a bad request is the policy's problem, never the trial's
            raise RequestError(str(exc)) from exc

    def measured_event(self, items: Any, outputs: Any) -> dict[str, Any]:
        return {"X": np.asarray(items).tolist(), "y": to_jsonable(outputs)}

    def format_outputs(self, outputs: Any, interpreter: bool) -> str:
        return format_experiment_output(outputs, interpreter)

    def outcome_text(self, n: int) -> str:
        return f"measured {n} point(s)"

    # -- what an agent sees ----------------------------------------------------------------
    def log_diagnostics(self, diag: Any, phase: str, turn: int) -> int:
        """Record one diagnostics block shown to the policy; returns its index."""
        entry = {"phase": phase, "turn": turn, "n_observations": self.measurements}
        entry.update(to_jsonable(dataclasses.asdict(diag)))
        self.diagnostics_log.append(entry)
        return len(self.diagnostics_log) - 1

    def observation_fields(self, phase: str, turn: int, diagnostics: bool) -> tuple[dict[str, Any], int | None]:
        if not diagnostics or self._diag is None:
            return {"diagnostics": None}, None
        shown, index = self._diag.shown(phase, turn)
        return {"diagnostics": shown}, index

    def current_diagnostics(self) -> Diagnostics | None:
        return None if self._diag is None else self._diag.value

    def analysis_data(self) -> dict[str, Any]:
        if self.interpreter_data() != "preloaded":
            return {}
        names = self.task.variable_names
        data: dict[str, Any] = {"X": self.X.copy(), "y": self.y.copy()}
        for k, name in enumerate(names):
            if name not in _RESERVED:
                data[name] = self.X[:, k].copy()
        data["data"] = [
            {**{name: float(self.X[i, k]) for k, name in enumerate(names)}, "y": float(self.y[i])}
            for i in range(self.measurements)
        ]
        return data

    def shadowed_names(self) -> list[str]:
        """Variable names that clash with the preloaded names (they are not preloaded on their own)."""
        if self.interpreter_data() != "preloaded":
            return []
        return [n for n in self.task.variable_names if n in _RESERVED]

    def synthesis_input(self, obs: Observation) -> dict[str, Any]:
        out = to_jsonable(obs)
        out.pop("system", None)  # vanilla trials: records as before the systems tier
        out["sources"] = list(self.sources)
        return out

    # -- selection -------------------------------------------------------------------------
    def fallback_hypotheses(self) -> list[str]:
        """The fitted power law (when the diagnostics have one) and the sum of the inputs."""
        from etc_fast.diagnostics import power_law_expression

        names = self.task.variable_names
        diag = self.current_diagnostics()
        out = []
        expr = power_law_expression(diag) if diag is not None else None
        if expr is not None:
            out.append(expr)
        out.append(" + ".join(names))
        return out

    def batch(self, pool: Pool, idx: np.ndarray, reps: np.ndarray) -> np.ndarray:
        """The experiments of a selected batch: pool candidates ``idx``, then observed rows ``reps`` again."""
        return np.vstack([pool.X[idx], self.X[reps]]) if reps.size else pool.X[idx]

    def select(self, committee: list[str], parsed: list[str], pool: Pool, available: np.ndarray, k: int, seed: int,
               ev: dict[str, Any]) -> Any:
        cfg, names = self.config, self.task.variable_names
        if cfg.acquisition in GP_ACQUISITIONS:  # the surrogate of the observed law values (docs/guide/acquisition.md)
            from etc_fast.acquisition import equation_target, plan_gp_step

            target, transform = equation_target(self.y)
            return plan_gp_step(
                self.task.inputs_to_unit(self.X), target, pool.U, available.copy(), method=cfg.acquisition, k=k,
                noisy=bool(self.spec.noise > 0), transform=transform,
            )  # fmt: skip
        if cfg.acquisition == "mi":  # the information about which committee law holds (docs/guide/acquisition.md)
            from etc_fast.acquisition import plan_mi_step

            return plan_mi_step(
                committee, names, self.X.copy(), self.y.copy(), self.task.inputs_to_unit(self.X), pool.X, pool.U,
                available.copy(), k=k, noisy=bool(self.spec.noise > 0),
            )  # fmt: skip
        if self.noisy_selection():
            from etc_fast.acquisition import NoiseOptions, plan_noisy_step

            # each knob as the type of its default (explore_fraction: 1 -> 1.0)
            opts = NoiseOptions(**{n: type(d)(getattr(cfg, n)) for n, d in NOISE_KNOB_DEFAULTS.items()})
            U_obs = self.task.inputs_to_unit(self.X)
            prior = None if self._diag is None else self._diag.check
            return plan_noisy_step(
                committee, names, self.X.copy(), self.y.copy(), U_obs, pool.X, pool.U, available.copy(),
                method=cfg.acquisition, k=k, seed=seed, options=opts, noisy=bool(self.spec.noise > 0), prior=prior,
            )  # fmt: skip
        from etc_fast.acquisition import plan_step

        return plan_step(
            committee, names, self.X.copy(), self.y.copy(), pool.X, pool.U, available.copy(),
            method=cfg.acquisition, k=k, seed=seed,
        )

    def after_batch(self, step: Any, items: Any, outputs: Any) -> None:
        noisy = self.noisy_selection()
        assert self._diag is not None
        if noisy and self.config.stop_when_settled:  # the stopping rule's out-of-sample check, shown to the policy
            from etc_fast.acquisition import check_prediction

            self._diag.check = check_prediction(step, self.task.variable_names, items, outputs)
        self._diag.refresh(step if noisy else None)

    def selection_text(self, step: Any, start: int, n_new: int, outputs: Any, notes: list[str]) -> str:
        msg = (
            f"The planner ({self.config.acquisition}) selected and measured {n_new} new point(s): observations "
            f"{start + 1}-{start + n_new} (the last rows of X and y)."
        )
        if self.noisy_selection():
            from etc_fast.diagnostics import describe_noisy_step

            msg += "\n" + describe_noisy_step(step, start, self.task.variable_names, self.X[start : start + n_new])
        return "\n".join([msg, *notes])
