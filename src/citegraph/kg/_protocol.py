"""The :class:`KnowledgeGraph` protocol every backend implements.

Backends: the embedded pyoxigraph store (``citegraph.kg.OxigraphKG``, the default) and remote
SPARQL endpoints (``citegraph.kg.SparqlEndpointKG``). Methods are async so that a remote endpoint
never blocks a run; the embedded store answers immediately. A KG is closed with :meth:`aclose`
by whoever opened it.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

from citegraph.kg._types import Entity, Subgraph, Triple


@runtime_checkable
class KnowledgeGraph(Protocol):
    """What the retrieval, generation and scoring stages need from a knowledge graph."""

    async def find_entities(
        self, name: str, *, type: str | None = None, case_sensitive: bool = True, limit: int = 50
    ) -> list[Entity]:
        """Entities whose English label is ``name``.

        Args:
            name: The label to look up. It is always passed to the store as data, never spliced
                into query text.
            type: Keep only entities that are an instance of this type, given as a label
                (``"human"``) or an id (``"Q5"``).
            case_sensitive: ``False`` matches labels case-insensitively.
            limit: At most this many entities.
        """
        ...

    async def subgraph(self, entity_id: str) -> Subgraph:
        """The one-hop subgraph of an entity, with labels for relations and values.

        Raises:
            KGQueryError: the entity is unknown.
        """
        ...

    async def has_fact(self, triple: Triple) -> bool:
        """Whether the KG holds ``triple`` (compared by subject id, relation label, value label)."""
        ...

    async def facts(self, entity_id: str, relation: str | None = None) -> list[Triple]:
        """Facts whose subject is ``entity_id``, optionally only those of one relation label."""
        ...

    async def aclose(self) -> None:
        """Release what the KG holds open (a remote endpoint's HTTP connections and its answer
        cache); a no-op for an embedded store. Whoever opened the KG closes it, once it is done
        with it (:func:`~citegraph.kg.kg_with_identity`, ``async with open_kg(...)``)."""
        ...
