"""Work through the samples a run directory has not finished, concurrently, saving each at once."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, TypeVar

from citegraph.runs._rundir import RunDir

T = TypeVar("T")
Progress = Callable[[int, int], None]


async def run_pending(
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
    stays.

    Args:
        run: The run directory (its ``done`` ids are skipped).
        items: ``(id, item)`` pairs in dataset order.
        work: Produces the record (with ``"id"``) of one item.
        concurrency: Items in flight at once.
        progress: Called as ``progress(done, total)``, once at the start and after each item.

    Returns:
        ``(n_resumed, n_done_now)``.
    """
    done = run.done
    todo = [(key, item) for key, item in items if key not in done]
    finished = len(items) - len(todo)
    n_resumed = finished
    semaphore = asyncio.Semaphore(max(1, concurrency))
    if progress is not None:
        progress(finished, len(items))

    async def one(item: T) -> None:
        nonlocal finished
        async with semaphore:
            record = await work(item)
        run.append(record)
        finished += 1
        if progress is not None:
            progress(finished, len(items))

    tasks = [asyncio.ensure_future(one(item)) for _, item in todo]
    try:
        await asyncio.gather(*tasks)
    except BaseException:
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        raise
    return n_resumed, len(todo)
