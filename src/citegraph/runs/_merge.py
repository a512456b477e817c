"""Merge the shards of one run (``--shard i/N`` on several machines) into one run directory.

Shards of one run share a ``run_id`` (the shard is a runtime setting, not part of the identity),
so merging checks that every input has the same ``run_id`` and unions their records. A sample
present in several inputs keeps a finished record over a failed one, then the first given; it
keeps its line as its shard wrote it. Metrics are recomputed afterwards by the task that owns
the run (the CLI dispatches on ``config.task``), from the merged records alone. The merged
``run.json`` records the whole run's item count (``runtime.n_total``, from the shards'
``n_total_unsharded``) and, for the shards of a limited run, their ``limit`` and the items it
asked for (``n_items``), so merging only some of the shards gives metrics marked partial, and
merging them all a run finished within its limit; and the torn last lines the inputs dropped.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import groupby
from operator import itemgetter
from pathlib import Path
from typing import Any

from citegraph.errors import ConfigError, DataError, DataNotFoundError
from citegraph.io import TolerantScan, atomic_write, atomic_write_lines, json_text
from citegraph.runs._fit import check_records
from citegraph.runs._lock import lock_run_dir, unlock_run_dir
from citegraph.runs._registry import task_of_run
from citegraph.runs._rundir import (
    FAILED,
    RUN_FILE,
    SAMPLES_FILE,
    TORN_KEY,
    RunDir,
    load_run_file,
    record_id,
    torn_lines_dropped,
)
from citegraph.runs._runfile import is_count, warn_damaged_counts
from citegraph.runs._stored import Stored, StoredRecords
from citegraph.runs._task import Task
from citegraph.runs._usage import add_usage, read_usage, sum_usage


def read_run_info(path: str | Path) -> dict[str, Any]:
    """``run.json`` of a run directory, checked against its ``run_id`` (an edited file would
    report settings the records were not made with).

    Raises:
        DataNotFoundError: ``path`` holds no run.
        DataError: its ``run.json`` is not a JSON object (names file and line), or was edited.
    """
    run_file = Path(path) / RUN_FILE
    if not run_file.is_file():
        raise DataNotFoundError(f"{path} is not a run directory (no {RUN_FILE})", path=run_file)
    return load_run_file(run_file, check=True)


def merge_runs(inputs: Sequence[str | Path], out: str | Path, *, overwrite: bool = False) -> RunDir:
    """Union the records of shard directories into ``out``.

    Args:
        inputs: Run directories of the same run (same ``run_id``).
        out: The merged run directory (must be new or empty, unless ``overwrite``).
        overwrite: Replace what ``out`` holds.

    Returns:
        The merged run, opened (its metrics are not computed yet).

    Raises:
        ConfigError: the inputs belong to different runs, or ``out`` is not empty.
        DataError: an input's ``run.json`` was edited (its config no longer matches its
            ``run_id``, or its ``task`` is not its config's), a record has no string id, or a
            record is not one of the task's (another task's shape: names the input's file and
            line, as ``runs report`` does; nothing is written).
        RunBusy: another process is writing ``out``.
    """
    if not inputs:
        raise ConfigError("give at least one run directory to merge")
    infos = [read_run_info(p) for p in inputs]  # re-hashed: an edited shard is not merged
    for path, info in zip(inputs, infos, strict=True):  # counts edited by hand: left out
        warn_damaged_counts(info, Path(path) / RUN_FILE)
    first = infos[0]
    for path, info in zip(inputs, infos, strict=True):
        if info.get("run_id") != first.get("run_id"):
            raise ConfigError(
                f"{path} belongs to another run (run_id {info.get('run_id')} != "
                f"{first.get('run_id')} of {inputs[0]}): only shards of one run can be merged"
            )
    task = _named_task(first, inputs[0])
    if task is not None:  # each input's records, as runs report checks them: none is merged
        for path, info in zip(inputs, infos, strict=True):
            check_records(task, RunDir(Path(path), info).records, info, Path(path) / SAMPLES_FILE)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    held = lock_run_dir(out)  # one writer: not beside a run writing ``out``
    try:
        return _merge_into(inputs, infos, out, overwrite=overwrite)
    finally:
        unlock_run_dir(held)


def _merge_into(
    inputs: Sequence[str | Path], infos: list[dict[str, Any]], out: Path, *, overwrite: bool
) -> RunDir:
    """:func:`merge_runs` once the inputs are checked and ``out``'s lock is held."""
    first = infos[0]
    if (out / RUN_FILE).exists() and not overwrite:
        raise ConfigError(f"{out} already holds a run; use another directory or --overwrite")
    merged: dict[str, tuple[Path, Stored]] = {}  # id -> the input and line of its record
    torn = sum(torn_lines_dropped(i) for i in infos)
    for path in inputs:
        samples = Path(path) / SAMPLES_FILE
        scan = TolerantScan(samples)
        for line in scan:
            key = record_id(line, samples)
            failed = line.record.get("status") == FAILED
            old = merged.get(key)
            if old is None or (old[1].failed and not failed):
                merged[key] = (samples, Stored(key, line.offset, line.length, failed))
        torn += scan.torn
    out.mkdir(parents=True, exist_ok=True)
    shards = [info.get("runtime", {}) for info in infos]
    runtime: dict[str, Any] = {"merged_from": [str(p) for p in inputs], "shards": shards}
    n_total = _whole_size(shards)
    if n_total is not None:
        runtime["n_total"] = n_total
    limit = _whole_limit(shards)
    if limit is not None:  # the shards of a limited run: it asked for the first ``limit``
        runtime["limit"] = limit
        if n_total is not None:
            runtime["n_items"] = min(limit, n_total)
    info = {k: v for k, v in first.items() if k != TORN_KEY} | {"runtime": runtime}
    if torn:
        info[TORN_KEY] = torn
    atomic_write(out / RUN_FILE, json_text(info, indent=2) + "\n")
    # each record's line as its shard wrote it, read by runs of one input's consecutive records
    runs = groupby(merged.values(), key=itemgetter(0))
    stored = (StoredRecords(samples, [where for _, where in run]) for samples, run in runs)
    atomic_write_lines(out / SAMPLES_FILE, (raw + b"\n" for part in stored for raw in part.raw()))
    add_usage(out, sum_usage(read_usage(Path(p)) for p in inputs), fresh=True)  # the shards' calls
    return RunDir(out, info)


