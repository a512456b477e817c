"""The citations a constrained answer may make: the retrieved triples, as the parser reads them.

:class:`CitationChoices` lists, per retrieved entity, the ``relation: value`` facts of its
subgraph, written as the prompt shows them (the entity by its display id, as
:func:`~citegraph.kalma.generate.flatten_kg` writes it). Every fact is checked once against the
paper parser (:func:`~citegraph.kalma.parse.parse_answer` over the same graphs): a fact whose
citation would not read back as exactly its own triple (a value with an unbalanced bracket or a
control character, say) is left out of the choices and listed in :attr:`CitationChoices.dropped`
with the reason, so the grammar never allows a citation the scorer would read differently.

Two more kinds of fact are left out the same way, before the parser sees them: a fact whose
text holds a lone surrogate (what JSON's ``\\ud800`` escape decodes to: no grammar engine,
tokenizer or server takes it), and a fact whose citation (``display id, relation: value``) is
longer than :data:`MAX_CITABLE_CHARS`. The grammar engine's work on a token inside a fact grows
with what is left of the fact, so citing a fact of *n* characters costs about *n* squared:
the cap keeps the work per token bounded, so decoding stays linear in the answer's length, and
a 100 kB literal is never offered (nor put in every prompt's grammar).
"""

from __future__ import annotations

from collections.abc import Collection, Sequence
from dataclasses import dataclass

from citegraph.io import encodable
from citegraph.kalma.parse import norm_ws, parse_answer
from citegraph.kg import Subgraph, Triple, with_short_ids

__all__ = ["MAX_CITABLE_CHARS", "CitableEntity", "CitationChoices"]

#: The longest citation of one fact (``display id, relation: value``, in characters) a
#: constrained answer may make; a longer fact is left out of the choices (see the module
#: docstring). BioKaLMA's longest is 165 characters.
MAX_CITABLE_CHARS = 1_000

_CONTROL = frozenset(chr(i) for i in range(32)) | {"\x7f"}
_SURROGATE = "a lone surrogate (text UTF-8 cannot encode) in the entity id, relation or value"
_TOO_LONG = f"its citation is longer than {MAX_CITABLE_CHARS:,} characters, the cap of a fact"


@dataclass(frozen=True, slots=True)
class CitableEntity:
    """One retrieved entity and the facts a citation may name for it."""

    display_id: str
    """The id a citation writes (a QID, or the short id of an IRI)."""
    full_id: str
    """The entity's id in the KG."""
    facts: tuple[str, ...]
    """``relation: value`` texts, in the subgraph's order, each once."""


