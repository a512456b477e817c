"""Kept-alive HTTP/1.1 connections to model servers, for one event loop (:class:`Pool`).

A :class:`Pool` posts a JSON body and returns the whole :class:`~._wire.Answer`. What it does,
as the SDK's HTTP client did for the model-server client, at a fraction of its CPU per request:

- **connections are kept alive** and reused last-in first-out; an idle one the server has closed
  is seen without a system call (its stream is at end of file) and dropped. A request that finds
  its reused connection closed before any answer byte (the server timed it out while idle) is
  sent once more on a new connection: that is not a retry of the call;
- **redirects** ``307`` and ``308`` are followed (the same ``POST`` to the new URL, up to
  :data:`MAX_REDIRECTS`); the ``Authorization`` header never goes to another origin. Any other
  ``3xx`` is returned as it is;
- **https** is verified against the system's certificates (``SSL_CERT_FILE`` and
  ``SSL_CERT_DIR`` honoured) and ``certifi``'s when it is installed;
- **proxies** from the environment (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``, ``NO_PROXY``,
  any case), as ``urllib`` reads them: an ``http://`` proxy carries plain requests in absolute
  form and tunnels https through ``CONNECT``; user information in the proxy's URL becomes its
  ``Proxy-Authorization``. Another kind of proxy (``socks5://``, ``https://``) is refused naming
  the variable.

It knows nothing of retries, deadlines or status codes: :class:`~._http.ServerClient` does.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import ssl
from dataclasses import dataclass
from urllib.parse import unquote, urljoin, urlsplit
from urllib.request import (  # type: ignore[attr-defined]  # not in typeshed
    getproxies_environment,
    proxy_bypass_environment,
)

from citegraph.errors import ConfigError
from citegraph.models.server._wire import (
    ACCEPT_ENCODING,
    MAX_HEAD_BYTES,
    Answer,
    NoAnswer,
    WireError,
    read_answer,
)

__all__ = ["MAX_REDIRECTS", "Pool", "basic_credentials", "route_of"]

MAX_REDIRECTS = 5
"""Most ``307``/``308`` redirects one request follows."""
_PORTS = {"http": 80, "https": 443}
_SSL: ssl.SSLContext | None = None


def _ssl_context() -> ssl.SSLContext:
    global _SSL
    if _SSL is None:
        context = ssl.create_default_context()
        with contextlib.suppress(ImportError, OSError):
            import certifi

            context.load_verify_locations(certifi.where())
        _SSL = context
    return _SSL


@dataclass(frozen=True, slots=True)
class _Route:
    """Where the requests to one URL go."""

    origin: tuple[str, str, int]  # scheme, host, port of the server
    host_header: str
    target: str  # the request target: the path and query, or the whole URL through a proxy
    via: tuple[str, int] | None  # the http proxy's host and port
    proxy_auth: str | None  # its Proxy-Authorization value


def basic_credentials(user: str | None, password: str | None) -> str | None:
    """The ``Basic`` value of an ``Authorization`` (or ``Proxy-Authorization``) header for a
    URL's user information (percent-escapes undone), or ``None`` when it has none."""
    if not user and not password:
        return None
    pair = f"{unquote(user or '')}:{unquote(password or '')}".encode()
    return "Basic " + base64.b64encode(pair).decode("ascii")


def _proxy_for(scheme: str, host: str) -> tuple[str, str] | None:
    """The environment's proxy URL for ``scheme://host`` and the variable it came from."""
    proxies = getproxies_environment()
    if not proxies or proxy_bypass_environment(host, proxies):
        return None
    for key in (scheme, "all"):
        if proxies.get(key):
            return proxies[key], f"{key.upper()}_PROXY"
    return None


def route_of(url: str) -> _Route:
    """How a request to ``url`` travels (module docs).

    Raises:
        ConfigError: Not an http(s) URL with a host, or a proxy of another kind than ``http://``.
    """
    parts = urlsplit(url)
    scheme, host = parts.scheme.lower(), parts.hostname
    if scheme not in _PORTS or not host:
        raise ConfigError(f"not an http(s) URL with a host: {url[:80]!r}")
    port = parts.port or _PORTS[scheme]
    shown = f"[{host}]" if ":" in host else host
    host_header = shown if port == _PORTS[scheme] else f"{shown}:{port}"
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    proxy = _proxy_for(scheme, host)
    if proxy is None:
        return _Route((scheme, host, port), host_header, target, None, None)
    proxy_url, variable = proxy
    via = urlsplit(proxy_url if "://" in proxy_url else f"http://{proxy_url}")
    if via.scheme.lower() != "http" or not via.hostname:
        raise ConfigError(
            f"the proxy in {variable} ({via.scheme or '?'}://{via.hostname or ''}) is not an "
            f"http:// proxy, the only kind the model-server client speaks; set NO_PROXY={host} "
            "to reach the server directly"
        )
    if scheme == "http":
        target = f"http://{host_header}{target}"
    auth = basic_credentials(via.username, via.password)
    return _Route((scheme, host, port), host_header, target, (via.hostname, via.port or 80), auth)


class _Connection:
    __slots__ = ("reader", "writer")

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer

    def usable(self) -> bool:
        return not self.writer.transport.is_closing() and not self.reader.at_eof()

    def close(self) -> None:
        self.writer.close()


