"""Citation validity of one answer: is every citation readable, in the KG, in what was retrieved?

Measured on every answer, whatever the model or the decoding (free or grammar-constrained), in
paper and reference mode alike (each mode's parser reads the citations):

- **brackets**: the bracket spans of the answer, closed and unclosed
  (:func:`~citegraph.kalma.parse._brackets.find_brackets`);
- **malformed brackets**: brackets from which the parser read no citation (no KG triple and no
  ``[NA]``): empty, unclosed, not a citation (``[1]``), a QID without ``relation: value``, an
  unresolved subject... A bracket with an issue that still gave a citation is not malformed;
- **no-entity brackets**: over your own KG, brackets that write no subject when retrieval found
  no entity and no citation of the answer names one (:data:`NO_ENTITY`): no graph could settle
  their subject, which is retrieval's miss, not the answer's form, so they are counted apart
  from the malformed ones;
- **KG citations** (triples, ``[NA]`` excluded) and **[NA] citations**;
- **not in the KG**: KG citations whose subject id is no entity of the run's KG (an entity has
  facts, as :func:`._resolve.entity_matches` decides); unmeasured, with the reason, when no KG
  is there to ask (:class:`EntityLookup`);
- **outside the retrieved set**: KG citations whose ``(subject, relation, value)`` is no triple
  of the question's retrieved graphs (compared up to whitespace, as the parser's
  :class:`~citegraph.kalma.parse._graphs.GraphIndex` compares);
- **repeated citations**: KG citations of a triple the same answer cited before (each later
  occurrence counts once: ``[Q1, a: b] ... [Q1, a: b] ... [Q1, a: b]`` is 2 repeated of 3),
  triples compared up to whitespace; **repeated in one bracket**: those whose earlier citation
  is in the same bracket (``[Q1, a: b, a: b]``). The paper's per-citation metrics count every
  citation, repeats included, as the paper defines them; these counts say how many there are;
- **sentences**, **citations** (KG and ``[NA]``) and **sentences cited** (with at least one).

Each answer's record holds these counts under ``citation_validity``; :mod:`._validity_report`
sums them into ``metrics.json``.
"""

from __future__ import annotations

import asyncio
from bisect import bisect_right
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.errors import CitegraphError, KGQueryError
from citegraph.kalma.parse import BracketSpan, GraphIndex, ParsedAnswer, find_brackets, norm_ws
from citegraph.kg import KnowledgeGraph, Subgraph

#: Why ``not_in_kg`` is unmeasured when scoring was given no KG to look ids up in.
NO_KG = "no KG to look the cited ids up in"
#: Why ``not_in_kg`` is unmeasured over a ``kalma build`` dataset directory.
NO_KG_DATASET_DIR = (
    "no KG to look the cited ids up in: a dataset directory holds its questions' graphs, not a "
    "KG (score with --kg to check the cited ids)"
)


#: Why a bracket's subject is unsettled over your own KG when retrieval found no entity and no
#: citation names one (the parser's issue says it instead of "no graphs were given").
NO_ENTITY = "retrieval found no entity, and no citation names one"


class MalformedBracket(BaseModel):
    """A bracket that gave no citation."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    bracket: str = Field(description="The bracket, verbatim.")
    start: int = Field(description="Offset of its '[' in the answer.")
    reason: str = Field(description="Why the parser read nothing from it.")


class AnswerValidity(BaseModel):
    """The citation-validity counts of one answer (the module docstring defines each)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    brackets: int = Field(description="Bracket spans, closed and unclosed.")
    malformed_brackets: int = Field(description="Brackets that gave no citation.")
    malformed: tuple[MalformedBracket, ...] = Field(
        default=(), description="Each malformed bracket, with why it gave nothing."
    )
    no_entity_brackets: int = Field(
        default=0, description="Brackets left unjudged: retrieval found no entity (own KG)."
    )
    no_entity: tuple[MalformedBracket, ...] = Field(
        default=(), description="Each of those brackets, with the parser's reason."
    )
    kg_citations: int = Field(description="Triple citations ([NA] excluded).")
    na_citations: int = Field(description="[NA] citations.")
    outside_retrieved: int = Field(description="KG citations not in the retrieved graphs.")
    outside: tuple[tuple[str, str, str], ...] = Field(
        default=(), description="Those citations' (subject, relation, value), in order."
    )
    not_in_kg: int | None = Field(
        description="KG citations whose subject is no entity of the KG; None when unmeasured."
    )
    not_in_kg_ids: tuple[str, ...] = Field(
        default=(), description="The distinct subject ids the KG does not have."
    )
    repeated_citations: int = Field(
        description="KG citations of a triple the answer cited before (each later occurrence)."
    )
    repeated_in_bracket: int = Field(
        description="Of those, citations of a triple cited before in the same bracket."
    )
    repeated: tuple[tuple[str, str, str], ...] = Field(
        default=(), description="The triples cited more than once, each once, in order."
    )
    sentences: int = Field(description="Sentences with text.")
    citations: int = Field(description="KG and [NA] citations.")
    sentences_cited: int = Field(description="Sentences with at least one citation.")
    unmeasured: dict[str, str] = Field(
        default_factory=dict, description="Count -> why it is unmeasured ('not_in_kg')."
    )

    @property
    def citations_per_sentence(self) -> float | None:
        """Citations / sentences; None without a sentence."""
        return self.citations / self.sentences if self.sentences else None


