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


def test_prepare_ahead_readies_the_next_items_while_the_calls_run(tmp_path: Path) -> None:
    """With ``prepare_ahead`` twice the concurrency is admitted: the next items are prepared
    while the calls are in flight, and the model's own limit still bounds the calls."""
    events: list[str] = []
    gate = asyncio.Semaphore(2)  # the model's own limit (a server's endpoint limit)
    calls = peak = 0

    async def work(batch: Any) -> list[dict[str, Any]]:
        nonlocal calls, peak
        (item,) = batch
        events.append(f"prepared {item}")
        async with gate:
            calls += 1
            peak = max(peak, calls)
            await asyncio.sleep(0.02)
            calls -= 1
        events.append(f"answered {item}")
        await hand_back_slot()
        return [{"id": str(item)}]

    async def go(run: RunDir) -> None:
        items = [(str(i), i) for i in range(8)]
        await run_pending_batches_async(
            run, items, work, batch_size=1, concurrency=2, prepare_ahead=True
        )

    run = RunDir.open(tmp_path, {"t": 3})
    asyncio.run(go(run))
    assert len(run.done) == 8 and peak == 2
    assert events.index("prepared 2") < events.index("answered 0")
    assert events.index("prepared 3") < events.index("answered 0")
    assert events.index("prepared 4") > events.index("answered 0")  # 2 x 2 admitted, no more


def test_kalma_run_prepares_ahead_for_a_served_answerer_only() -> None:
    from citegraph.kalma.run._answer import RunModels
    from citegraph.kalma.run._task import KalmaRunTask
    from citegraph.models import MockChat, nli_model
    from citegraph.models.chat._openai import OpenAICompatibleChat

    served = OpenAICompatibleChat("m", provider="vllm", base_url="http://127.0.0.1:9/v1")
    task = KalmaRunTask.__new__(KalmaRunTask)  # prepare_ahead reads only the models

    def models(answerer: Any) -> RunModels:
        return RunModels.model_construct(answerer=answerer, nli=nli_model("lexical"))

    assert task.prepare_ahead(models(served)) is True
    assert task.prepare_ahead(models(MockChat("x"))) is False


def test_caqa_judge_prepares_ahead_for_a_served_llm_judge_only() -> None:
    from citegraph.caqa.judge._llm import LLMJudge
    from citegraph.caqa.judge._task import CaqaJudgeTask
    from citegraph.models import MockChat
    from citegraph.models.chat._openai import OpenAICompatibleChat

    served = OpenAICompatibleChat("m", provider="vllm", base_url="http://127.0.0.1:9/v1")
    task = CaqaJudgeTask.__new__(CaqaJudgeTask)  # prepare_ahead reads only the models
    assert task.prepare_ahead(LLMJudge(served)) is True
    assert task.prepare_ahead(LLMJudge(MockChat("x"))) is False
