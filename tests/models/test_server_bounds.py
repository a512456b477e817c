"""A model server's answer is bounded (issue 37, items 2 and 12): a body past the cap (declared,
streamed without end, or a gzip bomb) fails the call at once with the reason, on every route
and status; a chat reply past its cap fails too; a Retry-After longer than the client waits is
capped and said (a warning, and the final error), and one past the total deadline fails the
call at once, saying so, instead of waiting in silence."""

from __future__ import annotations

import asyncio
import gzip
import json
from typing import Any

import pytest

from _chat_helpers import generate_all as generate
from citegraph.errors import ConfigError, RateLimited, ResponseFormatError, ServerError
from citegraph.io import Deadlines, ServerWaitWarning
from citegraph.models import ModelOptions, chat_model, reranker_model
from citegraph.models.chat._openai import OpenAICompatibleChat
from citegraph.models.chat._types import ChatRequest
from citegraph.models.server import MAX_REPLY_CHARS
from citegraph.models.server._http import DEFAULT_MAX_RESPONSE_BYTES
from citegraph.testing import FakeOpenAIServer, FakeReply

MIB = 2**20
KEY_ENV = "CITEGRAPH_TEST_CHAT_KEY"


def ask(text: str = "Hi") -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}])


def local(server: FakeOpenAIServer, **kw: Any) -> OpenAICompatibleChat:
    kw.setdefault("api_key_env", KEY_ENV)
    kw.setdefault("max_retries", 0)
    kw.setdefault("timeout", 20)  # unbounded reads would run into it, never the capped ones
    return OpenAICompatibleChat("fake-model", provider="vllm", base_url=server.base_url, **kw)


def completion(text: str) -> bytes:
    choice = {"index": 0, "message": {"role": "assistant", "content": text}}
    return json.dumps({"model": "fake-model", "choices": [choice]}).encode()


# -- the body cap ---------------------------------------------------------------------------------


def test_the_default_cap_is_documented_and_the_options_raise_it() -> None:
    with FakeOpenAIServer() as server:
        assert local(server).max_response_bytes == DEFAULT_MAX_RESPONSE_BYTES == 32 * MIB
        options = ModelOptions(deadlines=Deadlines(max_response_bytes=64 * MIB))
        raised = chat_model("vllm/m", options.serving(server.base_url))
        assert isinstance(raised, OpenAICompatibleChat)
        assert raised.max_response_bytes == 64 * MIB
        assert local(server, max_response_bytes=MIB).max_response_bytes == MIB
    with pytest.raises(ConfigError, match="max_response_bytes"):
        OpenAICompatibleChat("m", provider="vllm", max_response_bytes=0)


def test_an_announced_huge_body_fails_before_it_is_read() -> None:
    # Content-Length: 100000000000, then 8 MiB of a body that never ends in time
    reply = FakeReply(headers={"Content-Length": "100000000000"}, filler=8 * MIB)
    with FakeOpenAIServer(lambda _b: reply) as server, pytest.raises(ResponseFormatError) as caught:
        generate(local(server, max_response_bytes=MIB), ask())
    message = str(caught.value)
    assert "100000000000 bytes" in message and "1 MiB" in message
    assert "max_response_bytes" in message and "--max-response-mb" in message


def test_an_endless_chunked_body_is_cut_at_the_cap() -> None:
    # a valid completion followed by 64 MiB of spaces (still JSON): read whole before
    reply = FakeReply(text="ok", filler=64 * MIB)
    with FakeOpenAIServer(lambda _b: reply) as server:
        with pytest.raises(ResponseFormatError, match=r"more than the 1 MiB"):
            generate(local(server, max_response_bytes=MIB), ask())
        assert server.body_bytes_sent < 40 * MIB  # the client hung up early
        (request,) = server.received  # a too-large body is not retried
    assert request.path == "/v1/chat/completions"


