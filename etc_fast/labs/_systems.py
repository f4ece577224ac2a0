"""The systems lab (``simple_system``, ``complex_system``): an experiment is one control dict.

The simulator answers with NewtonBench's output (a time series of at most 20 points, or one
reading). The measurement count is the number of experiments run; the record also keeps the
simulated points (finite numbers returned). Scoring is unchanged: the submitted ``discovered_law``
is replayed on the law's vanilla 5000-point grid.

Planner rules (docs/guide/acquisition.md): the pool is ``pool_size`` scrambled Sobol
requests over the system's control domain; the bootstrap is the pool's first ``max(bootstrap_min,
n_controls + 1)`` points (Sobol's first points fill the domain); a committee turn fits each
hypothesis's free constants to the observations through the simulator and scores the pool by the
disagreement of the simulated series (:func:`select_series`); with a noise knob on in a noisy lab
it runs the noise-aware step for series instead (:func:`etc_fast.acquisition.plan_series_noisy_step`,
docs/guide/noise.md, "On simulated systems"); a GP rule models each experiment's series scale
instead (:func:`etc_fast.acquisition.plan_gp_step`, docs/guide/acquisition.md). Diagnostics are the derived law table
(``etc_fast.systems``), shown inside the system observation.
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np

from etc_fast.core import (
    GP_ACQUISITIONS,
    NOISE_KNOB_DEFAULTS,
    Observation,
    ProtocolConfig,
    SystemObservation,
    TaskView,
    TrialSpec,
    derive_seed,
    scores_committee,
    to_jsonable,
)
from etc_fast.labs._base import Lab, Pool, RequestError


def format_system_output(outputs: list[Any]) -> str:
    """The reply to a system experiment: NewtonBench's outputs as a JSON list."""
    return "<experiment_output>\n" + json.dumps(to_jsonable(outputs)) + "\n</experiment_output>"


