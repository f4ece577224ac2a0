"""The Lab interface: everything one tier of tasks does differently, behind one small surface.

The protocol's loops (``etc_fast.protocol``: one planner loop, one baseline loop, one synthesis)
are written once against a :class:`Lab`. A lab owns the trial's observations and answers these
questions:

- **measuring**: run a batch of experiments (:meth:`Lab.run`), count them (:attr:`Lab.measurements`),
  record them (:meth:`Lab.record`);
- **the pool and the bootstrap**: the planner's candidate experiments and their unit-cube
  coordinates (:meth:`Lab.pool`), the first experiments before exploration (:meth:`Lab.bootstrap`);
- **requests**: turn a baseline's experiment request into runnable experiments, or say what is wrong
  (:meth:`Lab.parse_request`, :class:`RequestError`);
- **what an agent is shown**: the outputs of a batch (:meth:`Lab.format_outputs`), the lab's part of
  an observation (:meth:`Lab.observation_fields`), the data analysis code finds
  (:meth:`Lab.analysis_data`), the synthesis input kept in the record (:meth:`Lab.synthesis_input`);
- **selection**: score the pool by a committee's disagreement and pick a batch
  (:meth:`Lab.select`, through ``etc_fast.acquisition``), then describe it (:meth:`Lab.selection_text`).

The labs are registered by the task's system (:data:`etc_fast.labs.LABS`): ``vanilla_equation``
runs the equation lab, ``simple_system`` and ``complex_system`` the systems lab.
"""

from __future__ import annotations

import abc
import dataclasses
from typing import Any

import numpy as np

from etc_fast.core import NOISE_KNOB_DEFAULTS, Diagnostics, Observation, ProtocolConfig, TaskView, TrialSpec


def noise_knobs_on(cfg: ProtocolConfig) -> bool:
    """Whether a configuration has a noise knob off its default (the noise-aware step then runs in
    noisy labs; the task says whether the lab is noisy)."""
    return any(getattr(cfg, name) != default for name, default in NOISE_KNOB_DEFAULTS.items())


class RequestError(ValueError):
    """An experiment request that cannot be run; the message says what is wrong with it."""


@dataclasses.dataclass
class Pool:
    """The planner's candidate experiments.

    Attributes:
        U: float64[n, d_pool], each candidate's unit-cube coordinates (diversity and exploration
            distances are measured there).
        items: What the lab runs for candidate ``i`` (``items[i]``): a row of inputs (equations) or a
            request dict (systems).
        X: float64[n, d], the candidates as numbers (inputs of the law, or a system's controls).
    """

    U: np.ndarray
    items: Any
    X: np.ndarray


