"""Server URLs without their secrets: what run directories, messages and reports show.

A ``--base-url`` may carry credentials: ``http://user:password@host/v1`` or a key in the query
(``?api-key=...``, ``?token=...``, a signature). The real URL is used for requests only; every
place that stores or shows one uses :func:`redact_url`, which writes ``***`` in place of the user
information and of every secret-looking query value. :data:`ServerURL` is the pydantic type of
config fields holding such a URL: the field keeps the real URL, its dump (``run.json``, the run's
identity) the redacted one.

A malformed URL hides its secrets too: one without a scheme (``alice:pw@host:8000/v1``) or with
a single slash (``http:/alice:pw@...``) has everything before its last ``@`` written as ``***``;
a value after ``;`` (``/v1;key=...``, ``?a=1;key=...``) is read as a parameter like one after
``&``; a fragment (``#...``) is never shown. :func:`check_base_url` refuses such URLs when a
command or a model client starts (a :class:`~citegraph.errors.ConfigError` with the reason and
the URL redacted), and :func:`redact_args` hides the whole value of every ``--...url`` option of
a command line (a value holding a space included), as run.json's command and the Ctrl-C resume
hint show it.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from pydantic import PlainSerializer

from citegraph.errors import ConfigError

__all__ = [
    "ServerURL",
    "check_base_url",
    "redact_args",
    "redact_url",
    "redact_urls_in",
    "split_query",
    "url_secrets",
]

REDACTED = "***"

#: Query parameter names whose value is a secret (compared lower-case, ``-`` read as ``_``).
_SECRET_NAMES = frozenset(
    {"key", "sig", "code", "auth", "pass", "pwd", "session", "sessionid", "jwt", "bearer"}
)
#: A query parameter whose name holds one of these words is a secret too.
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "signature", "credential", "auth")

_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")
#: What separates parameters: ``&``, and ``;`` (read as a separator by some servers).
_PAIRS = re.compile(r"([&;])")
#: A ``name=value`` parameter of a path segment (``/v1;key=value``).
_PATH_PARAM = re.compile(r";([^;/=]*)=([^;/]*)")
#: The scheme-and-slashes prefix of a malformed http URL, kept when it is masked.
_HTTP_PREFIX = re.compile(r"^https?:/*", re.IGNORECASE)
_SCHEMES = ("http", "https")


def _secret(name: str) -> bool:
    lowered = unquote_plus(name).strip().lower().replace("-", "_")
    return lowered in _SECRET_NAMES or any(word in lowered for word in _SECRET_WORDS)


def _redact_query(query: str) -> str:
    parts = []
    for pair in _PAIRS.split(query):
        name, eq, _ = pair.partition("=")
        parts.append(f"{name}={REDACTED}" if eq and _secret(name) else pair)
    return "".join(parts)


def _redact_path(path: str) -> str:
    """``path`` with the values of its secret-looking ``;name=value`` parameters hidden."""

    def hide(match: re.Match[str]) -> str:
        return f";{match.group(1)}={REDACTED}" if _secret(match.group(1)) else match.group()

    return _PATH_PARAM.sub(hide, path)


def _redact_netloc(netloc: str) -> str:
    """``netloc`` with its user information hidden, or all of it when its port is not digits
    (``alice:password`` without an ``@`` reads as host ``alice``, port ``password``)."""
    if "@" in netloc:
        return f"{REDACTED}@{netloc.rpartition('@')[2]}"
    after_host = netloc.rpartition("]")[2] if netloc.startswith("[") else netloc
    _, colon, port = after_host.rpartition(":")
    return REDACTED if colon and port and not port.isdigit() else netloc


def _masked(text: str) -> str:
    """A URL that cannot be read as one, shown without its secrets: everything before the last
    ``@`` of the part before any ``?`` or ``#`` (but an ``http://`` prefix) as ``***``, secret
    query values hidden, no fragment."""
    text, hash_, fragment = text.partition("#")
    head, question, query = text.partition("?")
    if "@" in head:
        prefix = _HTTP_PREFIX.match(head)
        kept = prefix.group() if prefix else ""
        head = f"{kept}{REDACTED}@{head.rpartition('@')[2]}"
    shown = _redact_path(head) + question + _redact_query(query)
    return shown + (f"#{REDACTED}" if fragment else hash_)


def redact_url(url: str) -> str:
    """``url`` with its user information, secret-looking parameter values (after ``?``, ``&``
    or ``;``) and fragment written as ``***``; a malformed URL (no scheme, no host) has
    everything before its last ``@`` hidden, and one that cannot be read at all (an unclosed
    ``[``, a ``]`` in its host) shows nothing past its scheme.

    Example:
        >>> redact_url("http://me:pw@gpu:8000/v1?api-key=s3cret&mode=fast")
        'http://***@gpu:8000/v1?api-key=***&mode=fast'
        >>> redact_url("me:pw@gpu:8000/v1")
        '***@gpu:8000/v1'
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL one can read: show nothing of it past the scheme
        scheme, sep, _ = url.partition("://")
        return f"{scheme}{sep}{REDACTED}" if sep else _masked(url)
    if not parts.netloc:  # no scheme, or one slash: user information may be anywhere
        return _masked(url)
    fragment = REDACTED if parts.fragment else ""
    return urlunsplit(
        (
            parts.scheme,
            _redact_netloc(parts.netloc),
            _redact_path(parts.path),
            _redact_query(parts.query),
            fragment,
        )
    )