class CitationChoices:
    """The citable facts of one question's retrieved graphs.

    Args:
        graphs: The subgraphs given to the model (one per retrieved entity).

    Attributes:
        entities: The entities with at least one citable fact, in the graphs' order.
        dropped: ``(triple, reason)`` for each fact left out (see the module docstring).
        graphs: The graphs, with short ids for IRI entities (as the prompt shows them).
    """

    def __init__(self, graphs: Sequence[Subgraph]) -> None:
        self.graphs = tuple(with_short_ids(graphs))
        self.dropped: list[tuple[Triple, str]] = []
        candidates: list[tuple[Subgraph, list[tuple[str, Triple]]]] = []
        for graph in self.graphs:
            facts: dict[str, Triple] = {}
            for t in graph.triples:
                text = f"{t.relation}: {t.value}"
                cited = f"{graph.center.display_id}, {text}"
                if len(cited) > MAX_CITABLE_CHARS:
                    self.dropped.append((t, _TOO_LONG))
                elif _CONTROL.intersection(text):
                    self.dropped.append((t, "a control character in the relation or value"))
                elif encodable(cited) != cited:
                    self.dropped.append((t, _SURROGATE))
                elif text not in facts:
                    facts[text] = t
            candidates.append((graph, list(facts.items())))
        readable = self._readable(candidates)
        self._facts: dict[tuple[str, str, str], tuple[str, str]] = {
            _key(t): (graph.center.id, fact)
            for graph, facts in candidates
            for fact, t in facts
            if (graph.center.id, fact) in readable
        }
        self.entities = tuple(
            CitableEntity(graph.center.display_id, graph.center.id, tuple(facts))
            for graph, facts in ((g, [f for f, _ in fs if (g.center.id, f) in readable])
                                 for g, fs in candidates)
            if facts
        )  # fmt: skip

    def _readable(
        self, candidates: list[tuple[Subgraph, list[tuple[str, Triple]]]]
    ) -> set[tuple[str, str]]:
        """``(entity id, fact)`` pairs whose one-fact citation the parser reads as their own
        triple; the others go to :attr:`dropped`. One parse of one answer holding them all."""
        order = [(g.center, fact, t) for g, facts in candidates for fact, t in facts]
        if not order:
            return set()
        text = " ".join(f"Fact {n} [{c.display_id}, {f}]." for n, (c, f, _) in enumerate(order))
        parsed = parse_answer(text, self.graphs)
        read = [[c.triple for c in s.citations] for s in parsed.sentences]
        if len(read) != len(order):  # a fact broke the sentence split: read each apart
            read = [_read_alone(c.display_id, f, self.graphs) for c, f, _ in order]
        ok: set[tuple[str, str]] = set()
        for got, (centre, fact, triple) in zip(read, order, strict=True):
            if len(got) == 1 and got[0] is not None and _same(got[0], triple):
                ok.add((centre.id, fact))
            else:
                self.dropped.append((triple, "the parser does not read its citation back"))
        return ok

    @property
    def size(self) -> int:
        """How many facts may be cited."""
        return sum(len(e.facts) for e in self.entities)

    def left_out_why(self) -> dict[str, int]:
        """How many facts were left out for each reason (:attr:`dropped`), in order of first
        appearance."""
        out: dict[str, int] = {}
        for _, reason in self.dropped:
            out[reason] = out.get(reason, 0) + 1
        return out

    def citation(self, entity: CitableEntity, facts: Sequence[str]) -> str:
        """The bracket citing ``facts`` of ``entity``: ``[Q1, relation: value, ...]``."""
        return "[" + ", ".join([entity.display_id, *facts]) + "]"

    def fact_of(self, triple: Triple) -> tuple[str, str] | None:
        """``(entity id, fact)`` of the citable fact ``triple`` is (compared up to whitespace,
        as the parser compares), or None when it is none of the choices."""
        return self._facts.get(_key(triple))

    def remaining(self, used: Collection[tuple[str, str]]) -> tuple[CitableEntity, ...]:
        """The entities without the ``used`` ``(entity id, fact)`` pairs, in order; an entity
        left with no fact is left out."""
        left = (
            CitableEntity(e.display_id, e.full_id, tuple(f for f in e.facts
                                                         if (e.full_id, f) not in used))
            for e in self.entities
        )  # fmt: skip
        return tuple(e for e in left if e.facts)

    def bracket(self, cited: Sequence[tuple[str, str]]) -> str:
        """One bracket citing the ``(entity id, fact)`` pairs, in order, consecutive facts of
        one entity after one id: ``[Q1, a: b, c: d, Q2, e: f]``."""
        display = {e.full_id: e.display_id for e in self.entities}
        parts: list[str] = []
        last = None
        for entity_id, fact in cited:
            if entity_id != last:
                parts.append(display[entity_id])
                last = entity_id
            parts.append(fact)
        return "[" + ", ".join(parts) + "]"


def _read_alone(display: str, fact: str, graphs: Sequence[Subgraph]) -> list[Triple | None]:
    parsed = parse_answer(f"Fact [{display}, {fact}].", graphs)
    return [c.triple for c in parsed.citations]


def _key(t: Triple) -> tuple[str, str, str]:
    return (t.subject, norm_ws(t.relation), norm_ws(t.value))


def _same(a: Triple, b: Triple) -> bool:
    return (a.subject, norm_ws(a.relation), norm_ws(a.value)) == (
        b.subject,
        norm_ws(b.relation),
        norm_ws(b.value),
    )
