"""Custom tasks from YAML files.

A custom task file holds one hidden law over named, bounded inputs::

    name: drag_force                 # registry name; letters, digits, "_", "-", "."
    description: A wind tunnel measures the drag force on a sphere ...
    output:
      name: F
      description: the drag force on the sphere
    variables:                       # signature order
      - name: v
        description: air speed
        scale: log                   # log | linear
        low: 0.1
        high: 100
        key: air_speed               # optional: JSON key in experiment requests (default: name)
        default: 1.0                 # optional: value of a missing key (default: the key is required)
      - name: r
        description: sphere radius
        scale: linear
        low: 0.01
        high: 0.5
    law: Cd * r**2 * v**2            # hypothesis language (etc_fast.expr): variables and constants
    constants: {Cd: 0.47}            # optional hidden constants by name (default: none)
    title: drag force                # optional (default: name)
    noise_floor: 1.0e-9              # optional minimum noise sd (default 1e-9)

Truth is the law compiled by :func:`etc_fast.expr.parse` with the constants' values inlined, NaN
where undefined. The structural judge lets each named constant take another value of the same sign
in the same role; every number written in the law is a literal that a submission must match.
Limits: domain bounds within ±1e100 (log-scale lows at least 1e-100); the law must be finite on at
least 10% of the evaluation grid; the file must be UTF-8, at most 1 MiB and nested at most 32
levels. Every problem in a file is reported as one :class:`TaskError` naming the file and the field.
"""

from __future__ import annotations

import keyword
import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np

from etc_fast.tasks._base import Task, Variable

__all__ = ["TaskError", "load_custom_task", "load_custom_text", "CUSTOM"]

#: Difficulty and law version of every custom task.
CUSTOM = "custom"
DEFAULT_NOISE_FLOOR = 1e-9
#: Largest magnitude of a domain bound, and smallest lower bound of a log-scale domain: any
#: product or difference of two inputs then stays finite in float64 (squares of 1e100 are 1e200).
MAX_BOUND = 1e100
MIN_LOG_LOW = 1e-100
#: The law must be finite on at least this share of the evaluation grid.
MIN_FINITE_SHARE = 0.10
#: Largest task file read.
MAX_FILE_BYTES = 1 * 2**20

_TOP_REQUIRED = ("name", "description", "output", "variables", "law")
_TOP_OPTIONAL = ("title", "noise_floor", "constants")
_OUTPUT_FIELDS = ("name", "description")
_VAR_REQUIRED = ("name", "description", "scale", "low", "high")
_VAR_OPTIONAL = ("key", "default")
_NAME_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]*$")


def _reserved() -> frozenset[str]:
    """Names the hypothesis language gives a meaning of its own, which a variable or a constant may
    not take: its constants and modules, and every function it calls without a module prefix (from
    :mod:`etc_fast.expr._functions`, the one table of the law language's functions; imported on use,
    as the parser is)."""
    from etc_fast.expr import BARE_NAMES

    return frozenset({"pi", "e", "inf", "nan", "np", "numpy", "math"}) | BARE_NAMES


class TaskError(ValueError):
    """An unknown task name, difficulty or law version, or a bad custom task file."""


