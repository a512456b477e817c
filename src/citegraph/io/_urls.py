"""Server URLs without their secrets: what run directories, messages and reports show.

A ``--base-url`` may carry credentials: ``http://user:password@host/v1`` or a key in the query
(``?api-key=...``, ``?token=...``, a signature). The real URL is used for requests only; every
place that stores or shows one uses :func:`redact_url`, which writes ``***`` in place of the user
information and of every secret-looking query value. :data:`ServerURL` is the pydantic type of
config fields holding such a URL: the field keeps the real URL, its dump (``run.json``, the run's
identity) the redacted one.
"""

from __future__ import annotations

import re
from typing import Annotated
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from pydantic import PlainSerializer

__all__ = ["ServerURL", "redact_url", "redact_urls_in", "split_query", "url_secrets"]

REDACTED = "***"

#: Query parameter names whose value is a secret (compared lower-case, ``-`` read as ``_``).
_SECRET_NAMES = frozenset(
    {"key", "sig", "code", "auth", "pass", "pwd", "session", "sessionid", "jwt", "bearer"}
)
#: A query parameter whose name holds one of these words is a secret too.
_SECRET_WORDS = ("key", "token", "secret", "password", "passwd", "signature", "credential", "auth")

_URL_IN_TEXT = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://[^\s'\"<>]+")


def _secret(name: str) -> bool:
    lowered = unquote_plus(name).strip().lower().replace("-", "_")
    return lowered in _SECRET_NAMES or any(word in lowered for word in _SECRET_WORDS)


def _redact_query(query: str) -> str:
    parts = []
    for pair in query.split("&"):
        name, eq, _ = pair.partition("=")
        parts.append(f"{name}={REDACTED}" if eq and _secret(name) else pair)
    return "&".join(parts)


def redact_url(url: str) -> str:
    """``url`` with its user information and secret-looking query values written as ``***``.

    Example:
        >>> redact_url("http://me:pw@gpu:8000/v1?api-key=s3cret&mode=fast")
        'http://***@gpu:8000/v1?api-key=***&mode=fast'
    """
    try:
        parts = urlsplit(url)
    except ValueError:  # not a URL one can read: show nothing of it past the scheme
        scheme, sep, _ = url.partition("://")
        return f"{scheme}{sep}{REDACTED}" if sep else REDACTED
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    return urlunsplit(
        (parts.scheme, netloc, parts.path, _redact_query(parts.query), parts.fragment)
    )


def redact_urls_in(text: str) -> str:
    """``text`` (a command line, a message) with every URL in it passed through
    :func:`redact_url`."""
    return _URL_IN_TEXT.sub(lambda match: redact_url(match.group()), text)


def url_secrets(url: str) -> list[str]:
    """The secrets in ``url`` that :func:`redact_url` hides (user information, password,
    secret-looking query values), so that a server's message quoting one can be scrubbed."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return []
    found = [parts.username or "", parts.password or ""]
    for pair in parts.query.split("&"):
        name, eq, value = pair.partition("=")
        if eq and _secret(name):
            found += [value, unquote_plus(value)]
    return sorted({s for s in found if len(s) >= 3}, key=len, reverse=True)


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
