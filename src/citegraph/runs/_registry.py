"""The registry: the ``task`` name in ``run.json`` -> the :class:`~citegraph.runs.Task` class.

Tasks register themselves with :func:`register_task` when their paper package is imported. A
name is ``<package>.<stage>`` (``kalma.run``, ``caqa.judge``, ``conner.score``), so looking one up
imports ``citegraph.<package>`` first: ``runs report`` and ``runs merge`` work for a fourth paper's
tasks without the engine knowing that paper.
"""

from __future__ import annotations

import importlib
import importlib.util
from typing import Any, TypeVar

from citegraph.errors import ConfigError
from citegraph.runs._task import Task

TaskType = TypeVar("TaskType", bound=type[Task[Any, Any]])

_TASKS: dict[str, type[Task[Any, Any]]] = {}


def register_task(task_type: TaskType) -> TaskType:
    """Class decorator: make ``task_type`` findable by its :attr:`~Task.name`.

    Raises:
        ConfigError: another class already registered that name.
    """
    name = task_type.name
    known = _TASKS.get(name)
    if known is not None and known is not task_type:
        raise ConfigError(f"task {name!r} is registered twice ({known.__qualname__})")
    _TASKS[name] = task_type
    return task_type


def task_type(name: str) -> type[Task[Any, Any]]:
    """The task registered as ``name``, importing its package when needed.

    Raises:
        ConfigError: no such task.
    """
    if name not in _TASKS and "." in name:
        module = f"citegraph.{name.split('.', 1)[0]}"
        if importlib.util.find_spec(module) is not None:
            importlib.import_module(module)
    try:
        return _TASKS[name]
    except KeyError:
        raise ConfigError(
            f"no task named {name!r}; known: {', '.join(sorted(registered_tasks()))}"
        ) from None


def registered_tasks() -> list[str]:
    """The names of the tasks of every paper package citegraph ships."""
    for package in ("kalma", "caqa", "conner"):
        importlib.import_module(f"citegraph.{package}")
    return sorted(_TASKS)


def task_of_run(info: dict[str, Any], where: object = "this run") -> type[Task[Any, Any]]:
    """The task of a run from its ``run.json``: the recorded ``task`` name, or for runs written
    before it was recorded, the ``task`` / ``task_name`` of the config.

    Raises:
        ConfigError: the run names no registered task.
    """
    config = info.get("config") or {}
    for name in (info.get("task"), config.get("task_name"), config.get("task")):
        if isinstance(name, str) and "." in name:
            return task_type(name)
    raise ConfigError(f"{where}: run.json names no task (a run written by another tool?)")
