"""HTTP/1.1 on asyncio streams, for the model-server client: one request, one bounded answer.

What a model server needs and no more: a ``POST`` of a JSON body and the answer's status, headers
and body, over a kept-alive connection (:mod:`._pool` keeps them). Written for the per-request CPU
(about a tenth of a general HTTP client's: no request or response objects, no hooks, one
write per request) and for hostile servers (issue 37):

- the answer's head (status line and headers) holds at most :data:`MAX_HEAD_BYTES`;
- its body, decoded, at most ``limit`` bytes, and so does the body as sent (a compressed stream
  of empty blocks never ends decoding nothing): a ``Content-Length`` past the cap fails before
  any of the body is read, a chunked or read-to-close body at the first byte past it, a gzip or
  deflate body as it inflates, in bounded steps (:class:`BodyTooLarge`);
- a ``Content-Encoding`` the request did not accept, a malformed status line, header, chunk size
  or length is a :class:`WireError` naming what was wrong (the client treats it as a broken
  connection: retried).
"""

from __future__ import annotations

import asyncio
import zlib
from dataclasses import dataclass

from citegraph.models.server._body import BodyTooLarge

__all__ = ["ACCEPT_ENCODING", "MAX_HEAD_BYTES", "Answer", "NoAnswer", "WireError", "read_answer"]

MAX_HEAD_BYTES = 64 * 1024
"""Most bytes of an answer's status line and headers together (and of one chunk-size line)."""
ACCEPT_ENCODING = "gzip, deflate"
"""The encodings a request accepts: those :mod:`zlib` decodes in bounded steps."""
_READ = 64 * 1024  # bytes asked of the stream per read of a body


class WireError(Exception):
    """The server's bytes are not an HTTP/1.1 answer (or the connection ended inside one)."""


class NoAnswer(WireError):
    """The connection ended before any byte of an answer."""


@dataclass(frozen=True, slots=True)
class Answer:
    """One HTTP answer, its body read whole and decoded.

    Attributes:
        status: The status code.
        headers: The header fields, names lower-cased; repeated fields joined by ``", "``.
        body: The body, decoded (``Content-Encoding`` undone).
        reusable: Whether the connection may carry another request.
    """

    status: int
    headers: dict[str, str]
    body: bytes
    reusable: bool


def _parse_head(head: bytes) -> tuple[int, str, dict[str, str]]:
    """The status, HTTP version and headers of an answer's head (``\\r\\n\\r\\n`` included)."""
    lines = head.decode("latin-1").split("\r\n")
    version, _, rest = lines[0].partition(" ")
    code = rest[:3]
    if not version.startswith("HTTP/1.") or len(code) != 3 or not code.isdigit():
        raise WireError(f"not an HTTP/1.x status line: {lines[0][:80]!r}")
    headers: dict[str, str] = {}
    for line in lines[1:]:
        if not line:
            continue
        name, colon, value = line.partition(":")
        if not colon or not name or name != name.strip():
            raise WireError(f"malformed header line: {line[:80]!r}")
        key = name.lower()
        value = value.strip()
        headers[key] = f"{headers[key]}, {value}" if key in headers else value
    return int(code), version, headers


