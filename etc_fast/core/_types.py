"""The contract between the protocol, the policies and the runner.

The protocol enforces rules, counts measurements and records everything; a *policy* only decides.
Each decision point hands the policy an :class:`Observation` and gets back one :class:`Action`.
Everything here is plain data (JSON-serializable through :func:`to_jsonable`).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, Protocol, runtime_checkable

import numpy as np

from etc_fast.core._config import ProtocolConfig

# ----------------------------------------------------------------------------------------
# Observations and actions
# ----------------------------------------------------------------------------------------
Phase = Literal["explore", "synthesis", "baseline", "final"]
ActionKind = Literal["committee", "analysis", "draft", "experiment", "final"]


@dataclasses.dataclass(frozen=True)
class TaskView:
    """What an agent may know of a task (never the law, the grid or the constants)."""

    name: str
    title: str
    description: str
    output_name: str
    output_description: str
    variables: tuple[dict[str, Any], ...]  # name, key, description, scale, low, high, default
    signature: str


@dataclasses.dataclass(frozen=True)
class Diagnostics:
    """Automatic planner diagnostics (see :mod:`etc_fast.diagnostics`)."""

    sensitivities: dict[str, float | None]  # variable -> log-ratio sensitivity (None: not computable)
    exponents: dict[str, float] | None  # power-law fit exponents per variable (None: fit not possible)
    intercept: float | None
    r2: float | None
    residual_rms: float | None
    n_used: int
    text: str  # advisory text shown to the agent
    excluded: tuple[str, ...] = ()  # variables left out of the fit (non-positive or non-finite inputs)
    n_observations: int = 0  # observations the diagnostics were computed on
    noise_estimate: float | None = None  # noise-aware planner: estimated relative noise (None: no estimate)
    noise_basis: str | None = None  # how it was estimated: replicates | residuals (None: not noise-aware)
    explored: tuple[tuple[float, ...], ...] = ()  # inputs the planner's last batch measured to explore
    # noise-aware planner: (hypothesis, relative RMS error, noise estimate, passed) of the best law's
    # prediction of the last batch, made before it was measured (None: none)
    prediction: tuple[str, float, float, bool] | None = None
    settled: bool = False  # stopping rule: the planner left slots unmeasured (nothing left to tell apart)


@dataclasses.dataclass(frozen=True)
class Observation:
    """What the protocol hands a policy at one decision point.

    Attributes:
        phase: ``explore`` (planner exploration), ``synthesis`` (fresh synthesis), ``baseline``
            (free-form round) or ``final`` (forced final submission).
        task: The agent-facing task view.
        X: float64[n, d] observed inputs so far (signature order).
        y: float64[n] observed outputs (NaN where the simulator gave none).
        diagnostics: Planner diagnostics, or ``None`` (baselines, diagnostics off).
        turn: 0-based index of this decision within the phase.
        turns_left: Decisions left in this phase after this one.
        measurements_used: Simulator evaluations so far (bootstrap included).
        measurements_left: Evaluations still allowed (``None`` = unlimited).
        allowed: Action kinds allowed now.
        interpreter: Whether analysis requests are allowed in this configuration.
        draft: Draft law source carried into synthesis, if any.
        feedback: The protocol's reply to the previous action (analysis output, experiment
            results, a refusal, a repair request), or ``None`` at the start of a phase.
        noisy: Whether the simulator adds noise. Policies learn only this, never the level (as
            NewtonBench's prompt says only "noise-free" or "noisy").
        batch_cap: Planner batch size (informational).
        feedback_kind: What ``feedback`` answers: ``experiment`` (baseline measurement output,
            already in NewtonBench's ``<experiment_output>`` format), ``selection`` (planner batch
            measured), ``analysis`` (interpreter output), ``refusal`` (action not allowed now),
            ``repair`` (unusable action, say what to fix), ``validation`` (baseline analysis code
            failed the code checks; not run), ``request_error`` (a baseline experiment request
            could not be run); ``None`` without feedback. At the
            forced final call (phase ``final``) the feedback is the reply to the last round's
            action; the phase itself is the instruction to submit now.
        new_rows: Number of observations added by the previous action (the last rows of ``X``).
        analysis_result: For ``feedback_kind`` ``analysis`` (and ``validation``): the run's
            record (``ok``, ``stdout``, ``error``, ``code``; ``validation_error`` when the code
            was not run), so a policy can word the reply itself.
        interpreter_data: ``preloaded`` or ``empty`` (what the interpreter starts with).
    """

    phase: Phase
    task: TaskView
    X: np.ndarray
    y: np.ndarray
    diagnostics: Diagnostics | None
    turn: int
    turns_left: int
    measurements_used: int
    measurements_left: int | None
    allowed: frozenset[str]
    interpreter: bool
    draft: str | None = None
    feedback: str | None = None
    noisy: bool = False
    batch_cap: int = 4
    feedback_kind: str | None = None
    new_rows: int = 0
    analysis_result: dict[str, Any] | None = None
    interpreter_data: str = "preloaded"
    system: Any = None  # SystemObservation on simple/complex_system trials (X, y are then empty)


@dataclasses.dataclass(frozen=True)
class SystemObservation:
    """What a policy sees of a system trial besides the law's signature (docs/guide/labs.md).

    Attributes:
        module, system: The NewtonBench module and system.
        apparatus: The apparatus block (``etc_fast.llm.apparatus_block``).
        spec: The system's public spec (controls, defaults, pool domains, channels).
        requests: The experiments run so far (control dicts, defaults filled in), in order.
        outputs: NewtonBench's output for each of them.
        series: float64[n, channels, times] the outputs as numbers (NaN: none).
        derived: The derived law table (``etc_fast.systems._derive``) when diagnostics are shown.
    """

    module: str
    system: str
    apparatus: str
    spec: Any
    requests: tuple[dict[str, Any], ...]
    outputs: tuple[Any, ...]
    series: np.ndarray
    derived: Any = None


@dataclasses.dataclass(frozen=True)
class Action:
    """A policy's decision.

    Attributes:
        kind: ``committee`` (hypotheses), ``analysis`` (Python code), ``draft`` (law source,
            ends exploration), ``experiment`` (input points), ``final`` (law source), or
            ``invalid`` (unusable reply; ``error`` says why).
        hypotheses: Committee hypotheses (expressions in the hypothesis language), <= 5 used.
        code: Analysis code (runs only in the sandbox).
        source: ``discovered_law`` source for ``draft``/``final``.
        points: Experiment inputs as dicts keyed by variable *key* (missing keys take defaults).
        raw: Raw model text the action was parsed from (LLM) or a short description.
        error: Why the action is invalid, if it is.
        usage: Token counts for the call that produced this action
            (``prompt_tokens``, ``completion_tokens``, ``calls``, ``cached``); an LLM policy adds
            the reply's ``finish_reason`` (a string, or ``None`` when the server gave none).
    """

    kind: Literal["committee", "analysis", "draft", "experiment", "final", "invalid"]
    hypotheses: tuple[str, ...] = ()
    code: str | None = None
    source: str | None = None
    points: tuple[dict[str, Any], ...] = ()
    raw: str = ""
    error: str | None = None
    usage: dict[str, int | str | None] = dataclasses.field(default_factory=dict)


@runtime_checkable
class Policy(Protocol):
    """A decision maker. ``begin`` starts a new context (a fresh conversation for LLMs)."""

    name: str

    def begin(self, phase: Phase, task: TaskView, config: ProtocolConfig, seed: int) -> None:
        """Start a new context for ``phase`` (explore, synthesis, baseline).

        ``seed`` is a per-trial seed (32 bits of the trial id): the same trial always gets the same
        seed, and no two trials of a grid share one, so rollouts are never paired through it.
        """
        ...

    def act(self, obs: Observation) -> Action:
        """Decide one action. May raise; the protocol records the error and carries on."""
        ...


