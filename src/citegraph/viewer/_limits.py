"""What one request to the web viewer may cost: how many runs a page compares, how much of them
it loads, how many heavy pages are drawn at once, and how large a JSON file it reads.

Any web page the user visits can send requests to the viewer, and run references are easy to
guess, so no request may hold the viewer for long or grow it without bound:

- a compare page shows at most :data:`MAX_COMPARE_RUNS` distinct runs (a ref given twice is one
  run); more is a 400 saying so;
- its figures are drawn from the records of its runs only while their ``samples.jsonl`` hold
  at most :data:`MAX_FIGURE_BYTES` of records together (``citegraph view --max-figure-mb``);
  beyond that the page shows the metrics and says how to draw the figures
  (``citegraph report``);
- every page is built in a worker thread, never on the event loop, so the run list answers
  while a page is drawn; heavy pages (compare) are drawn :data:`HEAVY_RENDERS` at a time,
  :data:`HEAVY_WAITING` more wait their turn, and any beyond are answered 503 with
  ``Retry-After`` (:class:`HeavyRenders`);
- ``run.json`` and ``metrics.json`` are read only up to :data:`MAX_JSON_BYTES`, and only when
  they are regular files (:mod:`citegraph.viewer._catalog`).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

#: The most distinct runs one compare page shows.
MAX_COMPARE_RUNS = 8
#: The most bytes of records (of ``samples.jsonl``, all runs of the page together) a compare
#: page reads to draw its figures; parsed, a byte of records takes about four in memory.
MAX_FIGURE_BYTES = 128 * 2**20
#: The largest ``run.json`` or ``metrics.json`` the viewer and the report read.
MAX_JSON_BYTES = 32 * 2**20
#: Heavy pages (compare) drawn at the same time.
HEAVY_RENDERS = 1
#: Heavy pages that may wait for their turn; one more is answered 503.
HEAVY_WAITING = 4
#: Seconds a 503 for a busy viewer asks the browser to wait before trying again.
RETRY_AFTER_S = 5


def mib(size: float) -> str:
    """``size`` bytes in MiB, as a page says it (``0.3 MiB``, ``128 MiB``)."""
    value = size / 2**20
    return f"{value:.1f} MiB" if value < 10 else f"{value:.0f} MiB"


class Busy(Exception):
    """As many heavy pages as may wait are waiting already."""


class HeavyRenders:
    """Runs heavy page builds in worker threads, :data:`HEAVY_RENDERS` at a time, with at most
    :data:`HEAVY_WAITING` more admitted to wait (each waiting one holds a worker thread, so the
    threads left for other pages stay many)."""

    def __init__(self, running: int = HEAVY_RENDERS, waiting: int = HEAVY_WAITING) -> None:
        self._slots = threading.BoundedSemaphore(running)
        self._admit = running + waiting
        self._admitted = 0
        self._lock = threading.Lock()

    @property
    def admitted(self) -> int:
        """Heavy pages being drawn or waiting now."""
        with self._lock:
            return self._admitted

    async def run(self, build: Callable[[], T]) -> T:
        """``build()`` in a worker thread, once a slot is free.

        Raises:
            Busy: the queue is full (answer 503; nothing was started).
        """
        from starlette.concurrency import run_in_threadpool

        with self._lock:
            if self._admitted >= self._admit:
                raise Busy
            self._admitted += 1
        try:
            return await run_in_threadpool(self._in_slot, build)
        finally:
            with self._lock:
                self._admitted -= 1

    def _in_slot(self, build: Callable[[], T]) -> T:
        with self._slots:
            return build()
