"""An id-level view of an embedded KG for building CAQA samples: grounding, neighbours, names,
types.

KaLMA works with labels; CAQA works with ids, because a logical query is grounded by ids and the
perturbations (§4.2.2) must know which entity is which. :class:`CaqaKG` wraps an
:class:`~citegraph.kg.OxigraphKG` (CoDEx-S, the PathQuestion and GrailQA KBs, any RDF files) and
answers with ids; labels are looked up separately, once per id.

Grounding (:meth:`CaqaKG.ground`) turns a :class:`LogicalQuery` into SPARQL
(:meth:`LogicalQuery.to_sparql`, ids bound as IRIs, never spliced as text) and runs it on the
store's fact graph. The answer-type constraint of a GrailQA class node is checked in Python
against the entity's types, which may live in the metadata graph.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from pydantic import BaseModel, ConfigDict

from citegraph.caqa._types import Fact
from citegraph.caqa.queries._query import LogicalQuery, QueryEdge, is_variable
from citegraph.errors import KGQueryError
from citegraph.kg import IdGraph, OxigraphKG

#: Solutions read per grounding at most (a query with more is marked ``truncated``).
DEFAULT_MAX_SOLUTIONS = 2000


class Grounding(BaseModel):
    """The result of grounding a query: its answers and the facts that support them."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    answers: tuple[str, ...]
    """Answer entity ids, in the order SPARQL returned them first."""
    bindings: tuple[dict[str, str], ...]
    """One dict per solution: variable (with ``?``) -> entity id."""
    facts: tuple[Fact, ...]
    """The KG facts of every solution, deduplicated, in query-pattern order."""
    truncated: bool = False

    def facts_for(
        self,
        query: LogicalQuery,
        answers: Iterable[str] | None = None,
        edges: Sequence[QueryEdge] | None = None,
    ) -> tuple[Fact, ...]:
        """The KG facts of the solutions whose answer is in ``answers`` (default: every
        solution): what the query's patterns, or only ``edges`` among them, become under each
        solution that binds all their variables; without repeats, in solution then pattern
        order.

        Args:
            query: The grounded query.
            answers: Keep the solutions of these answers only.
            edges: Some of the query's patterns (an extension's new ones, one branch's own).
        """
        wanted = None if answers is None else set(answers)
        known = self._fact_set
        out: dict[Fact, None] = {}
        for binding in self.bindings:
            if wanted is not None and binding.get(query.answer) not in wanted:
                continue
            for edge in query.edges if edges is None else edges:
                if edge.bound_by(binding):
                    fact = edge.bind(binding)
                    if fact in known:
                        out.setdefault(fact, None)
        return tuple(out)

    @property
    def _fact_set(self) -> frozenset[Fact]:
        return frozenset(self.facts)