def _named_task(info: dict[str, Any], where: str | Path) -> type[Task[Any, Any]] | None:
    """The task ``run.json`` names, ``None`` when it names none (or one not registered here).

    Raises:
        DataError: its ``task`` was edited (:func:`~citegraph.runs.task_of_run`).
    """
    try:
        return task_of_run(info, where=Path(where))
    except DataError:
        raise
    except ConfigError:
        return None


def _whole_size(shards: Sequence[dict[str, Any]]) -> int | None:
    """Items of the whole run the shards are part of, before any limit (``run.json``
    ``runtime``: ``n_total_unsharded`` of a shard, ``n_total`` of an unsharded input, the
    largest of those given); ``None`` when no input recorded it (shards, and runs with a limit,
    written before citegraph did)."""
    sizes = [s.get("n_total_unsharded") if s.get("shard") else s.get("n_total") for s in shards]
    known = [n for n in sizes if is_count(n)]
    return max(known) if known else None


def _whole_limit(shards: Sequence[dict[str, Any]]) -> int | None:
    """The ``--limit`` of the run the shards are part of: the largest the shards were given
    (shards split the first ``limit`` items by position), ``None`` when one had none (it asked
    for every item of its share) or none recorded one."""
    limits = [s.get("limit") for s in shards]
    known = [n for n in limits if is_count(n)]
    return max(known) if known and len(known) == len(limits) else None
