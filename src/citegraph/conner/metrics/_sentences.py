"""Split a knowledge text into sentences (the units CONNER verifies one by one):
:func:`punkt_sentences`.

Named for the splitter it stands in for: KaLMA's :func:`citegraph.kalma.parse.sentence_spans` splits
attributed answers (offsets, citation brackets kept whole) by its own rules, and differs on
purpose.

CONNER's code uses ``nltk.sent_tokenize`` (the pre-trained Punkt model). nltk is not a citegraph
dependency, so this is a small rule-based splitter meant to agree with Punkt on knowledge texts
(Wikipedia-style prose, NQ passages with spaced punctuation such as ``"intestine . In"``,
LLM-generated paragraphs). The rules:

1. A sentence ends at ``.``, ``!``, ``?`` or ``...`` (closing quotes and brackets after it stay
   with the sentence) followed by whitespace and more text. A period inside a token (``3.5``,
   ``wikipedia.org``, ``U.S.A``) never ends a sentence.
2. Line breaks always end a sentence (Punkt treats a single newline as a space). CONNER's inputs
   are one knowledge per line, so this only matters for multi-line texts such as bullet lists.
3. No break before a word that starts with a lower-case letter (``"e.g. the"``, ``"Yahoo! is"``).
4. No break after a known abbreviation (:data:`ABBREVIATIONS`: titles, months, Latin and
   company forms, ``b.`` / ``d.`` for born / died), an initial (``"John F. Kennedy"``), a dotted
   acronym (``"U.S."``, ``"Ph.D."``), or ``"No."`` before a number, unless the next word is a
   common sentence opener (:data:`SENTENCE_STARTERS`: ``"... in the U.S. The ..."`` does break;
   ``"A"`` and ``"I"`` are left out, as they are initials too). Punkt learns the same kind of
   exceptions from data and its orthographic statistics, so rare cases can differ.
5. ``"etc."`` is not an abbreviation here: before a capitalised word it ends the sentence.
6. Punkt's boundary realignment: closing quotes and brackets (``"``, ``'``, ``)``, ``]``,
   ``}``) that start the next sentence, followed by whitespace or the end, move back to the
   sentence before, so ``"... revolution . ''"`` and ``"Yahoo ! '' ( X"`` keep their closing
   ``''`` (NQ passages space their PTB quotes).
7. A period after a number does not end a sentence when the next token is punctuation
   (``"August 1980. . Parton"``): Punkt's orthographic heuristic for ordinals.

Rules 6 and 7 follow from CONNER's released ``nq_ref_avg_sent_ppl``: without them, items 104,
205, 239, 324 and 367 of the NQ gold passages get a one-token sentence (a lone ``''``, ``!`` or
``.``), which ``ppl.py`` would have scored NaN, yet their released perplexities are finite.

Every sentence is returned stripped; empty and whitespace-only texts give no sentences.
"""

from __future__ import annotations

import re

__all__ = ["ABBREVIATIONS", "SENTENCE_STARTERS", "punkt_sentences"]

#: Abbreviations (lower case, without the final period) after which a period does not end a
#: sentence. Matched case-insensitively on the token before the period.
# fmt: off
ABBREVIATIONS = frozenset(
    {
        # titles and ranks
        "mr", "mrs", "ms", "dr", "prof", "sr", "jr", "st", "mt", "ft", "rev", "hon", "gen",
        "col", "lt", "maj", "capt", "cpt", "sgt", "cmdr", "adm", "gov", "sen", "rep", "pres",
        "messrs", "mme", "mlle", "fr", "sra", "srta",
        # months and days
        "jan", "feb", "mar", "apr", "jun", "jul", "aug", "sep", "sept", "oct", "nov", "dec",
        "mon", "tue", "tues", "wed", "thu", "thur", "thurs", "fri", "sat", "sun",
        # Latin, references and units of text
        "vs", "v", "cf", "ca", "c", "approx", "fl", "vol", "vols", "pp", "p", "ch", "sec",
        "fig", "figs", "eq", "ed", "eds", "al", "op", "cit", "ibid", "viz",
        # organisations and places
        "inc", "ltd", "co", "corp", "bros", "assn", "dept", "univ", "ave", "blvd", "rd",
        "est", "no", "b", "d",
    }
)

