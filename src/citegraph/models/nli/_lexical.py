"""A deterministic lexical triple matcher behind the :class:`NLIModel` protocol.

It decides whether a sentence states a KG fact's *value*, the way a reader checks a citation to a
name or a date: the pair is entailed iff the value occurs in the sentence as a whole word or
phrase after normalisation (case, accents, punctuation, whitespace; see
:mod:`citegraph.models._normalize`), or iff the value is a date and the sentence mentions that
date in any common form (``1871-11-01``, ``November 1, 1871``, ``Nov. 1, 1871``, ``1 November
1871``). The relation is not checked: ``"born in Newark"`` entails ``place of death: Newark`` too.
That keeps the rule simple and predictable; use it as the first stage of a cascade
(:class:`~citegraph.models.CascadeNLI`) in front of a real NLI model when relations matter.

The value is read from the hypothesis: KaLMA hypotheses are ``"relation: value"`` (see
:meth:`citegraph.kg.Triple.as_text`), so the value is the text after the first ``": "``; a
hypothesis without ``": "`` is taken as the value itself. Natural-sentence hypotheses
(``"Stephen Crane place of birth Newark"``) therefore do not suit this matcher.
"""

from __future__ import annotations

from collections.abc import Sequence

from citegraph.models._nli_protocol import NLIPair, NLIVerdict
from citegraph.models._normalize import contains_phrase, date_entails, find_dates, parse_date

LEXICAL_SOURCE = "lexical"


def value_from_hypothesis(hypothesis: str) -> str:
    """The value part of a ``"relation: value"`` hypothesis (the whole text if no ``": "``).

    Args:
        hypothesis: A hypothesis such as ``"place of birth: Newark"``.

    Returns:
        The text after the first ``": "`` (``"Newark"``), so values that contain ``": "`` keep it.
    """
    _, sep, value = hypothesis.partition(": ")
    return value if sep else hypothesis


def value_in_text(text: str, value: str, *, year_only_dates: bool = False) -> bool:
    """Whether ``text`` states ``value`` (whole-word match after normalisation, or same date).

    Args:
        text: The sentence (premise).
        value: The KG value label, e.g. ``"Newark"`` or ``"1871-11-01"``.
        year_only_dates: Also accept a less precise mention of a date value (the year ``1871``
            for ``1871-11-01``). Off by default: a year alone does not state a full date.

    Returns:
        ``True`` iff the value is expressed in the text under the rules above.
    """
    value_date = parse_date(value)
    if value_date is not None and any(
        date_entails(mention, value_date, less_precise=year_only_dates)
        for mention in find_dates(text)
    ):
        return True
    return contains_phrase(text, value)


class LexicalNLI:
    """Entailed iff the hypothesis's value appears in the premise (see module docstring).

    Args:
        year_only_dates: Accept a year-only (or month-and-year) mention of a full-date value.
    """

    def __init__(self, *, year_only_dates: bool = False) -> None:
        self._year_only_dates = year_only_dates

    @property
    def name(self) -> str:
        """``"lexical"``, or ``"lexical(year_only_dates)"`` with that option on."""
        return f"{LEXICAL_SOURCE}(year_only_dates)" if self._year_only_dates else LEXICAL_SOURCE

    @property
    def year_only_dates(self) -> bool:
        """Whether a year-only mention of a full date counts."""
        return self._year_only_dates

    def decide(self, pair: NLIPair) -> NLIVerdict:
        """The verdict for one pair (synchronous; the matcher is pure string work)."""
        value = value_from_hypothesis(pair.hypothesis)
        entailed = value_in_text(pair.premise, value, year_only_dates=self._year_only_dates)
        return NLIVerdict(entailed=entailed, score=None, source=LEXICAL_SOURCE)

    async def entails(self, pairs: Sequence[NLIPair]) -> list[NLIVerdict]:
        """One verdict per pair, in order; ``score`` is ``None`` (no probability)."""
        return [self.decide(pair) for pair in pairs]
