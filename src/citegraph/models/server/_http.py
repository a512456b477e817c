"""HTTP to a model server, shared by the chat client and the server-backed scorers.

One :class:`ServerClient` talks to one model on one OpenAI-compatible server (OpenAI, vLLM,
Ollama, llama.cpp server) or text-embeddings-inference (TEI). It owns what every request to a
model server needs, so that chat completions, prompt log-probabilities, rerank and classify
requests behave alike:

- the server's URL and API key from the provider's preset (:data:`PRESETS`), each provider reading
  its own environment variable, so that a key meant for one service never reaches another
  (``openai`` reads ``OPENAI_API_KEY`` only for ``api.openai.com``; for another server it reads
  :data:`COMPATIBLE_KEY_ENV`);
- credentials in the URL (``user:password@``, ``?api-key=``) are used for requests but never
  shown: :attr:`ServerClient.endpoint`, which error messages, cache keys and run directories use,
  is the URL with them written as ``***`` (:func:`~citegraph.io.redact_url`); a query string stays
  after the route (``http://h/v1?api-key=x`` -> ``http://h/v1/chat/completions?api-key=x``). A
  malformed base URL (no ``http://``, no host, a bad port, a space, ``#`` or ``;``) is refused
  when the client is made (:func:`~citegraph.io.check_base_url`: a ConfigError, the URL
  redacted);
- requests go through citegraph's own HTTP/1.1 client (:mod:`._pool`, :mod:`._wire`: kept-alive
  connections, one pool per event loop, redirects, https, proxies from the environment), at
  about a tenth of a general client's CPU per request; citegraph retries itself so that it can
  honour Retry-After and count attempts:

  - HTTP 429 -> :class:`~citegraph.errors.RateLimited`: retried after the server's Retry-After
    (seconds or an HTTP date; ``retry-after-ms`` too), else exponential backoff with jitter,
    capped at ``max_retry_wait``. A 429 also holds back the other requests to the same endpoint.
    A Retry-After past ``max_retry_wait`` is said (a :class:`~citegraph.io.ServerWaitWarning`,
    and in the error when the retries run out); one that would pass the total deadline fails
    the call at once, saying so;
  - HTTP 5xx -> :class:`~citegraph.errors.ServerError`, retried the same way;
  - connection errors and timeouts: retried, then :class:`~citegraph.errors.EndpointUnavailable`;
  - any other 4xx -> :class:`~citegraph.errors.ClientError` with the server's message, never
    retried;

- at most ``concurrency`` requests in flight per endpoint: clients with the same base URL and
  concurrency share one limit (and one 429 hold) within an event loop;
- two deadlines: ``timeout`` bounds each attempt as a whole (connecting, sending, and reading the
  whole answer: a server that sends one byte every half second is cut at the deadline, which a
  per-read timeout never does), and ``total_timeout`` bounds one call: every attempt and every
  wait between them. Either gives :class:`~citegraph.errors.EndpointUnavailable` naming the
  deadline; an attempt cut at its deadline is retried, a call past its total deadline is not. A
  client takes them from its arguments (a factory passes those of its
  :class:`~citegraph.models.ModelOptions`: the CLI's ``--timeout`` and ``--total-timeout``), else
  ``timeout`` is 120 s and there is no total deadline;
- one answer's body holds at most ``max_response_bytes`` decoded bytes (from the arguments: the
  CLI's ``--max-response-mb``, else
  :data:`~citegraph.models.server._body.DEFAULT_MAX_RESPONSE_BYTES`, 32 MiB): a larger one,
  announced or streamed, compressed or not, fails the call at once with
  :class:`~citegraph.errors.ResponseFormatError` (:mod:`._server_body`), not retried.

A path starting with ``/`` is joined to the base URL (``/chat/completions`` ->
``.../v1/chat/completions``); a full URL is used as is (:func:`server_root` gives the server's root
for vLLM's ``/classify`` and TEI's ``/rerank``, which live outside ``/v1``).
"""

from __future__ import annotations

import asyncio
import json
import os
import warnings
import weakref
from typing import Any
from urllib.parse import urlsplit

