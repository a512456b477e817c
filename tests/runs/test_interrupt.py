"""Stopping a run: cancelling ``run_task_async`` (a Python caller's Ctrl-C) and the command line's
graceful first signal both keep every finished record, and a resumed run skips them.

The task has six items; ``x-0`` and ``x-1`` finish at once, the others wait for their gate (an
event the test sets, or never), so what is in flight when the run is stopped is known exactly.
"""

from __future__ import annotations

import asyncio
import json
import signal
from collections.abc import Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest
from pydantic import BaseModel, ConfigDict

from citegraph.runs import (
    Record,
    RunInterrupted,
    Runtime,
    Task,
    _pending,
    opened,
    run_task,
    run_task_async,
)
from citegraph.runs._interrupt import graceful_interrupts, stop_requested


class GatedConfig(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")

    n: int = 6


class Gates:
    """Which items may finish (``open``: all of them), what work started and was cancelled."""

    def __init__(self, fast: set[int], *, open_all: bool = False) -> None:
        self.fast = fast
        self.events: dict[int, asyncio.Event] = {}
        self.started: list[int] = []
        self.cancelled: list[int] = []
        self.open_all = open_all

    def event(self, i: int) -> asyncio.Event:
        return self.events.setdefault(i, asyncio.Event())


class GatedTask(Task[int, Gates]):
    name: ClassVar[str] = "testing.gated"

    def __init__(self, gates: Gates) -> None:
        self.config = GatedConfig()
        self.gates = gates

    def items(self) -> Sequence[tuple[str, int]]:
        return [(f"x-{i}", i) for i in range(self.config.n)]

    def open(self, runtime: Runtime) -> Any:
        return opened(self.gates)

    async def work(self, batch: Sequence[int], models: Gates) -> list[Record]:
        (i,) = batch
        models.started.append(i)
        if i not in models.fast and not models.open_all:
            try:
                await models.event(i).wait()
            except asyncio.CancelledError:
                models.cancelled.append(i)
                raise
        return [{"id": f"x-{i}", "value": i}]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        return {"n": len(records)}


def ids_in(out: Path) -> list[str]:
    path = out / "samples.jsonl"
    lines = path.read_text().splitlines() if path.exists() else []
    return [json.loads(line)["id"] for line in lines]


async def until(condition: Any) -> None:
    while not condition():
        await asyncio.sleep(0.01)


def test_cancelling_run_task_keeps_the_finished_records(tmp_path: Path) -> None:
    gates = Gates(fast={0, 1})

    async def scenario() -> None:
        running = asyncio.ensure_future(
            run_task_async(GatedTask(gates), tmp_path, Runtime(concurrency=4))
        )
        # x-0, x-1 are written; x-2 .. x-5 wait in flight (concurrency 4)
        await until(lambda: len(ids_in(tmp_path)) == 2 and len(gates.started) == 6)
        running.cancel()
        with pytest.raises(asyncio.CancelledError):
            await running

    asyncio.run(scenario())
    assert sorted(ids_in(tmp_path)) == ["x-0", "x-1"]
    assert sorted(gates.cancelled) == [2, 3, 4, 5]  # the work in flight was cancelled
    assert not (tmp_path / "metrics.json").exists()
    again = run_task(GatedTask(Gates(set(), open_all=True)), tmp_path)
    assert (again.n_resumed, again.n_done_now) == (2, 4)  # 6 items: 2 kept, 4 done now


def test_a_first_signal_stops_starting_items_and_cancels_the_rest_after_the_grace(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_pending, "GRACE_S", 0.2)
    gates = Gates(fast={0, 1})

    async def scenario() -> None:
        running = asyncio.ensure_future(
            run_task_async(GatedTask(gates), tmp_path, Runtime(concurrency=3))
        )
        # x-0, x-1 written; x-2 in flight, then x-3 and x-4 take the freed places
        await until(lambda: len(ids_in(tmp_path)) == 2 and len(gates.started) == 5)
        signal.raise_signal(signal.SIGINT)  # the handler only asks the engine to stop
        assert stop_requested() == signal.SIGINT
        gates.event(3).set()  # x-3 finishes within the grace: its record is kept
        await running

    with graceful_interrupts(), pytest.raises(RunInterrupted) as stopped:
        asyncio.run(scenario())
    assert stop_requested() is None  # the handlers are gone with the block
    assert (stopped.value.signum, stopped.value.n_done_now, stopped.value.n_left) == (
        signal.SIGINT,
        3,  # x-0, x-1, x-3
        3,  # x-2, x-4 cancelled, x-5 never started
    )
    assert sorted(ids_in(tmp_path)) == ["x-0", "x-1", "x-3"]
    assert gates.started == [0, 1, 2, 3, 4]  # x-5 was never started
    assert sorted(gates.cancelled) == [2, 4]
    again = run_task(GatedTask(Gates(set(), open_all=True)), tmp_path)
    assert (again.n_resumed, again.n_done_now) == (3, 3)
    assert sorted(ids_in(tmp_path)) == [f"x-{i}" for i in range(6)]


def test_outside_the_item_loop_the_first_signal_interrupts_at_once() -> None:
    with graceful_interrupts(), pytest.raises(KeyboardInterrupt):
        signal.raise_signal(signal.SIGINT)
