"""What the web viewer answers before any page: only the host names it serves, nothing another
web site embeds, and the same strict security headers on every response.

A web page the user visits can point a name it controls at 127.0.0.1 (DNS rebinding) and then
read ``http://its-name:7575/`` as its own origin; the browser sends that name in the ``Host``
header, so a request naming any host but the viewer's own is refused (400) before it reaches a
route. Every response, errors and static files included, carries a Content-Security-Policy
that lets a page load only the viewer's own stylesheet and script (and charts as ``data:``
images), run no inline script, and be framed by no one.

Any web page can also make the browser *send* a request to the viewer (an ``<img>``, a frame, a
script tag) without reading the answer, to make it work. Browsers say where a request comes
from (``Sec-Fetch-Site``, ``Sec-Fetch-Mode``, ``Sec-Fetch-Dest``), so the viewer refuses (403)
every request another site makes except a top-level navigation (a link followed, which shows a
page to the user, as before), and refuses heavy pages (compare) to another site altogether,
also by a link, and also when only ``Origin`` or ``Referer`` names another site (browsers
without ``Sec-Fetch-*``). A request with none of these headers (a typed address, curl, a
script of the user's) is answered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping, MutableMapping
from typing import Any
from urllib.parse import urlsplit

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


#: ``Sec-Fetch-Site`` values of a request another site made (``same-site``: another port or
#: subdomain of the same site, such as a notebook server on localhost).
_OTHER_SITE = ("cross-site", "same-site")


def from_other_site(
    headers: Mapping[str, str], hosts: frozenset[str], port: int | None, *, heavy: bool
) -> bool:
    """Whether the browser says another web site made this request and the viewer should refuse
    it: any request but a top-level navigation (a link followed) from another site, and for a
    ``heavy`` page any request from one, also told by an ``Origin`` or ``Referer`` (its scheme,
    host and port) that names a host the viewer does not serve.

    Args:
        headers: The request's headers, names lower-cased.
        hosts: The host names the viewer serves (:func:`served_hosts`).
        port: The port it serves on, when known.
        heavy: Whether the page's work grows with the runs it shows.
    """
    site = headers.get("sec-fetch-site", "").strip().lower()
    if site in _OTHER_SITE:
        navigation = (
            headers.get("sec-fetch-mode", "").strip().lower() == "navigate"
            and headers.get("sec-fetch-dest", "document").strip().lower() == "document"
        )
        return heavy or not navigation
    if not heavy or site in ("same-origin", "none"):
        return False
    for name in ("origin", "referer"):
        value = headers.get(name)
        if value is not None and not _names_this_viewer(value, hosts, port):
            return True
    return False


def _names_this_viewer(url: str, hosts: frozenset[str], port: int | None) -> bool:
    """Whether an ``Origin`` or ``Referer`` value is a URL of this viewer (``null``, an opaque
    origin such as a sandboxed frame's, is not)."""
    try:
        parts = urlsplit(url.strip())
        netloc = parts.netloc.rpartition("@")[2]
    except ValueError:
        return False
    return parts.scheme in ("http", "https") and host_allowed(netloc, hosts, port)


class Guard:
    """ASGI middleware: refuses a request whose ``Host`` is not one the viewer serves (400,
    a plain-text reason) and one another web site made (403, :func:`from_other_site`), and
    adds :data:`SECURITY_HEADERS` to every response."""

    def __init__(
        self,
        app: ASGIApp,
        hosts: frozenset[str],
        port: int | None = None,
        heavy: Iterable[str] = (),
    ) -> None:
        self.app = app
        self.hosts = hosts
        self.port = port
        self.heavy = frozenset(heavy)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        """Serve one ASGI connection (only ``http`` ones are checked)."""
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers: dict[str, str] = {}
        for key, value in scope.get("headers", []):  # the first of a repeated header counts
            headers.setdefault(key.decode("latin-1").lower(), value.decode("latin-1"))
        if not host_allowed(headers.get("host"), self.hosts, self.port):
            await _refuse(send, 400, _WRONG_HOST)
            return
        heavy = scope.get("path", "") in self.heavy
        if from_other_site(headers, self.hosts, self.port, heavy=heavy):
            await _refuse(send, 403, _HEAVY if heavy else _EMBEDDED)
            return

        async def secured(message: Message) -> None:
            if message["type"] == "http.response.start":
                mine = {name for name, _ in SECURITY_HEADERS}
                kept = [(k, v) for k, v in message.get("headers", []) if k.lower() not in mine]
                message = {**message, "headers": [*kept, *SECURITY_HEADERS]}
            await send(message)

        await self.app(scope, receive, secured)


_WRONG_HOST = (
    b"This viewer answers only to the host names it serves (localhost, 127.0.0.1, [::1], "
    b"the address it was bound to, and any --allow-host). Open it by one of those.\n"
)
_EMBEDDED = (
    b"This viewer does not answer what another web site asks of it (an image, a frame, a "
    b"script, a fetch). Open the page yourself.\n"
)
_HEAVY = (
    b"A compare page is drawn only when asked for from the viewer's own pages or a typed "
    b"address, not from another web site. Open the viewer and choose the runs there.\n"
)


async def _refuse(send: Send, status: int, body: bytes) -> None:
    headers = [
        (b"content-type", b"text/plain; charset=utf-8"),
        (b"content-length", str(len(body)).encode("ascii")),
        *SECURITY_HEADERS,
    ]
    await send({"type": "http.response.start", "status": status, "headers": headers})
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
