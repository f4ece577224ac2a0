"""Hidden-law tasks: the 12 NewtonBench modules (108 laws) and custom tasks from YAML.

>>> task = get_task("m0_gravity", "easy", "v0")
>>> task.signature
'def discovered_law(mass1, mass2, distance):'
>>> float(task.truth([[2.0, 3.0, 4.0]])[0])
5.0055e-05
"""

from __future__ import annotations

import functools
import os
from pathlib import Path
from typing import TYPE_CHECKING, Literal, overload

from etc_fast.tasks._base import DIFFICULTIES, LAW_VERSIONS, Task, Variable
from etc_fast.tasks._custom import CUSTOM, TaskError, load_custom_task
from etc_fast.tasks._newtonbench import MODULES, build_task

if TYPE_CHECKING:
    from etc_fast.core import TaskView
    from etc_fast.systems import SystemTask

__all__ = [
    "CUSTOM",
    "DIFFICULTIES",
    "LAW_VERSIONS",
    "MODULES",
    "Task",
    "TaskError",
    "Variable",
    "get_task",
    "is_custom_task",
    "is_generated_task",
    "list_tasks",
    "task_view",
]

_CUSTOM_SUFFIXES = (".yaml", ".yml")


def is_custom_task(name: str | os.PathLike) -> bool:
    """Whether ``name`` names a custom task: a task file (a path ending in .yaml or .yml) or a
    generated law (``gen-s0-0042``, :mod:`etc_fast.tasks.generate`), which is a custom task whose
    text is generated instead of read."""
    return isinstance(name, (str, os.PathLike)) and (
        str(name).lower().endswith(_CUSTOM_SUFFIXES) or is_generated_task(name)
    )


def is_generated_task(name: object) -> bool:
    """Whether ``name`` names a generated law (``gen-s<seed>-<index>``)."""
    from etc_fast.tasks.generate import is_generated_name

    return is_generated_name(name)


@functools.lru_cache(maxsize=4096)
def _generated_task(name: str) -> Task:
    from etc_fast.tasks._custom import load_custom_text
    from etc_fast.tasks.generate import law_by_name

    return load_custom_text(law_by_name(name).text, name, name)


def list_tasks() -> list[str]:
    """The NewtonBench module names, in order."""
    return list(MODULES)


@functools.cache
def _newtonbench_task(module: str, difficulty: str, law_version: str) -> Task:
    return build_task(module, difficulty, law_version)


@functools.cache
def _system_task(module: str, difficulty: str, law_version: str, system: str) -> SystemTask:
    from etc_fast.systems import build_system_task

    return build_system_task(_newtonbench_task(module, difficulty, law_version), system)


@functools.lru_cache(maxsize=64)
def _custom_task(path: str, mtime_ns: int, size: int) -> Task:
    return load_custom_task(path)


@overload
def get_task(
    name: str | os.PathLike, difficulty: str = ..., law_version: str = ...,
    system: Literal["vanilla_equation"] = ...,
) -> Task: ...
@overload
def get_task(
    name: str | os.PathLike, difficulty: str = ..., law_version: str = ..., *,
    system: Literal["simple_system", "complex_system"],
) -> SystemTask: ...
@overload
def get_task(
    name: str | os.PathLike, difficulty: str = ..., law_version: str = ..., system: str = ...,
) -> Task | SystemTask: ...
def get_task(
    name: str | os.PathLike, difficulty: str = "easy", law_version: str = "v0", system: str = "vanilla_equation"
) -> Task | SystemTask:
    """A task by module name, or a custom task by YAML path.

    Args:
        name: A NewtonBench module (``"m0_gravity"``), a path ending in ``.yaml``/``.yml``, or a
            generated law's name (``"gen-s0-0042"``).
        difficulty: ``easy``/``medium``/``hard`` (ignored for custom tasks, which have one law).
        law_version: ``v0``/``v1``/``v2`` (ignored for custom tasks).
        system: NewtonBench's system: ``vanilla_equation`` (the default: a :class:`Task`, the
            experiment returns the law's value) or ``simple_system``/``complex_system`` (a
            :class:`etc_fast.systems.SystemTask`: the law drives a simulation). Custom tasks
            have only ``vanilla_equation``.

    Returns:
        The task (built once and cached; tasks are immutable). A custom file is re-read when it
        changes on disk.

    Raises:
        TaskError: unknown module, difficulty, law version or system (the message lists the
            valid choices), or a bad custom task file.
    """
    from etc_fast.systems import SYSTEMS

    if system not in SYSTEMS:
        raise TaskError(f"unknown system {system!r} for {name}; valid: {', '.join(SYSTEMS)}")
    if is_generated_task(name):
        if system != "vanilla_equation":
            raise TaskError(f"{name}: custom tasks have only the vanilla_equation system, not {system!r}")
        return _generated_task(str(name))
    if is_custom_task(name):
        if system != "vanilla_equation":
            raise TaskError(f"{Path(name).name}: custom tasks have only the vanilla_equation system, not {system!r}")
        path = Path(name).expanduser().resolve()
        try:
            st = path.stat()
        except OSError:
            raise TaskError(f"{Path(name).name}: custom task file not found ({name})") from None
        return _custom_task(str(path), st.st_mtime_ns, st.st_size)
    if not isinstance(name, str) or name not in MODULES:
        raise TaskError(
            f"unknown task {name!r}; valid modules: {', '.join(MODULES)} "
            "(or the path of a custom task file ending in .yaml/.yml)"
        )
    if difficulty not in DIFFICULTIES:
        raise TaskError(f"unknown difficulty {difficulty!r} for {name}; valid: {', '.join(DIFFICULTIES)}")
    if law_version not in LAW_VERSIONS:
        raise TaskError(f"unknown law version {law_version!r} for {name}; valid: {', '.join(LAW_VERSIONS)}")
    if system != "vanilla_equation":
        return _system_task(name, difficulty, law_version, system)
    return _newtonbench_task(name, difficulty, law_version)


def task_view(task: Task) -> TaskView:
    """What an agent may know of ``task`` (a :class:`etc_fast.protocol.TaskView`)."""
    from etc_fast.core import TaskView

    return TaskView(
        name=task.name,
        title=task.title,
        description=task.description,
        output_name=task.output_name,
        output_description=task.output_description,
        variables=tuple(
            {
                "name": v.name,
                "key": v.key,
                "description": v.description,
                "scale": v.scale,
                "low": v.low,
                "high": v.high,
                "default": v.default,
            }
            for v in task.variables
        ),
        signature=task.signature,
    )
