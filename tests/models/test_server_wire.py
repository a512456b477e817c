"""citegraph's own HTTP/1.1 client for model servers (issue 40, item 5): what it reads from the
wire (lengths, chunks, encodings, interim answers, malformed answers), and how its pool keeps,
reuses, drops and redirects connections, and goes through a proxy.

Answers are bytes written by hand here, fed to the reader or sent by a scripted TCP server on
127.0.0.1, so every case is one a real server can send."""

from __future__ import annotations

import asyncio
import gzip
import json
import zlib
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import pytest

from citegraph.errors import ConfigError, EndpointUnavailable
from citegraph.models.server._body import BodyTooLarge
from citegraph.models.server._http import ServerClient
from citegraph.models.server._pool import Pool, route_of
from citegraph.models.server._wire import MAX_HEAD_BYTES, Answer, NoAnswer, WireError, read_answer

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


def read(raw: bytes, limit: int = 1 << 20) -> Answer:
    async def go() -> Answer:
        reader = asyncio.StreamReader(limit=MAX_HEAD_BYTES)
        reader.feed_data(raw)
        reader.feed_eof()
        return await read_answer(reader, limit=limit)

    return asyncio.run(go())


def head(status: str = "200 OK", *fields: str) -> bytes:
    return ("\r\n".join([f"HTTP/1.1 {status}", *fields]) + "\r\n\r\n").encode()


# -- reading one answer -------------------------------------------------------------------------


def test_a_content_length_body() -> None:
    answer = read(head("200 OK", "Content-Length: 5", "X-A: 1", "x-a: 2") + b"hello")
    assert (answer.status, answer.body, answer.reusable) == (200, b"hello", True)
    assert answer.headers["x-a"] == "1, 2" and answer.headers["content-length"] == "5"


def test_a_chunked_body_with_extensions_and_trailers() -> None:
    body = b"4;name=x\r\nabcd\r\n3\r\nefg\r\n0\r\nX-Trailer: t\r\n\r\n"
    answer = read(head("200 OK", "Transfer-Encoding: chunked") + body)
    assert answer.body == b"abcdefg" and answer.reusable


def test_interim_answers_are_skipped() -> None:
    raw = (
        head("100 Continue")
        + head("103 Early Hints", "Link: </x>")
        + head("201 Created", "Content-Length: 2")
        + b"ok"
    )
    assert read(raw).status == 201 and read(raw).body == b"ok"


@pytest.mark.parametrize(
    ("coding", "encode"),
    [
        ("gzip", gzip.compress),
        ("deflate", zlib.compress),  # zlib-wrapped, as the RFC says
        ("deflate", lambda b: zlib.compress(b)[2:-4]),  # raw deflate, as some servers send
    ],
)
def test_encoded_bodies_are_decoded(coding: str, encode: Callable[[bytes], bytes]) -> None:
    text = json.dumps({"choices": ["x" * 5000]}).encode()
    sent = encode(text)
    answer = read(
        head("200 OK", f"Content-Encoding: {coding}", f"Content-Length: {len(sent)}") + sent
    )
    assert answer.body == text


def test_a_body_without_length_ends_with_the_connection() -> None:
    answer = read(head("200 OK") + b"to the end")
    assert answer.body == b"to the end" and not answer.reusable


def test_connection_close_and_http_1_0_are_not_reused() -> None:
    assert not read(head("200 OK", "Connection: close", "Content-Length: 0")).reusable
    old = b"HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"
    assert not read(old).reusable
    kept = b"HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n"
    assert read(kept).reusable


