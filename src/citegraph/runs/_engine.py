"""The engine: run any :class:`~citegraph.runs.Task` into a run directory.

``run_task`` owns what every pipeline shares: open or resume the run directory (refusing one
that holds another configuration), select the items (``limit``, ``shard``), skip the finished
ones and retry the failed ones, bounded concurrency and batching, progress, and ``metrics.json``
written atomically from every record of the run directory (whatever the limit), with how much
of the run that is (``progress``). ``finalize`` is the part that needs no model: it is what
``runs report`` and ``runs merge`` call for a run of any task.
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Any, Generic

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import ConfigError
from citegraph.models import UsageMeter, dry_running, metering
from citegraph.runs._completion import Completion
from citegraph.runs._fit import check_records, checked
from citegraph.runs._lock import lock_run_dir, unlock_run_dir
from citegraph.runs._outcomes import FinishedRun, first_failure, note_finished, note_started
from citegraph.runs._pending import run_pending_batches_async
from citegraph.runs._rundir import FAILED, RUN_FILE, SAMPLES_FILE, RunDir, torn_lines_dropped
from citegraph.runs._runfile import warn_damaged_counts
from citegraph.runs._runtime import Runtime
from citegraph.runs._stored import StoredRecords
from citegraph.runs._task import ItemT, ModelsT, Record, Task
from citegraph.runs._twin import blocking
from citegraph.runs._usage import (
    DryRunFinished,
    DryRunReport,
    add_usage,
    assign_roles,
    batches,
    tokens_block,
)

if TYPE_CHECKING:
    from citegraph.runs._ray import RaySession


class RunOutcome(BaseModel, Generic[ItemT]):
    """What :func:`run_task` did: counts, not records (a run of 10,000 items is not held in
    memory; :meth:`records` reads the selected items' records from the run directory)."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    out: Path
    info: dict[str, Any] = Field(description="run.json as it stands.")
    metrics: dict[str, Any]
    items: list[ItemT] = Field(description="The selected items (after limit and shard).")
    ids: list[str] = Field(description="The selected items' ids, in item order.")
    n_resumed: int = Field(description="Items found already done in the run directory.")
    n_done_now: int = Field(description="Items worked on in this call.")
    n_failed: int = Field(
        description="Selected items whose newest record failed (retried on the next call)."
    )

    def records(self) -> StoredRecords:
        """The newest record of each selected item, in item order, read from ``samples.jsonl``
        as they are used (the metrics cover every record of the run directory).

        Raises:
            DataError: the run directory's files are malformed.
        """
        return RunDir.read(self.out).newest(self.ids)


async def run_task_async(
    task: Task[ItemT, ModelsT], out: str | Path, runtime: Runtime | None = None
) -> RunOutcome[ItemT]:
    """Run ``task`` into the run directory ``out``, resuming what it holds.

    Args:
        task: The task (its config, items, work and metrics).
        out: The run directory (created, or resumed when it holds the same run).
        runtime: limit, shard, concurrency, batch size, cache, overwrite, command, progress.

    Returns:
        The counts of the selected items, and the metrics written to ``metrics.json``: over
        every record of the run directory, whatever the limit (the limit decides what more is
        done, not what is counted), with its ``progress`` (:func:`progress_of`).

    Raises:
        ConfigError: ``out`` holds a run with another configuration or input, or the task
            cannot be sharded and ``runtime.shard`` is set.
        RunInterrupted: the command line's first Ctrl-C (or SIGTERM) stopped the run; every
            finished record is in ``out`` and the same call resumes it (no ``metrics.json`` is
            written then). Cancelling the call raises :class:`asyncio.CancelledError` instead,
            with the finished records kept too.
    """
    runtime = runtime or Runtime()
    if runtime.shard is not None and not task.shardable:
        raise ConfigError(f"{task.name} runs cannot be split with --shard (see its docs)")
    all_pairs = task.items()
    share = runtime.model_copy(update={"limit": None}).select(all_pairs)
    pairs = runtime.select(all_pairs)
    sizes = {"n_items": len(pairs), "n_total": len(share)}
    if runtime.shard is not None:
        sizes["n_total_unsharded"] = len(all_pairs)
    if runtime.dry_run:
        await _dry_run(task, pairs, runtime)
    # a second writer is refused before any model is loaded (a new directory is made only
    # once the models are open: an input refused then leaves nothing behind)
    held = lock_run_dir(Path(out)) if Path(out).is_dir() else None
    run: RunDir | None = None
    meter = UsageMeter()
    try:
        with _executor(runtime) as ray_session, metering(meter):
            async with task.open(runtime) as models:
                assign_roles(meter, models, task.model_role)
                run = RunDir.open(  # holds the directory's lock until closed below
                    out,
                    task.run_config(models),
                    data=task.run_data(models),
                    command=runtime.command,
                    overwrite=runtime.overwrite,
                    runtime=runtime.record()
                    | sizes
                    | (ray_session.describe() if ray_session else {}),
                    task=task.name,
                    notes=task.run_notes(models),
                    models=task.run_models(models),
                )
                if run.started_over is not None and runtime.notify is not None:
                    runtime.notify(run.started_over)
                note_started(out)
                samples = run.path / SAMPLES_FILE
                if run.ids:  # a resume: records the task cannot read are refused before work
                    check_records(type(task), run.records, run.info, samples)
                fresh = not run.ids  # no record before this call: its token totals start at 0
                n_resumed, n_now = await _work_pending(
                    task, run, pairs, runtime, models, ray_session
                )
                add_usage(run.path, meter.totals(), fresh=fresh)
                records = _every_record(task, run, [key for key, _ in share])
                info = run.info
                measure = functools.partial(task.metrics, records, info, models)
                metrics = checked(type(task), records, info, samples, measure)
        # The failures are read before the metrics are written: a task's outputs may rewrite
        # samples.jsonl then (conner select), which leaves the run's index of it stale.
        selected = run.newest(key for key, _ in pairs)
        failure = first_failure(selected) if selected.n_failed else None
        metrics = write_metrics(type(task), run, records, metrics)
        note_finished(FinishedRun(Path(out), metrics, len(pairs), selected.n_failed, failure))
    finally:
        try:
            if run is not None:
                run.close()
        finally:
            unlock_run_dir(held)
    return RunOutcome(
        out=Path(out),
        info=run.info,
        metrics=metrics,
        items=[item for _, item in pairs],
        ids=[key for key, _ in pairs],
        n_resumed=n_resumed,
        n_done_now=n_now,
        n_failed=selected.n_failed,
    )


run_task = blocking(run_task_async)


async def _work_pending(
    task: Task[ItemT, ModelsT],
    run: RunDir,
    pairs: Sequence[tuple[str, ItemT]],
    runtime: Runtime,
    models: ModelsT,
    ray_session: RaySession | None,
) -> tuple[int, int]:
    """Work through the items of ``pairs`` that ``run`` has not finished, on Ray or locally:
    ``(n_resumed, n_done_now)``."""
    if ray_session is not None:
        from citegraph.runs._ray import run_pending_ray

        return run_pending_ray(task, run, pairs, runtime, ray_session)

    async def work(batch: Sequence[ItemT]) -> list[Record]:
        return await task.work(batch, models)

    return await run_pending_batches_async(
        run,
        pairs,
        work,
        batch_size=runtime.batch_size or task.batch_size,
        concurrency=task.concurrency(models, runtime),
        progress=runtime.progress,
        prepare_ahead=task.prepare_ahead(models),
    )


async def _dry_run(
    task: Task[ItemT, ModelsT], pairs: Sequence[tuple[str, ItemT]], runtime: Runtime
) -> None:
    """Work ``pairs`` with every chat model a dry-run stand-in (no call, no load), write
    nothing, and raise :class:`DryRunFinished` with the calls and prompt tokens counted."""
    meter = UsageMeter()
    n_failed = 0
    with metering(meter), dry_running():
        async with task.open(runtime) as models:
            assign_roles(meter, models, task.model_role)
            items = [item for _, item in pairs]
            for batch in batches(items, runtime.batch_size or task.batch_size):
                try:
                    records = await task.work(batch, models)
                except Exception:
                    n_failed += len(batch)
                    continue
                n_failed += sum(1 for r in records if r.get("status") == FAILED)
    raise DryRunFinished(
        DryRunReport(
            task=task.name,
            n_items=len(pairs),
            n_items_failed=n_failed,
            tokens=meter.totals(),
            counted=dict(meter.counted),
            price_in=runtime.price_in,
            price_out=runtime.price_out,
        )
    )


def _every_record(task: Task[Any, Any], run: RunDir, ids: Sequence[str]) -> Sequence[Record]:
    """The newest record of every id in ``run``, whatever the limit: the items' (``ids``, this
    run directory's share before the limit) in item order, then those of ids the task no longer
    lists (a run written by an older version of it) in :meth:`Task.order`, as ``runs report``
    counts them too. Read from ``samples.jsonl`` as they are used."""
    listed = set(ids)
    newest = run.newest(ids)
    others = [i for i in run.ids if i not in listed]
    if not others:
        return newest
    ordered = task.order(run.newest(others))
    if isinstance(ordered, StoredRecords):
        return newest + ordered
    return [*newest, *ordered]


def _executor(runtime: Runtime) -> AbstractContextManager[RaySession | None]:
    """The Ray session of a ``--engine ray`` call, else nothing (the local engine)."""
    if runtime.engine == "ray":
        from citegraph.runs._ray import RaySession

        return RaySession(runtime)
    return nullcontext()


def finalize(task_type: type[Task[Any, Any]], run: RunDir) -> dict[str, Any]:
    """Recompute ``metrics.json`` (and the task's other outputs) from the run's records alone.

    Returns:
        ``metrics.json`` as written, with its ``progress`` (see :func:`progress_of`).

    Raises:
        DataError: a file of the run is damaged, or its records are not what ``task_type``
            makes (a ``run.json`` whose ``task`` was edited, a line of another task's run):
            names the file, the first such record's line and the task
            (:func:`~citegraph.runs.check_records`).
    """
    stored, samples = run.records, run.path / SAMPLES_FILE
    records = checked(task_type, stored, run.info, samples, lambda: task_type.order(stored))
    metrics = checked(
        task_type, stored, run.info, samples, lambda: task_type.summarize(records, run.info)
    )
    return write_metrics(task_type, run, records, metrics)


def progress_of(run: RunDir, records: Sequence[Record]) -> dict[str, Any]:
    """How much of what it asked for a run directory holds: ``metrics.json`` ``progress``.

    ``n_done`` finished records and ``n_failed`` failed ones (newest record of each id);
    ``n_asked``, the items the run's own ``limit`` and ``shard`` selected, of ``n_total``, its
    share before any limit (the task's items, or the shard's share; ``None``, unknown, for runs
    written before ``run.json`` recorded it), with that ``limit`` and ``shard``. ``partial`` is
    true when an item is failed or fewer are done than the run asked for, so the metrics cover
    less than it asked (``None`` when that is unknown and nothing failed): a ``--limit 20`` run
    with its 20 items done is not partial (:class:`~citegraph.runs.Completion`).
    ``torn_lines_dropped`` counts the torn last lines of ``samples.jsonl`` dropped so far (a run
    killed mid-write). A count of ``run.json`` that is not one (a negative ``runtime.n_total``
    written by hand) is left out, with a :class:`~citegraph.runs.RunFileWarning` naming it.
    """
    warn_damaged_counts(run.info, run.path / RUN_FILE)  # a hand edit: named, worked around
    if isinstance(records, StoredRecords):
        n_failed = records.n_failed  # from the run's index, without reading the records
    else:
        n_failed = sum(1 for r in records if r.get("status") == FAILED)
    completion = Completion.of_run(run.info.get("runtime"), len(records) - n_failed, n_failed)
    return completion.progress(torn_lines_dropped(run.info))


def write_metrics(
    task_type: type[Task[Any, Any]],
    run: RunDir,
    records: Sequence[Record],
    metrics: dict[str, Any],
) -> dict[str, Any]:
    """``metrics.json`` atomically (the task's metrics plus ``progress``), then the task's other
    output files (given the task's metrics alone).

    Returns:
        ``metrics.json`` as written.
    """
    written = metrics | {"progress": progress_of(run, records)}
    tokens = tokens_block(run.path)
    if tokens is not None:  # the chat calls' token totals (runs that called a chat model)
        written["tokens"] = tokens
    if run.info.get("models"):  # where the models ran: dtype moves numbers
        written["models"] = run.info["models"]
    written = run.with_samples_record(written)
    run.write_metrics(written)
    before = _file_state(run.path / SAMPLES_FILE)
    task_type.write_outputs(run.path, records, metrics, run.info)
    if _file_state(run.path / SAMPLES_FILE) != before:  # the task rewrote samples.jsonl
        written = run.with_samples_record(written)
        run.write_metrics(written)
    return written


def _file_state(path: Path) -> tuple[int, int, int] | None:
    """Inode, size and modification time of ``path`` (None when missing): whether a task's
    outputs replaced it just now."""
    try:
        status = path.stat()
    except FileNotFoundError:
        return None
    return (status.st_ino, status.st_size, status.st_mtime_ns)
