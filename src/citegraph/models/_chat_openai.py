"""One chat provider for every OpenAI-compatible server: OpenAI, vLLM, Ollama, llama.cpp server.

The servers differ only in their default URL, default concurrency, the environment variable
holding their API key and whether that key is required (:data:`PRESETS`). Requests go through
``openai.AsyncOpenAI`` with the SDK's own retries switched off; citegraph retries itself (with
:mod:`citegraph.io`, shared with the SPARQL client) so that it can honour Retry-After and
count attempts:

- HTTP 429 -> :class:`~citegraph.errors.RateLimited`: retried after the server's Retry-After
  (seconds or an HTTP date; ``retry-after-ms`` too), else exponential backoff with jitter, capped
  at ``max_retry_wait``. A 429 also holds back the other requests to the same endpoint;
- HTTP 5xx -> :class:`~citegraph.errors.ServerError`, retried the same way;
- connection errors and timeouts: retried, then :class:`~citegraph.errors.EndpointUnavailable`;
- any other 4xx -> :class:`~citegraph.errors.ClientError` with the server's message, never retried;
- a 2xx body that is not a chat completion -> :class:`~citegraph.errors.ResponseFormatError`.

At most ``concurrency`` requests are in flight per endpoint: model objects with the same base URL
and concurrency share one limit within an event loop.
"""

from __future__ import annotations

import asyncio
import json
import os
import time
import weakref
from dataclasses import dataclass
from typing import Any

import httpx2

from citegraph.errors import (
    ClientError,
    ConfigError,
    EndpointError,
    EndpointUnavailable,
    MissingDependency,
    RateLimited,
    ResponseFormatError,
    ServerError,
)
from citegraph.io import RetryHold, retry_after_from_headers, retry_wait, snippet
from citegraph.models._chat_types import ChatRequest, Generation, Usage

__all__ = ["OPENAI_URL", "PRESETS", "OpenAICompatibleChat", "ProviderPreset"]

OPENAI_URL = "https://api.openai.com/v1"
_BEARER: Any = {"security": {"bearer_auth": True}}
"""Request options of a chat completion: the API key as a bearer token (what the SDK's
``chat.completions.create`` sends)."""


@dataclass(frozen=True)
class ProviderPreset:
    """Defaults of one OpenAI-compatible server family.

    Attributes:
        base_url: The server's usual URL (including ``/v1``).
        concurrency: Default number of requests in flight to one endpoint.
        key_required: Whether a key must be set when the default URL is used.
        api_key_env: The environment variable the API key is read from. Each family has its
            own, so that a key meant for one service is never sent to another.
    """

    base_url: str
    concurrency: int
    key_required: bool
    api_key_env: str


#: Provider name -> defaults. ``--base-url`` overrides the URL.
PRESETS: dict[str, ProviderPreset] = {
    "openai": ProviderPreset(
        OPENAI_URL, concurrency=8, key_required=True, api_key_env="OPENAI_API_KEY"
    ),
    "vllm": ProviderPreset(
        "http://localhost:8000/v1", concurrency=4, key_required=False, api_key_env="VLLM_API_KEY"
    ),
    "ollama": ProviderPreset(
        "http://localhost:11434/v1",
        concurrency=4,
        key_required=False,
        api_key_env="OLLAMA_API_KEY",
    ),
    "llamacpp": ProviderPreset(
        "http://localhost:8080/v1",
        concurrency=1,
        key_required=False,
        api_key_env="LLAMACPP_API_KEY",
    ),
}


class _Gate:
    """The concurrency limit and 429 hold of one endpoint within one event loop."""

    def __init__(self, limit: int) -> None:
        self.semaphore = asyncio.Semaphore(limit)
        self.hold = RetryHold()  # after a 429, no request to the endpoint starts before it ends


_GATES: weakref.WeakKeyDictionary[asyncio.AbstractEventLoop, dict[tuple[str, int], _Gate]] = (
    weakref.WeakKeyDictionary()
)