async def _head(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readuntil(b"\r\n\r\n")
    except asyncio.LimitOverrunError as exc:
        raise WireError(f"the answer's headers pass {MAX_HEAD_BYTES:,} bytes") from exc
    except asyncio.IncompleteReadError as exc:
        if not exc.partial:
            raise NoAnswer("the server closed the connection without answering") from exc
        raise WireError("the server closed the connection inside the answer's head") from exc


class _Decoder:
    """The body's decoded bytes, both sides bounded by ``limit`` (module docs)."""

    def __init__(self, encoding: str, limit: int, status: int) -> None:
        self.limit = limit
        self.status = status
        self.raw = 0
        self.parts: list[bytes] = []
        self.size = 0
        codings = [c.strip().lower() for c in encoding.split(",") if c.strip()]
        codings = [c for c in codings if c != "identity"]
        if len(codings) > 1 or (codings and codings[0] not in ("gzip", "x-gzip", "deflate")):
            raise WireError(
                f"the answer's Content-Encoding {encoding!r} was not asked for "
                f"(the request accepts {ACCEPT_ENCODING})"
            )
        self.coding = codings[0] if codings else None
        wbits = 16 + zlib.MAX_WBITS if self.coding in ("gzip", "x-gzip") else zlib.MAX_WBITS
        self.inflate = zlib.decompressobj(wbits) if self.coding else None
        self.raw_deflate = False

    def feed(self, data: bytes) -> None:
        self.raw += len(data)
        if self.raw > self.limit:
            raise BodyTooLarge(self.limit, self.status)
        if self.inflate is None:
            self._keep(data)
            return
        try:
            while data:
                out = self.inflate.decompress(data, self.limit - self.size + 1)
                self._keep(out)
                data = self.inflate.unconsumed_tail
        except zlib.error as exc:
            if self.coding == "deflate" and not self.raw_deflate and self.size == 0:
                # some servers send "deflate" as a raw stream, without the zlib header
                self.raw_deflate, self.inflate = True, zlib.decompressobj(-zlib.MAX_WBITS)
                self.raw -= len(data)
                self.feed(data)
                return
            raise WireError(f"the {self.coding} body does not decode: {exc}") from exc

    def _keep(self, out: bytes) -> None:
        if out:
            self.size += len(out)
            if self.size > self.limit:
                raise BodyTooLarge(self.limit, self.status)
            self.parts.append(out)

    def body(self) -> bytes:
        if self.inflate is not None:
            self._keep(self.inflate.flush())
        return self.parts[0] if len(self.parts) == 1 else b"".join(self.parts)


async def _exactly(reader: asyncio.StreamReader, n: int, decoder: _Decoder) -> None:
    while n > 0:
        try:
            data = await reader.readexactly(min(n, _READ))
        except asyncio.IncompleteReadError as exc:
            raise WireError("the server closed the connection inside the body") from exc
        decoder.feed(data)
        n -= len(data)


async def _chunked(reader: asyncio.StreamReader, decoder: _Decoder) -> None:
    while True:
        try:
            line = await reader.readuntil(b"\r\n")
        except (asyncio.LimitOverrunError, asyncio.IncompleteReadError) as exc:
            raise WireError("a chunk-size line is malformed or cut") from exc
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            size = -1
        if size < 0:
            raise WireError(f"a malformed chunk size: {line[:40]!r}")
        if size == 0:
            await _trailers(reader)
            return
        await _exactly(reader, size, decoder)
        if await _crlf(reader) != b"\r\n":
            raise WireError("a chunk does not end with CRLF")


async def _crlf(reader: asyncio.StreamReader) -> bytes:
    try:
        return await reader.readexactly(2)
    except asyncio.IncompleteReadError as exc:
        raise WireError("the server closed the connection inside the body") from exc


async def _trailers(reader: asyncio.StreamReader) -> None:
    seen = 0
    while True:
        try:
            line = await reader.readuntil(b"\r\n")
        except (asyncio.LimitOverrunError, asyncio.IncompleteReadError) as exc:
            raise WireError("the chunked body's trailer is malformed or cut") from exc
        seen += len(line)
        if line == b"\r\n":
            return
        if seen > MAX_HEAD_BYTES:
            raise WireError(f"the answer's trailers pass {MAX_HEAD_BYTES:,} bytes")


async def _to_close(reader: asyncio.StreamReader, decoder: _Decoder) -> None:
    while data := await reader.read(_READ):
        decoder.feed(data)


async def read_answer(
    reader: asyncio.StreamReader, *, limit: int, head_only: bool = False
) -> Answer:
    """Read one answer from ``reader``: interim ``1xx`` answers skipped, the body bounded.

    Args:
        reader: The connection's stream (made with ``limit=MAX_HEAD_BYTES``).
        limit: Most bytes of the body, decoded and as sent.
        head_only: The request was ``HEAD`` (or ``CONNECT``): no body follows.

    Raises:
        WireError: Not an HTTP/1.x answer, or the connection ended inside it.
        BodyTooLarge: The body passes ``limit`` (announced, sent or inflated).
    """
    while True:
        status, version, headers = _parse_head(await _head(reader))
        if not 100 <= status <= 199 or status == 101:
            break
    connection = headers.get("connection", "").lower()
    reusable = "close" not in connection and (version != "HTTP/1.0" or "keep-alive" in connection)
    if head_only or status in (204, 304) or 100 <= status <= 199:
        return Answer(status, headers, b"", reusable)
    encoding = headers.get("content-encoding", "")
    decoder = _Decoder(encoding, limit, status)
    if "chunked" in headers.get("transfer-encoding", "").lower():
        await _chunked(reader, decoder)
    elif "content-length" in headers:
        declared = headers["content-length"].split(",")[0].strip()
        if not declared.isdigit():
            raise WireError(f"a malformed Content-Length: {headers['content-length'][:40]!r}")
        length = int(declared)
        if length > limit:
            raise BodyTooLarge(limit, status, length)
        await _exactly(reader, length, decoder)
    else:  # the body ends with the connection
        await _to_close(reader, decoder)
        reusable = False
    return Answer(status, headers, decoder.body(), reusable)
