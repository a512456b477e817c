"""The registry: the ``task`` name in ``run.json`` -> the :class:`~citegraph.runs.Task` class.

Tasks register themselves with :func:`register_task` when their paper package is imported. A
name is ``<package>.<stage>`` (``kalma.run``, ``caqa.judge``, ``conner.score``), so looking one up
imports ``citegraph.<package>`` first: ``runs report`` and ``runs merge`` work for a fourth paper's
tasks without the engine knowing that paper.
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path
from typing import Any, TypeVar

from citegraph.errors import ConfigError, DataError
from citegraph.io import json_text
from citegraph.runs._schema import config_task, is_task_name, migrate_run_info
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
    """The task of a run from its ``run.json`` (``info``, migrated to the current layout first:
    :func:`~citegraph.runs._schema.migrate_run_info`): its recorded ``task`` name.

    The config is part of the run's identity (its hash is the ``run_id``); the recorded
    ``task`` is not. When the config names a task too (its ``task_name`` / ``task``) they must
    agree, so an edited ``task`` is refused rather than read with another task's metrics and
    exports.

    Raises:
        ConfigError: the run names no task, or its config's own task is not registered here (a
            run of a removed task, or of another tool's).
        DataError: the recorded ``task`` is not a registered task, or not the task its config
            was made by (names ``run.json`` and what to do); or ``run.json``'s layout is newer
            than this citegraph reads.
    """
    run_file = where / "run.json" if isinstance(where, Path) else "run.json"
    info = migrate_run_info(info, run_file)
    made_by = config_task(info.get("config"))
    recorded = info.get("task")
    if recorded is None:
        raise ConfigError(f"{where}: run.json names no task (a run written by another tool?)")
    if not is_task_name(recorded) or (made_by is not None and recorded != made_by):
        raise edited_task(recorded, made_by, where)
    try:
        return task_type(recorded)
    except ConfigError as exc:
        if recorded == made_by:  # the config's own task: not registered here, not edited
            raise
        raise edited_task(recorded, made_by, where, known=str(exc)) from None


def edited_task(recorded: object, made_by: str | None, where: object, known: str = "") -> DataError:
    """The error for a ``run.json`` whose ``task`` cannot be the run's: it names ``recorded``
    while its config was made by ``made_by`` (``where``: the run directory)."""
    path = where / "run.json" if isinstance(where, Path) else None
    why = f"its config was made by {made_by!r}" if made_by else known or "no such task"
    return DataError(
        f"names task {json_text(recorded)[:80]}, but {why}; restore the file's task "
        "(or rerun with --overwrite to start the run afresh)",
        path=path if path is not None else "run.json",
    )