class EntityLookup:
    """Which entity ids a KG holds: a batch's distinct ids looked up once each, and the answers
    remembered for the rest of the run (a failed lookup is asked again with the next batch).

    Made with the KG itself, with an ``opener`` that opens it on first use (so a run whose
    answers cite nothing never opens it), or :meth:`unavailable` with the reason there is none.
    A KG that fails to open, or a lookup that fails (an endpoint down), leaves ``not_in_kg``
    unmeasured with the error as the reason; it never stops scoring.
    """

    def __init__(
        self,
        kg: KnowledgeGraph | None = None,
        *,
        opener: Callable[[], KnowledgeGraph] | None = None,
        reason: str | None = None,
    ) -> None:
        self._kg = kg
        self._opener = opener
        self._reason = None if kg is not None or opener is not None else reason or NO_KG
        self._known: dict[str, bool | str] = {}
        self._lock = asyncio.Lock()

    @classmethod
    def unavailable(cls, reason: str) -> EntityLookup:
        """A lookup that measures nothing, for ``reason``."""
        return cls(reason=reason)

    @property
    def reason(self) -> str | None:
        """Why ids cannot be looked up (no KG, or it failed to open); None when they can."""
        return self._reason

    def __getstate__(self) -> dict[str, Any]:
        """The lookup without its opened KG, lock and answers (a Ray worker opens its own)."""
        state = self.__dict__ | {"_known": {}, "_lock": None}
        if self._opener is not None:
            state["_kg"] = None
        return state

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__dict__ |= state | {"_lock": asyncio.Lock()}

    async def known(self, ids: Iterable[str]) -> dict[str, bool | str]:
        """For each id: whether the KG has it as an entity, or why it could not be looked up."""
        wanted = list(dict.fromkeys(ids))
        if not wanted:  # nothing cited: the KG is not opened
            return {}
        async with self._lock:
            kg = self._open()
            new = [i for i in wanted if i not in self._known]
            if kg is None:
                return dict.fromkeys(wanted, self._reason or NO_KG)
            failed: dict[str, bool | str] = {}
            for entity_id in new:  # one at a time: an embedded store answers at once (no
                # suspension, so a run's answers finish in the order they would without it),
                # and a remote endpoint's client paces its own requests
                found = await _is_entity(kg, entity_id)
                if isinstance(found, bool):
                    self._known[entity_id] = found
                else:  # a failed lookup is not remembered: the next batch asks again
                    failed[entity_id] = found
        return {i: failed[i] if i in failed else self._known[i] for i in wanted}

    def _open(self) -> KnowledgeGraph | None:
        if self._kg is None and self._opener is not None and self._reason is None:
            try:
                self._kg = self._opener()
            except (CitegraphError, OSError) as exc:
                self._reason = f"the KG could not be opened: {_short(exc)}"
        return self._kg


async def _is_entity(kg: KnowledgeGraph, entity_id: str) -> bool | str:
    """Whether ``kg`` has ``entity_id`` as an entity (it has facts), or why the lookup failed."""
    try:
        graph = await kg.subgraph(entity_id)
    except (KGQueryError, ValueError):
        return False
    except CitegraphError as exc:
        return f"KG lookup of {entity_id!r} failed: {_short(exc)}"
    return bool(graph.triples)


def _short(exc: BaseException) -> str:
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text if len(text) <= 200 else text[:197] + "..."


