"""Text and date normalisation used by the lexical triple matcher (hand-checked cases)."""

from __future__ import annotations

import pytest

from citegraph.models._normalize import (
    DateMention,
    contains_phrase,
    date_entails,
    find_dates,
    normalize_text,
    parse_date,
    strip_accents,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Gödel", "Godel"),
        ("Mileva Marić", "Mileva Maric"),
        ("Chișinău", "Chisinau"),
        ("Stanisław Witkiewicz", "Stanislaw Witkiewicz"),  # ł has no NFKD decomposition
        ("Per Stig Møller", "Per Stig Moller"),  # nor has ø
        ("Straße", "Strasse"),
        ("Minh Mạng", "Minh Mang"),
    ],
)
def test_strip_accents(text: str, expected: str) -> None:
    assert strip_accents(text) == expected


def test_normalize_text() -> None:
    assert normalize_text("Gödel, Kurt (1906–1978)") == "godel kurt 1906 1978"
    assert normalize_text("  Jean-Paul   SARTRE’s\tbook. ") == "jean paul sartre s book"
    assert normalize_text("1,000 copies; 3.5 stars") == "1000 copies 3 5 stars"
    assert normalize_text("") == ""


@pytest.mark.parametrize(
    ("text", "phrase", "expected"),
    [
        ("He was born in Newark, New Jersey.", "Newark", True),
        ("He was born in Newarkshire.", "Newark", False),  # no partial-word match
        ("He was born in New Newark.", "New Newark", True),
        ("Kurt Godel proved it.", "Gödel", True),
        ("KURT GÖDEL proved it.", "kurt godel", True),
        ("He studied at Syracuse.", "Syracuse University", False),  # the whole phrase is needed
        ("Crane's novel", "Crane", True),
        ("anything", "—", False),  # a value with no words never matches
    ],
)
def test_contains_phrase(text: str, phrase: str, expected: bool) -> None:
    assert contains_phrase(text, phrase) is expected


@pytest.mark.parametrize(
    "text",
    [
        "born 1871-11-01 in Newark",
        "born on November 1, 1871 in Newark",
        "born on November 1 1871",
        "born on Nov. 1, 1871",
        "born on Nov 1st, 1871",
        "born 1 November 1871",
        "born on the 1st of November 1871",
        "born 1 Nov. 1871",
        "BORN ON NOVEMBER 1, 1871",
    ],
)
def test_full_date_forms(text: str) -> None:
    assert find_dates(text) == [DateMention(1871, 11, 1)]


def test_find_dates_partial_and_several() -> None:
    assert find_dates("in November 1871") == [DateMention(1871, 11)]
    assert find_dates("in 1871") == [DateMention(1871)]
    # The full dates are read first; their years are not read again as bare years.
    assert find_dates("(November 1, 1871 – June 5, 1900), active 1890-1899") == [
        DateMention(1871, 11, 1),
        DateMention(1900, 6, 5),
        DateMention(1890),
        DateMention(1899),
    ]
    assert find_dates("room 18710 and 3.1871 and 1871.5") == []  # not years
    assert find_dates("1871-13-01") == [DateMention(1871)]  # month 13 is no date; 1871 is a year


def test_parse_date() -> None:
    assert parse_date("1871-11-01") == DateMention(1871, 11, 1)
    assert parse_date("+1871-11-01T00:00:00Z") == DateMention(1871, 11, 1)
    assert parse_date("November 1871") == DateMention(1871, 11)
    assert parse_date("1871") == DateMention(1871)
    assert parse_date("Newark") is None
    assert parse_date("1871 births") is None  # not only a date


def test_date_entails() -> None:
    full = DateMention(1871, 11, 1)
    assert date_entails(full, full)
    assert date_entails(full, DateMention(1871))  # a full date states its year
    assert date_entails(full, DateMention(1871, 11))
    assert not date_entails(DateMention(1871), full)  # a year does not state the day
    assert date_entails(DateMention(1871), full, less_precise=True)
    assert date_entails(DateMention(1871, 11), full, less_precise=True)
    assert not date_entails(DateMention(1871, 11, 2), full, less_precise=True)
    assert not date_entails(DateMention(1872), full, less_precise=True)
