"""The endpoint errors: status, url and Retry-After, and RateLimited's 429."""

from __future__ import annotations

from citegraph.errors import (
    ClientError,
    EndpointError,
    MissingDependency,
    RateLimited,
    ServerError,
)


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


def test_a_missing_extra_names_the_extra() -> None:
    exc = ModuleNotFoundError("No module named 'llguidance'", name="llguidance")
    error = MissingDependency("llguidance", "local", cause=exc)
    assert (
        str(error) == "llguidance is not installed; install it with: pip install 'citegraph[local]'"
    )
    assert isinstance(error, ImportError) and error.extra == "local"


def test_a_package_whose_own_dependency_is_missing_says_which() -> None:
    # transformers is installed but jinja2, which it imports, is not: "transformers is not
    # installed" would send the user to reinstall what they have
    exc = ModuleNotFoundError("No module named 'jinja2'", name="jinja2")
    error = MissingDependency("transformers", "nli", cause=exc)
    assert str(error) == (
        "transformers could not be imported (No module named 'jinja2'); install it with: "
        "pip install 'citegraph[nli]'"
    )