#: Words that start a new sentence even after an abbreviation, initial or acronym.
SENTENCE_STARTERS = frozenset(
    {
        "The", "An", "He", "She", "It", "They", "We", "You", "This", "That", "These",
        "Those", "There", "His", "Her", "Its", "Their", "In", "On", "At", "After", "Before",
        "During", "However", "But", "And", "As", "When", "While", "Although", "Since", "From",
    }
)
# fmt: on

# A candidate end: terminator run, closing quotes / brackets, whitespace, then more text.
_END = re.compile(r"(?P<term>[.!?]+)(?P<close>[\"'”’»)\]]*)(?P<space>\s+)(?=\S)")
_INITIAL = re.compile(r"[A-Z]")
_ACRONYM = re.compile(r"(?:[A-Za-z]{1,2}\.)+[A-Za-z]{1,2}")  # "U.S" of "U.S.", "Ph.D" of "Ph.D."
_OPENERS = "\"'“‘«([{"
#: Punkt's ``re_boundary_realignment``: closing punctuation that belongs to the sentence before.
_REALIGN = re.compile(r"[\"')\]}]+?(?:\s+|(?=--)|$)")
#: Punkt's number type (``##number##``) and the tokens that never start a sentence.
_NUMBER = re.compile(r"-?[.,]?\d[\d,.-]*\.?")
_PUNCTUATION = frozenset(";:,.!?")


def _word_before(text: str, end: int) -> str:
    """The token ending at ``end`` (exclusive), without leading opening quotes / brackets."""
    start = end
    while start > 0 and not text[start - 1].isspace():
        start -= 1
    return text[start:end].lstrip(_OPENERS)


def _next_word(text: str, start: int) -> str:
    match = re.match(r"\S+", text[start:])
    word = match.group(0) if match else ""
    return word.lstrip(_OPENERS).rstrip(",;:.!?\"'”’)")


def _is_break(text: str, match: re.Match[str]) -> bool:
    nxt = _next_word(text, match.end())
    first = text[match.end()]
    if first.islower():
        return False
    if nxt in SENTENCE_STARTERS:
        return True
    term = match.group("term")
    if term != ".":  # "!", "?", "...", "?!"
        return True
    word = _word_before(text, match.start("term"))
    if _NUMBER.fullmatch(word) and text[match.end() :].split(maxsplit=1)[0] in _PUNCTUATION:
        return False
    if word.lower() in ABBREVIATIONS and not (word.lower() == "no" and not nxt[:1].isdigit()):
        return False
    return not (_INITIAL.fullmatch(word) or _ACRONYM.fullmatch(word))


def _split_line(line: str) -> list[str]:
    sentences: list[str] = []
    start = 0
    for match in _END.finditer(line):
        if not _is_break(line, match):
            continue
        end, following = match.start("space"), match.end()
        closing = _REALIGN.match(line, following)
        if closing:  # rule 6: the closing quotes / brackets stay with this sentence
            end, following = following + len(closing.group(0).rstrip()), closing.end()
        sentences.append(line[start:end].strip())
        start = following
    sentences.append(line[start:].strip())
    return [s for s in sentences if s]


def punkt_sentences(text: str) -> list[str]:
    """Split ``text`` into sentences (see the module docstring for the rules).

    Args:
        text: A knowledge text.

    Returns:
        The sentences in order, stripped; ``[]`` for an empty or blank text.

    Example:
        >>> punkt_sentences("He moved to the U.S. in 1990. Dr. Smith met him.")
        ['He moved to the U.S. in 1990.', 'Dr. Smith met him.']
    """
    out: list[str] = []
    for line in text.splitlines():
        out.extend(_split_line(line))
    return out
