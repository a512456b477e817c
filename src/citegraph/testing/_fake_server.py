"""A real OpenAI-compatible HTTP server on 127.0.0.1, for tests and benchmarks.

:class:`FakeOpenAIServer` serves ``POST /v1/chat/completions`` and ``GET /v1/models`` from a
stdlib :class:`~http.server.ThreadingHTTPServer` in a background thread, and the scoring routes
of vLLM and text-embeddings-inference with deterministic numbers (:mod:`._fake_scores`):
``POST /v1/completions`` (echoed prompt log-probabilities), ``/v1/rerank`` and ``/rerank``
(vLLM's shape, or TEI's when the body has ``texts``) and ``/classify``. Replies are scripted by a
callable that receives the request JSON and returns the reply text or a :class:`FakeReply` (status,
headers such as Retry-After, a raw body, a delay); on a scoring route a text reply (or a 2xx
:class:`FakeReply` without a body) answers with the route's deterministic numbers. The server
records every request it receives (body, headers, arrival time) and the peak number of requests
it was handling at once, so tests can check what a client really sent, its retry timing and its
concurrency limit without monkeypatching. It never logs to stderr.

Example:
    >>> with FakeOpenAIServer(reply=lambda body: "hi") as server:  # doctest: +SKIP
    ...     model = OpenAICompatibleChat("fake", provider="vllm", base_url=server.base_url)
    ...     ...
    ...     server.requests[0]["model"]
    'fake'
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

from citegraph.testing._fake_scores import NLI_FAKE_LABELS, SCORE_ROUTES, score_reply

__all__ = ["FakeOpenAIServer", "FakeReply", "ReceivedRequest"]


@dataclass(frozen=True)
class FakeReply:
    """One scripted reply of :class:`FakeOpenAIServer`.

    Attributes:
        text: The assistant message content (``None`` sends ``"content": null``). For an error
            status it is the error message of the OpenAI-style error body.
        status: HTTP status code.
        headers: Extra response headers (e.g. ``{"Retry-After": "1"}``).
        body: Sent verbatim instead of the generated body: ``bytes``/``str`` as is, anything else
            as JSON.
        delay: Seconds to wait before answering (added to the server's ``delay``).
        finish_reason: The choice's ``finish_reason``.
        trickle: Seconds between the body's bytes, sent one at a time (a server that is slow
            but never silent for long); 0: the body in one write.
        filler: Bytes of spaces sent after the body, 64 KiB at a time, until they are all sent
            or the client hangs up: a huge body (JSON still, when the body is). Sent chunked
            unless ``headers`` declare a ``Content-Length``, which is then sent as given (a
            server announcing ``100000000000`` bytes).
    """

    text: str | None = "ok"
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: Any = None
    delay: float = 0.0
    finish_reason: str | None = "stop"
    trickle: float = 0.0
    filler: int = 0


@dataclass(frozen=True)
class ReceivedRequest:
    """A request as the server received it (``time`` is :func:`time.monotonic` on arrival)."""

    method: str
    path: str
    headers: dict[str, str]
    body: Any
    time: float


Script = Callable[[dict[str, Any]], "str | FakeReply"]


def _echo(body: dict[str, Any]) -> str:
    messages = body.get("messages") or [{}]
    content = messages[-1].get("content", "") if isinstance(messages[-1], dict) else ""
    return content if isinstance(content, str) else json.dumps(content)


def _words(text: str | None) -> int:
    return len(text.split()) if text else 0


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    #: Pending connections the kernel queues before accept(). The standard library's default of
    #: 5 drops connections when a client opens 16-32 at once (a concurrency benchmark), and the
    #: client's retries then add their backoff to the measured time.
    request_queue_size = 128

    def handle_error(self, request: Any, client_address: Any) -> None:
        """Stay quiet: clients that time out and hang up are expected in tests."""


class FakeOpenAIServer:
    """An OpenAI-compatible chat-completions server in a background thread (see module docs).

    Args:
        reply: Called with each request's JSON; returns the reply text or a :class:`FakeReply`.
            A fixed string answers every request with it; ``None`` echoes the last message.
        delay: Seconds every chat request waits before its reply (on top of ``FakeReply.delay``).
        models: Model ids listed by ``GET /v1/models``.
        labels: The class labels of ``/classify`` in index order (see :mod:`._fake_scores`).

    Attributes:
        base_url: ``http://127.0.0.1:<port>/v1`` while running.
        max_in_flight: Most chat requests being handled at the same time so far.
        body_bytes_sent: Bytes of response bodies written so far (what a client that stops
            reading early did not take is still counted once the kernel accepted it).
    """

    def __init__(
        self,
        reply: Script | str | None = None,
        *,
        delay: float = 0.0,
        models: tuple[str, ...] = ("fake-model",),
        labels: tuple[str, ...] = NLI_FAKE_LABELS,
    ) -> None:
        self.labels = labels
        if isinstance(reply, str):
            fixed = reply
            self._script: Script = lambda _body: fixed
        else:
            self._script = reply or _echo
        self.delay = delay
        self.models = models
        self._lock = threading.Lock()
        self._received: list[ReceivedRequest] = []
        self._in_flight = 0
        self.max_in_flight = 0
        self.script_errors: list[BaseException] = []
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None
        self._count = 0
        self.body_bytes_sent = 0

    # -- lifecycle ---------------------------------------------------------------------------
    def start(self) -> FakeOpenAIServer:
        """Bind to a free port on 127.0.0.1 and serve in a daemon thread."""
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", 0), _handler_for(self))
        self._thread = threading.Thread(
            target=self._server.serve_forever,
            kwargs={"poll_interval": 0.02},  # stop() waits up to one poll interval
            name="FakeOpenAIServer",
            daemon=True,
        )
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests still waiting on a delay are cut short."""
        if self._server is None:
            return
        self._stopping.set()
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server = self._thread = None

    def __enter__(self) -> FakeOpenAIServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    @property
    def base_url(self) -> str:
        """The OpenAI base URL (``.../v1``) of the running server."""
        if self._server is None:
            raise RuntimeError("FakeOpenAIServer is not running; use it as a context manager")
        port = self._server.server_address[1]
        return f"http://127.0.0.1:{port}/v1"

    # -- records -----------------------------------------------------------------------------
    @property
    def received(self) -> list[ReceivedRequest]:
        """Every POST request received so far (on any route), in arrival order (a copy)."""
        with self._lock:
            return list(self._received)

    @property
    def requests(self) -> list[Any]:
        """The JSON bodies of :attr:`received`."""
        return [r.body for r in self.received]

    @property
    def times(self) -> list[float]:
        """Arrival times (:func:`time.monotonic`) of :attr:`received`."""
        return [r.time for r in self.received]

    def reset(self) -> None:
        """Forget the records (requests and the in-flight peak)."""
        with self._lock:
            self._received.clear()
            self.max_in_flight = self._in_flight
            self.script_errors.clear()

    # -- request handling (called from handler threads) --------------------------------------
    def _record(self, record: ReceivedRequest) -> int:
        with self._lock:
            self._received.append(record)
            self._count += 1
            self._in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self._in_flight)
            return self._count

    def _done(self) -> None:
        with self._lock:
            self._in_flight -= 1

    def _chat_reply(
        self, body: Any, number: int, route: str = "/v1/chat/completions"
    ) -> tuple[int, dict[str, str], bytes]:
        if not isinstance(body, dict):
            return _error(400, "the request body is not a JSON object")
        try:
            scripted = self._script(body)
        except Exception as exc:  # report the script's bug to the client, keep serving
            with self._lock:
                self.script_errors.append(exc)
            return _error(500, f"FakeOpenAIServer script failed: {exc!r}")
        reply = scripted if isinstance(scripted, FakeReply) else FakeReply(text=scripted)
        self._stopping.wait(self.delay + reply.delay)
        headers = dict(reply.headers)
        if reply.trickle > 0:
            headers[_TRICKLE] = str(reply.trickle)
        if reply.filler > 0:
            headers[_FILLER] = str(reply.filler)
        if reply.body is not None:
            raw = reply.body
            data = raw.encode() if isinstance(raw, str) else raw
            if not isinstance(raw, str | bytes):
                data = json.dumps(raw).encode()
                headers.setdefault("Content-Type", "application/json")
            headers.setdefault("Content-Type", "text/plain; charset=utf-8")
            return reply.status, headers, data
        if reply.status >= 400:
            status, base, data = _error(reply.status, reply.text or f"HTTP {reply.status}")
            return status, {**base, **headers}, data
        if route in SCORE_ROUTES:
            headers.setdefault("Content-Type", "application/json")
            try:
                answer = score_reply(route, body, self.labels)
            except (KeyError, TypeError, ValueError) as exc:
                return _error(400, f"bad {route} request: {exc!r}")
            return reply.status, headers, json.dumps(answer).encode()
        prompt = " ".join(str(m.get("content", "")) for m in body.get("messages") or [])
        completion = {
            "id": f"chatcmpl-fake-{number}",
            "object": "chat.completion",
            "created": int(time.time()),
            "model": body.get("model", self.models[0]),
            "choices": [
                {
                    "index": 0,
                    "message": {"role": "assistant", "content": reply.text},
                    "finish_reason": reply.finish_reason,
                    "logprobs": None,
                }
            ],
            "usage": {
                "prompt_tokens": _words(prompt),
                "completion_tokens": _words(reply.text),
                "total_tokens": _words(prompt) + _words(reply.text),
            },
        }
        headers.setdefault("Content-Type", "application/json")
        return reply.status, headers, json.dumps(completion).encode()


