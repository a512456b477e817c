"""Turn an HTTP response from a SPARQL endpoint into SPARQL JSON results or a typed error.

- 2xx with a SPARQL 1.1 JSON results body (``head`` plus ``results.bindings`` or ``boolean``)
  -> the parsed dict.
- 2xx with anything else (an HTML error page, malformed JSON, JSON of another shape)
  -> :class:`ResponseFormatError` naming the URL, the status and a snippet of the body.
- 429 -> :class:`RateLimited` with the Retry-After in seconds; 5xx -> :class:`ServerError`
  (also with Retry-After); other 4xx -> :class:`ClientError`; anything else -> EndpointError.
"""

from __future__ import annotations

import json
import math
import re
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from typing import Any

from citegraph.errors import (
    ClientError,
    EndpointError,
    RateLimited,
    ResponseFormatError,
    ServerError,
)

__all__ = ["check_response", "parse_retry_after", "snippet"]

SNIPPET_CHARS = 300


def snippet(body: bytes, limit: int = SNIPPET_CHARS) -> str:
    """The start of a body as one line of text, for error messages."""
    text = re.sub(r"\s+", " ", body[: limit * 4].decode("utf-8", "replace")).strip()
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a Retry-After header: delta-seconds or an HTTP date.

    Args:
        value: The header value, or ``None`` when absent.
        now: The current time for HTTP dates (default: now, UTC).

    Returns:
        Seconds (0 for a date in the past), or ``None`` when absent or unparseable.
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


def _results_problem(data: Any) -> str | None:
    """Why ``data`` is not SPARQL JSON results, or ``None`` when it is."""
    if not isinstance(data, dict):
        return f"the JSON is a {type(data).__name__}, not an object"
    if not isinstance(data.get("head"), dict):
        return "the JSON has no 'head' object"
    if "boolean" in data:
        return None if isinstance(data["boolean"], bool) else "'boolean' is not true/false"
    results = data.get("results")
    if not isinstance(results, dict) or not isinstance(results.get("bindings"), list):
        return "the JSON has neither 'results.bindings' nor 'boolean'"
    if not all(isinstance(b, dict) for b in results["bindings"]):
        return "a binding is not an object"
    return None


def check_response(
    status: int, headers: Any, body: bytes, url: str, *, now: datetime | None = None
) -> dict[str, Any]:
    """Validate one endpoint response.

    Args:
        status: HTTP status code.
        headers: Response headers (a mapping with case-insensitive ``get``).
        body: Raw response body.
        url: The endpoint URL, for messages.
        now: Current time for Retry-After dates (tests).

    Returns:
        The SPARQL JSON results.

    Raises:
        RateLimited, ServerError, ClientError, ResponseFormatError, EndpointError: see the module
            docstring.
    """
    where = f"{url} answered HTTP {status}"
    if status == 429:
        wait = parse_retry_after(headers.get("retry-after"), now=now)
        raise RateLimited(
            f"{where} (rate limited; Retry-After {wait}): {snippet(body)}",
            retry_after=wait,
            url=url,
        )
    if 500 <= status <= 599:
        wait = parse_retry_after(headers.get("retry-after"), now=now)
        raise ServerError(f"{where}: {snippet(body)}", retry_after=wait, status=status, url=url)
    if 400 <= status <= 499:
        raise ClientError(f"{where}: {snippet(body)}", status=status, url=url)
    if not 200 <= status <= 299:
        raise EndpointError(f"{where} (unexpected status): {snippet(body)}", status=status, url=url)
    try:
        data = json.loads(body)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        problem: str | None = f"the body is not JSON ({exc})"
    else:
        problem = _results_problem(data)
    if problem is not None:
        content_type = headers.get("content-type", "?")
        raise ResponseFormatError(
            f"{where} with a body that is not SPARQL JSON results: {problem}; "
            f"Content-Type {content_type!r}; body starts {snippet(body)!r}",
            status=status,
            url=url,
        )
    return data  # type: ignore[no-any-return]
