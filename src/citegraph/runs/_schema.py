"""The versions of ``run.json``'s layout, and the migration of an older one to the current.

``run.json`` records ``schema_version``, an integer: the layout it was written in. Every reader
of a run directory loads it through :func:`migrate_run_info` (:func:`~citegraph.runs.RunDir`,
``read_run_info``, the viewer), which applies one step per version, in order, up to
:data:`SCHEMA_VERSION`, so the rest of the code reads the current layout only:

====  =========================================================================================
1     the first layout: ``run_id``, ``created``, ``command``, ``config``, ``data``, ``versions``
2     ``runtime``: the settings recorded beside the identity (limit, shard, concurrency...);
      step 1 -> 2 gives a run without it an empty one (nothing was recorded)
3     ``task``: the registered task's name; step 2 -> 3 takes it from the config's
      ``task_name`` / ``task`` (what the task was found by before), when the config names one
4     ``runtime.n_total``: the run's share of items before its limit; step 3 -> 4 sets it to
      ``runtime.n_items`` for a run without a limit (it asked for its whole share)
====  =========================================================================================

Version 4 is the current layout, the first written with ``schema_version``; a file without it
is read as version 1, and each step only adds what is missing, so any of the unversioned layouts
migrates right. ``torn_lines_dropped``, ``started_over``, ``notes`` and ``models`` are present
only when there is something to say (their absence means none), in every version. A migration
never touches ``config`` or ``data``: the ``run_id`` hashes them alone, so a run keeps its id in
every version (``schema_version`` is not part of the identity either). A run written by a newer
citegraph (a version above :data:`SCHEMA_VERSION`) is refused, naming the file and both
versions, rather than read in a layout this one does not know.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from citegraph.errors import DataError

#: The ``run.json`` key of its layout's version.
SCHEMA_KEY = "schema_version"

#: The layout of ``run.json`` this citegraph writes (the table in this module's docstring).
SCHEMA_VERSION = 4

#: The version of a ``run.json`` without ``schema_version``: the oldest.
UNVERSIONED = 1


def config_task(config: object) -> str | None:
    """The task a run's config says it was made by (its ``task_name``, else its ``task``, when
    that is a task name: ``paper.stage``), or ``None``."""
    if not isinstance(config, dict):
        return None
    return next((n for n in (config.get("task_name"), config.get("task")) if is_task_name(n)), None)


def is_task_name(name: object) -> bool:
    """Whether ``name`` has the shape of a registered task's name (``paper.stage``)."""
    return isinstance(name, str) and "." in name


def _add_runtime(info: dict[str, Any]) -> dict[str, Any]:
    """1 -> 2: a run written before ``runtime`` was recorded recorded none of it."""
    return info if "runtime" in info else info | {"runtime": {}}


def _add_task(info: dict[str, Any]) -> dict[str, Any]:
    """2 -> 3: a run written before ``task`` was recorded was found by its config's."""
    if info.get("task") is not None:
        return info
    made_by = config_task(info.get("config"))
    return info if made_by is None else info | {"task": made_by}


def _add_n_total(info: dict[str, Any]) -> dict[str, Any]:
    """3 -> 4: a run written before ``runtime.n_total`` was recorded, without a limit, asked for
    its whole share: ``n_items``."""
    runtime = info.get("runtime")
    if not isinstance(runtime, dict) or "n_total" in runtime or runtime.get("limit") is not None:
        return info
    n_items = runtime.get("n_items")
    if not isinstance(n_items, int) or isinstance(n_items, bool) or n_items < 0:
        return info  # not recorded, or not a count: the total stays unknown
    return info | {"runtime": runtime | {"n_total": n_items}}


#: The step from each version to the next.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {
    1: _add_runtime,
    2: _add_task,
    3: _add_n_total,
}


def schema_version(info: dict[str, Any], run_file: str | Path = "run.json") -> int:
    """The layout version of a ``run.json`` (``info``): its ``schema_version``, or
    :data:`UNVERSIONED` when it has none.

    Raises:
        DataError: the version is not a whole number >= 1 (an edited file), or is above
            :data:`SCHEMA_VERSION` (a run written by a newer citegraph); names ``run_file``.
    """
    if SCHEMA_KEY not in info:
        return UNVERSIONED
    version = info[SCHEMA_KEY]
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise DataError(
            f"is not a layout version (got {str(version)[:40]!r}, an edited file?); restore "
            f"the file, or remove the field to read it as the oldest layout",
            path=run_file,
            field=SCHEMA_KEY,
        )
    if version > SCHEMA_VERSION:
        raise DataError(
            f"was written by a newer citegraph (run.json layout version {version}; this "
            f"citegraph reads versions up to {SCHEMA_VERSION}); upgrade citegraph to read "
            "or resume this run",
            path=run_file,
        )
    return version


def migrate_run_info(info: dict[str, Any], run_file: str | Path = "run.json") -> dict[str, Any]:
    """``info`` (a ``run.json``) in the current layout: each migration step from its version up
    to :data:`SCHEMA_VERSION` applied in order, and ``schema_version`` set. ``info`` itself is
    not changed; one already current is returned as it is.

    Raises:
        DataError: its ``schema_version`` is not one (an edited file) or is newer than this
            citegraph reads (:func:`schema_version`; names ``run_file``).
    """
    version = schema_version(info, run_file)
    if version == SCHEMA_VERSION:
        return info
    for step in range(version, SCHEMA_VERSION):
        info = MIGRATIONS[step](info)
    return {SCHEMA_KEY: SCHEMA_VERSION} | {k: v for k, v in info.items() if k != SCHEMA_KEY}
