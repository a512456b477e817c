"""The shared retry arithmetic: Retry-After parsing, backoff, the 429 hold, body snippets."""

from __future__ import annotations

import random
from datetime import UTC, datetime, timedelta, timezone

import pytest

from citegraph.io import (
    RetryHold,
    backoff_wait,
    parse_retry_after,
    retry_after_from_headers,
    retry_wait,
    snippet,
)

NOW = datetime(2015, 10, 21, 7, 27, tzinfo=UTC)


class HalfRandom(random.Random):
    """random() always 0.5, so uniform(a, b) is the midpoint (a + b) / 2."""

    def random(self) -> float:
        return 0.5


class Clock:
    def __init__(self, start: float) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now


# ---------------------------------------------------------------- Retry-After
@pytest.mark.parametrize(
    ("value", "expected"),
    [("120", 120.0), (" 3.5 ", 3.5), ("0", 0.0), ("-4", 0.0), ("1e1", 10.0)],
)
def test_retry_after_seconds(value: str, expected: float) -> None:
    assert parse_retry_after(value) == expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ("Wed, 21 Oct 2015 07:28:00 GMT", 60.0),  # one minute after NOW
        ("Wed, 21 Oct 2015 08:27:30 GMT", 3630.0),  # an hour and 30 s
        ("Wed, 21 Oct 2015 07:26:59 GMT", 0.0),  # in the past
        ("Wed, 21 Oct 2015 09:28:00 +0200", 60.0),  # 07:28 UTC written in another zone
    ],
)
def test_retry_after_http_date_with_injected_clock(value: str, expected: float) -> None:
    assert parse_retry_after(value, now=NOW) == expected


def test_retry_after_clock_in_another_zone() -> None:
    now = NOW.astimezone(timezone(timedelta(hours=-5)))  # same instant, 02:27 at UTC-5
    assert parse_retry_after("Wed, 21 Oct 2015 07:27:45 GMT", now=now) == 45.0


@pytest.mark.parametrize("value", [None, "", "   ", "soon", "nan", "inf", "-inf", "Wed, 99 Foo"])
def test_retry_after_unusable_values(value: str | None) -> None:
    assert parse_retry_after(value, now=NOW) is None


def test_headers_prefer_retry_after_ms() -> None:
    assert retry_after_from_headers({"retry-after-ms": "250", "retry-after": "9"}) == 0.25
    assert retry_after_from_headers({"retry-after-ms": "1500"}) == 1.5
    assert retry_after_from_headers({"retry-after-ms": "-20"}) == 0.0
    assert retry_after_from_headers({"retry-after": "2"}) == 2.0
    assert retry_after_from_headers({}) is None


def test_headers_fall_back_when_ms_is_unusable() -> None:
    for bad in ("soon", "nan", "inf"):
        assert retry_after_from_headers({"retry-after-ms": bad, "retry-after": "9"}) == 9.0
        assert retry_after_from_headers({"retry-after-ms": bad}) is None


def test_headers_http_date_uses_the_injected_clock() -> None:
    headers = {"retry-after": "Wed, 21 Oct 2015 07:27:10 GMT"}
    assert retry_after_from_headers(headers, now=NOW) == 10.0


def test_headers_are_looked_up_case_insensitively_by_httpx() -> None:
    httpx2 = pytest.importorskip("httpx2")
    headers = httpx2.Headers({"Retry-After-Ms": "40", "Retry-After": "3"})
    assert retry_after_from_headers(headers) == 0.04


# ---------------------------------------------------------------- backoff
def test_backoff_doubles_then_hits_the_cap() -> None:
    waits = [backoff_wait(n, base=0.5, cap=3.0, jitter=False) for n in range(6)]
    assert waits == [0.5, 1.0, 2.0, 3.0, 3.0, 3.0]


def test_backoff_jitter_draws_from_the_upper_half() -> None:
    # with random() = 0.5 the wait is ceiling/2 + ceiling/4 = 3/4 of the ceiling
    waits = [backoff_wait(n, base=1.0, cap=6.0, rng=HalfRandom()) for n in range(5)]
    assert waits == [0.75, 1.5, 3.0, 4.5, 4.5]


def test_backoff_jitter_stays_within_bounds() -> None:
    rng = random.Random(7)
    for n in range(8):
        ceiling = min(10.0, 2.0**n)
        wait = backoff_wait(n, base=1.0, cap=10.0, rng=rng)
        assert ceiling / 2 <= wait <= ceiling


def test_backoff_edge_cases() -> None:
    assert backoff_wait(3, base=0.0, cap=60.0) == 0.0
    assert backoff_wait(2, base=1.0, cap=0.0) == 0.0
    assert backoff_wait(5000, base=1.0, cap=60.0, jitter=False) == 60.0  # no OverflowError


def test_retry_wait_prefers_the_server_and_caps_it() -> None:
    assert retry_wait(7.0, 0, base=1.0, cap=30.0) == 7.0
    assert retry_wait(120.0, 0, base=1.0, cap=2.0) == 2.0
    assert retry_wait(0.0, 4, base=1.0, cap=2.0) == 0.0  # "retry now" is honoured
    assert retry_wait(None, 2, base=1.0, cap=30.0, jitter=False) == 4.0
    assert retry_wait(None, 2, base=1.0, cap=30.0, rng=HalfRandom()) == 3.0


# ---------------------------------------------------------------- the 429 hold
def test_retry_hold() -> None:
    clock = Clock(100.0)
    hold = RetryHold(clock=clock)
    assert hold.remaining() == 0.0
    hold.block(2.5)
    assert hold.blocked_until == 102.5 and hold.remaining() == 2.5
    clock.now = 101.0
    assert hold.remaining() == 1.5
    hold.block(0.5)  # ends at 101.5: the longer hold stays
    assert hold.blocked_until == 102.5
    hold.block(3.0)  # ends at 104.0: extends it
    assert hold.remaining() == 3.0
    clock.now = 110.0
    assert hold.remaining() == 0.0


# ---------------------------------------------------------------- snippets
def test_snippet() -> None:
    assert snippet(b"  <html>\n\t<body>Bad   gateway</body>\n</html>  ") == (
        "<html> <body>Bad gateway</body> </html>"
    )
    assert snippet(b"abcdef", limit=4) == "abc…"
    assert snippet(b"abcd", limit=4) == "abcd"
    assert snippet(b"caf\xc3\xa9 \xff") == "café \ufffd"
    assert len(snippet(b"x" * 1000)) == 300
