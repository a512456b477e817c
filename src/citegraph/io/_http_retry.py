"""Retry arithmetic shared by citegraph's HTTP clients (SPARQL endpoints, model servers).

Both clients retry HTTP 429, HTTP 5xx and transport failures the same way:

- the server's wait comes from ``retry-after-ms`` (milliseconds, sent by OpenAI and some
  gateways) or ``Retry-After`` (delta-seconds or an HTTP date): :func:`retry_after_from_headers`,
  :func:`parse_retry_after`;
- the wait before a retry is the server's wait, else an exponential backoff with jitter, both
  capped: :func:`retry_wait`, :func:`backoff_wait`;
- after a 429 every request to the same endpoint waits until the server's delay has passed:
  :class:`RetryHold`;
- a server's wait longer than the cap is not waited in silence: :func:`capped_wait_note` says
  what was asked and what is waited, for a :class:`ServerWaitWarning` and the final error;
  one that would outlast the call's total deadline fails it at once (:func:`deadline_wait_note`);
- error messages quote the start of the body on one line: :func:`snippet`.

Everything here is pure (time and randomness can be injected); the clients do the sleeping.
"""

from __future__ import annotations

import math
import random
import re
import time
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime

__all__ = [
    "SNIPPET_CHARS",
    "RetryHold",
    "ServerWaitWarning",
    "backoff_wait",
    "capped_wait_note",
    "deadline_wait_note",
    "parse_retry_after",
    "retry_after_from_headers",
    "retry_wait",
    "snippet",
]

#: Characters of a body quoted in error messages.
SNIPPET_CHARS = 300

# 2.0**1000 is finite; any larger exponent would only ever hit the cap (and 2.0**1100 overflows).
_MAX_EXPONENT = 1000


class ServerWaitWarning(UserWarning):
    """A server asked to wait longer before a retry (Retry-After) than a client waits: the wait
    was capped (the CLI shows it as a ``warning:`` line)."""


def seconds_text(seconds: float) -> str:
    """Seconds as a message shows them: ``999999``, ``0.25``, ``1.5``."""
    return f"{seconds:.3f}".rstrip("0").rstrip(".")


def capped_wait_note(server_wait: float | None, cap: float, *, where: str) -> str | None:
    """What to say when a server's Retry-After is longer than the ``cap`` a client waits, or
    ``None`` when it is not.

    Example:
        >>> capped_wait_note(999999.0, 60.0, where="h")  # doctest: +ELLIPSIS
        'h asked to wait 999999 s before a retry (Retry-After); citegraph waits at most 60 s...'
        >>> capped_wait_note(5.0, 60.0, where="http://h/v1") is None
        True
    """
    if server_wait is None or server_wait <= cap:
        return None
    return (
        f"{where} asked to wait {seconds_text(server_wait)} s before a retry (Retry-After); "
        f"citegraph waits at most {seconds_text(cap)} s (max_retry_wait)"
    )


def deadline_wait_note(
    server_wait: float | None, wait: float, *, left: float | None, total: float, where: str
) -> str | None:
    """What to say when the ``wait`` before a retry that a server asked for (its Retry-After,
    ``server_wait``) would outlast the ``left`` seconds of the call's total deadline of
    ``total`` seconds: a wait that cannot end in a retry; ``None`` when it would not.

    Example:
        >>> deadline_wait_note(30.0, 30.0, left=1.5, total=2.0, where="h")  # doctest: +ELLIPSIS
        "h asked to wait 30 s before a retry (Retry-After), past the call's total deadline..."
    """
    if server_wait is None or left is None or wait < left:
        return None
    return (
        f"{where} asked to wait {seconds_text(server_wait)} s before a retry (Retry-After), "
        f"past the call's total deadline of {seconds_text(total)} s (--total-timeout): "
        "not retried"
    )


def snippet(body: bytes, limit: int = SNIPPET_CHARS) -> str:
    """The start of a body as one line of text, for error messages.

    Args:
        body: The raw body (decoded as UTF-8, invalid bytes replaced).
        limit: Most characters returned; a longer text is cut and ends with ``…``.

    Returns:
        The text with every whitespace run collapsed to one space, stripped.

    Example:
        >>> snippet(b"<html>\\n  <body>Bad gateway</body>\\n</html>")
        '<html> <body>Bad gateway</body> </html>'
        >>> snippet(b"abcdef", limit=4)
        'abc…'
    """
    text = re.sub(r"\s+", " ", body[: limit * 4].decode("utf-8", "replace")).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date.

    Args:
        value: The header value, or ``None`` when absent.
        now: The current time for HTTP dates (default: now, UTC).

    Returns:
        Seconds (0 for a negative delay or a date in the past), or ``None`` when absent,
        unparseable or not finite.

    Example:
        >>> parse_retry_after("120")
        120.0
        >>> parse_retry_after("Wed, 21 Oct 2015 07:28:00 GMT",
        ...                   now=datetime(2015, 10, 21, 7, 27, tzinfo=UTC))
        60.0
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        try:
            when = parsedate_to_datetime(text)
        except (TypeError, ValueError, IndexError):
            return None
        if when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        seconds = (when - (now or datetime.now(UTC))).total_seconds()
    if not math.isfinite(seconds):
        return None
    return max(0.0, seconds)


