"""Reading one citation bracket (paper parser).

A bracket's text is cut at commas and semicolons into pieces, and each piece is read as:

- a subject: ``Q206534`` or ``qid: Q206534`` (also ``QID=Q1``, lower-case ``q1``). It sets the
  subject of the facts after it, so ``[Q1, a: b, Q2, c: d]`` cites two subjects. At the start of a
  bracket the QID may be followed by a fact without a comma (``[Q1: place of birth: Newark]``).
  Any other id is a subject when the whole piece (optionally led by ``qid:`` / ``id:``) is a
  centre's full id, short id or unique local name (``ex:MarieCurie``, ``MarieCurie``; see
  :meth:`GraphIndex.subject_of`), read as the full id; or an IRI written in full
  (``http://...``, ``urn:...``), which names itself even when no graph is centred on it (it is
  then cited, and counted wrong): first in a bracket any IRI, later only one in the namespace of
  a centre (elsewhere it continues the value before it, as a web address in a list of them
  does). At the start of a bracket such an id may be followed by a colon and a fact
  (``[ex:MarieCurie: spouse: Pierre Curie]``), as a QID may. An IRI piece never starts a
  ``relation: value``;
- a ``[NA]`` marker: ``NA``, ``N/A``, ``n.a.``, ``not applicable``, any case and spacing;
- a subject label: pieces without a colon right after a subject (``Stephen Crane`` in
  ``[Q1, Stephen Crane, movement: X]``). Not a fact; it becomes the triples' ``subject_label``;
- facts: the remaining pieces, cut into ``relation: value`` by :func:`segment`.

A bracket that names no id has its subject found from what it does write:

- a label before its facts (``[Marie Curie, spouse: Pierre Curie]``) names the centre of that
  name; when two centres share it, the one whose graph holds the most of the facts; when no
  centre has that name (``[Berlin, located on river: Vistula]`` in an answer about Warsaw, or a
  misspelt ``[Warszawa, ...]``), the subject is the label as written: an entity outside the
  retrieved graphs, so the citation is read, counted, and never credited, and never moved to
  the centre whose graph happens to hold the fact;
- facts alone (``[place of birth: Newark]``): the one centre whose graph holds the most of the
  bracket's ``(relation, value)`` pairs, when it is unique.

Otherwise the bracket is a :class:`ParseIssue` and yields no citation (no id and no graphs, or
no unique subject).

Issues (never exceptions): an empty bracket; a bracket with no QID, no ``relation: value`` and no
NA (``[1]``, ``[citation needed]``: not a citation); a QID without any ``relation: value``
(``[Q5]``, ``[Q1, Stephen Crane]``); a fact with an empty relation or value; an unresolved subject.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from citegraph.kalma.parse._brackets import find_brackets
from citegraph.kalma.parse._graphs import GraphIndex, norm_ws
from citegraph.kalma.parse._segment import Fact, segment
from citegraph.kalma.parse._types import Citation, ParseIssue
from citegraph.kg import Triple, iri_text

_NA = re.compile(r"n\s*[/.]?\s*a\.?|not\s+applicable", re.IGNORECASE)
_QID = re.compile(r"\s*(?:qid\s*[:=]?\s*)?(q[1-9][0-9]*)(?!\w)\s*(?:[:;\-–]\s*)?", re.IGNORECASE)
_PIECE_CUT = re.compile(r"[,;]")


@dataclass(slots=True)
class _Item:
    kind: str  # "na" or "kg"
    subject: str | None = None
    label: str | None = None
    fact: Fact | None = None


def read_bracket(
    bracket: str, start: int, index: GraphIndex
) -> tuple[list[Citation], list[ParseIssue]]:
    """Read one closed bracket (``'['`` ... ``']'``) found at offset ``start`` of the answer.

    Args:
        bracket: The bracket verbatim, brackets included.
        start: Offset of its ``'['`` in the answer.
        index: The retrieved graphs (may be empty).

    Returns:
        The citations in reading order, and the issues found.
    """
    inner = bracket[1:-1]

    def issue(reason: str) -> ParseIssue:
        return ParseIssue(bracket=bracket, start=start, reason=reason)

    if not inner.strip():
        return [], [issue("empty bracket")]
    if _NA.fullmatch(norm_ws(inner)):
        return [Citation(kind="na", bracket=bracket, start=start)], []

    items, saw_qid = _read_items(inner, index)
    issues: list[ParseIssue] = []
    unresolved = [it for it in items if it.kind == "kg" and it.subject is None]
    for label, group in _by_label(unresolved).items():
        subject = _resolve(group, index, label)
        if subject is None:
            if index.empty:
                why = index.no_graphs
            elif label:
                why = f"{label!r} names more than one centre of the graphs"
            else:
                why = "no unique subject among the graphs"
            issues.append(issue(f"no QID, and the subject could not be resolved ({why})"))
        for it in group:
            it.subject = subject
    items = [it for it in items if it.kind == "na" or it.subject is not None]

    names = {
        it.subject: it.fact.value
        for it in reversed(items)
        if it.fact is not None and it.fact.relation == "name" and it.fact.valid
    }
    citations: list[Citation] = []
    for it in items:
        if it.kind == "na":
            citations.append(Citation(kind="na", bracket=bracket, start=start))
            continue
        assert it.fact is not None and it.subject is not None
        if not it.fact.valid:
            issues.append(issue(f"empty relation or value in {it.fact.text!r}"))
            continue
        triple = _triple(it, index, names.get(it.subject))
        citations.append(Citation(kind="kg", triple=triple, bracket=bracket, start=start))

    if not citations and not issues:
        if saw_qid:
            issues.append(issue("a QID without any 'relation: value'"))
        else:
            issues.append(issue("not a citation: no QID, no 'relation: value' and no NA"))
    return citations, issues


#: A piece written as one CURIE-shaped token: ``geo:Berlin``, ``ex:Marie_Curie``.
_CURIE_SHAPED = re.compile(r"[^\W\d][\w\-.]*:[^\s:][^\s]*")
#: A first piece that leads with an id and a colon: ``ex:MarieCurie: spouse: Pierre Curie``.
_ID_HEAD = re.compile(r"\s*(?:(?:qid|id)\s*[:=]\s*)?([^\W\d][\w\-.]*:[^\s:]+)\s*:\s*\S")


def subject_references(answer: str) -> list[str]:
    """The texts an answer's closed brackets may name entities by, for looking them up in a
    whole KG before the answer is parsed (``kalma score --kg``): every QID, full IRI and
    CURIE-shaped piece, the id leading a bracket's first piece (``ex:X: relation: value``), a
    first piece without a colon (a label, local name or short id, ``[Berlin, ...]``) and the
    pieces without a colon that lead a bracket, joined (a label with commas).
    Distinct texts, in order of appearance; ``[NA]`` markers and facts are left out."""
    found: dict[str, None] = {}
    for span in find_brackets(answer):
        if not span.closed:
            continue
        inner = answer[span.start + 1 : span.end - 1]
        pieces = _pieces(inner)
        lead = 0
        while lead < len(pieces) and ":" not in inner[pieces[lead][0] : pieces[lead][1]]:
            lead += 1
        if lead > 1:  # a label with commas, as the parser reads it: [Washington, D.C., r: v]
            found.setdefault(norm_ws(inner[pieces[0][0] : pieces[lead - 1][1]]))
        for n, (a, b) in enumerate(pieces):
            text = norm_ws(inner[a:b])
            qid = _QID.match(text)
            if qid is not None:
                found.setdefault(qid.group(1).upper())
                continue
            bare = re.sub(r"^(?:qid|id)\s*[:=]\s*", "", text, flags=re.IGNORECASE)
            if iri_text(bare) or _CURIE_SHAPED.fullmatch(bare):
                found.setdefault(bare)
            elif n == 0 and (head := _ID_HEAD.match(text)) is not None:
                found.setdefault(head.group(1))
            elif n == 0 and ":" not in bare and not _NA.fullmatch(bare):
                found.setdefault(bare)
    return list(found)


def _pieces(inner: str) -> list[tuple[int, int]]:
    bounds = [0] + [m.start() + 1 for m in _PIECE_CUT.finditer(inner)]
    ends = [m.start() for m in _PIECE_CUT.finditer(inner)] + [len(inner)]
    return [(a, b) for a, b in zip(bounds, ends, strict=True) if inner[a:b].strip()]


def _read_items(inner: str, index: GraphIndex) -> tuple[list[_Item], bool]:
    """Walk the pieces: subjects, NA markers, labels and facts, in order."""
    items: list[_Item] = []
    subject: str | None = None
    label: str | None = None
    saw_qid = False
    run: list[tuple[int, int]] = []

    def flush() -> None:
        nonlocal label
        k = 0
        while k < len(run) and ":" not in inner[run[k][0] : run[k][1]]:
            k += 1
        if k:
            label = norm_ws(inner[run[0][0] : run[k - 1][1]])
        for fact in segment(inner, run[k:], subject, index):
            items.append(_Item("kg", subject, label, fact))
        run.clear()

    for n, (a, b) in enumerate(_pieces(inner)):
        text = inner[a:b]
        match = _QID.match(text)
        named = None if match else _named_subject(text, index, n == 0)
        if match and (match.end() == len(text) or n == 0):
            flush()
            subject, label, saw_qid = match.group(1).upper(), None, True
            if match.end() < len(text):
                run.append((a + match.end(), b))
        elif named is not None:
            flush()
            subject, label, saw_qid = named, None, True
        elif n == 0 and (written := index.written_subject(text)) is not None:
            flush()
            subject, label, saw_qid = written, None, True
        elif n == 0 and (head := index.subject_prefix(text)) is not None:
            flush()
            subject, label, saw_qid = head[0], None, True
            run.append((a + head[1], b))
        elif _NA.fullmatch(norm_ws(text)):
            flush()
            items.append(_Item("na"))
        else:
            run.append((a, b))
    flush()
    return items, saw_qid


def _named_subject(text: str, index: GraphIndex, any_iri: bool) -> str | None:
    """The full id of a non-QID subject piece (see the module docstring), or None."""
    return index.subject_of(text, any_iri=any_iri)


def _by_label(items: list[_Item]) -> dict[str | None, list[_Item]]:
    """Subject-less facts grouped by the label written before them (``None``: no label)."""
    groups: dict[str | None, list[_Item]] = {}
    for it in items:
        groups.setdefault(it.label, []).append(it)
    return groups


def _resolve(items: list[_Item], index: GraphIndex, label: str | None) -> str | None:
    """The subject of facts written without an id: the centre the label names, or the label
    itself when it names no centre (an entity outside the graphs: cited, never credited, never
    moved to the centre that holds the fact); without a label, the unique centre that holds the
    most of the facts. ``None`` when no unique subject is found."""
    among = index.subjects() if label is None else index.subjects_called(label)
    if label is not None and len(among) < 2:
        return among[0] if among else label
    held: Counter[str] = Counter()
    for it in items:
        assert it.fact is not None
        held.update(index.holders(it.fact.relation, it.fact.value))
    scores = {qid: held[qid] for qid in among}
    top = max(scores.values(), default=0)
    if top == 0:
        return None
    winners = [qid for qid, score in scores.items() if score == top]
    return winners[0] if len(winners) == 1 else None


def _triple(item: _Item, index: GraphIndex, name: str | None) -> Triple:
    assert item.fact is not None and item.subject is not None
    found = index.fact(item.subject, item.fact.relation, item.fact.value)
    if found is not None:
        return found
    return Triple(
        subject=item.subject,
        relation=item.fact.relation,
        value=item.fact.value,
        subject_label=item.label or name or index.name(item.subject),
    )