from citegraph import __version__
from citegraph.errors import (
    ClientError,
    ConfigError,
    EndpointError,
    EndpointUnavailable,
    RateLimited,
    ResponseFormatError,
    ServerError,
)
from citegraph.io import (
    DEFAULT_TIMEOUT,
    RetryHold,
    ServerWaitWarning,
    capped_wait_note,
    check_base_url,
    deadline_wait_note,
    redact_url,
    redact_urls_in,
    retry_after_from_headers,
    retry_wait,
    snippet,
    split_query,
    url_secrets,
)
from citegraph.models.server._body import (
    DEFAULT_MAX_RESPONSE_BYTES,
    MAX_REPLY_CHARS,
    BodyTooLarge,
)
from citegraph.models.server._pool import Pool, basic_credentials
from citegraph.models.server._presets import (
    COMPATIBLE_KEY_ENV,
    OPENAI_HOST,
    OPENAI_URL,
    PRESETS,
    SCORE_PRESETS,
    ProviderPreset,
)
from citegraph.models.server._wire import WireError

__all__ = [
    "COMPATIBLE_KEY_ENV",
    "DEFAULT_MAX_RESPONSE_BYTES",
    "OPENAI_URL",
    "PRESETS",
    "SCORE_PRESETS",
    "ProviderPreset",
    "ServerClient",
    "server_root",
]

USER_AGENT = f"citegraph/{__version__}"
"""The ``User-Agent`` of every request to a model server."""
#: OpenAI's own headers, sent only to api.openai.com, from these environment variables.
_OPENAI_HEADERS = {"OpenAI-Organization": "OPENAI_ORG_ID", "OpenAI-Project": "OPENAI_PROJECT_ID"}


def server_root(base_url: str) -> str:
    """The server's root URL: ``base_url`` without a trailing ``/v1``.

    Example:
        >>> server_root("http://localhost:8000/v1/")
        'http://localhost:8000'
    """
    url = base_url.rstrip("/")
    return url.removesuffix("/v1")


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


def server_message(body: bytes) -> str:
    """The error message in a server's error body: ``{"error": {"message": ...}}``,
    ``{"message"|"error"|"detail": ...}``, or else the start of the body.

    Example:
        >>> server_message(b'{"error": {"message": "bad model", "type": "invalid"}}')
        'bad model'
    """
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError):
        data = None
    if isinstance(data, dict):
        data = data.get("error", data) if isinstance(data.get("error"), dict | str) else data
    if isinstance(data, dict):
        message = data.get("message", data.get("error", data.get("detail")))
        if isinstance(message, str) and message:
            return message
        return snippet(json.dumps(data).encode())
    if isinstance(data, str) and data.strip():
        return snippet(data.encode())
    return snippet(body) if body.strip() else "(an empty body)"


def _is_openai(url: str) -> bool:
    """Whether ``url`` is OpenAI's own API (https on ``api.openai.com``)."""
    try:
        parts = urlsplit(url)
        return parts.scheme == "https" and parts.hostname == OPENAI_HOST
    except ValueError:
        return False


def _error_fields(exc: EndpointError) -> dict[str, Any]:
    fields: dict[str, Any] = {"status": exc.status, "url": exc.url}
    if isinstance(exc, RateLimited | ServerError):
        fields["retry_after"] = exc.retry_after
    return fields