async def _tunnel(conn: _Connection, route: _Route) -> None:
    """Open an https route through its proxy: ``CONNECT``, then TLS to the server."""
    _, host, port = route.origin
    lines = [f"CONNECT {host}:{port} HTTP/1.1", f"Host: {host}:{port}"]
    if route.proxy_auth:
        lines.append(f"Proxy-Authorization: {route.proxy_auth}")
    conn.writer.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
    answer = await read_answer(conn.reader, limit=MAX_HEAD_BYTES, head_only=True)
    if answer.status != 200:
        raise WireError(f"the proxy refused to tunnel to {host}:{port}: HTTP {answer.status}")
    await conn.writer.start_tls(_ssl_context(), server_hostname=host)


def _answered(answer: Answer | None) -> Answer:
    if answer is None:  # only a reused connection gives None
        raise WireError("the server closed a new connection without answering")
    return answer


class Pool:
    """Kept-alive connections of one event loop, by server (module docs).

    Args:
        limit: Most bytes of an answer's body, decoded and as sent.
    """

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._idle: dict[tuple[str, str, int], list[_Connection]] = {}
        self._open: set[_Connection] = set()
        self._routes: dict[str, _Route] = {}

    async def post(self, url: str, body: bytes, headers: dict[str, str]) -> Answer:
        """``POST`` ``body`` to ``url`` with ``headers`` (``Host``, ``Content-Length``,
        ``Accept-Encoding`` added); redirects followed (module docs).

        Raises:
            WireError, OSError: The connection failed or the answer is not HTTP.
            BodyTooLarge: The answer's body passes the limit.
            ConfigError: A URL or proxy the client cannot use.
        """
        for _ in range(MAX_REDIRECTS + 1):
            route = self._routes.get(url) or self._routes.setdefault(url, route_of(url))
            answer = await self._send(route, body, headers)
            location = answer.headers.get("location")
            if answer.status not in (307, 308) or not location:
                return answer
            moved = urljoin(url, location)
            if route_of(moved).origin != route.origin:
                headers = {k: v for k, v in headers.items() if k.lower() != "authorization"}
            url = moved
        raise WireError(f"more than {MAX_REDIRECTS} redirects")

    async def _send(self, route: _Route, body: bytes, headers: dict[str, str]) -> Answer:
        lines = [f"POST {route.target} HTTP/1.1", f"Host: {route.host_header}"]
        lines += [f"{name}: {value}" for name, value in headers.items()]
        if route.via is not None and route.origin[0] == "http" and route.proxy_auth:
            lines.append(f"Proxy-Authorization: {route.proxy_auth}")
        lines.append(f"Accept-Encoding: {ACCEPT_ENCODING}")
        lines.append(f"Content-Length: {len(body)}\r\n\r\n")
        request = "\r\n".join(lines).encode("latin-1") + body
        conn, reused = await self._acquire(route)
        try:
            got = await self._exchange(conn, request, reused)
            if got is None:  # the server had closed the kept-alive connection
                self._discard(conn)
                conn, _ = await self._acquire(route, fresh=True)
                got = await self._exchange(conn, request, False)
            answer = _answered(got)
        except BaseException:
            self._discard(conn)
            raise
        if answer.reusable:
            self._idle.setdefault(route.origin, []).append(conn)
        else:
            self._discard(conn)
        return answer

    async def _exchange(self, conn: _Connection, request: bytes, reused: bool) -> Answer | None:
        """The answer to ``request`` on ``conn``; ``None`` when ``conn`` was reused and ended
        before any byte of an answer."""
        try:
            conn.writer.write(request)
            await conn.writer.drain()
            return await read_answer(conn.reader, limit=self.limit)
        except (ConnectionError, NoAnswer):
            if reused:
                return None
            raise

    async def _acquire(self, route: _Route, *, fresh: bool = False) -> tuple[_Connection, bool]:
        idle = self._idle.get(route.origin)
        while idle and not fresh:
            conn = idle.pop()
            if conn.usable():
                return conn, True
            self._discard(conn)
        scheme, host, port = route.origin
        if route.via is not None:
            reader, writer = await asyncio.open_connection(*route.via, limit=MAX_HEAD_BYTES)
            conn = _Connection(reader, writer)
            self._open.add(conn)
            if scheme == "https":
                try:
                    await _tunnel(conn, route)
                except BaseException:
                    self._discard(conn)
                    raise
            return conn, False
        tls = _ssl_context() if scheme == "https" else None
        reader, writer = await asyncio.open_connection(
            host, port, ssl=tls, server_hostname=host if tls else None, limit=MAX_HEAD_BYTES
        )
        conn = _Connection(reader, writer)
        self._open.add(conn)
        return conn, False

    def _discard(self, conn: _Connection) -> None:
        self._open.discard(conn)
        conn.close()

    async def aclose(self) -> None:
        """Close every connection (a later request opens new ones)."""
        conns, self._open, self._idle = list(self._open), set(), {}
        for conn in conns:
            conn.close()
        for conn in conns:
            with contextlib.suppress(Exception):
                await conn.writer.wait_closed()