def _gate(base_url: str, limit: int) -> _Gate:
    gates = _GATES.setdefault(asyncio.get_running_loop(), {})
    return gates.setdefault((base_url.rstrip("/"), limit), _Gate(limit))


def _server_message(exc: Any) -> str:
    """The error message an APIStatusError's server sent (or the start of its body)."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        message = body.get("message", body.get("error"))
        if isinstance(message, str) and message:
            return message
        return snippet(json.dumps(body).encode())
    if isinstance(body, str) and body.strip():
        return snippet(body.encode())
    return str(getattr(exc, "message", exc))


#: The former name of :func:`citegraph.io.retry_after_from_headers` (tests import it).
_retry_after = retry_after_from_headers


def _parse_completion(body: bytes, status: int, url: str, fallback_model: str) -> Generation:
    """A Generation from a chat-completion body, or ResponseFormatError."""
    problem: str | None
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problem = f"the body is not JSON ({exc})"
    else:
        problem = None
        choices = data.get("choices") if isinstance(data, dict) else None
        if not isinstance(data, dict):
            problem = f"the JSON is a {type(data).__name__}, not an object"
        elif not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            problem = "the JSON has no 'choices' list with a choice object"
        elif not isinstance(choices[0].get("message"), dict):
            problem = "the first choice has no 'message' object"
        elif not isinstance(choices[0]["message"].get("content"), str | None):
            problem = "the message 'content' is neither a string nor null"
    if problem is not None:
        raise ResponseFormatError(
            f"{url} answered HTTP {status} with a body that is not a chat completion: {problem}; "
            f"body starts {snippet(body)!r}",
            status=status,
            url=url,
        )
    choice = data["choices"][0]
    usage = data.get("usage") if isinstance(data.get("usage"), dict) else {}
    finish = choice.get("finish_reason")
    extras = {k: data[k] for k in ("id", "system_fingerprint") if isinstance(data.get(k), str)}
    return Generation(
        text=choice["message"].get("content") or "",
        model=data["model"] if isinstance(data.get("model"), str) else fallback_model,
        finish_reason=finish if isinstance(finish, str) else None,
        usage=Usage(
            prompt_tokens=_int_or_none(usage.get("prompt_tokens")),
            completion_tokens=_int_or_none(usage.get("completion_tokens")),
        ),
        raw=extras or None,
    )


def _int_or_none(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


class OpenAICompatibleChat:
    """A :class:`~citegraph.models.ChatModel` talking to an OpenAI-compatible server.

    Args:
        model: The model name the server knows (``gpt-4o-mini``, ``meta-llama/Llama-3.1-8B``...).
        provider: A key of :data:`PRESETS`: ``openai``, ``vllm``, ``ollama`` or ``llamacpp``.
        base_url: Overrides the preset's URL (must include ``/v1``).
        api_key_env: The environment variable holding the API key (keys are never passed in
            code); ``None``: the preset's (see below).
        concurrency: Most requests in flight to this endpoint (default: the preset's).
        timeout: Seconds before one HTTP attempt times out.
        max_retries: Retries after the first attempt (429, 5xx, connection errors, timeouts).
        backoff_base: First backoff wait in seconds when the server sends no Retry-After; it
            doubles each retry (with jitter: a wait is drawn from [ceiling/2, ceiling]).
        max_retry_wait: Cap on any single wait, Retry-After included.

    API keys: each provider reads its own variable, so that an OpenAI key never reaches a local
    server: ``openai`` -> ``OPENAI_API_KEY``, ``vllm`` -> ``VLLM_API_KEY``, ``ollama`` ->
    ``OLLAMA_API_KEY``, ``llamacpp`` -> ``LLAMACPP_API_KEY``. Only ``openai`` on its default URL
    requires the key; elsewhere an unset variable sends ``"EMPTY"``. ``provider="openai"`` with a
    custom ``base_url`` (any other OpenAI-compatible server or gateway) still reads
    ``OPENAI_API_KEY``, as users of such servers expect, but does not require it: only use it with
    servers you trust with that key. An explicit ``api_key_env`` overrides the preset's.

    Raises:
        ConfigError: Unknown provider, bad limits, an empty ``api_key_env``, or the OpenAI key
            is missing.
        MissingDependency: The ``openai`` package is not installed.

    Example:
        >>> model = OpenAICompatibleChat("qwen2.5:0.5b", provider="ollama")  # doctest: +SKIP
        >>> request = ChatRequest.of([{"role": "user", "content": "Hi"}])  # doctest: +SKIP
        >>> (await model.generate(request)).text  # doctest: +SKIP
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "openai",
        base_url: str | None = None,
        api_key_env: str | None = None,
        concurrency: int | None = None,
        timeout: float = 120.0,
        max_retries: int = 5,
        backoff_base: float = 1.0,
        max_retry_wait: float = 60.0,
    ) -> None:
        preset = PRESETS.get(provider)
        if preset is None:
            raise ConfigError(f"unknown provider {provider!r}; expected one of {sorted(PRESETS)}")
        if not model.strip():
            raise ConfigError(f"provider {provider!r} needs a model name: '{provider}/<model>'")
        if concurrency is not None and concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        if max_retries < 0 or timeout <= 0 or backoff_base < 0 or max_retry_wait < 0:
            raise ConfigError(
                "max_retries, backoff_base and max_retry_wait must be >= 0, timeout > 0"
            )
        if api_key_env is not None and not api_key_env.strip():
            raise ConfigError("api_key_env must name an environment variable, got an empty name")
        try:
            import openai
        except ImportError as exc:
            raise MissingDependency("openai", "openai") from exc
        self._openai = openai
        self.model = model
        self.provider = provider
        self.endpoint = (base_url or preset.base_url).rstrip("/")
        self.name = f"{provider}/{model}"
        self.api_key_env = preset.api_key_env if api_key_env is None else api_key_env
        """The environment variable the API key is read from."""
        api_key = os.environ.get(self.api_key_env) or None
        if api_key is None and preset.key_required and self.endpoint == preset.base_url:
            raise ConfigError(
                f"{self.name} needs an API key: set the environment variable {self.api_key_env} "
                f"(keys are read only from the environment)"
            )
        self._api_key = api_key or "EMPTY"
        self.concurrency = concurrency or preset.concurrency
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.max_retry_wait = max_retry_wait
        self._client: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.requests_sent = 0
        """HTTP attempts made by this object (retries included)."""

    def _bind(self) -> tuple[Any, _Gate]:
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            # A client's connection pool belongs to one loop: a new loop gets a new client.
            # The SDK adds OPENAI_ORG_ID / OPENAI_PROJECT_ID from the environment as headers;
            # they belong to OpenAI only, never to a local or third-party server.
            omit = self._openai.Omit()
            # Omit() removes a default header (the SDK's annotation says str only).
            private: Any = {"OpenAI-Organization": omit, "OpenAI-Project": omit}
            self._client = self._openai.AsyncOpenAI(
                base_url=self.endpoint,
                api_key=self._api_key,
                max_retries=0,
                timeout=self.timeout,
                default_headers=private if self.endpoint.rstrip("/") != OPENAI_URL else None,
            )
            self._loop = loop
        return self._client, _gate(self.endpoint, self.concurrency)

    def request_body(self, request: ChatRequest) -> dict[str, Any]:
        """The JSON body sent for ``request`` (``seed``, ``stop`` and ``response_format``
        omitted when unset)."""
        config = request.config
        body: dict[str, Any] = {
            "model": self.model,
            "messages": [m.model_dump(mode="json") for m in request.messages],
            "temperature": config.temperature,
            "top_p": config.top_p,
            "max_tokens": config.max_tokens,
        }
        if config.seed is not None:
            body["seed"] = config.seed
        if config.stop:
            body["stop"] = list(config.stop)
        if request.response_format is not None:
            body["response_format"] = request.response_format
        return body

    def retry_wait(self, exc: Exception, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based) after ``exc``."""
        return retry_wait(
            getattr(exc, "retry_after", None),
            retry,
            base=self.backoff_base,
            cap=self.max_retry_wait,
        )

    async def generate(self, request: ChatRequest) -> Generation:
        """Send ``request``, retrying transient failures (see the module docstring).

        Raises:
            RateLimited, ServerError: Still failing after ``max_retries`` retries.
            EndpointUnavailable: Connection failures or timeouts after ``max_retries`` retries.
            ClientError: The server refused the request (4xx other than 429); not retried.
            ResponseFormatError: The reply is not a chat completion; not retried.
        """
        started = time.perf_counter()
        body = self.request_body(request)
        attempt = 0
        while True:
            attempt += 1
            try:
                generation = await self._send_once(body)
            except (RateLimited, ServerError, EndpointUnavailable) as exc:
                if attempt > self.max_retries:
                    raise type(exc)(
                        f"{exc} (gave up after {attempt} attempt(s))",
                        **_error_fields(exc),
                    ) from exc.__cause__ or exc
                wait = self.retry_wait(exc, attempt - 1)
                if isinstance(exc, RateLimited):
                    _gate(self.endpoint, self.concurrency).hold.block(wait)
                else:
                    await asyncio.sleep(wait)
                continue
            latency = time.perf_counter() - started
            return generation.model_copy(update={"attempts": attempt, "latency_s": latency})

    async def _send_once(self, body: dict[str, Any]) -> Generation:
        client, gate = self._bind()
        openai = self._openai
        async with gate.semaphore:
            hold = gate.hold.remaining()
            if hold > 0:
                await asyncio.sleep(hold)
            self.requests_sent += 1
            try:
                # The body is plain JSON already (request_body): posting it as is skips the
                # SDK's per-call walk of the typed parameters (~1-3 ms of CPU per request, the
                # largest client cost at 16-32 requests in flight).
                raw = await client.post(
                    "/chat/completions", cast_to=httpx2.Response, body=body, options=_BEARER
                )
            except openai.APIStatusError as exc:
                raise self._status_error(exc) from exc
            except openai.APIConnectionError as exc:  # APITimeoutError is one too
                kind = "timed out" if isinstance(exc, openai.APITimeoutError) else "unreachable"
                cause = exc.__cause__ or exc
                raise EndpointUnavailable(
                    f"{self.endpoint} {kind}: {type(cause).__name__}: {cause or 'no detail'}",
                    url=self.endpoint,
                ) from exc
            content = await raw.aread()
        return _parse_completion(content, raw.status_code, self.endpoint, self.model)

    def _status_error(self, exc: Any) -> EndpointError:
        status = int(exc.status_code)
        message = f"{self.endpoint} answered HTTP {status}: {_server_message(exc)}"
        headers = exc.response.headers
        wait = retry_after_from_headers(headers)
        if status == 429:
            return RateLimited(message, retry_after=wait, url=self.endpoint)
        if 500 <= status <= 599:
            return ServerError(message, retry_after=wait, status=status, url=self.endpoint)
        if 400 <= status <= 499:
            return ClientError(message, status=status, url=self.endpoint)
        return EndpointError(message, status=status, url=self.endpoint)

    async def aclose(self) -> None:
        """Close the HTTP connection pool (a later call opens a new one)."""
        client, self._client, self._loop = self._client, None, None
        if client is not None:
            await client.close()

    def __repr__(self) -> str:
        return (
            f"OpenAICompatibleChat({self.model!r}, provider={self.provider!r}, "
            f"base_url={self.endpoint!r}, concurrency={self.concurrency})"
        )


def _error_fields(exc: EndpointError) -> dict[str, Any]:
    fields: dict[str, Any] = {"status": exc.status, "url": exc.url}
    if isinstance(exc, RateLimited | ServerError):
        fields["retry_after"] = exc.retry_after
    return fields
