"""Task abstraction: a hidden scalar law over named, bounded inputs.

A :class:`Task` is everything the protocol, the samplers and the evaluator need to know about one
hidden law: its variables (signature order), their sampling domains, the vectorized ground truth,
the noise model, and the texts shown to agents and judges.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping, Sequence
from typing import Literal

import numpy as np

from etc_fast._portable import linear_uniform, log_uniform

Scale = Literal["log", "linear"]
DIFFICULTIES: tuple[str, ...] = ("easy", "medium", "hard")
LAW_VERSIONS: tuple[str, ...] = ("v0", "v1", "v2")


class Variable(str):
    """One input of a task. A ``Variable`` *is* its name (a ``str``), so ``task.variables`` reads as
    the signature's names in order, and carries its domain and request metadata as attributes.

    Attributes:
        name: Name in the ``discovered_law`` signature (e.g. ``"n1"``); the string value itself.
        key: JSON key an agent uses in an experiment request (NewtonBench's vanilla key,
            e.g. ``"refractive_index_1"``); equals ``name`` for most modules.
        default: Value a missing key takes in an experiment request (NewtonBench semantics);
            ``None`` when the key is required.
        description: Human-readable meaning shown to agents.
        scale: ``"log"`` (log-uniform domain) or ``"linear"`` (uniform domain).
        low: Lower end of the sampling/evaluation domain.
        high: Upper end of the sampling/evaluation domain.
    """

    _FIELDS = ("key", "default", "description", "scale", "low", "high")

    def __new__(
        cls, name: str, key: str, default: float | None, description: str, scale: Scale, low: float, high: float
    ) -> Variable:
        self = super().__new__(cls, name)
        for field, value in zip(cls._FIELDS, (key, default, description, scale, low, high)):
            object.__setattr__(self, field, value)
        return self

    key: str
    default: float | None
    description: str
    scale: Scale
    low: float
    high: float

    @property
    def name(self) -> str:
        return str.__str__(self)

    def __setattr__(self, attr: str, value: object) -> None:
        raise AttributeError(f"Variable {self.name!r} is immutable")

    def __reduce__(self):
        return (Variable, (self.name, *(getattr(self, f) for f in self._FIELDS)))

    def __repr__(self) -> str:
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS)
        return f"Variable(name={self.name!r}, {fields})"

    def from_unit(self, u: np.ndarray) -> np.ndarray:
        """Map unit-cube coordinates ``u`` in [0, 1] to this variable's domain.

        Log scale: ``exp(ln a + u (ln b - ln a))``; linear: ``a + u (b - a)``; both clipped to the
        domain and computed with exactly rounded operations only, so the same ``u`` gives the same
        bits on every machine (:mod:`etc_fast._portable`).
        """
        if self.scale == "log":
            return log_uniform(u, self.low, self.high)
        return linear_uniform(u, self.low, self.high)

    def to_unit(self, x: np.ndarray) -> np.ndarray:
        """Inverse of :meth:`from_unit` (values outside the domain map outside [0, 1])."""
        x = np.asarray(x, dtype=np.float64)
        if self.scale == "log":
            la, lb = np.log(self.low), np.log(self.high)
            with np.errstate(divide="ignore", invalid="ignore"):
                return (np.log(x) - la) / (lb - la)
        return (x - self.low) / (self.high - self.low)


TruthFn = Callable[[np.ndarray], np.ndarray]


@dataclasses.dataclass(frozen=True, eq=False)
class Task:
    """A hidden-law task.

    Attributes:
        name: Registry name: the module (``"m0_gravity"``) or the custom task's ``name``.
        module: Module name; for a custom task the same as ``name``.
        difficulty: ``easy``/``medium``/``hard`` (custom tasks: ``"custom"``).
        law_version: ``v0``/``v1``/``v2`` (custom tasks: ``"custom"``).
        title: Short title (e.g. ``"gravitational force"``).
        description: What the apparatus measures, shown to agents.
        output_name: Name of the measured quantity (e.g. ``"F"``).
        output_description: What ``discovered_law`` must return.
        variables: Inputs in signature order.
        noise_floor: Minimum absolute noise standard deviation (NewtonBench per-module floor).
        ground_truth_text: Judge-facing text of the true law (constants named, not valued).
        param_description: Judge-facing description of each argument, one per line.
        law_expression: The law in the hypothesis language when it can be written there
            (custom tasks always; built-ins where known), else ``None``. Never shown to agents.
        source: Where the task came from (``"newtonbench"`` or the custom file path).
        request_transform: How the module's experiment runner rewrites requested inputs before the
            law sees them (e.g. NewtonBench m2 takes ``abs`` of every input, m4 wraps the angle into
            [0, 90]); ``None`` = unchanged. Pool and grid points are already in-domain.
        constants: The law's hidden constants by the names ``ground_truth_text`` uses
            (NewtonBench's ``HIDDEN_CONSTANT``, ``k``, ...; a custom task's ``constants:``). The
            structural judge lets each take another value of the same sign; every other number of
            the law is a literal. Never shown to agents.
    """

    name: str
    module: str
    difficulty: str
    law_version: str
    title: str
    description: str
    output_name: str
    output_description: str
    variables: tuple[Variable, ...]
    noise_floor: float
    ground_truth_text: str
    param_description: str
    truth_fn: TruthFn = dataclasses.field(repr=False)
    law_expression: str | None = None
    source: str = "newtonbench"
    request_transform: Callable[[np.ndarray], np.ndarray] | None = dataclasses.field(default=None, repr=False)
    constants: Mapping[str, float] = dataclasses.field(default_factory=dict)

    # -- derived views -------------------------------------------------------------------
    @property
    def variable_names(self) -> tuple[str, ...]:
        """Variable names in signature order."""
        return tuple(v.name for v in self.variables)

    @property
    def d(self) -> int:
        """Number of inputs."""
        return len(self.variables)

    @property
    def signature(self) -> str:
        """The exact ``def discovered_law(...):`` line submissions must use."""
        return f"def discovered_law({', '.join(self.variable_names)}):"

    @property
    def key(self) -> str:
        """Unique key ``module/difficulty/law_version``."""
        return f"{self.module}/{self.difficulty}/{self.law_version}"

    # -- numerics ------------------------------------------------------------------------
    def truth(self, X: np.ndarray) -> np.ndarray:
        """Noise-free law at each row of ``X``.

        Args:
            X: float64[n, d] inputs in signature order.

        Returns:
            float64[n] outputs; NaN wherever NewtonBench would raise or return NaN.
        """
        X = np.asarray(X, dtype=np.float64)
        if X.ndim != 2 or X.shape[1] != self.d:
            raise ValueError(
                f"task {self.key}: truth expects an (n, {self.d}) array of "
                f"{', '.join(self.variable_names)}, got shape {X.shape}"
            )
        with np.errstate(all="ignore"):
            y = np.asarray(self.truth_fn(X), dtype=np.float64).reshape(X.shape[0])
        return y

    def measure(self, X: np.ndarray, noise: float = 0.0, rng: np.random.Generator | None = None) -> np.ndarray:
        """Simulator measurement: truth plus NewtonBench relative Gaussian noise.

        ``sigma = max(|y| * noise, noise_floor)``; noise 0 returns the truth unchanged; NaN stays NaN.
        ``rng`` is required when ``noise > 0`` (seeded per trial by the protocol).
        """
        y = self.truth(X)
        if noise == 0.0:
            return y
        if noise < 0 or not np.isfinite(noise):
            raise ValueError(f"noise must be a finite non-negative number, got {noise!r}")
        if rng is None:
            raise ValueError("measure(noise > 0) needs a seeded numpy Generator")
        with np.errstate(all="ignore"):
            sigma = np.maximum(np.abs(y * noise), self.noise_floor)
            eps = rng.standard_normal(y.shape[0])
            out = y + sigma * eps
        return np.where(np.isnan(y), np.nan, out)

    def unit_to_inputs(self, U: np.ndarray) -> np.ndarray:
        """Map unit-cube points (n, d) to task inputs (n, d), per variable scale."""
        U = np.asarray(U, dtype=np.float64)
        return np.column_stack([v.from_unit(U[:, k]) for k, v in enumerate(self.variables)]) if U.size else np.empty((U.shape[0], self.d))

    def inputs_to_unit(self, X: np.ndarray) -> np.ndarray:
        """Map task inputs (n, d) to unit-cube coordinates (n, d)."""
        X = np.asarray(X, dtype=np.float64)
        return np.column_stack([v.to_unit(X[:, k]) for k, v in enumerate(self.variables)]) if X.size else np.empty((X.shape[0], self.d))

    def inputs_from_request(self, points: Sequence[Mapping[str, object]]) -> np.ndarray:
        """Turn an agent's experiment request (dicts keyed by variable ``key``) into inputs.

        Missing keys take the variable's default (a required key raises); unknown keys are ignored,
        as in NewtonBench; a value that is not a real number raises. The module's request transform
        is applied last.

        Raises:
            ValueError: naming the point index and key that is wrong.
        """
        rows = []
        for i, point in enumerate(points):
            if not isinstance(point, Mapping):
                raise ValueError(f"experiment point {i}: expected an object of inputs, got {type(point).__name__}")
            row = []
            for v in self.variables:
                if v.key in point:
                    val = point[v.key]
                elif v.name in point and v.name != v.key:
                    val = v.default  # NewtonBench ignores signature names when keys differ
                    if val is None:
                        raise ValueError(f"experiment point {i}: missing required key {v.key!r}")
                else:
                    if v.default is None:
                        raise ValueError(f"experiment point {i}: missing required key {v.key!r}")
                    val = v.default
                if isinstance(val, bool) or not isinstance(val, (int, float)):
                    raise ValueError(f"experiment point {i}: {v.key!r} must be a real number, got {val!r}")
                row.append(float(val))
            rows.append(row)
        X = np.array(rows, dtype=np.float64).reshape(len(rows), self.d)
        if self.request_transform is not None and len(rows):
            X = np.asarray(self.request_transform(X), dtype=np.float64)
        return X