def answer_validity(
    answer: str,
    parsed: ParsedAnswer,
    graphs: Sequence[Subgraph],
    known: dict[str, bool | str],
) -> AnswerValidity:
    """The citation validity of one answer.

    Args:
        answer: The answer text the citations were read from.
        parsed: ``answer`` as the run's parser read it.
        graphs: The question's retrieved graphs (what the model was given).
        known: Each cited subject id -> whether the KG has it, or why it could not be looked up
            (:meth:`EntityLookup.known`).
    """
    spans = find_brackets(answer)
    read = _spans_read(spans, [c.start for c in parsed.citations])
    reasons: dict[int, str] = {}
    for issue in parsed.issues:
        reasons.setdefault(issue.start, issue.reason)
    malformed = tuple(
        MalformedBracket(
            bracket=answer[s.start : s.end],
            start=s.start,
            reason=reasons.get(s.start, "no citation read from it"),
        )
        for s, ok in zip(spans, read, strict=True)
        if not ok
    )
    no_entity = tuple(m for m in malformed if NO_ENTITY in m.reason)
    malformed = tuple(m for m in malformed if NO_ENTITY not in m.reason)
    index = GraphIndex(graphs)
    cited = [c.triple for c in parsed.kg_citations if c.triple is not None]
    repeats = _repeats(parsed)
    outside = tuple(t.key for t in cited if not index.has(t.subject, t.relation, t.value))
    failed = [known.get(t.subject) for t in cited if not isinstance(known.get(t.subject), bool)]
    unmeasured: dict[str, str] = {}
    not_in_kg: int | None = None
    missing: tuple[str, ...] = ()
    if failed:
        unmeasured["not_in_kg"] = str(failed[0] or NO_KG)
    else:
        not_in_kg = sum(1 for t in cited if known[t.subject] is False)
        missing = tuple(dict.fromkeys(t.subject for t in cited if known[t.subject] is False))
    sentences = [s for s in parsed.sentences if s.text.strip()]
    return AnswerValidity(
        brackets=len(spans),
        malformed_brackets=len(malformed),
        malformed=malformed,
        no_entity_brackets=len(no_entity),
        no_entity=no_entity,
        kg_citations=len(cited),
        na_citations=sum(1 for c in parsed.citations if c.kind == "na"),
        outside_retrieved=len(outside),
        outside=outside,
        not_in_kg=not_in_kg,
        not_in_kg_ids=missing,
        repeated_citations=repeats.count,
        repeated_in_bracket=repeats.in_bracket,
        repeated=tuple(repeats.triples),
        sentences=len(sentences),
        citations=len(parsed.citations),
        sentences_cited=sum(1 for s in sentences if s.citations),
        unmeasured=unmeasured,
    )


@dataclass
class _Repeats:
    count: int = 0
    in_bracket: int = 0
    triples: dict[tuple[str, str, str], None] = field(default_factory=dict)


def _repeats(parsed: ParsedAnswer) -> _Repeats:
    """The answer's KG citations of a triple cited before in it, and of those the ones cited
    before in the same bracket (the bracket's ``'['`` offset, :attr:`Citation.start`)."""
    out = _Repeats()
    seen: set[tuple[str, str, str]] = set()
    in_bracket: set[tuple[int, tuple[str, str, str]]] = set()
    for c in parsed.kg_citations:
        if c.triple is None:
            continue
        key = (c.triple.subject, norm_ws(c.triple.relation), norm_ws(c.triple.value))
        if key in seen:
            out.count += 1
            out.in_bracket += (c.start, key) in in_bracket
            out.triples[c.triple.key] = None
        seen.add(key)
        in_bracket.add((c.start, key))
    return out


def _spans_read(spans: Sequence[BracketSpan], starts: Sequence[int]) -> list[bool]:
    """Per span, whether a citation came from it: a citation belongs to the last span that
    starts at or before its ``'['`` and has not ended there (an unclosed span may hold closed
    ones; the reference parser's non-greedy brackets start where a span starts)."""
    read = [False] * len(spans)
    opens = [span.start for span in spans]
    for start in starts:
        k = bisect_right(opens, start) - 1
        while k >= 0 and start >= spans[k].end:
            k -= 1
        if k >= 0:
            read[k] = True
    return read


def cited_subjects(parsed: ParsedAnswer) -> list[str]:
    """The subject ids of an answer's KG citations, in order, without repeats."""
    return list(
        dict.fromkeys(c.triple.subject for c in parsed.kg_citations if c.triple is not None)
    )
