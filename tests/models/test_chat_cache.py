"""CachedChatModel: keys, hits and misses, over a real HTTP server and over MockChat."""

from __future__ import annotations

import asyncio
import doctest
import hashlib
from pathlib import Path
from typing import Any

import pytest

from _chat_helpers import generate_all as run
from citegraph.errors import ServerError
from citegraph.io import SQLiteCache
from citegraph.models.chat import _cache as _chat_cache
from citegraph.models.chat._cache import CachedChatModel, chat_cache_key
from citegraph.models.chat._factory import chat_model
from citegraph.models.chat._mock import MockChat
from citegraph.models.chat._types import ChatModel, ChatRequest, GenerateConfig, Generation
from citegraph.testing import FakeOpenAIServer


def ask(text: str, **config: Any) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}], GenerateConfig(**config))


def test_key_is_sha256_of_the_canonical_request() -> None:
    canonical = (
        '{"config":{"max_tokens":512,"seed":0,"stop":[],"temperature":0.5,"top_p":1.0},'
        '"endpoint":"mock","messages":[{"content":"Q","role":"user"}],"model":"mock/mock"}'
    )
    expected = hashlib.sha256(canonical.encode()).hexdigest()
    assert chat_cache_key("mock", "mock/mock", ask("Q")) == expected
    assert CachedChatModel(MockChat(), SQLiteCache(None)).request_key(ask("Q")) == expected


def test_rerun_sends_no_requests(tmp_path: Path) -> None:
    path = tmp_path / "chat.sqlite"
    questions = [ask(f"question {i}") for i in range(3)]
    with FakeOpenAIServer() as server:
        spec = "vllm/fake-model"
        kw: dict[str, Any] = {"base_url": server.base_url, "cache": path}
        first = chat_model(spec, **kw)
        assert isinstance(first, CachedChatModel)
        cold = run(first, *questions)
        assert len(server.requests) == 3 and (first.hits, first.misses) == (0, 3)

        second = chat_model(spec, **kw)  # a new process would do the same: a new object, one file
        warm = run(second, *questions)
        assert len(server.requests) == 3  # nothing new reached the server
        assert isinstance(second, CachedChatModel) and (second.hits, second.misses) == (3, 0)
    assert [g.text for g in warm] == ["question 0", "question 1", "question 2"]
    assert all(g.cached for g in warm) and not any(g.cached for g in cold)
    assert [g.usage for g in warm] == [g.usage for g in cold]
    assert [g.attempts for g in warm] == [1, 1, 1]


def test_any_change_in_the_request_misses() -> None:
    mock = MockChat(lambda request: f"seed={request.config.seed}")
    model = CachedChatModel(mock, SQLiteCache(":memory:"))
    gens = run(model, ask("Q", seed=1))
    gens += run(model, ask("Q", seed=2))
    gens += run(model, ask("Q", seed=1, temperature=0.0))
    gens += run(model, ask("Q!", seed=1))
    gens += run(model, ask("Q", seed=1))
    assert [g.cached for g in gens] == [False, False, False, False, True]
    assert (model.hits, model.misses, mock.calls) == (1, 4, 4)
    assert gens[-1].text == "seed=1"


def test_models_sharing_a_cache_do_not_see_each_other() -> None:
    cache = SQLiteCache(":memory:")
    judge = CachedChatModel(MockChat(["judge says"], name="mock/judge"), cache)
    writer = CachedChatModel(MockChat(["writer says"], name="mock/writer"), cache)
    assert run(judge, ask("Q"))[0].text == "judge says"
    assert run(writer, ask("Q"))[0].text == "writer says"
    assert (judge.misses, writer.misses) == (1, 1)
    assert len(cache) == 2


def test_errors_are_not_cached() -> None:
    cache = SQLiteCache(":memory:")
    model = CachedChatModel(MockChat("fine", fail_times=1), cache)
    with pytest.raises(ServerError):
        run(model, ask("Q"))
    assert len(cache) == 0
    assert run(model, ask("Q"))[0].text == "fine"
    assert run(model, ask("Q"))[0].cached
    assert len(cache) == 1


def test_concurrent_identical_requests_stay_consistent() -> None:
    mock = MockChat(lambda request: "same answer")
    cache = SQLiteCache(":memory:")
    model = CachedChatModel(mock, cache)
    gens = run(model, *[ask("Q")] * 5)
    assert [g.text for g in gens] == ["same answer"] * 5
    assert model.hits + model.misses == 5 and mock.calls == model.misses
    assert len(cache) == 1
    later = run(model, ask("Q"))[0]
    assert later.cached and later.text == "same answer"


def test_unreadable_entry_is_a_miss_and_is_overwritten() -> None:
    cache = SQLiteCache(":memory:")
    model = CachedChatModel(MockChat(["fresh"]), cache)
    cache.set(model.request_key(ask("Q")), {"not": "a generation"})
    assert run(model, ask("Q"))[0].text == "fresh"
    assert cache.get(model.request_key(ask("Q")))["text"] == "fresh"


def test_name_endpoint_and_ownership(tmp_path: Path) -> None:
    model = chat_model("mock/m", cache=tmp_path / "c.sqlite")
    assert isinstance(model, CachedChatModel) and isinstance(model, ChatModel)
    assert (model.name, model.endpoint, model.owns_cache) == ("mock/m", "mock", True)
    assert model.cache.namespace == "chat"
    shared = SQLiteCache(":memory:")
    wrapped = chat_model("mock", cache=shared)
    assert isinstance(wrapped, CachedChatModel) and wrapped.cache is shared
    assert not wrapped.owns_cache


def test_docstring_example() -> None:
    assert doctest.testmod(_chat_cache).failed == 0


def test_wrapper_reports_the_inner_request_limit() -> None:
    """Runs size their concurrency by the model's limit; the cache must not hide it."""
    from citegraph.models.chat import OpenAICompatibleChat

    inner = OpenAICompatibleChat(
        "m", provider="vllm", base_url="http://127.0.0.1:9/v1", concurrency=3
    )
    assert CachedChatModel(inner, SQLiteCache(":memory:")).concurrency == 3
    assert CachedChatModel(MockChat("x"), SQLiteCache(":memory:")).concurrency is None


class _Released:
    """A chat model whose one reply comes when the test releases it."""

    name = "released"
    endpoint = "test"

    def __init__(self) -> None:
        self.release = asyncio.Event()

    async def generate(self, request: ChatRequest) -> Generation:
        await self.release.wait()
        return Generation(text="finished", model="released")

    async def aclose(self) -> None:
        return None


def test_a_call_that_finished_is_cached_even_when_its_caller_is_cancelled() -> None:
    """Ctrl-C cancels a run's work; a model call that had already finished (its caller not yet
    resumed) is stored, so the resumed run finds it in the cache."""
    inner = _Released()
    model = CachedChatModel(inner, SQLiteCache(":memory:"))
    request = ask("Q?")

    async def scenario() -> None:
        caller = asyncio.ensure_future(model.generate(request))
        await asyncio.sleep(0)  # the caller waits for the model
        inner.release.set()
        await asyncio.sleep(0)  # the model's call finishes; its caller is not resumed yet
        caller.cancel()
        with pytest.raises(asyncio.CancelledError):
            await caller

    asyncio.run(scenario())
    hit = model.lookup(request)
    assert hit is not None and (hit.text, hit.cached) == ("finished", True)
