"""What the web viewer answers before any page: only the host names it serves, and the same
strict security headers on every response.

A web page the user visits can point a name it controls at 127.0.0.1 (DNS rebinding) and then
read ``http://its-name:7575/`` as its own origin; the browser sends that name in the ``Host``
header, so a request naming any host but the viewer's own is refused (400) before it reaches a
route. Every response, errors and static files included, carries a Content-Security-Policy
that lets a page load only the viewer's own stylesheet and script (and charts as ``data:``
images), run no inline script, and be framed by no one.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

#: The names every viewer answers to: this machine's loopback addresses.
LOOPBACK = ("localhost", "127.0.0.1", "::1")
#: Addresses that bind every interface; no client names them in ``Host``.
_WILDCARD = ("0.0.0.0", "::", "")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"content-security-policy", CONTENT_SECURITY_POLICY.encode("ascii")),
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"no-referrer"),
    (b"x-frame-options", b"DENY"),
)


def served_hosts(bound: str | None = None, extra: Iterable[str] = ()) -> frozenset[str]:
    """The host names a viewer bound to ``bound`` answers to: the loopback names, ``bound``
    itself (unless it is a wildcard such as ``0.0.0.0``) and the ``extra`` names allowed by
    the user (``--allow-host``), lower-cased, IPv6 addresses without brackets."""
    names = {*LOOPBACK, *(_bare(h) for h in extra)}
    if bound is not None and _bare(bound) not in _WILDCARD:
        names.add(_bare(bound))
    return frozenset(n for n in names if n)


def host_allowed(header: str | None, hosts: frozenset[str], port: int | None = None) -> bool:
    """Whether a ``Host`` header names this viewer: one of ``hosts``, with ``port`` (when
    given) or no port at all."""
    if not header:
        return False
    name, port_text = _split(header.strip().lower())
    if name not in hosts:
        return False
    if port is None or port_text is None:
        return True
    return port_text == str(port)


class Guard:
    """ASGI middleware: refuses a request whose ``Host`` is not one the viewer serves (400,
    a plain-text reason) and adds :data:`SECURITY_HEADERS` to every response."""

    def __init__(self, app: ASGIApp, hosts: frozenset[str], port: int | None = None) -> None:
        self.app = app
        self.hosts = hosts
        self.port = port

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection (only ``http`` ones are checked)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        host = next((v for k, v in scope.get("headers", []) if k == b"host"), None)
        if not host_allowed(host.decode("latin-1") if host else None, self.hosts, self.port):
            await _refuse(send)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                mine = {name for name, _ in SECURITY_HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in mine]
                message = {**message, "headers": [*kept, *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, secured)


async def _refuse(send: Send) -> None:
    body = (
        b"This viewer answers only to the host names it serves (localhost, 127.0.0.1, [::1], "
        b"the address it was bound to, and any --allow-host). Open it by one of those.\n"
    )
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode("ascii")),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": 400, "headers": headers})
    await send({"type": "http.response.body", "body": body})


def _bare(host: str) -> str:
    host = host.strip().lower()
    return host[1:-1] if host.startswith("[") and host.endswith("]") else host


def _split(header: str) -> tuple[str, str | None]:
    """``(name, port)`` of a Host header value (``[::1]:7575``, ``localhost``)."""
    if header.startswith("["):
        name, bracket, rest = header[1:].partition("]")
        if not bracket or (rest and not rest.startswith(":")):
            return "", None
        return name, rest[1:] if rest else None
    if header.count(":") > 1:  # a bare IPv6 address is not a valid Host
        return "", None
    name, colon, port = header.partition(":")
    return name, port if colon else None
