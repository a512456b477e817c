"""OpenAICompatibleChat and chat_model against FakeOpenAIServer (real HTTP on 127.0.0.1)."""

from __future__ import annotations

import asyncio
import json
import socket
from typing import Any

import pytest

import citegraph
from _chat_helpers import generate_all as generate
from citegraph.errors import (
    ClientError,
    ConfigError,
    EndpointUnavailable,
    RateLimited,
    ResponseFormatError,
    ServerError,
)
from citegraph.io import ServerWaitWarning
from citegraph.models.chat._factory import PROVIDERS, chat_model, parse_model_spec
from citegraph.models.chat._openai import OpenAICompatibleChat, _retry_after
from citegraph.models.chat._types import ChatModel, ChatRequest, GenerateConfig
from citegraph.testing import FakeOpenAIServer, FakeReply

KEY_ENV = "CITEGRAPH_TEST_CHAT_KEY"


def ask(text: str, **config: Any) -> ChatRequest:
    return ChatRequest.of([{"role": "user", "content": text}], GenerateConfig(**config))


def local(server: FakeOpenAIServer, **kw: Any) -> OpenAICompatibleChat:
    kw.setdefault("backoff_base", 0.01)
    kw.setdefault("api_key_env", KEY_ENV)
    return OpenAICompatibleChat("fake-model", provider="vllm", base_url=server.base_url, **kw)


def sequence(*replies: str | FakeReply) -> Any:
    """A server script answering with ``replies`` in order, then "done"."""
    queue = list(replies)
    return lambda _body: queue.pop(0) if queue else "done"


# -- the request and the reply -------------------------------------------------------------------


def test_request_body_and_generation_fields() -> None:
    messages = [
        {"role": "system", "content": "Cite triples."},
        {"role": "user", "content": "Where was Ada born?"},
    ]
    config = GenerateConfig(temperature=0.0, top_p=0.9, max_tokens=64, seed=7, stop=("\n\n",))
    reply = FakeReply(text="Ada was born in London [1].", finish_reason="stop")
    with FakeOpenAIServer(lambda _body: reply) as server:
        (gen,) = generate(local(server), ChatRequest.of(messages, config))
        assert server.requests == [
            {
                "model": "fake-model",
                "messages": messages,
                "temperature": 0.0,
                "top_p": 0.9,
                "max_tokens": 64,
                "seed": 7,
                "stop": ["\n\n"],
            }
        ]
        assert server.received[0].path == "/v1/chat/completions"
    assert gen.text == "Ada was born in London [1]."
    assert gen.model == "fake-model"
    assert gen.finish_reason == "stop"
    # the fake server counts words: "Cite triples. Where was Ada born?" has 6, the reply 6
    assert (gen.usage.prompt_tokens, gen.usage.completion_tokens) == (6, 6)
    assert gen.attempts == 1 and not gen.cached
    assert gen.latency_s is not None and gen.latency_s > 0
    assert gen.raw == {"id": "chatcmpl-fake-1"}


def test_body_is_posted_as_json_verbatim() -> None:
    """The request body goes out as citegraph builds it (posted without the SDK's typed-parameter
    transform): a JSON content type, a response_format passed through unchanged, nothing added."""
    schema = {"type": "json_schema", "json_schema": {"name": "label", "schema": {"type": "object"}}}
    request = ChatRequest.of([{"role": "user", "content": "Hi"}], response_format=schema)
    with FakeOpenAIServer("ok") as server:
        model = local(server)
        generate(model, request)
        (received,) = server.received
    assert received.headers["content-type"] == "application/json"
    assert received.body == model.request_body(request)
    assert received.body["response_format"] == schema