def redact_urls_in(text: str) -> str:
    """``text`` (a command line, a message) with every URL in it passed through
    :func:`redact_url`."""
    return _URL_IN_TEXT.sub(lambda match: redact_url(match.group()), text)


def url_secrets(url: str) -> list[str]:
    """The secrets in ``url`` that :func:`redact_url` hides (user information, password,
    secret-looking parameter values), so that a server's message quoting one can be
    scrubbed."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.username or "", parts.password or ""]
    pairs = _PAIRS.split(parts.query)[::2]
    pairs += [match.group()[1:] for match in _PATH_PARAM.finditer(parts.path)]
    for pair in pairs:
        name, eq, value = pair.partition("=")
        if eq and _secret(name):
            found += [value, unquote_plus(value)]
    return sorted({s for s in found if len(s) >= 3}, key=len, reverse=True)


def _problem(url: str) -> str | None:
    """Why ``url`` cannot be a model server's base URL, or ``None`` (see
    :func:`check_base_url`)."""
    if not url.strip():
        return "is empty"
    if any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in url):
        return "holds a space or a control character (percent-encode it: a space is %20)"
    if "#" in url:
        return (
            "holds a '#': a fragment is never sent to the server (a key after it would be "
            "ignored); give keys in the query (?api-key=...) or the environment"
        )
    if ";" in url:
        return "holds a ';': parameters are separated by '&' (a ';' in a value is written %3B)"
    try:
        parts = urlsplit(url)
    except ValueError as exc:
        if "IPv6" in str(exc):
            return "has a malformed IPv6 host (an unclosed or misplaced '[' or ']')"
        return "cannot be read as a URL"
    if parts.scheme.lower() not in _SCHEMES:
        return "needs http:// or https:// before the host (http://host:port/v1)"
    if not parts.netloc or not parts.hostname:
        return "has no host: write http://host:port/... (two slashes after 'http:')"
    try:
        port = parts.port
    except ValueError:  # not a number, or out of range (the text is not shown: a password?)
        port = 0
    if port == 0:
        return "has a port that is not a number from 1 to 65535"
    return None


def check_base_url(url: str, *, what: str = "base URL") -> str:
    """``url`` when it can be a model server's base URL, else a :class:`ConfigError` saying
    why, with the URL redacted (:func:`redact_url`).

    A base URL is ``http://`` or ``https://``, a host (a bracketed IPv6 address is fine), an
    optional port from 1 to 65535, a path and an optional query (``?api-key=...``); it holds no
    whitespace or control characters, no ``#`` fragment (never sent: a key there would be
    ignored) and no ``;`` (a parameter after it is neither sent as one nor safe to show).

    Args:
        url: The URL as given.
        what: How the message names it (``--base-url``, ``base URL``).

    Raises:
        ConfigError: The URL cannot be one; the message starts with ``what``.

    Example:
        >>> check_base_url("http://localhost:8000/v1")
        'http://localhost:8000/v1'
    """
    problem = _problem(url)
    if problem is not None:
        raise ConfigError(f"{what} {redact_url(url)!r} {problem}")
    return url


def _url_option(arg: str) -> bool:
    """Whether ``arg`` is an option whose value is a URL (``--base-url``, ``--nli-base-url``...)."""
    return arg.startswith("--") and arg.split("=", 1)[0].lower().endswith("url")


def redact_args(args: Sequence[str]) -> list[str]:
    """Command-line arguments as they may be shown or stored: the whole value of every
    ``--...url`` option (``--base-url VALUE`` or ``--base-url=VALUE``) through
    :func:`redact_url`, however malformed (a space in it included), and every URL in any other
    argument through :func:`redact_urls_in`.

    Example:
        >>> redact_args(["--base-url", "me:pw@gpu/v1", "--out", "runs/x"])
        ['--base-url', '***@gpu/v1', '--out', 'runs/x']
    """
    shown: list[str] = []
    after_url_option = False
    for arg in args:
        if after_url_option:
            shown.append(redact_url(arg))
        elif _url_option(arg) and "=" in arg:
            flag, _, value = arg.partition("=")
            shown.append(f"{flag}={redact_url(value)}")
        else:
            shown.append(redact_urls_in(arg))
        after_url_option = _url_option(arg) and "=" not in arg
    return shown


def split_query(url: str) -> tuple[str, dict[str, str]]:
    """``url`` without its query and fragment, and the query's parameters: a base URL to which
    routes are appended (``/chat/completions`` goes before the query), and the parameters every
    request to it carries.

    Example:
        >>> split_query("http://h/v1?api-key=x")
        ('http://h/v1', {'api-key': 'x'})
    """
    parts = urlsplit(url)
    params: dict[str, str] = {}
    for pair in parts.query.split("&") if parts.query else []:
        name, _, value = pair.partition("=")
        params[unquote_plus(name)] = unquote_plus(value)
    return urlunsplit((parts.scheme, parts.netloc, parts.path, "", "")), params


ServerURL = Annotated[str, PlainSerializer(redact_url, return_type=str)]
"""A config field's server URL: the real URL in the field, the redacted one in its dumps."""
