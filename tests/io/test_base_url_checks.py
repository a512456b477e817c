"""Malformed base URLs (issue 37, item 4): refused with the reason and the secret masked, and
whatever shows one (redact_url, a command line) hides its credentials, however malformed."""

from __future__ import annotations

import pytest

from citegraph.errors import ConfigError
from citegraph.io import check_base_url, redact_args, redact_url

SECRET = "S3CRETPASS"

MALFORMED = [
    ("alice:S3CRETPASS@127.0.0.1:8000/v1", "http:// or https://"),
    ("http:/alice:S3CRETPASS@127.0.0.1:8000/v1", "no host"),
    ("http://alice:S3CRETPASS@[::1/v1", "IPv6"),
    ("http://alice:S3CRETPASS@127.0.0.1:P/v1", "port"),
    ("http://alice:S3CRETPASS@127.0.0.1:99999/v1", "port"),
    ("http://alice:S3CRETPASS/v1", "port"),  # a password taken for a port
    ("http://127.0.0.1:0/v1", "port"),
    ("http://127.0.0.1:8000/v1 x?api-key=S3CRETPASS", "space"),
    ("http://127.0.0.1:8000/v1\t?api-key=S3CRETPASS", "space"),
    ("http://127.0.0.1:8000/v1#api-key=S3CRETPASS", "'#'"),
    ("http://127.0.0.1:8000/v1;api-key=S3CRETPASS", "';'"),
    ("http://127.0.0.1:8000/v1?mode=1;api-key=S3CRETPASS", "';'"),
    ("ftp://alice:S3CRETPASS@127.0.0.1/v1", "http:// or https://"),
    ("", "empty"),
]


@pytest.mark.parametrize(("url", "reason"), MALFORMED)
def test_a_malformed_base_url_is_refused_with_the_secret_masked(url: str, reason: str) -> None:
    with pytest.raises(ConfigError) as caught:
        check_base_url(url, what="--base-url")
    message = str(caught.value)
    assert reason in message and message.startswith("--base-url ")
    assert SECRET not in message and "alice" not in message


@pytest.mark.parametrize(
    "url",
    [
        "http://localhost:8000/v1",
        "https://api.openai.com/v1/",
        "http://[::1]:8000/v1",
        "HTTP://GPU-1.example:8000",
        "http://alice:pw@127.0.0.1:8000/v1?api-key=x&mode=fast",
        "http://127.0.0.1:8000/v1?token=a%3Bb",
    ],
)
def test_a_well_formed_base_url_passes(url: str) -> None:
    assert check_base_url(url, what="--base-url") == url


@pytest.mark.parametrize("url", [url for url, _ in MALFORMED])
def test_redact_url_hides_the_secret_of_any_malformed_url(url: str) -> None:
    shown = redact_url(url)
    assert SECRET not in shown and "alice" not in shown


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("alice:S3CRETPASS@127.0.0.1:8000/v1", "***@127.0.0.1:8000/v1"),
        ("http:/alice:S3CRETPASS@127.0.0.1:P/v1", "http:/***@127.0.0.1:P/v1"),
        ("http://h/v1#api-key=S3CRETPASS", "http://h/v1#***"),
        ("http://h/v1;api-key=S3CRETPASS;v=2", "http://h/v1;api-key=***;v=2"),
        ("http://h/v1?mode=1;api-key=S3CRETPASS", "http://h/v1?mode=1;api-key=***"),
        ("http://h/v1 x?api-key=S3CRETPASS", "http://h/v1 x?api-key=***"),
        ("http://me:pw@gpu:8000/v1?api-key=s3cret&mode=fast", "http://***@gpu:8000/v1?api-key=***&mode=fast"),
    ],
)  # fmt: skip
def test_redact_url_keeps_what_is_not_secret(url: str, shown: str) -> None:
    assert redact_url(url) == shown


def test_redact_args_hides_the_whole_value_of_a_url_option() -> None:
    args = [
        "kalma", "run",
        "--base-url", "http://127.0.0.1:8000/v1 x?api-key=S3CRETPASS",
        "--nli-base-url=alice:S3CRETPASS@127.0.0.1:8000/v1",
        "--lm-base-url", "http://h/v1#key=S3CRETPASS",
        "--kg", "sparql+http://alice:S3CRETPASS@h/sparql",
        "--out", "runs/x",
    ]  # fmt: skip
    shown = redact_args(args)
    assert len(shown) == len(args) and SECRET not in " ".join(shown)
    assert "alice" not in " ".join(shown)
    assert shown[:2] == ["kalma", "run"] and shown[-2:] == ["--out", "runs/x"]
    assert shown[3] == "http://127.0.0.1:8000/v1 x?api-key=***"
    assert shown[4] == "--nli-base-url=***@127.0.0.1:8000/v1"