def test_request_headers(monkeypatch: pytest.MonkeyPatch) -> None:
    """What the server sees besides the body: citegraph's user agent, the key as a bearer token,
    JSON both ways, the encodings the client decodes, the body's length; never OpenAI's own
    organisation or project headers on another server, nor an SDK's headers."""
    monkeypatch.setenv("OPENAI_ORG_ID", "org-private")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-private")
    with FakeOpenAIServer("ok") as server:
        generate(local(server, timeout=42.0), ask("Hi"))
        received = server.received[0]
        host = server.base_url.split("://")[1].split("/")[0]
        headers = {k.lower(): v for k, v in received.headers.items()}
    assert headers["authorization"] == "Bearer EMPTY"
    assert headers["content-type"] == "application/json"
    assert headers["accept"] == "application/json"
    assert headers["accept-encoding"] == "gzip, deflate"
    assert headers["user-agent"] == f"citegraph/{citegraph.__version__}"
    assert headers["host"] == host
    assert int(headers["content-length"]) == len(json.dumps(received.body, separators=(",", ":")))
    assert not [k for k in headers if k.startswith(("x-stainless", "openai-"))]
    assert "idempotency-key" not in headers


def test_openai_headers_go_to_openai_only(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
    monkeypatch.setenv("OPENAI_ORG_ID", "org-1")
    monkeypatch.delenv("OPENAI_PROJECT_ID", raising=False)
    model = OpenAICompatibleChat("gpt-4o-mini", provider="openai")
    assert model._headers["OpenAI-Organization"] == "org-1"
    assert "OpenAI-Project" not in model._headers
    assert model._headers["Authorization"] == "Bearer sk-test"


def test_a_key_with_a_line_break_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A key that would end the HTTP header (and inject another) never reaches the wire."""
    monkeypatch.setenv(KEY_ENV, "secret\r\nX-Injected: 1")
    with pytest.raises(ConfigError, match=f"{KEY_ENV}.*line break"):
        OpenAICompatibleChat("m", provider="vllm", api_key_env=KEY_ENV)


@pytest.mark.parametrize(
    ("reply", "error", "message"),
    [
        (FakeReply(status=400, body={"error": {"message": "bad model"}}), ClientError, "bad model"),
        (
            FakeReply(status=400, body={"error": {"message": "", "code": 3}}),
            ClientError,
            '{"message": "", "code": 3}',
        ),
        (FakeReply(status=404, body={"error": "no such route"}), ClientError, "no such route"),
        (
            FakeReply(status=422, body={"detail": [{"msg": "bad"}]}),
            ClientError,
            '{"detail": [{"msg": "bad"}]}',
        ),
        (FakeReply(status=400, body=[1, 2]), ClientError, "[1, 2]"),
        (FakeReply(status=400, body="plain words"), ClientError, "plain words"),
        (FakeReply(status=400, body=b""), ClientError, "(an empty body)"),
        (FakeReply(status=400, body='"a json string"'), ClientError, "a json string"),
        (FakeReply(status=400, body="null"), ClientError, "null"),
        (FakeReply(status=503, body={"message": "top"}), ServerError, "top (gave up after 1 "),
        (FakeReply(status=429, body={"error": {"message": "slow"}}), RateLimited, "slow (gave up"),
    ],
)
def test_error_messages_from_the_error_body(reply: FakeReply, error: type, message: str) -> None:
    """The server's error message, wherever an OpenAI-compatible server puts it."""
    with FakeOpenAIServer(lambda _b: reply) as server:
        with pytest.raises(error) as info:
            generate(local(server, max_retries=0), ask("Hi"))
        url = server.base_url
    assert str(info.value).startswith(f"{url} answered HTTP {reply.status}: {message}")
    assert info.value.status == reply.status and info.value.url == url


def test_redirects_are_followed() -> None:
    """As the SDK's HTTP client does: a 307 to another path repeats the POST there."""

    def script(body: dict[str, Any]) -> FakeReply:
        return FakeReply(text="moved ok")

    moved = FakeReply(status=307, headers={"Location": "/v1/chat/completions"}, body=b"")
    replies = [moved]
    with FakeOpenAIServer(lambda b: replies.pop(0) if replies else script(b)) as server:
        (gen,) = generate(local(server), ask("Hi"))
        assert len(server.requests) == 2 and server.requests[1] == server.requests[0]
    assert gen.text == "moved ok"


def test_seed_none_and_empty_stop_are_omitted() -> None:
    with FakeOpenAIServer("ok") as server:
        generate(local(server), ask("Hi", seed=None))
        (body,) = server.requests
    assert "seed" not in body and "stop" not in body
    assert body["temperature"] == 0.5 and body["max_tokens"] == 512


def test_null_content_gives_empty_text_and_keeps_finish_reason() -> None:
    with FakeOpenAIServer(lambda _b: FakeReply(text=None, finish_reason="length")) as server:
        (gen,) = generate(local(server), ask("Hi"))
    assert gen.text == "" and gen.finish_reason == "length"


def test_name_endpoint_and_presets() -> None:
    with FakeOpenAIServer() as server:
        model = OpenAICompatibleChat("org/some-model", provider="ollama", base_url=server.base_url)
        assert model.name == "ollama/org/some-model"
        assert model.endpoint == server.base_url
        assert isinstance(model, ChatModel)
    assert OpenAICompatibleChat("m", provider="llamacpp").endpoint == "http://localhost:8080/v1"
    assert OpenAICompatibleChat("m", provider="llamacpp").concurrency == 1
    assert OpenAICompatibleChat("m", provider="ollama").endpoint == "http://localhost:11434/v1"
    assert OpenAICompatibleChat("m", provider="vllm").concurrency == 4
    assert OpenAICompatibleChat("m", provider="vllm", concurrency=16).concurrency == 16
    with pytest.raises(ConfigError, match="unknown provider"):
        OpenAICompatibleChat("m", provider="anthropic")


# -- concurrency ---------------------------------------------------------------------------------


def test_concurrency_limit_is_respected() -> None:
    with FakeOpenAIServer(delay=0.2) as server:
        gens = generate(local(server, concurrency=3), *(ask(f"q{i}") for i in range(10)))
        assert len(server.requests) == 10
        assert server.max_in_flight == 3
    assert sorted(g.text for g in gens) == sorted(f"q{i}" for i in range(10))  # echoed


def test_models_on_one_endpoint_share_the_limit() -> None:
    with FakeOpenAIServer(delay=0.2) as server:
        first, second = local(server, concurrency=2), local(server, concurrency=2)

        async def go() -> None:
            batch = [m.generate(ask(f"q{i}")) for i in range(3) for m in (first, second)]
            await asyncio.gather(*batch)
            await first.aclose()
            await second.aclose()

        asyncio.run(go())
        assert len(server.requests) == 6
        assert server.max_in_flight == 2


# -- retries -------------------------------------------------------------------------------------


def test_429_retry_after_is_honoured() -> None:
    limited = FakeReply(status=429, text="slow down", headers={"Retry-After": "1"})
    with FakeOpenAIServer(sequence(limited, "fine")) as server:
        (gen,) = generate(local(server, backoff_base=0.01), ask("Hi"))
        first, second = server.times
    assert gen.text == "fine" and gen.attempts == 2
    # without Retry-After the backoff would be ~0.01 s; the server asked for 1 s
    assert second - first >= 0.95


def test_retry_after_is_capped_by_max_retry_wait() -> None:
    limited = FakeReply(status=429, headers={"Retry-After": "3600"})
    said = pytest.warns(ServerWaitWarning, match="3600 s")  # not silent (issue 37)
    with FakeOpenAIServer(sequence(limited, "fine")) as server, said:
        (gen,) = generate(local(server, max_retry_wait=0.05), ask("Hi"))
    assert gen.attempts == 2 and gen.text == "fine"


def test_retry_after_header_forms() -> None:
    assert _retry_after({"retry-after": "2"}) == 2.0
    assert _retry_after({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert _retry_after({"retry-after": "Wed, 21 Oct 2015 07:28:00 GMT"}) == 0.0  # in the past
    assert _retry_after({}) is None


def test_429_until_retries_run_out() -> None:
    limited = FakeReply(status=429, text="quota", headers={"Retry-After": "0"})
    with FakeOpenAIServer(lambda _b: limited) as server:
        with pytest.raises(RateLimited, match="quota") as info:
            generate(local(server, max_retries=2), ask("Hi"))
        assert len(server.requests) == 3
    assert info.value.retry_after == 0.0 and "3 attempt" in str(info.value)


def test_500_retried_then_success() -> None:
    broken = FakeReply(status=500, text="overloaded")
    with FakeOpenAIServer(sequence(broken, broken, "third time lucky")) as server:
        (gen,) = generate(local(server), ask("Hi"))
        assert len(server.requests) == 3
    assert gen.attempts == 3 and gen.text == "third time lucky"


def test_500_until_retries_run_out() -> None:
    with FakeOpenAIServer(lambda _b: FakeReply(status=503, text="down")) as server:
        with pytest.raises(ServerError, match="down") as info:
            generate(local(server, max_retries=2), ask("Hi"))
        assert len(server.requests) == 3
    assert info.value.status == 503


def test_400_is_not_retried() -> None:
    refused = FakeReply(status=400, text="model 'nope' does not exist")
    with FakeOpenAIServer(lambda _b: refused) as server:
        with pytest.raises(ClientError, match="model 'nope' does not exist") as info:
            generate(local(server), ask("Hi"))
        assert len(server.requests) == 1
        assert info.value.status == 400 and info.value.url == server.base_url


def test_timeout_becomes_endpoint_unavailable() -> None:
    with FakeOpenAIServer(lambda _b: FakeReply(delay=3.0)) as server:
        with pytest.raises(EndpointUnavailable, match="timed out"):
            generate(local(server, timeout=0.2, max_retries=1), ask("Hi"))
        assert len(server.requests) == 2  # the first attempt and one retry


def test_connection_refused_becomes_endpoint_unavailable() -> None:
    with socket.socket() as sock:  # a port nobody listens on once closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    model = OpenAICompatibleChat(
        "m",
        provider="vllm",
        base_url=f"http://127.0.0.1:{port}/v1",
        max_retries=1,
        backoff_base=0.01,
    )
    with pytest.raises(EndpointUnavailable, match="unreachable"):
        generate(model, ask("Hi"))
    assert model.requests_sent == 2


@pytest.mark.parametrize(
    ("body", "problem"),
    [
        ("<html>Bad gateway</html>", "not JSON"),
        ({"object": "list", "data": []}, "no 'choices'"),
        ({"choices": [{"text": "legacy completion"}]}, "no 'message'"),
    ],
)
def test_bad_body_is_a_response_format_error(body: Any, problem: str) -> None:
    with FakeOpenAIServer(lambda _b: FakeReply(body=body)) as server:
        with pytest.raises(ResponseFormatError, match=problem):
            generate(local(server), ask("Hi"))
        assert len(server.requests) == 1


# -- API keys ------------------------------------------------------------------------------------


def test_missing_openai_key_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        OpenAICompatibleChat("gpt-4o-mini", provider="openai")
    with pytest.raises(ConfigError, match="OPENAI_API_KEY"):
        chat_model("openai/gpt-4o-mini")


def test_openai_key_never_reaches_another_server(monkeypatch: pytest.MonkeyPatch) -> None:
    # openai/... with --base-url elsewhere: OPENAI_API_KEY stays home; the server's own key is
    # read from OPENAI_COMPATIBLE_API_KEY (issue 27, item 10)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    monkeypatch.delenv("OPENAI_COMPATIBLE_API_KEY", raising=False)
    with FakeOpenAIServer() as server:
        generate(chat_model("openai/gpt-4o-mini", base_url=server.base_url), ask("Hi"))
        assert server.received[0].headers["authorization"] == "Bearer EMPTY"
        monkeypatch.setenv("OPENAI_COMPATIBLE_API_KEY", "gateway-key")
        generate(chat_model("openai/gpt-4o-mini", base_url=server.base_url), ask("Hi"))
        assert server.received[1].headers["authorization"] == "Bearer gateway-key"


def test_local_server_without_key_sends_empty(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(KEY_ENV, raising=False)
    with FakeOpenAIServer() as server:
        generate(local(server), ask("Hi"))
        assert server.received[0].headers["authorization"] == "Bearer EMPTY"


def test_openai_org_and_project_never_reach_other_servers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_ORG_ID", "org-secret")
    monkeypatch.setenv("OPENAI_PROJECT_ID", "proj-secret")
    with FakeOpenAIServer() as server:
        generate(local(server), ask("Hi"))
        headers = {k.lower() for k in server.received[0].headers}
        assert "openai-organization" not in headers and "openai-project" not in headers


# -- the factory ---------------------------------------------------------------------------------


def test_parse_model_spec() -> None:
    assert parse_model_spec("openai/gpt-4o-mini") == ("openai", "gpt-4o-mini")
    assert parse_model_spec("vllm/meta-llama/Llama-3.1-8B") == ("vllm", "meta-llama/Llama-3.1-8B")
    assert parse_model_spec("hf/models/smol.gguf") == ("hf", "models/smol.gguf")
    assert parse_model_spec("local") == ("local", "")
    assert parse_model_spec("mock") == ("mock", "mock")
    assert parse_model_spec("mock/judge") == ("mock", "judge")
    assert set(PROVIDERS) == {"openai", "vllm", "ollama", "llamacpp", "hf", "local", "mock"}


@pytest.mark.parametrize("spec", ["gpt-4o", "anthropic/claude", "", "OpenAI/gpt-4o"])
def test_unknown_provider_lists_the_valid_ones(spec: str) -> None:
    with pytest.raises(ConfigError, match="openai, vllm, ollama, llamacpp, hf, local, mock"):
        parse_model_spec(spec)


@pytest.mark.parametrize("spec", ["openai/", "vllm", "hf/ ", "local/x"])
def test_spec_without_required_model(spec: str) -> None:
    with pytest.raises(ConfigError):
        chat_model(spec)


def test_factory_builds_openai_family() -> None:
    with FakeOpenAIServer() as server:
        model = chat_model(
            "llamacpp/org/model-q4", base_url=server.base_url, api_key_env=KEY_ENV, timeout=5.0
        )
        assert isinstance(model, OpenAICompatibleChat)
        assert (model.name, model.endpoint, model.concurrency) == (
            "llamacpp/org/model-q4",
            server.base_url,
            1,
        )
        (gen,) = generate(model, ask("echo me"))
        assert server.requests[0]["model"] == "org/model-q4"
    assert gen.text == "echo me"


def test_factory_rejects_options_that_do_not_apply() -> None:
    with pytest.raises(ConfigError, match="base_url"):
        chat_model("mock", base_url="http://localhost:1/v1")
    with pytest.raises(ConfigError, match="mock_outputs"):
        chat_model("vllm/m", mock_outputs=["x"])


# -- API keys per provider -----------------------------------------------------------------------

PROVIDER_KEY_ENVS = {
    "openai": "OPENAI_API_KEY",
    "vllm": "VLLM_API_KEY",
    "ollama": "OLLAMA_API_KEY",
    "llamacpp": "LLAMACPP_API_KEY",
}


@pytest.fixture
def no_keys(monkeypatch: pytest.MonkeyPatch) -> pytest.MonkeyPatch:
    for name in (*PROVIDER_KEY_ENVS.values(), KEY_ENV, "OPENAI_COMPATIBLE_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    return monkeypatch


def sent_authorization(model: OpenAICompatibleChat, server: FakeOpenAIServer) -> str:
    generate(model, ask("Hi"))
    return str(server.received[-1].headers["authorization"])


def test_openai_key_is_not_sent_to_a_vllm_server(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    with FakeOpenAIServer() as server:
        model = OpenAICompatibleChat("m", provider="vllm", base_url=server.base_url)
        assert model.api_key_env == "VLLM_API_KEY"
        assert sent_authorization(model, server) == "Bearer EMPTY"
        via_factory = chat_model("vllm/m", base_url=server.base_url)
        assert isinstance(via_factory, OpenAICompatibleChat)
        assert sent_authorization(via_factory, server) == "Bearer EMPTY"


def test_vllm_key_is_sent_when_set(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    no_keys.setenv("VLLM_API_KEY", "vllm-secret")
    with FakeOpenAIServer() as server:
        model = OpenAICompatibleChat("m", provider="vllm", base_url=server.base_url)
        assert sent_authorization(model, server) == "Bearer vllm-secret"


@pytest.mark.parametrize(("provider", "env"), sorted(PROVIDER_KEY_ENVS.items()))
def test_each_provider_reads_its_own_variable(
    no_keys: pytest.MonkeyPatch, provider: str, env: str
) -> None:
    for other in (*PROVIDER_KEY_ENVS.values(), "OPENAI_COMPATIBLE_API_KEY"):
        no_keys.setenv(other, f"key-of-{other}")
    if provider == "openai":  # the fake server is not api.openai.com
        env = "OPENAI_COMPATIBLE_API_KEY"
    with FakeOpenAIServer() as server:
        model = OpenAICompatibleChat("m", provider=provider, base_url=server.base_url)
        assert model.api_key_env == env
        assert sent_authorization(model, server) == f"Bearer key-of-{env}"


@pytest.mark.parametrize("provider", ["vllm", "ollama", "llamacpp"])
def test_local_providers_need_no_key_on_their_default_url(
    no_keys: pytest.MonkeyPatch, provider: str
) -> None:
    model = OpenAICompatibleChat("m", provider=provider)  # no ConfigError, nothing sent yet
    assert model.api_key_env == PROVIDER_KEY_ENVS[provider]


def test_openai_on_a_custom_url_reads_the_compatible_key_and_does_not_require_it(
    no_keys: pytest.MonkeyPatch,
) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    with FakeOpenAIServer() as server:
        model = OpenAICompatibleChat("m", provider="openai", base_url=server.base_url)
        assert model.api_key_env == "OPENAI_COMPATIBLE_API_KEY"
        assert sent_authorization(model, server) == "Bearer EMPTY"


def test_explicit_api_key_env_wins(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("VLLM_API_KEY", "vllm-secret")
    no_keys.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    no_keys.setenv(KEY_ENV, "chosen-key")
    with FakeOpenAIServer() as server:
        model = OpenAICompatibleChat(
            "m", provider="vllm", base_url=server.base_url, api_key_env=KEY_ENV
        )
        assert model.api_key_env == KEY_ENV
        assert sent_authorization(model, server) == "Bearer chosen-key"
        via_factory = chat_model("vllm/m", base_url=server.base_url, api_key_env=KEY_ENV)
        assert isinstance(via_factory, OpenAICompatibleChat)
        assert sent_authorization(via_factory, server) == "Bearer chosen-key"


def test_explicit_api_key_env_for_openai_default_url(no_keys: pytest.MonkeyPatch) -> None:
    no_keys.setenv("OPENAI_API_KEY", "sk-real-openai-key")
    # the named variable is unset: the OpenAI key is not used as a fallback
    with pytest.raises(ConfigError, match=KEY_ENV):
        OpenAICompatibleChat("gpt-4o-mini", provider="openai", api_key_env=KEY_ENV)
    no_keys.setenv(KEY_ENV, "sk-other-project")
    assert chat_model("openai/gpt-4o-mini", api_key_env=KEY_ENV).name == "openai/gpt-4o-mini"


def test_bad_api_key_env_arguments(no_keys: pytest.MonkeyPatch) -> None:
    with pytest.raises(ConfigError, match="api_key_env"):
        OpenAICompatibleChat("m", provider="vllm", api_key_env=" ")
    with pytest.raises(ConfigError, match="api_key_env"):
        chat_model("mock", api_key_env=KEY_ENV)
