"""An item that is done with its model call gives its place back (runs.hand_back_slot): the next
item's call starts before this one's scoring, and the engine never has more calls in flight than
its concurrency."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from citegraph.runs import RunDir, hand_back_slot, run_pending_async, run_pending_batches_async


def _run(tmp_path: Path, n: int, concurrency: int, *, hand_back: bool) -> list[str]:
    """Run ``n`` items; each 'calls a model' (a sleep) then 'scores' (a sleep); returns the
    order of events, and checks that no more than ``concurrency`` calls were in flight."""
    events: list[str] = []
    calls = 0

    async def work(item: int) -> dict[str, Any]:
        nonlocal calls
        calls += 1
        assert calls <= concurrency
        events.append(f"call {item}")
        await asyncio.sleep(0.01)
        calls -= 1
        if hand_back:
            await hand_back_slot()
            await hand_back_slot()  # a second time does nothing
        await asyncio.sleep(0.05)  # scoring, long enough to see who starts meanwhile
        events.append(f"scored {item}")
        return {"id": str(item)}

    run = RunDir.open(tmp_path / ("on" if hand_back else "off"), {"t": 1})
    items = [(str(i), i) for i in range(n)]
    asyncio.run(run_pending_async(run, items, work, concurrency=concurrency))
    assert sorted(run.done) == sorted(str(i) for i in range(n))
    return events


def test_the_next_call_starts_before_the_scoring(tmp_path: Path) -> None:
    events = _run(tmp_path, 4, 2, hand_back=True)
    assert events.index("call 2") < events.index("scored 0")
    assert events.index("call 3") < events.index("scored 1")


def test_without_it_an_item_holds_its_place_to_the_end(tmp_path: Path) -> None:
    events = _run(tmp_path, 4, 2, hand_back=False)
    assert events.index("call 2") > events.index("scored 0")


def test_it_does_nothing_outside_the_engine_or_in_a_batch(tmp_path: Path) -> None:
    asyncio.run(hand_back_slot())  # no engine: nothing to give back, no error
    in_flight = 0
    peak = 0

    async def work(batch: Any) -> list[dict[str, Any]]:
        nonlocal in_flight, peak
        in_flight += 1
        peak = max(peak, in_flight)
        await hand_back_slot()  # a batch keeps its place: its other items still need it
        await asyncio.sleep(0.01)
        in_flight -= 1
        return [{"id": str(i)} for i in batch]

    run = RunDir.open(tmp_path, {"t": 2})
    items = [(str(i), i) for i in range(8)]
    asyncio.run(run_pending_batches_async(run, items, work, batch_size=2, concurrency=1))
    assert peak == 1 and len(run.done) == 8