class _Checker:
    """Collects the file label so every error reads ``<file>: <field>: <problem>``."""

    def __init__(self, label: str):
        self.label = label

    def fail(self, field: str | None, problem: str) -> TaskError:
        where = f"{self.label}: {field}: " if field else f"{self.label}: "
        return TaskError(where + problem)

    def mapping(self, value: Any, field: str | None, required: tuple[str, ...], optional: tuple[str, ...]) -> Mapping:
        if not isinstance(value, Mapping):
            raise self.fail(field, f"must be a mapping, got {_describe(value)}")
        prefix = f"{field}." if field else ""
        allowed = required + optional
        for k in value:
            if k not in allowed:
                raise self.fail(f"{prefix}{k}", f"unknown field (allowed: {', '.join(allowed)})")
        for k in required:
            if k not in value:
                raise self.fail(f"{prefix}{k}", "missing")
        return value

    def text(self, value: Any, field: str) -> str:
        if not isinstance(value, str):
            raise self.fail(field, f"must be a string, got {_describe(value)}")
        if not value.strip():
            raise self.fail(field, "must not be empty")
        return value.strip()

    def identifier(self, value: Any, field: str) -> str:
        name = self.text(value, field)
        if not name.isidentifier() or keyword.iskeyword(name):
            raise self.fail(field, f"must be a Python identifier, got {name!r}")
        return name

    def bound(self, value: Any, field: str) -> float:
        """A domain bound: finite, and at most :data:`MAX_BOUND` in magnitude."""
        x = self.number(value, field)
        if abs(x) > MAX_BOUND:
            raise self.fail(field, f"must be between -{MAX_BOUND:g} and {MAX_BOUND:g}, got {value!r}")
        return x

    def number(self, value: Any, field: str) -> float:
        if isinstance(value, str) and _looks_numeric(value):
            raise self.fail(field, f"must be a number, got the text {value!r}: YAML reads a number with an exponent "
                                   f"as text unless it has a decimal point and a signed exponent; write it as "
                                   f"{yaml_float_text(value)}")
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.fail(field, f"must be a number, got {_describe(value)}")
        x = float(value)
        if not math.isfinite(x):
            raise self.fail(field, f"must be finite, got {value!r}")
        return x


_EXPONENT_RE = re.compile(r"^\s*([-+]?)([0-9_]*)(?:\.([0-9_]*))?([eE])([-+]?)([0-9]+)\s*$")


def yaml_float_text(text: str) -> str:
    """How to write the number ``text`` so that PyYAML reads it as that same float.

    PyYAML (YAML 1.1) reads ``1e-3`` or ``5E+7`` as text: a float needs a decimal point and, with
    an exponent, a signed one. The answer keeps the writer's digits and adds what is missing
    (``1e-3`` -> ``1.0e-3``, ``-2e10`` -> ``-2.0e+10``); text of another shape is written as Python
    writes the float. Either way the answer reads back as ``float(text)``.
    """
    import yaml

    target = float(text)
    m = _EXPONENT_RE.match(text)
    candidates = []
    if m:
        sign, whole, frac, e, esign, digits = m.groups()
        candidates.append(f"{sign}{whole or '0'}.{frac or '0'}{e}{esign or '+'}{digits}")
    r = repr(target)
    if "e" in r:
        mant, exp = r.split("e")
        candidates.append(f"{mant if '.' in mant else mant + '.0'}e{exp if exp[0] in '+-' else '+' + exp}")
    candidates.append(r)
    for c in candidates:
        back = yaml.safe_load(c)
        if isinstance(back, float) and back == target:
            return c
    return r