class SystemLab(Lab):
    """A NewtonBench simulated system; ``system_task`` runs the experiments, ``task`` is its law's
    vanilla task. The law's ``X``/``y`` stay empty: no law value is ever observed directly."""

    name = "systems"
    default_request_cap = 100
    noun = "experiment"
    nothing_taken = "No experiment was run"

    @classmethod
    def refusal(cls, config: ProtocolConfig) -> str | None:
        if config.family == "planner" and config.synthesis == "none":
            return ("synthesis: none has no rule on simulated systems (its stand-ins, the best-fitting committee "
                    "law and the diagnostics' power law, are fitted to observed law values, which a system "
                    "trial never has); use synthesis: fresh")
        return None

    def __init__(self, spec: TrialSpec, system_task: Any, view: TaskView) -> None:
        super().__init__(spec, system_task.law, view)
        from etc_fast.llm import apparatus_block
        from etc_fast.systems import spec as system_spec

        self.system_task = system_task
        self.module, self.system = system_task.module, system_task.system
        self.sys_spec = system_spec(self.module, self.system)
        self.apparatus = apparatus_block(self.sys_spec, law_signature=view.signature, law_meaning=view.output_description)
        self.requests: list[dict[str, Any]] = []
        self.outputs: list[Any] = []
        self.series = np.empty((0, len(self.sys_spec.channels), self.sys_spec.n_times))
        self._derived: Any = None
        self._derived_rows: Any = None  # DerivedTableCache: re-derives only the experiments added
        #: float64[n, d_pool]: each experiment's unit coordinates in the pool's domain (NaN where it did
        #: not come from the pool: a baseline's request); the noise-aware step explores away from them.
        self.units = np.empty((0, len(self.sys_spec.pool_controls)))
        self._pending_units: np.ndarray | None = None  # the unit rows of the batch about to run
        self._check: Any = None  # SeriesCheck of the last noise-aware batch (the stopping rule)

    # -- measuring -------------------------------------------------------------------------
    @property
    def measurements(self) -> int:
        return len(self.requests)

    @property
    def simulated_points(self) -> int:
        """Points returned (time points of a series, or 1 for a reading), summed over experiments."""
        if not len(self.series):
            return 0
        return int(np.isfinite(self.series).sum(axis=2).max(axis=1).sum())

    def run(self, items: Any, source: str) -> list[Any]:
        from etc_fast.systems import observe

        requests = list(items)
        if not requests:
            return []
        seed = derive_seed(int(self.spec.noise_seed), int(self.spec.rollout), len(self.requests))
        outs = self.system_task.experiment(requests, noise_level=float(self.spec.noise), rng_seed=seed)
        self.requests.extend(dict(r) for r in requests)
        self.outputs.extend(outs)
        self.series = np.concatenate([self.series, observe(self.module, self.system, outs)])
        self.sources.extend([source] * len(requests))
        pending, self._pending_units = self._pending_units, None
        if pending is None or pending.shape[0] != len(requests):
            pending = np.full((len(requests), self.units.shape[1]), np.nan)
        self.units = np.vstack([self.units, pending])
        self._derived = None
        return outs

    def record(self) -> dict[str, Any]:
        return {
            "requests": to_jsonable(self.requests), "outputs": to_jsonable(self.outputs),
            "source": list(self.sources), "simulated_points": self.simulated_points,
        }

    # -- pool and bootstrap ----------------------------------------------------------------
    def pool(self) -> Pool:
        from etc_fast.sampling import pool_unit
        from etc_fast.systems import controls_matrix, system_pool

        requests = system_pool(self.module, self.system, self.spec.pool_seed, self.config.pool_size)
        U = pool_unit(len(self.sys_spec.pool_controls), self.spec.pool_seed, self.config.pool_size)
        return Pool(U=U, items=requests, X=controls_matrix(self.sys_spec, requests))

    def bootstrap(self, pool: Pool, available: np.ndarray, allowance: int | None) -> tuple[int, dict[str, Any]]:
        wanted = max(self.config.bootstrap_min, len(self.sys_spec.pool_controls) + 1)
        n_boot = wanted if allowance is None else min(wanted, allowance)
        boot = list(range(n_boot))
        available[boot] = False
        self._pending_units = pool.U[boot]
        self.run([pool.items[i] for i in boot], "bootstrap")
        event: dict[str, Any] = {"phase": "explore", "event": "bootstrap", "indices": boot, "n": n_boot}
        if n_boot < wanted:  # only when cut, so that uncapped records stay as they were
            event.update(wanted=wanted, truncated_by_budget=True)
        return n_boot, event

    # -- baseline requests -----------------------------------------------------------------
    def parse_request(self, points: list[Any]) -> list[dict[str, Any]]:
        keys = {c.key for c in self.sys_spec.controls}
        reqs = []
        for i, p in enumerate(points):
            if not isinstance(p, dict):
                raise RequestError(f"experiment {i} is not a JSON object of controls")
            unknown = sorted(set(p) - keys)
            if unknown:
                raise RequestError(f"experiment {i} has unknown controls {unknown}; the controls are {sorted(keys)}")
            reqs.append(dict(p))
        return reqs

    def measured_event(self, items: Any, outputs: Any) -> dict[str, Any]:
        return {"requests": to_jsonable(list(items)), "outputs": to_jsonable(outputs)}

    def format_outputs(self, outputs: Any, interpreter: bool) -> str:
        return format_system_output(outputs)

    def outcome_text(self, n: int) -> str:
        return f"ran {n} experiment(s)"

    # -- what an agent sees ----------------------------------------------------------------
    def interpreter_data(self) -> str:
        """Analysis code on a system finds its records preloaded unless the configuration says
        ``interpreter_data: empty`` (the system prompts describe the preloaded names)."""
        return self.config.interpreter_data or "preloaded"

    def derived_table(self) -> Any:
        """The derived law table of the experiments so far (recomputed only for new experiments)."""
        from etc_fast.systems import DerivedTableCache, record_times

        if self._derived is None:
            if self._derived_rows is None:
                self._derived_rows = DerivedTableCache()
            times = record_times(self.module, self.system, self.outputs)
            self._derived = self._derived_rows.table(self.module, self.system, self.requests, self.series, times)
        return self._derived

    def system_observation(self, diagnostics: bool) -> SystemObservation:
        series = self.series.copy()
        series.flags.writeable = False
        return SystemObservation(
            module=self.module, system=self.system, apparatus=self.apparatus, spec=self.sys_spec,
            requests=tuple(dict(r) for r in self.requests), outputs=tuple(self.outputs), series=series,
            derived=self.derived_table() if diagnostics and self.requests else None,
        )

    def observation_fields(self, phase: str, turn: int, diagnostics: bool) -> tuple[dict[str, Any], int | None]:
        return {"diagnostics": None, "system": self.system_observation(diagnostics)}, None

    def analysis_data(self) -> dict[str, Any]:
        """``X`` (controls, one row per experiment, spec order), ``series`` (float64[n, channels,
        times]) and ``data`` (the requests with their outputs); nothing with ``interpreter_data: empty``."""
        from etc_fast.systems import controls_matrix

        if self.interpreter_data() != "preloaded":
            return {}
        C = controls_matrix(self.sys_spec, self.requests) if self.requests else np.empty((0, len(self.sys_spec.controls)))
        return {"X": C, "y": np.empty(0), "series": self.series.copy(),
                "data": [{"request": r, "output": o} for r, o in zip(to_jsonable(self.requests), to_jsonable(self.outputs))]}

    def synthesis_input(self, obs: Observation) -> dict[str, Any]:
        return {"requests": to_jsonable(self.requests), "outputs": to_jsonable(self.outputs),
                "draft": obs.draft, "sources": list(self.sources)}

    # -- selection -------------------------------------------------------------------------
    def batch(self, pool: Pool, idx: np.ndarray, reps: np.ndarray) -> list[dict[str, Any]]:
        self._pending_units = np.vstack([pool.U[idx], self.units[reps]])
        return [pool.items[int(i)] for i in idx] + [dict(self.requests[int(r)]) for r in reps]

    def _calibrated(self, texts: list[str]) -> list[Any]:
        from etc_fast.acquisition import calibrate_committee

        return calibrate_committee(texts, self.task.variable_names, self.module, self.system, self.requests, self.series)

    def select(self, committee: list[str], parsed: list[str], pool: Pool, available: np.ndarray, k: int, seed: int,
               ev: dict[str, Any]) -> Any:
        from etc_fast.core import clip_text

        method = self.config.acquisition
        if method in GP_ACQUISITIONS:  # the surrogate of each experiment's series scale (docs/guide/acquisition.md)
            from etc_fast.acquisition import plan_gp_step, series_target

            target, transform = series_target(self.series)
            return plan_gp_step(self.units, target, pool.U, available.copy(), method=method, k=k,
                                noisy=bool(self.spec.noise > 0), transform=transform)
        if method == "mi":  # the information about which committee law holds (docs/guide/acquisition.md)
            from etc_fast.acquisition import plan_series_mi_step

            return plan_series_mi_step(parsed, self.task.variable_names, self.module, self.system, self.requests,
                                       self.series, self.units, pool.X, pool.U, available.copy(), k=k,
                                       noisy=bool(self.spec.noise > 0))
        if self.noisy_selection():
            from etc_fast.acquisition import NoiseOptions, plan_series_noisy_step

            # each knob as the type of its default (explore_fraction: 1 -> 1.0)
            opts = NoiseOptions(**{n: type(d)(getattr(self.config, n)) for n, d in NOISE_KNOB_DEFAULTS.items()})
            step = plan_series_noisy_step(
                parsed, self.task.variable_names, self.module, self.system, self.requests, self.series, self.units,
                pool.X, pool.U, available.copy(), method=method, k=k, seed=seed, options=opts, prior=self._check,
            )  # fmt: skip
            if step.calibrated:
                ev["committee"]["calibrated"] = [clip_text(t, 2000) for t in step.calibrated]
            return step
        progs = None
        if scores_committee(method) and len(parsed) >= 2:
            progs = self._calibrated(parsed)
            ev["committee"]["calibrated"] = [clip_text(p.text, 2000) for p in progs]
        from etc_fast.acquisition import select_series

        return select_series(
            progs, self.module, self.system, pool.X, pool.U, available, method=method, k=k, seed=seed,
            precision=max(5e-7, float(self.spec.noise)),
        )

    def after_batch(self, step: Any, items: Any, outputs: Any) -> None:
        if self.noisy_selection() and self.config.stop_when_settled:  # the stopping rule's out-of-sample check
            from etc_fast.acquisition import check_series_prediction

            self._check = check_series_prediction(step, self.series[self.measurements - len(items):])

    def selection_text(self, step: Any, start: int, n_new: int, outputs: Any, notes: list[str]) -> str:
        head = (f"The planner ({self.config.acquisition}) selected and ran {n_new} new experiment(s): experiments "
                f"{start + 1}-{start + n_new}.")
        if self.noisy_selection():
            from etc_fast.acquisition import describe_series_step

            check = self._check if self.config.stop_when_settled else None
            head += "\n" + describe_series_step(step, start, check)
        return "\n".join([head, *notes, format_system_output(outputs)])
