"""What the runs of one command came to, for the command line's exit status.

:func:`~citegraph.runs.run_task_async` notes every run it starts and every run it finishes
(:func:`note_started`, :func:`note_finished`) when a caller collects them
(:func:`collecting_runs`: the command line does, around each command); otherwise noting does
nothing. A finished run says how many of its items failed and why the first one did
(:class:`Failure`), sorted into input errors and model or endpoint failures (the exit statuses 2
and 3) by the type of the error: a failed record stores it as ``error_type`` beside its
``error`` text (:func:`error_fields`), and the type's exit status is
:func:`citegraph.errors.exit_status_of` (any other type: a model failure). Records written
before the type was stored are sorted by their text (:func:`failure_kind`), as they always were.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, TypedDict

from citegraph import errors
from citegraph.runs._stored import StoredRecords

FailureKind = Literal["input", "model"]

#: The ``error_type`` key of a failed record (:func:`error_fields`).
ERROR_TYPE_KEY = "error_type"


class ErrorFields(TypedDict):
    """The fields a failed record or result gets from its error (:func:`error_fields`)."""

    error: str
    error_type: str


def error_fields(error: BaseException, *, prefix: str = "") -> ErrorFields:
    """What a record that failed with ``error`` says about it: ``error``, the text
    ``"Type: message"`` (after ``prefix``, such as ``"answer model: "``), and ``error_type``,
    the error's module-qualified class name (:func:`citegraph.errors.error_type_name`), from
    which the exit status is read."""
    return {
        "error": f"{prefix}{type(error).__name__}: {error}",
        "error_type": errors.error_type_name(error),
    }


def typed_failure_kind(error_type: str) -> FailureKind:
    """Whether a failed record whose ``error_type`` is ``error_type`` failed on its input (the
    citegraph error class it names has exit status 2) or on a model or endpoint (status 3, or a
    type that is not citegraph's: items fail on purpose only when a model call failed)."""
    found = errors.error_class(error_type)
    status = errors.exit_status_of(found) if found is not None else None
    return "input" if status == errors.USAGE_STATUS else "model"


#: For records without ``error_type`` (:func:`failure_kind`, the text rule): the error types
#: whose failed items are the input's fault (exit status 2); any other is a model or endpoint
#: failure (exit status 3).
INPUT_ERRORS = frozenset({"ConfigError", "DataError", "DataNotFoundError"})

#: The citegraph error types the text rule knows: those of ``citegraph.errors`` when records
#: began to store their type (frozen: the rule is for the records written before that).
_ERROR_NAMES = sorted(
    (
        "CitegraphError", "ConfigError", "DataError", "DataNotFoundError", "KGError",
        "KGQueryError", "EndpointError", "RateLimited", "ServerError", "ClientError",
        "EndpointUnavailable", "ResponseFormatError", "ModelError", "PromptTooLong",
        "MissingDependency",
    ),
    key=len,
    reverse=True,
)  # fmt: skip
_ERROR_NAME = re.compile(r"\b(" + "|".join(_ERROR_NAMES) + r")\b")


def failure_kind(error: object) -> FailureKind:
    """Whether a failed record's ``error`` text is an input error or a model / endpoint failure,
    for records that store no ``error_type`` (written before it was stored, or by a task that
    keeps only the text; :func:`typed_failure_kind` sorts the others): the first citegraph
    error type named in it decides (records write ``"Type: message"``, sometimes after a prefix
    such as ``"answer model: "``); a text naming none is a model failure (items fail on purpose
    only when a model or endpoint call failed)."""
    found = _ERROR_NAME.search(str(error or ""))
    return "input" if found is not None and found.group(1) in INPUT_ERRORS else "model"


#: Where a failed record says why, by task: ``error`` (most), ``empty_reason`` (kalma run).
_REASON_KEYS = ("error", "empty_reason", "reason")


@dataclass(frozen=True)
class Failure:
    """The first failed item of a run: its id, its record's ``error``, whether it failed on its
    input or on a model (from its ``error_type`` when the record stores one, else from its
    text) and its ``error_type`` (``None``: not stored)."""

    id: str
    error: str
    kind: FailureKind
    error_type: str | None = None


def first_failure(records: StoredRecords) -> Failure | None:
    """The first record of ``records`` whose status is failed (found from the index; only that
    record is read), or ``None``."""
    for i, line in enumerate(records.lines):
        if line.failed:
            record = records[i]
            why = (record.get(key) for key in _REASON_KEYS)
            error = str(next((w for w in why if w), "no reason recorded"))
            typed = record.get(ERROR_TYPE_KEY)
            if isinstance(typed, str) and typed:
                return Failure(line.id, error, typed_failure_kind(typed), typed)
            return Failure(id=line.id, error=error, kind=failure_kind(error))
    return None


@dataclass(frozen=True)
class FinishedRun:
    """One run a command finished: its directory, ``metrics.json`` as written, how many items
    were selected, how many of them failed and the first of them."""

    out: Path
    metrics: Mapping[str, Any]
    n_items: int = 0
    n_failed: int = 0
    failure: Failure | None = None


@dataclass
class CommandRuns:
    """The runs one command started and finished, in order."""

    started: list[Path] = field(default_factory=list)
    finished: list[FinishedRun] = field(default_factory=list)


_RUNS: ContextVar[CommandRuns | None] = ContextVar("citegraph_command_runs", default=None)


@contextmanager
def collecting_runs() -> Iterator[CommandRuns]:
    """Collect the runs started and finished while the block runs (nested blocks share the
    outer one's collection)."""
    current = _RUNS.get()
    if current is not None:
        yield current
        return
    runs = CommandRuns()
    token = _RUNS.set(runs)
    try:
        yield runs
    finally:
        _RUNS.reset(token)


def note_started(out: str | Path) -> None:
    """Note that a run started in ``out`` (nothing when no one collects)."""
    runs = _RUNS.get()
    if runs is not None:
        runs.started.append(Path(out))


def note_finished(run: FinishedRun) -> None:
    """Note a finished run (nothing when no one collects)."""
    runs = _RUNS.get()
    if runs is not None:
        runs.finished.append(run)