def retry_after_from_headers(
    headers: Mapping[str, str], *, now: datetime | None = None
) -> float | None:
    """Seconds to wait from response headers: ``retry-after-ms`` first, then ``Retry-After``.

    Args:
        headers: Response headers; ``get`` must find the lower-case names (httpx headers are
            case-insensitive).
        now: The current time for a Retry-After HTTP date (default: now, UTC).

    Returns:
        Seconds (never negative), or ``None`` when neither header gives a usable value. An
        unparseable or non-finite ``retry-after-ms`` falls back to ``Retry-After``.

    Example:
        >>> retry_after_from_headers({"retry-after-ms": "250", "retry-after": "9"})
        0.25
    """
    millis = headers.get("retry-after-ms")
    if millis is not None:
        try:
            seconds = float(millis) / 1000.0
        except ValueError:
            pass
        else:
            if math.isfinite(seconds):
                return max(0.0, seconds)
    return parse_retry_after(headers.get("retry-after"), now=now)


def backoff_wait(
    retry: int,
    *,
    base: float,
    cap: float,
    jitter: bool = True,
    rng: random.Random | None = None,
) -> float:
    """Exponential backoff before retry number ``retry`` (0-based), capped, with jitter.

    The ceiling is ``min(cap, base * 2**retry)``; with jitter the wait is drawn uniformly from
    ``[ceiling / 2, ceiling]``, without it the wait is the ceiling.

    Args:
        retry: 0 for the first retry, 1 for the second...
        base: The ceiling of the first retry, in seconds.
        cap: Largest ceiling, in seconds.
        jitter: Draw the wait at random from the upper half of the ceiling.
        rng: Random source for the jitter (default: the :mod:`random` module's).

    Returns:
        Seconds to wait.

    Example:
        >>> [backoff_wait(n, base=1.0, cap=5.0, jitter=False) for n in range(4)]
        [1.0, 2.0, 4.0, 5.0]
    """
    ceiling = min(cap, base * 2.0 ** min(retry, _MAX_EXPONENT))
    if not jitter:
        return ceiling
    uniform = rng.uniform if rng is not None else random.uniform
    return ceiling / 2 + uniform(0, ceiling / 2)


def retry_wait(
    server_wait: float | None,
    retry: int,
    *,
    base: float,
    cap: float,
    jitter: bool = True,
    rng: random.Random | None = None,
) -> float:
    """Seconds to wait before retry number ``retry`` (0-based).

    Args:
        server_wait: The server's Retry-After in seconds (``None`` when it sent none).
        retry: 0 for the first retry, 1 for the second...
        base: First backoff ceiling when the server gave no wait (see :func:`backoff_wait`).
        cap: Cap on any wait, the server's included.
        jitter: Jitter the backoff (never the server's wait).
        rng: Random source for the jitter.

    Returns:
        ``min(server_wait, cap)`` when the server gave a wait, else :func:`backoff_wait`.
    """
    if server_wait is not None:
        return min(float(server_wait), cap)
    return backoff_wait(retry, base=base, cap=cap, jitter=jitter, rng=rng)


class RetryHold:
    """The time before which no request may start, after an endpoint answered HTTP 429.

    A 429 means the whole endpoint is overloaded (or the quota is spent), so every request to it
    waits, not only the one that was refused. One hold is shared by the requests to one endpoint.

    Args:
        clock: Monotonic clock in seconds (default :func:`time.monotonic`).

    Example:
        >>> hold = RetryHold(clock=lambda: 100.0)
        >>> hold.block(2.5)
        >>> hold.remaining()
        2.5
    """

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self.blocked_until = 0.0
        """Clock time before which no request may start."""

    def block(self, wait: float) -> None:
        """Hold every request for ``wait`` seconds from now (an earlier, longer hold stays)."""
        self.blocked_until = max(self.blocked_until, self._clock() + wait)

    def remaining(self) -> float:
        """Seconds a request starting now must still wait (0 when not held)."""
        return max(0.0, self.blocked_until - self._clock())
