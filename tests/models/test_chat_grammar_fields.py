"""How each OpenAI-compatible server receives a grammar, checked on the wire (FakeOpenAIServer).

vLLM: ``structured_outputs: {"grammar": <GBNF>}``; llama.cpp: ``grammar: <GBNF>``; OpenAI, Ollama
and any other OpenAI-compatible server: a strict ``response_format`` of the JSON schema. Without
a grammar the body is the one sent before grammars existed. The response cache keys a grammar's
requests apart, and forgets a reply its caller could not use.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from _chat_helpers import generate_all
from citegraph.errors import ConfigError
from citegraph.io import SQLiteCache
from citegraph.models import ChatRequest, GenerateConfig, Grammar
from citegraph.models.chat import CachedChatModel, forget_cached
from citegraph.models.chat._openai import OpenAICompatibleChat, grammar_fields
from citegraph.testing import FakeOpenAIServer

SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {"word": {"type": "string", "enum": ["yes", "no"]}},
    "required": ["word"],
    "additionalProperties": False,
}
GRAMMAR = Grammar(
    name="yes-no-v1", lark='start: "yes" | "no"', gbnf='root ::= "yes" | "no"', json_schema=SCHEMA
)
FREE_KEYS = {"model", "messages", "temperature", "top_p", "max_tokens", "seed"}


def _request(grammar: Grammar | None = GRAMMAR) -> ChatRequest:
    messages = ChatRequest.of([{"role": "user", "content": "Yes or no?"}]).messages
    return ChatRequest(messages=messages, config=GenerateConfig(seed=3), grammar=grammar)


def _model(server: FakeOpenAIServer, provider: str) -> OpenAICompatibleChat:
    return OpenAICompatibleChat(
        "fake-model", provider=provider, base_url=server.base_url, api_key_env="CITEGRAPH_TEST_KEY"
    )


@pytest.mark.parametrize(
    ("provider", "mode", "field"),
    [
        ("vllm", "vllm-grammar", {"structured_outputs": {"grammar": 'root ::= "yes" | "no"'}}),
        ("llamacpp", "gbnf", {"grammar": 'root ::= "yes" | "no"'}),
        (
            "openai",
            "json-schema",
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "yes_no_v1", "strict": True, "schema": SCHEMA},
                }
            },
        ),
        (
            "ollama",
            "json-schema",
            {
                "response_format": {
                    "type": "json_schema",
                    "json_schema": {"name": "yes_no_v1", "strict": True, "schema": SCHEMA},
                }
            },
        ),
    ],
)
def test_each_server_gets_its_field(provider: str, mode: str, field: dict[str, Any]) -> None:
    with FakeOpenAIServer(reply="yes") as server:
        model = _model(server, provider)
        assert model.grammar_mode == mode
        [constrained] = generate_all(model, _request())
        [free] = generate_all(model, _request(None))
        body, free_body = server.requests
    assert set(free_body) == FREE_KEYS  # no grammar: the body as before grammars existed
    assert body == free_body | field
    assert constrained.raw == {
        "id": "chatcmpl-fake-1",
        "grammar": "yes-no-v1",
        "grammar_mode": mode,
    }
    assert free.raw == {"id": "chatcmpl-fake-2"}


def test_grammar_fields_refuse_what_a_server_cannot_apply() -> None:
    no_json = GRAMMAR.model_copy(update={"json_schema": None})
    with pytest.raises(
        ConfigError, match="'yes-no-v1' has no form for a server of mode 'json-schema'"
    ):
        grammar_fields("json-schema", no_json)
    assert grammar_fields("gbnf", no_json) == {"grammar": 'root ::= "yes" | "no"'}
    with pytest.raises(ConfigError, match="mode 'logits'"):
        grammar_fields("logits", GRAMMAR)


def test_the_cache_keys_grammars_apart_and_forgets_on_request() -> None:
    with FakeOpenAIServer(reply="yes") as server:
        cache = SQLiteCache(":memory:")
        model = CachedChatModel(_model(server, "vllm"), cache)
        assert model.grammar_mode == "vllm-grammar"
        other = _request(GRAMMAR.model_copy(update={"gbnf": 'root ::= "no"'}))

        async def go() -> list[bool]:
            cached = []
            for request in (_request(), _request(None), other, _request()):
                cached.append((await model.generate(request)).cached)
            forget_cached(model, _request())
            forget_cached(model.inner, _request())  # not a cached model: nothing to forget
            cached.append((await model.generate(_request())).cached)
            model.forget(_request(None))  # the others stay
            cached.append((await model.generate(other)).cached)
            return cached

        assert asyncio.run(go()) == [False, False, False, True, False, True]
        assert len(server.requests) == 4
