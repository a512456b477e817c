"""The endpoint errors: status, url and Retry-After, and RateLimited's 429."""

from __future__ import annotations

from citegraph.errors import ClientError, EndpointError, RateLimited, ServerError


def test_endpoint_errors_carry_status_url_and_retry_after() -> None:
    error = ServerError("down", retry_after=2.5, status=503, url="http://x")
    assert (error.status, error.url, error.retry_after) == (503, "http://x", 2.5)
    assert isinstance(error, EndpointError) and str(error) == "down"
    plain = ClientError("bad", status=400)
    assert (plain.status, plain.url, plain.retry_after) == (400, None, None)
    assert ServerError("down").status is None


def test_rate_limited_is_429_unless_told_otherwise() -> None:
    assert RateLimited("slow down", retry_after=1.0).status == 429
    assert RateLimited("slow down").retry_after is None
    assert RateLimited("slow down", status=420, url="u").status == 420
