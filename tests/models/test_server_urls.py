"""Credentials in a server URL (issue 27, item 10): used for requests, never shown; a base URL
with a query string keeps the route before the query."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from citegraph.errors import ClientError
from citegraph.io import redact_url, redact_urls_in, split_query
from citegraph.models.chat import chat_cache_key
from citegraph.models.chat._factory import chat_model
from citegraph.models.chat._openai import OpenAICompatibleChat
from citegraph.models.chat._types import ChatRequest
from citegraph.testing import FakeOpenAIServer, FakeReply


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://gpu:8000/v1", "http://gpu:8000/v1"),
        ("http://me:pw@gpu:8000/v1", "http://***@gpu:8000/v1"),
        ("http://token-only@gpu/v1", "http://***@gpu/v1"),
        ("http://h/v1?api-key=s3", "http://h/v1?api-key=***"),
        ("http://h/v1?api_key=s3&mode=fast", "http://h/v1?api_key=***&mode=fast"),
        ("http://h/v1?key=a&token=b&access_token=c", "http://h/v1?key=***&token=***&access_token=***"),
        ("http://h/v1?sig=a&X-Api-Key=b&AccessToken=c", "http://h/v1?sig=***&X-Api-Key=***&AccessToken=***"),
        ("http://h/v1?client_secret=a&password=b", "http://h/v1?client_secret=***&password=***"),
        ("http://h/v1?model=m&flag", "http://h/v1?model=m&flag"),
    ],
)  # fmt: skip
def test_redact_url(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_urls_in_a_command_line() -> None:
    line = "citegraph kalma run --base-url 'http://u:pw@h/v1?api-key=s3' --out runs/x"
    shown = "citegraph kalma run --base-url 'http://***@h/v1?api-key=***' --out runs/x"
    assert redact_urls_in(line) == shown


def test_split_query() -> None:
    base, query = split_query("http://h/v1?api-key=x%2By&b=1")
    assert (base, query) == ("http://h/v1", {"api-key": "x+y", "b": "1"})


def ask(text: str) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}])


def generate(model: Any, request: ChatRequest) -> Any:
    async def go() -> Any:
        try:
            return await model.generate(request)
        finally:
            await model.aclose()

    return asyncio.run(go())


def test_a_query_string_stays_after_the_route() -> None:
    with FakeOpenAIServer() as server:
        model = chat_model("vllm/fake-model", base_url=f"{server.base_url}?api-key=s3cret")
        assert generate(model, ask("Hi")).text == "Hi"
        assert server.received[0].path == "/v1/chat/completions?api-key=s3cret"


def test_credentials_are_used_but_never_shown(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VLLM_API_KEY", raising=False)

    def refuse(body: object) -> FakeReply:
        return FakeReply(status=400, text="no such model")

    with FakeOpenAIServer(reply=refuse) as server:
        host = server.base_url.split("://", 1)[1]
        url = f"http://alice:pw-s3cret@{host}?api-key=q-s3cret"
        model = OpenAICompatibleChat("fake-model", provider="vllm", base_url=url, max_retries=0)
        assert "s3cret" not in model.endpoint and "s3cret" not in repr(model)
        with pytest.raises(ClientError) as caught:
            generate(model, ask("Hi"))
        received = server.received[0]
    assert received.path.endswith("?api-key=q-s3cret")  # the real URL was used
    assert received.headers["authorization"].startswith("Basic ")  # httpx: user:password
    message = str(caught.value)
    assert "no such model" in message and "***@" in message
    assert "s3cret" not in message and "s3cret" not in str(caught.value.url)
    plain = chat_cache_key(f"http://{host}", "vllm/m", ask("Hi"))
    shown = chat_cache_key(f"http://***@{host}?api-key=***", "vllm/m", ask("Hi"))
    assert model.endpoint == f"http://***@{host}?api-key=***" and plain != shown