class Lab(abc.ABC):
    """One trial's apparatus and observations (see the module docstring)."""

    #: Registry name, as in configs and records.
    name: str = ""
    #: Most experiments one baseline request runs when the configuration sets no
    #: ``max_experiment_points``.
    default_request_cap: int = 10_000
    #: What the lab calls one experiment in feedback ("point", "experiment").
    noun: str = "point"
    #: The sentence used when a request produced no measurement.
    nothing_taken: str = "No measurement was taken"

    @classmethod
    def refusal(cls, config: ProtocolConfig) -> str | None:
        """Why this lab cannot run ``config`` as asked (a setting it has no rule for), or ``None``.

        The config loader asks before a study starts (exit 2, naming the grid); the lab asks again
        when a trial is built from the Python API, so a setting is never silently ignored.
        """
        return None

    def __init__(self, spec: TrialSpec, task: Any, view: TaskView) -> None:
        why = self.refusal(spec.config)
        if why is not None:
            raise ValueError(f"configuration {spec.config.name!r} on {spec.system}: {why}")
        self.spec = spec
        self.config: ProtocolConfig = spec.config
        #: The law's vanilla task: its signature, its variable names and how a submission is scored.
        self.task = task
        self.view = view
        self.sources: list[str] = []
        #: The diagnostics blocks shown to the policy, in order (the record's ``diagnostics``).
        self.diagnostics_log: list[dict[str, Any]] = []

    # -- measuring -------------------------------------------------------------------------
    @property
    @abc.abstractmethod
    def measurements(self) -> int:
        """Experiments run so far (the unit of the measurement budget)."""

    @abc.abstractmethod
    def run(self, items: Any, source: str) -> Any:
        """Run the experiments ``items`` (the caller enforces the budget), append them with their
        ``source`` (bootstrap, planner, experiment), return their outputs."""

    @staticmethod
    def count(items: Any) -> int:
        """How many experiments ``items`` holds."""
        return len(items)

    @abc.abstractmethod
    def record(self) -> dict[str, Any]:
        """The trial record's ``observations`` entry."""

    def frozen_observations(self) -> tuple[np.ndarray, np.ndarray]:
        """Read-only copies of the observed law values ``(X, y)`` (empty where none are observed)."""
        X = np.empty((0, self.task.d), dtype=np.float64)
        y = np.empty(0, dtype=np.float64)
        X.flags.writeable = False
        y.flags.writeable = False
        return X, y

    # -- pool and bootstrap ----------------------------------------------------------------
    @abc.abstractmethod
    def pool(self) -> Pool:
        """The planner's candidate pool (``pool_size`` scrambled Sobol points, seeded by ``pool_seed``)."""

    @abc.abstractmethod
    def bootstrap(self, pool: Pool, available: np.ndarray, allowance: int | None) -> tuple[int, dict[str, Any]]:
        """Run the bootstrap (at most ``allowance`` experiments; ``None``: no budget), marking any
        pool candidates it used as unavailable. Returns ``(experiments run, the bootstrap event)``."""

    # -- baseline requests -----------------------------------------------------------------
    @abc.abstractmethod
    def parse_request(self, points: list[Any]) -> Any:
        """The runnable experiments of a baseline request's points.

        Raises:
            RequestError: the request cannot be run (the message says which point and why).
        """

    @staticmethod
    def head(items: Any, n: int) -> Any:
        """The first ``n`` experiments of ``items``."""
        return items[:n]

    @abc.abstractmethod
    def measured_event(self, items: Any, outputs: Any) -> dict[str, Any]:
        """What a record keeps of a run batch (the event's ``measured`` entry, before any extras)."""

    @abc.abstractmethod
    def format_outputs(self, outputs: Any, interpreter: bool) -> str:
        """A batch's outputs as the agent reads them."""

    # -- what an agent sees ----------------------------------------------------------------
    def interpreter_data(self) -> str:
        """What the analysis interpreter starts with: ``preloaded`` or ``empty``."""
        return self.config.resolved_interpreter_data

    def observation_fields(self, phase: str, turn: int, diagnostics: bool) -> tuple[dict[str, Any], int | None]:
        """The lab's fields of an :class:`~etc_fast.core.Observation` (``diagnostics``, ``system``)
        and the index of the diagnostics entry shown (``None``: none logged)."""
        return {}, None

    @abc.abstractmethod
    def analysis_data(self) -> dict[str, Any]:
        """The names analysis code finds preloaded (empty with ``interpreter_data: empty``)."""

    @abc.abstractmethod
    def synthesis_input(self, obs: Observation) -> dict[str, Any]:
        """The record's ``synthesis_input``, given the first synthesis observation."""

    # -- selection -------------------------------------------------------------------------
    def fallback_hypotheses(self) -> list[str]:
        """Generic stand-ins a random planner selects with when its committee is unusable."""
        return []

    def noisy_selection(self) -> bool:
        """Whether the noise-aware step runs: a noise knob is on and the lab is noisy (a noiseless
        lab runs the paper's rule)."""
        return noise_knobs_on(self.config) and self.spec.noise > 0

    @abc.abstractmethod
    def select(self, committee: list[str], parsed: list[str], pool: Pool, available: np.ndarray, k: int, seed: int,
               ev: dict[str, Any]) -> Any:
        """Choose up to ``k`` available pool candidates by ``committee`` (``parsed``: its
        hypotheses that parse) (and, noise-aware, observed experiments to
        repeat) by the configuration's acquisition rule; returns a step with ``indices``,
        ``replicate_rows``, ``error``, ``fallback_used`` and ``to_record()``. ``ev`` is the turn's
        event: a lab may add what it computed (calibrated hypotheses)."""

    def after_batch(self, step: Any, items: Any, outputs: Any) -> None:  # noqa: B027 - an optional hook
        """Update the lab's derived state (diagnostics) once a selected batch was measured."""

    @abc.abstractmethod
    def batch(self, pool: Pool, idx: np.ndarray, reps: np.ndarray) -> Any:
        """The experiments of a selected batch: pool candidates ``idx``, then observed experiments
        ``reps`` again (replicates)."""

    @abc.abstractmethod
    def outcome_text(self, n: int) -> str:
        """The record's outcome line for ``n`` experiments run."""

    def shadowed_names(self) -> list[str]:
        """Variable names that clash with preloaded names (the analysis feedback says so)."""
        return []

    @abc.abstractmethod
    def selection_text(self, step: Any, start: int, n_new: int, outputs: Any, notes: list[str]) -> str:
        """The feedback after a selected batch was run (``notes``: dropped or unparsed hypotheses)."""

    def current_diagnostics(self) -> Diagnostics | None:
        """The diagnostics the lab computed last (``None`` where it computes none)."""
        return None
