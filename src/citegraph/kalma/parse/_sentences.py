"""Sentence splitting for attributed answers (the paper parser's splitter): :func:`sentence_spans`.

It returns offsets and never splits inside a citation bracket; CONNER's
:func:`citegraph.conner.metrics.punkt_sentences` (knowledge texts, strings, the rules of ``nltk``'s
Punkt that CONNER's code uses) differs on purpose and is kept apart.

A sentence ends at ``.``, ``!``, ``?`` or ``…`` (a run of them, then any closing quotes or
parentheses) when whitespace and the start of a new sentence follow: an upper-case letter, a
digit or an opening quote. A line break always ends a sentence (language models do not hard-wrap
their answers). Never split:

- inside a closed bracket (a citation can contain periods: ``[Q1, honorific suffix: Sr.]``);
- after a title that precedes a name (``Dr.``, ``St.``, ``Mr.``, ``Gen.``, ...) or a one-letter
  initial (``J. R. R. Tolkien``; the letter ``I`` counts as an initial only when another initial
  follows, so ``World War I. He`` splits);
- after a numbering abbreviation followed by a digit (``No. 5``, ``Jan. 1871``, ``c. 1437``);
- inside decimals and dates (``3.5``, ``1871-11-01``), which have no space after the period.

A dotted acronym (``U.S.``, ``D.C.``, ``e.g.``) or a closing abbreviation (``Jr.``, ``Sr.``,
``etc.``, ``Inc.``) ends a sentence only when the next word is a common sentence opener (``He``,
``The``, ``In``, ...): ``the U.S. Army`` stays whole, ``moved to Washington, D.C. He died``
splits.

Citation brackets (and stray punctuation) that follow a sentence-final period belong to that
sentence: in ``born in Newark. [Q206534, place of birth: Newark] He died`` the bracket ends the
first sentence.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from citegraph.kalma.parse._brackets import BracketSpan, find_brackets


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


_TERMINATORS = frozenset(".!?…")
_CLOSERS = frozenset("\"'”’)»")
_OPENERS = frozenset("\"'“‘(«¿¡")

#: Titles and other abbreviations that precede a word: never the end of a sentence.
_TITLES = _words(
    """mr mrs ms messrs mme mlle dr prof st ste mt ft gen col lt sgt capt cmdr adm maj brig rev
    revd fr hon gov sen rep pres supt insp cpl pvt vs cf viz approx ca"""
)
#: Abbreviations that precede a number: no split when a digit follows.
_NUMBERING = _words(
    """no nos vol vols pp p fig figs ch chap art sec op ed eds c est b d fl jan feb mar apr jun
    jul aug sep sept oct nov dec"""
)
#: Abbreviations that may close a sentence: split only before a common sentence opener.
_CLOSING = _words("""jr sr etc inc ltd co corp bros esq al""")
#: Words that usually open a sentence; used after ambiguous abbreviations only.
_OPENER_WORDS = _words(
    """he she it they we i you this that these those the a an his her its their our my in on at
    after before during later then however there today when while as although though despite
    following born from since by with for both during throughout upon"""
)
_DOTTED = re.compile(r"(?:[A-Za-z]\.)+[A-Za-z]")
_INITIAL = re.compile(r"[A-Z]")
_NEXT_INITIAL = re.compile(r"[A-Z]\.(?:\s|$)")
_WORD = re.compile(r"[^\W\d_]+")


def sentence_spans(
    text: str, brackets: Sequence[BracketSpan] | None = None
) -> list[tuple[int, int]]:
    """Split ``text`` into sentences.

    Args:
        text: An answer, citations included.
        brackets: The answer's brackets if already found (:func:`find_brackets`).

    Returns:
        ``(start, end)`` offsets of each sentence in ``text``, without surrounding whitespace,
        in order; empty sentences are dropped.
    """
    spans = find_brackets(text) if brackets is None else brackets
    closed_end = {s.start: s.end for s in spans if s.closed}
    n = len(text)
    cuts: list[tuple[int, int]] = []  # (end of a sentence, start of the next)
    i = 0
    while i < n:
        if i in closed_end:
            i = closed_end[i]
            continue
        ch = text[i]
        if ch == "\n":
            cuts.append((i, i + 1))
            i += 1
            continue
        if ch not in _TERMINATORS:
            i += 1
            continue
        j = i
        while j < n and text[j] in _TERMINATORS:
            j += 1
        while j < n and text[j] in _CLOSERS:
            j += 1
        k = _absorb(text, j, closed_end)
        m = k
        while m < n and text[m].isspace():
            m += 1
        if m >= n:
            break
        newline = "\n" in text[k:m]
        if newline or (m > k and _opens_sentence(text, i, j, m)):
            cuts.append((k, m))
            i = m
        else:
            i = j
    return _spans_from_cuts(text, cuts)


def _absorb(text: str, j: int, closed_end: dict[int, int]) -> int:
    """Position after the brackets (and punctuation right after them) that follow ``j``."""
    n = len(text)
    k = j
    while True:
        m = k
        while m < n and text[m].isspace():
            m += 1
        if m not in closed_end:
            return k
        k = closed_end[m]
        while k < n and (text[k] in _TERMINATORS or text[k] in _CLOSERS):
            k += 1


def _opens_sentence(text: str, i: int, j: int, m: int) -> bool:
    """Whether the terminator at ``text[i:j]`` ends a sentence whose successor starts at ``m``."""
    nxt = text[m]
    if not (nxt.isupper() or nxt.isdigit() or nxt in _OPENERS):
        return False
    if text[i] != "." or (i + 1 < j and text[i + 1] == "."):
        return True  # '!', '?', '…' or an ellipsis '...'
    token = _token_before(text, i)
    if not token:
        return True
    lower = token.lower()
    next_word = _WORD.match(text, m + (1 if nxt in _OPENERS else 0))
    next_lower = next_word.group(0).lower() if next_word else ""
    if lower in _TITLES:
        return False
    if _INITIAL.fullmatch(token):
        if token != "I":
            return False
        return not _NEXT_INITIAL.match(text, m)
    if lower in _NUMBERING and nxt.isdigit():
        return False
    if _DOTTED.fullmatch(token) or lower in _CLOSING:
        return next_lower in _OPENER_WORDS
    return True


def _token_before(text: str, i: int) -> str:
    """The word right before ``text[i]``, without leading opening punctuation."""
    start = i
    while start > 0 and not text[start - 1].isspace() and text[start - 1] not in "])":
        start -= 1
    return text[start:i].lstrip("\"'“‘([«")


def _spans_from_cuts(text: str, cuts: list[tuple[int, int]]) -> list[tuple[int, int]]:
    out: list[tuple[int, int]] = []
    start = 0
    for end, nxt in [*cuts, (len(text), len(text))]:
        a, b = start, end
        while a < b and text[a].isspace():
            a += 1
        while b > a and text[b - 1].isspace():
            b -= 1
        if b > a:
            out.append((a, b))
        start = nxt
    return out
