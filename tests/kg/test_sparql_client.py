"""SparqlClient against a scripted local HTTP server (127.0.0.1, never the internet)."""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pytest
from pydantic import ValidationError

from citegraph.errors import (
    ClientError,
    ConfigError,
    EndpointError,
    EndpointUnavailable,
    RateLimited,
    ResponseFormatError,
    ServerError,
)
from citegraph.kg import (
    SparqlClient,
    SparqlClientConfig,
    qlever_wikidata,
    user_agent_for,
    virtuoso,
    wikidata,
)
from citegraph.kg._sparql_config import DEFAULT_USER_AGENT
from citegraph.kg._sparql_response import parse_retry_after

SPARQL_JSON = "application/sparql-results+json"
RESULTS = {
    "head": {"vars": ["x"]},
    "results": {"bindings": [{"x": {"type": "literal", "value": "Newark"}}]},
}
UA = "citegraph-tests/1.0 (tests@example.org)"


@dataclass
class Reply:
    status: int = 200
    body: bytes = json.dumps(RESULTS).encode()
    headers: dict[str, str] = field(default_factory=lambda: {"Content-Type": SPARQL_JSON})
    delay: float = 0.0


class ScriptedServer:
    """Answers with the scripted replies in order (then 200 RESULTS); records every request."""

    def __init__(self) -> None:
        self.script: list[Reply] = []
        self.requests: list[dict[str, Any]] = []
        self.in_flight = 0
        self.max_in_flight = 0
        self._lock = threading.Lock()
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.handle(self)

            def do_POST(self) -> None:
                owner.handle(self)

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.handle_error = lambda *args: None  # type: ignore[method-assign]
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/sparql"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length") or 0)
        body = handler.rfile.read(length).decode() if length else ""
        with self._lock:
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
            reply = self.script.pop(0) if self.script else Reply()
            self.requests.append(
                {
                    "method": handler.command,
                    "path": handler.path,
                    "headers": {k.lower(): v for k, v in handler.headers.items()},
                    "form": parse_qs(body),
                    "params": parse_qs(urlsplit(handler.path).query),
                    "time": time.monotonic(),
                }
            )
        time.sleep(reply.delay)
        with self._lock:  # before answering: the client cannot send its next request earlier
            self.in_flight -= 1
        handler.send_response(reply.status)
        for name, value in reply.headers.items():
            handler.send_header(name, value)
        handler.send_header("Content-Length", str(len(reply.body)))
        handler.end_headers()
        handler.wfile.write(reply.body)


@pytest.fixture
def server() -> Iterator[ScriptedServer]:
    srv = ScriptedServer()
    srv.thread.start()
    yield srv
    srv.httpd.shutdown()
    srv.httpd.server_close()


def make_config(url: str, **fields: Any) -> SparqlClientConfig:
    defaults: dict[str, Any] = {
        "endpoint": url,
        "user_agent": UA,
        "max_retries": 3,
        "backoff_base": 0.01,
        "max_retry_wait": 0.05,
        "connect_timeout": 2.0,
        "read_timeout": 5.0,
    }
    return SparqlClientConfig(**{**defaults, **fields})


class SleepRecorder:
    def __init__(self) -> None:
        self.waits: list[float] = []

    async def __call__(self, seconds: float) -> None:
        self.waits.append(seconds)
        await asyncio.sleep(0)


def run_query(config: SparqlClientConfig, query: str = "SELECT ?x WHERE {}", **kw: Any) -> Any:
    async def go() -> Any:
        async with SparqlClient(config, **kw) as client:
            return await client.query(query)

    return asyncio.run(go())


