"""Shared by the benchmarks that run a task against a delayed local server at several concurrency
levels (``kalma_run_server.py``, ``caqa_build_judge.py``): the server (in this process or in a
child process), best-of-N timing and the printed table.

The ideal wall time of N items at concurrency c against a server that answers after ``delay``
is ``ceil(N / c) x delay``: c requests in flight at all times, no client time between them.
``ratio`` is wall / ideal (best of the repeats); ``over ms`` is (wall - ideal) / N;
``cpu ms`` is this process's CPU time per item (the client's work per item; with
``--server thread`` the server's handler threads are included).
"""

from __future__ import annotations

import argparse
import math
import multiprocessing
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any

from citegraph.models.server import _pool
from citegraph.testing import FakeOpenAIServer

HEADER = (
    f"{'concurrency':>11} {'items':>6} {'wall s':>8} {'ideal s':>8} {'ratio':>6} "
    f"{'over ms':>8} {'cpu ms':>7} {'walls (all repeats)':>22}"
)
LEGEND = (
    "ideal = ceil(items / concurrency) x delay; ratio = best wall / ideal; over ms = (best wall - "
    "ideal) / items; cpu ms = client process CPU per item (best repeat)"
)


def _serve(reply: str, delay: float, conn: Connection) -> None:
    """Child process: serve ``reply`` after ``delay`` until the parent sends anything."""
    with FakeOpenAIServer(reply=reply, delay=delay) as server:
        conn.send(server.base_url)
        conn.recv()


@contextmanager
def fake_server(reply: str, delay: float, where: str) -> Iterator[str]:
    """A FakeOpenAIServer answering ``reply`` after ``delay``; yields its base URL.

    ``where="process"`` runs it in a child process, as a real server is (the client's event
    loop then does not share the GIL with the server's threads); ``"thread"`` in this process.
    """
    if where == "thread":
        with FakeOpenAIServer(reply=reply, delay=delay) as server:
            yield server.base_url
        return
    ours, theirs = multiprocessing.get_context("spawn").Pipe()
    child = multiprocessing.get_context("spawn").Process(
        target=_serve, args=(reply, delay, theirs), daemon=True
    )
    child.start()
    try:
        yield ours.recv()
    finally:
        ours.send("stop")
        child.join(timeout=10)


@dataclass(frozen=True)
class Timing:
    """One repeat: wall seconds and this process's CPU seconds."""

    wall: float
    cpu: float


def timed(run: Callable[[], None]) -> Timing:
    """Wall and process CPU time of ``run()``."""
    wall, cpu = time.perf_counter(), time.process_time()
    run()
    return Timing(time.perf_counter() - wall, time.process_time() - cpu)


def report_level(level: int, n: int, delay: float, timings: list[Timing]) -> str:
    """The table row of one concurrency level (best of ``timings``)."""
    best = min(timings, key=lambda t: t.wall)
    ideal = math.ceil(n / level) * delay
    walls = ",".join(f"{t.wall:.2f}" for t in timings)
    return (
        f"{level:>11} {n:>6} {best.wall:>8.2f} {ideal:>8.2f} {best.wall / ideal:>6.2f} "
        f"{1000 * (best.wall - ideal) / n:>8.2f} {1000 * best.cpu / n:>7.2f} {walls:>22}"
    )


def levels_of(text: str) -> list[int]:
    """``"8,16,32"`` -> ``[8, 16, 32]``."""
    return [int(c) for c in text.split(",")]


def add_level_arguments(parser: argparse.ArgumentParser, levels: str) -> None:
    """``--delay``, ``--concurrency`` (default ``levels``), ``--repeats``, ``--server``."""
    parser.add_argument("--delay", type=float, default=0.2, help="Server delay per reply (s).")
    parser.add_argument("--concurrency", default=levels)
    parser.add_argument("--repeats", type=int, default=3, help="Runs per level (best is shown).")
    parser.add_argument(
        "--server",
        choices=("process", "thread"),
        default="process",
        help="Run the fake server in a child process (as a real server is) or in a thread here.",
    )


class Timeline:
    """Where a run's wall time over the ideal goes (``--timeline``): every request's start and
    end as the client's HTTP pool sees them, against the run's own start and end.

    Use as a context manager around one run; :meth:`report` gives one line per run: the time
    from the run's start to its first request, from the last answer to the run's end, the mean
    requests in flight, and each wave's spread (the time over which a wave of ``level``
    requests went out: the client's time to answer a wave of answers).
    """

    def __init__(self) -> None:
        self.spans: list[tuple[float, float]] = []
        self.start = self.end = 0.0
        self._post: Any = None

    def __enter__(self) -> Timeline:
        post = self._post = _pool.Pool.post
        spans = self.spans

        async def timed(pool: Any, *args: Any, **kwargs: Any) -> Any:
            began = time.perf_counter()
            try:
                return await post(pool, *args, **kwargs)
            finally:
                spans.append((began, time.perf_counter()))

        _pool.Pool.post = timed  # type: ignore[method-assign,assignment]
        self.start = time.perf_counter()
        return self

    def __exit__(self, *exc: object) -> None:
        self.end = time.perf_counter()
        _pool.Pool.post = self._post  # type: ignore[method-assign]

    def report(self, level: int) -> str:
        """The line of this run (see the class)."""
        if not self.spans:
            return "  timeline: no request"
        starts = sorted(s for s, _ in self.spans)
        first, last = starts[0], max(e for _, e in self.spans)
        busy = sum(e - s for s, e in self.spans)
        waves = [starts[i : i + level] for i in range(0, len(starts), level)]
        spreads = ",".join(f"{1000 * (w[-1] - w[0]):.0f}" for w in waves)
        return (
            f"  timeline: start->first request {1000 * (first - self.start):.0f} ms, last "
            f"answer->end {1000 * (self.end - last):.0f} ms, mean in flight "
            f"{busy / (last - first):.1f}, wave spreads (ms) {spreads}"
        )