class ServerClient:
    """Requests to ``model`` on one server, with the key, limits and retries of the module.

    Args:
        model: The model name the server knows (``gpt-4o-mini``, ``meta-llama/Llama-3.1-8B``...).
        provider: A key of ``presets``: ``openai``, ``vllm``, ``ollama``, ``llamacpp`` (and
            ``tei`` for the scorers).
        base_url: Overrides the preset's URL.
        api_key_env: The environment variable holding the API key (keys are never passed in
            code); ``None``: the preset's.
        concurrency: Most requests in flight to this endpoint (default: the preset's).
        timeout: Seconds one attempt may take as a whole, answer read included (``None``: 120).
        max_retries: Retries after the first attempt (429, 5xx, connection errors, timeouts).
        backoff_base: First backoff wait in seconds when the server sends no Retry-After; it
            doubles each retry (with jitter: a wait is drawn from [ceiling/2, ceiling]).
        max_retry_wait: Cap on any single wait, Retry-After included.
        presets: The provider presets (:data:`PRESETS`, or :data:`SCORE_PRESETS`).
        total_timeout: Seconds one call may take, all attempts and waits included (``None``:
            no bound).
        max_response_bytes: Most bytes of one answer's body, decoded (``None``:
            :data:`DEFAULT_MAX_RESPONSE_BYTES`, 32 MiB).
        max_reply_chars: Most characters of a chat reply (chat models only; default
            :data:`~citegraph.models.server.MAX_REPLY_CHARS`, 1,000,000): a longer one
            fails the call, as a reply too long to store.

    API keys: ``openai`` -> ``OPENAI_API_KEY``, ``vllm`` -> ``VLLM_API_KEY``, ``ollama`` ->
    ``OLLAMA_API_KEY``, ``llamacpp`` -> ``LLAMACPP_API_KEY``, ``tei`` -> ``TEI_API_KEY``. Only
    ``openai`` on ``api.openai.com`` requires the key; elsewhere an unset variable sends
    ``"EMPTY"``. ``provider="openai"`` with a ``base_url`` on another host never sends
    ``OPENAI_API_KEY``: it reads :data:`COMPATIBLE_KEY_ENV` (``OPENAI_COMPATIBLE_API_KEY``)
    instead. An explicit ``api_key_env`` overrides the preset's, wherever the server is.

    Raises:
        ConfigError: Unknown provider, bad limits, a malformed ``base_url``, an empty
            ``api_key_env``, or the OpenAI key is missing.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "openai",
        base_url: str | None = None,
        api_key_env: str | None = None,
        concurrency: int | None = None,
        timeout: float | None = None,
        max_retries: int = 5,
        backoff_base: float = 1.0,
        max_retry_wait: float = 60.0,
        presets: dict[str, ProviderPreset] = PRESETS,
        total_timeout: float | None = None,
        max_response_bytes: int | None = None,
        max_reply_chars: int = MAX_REPLY_CHARS,
    ) -> None:
        timeout = timeout if timeout is not None else DEFAULT_TIMEOUT
        if max_response_bytes is None:
            max_response_bytes = DEFAULT_MAX_RESPONSE_BYTES
        if max_response_bytes < 1 or max_reply_chars < 1:
            raise ConfigError(
                f"max_response_bytes and max_reply_chars must be at least 1, got "
                f"{max_response_bytes} and {max_reply_chars}"
            )
        if base_url is not None:
            check_base_url(base_url.strip(), what="base URL")
        preset = presets.get(provider)
        if preset is None:
            raise ConfigError(f"unknown provider {provider!r}; expected one of {sorted(presets)}")
        if not model.strip():
            raise ConfigError(f"provider {provider!r} needs a model name: '{provider}/<model>'")
        if concurrency is not None and concurrency < 1:
            raise ConfigError(f"concurrency must be at least 1, got {concurrency}")
        if max_retries < 0 or timeout <= 0 or backoff_base < 0 or max_retry_wait < 0:
            raise ConfigError(
                "max_retries, backoff_base and max_retry_wait must be >= 0, timeout > 0"
            )
        if total_timeout is not None and total_timeout <= 0:
            raise ConfigError(f"total_timeout must be > 0, got {total_timeout}")
        if api_key_env is not None and not api_key_env.strip():
            raise ConfigError("api_key_env must name an environment variable, got an empty name")
        self.model = model
        self.provider = provider
        given = (base_url or preset.base_url).strip()
        self.base_url = split_query(given)[0].rstrip("/")
        """The server's URL for requests (credentials included; never shown: see endpoint)."""
        query = urlsplit(given).query
        self._query = f"?{query}" if query else ""
        """The base URL's query, as given: every request carries it after its route."""
        self._secrets = url_secrets(base_url or "")
        self.endpoint = redact_url(given.rstrip("/"))
        """The server's URL as shown (messages, cache keys, run directories): its credentials
        written as ``***``."""
        self.name = f"{provider}/{model}"
        self._to_openai = to_openai = _is_openai(self.base_url)
        """Whether requests go to OpenAI's own API (its key and its default headers)."""
        if api_key_env is not None:
            self.api_key_env = api_key_env
        elif provider == "openai" and not to_openai:
            self.api_key_env = COMPATIBLE_KEY_ENV
        else:
            self.api_key_env = preset.api_key_env
        """The environment variable the API key is read from."""
        api_key = os.environ.get(self.api_key_env) or None
        if api_key is None and preset.key_required and to_openai:
            raise ConfigError(
                f"{self.name} needs an API key: set the environment variable {self.api_key_env} "
                f"(keys are read only from the environment)"
            )
        self._headers = self._request_headers(api_key or "EMPTY", given)
        self.concurrency = concurrency or preset.concurrency
        self.timeout = timeout
        self.total_timeout = total_timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.max_retry_wait = max_retry_wait
        self.max_response_bytes = max_response_bytes
        """Most bytes of one answer's body, decoded."""
        self.max_reply_chars = max_reply_chars
        """Most characters of a chat reply."""
        self._pool: Pool | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.requests_sent = 0
        """HTTP attempts made by this object (retries included)."""

    def _request_headers(self, api_key: str, base_url: str) -> dict[str, str]:
        """The headers of every request: JSON both ways, the key as a bearer token (or the
        base URL's ``user:password`` as basic credentials), OpenAI's own for OpenAI only."""
        parts = urlsplit(base_url)
        auth = basic_credentials(parts.username, parts.password) or f"Bearer {api_key}"
        headers = {
            "Content-Type": "application/json",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
            "Authorization": auth,
        }
        if self._to_openai:
            for header, variable in _OPENAI_HEADERS.items():
                if os.environ.get(variable):
                    headers[header] = os.environ[variable]
        for value in headers.values():
            if "\r" in value or "\n" in value or "\0" in value:
                raise ConfigError(
                    f"{self.name}: the API key (environment variable {self.api_key_env}) or a "
                    "header holds a line break or NUL, which would end the HTTP header"
                )
        return headers

    def _bind(self) -> tuple[Pool, _Gate]:
        loop = asyncio.get_running_loop()
        if self._pool is None or self._loop is not loop:
            # A pool's connections belong to one loop: a new loop gets a new pool.
            self._pool = Pool(self.max_response_bytes)
            self._loop = loop
        return self._pool, _gate(self.endpoint, self.concurrency)

    def retry_wait(self, exc: Exception, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based) after ``exc``."""
        return retry_wait(
            getattr(exc, "retry_after", None),
            retry,
            base=self.backoff_base,
            cap=self.max_retry_wait,
        )

    async def post(
        self, path: str, body: dict[str, Any], *, where: str | None = None
    ) -> tuple[bytes, int, int]:
        """POST ``body`` as JSON to ``path``, retrying transient failures (module docstring).

        Args:
            path: ``/route`` under the base URL, or a full URL.
            body: The JSON body, sent verbatim.
            where: How error messages name the endpoint (default: the URL posted to).

        Returns:
            The 2xx response's body, its status and the attempts it took.

        Raises:
            RateLimited, ServerError: Still failing after ``max_retries`` retries.
            EndpointUnavailable: Connection failures or timeouts after ``max_retries`` retries,
                or no answer within ``total_timeout``.
            ClientError: The server refused the request (4xx other than 429); not retried.
        """
        where = where or redact_urls_in(self.url(path))
        payload = json.dumps(body, separators=(",", ":")).encode()  # once for every attempt
        if self.total_timeout is None:
            return await self._attempts(path, payload, where, None)
        deadline = asyncio.get_running_loop().time() + self.total_timeout
        try:
            async with asyncio.timeout(self.total_timeout):
                return await self._attempts(path, payload, where, deadline)
        except TimeoutError as exc:
            raise EndpointUnavailable(
                f"{where} gave no answer within the total deadline of {self.total_timeout:g} s "
                "for the call, retries and waits included (--total-timeout)",
                url=self.endpoint,
            ) from exc

    async def _attempts(
        self, path: str, payload: bytes, where: str, deadline: float | None
    ) -> tuple[bytes, int, int]:
        attempt = 0
        capped: str | None = None  # what the server asked for, when a wait was capped
        while True:
            attempt += 1
            try:
                content, status = await self._post_once(path, payload, where)
            except (RateLimited, ServerError, EndpointUnavailable) as exc:
                if attempt > self.max_retries:
                    note = f"; {capped}" if capped else ""
                    raise type(exc)(
                        f"{exc} (gave up after {attempt} attempt(s){note})",
                        **_error_fields(exc),
                    ) from exc.__cause__ or exc
                wait = self.retry_wait(exc, attempt - 1)
                self._check_server_wait(exc, wait, where, deadline)
                note_now = capped_wait_note(exc.retry_after, self.max_retry_wait, where=where)
                if note_now is not None:
                    capped = note_now
                    warnings.warn(note_now, ServerWaitWarning, stacklevel=2)
                if isinstance(exc, RateLimited):
                    _gate(self.endpoint, self.concurrency).hold.block(wait)
                else:
                    await asyncio.sleep(wait)
                continue
            return content, status, attempt

    def _check_server_wait(
        self, exc: EndpointError, wait: float, where: str, deadline: float | None
    ) -> None:
        """Fail the call at once when the server's Retry-After would outlast its total
        deadline (a wait that cannot end in a retry)."""
        left = None if deadline is None else deadline - asyncio.get_running_loop().time()
        total = self.total_timeout or 0.0
        note = deadline_wait_note(exc.retry_after, wait, left=left, total=total, where=where)
        if note is not None:
            raise type(exc)(f"{exc}; {note}", **_error_fields(exc)) from exc.__cause__ or exc

    def url(self, path: str) -> str:
        """The URL ``path`` is posted to (without the base URL's query, which every request
        carries)."""
        return path if "://" in path else f"{self.base_url}{path}"

    async def _post_once(self, path: str, payload: bytes, where: str) -> tuple[bytes, int]:
        pool, gate = self._bind()
        async with gate.semaphore:
            hold = gate.hold.remaining()
            if hold > 0:
                await asyncio.sleep(hold)
            self.requests_sent += 1
            try:
                async with asyncio.timeout(self.timeout):  # the attempt as a whole
                    answer = await pool.post(self.url(path) + self._query, payload, self._headers)
            except TimeoutError as exc:
                raise EndpointUnavailable(
                    f"{where} timed out: no whole answer within the per-attempt deadline of "
                    f"{self.timeout:g} s (--timeout)",
                    url=self.endpoint,
                ) from exc
            except BodyTooLarge as exc:
                raise ResponseFormatError(
                    f"{where} {exc.reason()}", status=exc.status, url=self.endpoint
                ) from exc
            except (OSError, WireError) as exc:  # connecting, sending or reading failed
                detail = self.scrub(str(exc) or "no detail")
                raise EndpointUnavailable(
                    f"{where} unreachable: {type(exc).__name__}: {detail}", url=self.endpoint
                ) from exc
        if not 200 <= answer.status <= 299:
            raise self._status_error(answer.status, answer.headers, answer.body, where)
        return answer.body, answer.status

    def scrub(self, text: str) -> str:
        """``text`` (a server's message) with its URLs redacted and any credential of the base
        URL it quotes written as ``***``."""
        text = redact_urls_in(text)
        for secret in self._secrets:
            text = text.replace(secret, "***")
        return text

    def _status_error(
        self, status: int, headers: dict[str, str], body: bytes, where: str
    ) -> EndpointError:
        message = f"{where} answered HTTP {status}: {self.scrub(server_message(body))}"
        wait = retry_after_from_headers(headers)
        if status == 429:
            return RateLimited(message, retry_after=wait, url=self.endpoint)
        if 500 <= status <= 599:
            return ServerError(message, retry_after=wait, status=status, url=self.endpoint)
        if 400 <= status <= 499:
            return ClientError(message, status=status, url=self.endpoint)
        return EndpointError(message, status=status, url=self.endpoint)

    async def aclose(self) -> None:
        """Close the HTTP connections (a later call opens new ones)."""
        pool, self._pool, self._loop = self._pool, None, None
        if pool is not None:
            await pool.aclose()
