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
from datetime import datetime
from typing import Any

from citegraph.errors import (
    ClientError,
    EndpointError,
    RateLimited,
    ResponseFormatError,
    ServerError,
)
from citegraph.io import SNIPPET_CHARS, parse_retry_after, snippet

# parse_retry_after and snippet live in citegraph.io (shared with the chat client);
# they stay importable from here.
__all__ = ["SNIPPET_CHARS", "check_response", "parse_retry_after", "snippet"]


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
