"""Per-attempt and total deadlines of model-server calls (issue 27, item 9): an attempt is cut
at its deadline even when the server keeps trickling bytes, and a call ends at its total
deadline (attempts and waits together) with a reason naming the deadline. Bounds on elapsed
time are loose (several times the deadline), never exact."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from citegraph.errors import ConfigError, EndpointUnavailable
from citegraph.models import Deadlines, ModelOptions
from citegraph.models.chat._factory import chat_model
from citegraph.models.chat._openai import OpenAICompatibleChat
from citegraph.models.chat._types import ChatRequest
from citegraph.testing import FakeOpenAIServer, FakeReply

GUARD = 20.0  # the test fails (instead of hanging) when no deadline cuts the call


def ask(text: str) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}])


def timed_failure(model: Any) -> tuple[BaseException, float]:
    async def go() -> None:
        try:
            await asyncio.wait_for(model.generate(ask("Hi")), GUARD)
        finally:
            await model.aclose()

    started = time.monotonic()
    with pytest.raises(EndpointUnavailable) as caught:
        asyncio.run(go())
    return caught.value, time.monotonic() - started


def trickling(body: object) -> FakeReply:
    return FakeReply(text="a long answer " * 40, trickle=0.1)  # ~700 bytes: over a minute


def test_a_trickling_server_is_cut_at_the_attempt_deadline() -> None:
    with FakeOpenAIServer(reply=trickling) as server:
        model = OpenAICompatibleChat(
            "m", provider="vllm", base_url=server.base_url, timeout=0.5, max_retries=0
        )
        error, elapsed = timed_failure(model)
    assert "per-attempt deadline of 0.5 s" in str(error) and "--timeout" in str(error)
    assert elapsed < 3 * 0.5 + 1.0


def hanging(body: object) -> FakeReply:
    return FakeReply(delay=60)


def test_a_hanging_server_fails_the_call_at_the_total_deadline() -> None:
    with FakeOpenAIServer(reply=hanging) as server:
        model = OpenAICompatibleChat(
            "m",
            provider="vllm",
            base_url=server.base_url,
            timeout=0.3,
            total_timeout=1.0,
            max_retries=50,
            backoff_base=0.05,
        )
        error, elapsed = timed_failure(model)
        attempts = len(server.received)
    assert "total deadline of 1 s" in str(error) and "--total-timeout" in str(error)
    assert attempts >= 2  # attempts were cut and retried until the total deadline
    assert elapsed < 3 * 1.0 + 1.0


def test_deadlines_come_from_the_model_options_unless_given() -> None:
    options = ModelOptions(deadlines=Deadlines(0.7, 9.0))
    model = chat_model("vllm/m", options, base_url="http://localhost:1/v1")
    own = chat_model("vllm/m", options, base_url="http://localhost:1/v1", timeout=3.0)
    assert isinstance(model, OpenAICompatibleChat) and isinstance(own, OpenAICompatibleChat)
    assert (model.timeout, model.total_timeout) == (0.7, 9.0)
    assert (own.timeout, own.total_timeout) == (3.0, 9.0)
    plain = chat_model("vllm/m", base_url="http://localhost:1/v1")
    assert isinstance(plain, OpenAICompatibleChat)
    assert (plain.timeout, plain.total_timeout) == (120.0, None)
    with pytest.raises(ConfigError, match="timeout must be a positive"):
        Deadlines(0, None)
