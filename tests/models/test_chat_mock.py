"""MockChat: scripted outputs, recorded requests, injected failures; and the mock factory spec."""

from __future__ import annotations

import asyncio
import doctest

import pytest

from citegraph.errors import ClientError, ModelError, ServerError
from citegraph.models.chat import _mock as _chat_mock
from citegraph.models.chat._factory import chat_model
from citegraph.models.chat._mock import DEFAULT_MOCK_OUTPUT, MockChat
from citegraph.models.chat._types import ChatModel, ChatRequest, GenerateConfig, Generation


def ask(text: str, **config: object) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}], GenerateConfig(**config))  # type: ignore[arg-type]


def one(model: ChatModel, request: ChatRequest) -> Generation:
    return asyncio.run(model.generate(request))


def test_list_in_order_then_a_clear_error() -> None:
    model = MockChat(["first", "second"])
    assert one(model, ask("a")).text == "first"
    assert one(model, ask("b")).text == "second"
    with pytest.raises(ModelError, match="ran out of scripted outputs: 2 given, this is request 3"):
        one(model, ask("c"))
    assert [r.messages[0].content for r in model.requests] == ["a", "b", "c"]


def test_callable_fixed_and_default_outputs() -> None:
    shout = MockChat(
        lambda request: f"{request.messages[-1].content.upper()} t={request.config.temperature}"
    )
    assert one(shout, ask("hi", temperature=0.0)).text == "HI t=0.0"
    fixed = MockChat("always this")
    assert [one(fixed, ask(q)).text for q in ("a", "b", "c")] == ["always this"] * 3
    assert one(MockChat(), ask("a")).text == DEFAULT_MOCK_OUTPUT


def test_generation_fields() -> None:
    model = MockChat(["Paris is the capital [1]."], name="mock/writer", finish_reason="length")
    request = ChatRequest.of(
        [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Capital of France?"},
        ]
    )
    gen = one(model, request)
    assert (gen.model, gen.finish_reason, gen.cached, gen.attempts) == (
        "writer",
        "length",
        False,
        1,
    )
    # words: "Be brief. Capital of France?" = 5; "Paris is the capital [1]." = 5
    assert (gen.usage.prompt_tokens, gen.usage.completion_tokens) == (5, 5)
    assert model.requests == [request]


def test_name_and_protocol() -> None:
    assert MockChat(name="judge").name == "mock/judge"
    model = MockChat()
    assert (model.name, model.endpoint) == ("mock/mock", "mock")
    assert isinstance(model, ChatModel)


def test_injected_failures() -> None:
    model = MockChat(["ok"], fail_times=2)
    for _ in range(2):
        with pytest.raises(ServerError, match="scripted failure"):
            one(model, ask("q"))
    assert one(model, ask("q")).text == "ok"
    assert (model.calls, len(model.requests)) == (3, 3)

    custom = MockChat("x", fail_times=1, error=ClientError("bad prompt", status=400))
    with pytest.raises(ClientError, match="bad prompt"):
        one(custom, ask("q"))
    assert one(custom, ask("q")).text == "x"


def test_script_returning_a_non_string_is_a_model_error() -> None:
    with pytest.raises(ModelError, match="returned int"):
        one(MockChat(lambda request: 42), ask("q"))  # type: ignore[arg-type, return-value]
    with pytest.raises(TypeError):
        MockChat(["a", 1])  # type: ignore[list-item]


def test_concurrent_use_serves_each_output_once() -> None:
    model = MockChat([f"out {i}" for i in range(6)])

    async def go() -> list[Generation]:
        return list(await asyncio.gather(*(model.generate(ask(f"q{i}")) for i in range(6))))

    assert sorted(g.text for g in asyncio.run(go())) == [f"out {i}" for i in range(6)]


def test_factory_mock_specs() -> None:
    model = chat_model("mock/judge", mock_outputs=["yes", "no"])
    assert isinstance(model, MockChat) and model.name == "mock/judge"
    assert [one(model, ask("q")).text for _ in range(2)] == ["yes", "no"]
    plain = chat_model("mock")
    assert plain.name == "mock/mock" and one(plain, ask("q")).text == DEFAULT_MOCK_OUTPUT


def test_docstring_example() -> None:
    assert doctest.testmod(_chat_mock).failed == 0


def test_scripted_failures_hit_the_first_calls_even_when_they_overlap() -> None:
    """Concurrent calls: the first ``fail_times`` calls fail, whatever arrives meanwhile."""
    import asyncio

    from citegraph.errors import ServerError
    from citegraph.models import ChatRequest, MockChat

    model = MockChat("ok", fail_times=1)
    request = ChatRequest.of([{"role": "user", "content": "x"}])

    async def both() -> list[object]:
        return await asyncio.gather(
            model.generate(request), model.generate(request), return_exceptions=True
        )

    first, second = asyncio.run(both())
    assert isinstance(first, ServerError)
    assert getattr(second, "text", None) == "ok"
