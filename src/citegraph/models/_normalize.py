"""Text and date normalisation for lexical matching of KG values in sentences.

:func:`normalize_text` folds case, strips accents (Unicode NFKD, combining marks dropped, plus
a few letters NFKD does not decompose: ``ø ł đ æ œ ß``...), turns punctuation and symbols into
spaces and collapses whitespace, so ``"Gödel's"`` and ``"Godel s"`` compare equal.
:func:`contains_phrase` then tests whole-word / whole-phrase containment, so ``"Newark"`` is found
in ``"born in Newark, New Jersey"`` but not in ``"Newarkshire"``.

Dates are read as :class:`DateMention` (year, optional month, optional day) from the forms
``1871-11-01``, ``November 1, 1871``, ``Nov. 1, 1871``, ``1 November 1871``, ``1st of November
1871``, ``November 1871`` and a bare four-digit year ``1871``. :func:`date_entails` decides
whether a date mentioned in a sentence expresses a value's date.
"""

from __future__ import annotations

import re
import unicodedata
from typing import NamedTuple

#: Letters that NFKD leaves alone but a reader treats as their base letters.
_EXTRA_FOLD = str.maketrans(
    {
        "ø": "o",
        "Ø": "O",
        "ł": "l",
        "Ł": "L",
        "đ": "d",
        "Đ": "D",
        "ħ": "h",
        "Ħ": "H",
        "ı": "i",
        "æ": "ae",
        "Æ": "AE",
        "œ": "oe",
        "Œ": "OE",
        "þ": "th",
        "Þ": "Th",
        "ð": "d",
        "Ð": "D",
        "ß": "ss",
    }
)

#: A thousands separator between digits: "1,000" -> "1000" before punctuation is removed.
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def strip_accents(text: str) -> str:
    """Remove diacritics: NFKD decomposition, combining marks dropped, ``ø``/``ł``/... folded.

    Args:
        text: Any text.

    Returns:
        The text without accents, case unchanged (``"Gödel"`` -> ``"Godel"``).
    """
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return stripped.translate(_EXTRA_FOLD)