class CaqaKG:
    """Id-level access to an embedded store (see the module docstring): the store's
    :class:`~citegraph.kg.IdGraph` with labels and types cached, facts as :class:`Fact`, and
    grounding.

    Args:
        kg: The store.
        name: A short name recorded in samples (``codex-s``, ``pathquestion-2h``...).
    """

    entity_iri = staticmethod(IdGraph.entity_iri)
    relation_iri = staticmethod(IdGraph.relation_iri)
    relation_id = staticmethod(IdGraph.relation_id)

    def __init__(self, kg: OxigraphKG, *, name: str = "kg") -> None:
        self.kg = kg
        self.name = name
        self.ids = kg.ids
        self.label = lru_cache(maxsize=200_000)(self._label)  # type: ignore[method-assign]
        self.types = lru_cache(maxsize=200_000)(self.ids.types)  # type: ignore[method-assign]
        self._type_members: dict[str, tuple[str, ...]] = {}

    def __repr__(self) -> str:
        return f"CaqaKG({self.name!r}, {len(self.kg)} facts)"

    # ------------------------------------------------------------------ labels and types
    def _label(self, some_id: str) -> str:
        """The English label of an entity or relation id (the id itself when it has none)."""
        return self.ids.label(some_id) or some_id

    def label(self, some_id: str) -> str:  # replaced by a cached twin in __init__
        """The English label of an entity or relation id (the id itself when it has none)."""
        return self._label(some_id)

    def labels(self, ids: Iterable[str]) -> dict[str, str]:
        """``{id: label}`` for entity and relation ids."""
        return {i: self.label(i) for i in dict.fromkeys(ids)}

    def types(self, entity_id: str) -> tuple[str, ...]:  # replaced by a cached twin
        """Ids of the entity's "instance of" types (facts or metadata), sorted."""
        return self.ids.types(entity_id)

    def members(self, type_id: str) -> tuple[str, ...]:
        """Entities that are an instance of ``type_id``, sorted (cached per type)."""
        if type_id not in self._type_members:
            self._type_members[type_id] = self.ids.members(type_id)
        return self._type_members[type_id]

    def same_name(self, entity_id: str) -> list[str]:
        """Other entities whose label equals this entity's (case-insensitively), sorted."""
        return self.ids.namesakes(entity_id)

    # ------------------------------------------------------------------ facts
    def out_facts(self, entity_id: str) -> list[Fact]:
        """Facts whose subject is the entity and whose object is an entity."""
        return [Fact.of(*edge) for edge in self.ids.edges(entity_id)]

    def in_facts(self, entity_id: str) -> list[Fact]:
        """Facts whose object is the entity."""
        return [Fact.of(*edge) for edge in self.ids.edges(entity_id, outgoing=False)]

    def has_relation(self, entity_id: str, relation: str, *, outgoing: bool = True) -> bool:
        """Whether the entity has a fact with ``relation`` (as subject, or object if not
        ``outgoing``); one index lookup."""
        return self.ids.has_relation(entity_id, relation, outgoing=outgoing)

    def facts_of(self, entity_id: str) -> list[Fact]:
        """Every fact that mentions the entity (out-going first)."""
        return self.out_facts(entity_id) + self.in_facts(entity_id)

    def has(self, fact: Fact) -> bool:
        """Whether the KG's fact graph holds ``fact``."""
        return self.ids.has_edge(fact.subject, fact.relation, fact.object)

    def entity_ids(self) -> list[str]:
        """Entities with at least one fact (as subject), in the store's id order."""
        return self.kg.entity_ids_sync()

    # ------------------------------------------------------------------ grounding
    def ground(
        self, query: LogicalQuery, *, max_solutions: int = DEFAULT_MAX_SOLUTIONS
    ) -> Grounding:
        """Run ``query`` on the fact graph and return its answers and supporting facts.

        Raises:
            KGQueryError: an entity id cannot be an IRI, or the store rejects the query.
        """
        text = query.to_sparql(self.entity_iri, self.relation_iri, limit=max_solutions + 1)
        try:
            solutions = self.ids.select(text, query.variables)
        except KGQueryError as exc:
            raise KGQueryError(f"grounding failed for {query.describe()}: {exc}") from exc
        truncated = len(solutions) > max_solutions
        bindings: list[dict[str, str]] = []
        for binding in solutions[:max_solutions]:
            if binding is None or binding.get(query.answer) is None:
                continue  # a literal cannot be cited as an entity
            if query.answer_types and not set(query.answer_types) & set(
                self.types(binding[query.answer])
            ):
                continue
            bindings.append(binding)
        answers = tuple(dict.fromkeys(b[query.answer] for b in bindings))
        facts: dict[Fact, None] = {}
        for binding in bindings:
            for fact in query.facts(binding):
                if query.operator == "and" or (
                    not any(is_variable(t) for t in fact.as_tuple()) and self.has(fact)
                ):
                    facts.setdefault(fact, None)
        return Grounding(
            answers=answers, bindings=tuple(bindings), facts=tuple(facts), truncated=truncated
        )
