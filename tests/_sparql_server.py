"""A local SPARQL endpoint for tests: a pyoxigraph store answering SPARQL JSON over HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import httpx2
import pyoxigraph as ox


class SparqlServer:
    """Evaluates each request's SPARQL against a pyoxigraph store; answers SPARQL JSON."""

    def __init__(self, store: ox.Store) -> None:
        self.store = store
        self.queries: list[str] = []
        owner = self

        class Handler(BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                owner.answer(self, parse_qs(urlsplit(self.path).query))

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                owner.answer(self, parse_qs(self.rfile.read(length).decode()))

            def log_message(self, *args: Any) -> None:
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/sparql"
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.01}, daemon=True
        )

    def answer(self, handler: BaseHTTPRequestHandler, form: dict[str, list[str]]) -> None:
        query = form["query"][0]
        self.queries.append(query)
        try:
            results = self.store.query(query)
            assert isinstance(results, ox.QuerySolutions | ox.QueryBoolean)
            body = results.serialize(format=ox.QueryResultsFormat.JSON) or b""
            status, ctype = 200, "application/sparql-results+json"
        except SyntaxError as exc:
            status, body, ctype = 400, str(exc).encode(), "text/plain"
        handler.send_response(status)
        handler.send_header("Content-Type", ctype)
        handler.send_header("Content-Length", str(len(body)))
        handler.end_headers()
        handler.wfile.write(body)


@contextmanager
def serving(path: Path, fmt: ox.RdfFormat = ox.RdfFormat.TURTLE) -> Iterator[SparqlServer]:
    """A local SPARQL endpoint serving the RDF file ``path`` while the block runs."""
    store = ox.Store()
    store.load(path=str(path), format=fmt)
    server = SparqlServer(store)
    server.thread.start()
    try:
        yield server
    finally:
        server.httpd.shutdown()
        server.httpd.server_close()


class RecordingTransport(httpx2.MockTransport):
    """An HTTP transport that answers SPARQL from ``store`` (no network) and records whether
    the client that used it was closed (``httpx2.AsyncClient.aclose`` closes its transport)."""

    def __init__(self, store: ox.Store) -> None:
        self.store = store
        self.queries: list[str] = []
        self.closed = False
        super().__init__(self._answer)

    def _answer(self, request: httpx2.Request) -> httpx2.Response:
        text = request.content.decode() if request.method == "POST" else request.url.query
        query = parse_qs(text if isinstance(text, str) else text.decode())["query"][0]
        self.queries.append(query)
        results = self.store.query(query)
        assert isinstance(results, ox.QuerySolutions | ox.QueryBoolean)
        body = results.serialize(format=ox.QueryResultsFormat.JSON) or b""
        return httpx2.Response(
            200, content=body, headers={"Content-Type": "application/sparql-results+json"}
        )

    async def aclose(self) -> None:
        self.closed = True
        await super().aclose()


def record_opened_clients(monkeypatch: Any, store: ox.Store) -> list[RecordingTransport]:
    """Make every SPARQL KG that ``open_kg`` opens from now on ask ``store`` through a
    :class:`RecordingTransport`; returns those transports, in the order the KGs were opened."""
    from citegraph.kg import _spec
    from citegraph.kg._sparql_client import SparqlClient

    made: list[RecordingTransport] = []

    class Recorded(SparqlClient):
        def __init__(self, config: Any, **options: Any) -> None:
            made.append(RecordingTransport(store))
            super().__init__(config, **options, transport=made[-1])

    monkeypatch.setattr(_spec, "SparqlClient", Recorded)
    return made