@pytest.mark.parametrize(
    ("raw", "error", "words"),
    [
        (b"", NoAnswer, "without answering"),
        (b"HTTP/1.1 200 OK\r\nContent-", WireError, "inside the answer's head"),
        (b"SSH-2.0-OpenSSH\r\n\r\n", WireError, "not an HTTP/1.x status line"),
        (b"HTTP/1.1 2x0 OK\r\n\r\n", WireError, "not an HTTP/1.x status line"),
        (head("200 OK", "no colon here"), WireError, "malformed header line"),
        (head("200 OK", "Content-Length: -3"), WireError, "malformed Content-Length"),
        (head("200 OK", "Content-Length: 10") + b"short", WireError, "inside the body"),
        (head("200 OK", "Transfer-Encoding: chunked") + b"zz\r\n", WireError, "chunk size"),
        (head("200 OK", "Transfer-Encoding: chunked") + b"3\r\nabcXY", WireError, "CRLF"),
        (head("200 OK", "Content-Encoding: br", "Content-Length: 1") + b"x", WireError, "'br'"),
        (head("200 OK", "Content-Encoding: gzip", "Content-Length: 3") + b"xyz", WireError, "gzip"),
        (b"HTTP/1.1 200 OK\r\nX: " + b"a" * MAX_HEAD_BYTES + b"\r\n\r\n", WireError, "65,536"),
    ],
)
def test_malformed_answers_say_what_is_wrong(raw: bytes, error: type, words: str) -> None:
    with pytest.raises(error, match=words.replace("(", r"\(")):
        read(raw)


def test_the_cap_holds_for_every_way_a_body_can_come() -> None:
    with pytest.raises(BodyTooLarge) as caught:  # announced: refused before reading
        read(head("200 OK", "Content-Length: 100000000000"), limit=1000)
    assert caught.value.declared == 100000000000
    with pytest.raises(BodyTooLarge):  # chunked without end
        read(
            head("200 OK", "Transfer-Encoding: chunked") + b"400\r\n" + b"x" * 1024 + b"\r\n", 1000
        )
    with pytest.raises(BodyTooLarge):  # read to close
        read(head("200 OK") + b"x" * 1001, limit=1000)
    bomb = gzip.compress(b"\0" * 10_000_000)  # 10 MB that travel as ~10 KB
    with pytest.raises(BodyTooLarge):
        read(head("200 OK", "Content-Encoding: gzip", "Transfer-Encoding: chunked")
             + b"%x\r\n%s\r\n0\r\n\r\n" % (len(bomb), bomb), limit=100_000)  # fmt: skip
    # empty stored deflate blocks decode to nothing, forever: the bytes as sent are capped too
    empty_blocks = b"\x00\x00\x00\xff\xff" * 400
    with pytest.raises(BodyTooLarge):
        read(head("200 OK", "Content-Encoding: deflate") + empty_blocks, limit=1000)
    assert (
        read(head("200 OK", "Content-Length: 1000") + b"x" * 1000, limit=1000).body == b"x" * 1000
    )


# -- the pool, against scripted servers ---------------------------------------------------------


class Scripted:
    """A TCP server on 127.0.0.1 running ``handler`` per connection; counts connections."""

    def __init__(self, handler: Handler) -> None:
        self.handler = handler
        self.connections = 0
        self.requests: list[tuple[str, dict[str, str], bytes]] = []
        self.server: asyncio.Server | None = None
        self.url = ""

    async def __aenter__(self) -> Scripted:
        async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            self.connections += 1
            try:
                await self.handler(reader, writer)
            finally:
                writer.close()

        self.server = await asyncio.start_server(serve, "127.0.0.1", 0)
        self.url = f"http://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"
        return self

    async def __aexit__(self, *exc: object) -> None:
        assert self.server is not None
        self.server.close()

    async def request(self, reader: asyncio.StreamReader) -> tuple[str, dict[str, str], bytes]:
        """Read one request; record and return its line, headers and body."""
        lines = (await reader.readuntil(b"\r\n\r\n")).decode().split("\r\n")
        fields = dict(line.split(": ", 1) for line in lines[1:] if line)
        headers = {k.lower(): v for k, v in fields.items()}
        body = await reader.readexactly(int(headers.get("content-length", "0")))
        self.requests.append((lines[0], headers, body))
        return lines[0], headers, body


def ok(text: bytes = b"{}", *fields: str) -> bytes:
    return head("200 OK", f"Content-Length: {len(text)}", *fields) + text


def run(go: Callable[[], Awaitable[Any]]) -> Any:
    return asyncio.run(go())  # type: ignore[arg-type]


