"""A local SPARQL endpoint for tests: a pyoxigraph store answering SPARQL JSON over HTTP."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

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
