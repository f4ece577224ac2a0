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
from typing import TYPE_CHECKING

from etc_fast.tasks._base import DIFFICULTIES, LAW_VERSIONS, Task, Variable
from etc_fast.tasks._custom import CUSTOM, TaskError, load_custom_task
from etc_fast.tasks._newtonbench import MODULES, build_task

if TYPE_CHECKING:
    from etc_fast.protocol._types import TaskView

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
    "list_tasks",
    "task_view",
]

_CUSTOM_SUFFIXES = (".yaml", ".yml")


def is_custom_task(name: str) -> bool:
    """Whether ``name`` names a custom task file (a path ending in .yaml or .yml)."""
    return isinstance(name, (str, os.PathLike)) and str(name).lower().endswith(_CUSTOM_SUFFIXES)


def list_tasks() -> list[str]:
    """The NewtonBench module names, in order."""
    return list(MODULES)


@functools.cache
def _newtonbench_task(module: str, difficulty: str, law_version: str) -> Task:
    return build_task(module, difficulty, law_version)


@functools.lru_cache(maxsize=64)
def _custom_task(path: str, mtime_ns: int, size: int) -> Task:
    return load_custom_task(path)


def get_task(name: str | os.PathLike, difficulty: str = "easy", law_version: str = "v0") -> Task:
    """A task by module name, or a custom task by YAML path.

    Args:
        name: A NewtonBench module (``"m0_gravity"``) or a path ending in ``.yaml``/``.yml``.
        difficulty: ``easy``/``medium``/``hard`` (ignored for custom tasks, which have one law).
        law_version: ``v0``/``v1``/``v2`` (ignored for custom tasks).

    Returns:
        The task (built once and cached; tasks are immutable). A custom file is re-read when it
        changes on disk.

    Raises:
        TaskError: unknown module, difficulty or law version (the message lists the valid
            choices), or a bad custom task file.
    """
    if is_custom_task(name):
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
    return _newtonbench_task(name, difficulty, law_version)


def task_view(task: Task) -> TaskView:
    """What an agent may know of ``task`` (a :class:`etc_fast.protocol.TaskView`)."""
    from etc_fast.protocol._types import TaskView

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
