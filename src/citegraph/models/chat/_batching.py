"""Gathering concurrent requests to a local model into one batched ``generate`` call.

:class:`BatchScheduler` queues the requests of :meth:`HFChat.generate
<citegraph.models.HFChat.generate>`. The first request to arrive starts a dispatcher on the
event loop, which waits briefly (at most :data:`BATCH_WINDOW_S`) until as many requests wait as
were in flight around its last batch, then takes the oldest waiting request and every other
waiting request that can share its call (the same :func:`batch_key`), up to ``max_batch``, and
runs them in one worker thread. While a batch runs, new requests queue up for the next one; the
dispatcher ends when none is left.

Any requests share a call: greedy rows and sampled rows alike, since a sampled row draws its
tokens from its own generator, seeded by its request (so a seeded request gives the same text
alone or in a batch). Stop strings, ``max_tokens``, the repetition penalty, grammars and sampling
are per row (see :class:`~citegraph.models.chat._generation.Row`).

Cancelling a waiting request takes it out of the queue; cancelling a running one sets its event,
so its row ends within a token and is dropped from the result, while the other rows go on.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field

from citegraph.models.chat._types import ChatRequest, GenerateConfig, Generation
from citegraph.models.hf import device_type

#: Most seconds the dispatcher waits for more requests before it takes a batch: requests that
#: come back from their previous reply join the next batch. It waits only while fewer requests
#: wait than were in flight around the last batch, so one request at a time never waits.
BATCH_WINDOW_S = 0.005
#: How often the dispatcher looks at the queue while it waits.
POLL_S = 0.0005

#: The default ``max_batch`` per device kind. One CPU core gains little beyond 8 rows (each row
#: adds its share of the matrix work); a GPU decodes 32 rows in about the time of one (the
#: weights are read once per token for the whole batch), and 32 is the concurrency of issue 40's
#: goal; the KV cache of 32 rows of a 2k-token prompt of a 1-2B model is a few GiB.
DEFAULT_MAX_BATCH = {"cpu": 8, "mps": 8, "cuda": 32}

#: Runs one batch: the requests and their cancel events in, one result (or error) per request out.
BatchRunner = Callable[
    [Sequence[ChatRequest], Sequence[threading.Event]], list[Generation | BaseException]
]


def default_max_batch(device: str) -> int:
    """The default ``max_batch`` for a device string (``"cpu"``, ``"cuda:0"``, ``"mps"``)."""
    return DEFAULT_MAX_BATCH.get(device_type(device), DEFAULT_MAX_BATCH["cpu"])


def batch_key(config: GenerateConfig) -> Hashable | None:
    """What requests must share to run in one call; None: the request runs alone.

    Every row decodes on its own (greedy, or sampled from its own seeded generator:
    :class:`~citegraph.models.chat._generation.RowSampler`), so any requests share a call; the
    key stays so a runner that cannot mix requests can say so.

    Example:
        >>> batch_key(GenerateConfig(temperature=0, max_tokens=3))
        ('rows',)
        >>> batch_key(GenerateConfig(temperature=0.7, seed=1))
        ('rows',)
    """
    del config  # every request decodes in its own row
    return ("rows",)


@dataclass(eq=False)
class _Job:
    request: ChatRequest
    loop: asyncio.AbstractEventLoop
    future: asyncio.Future[Generation]
    cancel: threading.Event = field(default_factory=threading.Event)


def _settle(future: asyncio.Future[Generation], result: Generation | BaseException) -> None:
    if future.done():  # cancelled meanwhile
        return
    if isinstance(result, BaseException):
        future.set_exception(result)
    else:
        future.set_result(result)


class BatchScheduler:
    """Queues requests and runs them in batches of up to ``max_batch`` (see the module).

    Args:
        run: Runs one batch in a worker thread (:meth:`HFChat.generate_batch_sync`).
        max_batch: Most requests per call.
        window_s: Seconds to wait for more requests before each batch.
    """

    def __init__(
        self, run: BatchRunner, *, max_batch: int, window_s: float = BATCH_WINDOW_S
    ) -> None:
        self._run = run
        self.max_batch = max_batch
        self.window_s = window_s
        self._pending: list[_Job] = []
        self._guard = threading.Lock()
        self._task: asyncio.Task[None] | None = None
        self._expect = 1

    async def submit(self, request: ChatRequest) -> Generation:
        """Queue ``request`` and wait for its reply (raises what its row raised)."""
        loop = asyncio.get_running_loop()
        job = _Job(request, loop, loop.create_future())
        with self._guard:
            self._pending.append(job)
            if self._task is None or self._task.done():
                self._task = loop.create_task(self._dispatch())
        try:
            return await job.future
        except asyncio.CancelledError:
            job.cancel.set()
            with self._guard, contextlib.suppress(ValueError):
                self._pending.remove(job)
            raise

    def _take(self) -> list[_Job]:
        """The oldest waiting job and the waiting jobs that can share its call."""
        with self._guard:
            if not self._pending:
                return []
            key = batch_key(self._pending[0].request.config)
            if key is None:
                taken = [self._pending[0]]
            else:
                same = [j for j in self._pending if batch_key(j.request.config) == key]
                taken = same[: self.max_batch]
            for job in taken:
                self._pending.remove(job)
            return taken

    async def _gather(self) -> None:
        """Wait until as many requests wait as were in flight around the last batch (callers
        that got their reply come back with their next request), at most ``window_s``."""
        loop = asyncio.get_running_loop()
        await asyncio.sleep(0)  # requests submitted in the same turn of the loop queue first
        deadline = loop.time() + self.window_s
        target = min(self._expect, self.max_batch)
        while len(self._pending) < target and loop.time() < deadline:
            await asyncio.sleep(POLL_S)

    async def _dispatch(self) -> None:
        while True:
            await self._gather()
            jobs = self._take()
            if not jobs:
                with self._guard:  # a job queued after the take starts no dispatcher: re-check
                    if not self._pending:
                        self._task = None
                        return
                continue
            requests = [j.request for j in jobs]
            cancels = [j.cancel for j in jobs]
            try:
                results = await asyncio.to_thread(self._run, requests, cancels)
            except Exception as exc:  # the runner failed as a whole: every row gets the error
                results = [exc] * len(jobs)
            with self._guard:
                self._expect = len(jobs) + len(self._pending)
            for job, result in zip(jobs, results, strict=True):
                with contextlib.suppress(RuntimeError):  # the job's loop is closed
                    job.loop.call_soon_threadsafe(_settle, job.future, result)