def test_one_connection_carries_sequential_requests() -> None:
    async def keep(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while not reader.at_eof():
            try:
                await server.request(reader)
            except asyncio.IncompleteReadError:
                return
            writer.write(ok(b'{"n": 1}'))

    server = Scripted(keep)

    async def go() -> list[bytes]:
        async with server:
            pool = Pool(1 << 20)
            got = [(await pool.post(f"{server.url}/v1/x", b"{}", {})).body for _ in range(5)]
            await pool.aclose()
            return got

    assert run(go) == [b'{"n": 1}'] * 5
    assert server.connections == 1 and len(server.requests) == 5
    line, headers, _ = server.requests[0]
    assert line == "POST /v1/x HTTP/1.1" and headers["content-length"] == "2"
    assert headers["host"] == server.url.removeprefix("http://")


def test_a_connection_the_server_closed_while_idle_is_replaced_quietly() -> None:
    async def once(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(ok())  # keep-alive announced, then the connection closes

    server = Scripted(once)

    async def go() -> int:
        async with server:
            pool = Pool(1 << 20)
            for _ in range(3):
                assert (await pool.post(server.url, b"{}", {})).status == 200
                await asyncio.sleep(0.05)
            await pool.aclose()
            return server.connections

    assert run(go) == 3


def test_a_client_counts_one_attempt_when_its_kept_connection_went_stale() -> None:
    """The server drops the idle connection just as the request goes out (no EOF seen yet): the
    request is sent again on a new connection, within the same attempt."""

    async def drop_second(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        if server.connections == 1:
            writer.write(ok(json.dumps({"choices": [{"message": {"content": "a"}}]}).encode()))
            await writer.drain()
            await reader.read(1)  # the next request's first byte, then hang up unanswered
            return
        writer.write(ok(json.dumps({"choices": [{"message": {"content": "b"}}]}).encode()))

    server = Scripted(drop_second)

    async def go() -> tuple[int, int]:
        async with server:
            client = ServerClient("m", provider="vllm", base_url=server.url, max_retries=0)
            for _ in range(2):
                _, status, attempts = await client.post("/x", {"a": 1})
                assert status == 200 and attempts == 1
            await client.aclose()
            return client.requests_sent, server.connections

    assert run(go) == (2, 2)


def test_redirects_keep_the_key_on_the_same_origin_only() -> None:
    async def target(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await other.request(reader)
        writer.write(ok(b'"there"', "Connection: close"))

    other = Scripted(target)

    async def mover(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        line, _, _ = await first.request(reader)
        if line.startswith("POST /a "):
            writer.write(head("307 Temporary Redirect", "Location: /b", "Content-Length: 0"))
            await first.request(reader)
        writer.write(
            head("308 Permanent Redirect", f"Location: {other.url}/c", "Content-Length: 0")
        )

    first = Scripted(mover)

    async def go() -> bytes:
        async with first, other:
            pool = Pool(1 << 20)
            answer = await pool.post(f"{first.url}/a", b'{"q": 1}', {"Authorization": "Bearer k"})
            await pool.aclose()
            return answer.body

    assert run(go) == b'"there"'
    (a, b), (c,) = first.requests, other.requests
    assert [a[0], b[0], c[0]] == ["POST /a HTTP/1.1", "POST /b HTTP/1.1", "POST /c HTTP/1.1"]
    assert a[2] == b[2] == c[2] == b'{"q": 1}'
    assert a[1]["authorization"] == b[1]["authorization"] == "Bearer k"
    assert "authorization" not in c[1]


def test_other_redirects_are_answers() -> None:
    async def moved(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await server.request(reader)
        writer.write(head("302 Found", "Location: /elsewhere", "Content-Length: 0"))

    server = Scripted(moved)

    async def go() -> int:
        async with server:
            pool = Pool(1 << 20)
            status = (await pool.post(server.url, b"{}", {})).status
            await pool.aclose()
            return status

    assert run(go) == 302 and len(server.requests) == 1


def _no_proxy_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("http_proxy", "https_proxy", "all_proxy", "no_proxy"):
        monkeypatch.delenv(name, raising=False)
        monkeypatch.delenv(name.upper(), raising=False)


def test_an_http_proxy_from_the_environment_carries_the_request(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    _no_proxy_env(monkeypatch)

    async def proxy_side(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await proxy.request(reader)
        writer.write(ok(b'"via proxy"'))

    proxy = Scripted(proxy_side)

    async def go() -> bytes:
        async with proxy:
            port = proxy.url.rsplit(":", 1)[1]
            monkeypatch.setenv("HTTP_PROXY", f"http://u:p%40ss@127.0.0.1:{port}")
            pool = Pool(1 << 20)
            body = (await pool.post("http://model-server.internal:8000/v1/x?k=1", b"{}", {})).body
            await pool.aclose()
            return body

    assert run(go) == b'"via proxy"'
    ((line, headers, _),) = proxy.requests
    assert line == "POST http://model-server.internal:8000/v1/x?k=1 HTTP/1.1"
    assert headers["host"] == "model-server.internal:8000"
    assert headers["proxy-authorization"] == "Basic dTpwQHNz"  # u:p@ss


def test_no_proxy_and_unusable_proxies(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_proxy_env(monkeypatch)
    monkeypatch.setenv("HTTPS_PROXY", "http://proxy.example:3128")
    monkeypatch.setenv("NO_PROXY", "localhost,.internal")
    assert route_of("https://gpu.internal/v1").via is None
    assert route_of("http://gpu.internal/v1").via is None  # no HTTP_PROXY
    routed = route_of("https://api.example.com/v1/chat")
    assert routed.via == ("proxy.example", 3128) and routed.target == "/v1/chat"
    monkeypatch.setenv("ALL_PROXY", "socks5://proxy.example:1080")
    with pytest.raises(ConfigError, match=r"ALL_PROXY.*socks5.*NO_PROXY=h"):
        route_of("http://h:1/v1")


def test_a_proxy_refusing_to_tunnel_is_said(monkeypatch: pytest.MonkeyPatch) -> None:
    _no_proxy_env(monkeypatch)

    async def refuse(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await proxy.request(reader)
        writer.write(head("403 Forbidden", "Content-Length: 0"))

    proxy = Scripted(refuse)

    async def go() -> None:
        async with proxy:
            monkeypatch.setenv("HTTPS_PROXY", proxy.url)
            client = ServerClient("m", provider="vllm", base_url="https://gpu.example/v1",
                                  max_retries=0)  # fmt: skip
            try:
                await client.post("/chat/completions", {})
            finally:
                await client.aclose()

    with pytest.raises(
        EndpointUnavailable, match=r"refused to tunnel to gpu\.example:443: HTTP 403"
    ):
        run(go)
    assert proxy.requests[0][0] == "CONNECT gpu.example:443 HTTP/1.1"


def test_route_of_names_hosts_as_http_wants() -> None:
    assert route_of("http://[::1]:8000/v1").host_header == "[::1]:8000"
    assert (
        route_of("https://h/v1?a=1").host_header == "h"
        and route_of("https://h/v1?a=1").target == "/v1?a=1"
    )
    assert route_of("http://u:p@h:80").target == "/"
    with pytest.raises(ConfigError):
        route_of("ftp://h/x")


def test_https_is_verified_and_kept_alive(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A certificate the client does not trust is refused; a trusted one carries requests over
    one kept-alive TLS connection."""
    import shutil
    import ssl
    import subprocess

    from citegraph.models.server import _pool

    if shutil.which("openssl") is None:
        pytest.skip("needs the openssl command to make a certificate")
    cert, key = tmp_path / "cert.pem", tmp_path / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key),
         "-out", str(cert), "-days", "2", "-subj", "/CN=localhost",
         "-addext", "subjectAltName=DNS:localhost"],
        check=True, capture_output=True,
    )  # fmt: skip
    _no_proxy_env(monkeypatch)

    async def answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while True:
            try:
                await server.request(reader)
            except (asyncio.IncompleteReadError, ConnectionError, ssl.SSLError):
                return
            writer.write(ok(b'"secure"'))

    server = Scripted(answer)

    async def go() -> tuple[bytes, int]:
        served = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        served.load_cert_chain(cert, key)
        server.server = await asyncio.start_server(answer, "127.0.0.1", 0, ssl=served)
        port = server.server.sockets[0].getsockname()[1]
        url = f"https://localhost:{port}/v1/x"
        try:
            with pytest.raises(ssl.SSLCertVerificationError):
                await Pool(1 << 20).post(url, b"{}", {})
            trusting = ssl.create_default_context()
            trusting.load_verify_locations(cert)
            monkeypatch.setattr(_pool, "_SSL", trusting)
            pool = Pool(1 << 20)
            bodies = [(await pool.post(url, b"{}", {})).body for _ in range(3)]
            kept = len(pool._open)
            await pool.aclose()
            return bodies[-1], kept
        finally:
            server.server.close()

    assert run(go) == (b'"secure"', 1)
