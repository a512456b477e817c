"""A reply served from the response cache shared no ``generate`` call: it carries no
``batch_size`` (in ``Generation.raw`` or in the record :func:`generation_record` makes of it),
while a fresh local reply keeps the size of its call."""

from __future__ import annotations

import asyncio
import doctest
from pathlib import Path

from citegraph.io import SQLiteCache
from citegraph.models.chat import CachedChatModel, generation_record
from citegraph.models.chat import _record as _chat_record
from citegraph.models.chat._types import ChatRequest, Generation


class BatchedStub:
    """A chat model that answers as a local model in a batch of three does."""

    name = "hf/stub"
    endpoint = "stub"

    def __init__(self) -> None:
        self.calls = 0

    async def generate(self, request: ChatRequest) -> Generation:
        self.calls += 1
        raw = {"prompt_format": "chat_template", "batch_size": 3}
        return Generation(text="Paris.", model="stub", latency_s=0.5, raw=raw)

    async def aclose(self) -> None:
        return None


def test_a_cached_reply_has_no_batch_size(tmp_path: Path) -> None:
    request = ChatRequest.of([{"role": "user", "content": "Where is Paris?"}])
    inner = BatchedStub()
    model = CachedChatModel(inner, SQLiteCache(tmp_path / "chat.sqlite"))
    fresh = asyncio.run(model.generate(request))
    hit = asyncio.run(model.generate(request))
    assert inner.calls == 1 and (model.hits, model.misses) == (1, 1)
    assert fresh.raw == {"prompt_format": "chat_template", "batch_size": 3}
    assert hit.cached and hit.raw == {"prompt_format": "chat_template"}  # other extras kept
    assert generation_record(fresh) == {
        "model": "stub",
        "finish_reason": None,
        "usage": {"prompt_tokens": None, "completion_tokens": None},
        "cached": False,
        "attempts": 1,
        "latency_s": 0.5,
        "batch_size": 3,
    }
    recorded = generation_record(hit)
    assert recorded["cached"] is True and "batch_size" not in recorded
    assert {k: v for k, v in recorded.items() if k != "cached"} == {
        k: v for k, v in generation_record(fresh).items() if k not in ("cached", "batch_size")
    }


def test_a_served_reply_records_no_batch_size() -> None:
    served = Generation(text="Paris.", model="gpt", raw={"id": "chatcmpl-1"})
    assert "batch_size" not in generation_record(served)


def test_record_docstring_examples() -> None:
    assert doctest.testmod(_chat_record).failed == 0