def test_a_body_under_the_cap_is_read() -> None:
    reply = FakeReply(text="fine", filler=MIB // 2)
    with FakeOpenAIServer(lambda _b: reply) as server:
        (generation,) = generate(local(server, max_response_bytes=MIB), ask())
    assert generation.text == "fine"


def test_a_gzip_bomb_is_cut_at_the_decoded_cap() -> None:
    bomb = gzip.compress(completion("ok") + b" " * (64 * MIB))  # ~64 KiB on the wire
    assert len(bomb) < MIB
    reply = FakeReply(body=bomb, headers={"Content-Encoding": "gzip"})
    too_large = pytest.raises(ResponseFormatError, match=r"more than the 1 MiB")
    with FakeOpenAIServer(lambda _b: reply) as server, too_large:
        generate(local(server, max_response_bytes=MIB), ask())
    small = FakeReply(body=gzip.compress(completion("zipped")), headers=reply.headers)
    with FakeOpenAIServer(lambda _b: small) as server:
        (generation,) = generate(local(server, max_response_bytes=MIB), ask())
    assert generation.text == "zipped"  # a compressed answer under the cap still reads


def test_a_huge_error_body_is_cut_too() -> None:
    reply = FakeReply(status=503, text="busy", filler=64 * MIB)
    with FakeOpenAIServer(lambda _b: reply) as server:
        with pytest.raises(ResponseFormatError, match=r"more than the 1 MiB"):
            generate(local(server, max_response_bytes=MIB, max_retries=3), ask())
        assert len(server.received) == 1


def test_a_scorer_server_is_capped_by_its_options() -> None:
    reply = FakeReply(filler=64 * MIB)  # the route's numbers, then spaces
    with FakeOpenAIServer(lambda _b: reply) as server:

        async def score() -> list[float]:
            options = ModelOptions(deadlines=Deadlines(timeout=20, max_response_bytes=MIB))
            model = reranker_model("vllm/fake-reranker", options.serving(server.base_url))
            try:
                return await model.score([("q", "d")])
            finally:
                await model.aclose()

        with pytest.raises(ResponseFormatError, match=r"more than the 1 MiB"):
            asyncio.run(score())


# -- the reply cap --------------------------------------------------------------------------------


def test_a_reply_past_the_reply_cap_fails_the_call() -> None:
    assert MAX_REPLY_CHARS == 1_000_000
    long_text = "word " * 220_000  # 1.1 million characters, well under the body cap
    with FakeOpenAIServer(long_text) as server:
        with pytest.raises(ResponseFormatError) as caught:
            generate(local(server), ask())
        message = str(caught.value)
        assert "1,100,000 characters" in message and "1,000,000" in message
        assert len(message) < 1_000  # the reason, not the reply
        (generation,) = generate(local(server, max_reply_chars=2_000_000), ask())
    assert len(generation.text) == 1_100_000


# -- Retry-After ----------------------------------------------------------------------------------


def test_a_retry_after_past_the_longest_wait_is_capped_saying_so() -> None:
    reply = FakeReply(status=429, text="slow down", headers={"Retry-After": "999999"})
    with FakeOpenAIServer(lambda _b: reply) as server:
        model = local(server, max_retries=2, max_retry_wait=0.05)
        said = pytest.warns(ServerWaitWarning, match=r"asked to wait 999999 s .* at most 0\.05 s")
        with said, pytest.raises(RateLimited) as caught:
            generate(model, ask())
        assert len(server.received) == 3  # two capped waits, then the reason
    message = str(caught.value)
    assert "gave up after 3 attempt(s)" in message and "Retry-After" in message
    assert "999999 s" in message and "max_retry_wait" in message
    assert caught.value.retry_after == 999999


def test_a_retry_after_past_the_total_deadline_fails_at_once_saying_so() -> None:
    reply = FakeReply(status=429, text="slow down", headers={"Retry-After": "999999"})
    with FakeOpenAIServer(lambda _b: reply) as server:
        model = local(server, max_retries=5, max_retry_wait=60, total_timeout=3)
        with pytest.raises(RateLimited) as caught:
            generate(model, ask())
        assert len(server.received) == 1  # no wait that cannot end in a retry
    message = str(caught.value)
    assert "999999 s" in message and "--total-timeout" in message and "not retried" in message


def test_a_server_error_asking_past_the_total_deadline_fails_at_once() -> None:
    reply = FakeReply(status=503, text="restarting", headers={"Retry-After": "30"})
    with FakeOpenAIServer(lambda _b: reply) as server:
        model = local(server, max_retries=5, max_retry_wait=60, total_timeout=2)
        with pytest.raises(ServerError) as caught:
            generate(model, ask())
        assert len(server.received) == 1
    assert "30 s" in str(caught.value) and "--total-timeout" in str(caught.value)


def test_a_retry_after_within_the_bounds_is_still_honoured() -> None:
    replies = [FakeReply(status=429, headers={"Retry-After": "0.2"}), FakeReply(text="after")]
    with FakeOpenAIServer(lambda _b: replies.pop(0) if replies else "done") as server:
        (generation,) = generate(local(server, max_retries=2, total_timeout=10), ask())
        first, second = server.times
    assert generation.text == "after" and generation.attempts == 2
    assert second - first >= 0.2
