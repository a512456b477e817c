"""``metrics.json`` ``citation_validity``: the answers' citation-validity counts, summed.

Every rate comes with its numerator and denominator (``denominators`` names the count each rate
is over), pooled over the answers (a sum over a sum), and ``None`` when its denominator is 0::

    {"n_answers": 3,
     "brackets": 7, "malformed_brackets": 1, "malformed_rate": 0.1429,
     "no_entity_brackets": 0, "no_entity_rate": 0.0,
     "kg_citations": 5, "na_citations": 1,
     "outside_retrieved": 2, "outside_retrieved_rate": 0.4,
     "not_in_kg": 1, "not_in_kg_checked": 5, "not_in_kg_rate": 0.2, "not_in_kg_answers": 3,
     "repeated_citations": 1, "repeated_checked": 5, "repeated_rate": 0.2,
     "repeated_in_bracket": 0, "repeated_in_bracket_rate": 0.0, "repeated_answers": 3,
     "sentences": 6, "citations": 6, "citations_per_sentence": 1.0,
     "citations_per_sentence_mean": 1.1667, "answers_with_sentences": 3,
     "sentences_cited": 4, "sentences_cited_rate": 0.6667,
     "answers_without_citations": 0, "answers_without_citations_rate": 0.0,
     "denominators": {"malformed_rate": "brackets", ...},
     "unmeasured": {"not_in_kg_rate": {"<reason>": <answers>}, ...}}

``citations_per_sentence`` is pooled (citations / sentences); ``citations_per_sentence_mean``
is the mean of the answers' own ratios over the answers with a sentence; an answer without
citations cites neither a KG triple nor ``[NA]``. ``not_in_kg`` counts only the answers whose
cited ids could be looked up (``not_in_kg_answers``, with ``not_in_kg_checked`` KG citations);
the others are counted in ``unmeasured`` with the reason. ``repeated_citations`` (a triple
the answer cited before) and ``repeated_in_bracket`` (before, in the same bracket) are over
``repeated_checked``, the KG citations of the ``repeated_answers`` whose records count repeats
(a record scored before they were counted is unmeasured, not zero). A failed item (its model
call failed: no answer) is left out of every count and counted in ``unmeasured`` under every
rate, as the rest of ``kalma score`` does; so is a record written before these counts existed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from citegraph.kalma._reasons import NOT_RECORDED, REPEATS_NOT_RECORDED

#: Each rate of the block -> the count it is over.
DENOMINATORS = {
    "malformed_rate": "brackets",
    "no_entity_rate": "brackets",
    "outside_retrieved_rate": "kg_citations",
    "not_in_kg_rate": "not_in_kg_checked",
    "repeated_rate": "repeated_checked",
    "repeated_in_bracket_rate": "repeated_checked",
    "citations_per_sentence": "sentences",
    "citations_per_sentence_mean": "answers_with_sentences",
    "sentences_cited_rate": "sentences",
    "answers_without_citations_rate": "n_answers",
}
NO_SENTENCE = "answer has no sentence (left out of the mean)"
_SUMMED = (
    "brackets",
    "malformed_brackets",
    "no_entity_brackets",
    "kg_citations",
    "na_citations",
    "outside_retrieved",
    "sentences",
    "citations",
    "sentences_cited",
)


def _rate(num: float, den: float) -> float | None:
    return num / den if den else None


@dataclass
class ValidityTotals:
    """The answers' citation-validity counts, summed one record at a time."""

    n_answers: int = 0
    sums: Counter[str] = field(default_factory=Counter)
    not_in_kg: int = 0
    not_in_kg_checked: int = 0
    not_in_kg_answers: int = 0
    repeated: int = 0
    repeated_in_bracket: int = 0
    repeated_checked: int = 0
    repeated_answers: int = 0
    ratio_sum: float = 0.0
    uncited: int = 0
    answers_with_sentences: int = 0
    unmeasured: dict[str, Counter[str]] = field(default_factory=dict)

    def add(self, record: Mapping[str, Any]) -> None:
        """Add one scored answer's record (its ``citation_validity``)."""
        validity = record.get("citation_validity")
        if not isinstance(validity, Mapping):
            self.skip(NOT_RECORDED)
            return
        self.n_answers += 1
        for name in _SUMMED:
            self.sums[name] += int(validity.get(name) or 0)
        missing = validity.get("not_in_kg")
        if missing is None:
            why = (validity.get("unmeasured") or {}).get("not_in_kg") or "not measured"
            self._unmeasured("not_in_kg_rate", str(why))
        else:
            self.not_in_kg += int(missing)
            self.not_in_kg_answers += 1
            self.not_in_kg_checked += int(validity.get("kg_citations") or 0)
        if validity.get("repeated_citations") is None:
            for rate in ("repeated_rate", "repeated_in_bracket_rate"):
                self._unmeasured(rate, REPEATS_NOT_RECORDED)
        else:
            self.repeated += int(validity["repeated_citations"])
            self.repeated_in_bracket += int(validity.get("repeated_in_bracket") or 0)
            self.repeated_checked += int(validity.get("kg_citations") or 0)
            self.repeated_answers += 1
        if not validity.get("citations"):
            self.uncited += 1
        sentences = int(validity.get("sentences") or 0)
        if sentences:
            self.answers_with_sentences += 1
            self.ratio_sum += int(validity.get("citations") or 0) / sentences
        else:
            self._unmeasured("citations_per_sentence_mean", NO_SENTENCE)

    def skip(self, reason: str, n: int = 1) -> None:
        """Count ``n`` answers left out of every rate for ``reason`` (a failed item)."""
        for name in DENOMINATORS:
            self._unmeasured(name, reason, n)

    def _unmeasured(self, name: str, reason: str, n: int = 1) -> None:
        self.unmeasured.setdefault(name, Counter())[reason] += n

    def block(self) -> dict[str, Any]:
        """The ``citation_validity`` block of ``metrics.json`` (see the module docstring)."""
        s = self.sums
        return {
            "n_answers": self.n_answers,
            "brackets": s["brackets"],
            "malformed_brackets": s["malformed_brackets"],
            "malformed_rate": _rate(s["malformed_brackets"], s["brackets"]),
            "no_entity_brackets": s["no_entity_brackets"],
            "no_entity_rate": _rate(s["no_entity_brackets"], s["brackets"]),
            "kg_citations": s["kg_citations"],
            "na_citations": s["na_citations"],
            "outside_retrieved": s["outside_retrieved"],
            "outside_retrieved_rate": _rate(s["outside_retrieved"], s["kg_citations"]),
            "not_in_kg": self.not_in_kg,
            "not_in_kg_checked": self.not_in_kg_checked,
            "not_in_kg_rate": _rate(self.not_in_kg, self.not_in_kg_checked),
            "not_in_kg_answers": self.not_in_kg_answers,
            "repeated_citations": self.repeated,
            "repeated_checked": self.repeated_checked,
            "repeated_rate": _rate(self.repeated, self.repeated_checked),
            "repeated_in_bracket": self.repeated_in_bracket,
            "repeated_in_bracket_rate": _rate(self.repeated_in_bracket, self.repeated_checked),
            "repeated_answers": self.repeated_answers,
            "sentences": s["sentences"],
            "citations": s["citations"],
            "citations_per_sentence": _rate(s["citations"], s["sentences"]),
            "citations_per_sentence_mean": _rate(self.ratio_sum, self.answers_with_sentences),
            "answers_with_sentences": self.answers_with_sentences,
            "sentences_cited": s["sentences_cited"],
            "sentences_cited_rate": _rate(s["sentences_cited"], s["sentences"]),
            "answers_without_citations": self.uncited,
            "answers_without_citations_rate": _rate(self.uncited, self.n_answers),
            "denominators": dict(DENOMINATORS),
            "unmeasured": {
                name: dict(sorted(self.unmeasured[name].items()))
                for name in DENOMINATORS
                if name in self.unmeasured
            },
        }