# ---------------------------------------------------------------- requests and headers
def test_post_sends_form_query_user_agent_and_accept(server: ScriptedServer) -> None:
    query = 'SELECT ?x WHERE { ?x rdfs:label "a & b = c ☃"@en }'
    assert run_query(make_config(server.url), query) == RESULTS
    (req,) = server.requests
    assert req["method"] == "POST" and req["path"] == "/sparql"
    assert req["headers"]["user-agent"] == UA
    assert req["headers"]["accept"] == SPARQL_JSON
    assert req["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert req["form"] == {"query": [query]}


def test_get_sends_query_parameter_and_keeps_endpoint_parameters(server: ScriptedServer) -> None:
    query = "SELECT * { ?s ?p ?o } # 100% & more"
    assert run_query(make_config(server.url + "?timeout=5", method="GET"), query) == RESULTS
    (req,) = server.requests
    assert req["method"] == "GET"
    assert req["params"] == {"timeout": ["5"], "query": [query]}
    assert req["headers"]["user-agent"] == UA and req["headers"]["accept"] == SPARQL_JSON


def test_ask_and_select_helpers(server: ScriptedServer) -> None:
    server.script = [Reply(body=b'{"head":{},"boolean":true}'), Reply()]

    async def go() -> tuple[bool, list[Any]]:
        async with SparqlClient(make_config(server.url)) as client:
            return await client.ask("ASK {}"), await client.select("SELECT ?x {}")

    answer, rows = asyncio.run(go())
    assert answer is True
    assert rows == [{"x": {"type": "literal", "value": "Newark"}}]

    async def wrong_kind() -> None:
        async with SparqlClient(make_config(server.url)) as client:
            await client.ask("SELECT ?x {}")  # the server answers with SELECT results

    with pytest.raises(EndpointError, match="expected an ASK result"):
        asyncio.run(wrong_kind())


# ---------------------------------------------------------------- retries
def test_429_waits_for_retry_after_seconds(server: ScriptedServer) -> None:
    server.script = [Reply(429, b"slow down", {"Retry-After": "7"}), Reply()]
    sleep = SleepRecorder()
    assert run_query(make_config(server.url, max_retry_wait=30), sleep=sleep) == RESULTS
    assert len(server.requests) == 2
    # The wait is 7 s minus the few ms between the 429 and the next attempt.
    assert len(sleep.waits) == 1 and 6.5 < sleep.waits[0] <= 7.0


def test_retry_after_is_capped(server: ScriptedServer) -> None:
    server.script = [Reply(429, b"", {"Retry-After": "120"}), Reply()]
    sleep = SleepRecorder()
    run_query(make_config(server.url, max_retry_wait=2), sleep=sleep)
    assert len(sleep.waits) == 1 and 1.5 < sleep.waits[0] <= 2.0


def test_retry_after_http_date_on_503(server: ScriptedServer) -> None:
    when = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    server.script = [Reply(503, b"busy", {"Retry-After": when}), Reply()]
    sleep = SleepRecorder()
    run_query(make_config(server.url, max_retry_wait=60), sleep=sleep)
    # HTTP dates have one-second resolution: 30 s from now is 29 to 30 s.
    assert len(sleep.waits) == 1 and 28.5 < sleep.waits[0] <= 30.0


def test_429_holds_back_the_clients_other_requests(server: ScriptedServer) -> None:
    server.script = [Reply(429, b"", {"Retry-After": "0.3"}), Reply(), Reply()]

    async def go() -> None:
        async with SparqlClient(make_config(server.url, max_concurrency=2, max_retry_wait=1)) as c:

            async def later() -> None:
                await asyncio.sleep(0.1)  # starts after the 429 arrived
                await c.query("SELECT ?b {}")

            await asyncio.gather(c.query("SELECT ?a {}"), later())

    asyncio.run(go())
    first, *rest = server.requests
    assert first["form"]["query"] == ["SELECT ?a {}"] and len(rest) == 2
    # Without the shared hold, ?b would go out at about 0.1 s; with it, not before 0.3 s.
    assert all(r["time"] - first["time"] >= 0.28 for r in rest)


def test_429_exhausted_raises_rate_limited(server: ScriptedServer) -> None:
    server.script = [Reply(429, b"", {"Retry-After": "0"}) for _ in range(2)]
    with pytest.raises(RateLimited) as info:
        run_query(make_config(server.url, max_retries=1))
    assert info.value.retry_after == 0.0 and info.value.status == 429
    assert len(server.requests) == 2


def test_503_then_200_retries_with_real_backoff(server: ScriptedServer) -> None:
    server.script = [Reply(503, b"<html>Service Unavailable</html>", {}), Reply()]
    started = time.monotonic()
    assert run_query(make_config(server.url, backoff_base=0.04, max_retry_wait=1)) == RESULTS
    assert len(server.requests) == 2
    assert time.monotonic() - started >= 0.02  # the first backoff is 0.02 to 0.04 s


def test_5xx_backoff_doubles_then_raises_server_error(server: ScriptedServer) -> None:
    server.script = [Reply(502, b"bad gateway", {}) for _ in range(4)]
    sleep = SleepRecorder()
    config = make_config(server.url, max_retries=3, backoff_base=1.0, max_retry_wait=100)
    with pytest.raises(ServerError) as info:
        run_query(config, sleep=sleep)
    assert info.value.status == 502 and "bad gateway" in str(info.value)
    assert len(server.requests) == 4
    # Retry n waits between half and all of 1 * 2**n seconds.
    w0, w1, w2 = sleep.waits
    assert 0.5 <= w0 <= 1 and 1 <= w1 <= 2 and 2 <= w2 <= 4


def test_400_is_a_client_error_and_not_retried(server: ScriptedServer) -> None:
    body = b'MalformedQueryException: Encountered " "}" at line 1'
    server.script = [Reply(400, body, {"Content-Type": "text/plain"})]
    with pytest.raises(ClientError) as info:
        run_query(make_config(server.url))
    assert info.value.status == 400 and info.value.url == server.url
    assert "MalformedQueryException" in str(info.value)
    assert len(server.requests) == 1


@pytest.mark.parametrize(
    ("body", "content_type", "problem"),
    [
        (b"<!DOCTYPE html><html><body>Oops</body></html>", "text/html", "not JSON"),
        (b'{"head": {"vars": []}, "results": {"bindings": [', SPARQL_JSON, "not JSON"),
        (b'{"error": "timeout"}', "application/json", "no 'head'"),
        (b'{"head": {"vars": []}}', SPARQL_JSON, "neither 'results.bindings' nor 'boolean'"),
        (b"[1, 2]", SPARQL_JSON, "a list"),
    ],
)
def test_body_that_is_not_sparql_json_is_a_format_error(
    server: ScriptedServer, body: bytes, content_type: str, problem: str
) -> None:
    server.script = [Reply(200, body, {"Content-Type": content_type})]
    with pytest.raises(ResponseFormatError) as info:
        run_query(make_config(server.url))
    message = str(info.value)
    assert info.value.status == 200 and info.value.url == server.url
    assert server.url in message and "HTTP 200" in message and problem in message
    assert body.decode()[:10] in message  # the snippet
    assert len(server.requests) == 1  # not retried


def test_read_timeout_applies_and_raises_endpoint_error(server: ScriptedServer) -> None:
    server.script = [Reply(delay=0.6)]
    started = time.monotonic()
    with pytest.raises(EndpointUnavailable) as info:
        run_query(make_config(server.url, read_timeout=0.15, max_retries=0))
    assert time.monotonic() - started < 0.55
    assert isinstance(info.value.__cause__, httpx2.ReadTimeout)
    assert info.value.status is None and "ReadTimeout" in str(info.value)


def test_timeout_is_retried(server: ScriptedServer) -> None:
    server.script = [Reply(delay=0.5), Reply()]
    assert run_query(make_config(server.url, read_timeout=0.15, max_retries=1)) == RESULTS
    assert len(server.requests) == 2


def test_connection_refused_is_retried_then_raised() -> None:
    with socket.socket() as sock:  # a port nobody listens on once the socket is closed
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = make_config(f"http://127.0.0.1:{port}/sparql", max_retries=2)

    async def go() -> SparqlClient:
        async with SparqlClient(config) as client:
            with pytest.raises(EndpointUnavailable) as info:
                await client.query("ASK {}")
            assert isinstance(info.value.__cause__, httpx2.ConnectError)
            return client

    assert asyncio.run(go()).requests_sent == 3


# ---------------------------------------------------------------- concurrency
@pytest.mark.parametrize(("limit", "expected_max"), [(1, 1), (4, 4)])
def test_concurrency_is_limited(server: ScriptedServer, limit: int, expected_max: int) -> None:
    server.script = [Reply(delay=0.15) for _ in range(4)]

    async def go() -> None:
        async with SparqlClient(make_config(server.url, max_concurrency=limit)) as client:
            await asyncio.gather(*(client.query(f"SELECT ?x{i} {{}}") for i in range(4)))

    started = time.monotonic()
    asyncio.run(go())
    elapsed = time.monotonic() - started
    assert len(server.requests) == 4
    assert server.max_in_flight == expected_max
    # One at a time: 4 x 0.15 s; four at once: about 0.15 s.
    assert elapsed >= 0.6 if limit == 1 else elapsed < 0.5


# ---------------------------------------------------------------- cache
def test_cache_answers_repeated_queries(server: ScriptedServer, tmp_path: Path) -> None:
    config = make_config(server.url, cache_path=tmp_path / "sparql.sqlite")

    async def go() -> SparqlClient:
        async with SparqlClient(config) as client:
            first = await client.query("SELECT ?x {}")
            second = await client.query("SELECT ?x {}")
            assert first == second == RESULTS
            return client

    client = asyncio.run(go())
    assert len(server.requests) == 1 and client.cache_hits == 1
    asyncio.run(go())  # a new client on the same file: still no request
    assert len(server.requests) == 1
    run_query(config.model_copy(update={"method": "GET"}), "SELECT ?x {}")
    assert len(server.requests) == 2  # the method is part of the key


def test_errors_are_not_cached(server: ScriptedServer, tmp_path: Path) -> None:
    config = make_config(server.url, cache_path=tmp_path / "c.sqlite")
    server.script = [Reply(400, b"bad", {})]
    with pytest.raises(ClientError):
        run_query(config)
    assert run_query(config) == RESULTS
    assert len(server.requests) == 2


# ---------------------------------------------------------------- config and presets
def test_wikidata_preset_requires_a_contact() -> None:
    with pytest.raises(ConfigError, match="User-Agent"):
        wikidata()
    with pytest.raises(ConfigError, match="e-mail address or an http"):
        wikidata(contact="bob")
    config = wikidata(contact="me@example.org", cache_path=Path("x.sqlite"))
    assert config.endpoint == "https://query.wikidata.org/sparql"
    assert config.max_concurrency == 1 and config.require_contact
    assert config.user_agent.startswith("citegraph/0.1.0 (me@example.org) httpx2/")
    assert config.read_timeout > 60 and config.connect_timeout < config.read_timeout
    custom = wikidata(user_agent="MyBot/2.0 (https://example.org/mybot) citegraph/0.1.0")
    assert custom.user_agent.startswith("MyBot/2.0")
    with pytest.raises(ConfigError):  # a hand-made config with the placeholder is refused too
        SparqlClient(config.model_copy(update={"user_agent": DEFAULT_USER_AGENT}))


def test_other_presets_and_default_user_agent() -> None:
    assert "citegraph/0.1.0" in DEFAULT_USER_AGENT and "contact not set" in DEFAULT_USER_AGENT
    assert qlever_wikidata().endpoint == "https://qlever.cs.uni-freiburg.de/api/wikidata"
    assert qlever_wikidata().user_agent == DEFAULT_USER_AGENT  # allowed, not required
    local = virtuoso("http://localhost:8890/sparql", contact="https://example.org/me")
    assert local.endpoint == "http://localhost:8890/sparql"
    assert "(https://example.org/me)" in local.user_agent
    assert user_agent_for("me@example.org").startswith("citegraph/")


def test_config_is_strict_and_documented() -> None:
    with pytest.raises(ValidationError):
        SparqlClientConfig(endpoint="http://x.org/sparql", retries=3)  # type: ignore[call-arg]
    with pytest.raises(ValidationError):
        SparqlClientConfig(endpoint="ftp://x.org/sparql")
    with pytest.raises(ValidationError):
        SparqlClientConfig(endpoint="http://x.org/sparql", user_agent="a\r\nX-Evil: 1")
    with pytest.raises(ValidationError):
        SparqlClientConfig(endpoint="http://x.org/sparql", max_concurrency=0)
    for name, info in SparqlClientConfig.model_fields.items():
        assert info.description, f"field {name} has no docstring"


def test_parse_retry_after() -> None:
    now = datetime(2015, 10, 21, 7, 27, tzinfo=UTC)
    assert parse_retry_after("120") == 120.0
    assert parse_retry_after(" 3.5 ") == 3.5
    assert parse_retry_after("-4") == 0.0
    assert parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT", now=now) == 60.0  # one minute on
    assert parse_retry_after("Wed, 21 Oct 2015 07:00:00 GMT", now=now) == 0.0  # in the past
    for bad in (None, "", "soon", "nan", "inf"):
        assert parse_retry_after(bad) is None
