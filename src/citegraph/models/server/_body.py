"""How much a model server may send: one answer's body, decoded, at most ``max_response_bytes``.

A server that announces ``Content-Length: 100000000000``, streams a chunked body without end or
sends a small gzip body that inflates to gigabytes would otherwise grow the client by its
bandwidth times ``--timeout``. :func:`capped_http_client` gives the ``httpx2`` client that
:class:`~citegraph.models.server._http.ServerClient` hands to the OpenAI SDK: a response hook
refuses a body whose ``Content-Length`` is past the cap before reading any of it, and reads
every other body through a stream that decodes it (gzip, deflate, brotli, zstd: httpx2's
decoders, which inflate in bounded steps) and stops at the first byte past the cap. Error
bodies (a 5xx page the SDK reads for its message) and redirect bodies go through the same
hook. Past the cap the read stops with :class:`BodyTooLarge`, which the SDK passes through
untouched and the client turns into a :class:`~citegraph.errors.ResponseFormatError` (not
retried: the same request would get the same answer).
"""

from __future__ import annotations

import datetime
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import httpx2

__all__ = ["DEFAULT_MAX_RESPONSE_BYTES", "BodyTooLarge", "capped_http_client", "size_text"]

DEFAULT_MAX_RESPONSE_BYTES = 32 * 2**20
"""Most bytes of one answer's body, decoded, unless raised (``--max-response-mb``,
``max_response_bytes=``): 32 MiB, far above a chat completion, a batch of prompt
log-probabilities or a rerank answer."""

_MIB = 2**20


def size_text(n: int) -> str:
    """A byte count as messages show it: ``32 MiB``, ``1.5 MiB``, ``4,096 bytes``."""
    if n >= _MIB:
        return f"{n // _MIB} MiB" if n % _MIB == 0 else f"{n / _MIB:.1f} MiB"
    return f"{n:,} bytes"


class BodyTooLarge(Exception):
    """A response body passed the cap (raised inside the HTTP client, never by the SDK).

    Args:
        limit: The cap in bytes.
        status: The response's HTTP status.
        declared: The ``Content-Length`` it announced, when that was past the cap.
    """

    def __init__(self, limit: int, status: int, declared: int | None = None) -> None:
        self.limit = limit
        self.status = status
        self.declared = declared
        super().__init__(self.reason())

    def reason(self) -> str:
        """What happened, for the message of the error the client raises."""
        cap = f"the {size_text(self.limit)} a model server's answer may hold"
        hint = "--max-response-mb (max_response_bytes=) raises the cap"
        if self.declared is not None:
            return (
                f"announced a body of {self.declared} bytes (Content-Length), more than {cap}; "
                f"{hint}"
            )
        return f"sent a body of more than {cap} (the read was stopped there); {hint}"


class _CappedStream(httpx2.AsyncByteStream):
    """The decoded bytes of ``source``, stopping with :class:`BodyTooLarge` past ``limit``."""

    def __init__(self, source: httpx2.Response, limit: int) -> None:
        self._source = source
        self._limit = limit

    async def __aiter__(self) -> AsyncIterator[bytes]:
        seen = 0
        async for chunk in self._source.aiter_bytes():
            seen += len(chunk)
            if seen > self._limit:
                raise BodyTooLarge(self._limit, self._source.status_code)
            yield chunk

    async def aclose(self) -> None:
        await self._source.aclose()

    @property
    def elapsed(self) -> datetime.timedelta | None:
        """The elapsed time of the wrapped stream (what ``Response.elapsed`` reads)."""
        return getattr(self._source.stream, "elapsed", None)


def _encoded(headers: httpx2.Headers) -> bool:
    values = headers.get_list("content-encoding", split_commas=True)
    return any(v.strip().lower() not in ("", "identity") for v in values)


def response_cap(limit: int) -> Callable[[httpx2.Response], Awaitable[None]]:
    """The response hook that bounds every body to ``limit`` decoded bytes (module docs)."""

    async def cap(response: httpx2.Response) -> None:
        encoded = _encoded(response.headers)
        declared = response.headers.get("content-length", "").strip()
        if not encoded and declared.isdigit() and int(declared) > limit:
            raise BodyTooLarge(limit, response.status_code, int(declared))
        source = httpx2.Response(
            response.status_code, headers=response.headers.copy(), stream=response.stream
        )
        if encoded:  # decoded here: the response must not decode it again
            del response.headers["content-encoding"]
            if "content-length" in response.headers:
                del response.headers["content-length"]
        response.stream = _CappedStream(source, limit)

    return cap


def capped_http_client(openai: Any, *, timeout: float, limit: int) -> httpx2.AsyncClient:
    """The SDK's default ``httpx2`` client (its connection limits, redirects), with every
    response body bounded to ``limit`` decoded bytes."""
    client: httpx2.AsyncClient = openai.DefaultAsyncHttpxClient(
        timeout=timeout, event_hooks={"response": [response_cap(limit)]}
    )
    return client


MAX_REPLY_CHARS = 1_000_000
"""Most characters of a server's chat reply (1 MB of text, as many as an answer of
``answers.jsonl`` may hold): a longer reply is a failed call, never stored whole in a record
(``max_reply_chars=`` on the server client raises it)."""


def reply_too_long(text: str, limit: int = MAX_REPLY_CHARS) -> str | None:
    """Why a reply of ``text`` is too long to keep, or ``None`` when it is not.

    Example:
        >>> reply_too_long("x" * 12, limit=10)
        'the reply holds 12 characters, more than the 10 a reply may hold (max_reply_chars)'
    """
    if len(text) <= limit:
        return None
    return (
        f"the reply holds {len(text):,} characters, more than the {limit:,} a reply may hold "
        "(max_reply_chars)"
    )