_TRICKLE = "X-Fake-Trickle"
"""The header a reply asks ``_send`` for a trickled body with (never sent)."""
_FILLER = "X-Fake-Filler"
"""The header a reply asks ``_send`` for filler bytes after the body with (never sent)."""
_FILLER_CHUNK = b" " * 65536


def _error(status: int, message: str) -> tuple[int, dict[str, str], bytes]:
    kind = "server_error" if status >= 500 else "invalid_request_error"
    body = {"error": {"message": message, "type": kind, "param": None, "code": None}}
    return status, {"Content-Type": "application/json"}, json.dumps(body).encode()


def _handler_for(server: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        # Headers and body go out in separate writes; with Nagle's algorithm on, the client's
        # delayed ACK adds ~40 ms to every reply (TCP_NODELAY, as real servers set it).
        disable_nagle_algorithm = True

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: no access log on stderr."""

        def _send(self, status: int, headers: dict[str, str], data: bytes) -> None:
            trickle = float(headers.pop(_TRICKLE, 0.0))
            filler = int(headers.pop(_FILLER, 0))
            declared = any(name.lower() == "content-length" for name in headers)
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            if filler > 0:
                self._send_filled(data, filler, chunked=not declared)
                return
            if not declared:
                self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            if trickle <= 0:
                self.wfile.write(data)
                self._sent(len(data))
                return
            try:
                for i in range(len(data)):
                    if server._stopping.wait(trickle):
                        return
                    self.wfile.write(data[i : i + 1])
                    self.wfile.flush()
                    self._sent(1)
            except (BrokenPipeError, ConnectionResetError):  # the client gave up: fine
                return

        def _sent(self, n: int) -> None:
            with server._lock:
                server.body_bytes_sent += n

        def _send_filled(self, data: bytes, filler: int, *, chunked: bool) -> None:
            """The body, then ``filler`` spaces, until sent or the client hangs up."""
            if chunked:
                self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()

            def write(part: bytes) -> None:
                self.wfile.write(b"%x\r\n%s\r\n" % (len(part), part) if chunked else part)
                self._sent(len(part))

            try:
                if data:
                    write(data)
                left = filler
                while left > 0 and not server._stopping.is_set():
                    part = _FILLER_CHUNK[: min(left, len(_FILLER_CHUNK))]
                    write(part)
                    left -= len(part)
                if chunked:
                    self.wfile.write(b"0\r\n\r\n")
                self.wfile.flush()
            except (BrokenPipeError, ConnectionResetError):  # the client gave up: expected
                self.close_connection = True

        def do_GET(self) -> None:
            if self.path.rstrip("/") == "/v1/models":
                listed = [{"id": m, "object": "model", "owned_by": "fake"} for m in server.models]
                data = json.dumps({"object": "list", "data": listed}).encode()
                self._send(200, {"Content-Type": "application/json"}, data)
            else:
                self._send(*_error(404, f"no route GET {self.path}"))

        def do_POST(self) -> None:
            raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
            route = self.path.partition("?")[0].rstrip("/")
            if route != "/v1/chat/completions" and route not in SCORE_ROUTES:
                self._send(*_error(404, f"no route POST {self.path}"))
                return
            try:
                body: Any = json.loads(raw)
            except (json.JSONDecodeError, UnicodeDecodeError):
                body = raw.decode("utf-8", "replace")
            record = ReceivedRequest(
                "POST",
                self.path,
                {k.lower(): v for k, v in self.headers.items()},
                body,
                time.monotonic(),
            )
            number = server._record(record)
            try:
                reply = server._chat_reply(body, number, route)
            finally:
                server._done()
            self._send(*reply)

    return Handler
