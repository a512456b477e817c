"""Whether a run's records are those of the task its ``run.json`` names: one check behind
``runs report``, a resume, ``runs merge`` and ``runs export``.

A task's records are what its :meth:`~citegraph.runs.Task.summarize` reads, so that is the
check: the records are summarized, and a summary that fails for want of a field or a type
(``KeyError``, ``TypeError``...: a line of another task's shape, such as ``{"id": ...,
"label": ...}`` in a KaLMA run) is a :class:`~citegraph.errors.DataError`. It names the first
record the task cannot read on its own, by its line of ``samples.jsonl`` (and the field a
``KeyError`` names); summarizing one record at a time happens only then, so a run that fits
costs one summary.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, TypeVar

from citegraph.errors import CitegraphError, DataError
from citegraph.io import json_text
from citegraph.runs._stored import Record, StoredRecords
from citegraph.runs._task import Task

T = TypeVar("T")

#: What a task's summary raises on records it cannot read (a field missing, a wrong type).
MISFIT_ERRORS = (KeyError, TypeError, AttributeError, IndexError, ValueError)


def check_records(
    task_type: type[Task[Any, Any]], records: Sequence[Record], info: dict[str, Any], samples: Path
) -> dict[str, Any]:
    """The task's summary of ``records`` (in its :meth:`~citegraph.runs.Task.order`), checked.

    Args:
        task_type: The task ``run.json`` names.
        records: The run's records (read from ``samples``: their lines are named).
        info: The run's ``run.json``.
        samples: The run's ``samples.jsonl``, for the error.

    Returns:
        What :meth:`~citegraph.runs.Task.summarize` gave (without bootstrap resamples:
        :func:`without_resampling`).

    Raises:
        DataError: a record is not one the task can read (names the file, the line of the first
            such record and the field it lacks, and what to do).
    """

    light = without_resampling(info)

    def summary() -> dict[str, Any]:
        return task_type.summarize(task_type.order(records), light)

    return checked(task_type, records, info, samples, summary)


def without_resampling(info: dict[str, Any]) -> dict[str, Any]:
    """``info`` with its config's ``bootstrap`` resamples set to 0: what reads every record
    without the cost of resampling them (confidence intervals read no field the point figures
    do not)."""
    config = info.get("config")
    if not isinstance(config, dict) or not config.get("bootstrap"):
        return info
    return info | {"config": config | {"bootstrap": 0}}


def checked(
    task_type: type[Task[Any, Any]],
    records: Sequence[Record],
    info: dict[str, Any],
    samples: Path,
    compute: Callable[[], T],
) -> T:
    """``compute()`` (a summary of ``records``), its misfit errors named as
    :func:`check_records` names them.

    Raises:
        DataError: ``compute`` raised one of :data:`MISFIT_ERRORS` (not a citegraph error).
    """
    try:
        return compute()
    except MISFIT_ERRORS as exc:
        if isinstance(exc, CitegraphError):
            raise
        raise misfit(task_type, records, info, samples, exc) from exc


def misfit(
    task_type: type[Task[Any, Any]],
    records: Sequence[Record],
    info: dict[str, Any],
    samples: Path,
    exc: BaseException,
) -> DataError:
    """The error for records ``task_type`` could not summarize (``exc``): the first record it
    cannot summarize alone, by its line; else the whole run's failure, as ``runs report`` says
    it."""
    name, light = task_type.name, without_resampling(info)
    for line, record in _numbered(records, samples):
        try:
            task_type.summarize([record], light)
        except MISFIT_ERRORS as own:
            if isinstance(own, CitegraphError):
                continue
            key = own.args[0] if isinstance(own, KeyError) and own.args else None
            return DataError(
                f"record {json_text(record.get('id'))[:80]} is not a record of task {name!r}, "
                f"which run.json names ({_why(own)}); a line from another run? remove the line "
                "(a resume then does its item again) or restore the file",
                path=samples,
                line=line,
                field=key if isinstance(key, str) else None,
            )
        except Exception:  # one record alone may not make a summary: not judged
            continue
    return DataError(
        f"its records are not those of task {name!r}, which run.json names ({_why(exc)}); "
        "restore run.json or samples.jsonl",
        path=samples,
    )


def _why(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {str(exc)[:200]}"


def _numbered(records: Sequence[Record], samples: Path) -> Iterator[tuple[int | None, Record]]:
    """Each record with its line in ``samples`` (``None`` for records held in memory)."""
    if not isinstance(records, StoredRecords):
        for record in records:
            yield None, record
        return
    offsets = sorted({line.offset for line in records.lines})
    numbers = _line_numbers(records.path, offsets)
    for line, record in zip(records.lines, records, strict=True):
        yield numbers.get(line.offset), record


def _line_numbers(path: Path, offsets: Sequence[int]) -> dict[int, int]:
    """The 1-based line of ``path`` that holds each of ``offsets`` (sorted)."""
    numbers: dict[int, int] = {}
    wanted = iter(offsets)
    target = next(wanted, None)
    position = 0
    with path.open("rb") as handle:
        for number, raw in enumerate(handle, start=1):
            end = position + len(raw)
            while target is not None and target < end:
                numbers[target] = number
                target = next(wanted, None)
            if target is None:
                break
            position = end
    return numbers