def _looks_numeric(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return text.strip().lower() not in ("nan", "inf", "+inf", "-inf", "infinity", "+infinity", "-infinity")


def _describe(value: Any) -> str:
    if value is None:
        return "nothing (null)"
    text = repr(value)
    if len(text) > 40:
        text = text[:37] + "..."
    return f"{type(value).__name__} {text}"


def _variables(check: _Checker, raw: Any) -> tuple[Variable, ...]:
    if not isinstance(raw, list):
        raise check.fail("variables", f"must be a list of variables, got {_describe(raw)}")
    if not raw:
        raise check.fail("variables", "must list at least one variable")
    out: list[Variable] = []
    seen_names: dict[str, int] = {}
    seen_keys: dict[str, int] = {}
    for i, item in enumerate(raw):
        f = f"variables[{i}]"
        check.mapping(item, f, _VAR_REQUIRED, _VAR_OPTIONAL)
        name = check.identifier(item["name"], f"{f}.name")
        if name in _reserved():
            raise check.fail(f"{f}.name", f"{name!r} is reserved in the hypothesis language; choose another name")
        if name in seen_names:
            raise check.fail(f"{f}.name", f"duplicate variable name {name!r} (also variables[{seen_names[name]}])")
        seen_names[name] = i
        description = check.text(item["description"], f"{f}.description")
        scale = item["scale"]
        if scale not in ("log", "linear"):
            raise check.fail(f"{f}.scale", f"must be 'log' or 'linear', got {scale!r}")
        low = check.bound(item["low"], f"{f}.low")
        high = check.bound(item["high"], f"{f}.high")
        if not low < high:
            raise check.fail(f"{f}.low", f"must be < high (got {item['low']!r} >= {item['high']!r})")
        if scale == "log" and low <= 0:
            raise check.fail(f"{f}.low", f"a log-scale domain needs low > 0 (got {item['low']!r})")
        if scale == "log" and low < MIN_LOG_LOW:
            raise check.fail(f"{f}.low", f"must be at least {MIN_LOG_LOW:g} on a log scale (got {item['low']!r})")
        key = check.text(item["key"], f"{f}.key") if "key" in item else name
        if key in seen_keys:
            raise check.fail(f"{f}.key", f"duplicate request key {key!r} (also variables[{seen_keys[key]}])")
        seen_keys[key] = i
        default = None
        if "default" in item and item["default"] is not None:
            default = check.number(item["default"], f"{f}.default")
        out.append(Variable(name=name, key=key, default=default, description=description, scale=scale, low=low, high=high))
    return tuple(out)


def _constants(check: _Checker, raw: Any, names: tuple[str, ...]) -> dict[str, float]:
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise check.fail("constants", f"must be a mapping of name: value, got {_describe(raw)}")
    out: dict[str, float] = {}
    for k, v in raw.items():
        name = check.identifier(k, "constants")
        if name in _reserved() or name in names:
            raise check.fail(f"constants.{name}", "clashes with a variable or a reserved name")
        x = check.number(v, f"constants.{name}")
        if x == 0:
            raise check.fail(f"constants.{name}", "must be non-zero (its sign is part of the law)")
        out[name] = x
    return out


def _inline(check: _Checker, text: str, constants: dict[str, float]) -> str:
    """The law text with each constant's name replaced by its value."""
    import ast

    if not constants:
        return text
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise check.fail("law", f"not a Python expression: {exc.msg}") from None

    class _Sub(ast.NodeTransformer):
        def visit_Name(self, node):
            if node.id in constants:
                return ast.copy_location(ast.Constant(constants[node.id]), node)
            return node

    used = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    unused = sorted(set(constants) - used)
    if unused:
        raise check.fail("constants", f"not used in the law: {', '.join(unused)}")
    return ast.unparse(ast.fix_missing_locations(_Sub().visit(tree)))


def _compile_law(check: _Checker, raw: Any, names: tuple[str, ...], constants: dict[str, float] | None = None):
    if isinstance(raw, (int, float)) and not isinstance(raw, bool):
        raw = str(raw)  # a constant law, written without quotes
    text = _inline(check, check.text(raw, "law"), constants or {})
    from etc_fast.expr import ExprError, parse  # the hypothesis language (imported on use)

    try:
        program = parse(text, names)
    except ExprError as exc:
        where = f" at {exc.position}" if exc.position else ""
        raise check.fail("law", f"{exc.message}{where}") from None
    if program.nuisance:
        unknown = ", ".join(repr(n) for n in program.nuisance)
        raise check.fail("law", f"unknown name(s) {unknown}; a law may use only its variables ({', '.join(names)})")
    return program


def _param_description(variables: tuple[Variable, ...]) -> str:
    return "\n".join(f"- {v.name}: {v.description}. A real number in [{v.low:g}, {v.high:g}]." for v in variables)


def load_custom_task(path: str | Path) -> Task:
    """Load and validate a custom task file.

    Raises:
        TaskError: the file cannot be read or parsed, or a field is missing, unknown or invalid;
            the message names the file and the field.
    """
    from etc_fast._yaml import decode_text

    path = Path(path)
    check = _Checker(path.name)
    try:
        with open(path, "rb") as fh:
            data = fh.read(MAX_FILE_BYTES + 1)
    except OSError as exc:
        raise check.fail(None, f"cannot read the task file ({exc.strerror or exc})") from None
    if len(data) > MAX_FILE_BYTES:
        raise check.fail(None, f"the file is larger than {MAX_FILE_BYTES // 2**20} MiB; a task file is a few kilobytes")
    try:
        text = decode_text(data)
    except ValueError as exc:
        raise check.fail(None, str(exc)) from None
    return load_custom_text(text, path.name, str(path))


def load_custom_text(text: str, label: str, source: str) -> Task:
    """Load and validate the text of a custom task file (what :func:`load_custom_task` does after
    reading the file; the generated laws of :mod:`etc_fast.tasks.generate` come this way).

    Args:
        text: The YAML text.
        label: What error messages name (a file name).
        source: The task's ``source``.

    Raises:
        TaskError: as :func:`load_custom_task`.
    """
    import yaml

    from etc_fast._yaml import nesting_problem

    check = _Checker(label)
    problem = nesting_problem(text)
    if problem is not None:
        raise check.fail(None, problem)
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc)
        raise check.fail(None, f"not valid YAML{where}: {problem}") from None
    except RecursionError:  # a second guard; the nesting check refuses such files first
        raise check.fail(None, "nested too deeply to load") from None
    if doc is None:
        raise check.fail(None, "the file is empty")
    check.mapping(doc, None, _TOP_REQUIRED, _TOP_OPTIONAL)

    name = check.text(doc["name"], "name")
    if not _NAME_RE.match(name):
        raise check.fail("name", f"use letters, digits, '_', '-' or '.', starting with a letter or digit (got {name!r})")
    description = check.text(doc["description"], "description")
    output = check.mapping(doc["output"], "output", _OUTPUT_FIELDS, ())
    output_name = check.identifier(output["name"], "output.name")
    output_description = check.text(output["description"], "output.description")
    title = check.text(doc["title"], "title") if "title" in doc else name
    noise_floor = DEFAULT_NOISE_FLOOR
    if "noise_floor" in doc:
        noise_floor = check.number(doc["noise_floor"], "noise_floor")
        if noise_floor < 0:
            raise check.fail("noise_floor", f"must be >= 0 (got {doc['noise_floor']!r})")
    variables = _variables(check, doc["variables"])
    names = tuple(v.name for v in variables)
    constants = _constants(check, doc.get("constants"), names)
    program = _compile_law(check, doc["law"], names, constants)
    judge_text = program.text
    if constants:
        import ast

        judge_text = ast.unparse(ast.parse(check.text(doc["law"], "law"), mode="eval"))

    def truth(X: np.ndarray) -> np.ndarray:
        return program.evaluate(np.asarray(X, dtype=np.float64))

    task = Task(
        name=name,
        module=name,
        difficulty=CUSTOM,
        law_version=CUSTOM,
        title=title,
        description=description,
        output_name=output_name,
        output_description=output_description,
        variables=variables,
        noise_floor=noise_floor,
        ground_truth_text=judge_text,
        param_description=_param_description(variables),
        truth_fn=truth,
        law_expression=program.text,
        source=source,
        constants=constants,
    )
    _check_finite_share(check, task)
    return task


def _check_finite_share(check: _Checker, task: Task) -> None:
    """Refuse a law that is finite on under :data:`MIN_FINITE_SHARE` of the evaluation grid: such a
    task cannot be scored (and a trial on it would spend its whole budget on undefined outputs)."""
    from etc_fast.sampling import evaluation_grid  # imported on use: sampling imports the task types

    X = evaluation_grid(task)
    with np.errstate(all="ignore"):
        y = np.asarray(task.truth(X), dtype=np.float64)
    share = float(np.isfinite(y).mean()) if y.size else 0.0
    if share < MIN_FINITE_SHARE:
        raise check.fail(
            "law",
            f"finite at only {share:.1%} of the {y.size} evaluation points (at least {MIN_FINITE_SHARE:.0%} needed); "
            "check the law and the variables' domains",
        )