def normalize_text(text: str) -> str:
    """Fold case and accents, replace punctuation and symbols by spaces, collapse whitespace.

    Args:
        text: Any text.

    Returns:
        Lower-case ASCII-like words separated by single spaces
        (``"Gödel, Kurt (1906–1978)"`` -> ``"godel kurt 1906 1978"``).
    """
    folded = _THOUSANDS.sub("", strip_accents(text).casefold())
    spaced = "".join(" " if unicodedata.category(c)[0] in "PSZC" else c for c in folded)
    return " ".join(spaced.split())


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether ``phrase`` occurs in ``text`` as whole words, after :func:`normalize_text`.

    Args:
        text: The text to search (e.g. a sentence).
        phrase: The words to find (e.g. a KG value).

    Returns:
        ``True`` iff the normalised phrase is non-empty and occurs in the normalised text on word
        boundaries.
    """
    needle = normalize_text(phrase)
    if not needle:
        return False
    return f" {needle} " in f" {normalize_text(text)} "


class DateMention(NamedTuple):
    """A calendar date, possibly partial: year, then optional month and day."""

    year: int
    month: int | None = None
    day: int | None = None

    @property
    def precision(self) -> int:
        """1 for a year, 2 for a month of a year, 3 for a full date."""
        return 1 + (self.month is not None) + (self.day is not None)


_MONTHS: dict[str, int] = {
    "january": 1,
    "jan": 1,
    "february": 2,
    "feb": 2,
    "march": 3,
    "mar": 3,
    "april": 4,
    "apr": 4,
    "may": 5,
    "june": 6,
    "jun": 6,
    "july": 7,
    "jul": 7,
    "august": 8,
    "aug": 8,
    "september": 9,
    "sept": 9,
    "sep": 9,
    "october": 10,
    "oct": 10,
    "november": 11,
    "nov": 11,
    "december": 12,
    "dec": 12,
}
_MONTH = "(?P<month>" + "|".join(sorted(_MONTHS, key=len, reverse=True)) + r")\.?"
_DAY = r"(?P<day>\d{1,2})(?:st|nd|rd|th)?"
_YEAR = r"(?P<year>\d{4})"

#: Most specific first: a span taken by a full date is not read again as a bare year.
_DATE_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(rf"(?<![\d-]){_YEAR}[-/](?P<month>\d{{1,2}})[-/](?P<day>\d{{1,2}})(?!\d)"),
    re.compile(rf"\b{_MONTH}\s+{_DAY}(?:,\s*|\s+){_YEAR}\b"),
    re.compile(rf"\b{_DAY}\s+(?:of\s+)?{_MONTH},?\s+{_YEAR}\b"),
    re.compile(rf"\b{_MONTH},?\s+(?:of\s+)?{_YEAR}\b"),
    re.compile(rf"(?<![\d.]){_YEAR}(?![\d]|[.,]\d)"),
)


def _mention(match: re.Match[str]) -> DateMention | None:
    groups = match.groupdict()
    month_text = groups.get("month")
    day_text = groups.get("day")
    month: int | None = None
    if month_text is not None:
        month = int(month_text) if month_text.isdigit() else _MONTHS[month_text]
    day = int(day_text) if day_text is not None else None
    if month is not None and not 1 <= month <= 12:
        return None
    if day is not None and not 1 <= day <= 31:
        return None
    return DateMention(int(groups["year"]), month, day)


def find_dates(text: str) -> list[DateMention]:
    """All dates mentioned in ``text``, in the forms listed in the module docstring.

    Each character belongs to at most one mention: ``"November 1, 1871"`` is one full date, not
    also the year ``1871``.

    Args:
        text: Any text.

    Returns:
        The mentions in order of the pattern that found them (full dates first).
    """
    folded = strip_accents(text).casefold()
    taken: list[tuple[int, int]] = []
    found: list[DateMention] = []
    for pattern in _DATE_PATTERNS:
        for match in pattern.finditer(folded):
            start, end = match.span()
            if any(start < t_end and t_start < end for t_start, t_end in taken):
                continue
            mention = _mention(match)
            if mention is not None:
                taken.append((start, end))
                found.append(mention)
    return found


def parse_date(value: str) -> DateMention | None:
    """Read ``value`` as a date if the whole value is one (``"1871-11-01"``, ``"1871"``...).

    Wikidata-style time stamps (``"+1871-11-01T00:00:00Z"``) are read by their date part.

    Args:
        value: A KG value label.

    Returns:
        The date, or ``None`` when the value is not (only) a date.
    """
    folded = strip_accents(value).casefold().strip()
    folded = re.sub(r"^\+", "", folded)
    folded = re.sub(r"t\d{2}:\d{2}:\d{2}z?$", "", folded)
    for pattern in _DATE_PATTERNS:
        match = pattern.fullmatch(folded)
        if match is not None:
            return _mention(match)
    return None


def date_entails(mentioned: DateMention, value: DateMention, *, less_precise: bool = False) -> bool:
    """Whether a date mentioned in a sentence expresses the value's date.

    By default the mention must be at least as precise as the value and agree on every field
    the value has: ``November 1, 1871`` expresses ``1871`` and ``1871-11-01``; ``1871`` does not
    express ``1871-11-01``. With ``less_precise=True`` a less precise mention that agrees on the
    fields it has also counts (``1871`` expresses ``1871-11-01``; ``November 2, 1871`` still
    does not).

    Args:
        mentioned: The date found in the sentence.
        value: The date of the KG value.
        less_precise: Accept a year (or month) mention of a more precise value.

    Returns:
        ``True`` iff the mention expresses the value's date under the rule above.
    """
    if mentioned.precision < value.precision and not less_precise:
        return False
    pairs = (
        (mentioned.year, value.year),
        (mentioned.month, value.month),
        (mentioned.day, value.day),
    )
    return all(m == v for m, v in pairs if m is not None and v is not None)
