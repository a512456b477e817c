"""Finding citation brackets in an answer, and the plain (bracket-free) form of a text.

Brackets are matched with a stack, so nested brackets (the BioKaLMA value ``[Ann] Sarah
Kingsbury`` inside ``[Q1, mother: [Ann] Sarah Kingsbury]``) stay inside their outer bracket. A
``'['`` that is never closed is reported as unclosed and is otherwise ordinary text; brackets after
it are still found. A ``']'`` without an opening ``'['`` is ordinary text. One linear pass.
"""

from __future__ import annotations

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class BracketSpan:
    """One outermost bracket: ``text[start:end]`` is the bracket, ``'['`` and ``']'`` included.

    For an unclosed bracket (``closed`` is False) ``end`` is the next line break or ``'['`` after
    it, or the end of the text.
    """

    start: int
    end: int
    closed: bool


def find_brackets(text: str) -> list[BracketSpan]:
    """Outermost closed brackets and unclosed ``'['`` of ``text``, sorted by start.

    Args:
        text: Any string.

    Returns:
        The spans, in order. Closed spans never overlap; an unclosed span may contain closed ones.
    """
    stack: list[int] = []
    closed: list[BracketSpan] = []
    for i, ch in enumerate(text):
        if ch == "[":
            stack.append(i)
        elif ch == "]" and stack:
            start = stack.pop()
            if not stack:
                closed.append(BracketSpan(start, i + 1, True))
    if not stack:
        return closed
    # Unmatched '[' remain on the stack. The pairs matched above them are real brackets of their
    # own (removing an unmatched '[' does not change any pairing): record their outermost pairs.
    return _with_unclosed(text, stack)


def _with_unclosed(text: str, unmatched: list[int]) -> list[BracketSpan]:
    """Redo the pairing, treating the unmatched '[' positions as ordinary characters."""
    skip = set(unmatched)
    stack: list[int] = []
    spans: list[BracketSpan] = []
    for i, ch in enumerate(text):
        if ch == "[" and i not in skip:
            stack.append(i)
        elif ch == "]" and stack:
            start = stack.pop()
            if not stack:
                spans.append(BracketSpan(start, i + 1, True))
    stops = _next_stops(text)
    for start in unmatched:
        spans.append(BracketSpan(start, stops[start], False))
    spans.sort(key=lambda s: (s.start, not s.closed))
    return spans


def _next_stops(text: str) -> list[int]:
    """For each position, where an unclosed bracket opened there stops: the next line break or
    the next ``'['`` after it, or the end of the text (one backward pass)."""
    stops = [len(text)] * (len(text) + 1)
    nxt = len(text)
    for i in range(len(text) - 1, -1, -1):
        stops[i] = nxt
        if text[i] in "\n[":
            nxt = i
    return stops


_SPACES = re.compile(r"[ \t\r\f\v\u00a0]+")
_SPACE_BEFORE_PUNCT = re.compile(r" +(?=[.,;:!?)\]}])")
_SPACE_AFTER_OPEN = re.compile(r"(?<=[(\[{]) +")
_LINE_EDGES = re.compile(r" *\n *")


def tidy_plain(text: str) -> str:
    """Collapse runs of spaces, drop spaces before ``.,;:!?)`` and after ``(``, strip the ends.

    Line breaks are kept (with the spaces around them removed), so a multi-paragraph answer keeps
    its paragraphs.
    """
    text = _SPACES.sub(" ", text)
    text = _SPACE_BEFORE_PUNCT.sub("", text)
    text = _SPACE_AFTER_OPEN.sub("", text)
    text = _LINE_EDGES.sub("\n", text)
    return text.strip()


def remove_spans(
    text: str, spans: list[BracketSpan], start: int = 0, end: int | None = None
) -> str:
    """``text[start:end]`` without the closed brackets of ``spans`` (which index ``text``)."""
    stop = len(text) if end is None else end
    parts: list[str] = []
    pos = start
    for span in spans:
        if not span.closed or span.end <= pos or span.start >= stop:
            continue
        parts.append(text[pos : span.start])
        pos = span.end
    parts.append(text[pos:stop])
    return "".join(parts)


def strip_citations(text: str) -> str:
    """The plain form of a text: every closed bracket removed and spacing tidied.

    This is the text KaLMA's alignment and text-quality checks read. ``"born in Rome [Q212657,
    place of birth: Rome]."`` becomes ``"born in Rome."``. An unclosed ``'['`` is kept as text.

    Args:
        text: An answer or one sentence of it.

    Returns:
        The text without citations, with runs of spaces collapsed and no space before
        punctuation.
    """
    return tidy_plain(remove_spans(text, find_brackets(text)))
