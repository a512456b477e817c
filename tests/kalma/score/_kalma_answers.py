"""Hand-built :class:`ParsedAnswer` objects for the KaLMA metric tests (no parser involved)."""

from __future__ import annotations

from citegraph.kalma import Citation, ParsedAnswer, Sentence
from citegraph.kg import Triple


def answer(*sentences: tuple[str, list[Triple | str]]) -> ParsedAnswer:
    """Build a parsed answer: each sentence is (plain text, citations); "NA" is an [NA] marker.

    A sentence's ``text`` is its plain text with the brackets put before the final character:
    ``("Sentence1.", [k1, "NA"])`` gives ``"Sentence1 [Q1, r1: v1][NA]."``.
    """
    out = []
    for plain, cits in sentences:
        citations = tuple(
            Citation(kind="kg", triple=c, bracket=f"[{c.subject}, {c.as_text()}]", start=0)
            if isinstance(c, Triple)
            else Citation(kind="na", bracket="[NA]", start=0)
            for c in cits
        )
        brackets = "".join(c.bracket for c in citations)
        out.append(Sentence(text=f"{plain[:-1]} {brackets}.", plain=plain, citations=citations))
    return ParsedAnswer(sentences=tuple(out), parser="test")
