"""Cutting the ``relation: value`` part of a citation bracket into facts.

The text after the subject is cut at commas and semicolons into *pieces*. A fact starts at a piece
that contains a colon and is not one IRI written in full (``http://...`` continues a value); the
relation is the text before one of that piece's colons and the value is everything after it, up
to the start of the next fact. Two choices are ambiguous:

- does a comma separate two facts, or is it inside a value (``Washington, D.C.``)?
- does a colon separate relation and value, or is it inside a value
  (``notable works: The Moon: Considered as a Planet, a World, and a Satellite``)?

**Default rule** (no graphs, or graphs that cannot tell): a new fact starts at every piece that
contains a colon, and the relation ends at that piece's first colon. Pieces without a colon
continue the current value. This reads every value of the BioKaLMA KG correctly, including the
15 values that contain ``": "`` (in all of them the first colon follows the relation and no comma
precedes a colon inside the value).

**With graphs**, every way of cutting is scored and the best one is kept. Scores compare, in
order: fewer facts with an empty relation or value; more facts ``(subject, relation, value)``
found in the graphs; more facts ``(relation, value)`` found under any subject; more relations
that are relation labels of the graphs; fewest departures from the default rule. A bracket with
more than :data:`MAX_SEARCH` colon pieces or :data:`MAX_SEARCH_CHARS` characters is cut by the
default rule only.
"""

from __future__ import annotations

from dataclasses import dataclass

from citegraph.kalma.parse._graphs import GraphIndex, norm_ws
from citegraph.kg import iri_text

#: Above this many colon pieces in one bracket, only the default rule is used.
MAX_SEARCH = 40
#: At most this many colons of a piece are tried as the relation/value separator.
MAX_COLONS = 6
#: Brackets longer than this (characters) are cut by the default rule only.
MAX_SEARCH_CHARS = 4000

_Score = tuple[int, int, int, int, int]
_ZERO: _Score = (0, 0, 0, 0, 0)


@dataclass(frozen=True, slots=True)
class Fact:
    """One ``relation: value`` read from a bracket (whitespace-normalised, case kept)."""

    relation: str
    value: str
    text: str

    @property
    def valid(self) -> bool:
        """Whether both the relation and the value are non-empty."""
        return bool(self.relation) and bool(self.value)


def segment(
    inner: str,
    pieces: list[tuple[int, int]],
    subject: str | None,
    index: GraphIndex,
) -> list[Fact]:
    """Cut ``pieces`` (offsets into ``inner``; the first contains a colon) into facts.

    Args:
        inner: The bracket text without ``'['`` and ``']'``.
        pieces: Consecutive ``(start, end)`` pieces of ``inner``, cut at commas and semicolons.
        subject: The current subject QID, or None when the bracket names none (yet).
        index: The graphs to score cuts against (may be empty).

    Returns:
        The facts in order.
    """
    starts = [i for i, (a, b) in enumerate(pieces) if ":" in inner[a:b] and not _is_iri(inner[a:b])]
    if not starts:
        return []
    search = not index.empty and len(starts) <= MAX_SEARCH and len(inner) <= MAX_SEARCH_CHARS
    n = len(pieces)
    # best[i] = (score of the best cut of pieces[i:], its first fact, where the next fact starts)
    best: dict[int, tuple[_Score, Fact | None, int]] = {n: (_ZERO, None, n)}
    for pos in range(len(starts) - 1, -1, -1):
        i = starts[pos]
        nxt = starts[pos + 1] if pos + 1 < len(starts) else n
        ends = [*starts[pos + 1 :], n] if search else [nxt]
        colons = _colons(inner, pieces[i])[: MAX_COLONS if search else 1]
        chosen: tuple[_Score, Fact | None, int] | None = None
        for merged, j in enumerate(ends):
            rest_score = best[j][0]
            for ci, colon in enumerate(colons):
                fact = _fact(inner, pieces[i][0], colon, pieces[j - 1][1])
                score = _add(_score(fact, subject, index, merged + (ci > 0)), rest_score)
                if chosen is None or score > chosen[0]:
                    chosen = (score, fact, j)
        assert chosen is not None  # a start piece always has a colon
        best[i] = chosen
    facts: list[Fact] = []
    at = starts[0]
    while at < n:
        _, first, at = best[at]
        assert first is not None
        facts.append(first)
    return facts


def _is_iri(piece: str) -> bool:
    """A piece that is one IRI written in full (``http://...``) continues a value."""
    return iri_text(piece) is not None


def _colons(inner: str, piece: tuple[int, int]) -> list[int]:
    a, b = piece
    return [a + k for k, ch in enumerate(inner[a:b]) if ch == ":"]


def _fact(inner: str, start: int, colon: int, end: int) -> Fact:
    relation = norm_ws(inner[start:colon]).strip(",; ")
    value = norm_ws(inner[colon + 1 : end]).strip(",; ")
    return Fact(relation=relation, value=value, text=norm_ws(inner[start:end]))


def _score(fact: Fact, subject: str | None, index: GraphIndex, departures: int) -> _Score:
    if not fact.valid:
        return (-1, 0, 0, 0, -departures)
    return (
        0,
        int(index.has(subject, fact.relation, fact.value)),
        int(index.has_rel_value(fact.relation, fact.value)),
        int(index.known_relation(fact.relation)),
        -departures,
    )


def _add(a: _Score, b: _Score) -> _Score:
    return (a[0] + b[0], a[1] + b[1], a[2] + b[2], a[3] + b[3], a[4] + b[4])
