"""One chat provider for every OpenAI-compatible server: OpenAI, vLLM, Ollama, llama.cpp server.

The servers differ only in their default URL, default concurrency, the environment variable
holding their API key and whether that key is required (:data:`PRESETS`). Requests go through
``openai.AsyncOpenAI`` with the SDK's own retries switched off; citegraph retries itself (with
:mod:`citegraph.io`, shared with the SPARQL client) so that it can honour Retry-After and
count attempts (the HTTP side lives in :class:`~citegraph.models.server._http.ServerClient`,
shared with the server-backed scorers):

- HTTP 429 -> :class:`~citegraph.errors.RateLimited`: retried after the server's Retry-After
  (seconds or an HTTP date; ``retry-after-ms`` too), else exponential backoff with jitter, capped
  at ``max_retry_wait``. A 429 also holds back the other requests to the same endpoint;
- HTTP 5xx -> :class:`~citegraph.errors.ServerError`, retried the same way;
- connection errors and timeouts: retried, then :class:`~citegraph.errors.EndpointUnavailable`;
- any other 4xx -> :class:`~citegraph.errors.ClientError` with the server's message, never retried;
- a 2xx body that is not a chat completion -> :class:`~citegraph.errors.ResponseFormatError`;
- a body past ``max_response_bytes`` (32 MiB unless raised), or a reply past
  ``max_reply_chars`` (:data:`~citegraph.models.server.MAX_REPLY_CHARS`) ->
  :class:`~citegraph.errors.ResponseFormatError`, not retried, the reply never stored whole.

At most ``concurrency`` requests are in flight per endpoint: model objects with the same base URL
and concurrency share one limit within an event loop.
"""

from __future__ import annotations

import json
import time
from typing import Any

from citegraph.errors import ConfigError, ResponseFormatError
from citegraph.io import retry_after_from_headers, snippet
from citegraph.models.chat._types import ChatRequest, Generation, Usage
from citegraph.models.chat._usage import report_usage
from citegraph.models.grammar import Grammar, GrammarMode
from citegraph.models.server import (
    MAX_REPLY_CHARS,
    ServerClient,
    reply_too_long,
)

__all__ = ["SERVER_GRAMMAR_MODES", "OpenAICompatibleChat", "grammar_fields"]

#: How each server provider constrains a reply (any other: ``json-schema``).
SERVER_GRAMMAR_MODES: dict[str, GrammarMode] = {
    "vllm": "vllm-grammar",
    "llamacpp": "gbnf",
    "openai": "json-schema",
    "ollama": "json-schema",
}


def grammar_fields(mode: GrammarMode, grammar: Grammar) -> dict[str, Any]:
    """The request-body fields that apply ``grammar`` on a server of ``mode``.

    - ``vllm-grammar``: ``structured_outputs: {"grammar": <GBNF>}`` (vLLM >= 0.10.2; the older
      ``guided_grammar`` field was removed in 0.12);
    - ``gbnf``: ``grammar: <GBNF>`` (llama.cpp server);
    - ``json-schema``: a strict ``response_format`` of the grammar's JSON schema.

    Raises:
        ConfigError: ``json-schema`` for a grammar without a JSON form, or an unknown mode.
    """
    if mode == "vllm-grammar":
        return {"structured_outputs": {"grammar": grammar.gbnf}}
    if mode == "gbnf":
        return {"grammar": grammar.gbnf}
    if mode == "json-schema" and grammar.json_schema is not None:
        schema = {"name": grammar.name.replace("-", "_"), "strict": True,
                  "schema": grammar.json_schema}  # fmt: skip
        return {"response_format": {"type": "json_schema", "json_schema": schema}}
    raise ConfigError(f"grammar {grammar.name!r} has no form for a server of mode {mode!r}")


#: The former name of :func:`citegraph.io.retry_after_from_headers` (tests import it).
_retry_after = retry_after_from_headers


def _parse_completion(
    body: bytes,
    status: int,
    url: str,
    fallback_model: str,
    max_reply_chars: int = MAX_REPLY_CHARS,
) -> Generation:
    """A Generation from a chat-completion body, or ResponseFormatError (a reply past
    ``max_reply_chars`` too)."""
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
    too_long = reply_too_long(choice["message"].get("content") or "", max_reply_chars)
    if too_long is not None:
        raise ResponseFormatError(f"{url} answered, but {too_long}", status=status, url=url)
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


class OpenAICompatibleChat(ServerClient):
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
        total_timeout, max_response_bytes, max_reply_chars: As
            :class:`~citegraph.models.server._http.ServerClient`.

    API keys: each provider reads its own variable, so that an OpenAI key never reaches a local
    server: ``openai`` -> ``OPENAI_API_KEY``, ``vllm`` -> ``VLLM_API_KEY``, ``ollama`` ->
    ``OLLAMA_API_KEY``, ``llamacpp`` -> ``LLAMACPP_API_KEY``. Only ``openai`` on its default URL
    requires the key; elsewhere an unset variable sends ``"EMPTY"``. ``provider="openai"`` with a
    ``base_url`` on another host than ``api.openai.com`` (any other OpenAI-compatible server or
    gateway) never sends ``OPENAI_API_KEY``: it reads ``OPENAI_COMPATIBLE_API_KEY``. An explicit
    ``api_key_env`` overrides the preset's. Credentials in ``base_url`` (``user:password@``,
    ``?api-key=``) are used for requests and shown as ``***`` (``endpoint``, messages).

    Raises:
        ConfigError: Unknown provider, bad limits, an empty ``api_key_env``, or the OpenAI key
            is missing.

    Example:
        >>> model = OpenAICompatibleChat("qwen2.5:0.5b", provider="ollama")  # doctest: +SKIP
        >>> request = ChatRequest.of([{"role": "user", "content": "Hi"}])  # doctest: +SKIP
        >>> (await model.generate(request)).text  # doctest: +SKIP
    """

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
        if request.grammar is not None:
            body.update(grammar_fields(self.grammar_mode, request.grammar))
        return body

    @property
    def grammar_mode(self) -> GrammarMode:
        """How this server constrains a reply: ``vllm-grammar`` (vLLM), ``gbnf`` (llama.cpp) or
        ``json-schema`` (OpenAI, Ollama and any other OpenAI-compatible server)."""
        return SERVER_GRAMMAR_MODES.get(self.provider, "json-schema")

    async def generate(self, request: ChatRequest) -> Generation:
        """Send ``request``, retrying transient failures (see the module docstring).

        Raises:
            RateLimited, ServerError: Still failing after ``max_retries`` retries.
            EndpointUnavailable: Connection failures or timeouts after ``max_retries`` retries.
            ClientError: The server refused the request (4xx other than 429); not retried.
            ResponseFormatError: The reply is not a chat completion; not retried.
        """
        started = time.perf_counter()
        content, status, attempts = await self.post(
            "/chat/completions", self.request_body(request), where=self.endpoint
        )
        generation = _parse_completion(
            content, status, self.endpoint, self.model, self.max_reply_chars
        )
        latency = time.perf_counter() - started
        update: dict[str, Any] = {"attempts": attempts, "latency_s": latency}
        if request.grammar is not None:
            marks = {"grammar": request.grammar.name, "grammar_mode": self.grammar_mode}
            update["raw"] = {**(generation.raw or {}), **marks}
        generation = generation.model_copy(update=update)
        report_usage(self, generation)
        return generation

    def __repr__(self) -> str:
        return (
            f"OpenAICompatibleChat({self.model!r}, provider={self.provider!r}, "
            f"base_url={self.endpoint!r}, concurrency={self.concurrency})"
        )
