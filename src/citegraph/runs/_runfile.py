"""The files of a run directory, checked and written: ``run.json`` read back, re-hashed
against its ``run_id`` (an edited one is refused) and migrated to the current layout
(:mod:`citegraph.runs._schema`), a record's id checked, JSON written atomically with any text,
and a failed write (a full disk) named in one line."""

from __future__ import annotations

import errno
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any, TypeGuard

from citegraph.errors import DataError
from citegraph.io import JsonlLine, atomic_write, json_text, load_json
from citegraph.runs._provenance import sha256_json
from citegraph.runs._schema import migrate_run_info


class RunFileWarning(UserWarning):
    """A part of ``run.json`` outside the run's identity is damaged (a hand edit: a negative
    count, say): the value is left out, and this warning names the file and field."""


#: ``run.json`` ``runtime`` counts (how many items a run asked for, of how many, its limit) and
#: what is done when one is not a count.
RUNTIME_COUNTS = {
    "n_items": "the items it asked for are taken as unknown",
    "n_total": "its total is taken as unknown",
    "n_total_unsharded": "the whole run's total is taken as unknown",
    "limit": "it is read as having no limit",
}


def damaged_counts(info: Mapping[str, Any], run_file: Path) -> list[str]:
    """What is wrong with the counts of a ``run.json`` (``info``): each ``runtime`` count
    (:data:`RUNTIME_COUNTS`) and ``torn_lines_dropped`` that is present but not a whole number
    >= 0, as one line naming ``run_file``, the field and what is done instead. Those fields are
    not part of the run's identity, so an edit of them is not refused but worked around."""
    runtime = info.get("runtime")
    runtime = runtime if isinstance(runtime, Mapping) else {}
    found = [
        (f"runtime.{key}", runtime[key], why)
        for key, why in RUNTIME_COUNTS.items()
        if runtime.get(key) is not None
    ]
    if "torn_lines_dropped" in info:
        found.append(("torn_lines_dropped", info["torn_lines_dropped"], "it is read as 0"))
    return [
        f"{run_file}, field {field!r}: {json_text(value)[:40]} is not a count (an edited "
        f"file?); {why}"
        for field, value, why in found
        if not is_count(value)
    ]


def warn_damaged_counts(info: Mapping[str, Any], run_file: Path) -> None:
    """A :class:`RunFileWarning` for each of :func:`damaged_counts`."""
    for line in damaged_counts(info, run_file):
        warnings.warn(line, RunFileWarning, stacklevel=3)


def is_count(value: object) -> TypeGuard[int]:
    """Whether ``value`` is a whole number >= 0 (not a bool)."""
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


def write_json(target: Path, value: Any) -> None:
    """``value`` as indented JSON, written atomically (any text kept, lone surrogates too).

    Raises:
        DataError: the file cannot be written (names it; the old one is kept).
    """
    try:
        atomic_write(target, json_text(value, indent=2) + "\n")
    except OSError as exc:
        target.with_name(target.name + ".tmp").unlink(missing_ok=True)
        raise write_error(target, exc) from None


def write_error(target: Path, exc: OSError) -> DataError:
    """The one line a failed write of the run directory gives: the file, why, what to do."""
    why = exc.strerror or str(exc)
    hint = "free some space" if exc.errno == errno.ENOSPC else "fix that"
    return DataError(
        f"cannot write ({why}); {hint} and run the same command again: the records already "
        "written are kept and the run resumes from them",
        path=target,
    )


def record_id(line: JsonlLine, samples: Path) -> str:
    """The id of a record read from ``samples.jsonl``.

    Raises:
        DataError: the id is missing or not a non-empty string (names the file and line).
    """
    key = line.record.get("id")
    if isinstance(key, str) and key:
        return key
    got = "none" if "id" not in line.record else json_text(key)[:40]
    raise DataError(
        f"a record without a string id (got {got}); citegraph writes every record with its "
        "item's id: remove the line or restore the file",
        path=samples,
        line=line.line or None,
        field="id",
    )


def load_run_file(run_file: Path, *, check: bool = False) -> dict[str, Any]:
    """A ``run.json``, read as a JSON object in the current layout (an older one migrated:
    :func:`~citegraph.runs._schema.migrate_run_info`; the file is not changed).

    Args:
        run_file: The file.
        check: Also re-hash its ``config`` and ``data`` against its ``run_id``
            (:func:`check_run_identity`): what every writer and ``runs report`` do.

    Raises:
        DataError: the file is not UTF-8, not JSON, or not a JSON object (names file and line),
            was written by a newer citegraph (a layout version this one does not read), or
            (with ``check``) it was edited.
    """
    info = load_json(run_file)
    if not isinstance(info, dict):
        raise DataError(
            f"expected a JSON object (a run's config and provenance), got {type(info).__name__}",
            path=run_file,
        )
    if check:
        check_run_identity(info, run_file)
    return migrate_run_info(info, run_file)


def check_run_identity(info: dict[str, Any], run_file: Path) -> None:
    """Refuse a ``run.json`` whose ``config`` and ``data`` no longer hash to its ``run_id``:
    it was edited, so it would report settings the records were not made with.

    Raises:
        DataError: the hash does not match (names the file and what to do).
    """
    config, data = info.get("config"), info.get("data") or {}
    if info.get("run_id") == sha256_json({"config": config, "data": data}):
        return
    raise DataError(
        "was edited: its config and data no longer match its run_id, so they are not the "
        "settings its records were made with; restore the file (from a copy or version "
        "control), or rerun with --overwrite to start the run afresh",
        path=run_file,
    )
