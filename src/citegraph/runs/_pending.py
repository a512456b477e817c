"""Work through the samples a run directory has not finished, concurrently, saving each at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any, TypeVar

from citegraph.errors import ConfigError
from citegraph.runs._interrupt import GRACE_S, RunInterrupted, draining, stop_requested
from citegraph.runs._rundir import RunDir
from citegraph.runs._runtime import Progress
from citegraph.runs._twin import blocking

T = TypeVar("T")
R = TypeVar("R")

#: Seconds between the engine's looks at :func:`stop_requested` while items are in flight.
_POLL_S = 0.2
#: How the item running in this task gives its place back early (see :func:`hand_back_slot`):
#: the release of its place, and the run's lane for the local work that follows.
_SLOT: ContextVar[tuple[Callable[[], None], asyncio.Lock] | None] = ContextVar(
    "citegraph_engine_slot", default=None
)


def hand_back_slot() -> Awaitable[None]:
    """Give this item's place among the ``concurrency`` in flight back to the engine now: what
    the item still has to do is work on this machine (parsing and scoring an answer, its
    record), not a call to the model it was admitted for. ``await hand_back_slot()``: the
    place is given back at the call; awaiting lets the items so woken reach their own model
    calls first, then resumes the items that handed back one at a time, each after the event
    loop has looked at the network once more.

    So against a server the next requests go out as soon as answers come in, not after the
    scoring of a whole wave of answers: at 64 requests in flight, a wave of answers no longer
    spreads the next wave of requests by 64 x the client's CPU per answer. Each model still
    bounds its own calls (a server's endpoint limit), and an item's later model calls (a
    served NLI model) run concurrently as before: the one-at-a-time lane is held only while an
    item resumes. Outside the engine, in an item of a batch of more than one, or the second
    time in an item, it gives nothing back and the awaitable returns at once.
    """
    slot = _SLOT.get()
    if slot is None:
        return _nothing()
    _SLOT.set(None)
    release, lane = slot
    release()
    return _local_turn(lane)


async def _nothing() -> None:
    return None


async def _local_turn(lane: asyncio.Lock) -> None:
    """Resume after the woken items reached their calls, one item of the lane at a time, each
    after one more look at the network (answers that came in are read and answered first)."""
    await asyncio.sleep(0)
    async with lane:
        await asyncio.sleep(0)


async def run_pending_async(
    run: RunDir,
    items: Sequence[tuple[str, T]],
    work: Callable[[T], Awaitable[dict[str, Any]]],
    *,
    concurrency: int,
    progress: Progress | None = None,
) -> tuple[int, int]:
    """Run ``work`` on every item whose id ``run`` has not finished; append each record at once.

    At most ``concurrency`` items are in flight. Records are appended in the order items finish
    (each one flushed), so a killed process loses only the items in flight. On the first
    unexpected error the other items are cancelled and the error propagates; what was written
    stays. When the command line asks the run to stop (the first Ctrl-C, see
    :mod:`citegraph.runs._interrupt`), no item is started any more, those in flight get a few
    seconds to finish, and :class:`~citegraph.runs.RunInterrupted` is raised after the finished
    records are written; cancelling the call (:class:`asyncio.CancelledError`) cancels the items
    in flight and keeps what was written.

    Args:
        run: The run directory (its ``done`` ids are skipped).
        items: ``(id, item)`` pairs in dataset order.
        work: Produces the record (with ``"id"``) of one item.
        concurrency: Items in flight at once.
        progress: Called as ``progress(done, total)``, once at the start and after each item.

    Returns:
        ``(n_resumed, n_done_now)``.
    """

    async def one(batch: Sequence[T]) -> list[dict[str, Any]]:
        return [await work(batch[0])]

    return await run_pending_batches_async(
        run, items, one, batch_size=1, concurrency=concurrency, progress=progress
    )


run_pending = blocking(run_pending_async)


async def run_pending_batches_async(
    run: RunDir,
    items: Sequence[tuple[str, T]],
    work: Callable[[Sequence[T]], Awaitable[list[dict[str, Any]]]],
    *,
    batch_size: int,
    concurrency: int,
    progress: Progress | None = None,
    prepare_ahead: bool = False,
) -> tuple[int, int]:
    """:func:`run_pending` for workers that take a batch (NLI and classifier models): the
    unfinished items are cut into batches of ``batch_size``; ``work`` returns one record per
    item of its batch, in order, and they are appended when the batch finishes.

    ``prepare_ahead`` (each item's model call is bounded by the model itself, e.g. a served
    model's endpoint limit; :meth:`~citegraph.runs.Task.prepare_ahead`): twice ``concurrency``
    batches are admitted, so that the next items are ready (their prompts built) when a call
    ends, and an admitted item starts its local work in the lane of :func:`hand_back_slot`: one
    at a time, each after a look at the network, so that a call that can start is never kept
    waiting behind the preparation of a whole wave of items."""
    todo = [item for _, item in unfinished(run, items, progress)]
    finished = n_resumed = len(items) - len(todo)
    semaphore = asyncio.Semaphore(max(1, concurrency) * (2 if prepare_ahead else 1))
    lane = asyncio.Lock()  # resumes the items that handed their place back (hand_back_slot)

    async def one(batch: Sequence[T]) -> None:
        nonlocal finished
        await semaphore.acquire()
        held = True

        def release() -> None:
            nonlocal held
            if held:
                held = False
                semaphore.release()

        try:
            if stop_requested() is not None:  # Ctrl-C: start nothing new
                return
            if len(batch) == 1:  # one item may give its place back (hand_back_slot)
                _SLOT.set((release, lane))
            if prepare_ahead:
                await _local_turn(lane)
            records = await work(batch)
        finally:
            release()
        for record in records:
            run.append(record)
        finished += len(batch)
        if progress is not None:
            progress(finished, len(items))

    size = max(1, batch_size)
    tasks = [asyncio.ensure_future(one(todo[i : i + size])) for i in range(0, len(todo), size)]
    with draining():
        signum = await _until_done_or_stopped(tasks)
    if signum is not None and finished < len(items):
        raise RunInterrupted(str(run.path), signum, finished - n_resumed, len(items) - finished)
    return n_resumed, len(todo)


run_pending_batches = blocking(run_pending_batches_async)


async def _until_done_or_stopped(tasks: Sequence[asyncio.Future[None]]) -> int | None:
    """Wait for ``tasks``; the first error cancels the others and propagates (what was written
    stays). When a stop is requested (:func:`stop_requested`, looked at every :data:`_POLL_S`
    seconds by a watcher, not by touching every task), the tasks in flight get :data:`GRACE_S`
    seconds, then the rest are cancelled; returns the signal (``None`` when every task
    finished)."""
    everything = asyncio.gather(*tasks)
    watcher = asyncio.ensure_future(_stop_after_grace(tasks))
    try:
        either: list[asyncio.Future[Any]] = [everything, watcher]
        await asyncio.wait(either, return_when=asyncio.FIRST_COMPLETED)
        if everything.done():
            everything.result()  # the first error, if any
            return None
        return watcher.result()
    finally:
        watcher.cancel()
        await _cancel(tasks)
        await asyncio.gather(everything, watcher, return_exceptions=True)


async def _stop_after_grace(tasks: Sequence[asyncio.Future[None]]) -> int:
    """Return once a stop was requested and the tasks in flight finished or had
    :data:`GRACE_S` seconds (those not started return at once: they see the stop)."""
    while (signum := stop_requested()) is None:
        await asyncio.sleep(_POLL_S)
    if tasks:
        await asyncio.wait(tasks, timeout=GRACE_S)
    return signum


async def _cancel(tasks: Sequence[asyncio.Future[None]]) -> None:
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def unfinished(
    run: RunDir, items: Sequence[tuple[str, T]], progress: Progress | None
) -> list[tuple[str, T]]:
    """The ``(id, item)`` pairs ``run`` has not finished (failed ones included: they are tried
    again); reports the resumed count to ``progress`` first, as every executor does."""
    done = run.done
    todo = [(key, item) for key, item in items if key not in done]
    if progress is not None:
        progress(len(items) - len(todo), len(items))
    return todo


async def run_bounded_async(
    items: Sequence[T],
    work: Callable[[T], Awaitable[R]],
    *,
    concurrency: int,
    progress: Progress | None = None,
) -> list[R]:
    """``work(item)`` for every item, at most ``concurrency`` at a time; results in input order.

    For work inside one task that is not a run of its own (the candidates of a pair, the plans
    of a generation batch). ``progress(done, total)`` is called after each item.

    Raises:
        ConfigError: ``concurrency`` < 1.
    """
    if concurrency < 1:
        raise ConfigError(f"concurrency must be >= 1, got {concurrency}")
    gate = asyncio.Semaphore(concurrency)
    done = 0

    async def one(item: T) -> R:
        nonlocal done
        async with gate:
            result = await work(item)
        done += 1
        if progress is not None:
            progress(done, len(items))
        return result

    return list(await asyncio.gather(*(one(item) for item in items)))


run_bounded = blocking(run_bounded_async)
