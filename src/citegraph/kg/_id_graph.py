"""Id-level reads of the embedded store: entities and relations by id, facts as id triples.

:class:`~citegraph.kg.OxigraphKG` answers the :class:`~citegraph.kg.KnowledgeGraph` protocol
with labels (:class:`~citegraph.kg.Triple`); CAQA grounds logical queries by ids and must know
which entity is which. :class:`IdGraph` (``OxigraphKG.ids``) answers with plain strings, so its
users never see an RDF term:

* an **entity id** names an IRI as the store's layout mints it: ``Q5`` (Wikidata), an IRI as it
  is, or any other string (``ludwig_ii_of_bavaria``) under citegraph's entity namespace. Blank
  nodes and literals are not entities here.
* a **relation id** is ``P19`` for a Wikidata direct property, an IRI as it is, or else the name
  the relation was minted from (PathQuestion ``place_of_birth``, GrailQA
  ``people.person.place_of_birth``).
* an **edge** is a fact between two entities, ``(subject id, relation id, object id)``; facts
  whose value is a literal are not edges.

Every read is an indexed ``quads_for_pattern`` (or, for :meth:`IdGraph.select`, a SPARQL query
whose ids the caller has bound as IRIs), and an id that cannot be a term is simply unknown.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from itertools import islice
from urllib.parse import quote, unquote

from pyoxigraph import Literal, NamedNode, QuerySolutions, Store

from citegraph.errors import KGQueryError
from citegraph.kg import _rdf as rdf

_PID = re.compile(r"P[1-9][0-9]*")


class IdGraph:
    """Id-level access to a citegraph-layout pyoxigraph store (see the module docstring).

    Args:
        store: The store (facts in the default graph, labels and types in the metadata graph).
    """

    def __init__(self, store: Store) -> None:
        self._store = store
        self._relation_ids: dict[NamedNode, str] = {}

    # ------------------------------------------------------------------ ids and IRIs
    @staticmethod
    def entity_iri(entity_id: str) -> str:
        """The IRI of an entity id (Wikidata ids get Wikidata's IRIs).

        Raises:
            KGQueryError: ``entity_id`` cannot name an IRI.
        """
        node = rdf.entity_node(entity_id)
        if not isinstance(node, NamedNode):
            raise KGQueryError(f"{entity_id!r} cannot be an entity id")
        return node.value

    @staticmethod
    def entity_id(iri: str) -> str:
        """The id of an entity IRI: the inverse of :meth:`entity_iri`."""
        return rdf.entity_id(NamedNode(iri))

    @staticmethod
    def relation_iri(relation_id: str) -> str:
        """The IRI of a relation id: ``wdt:P..`` for a PID, an IRI as it is, else minted."""
        node = rdf.relation_node(relation_id, relation_id)
        if node is not None:
            return node.value
        return rdf.CG_REL + quote(relation_id, safe="")

    @staticmethod
    def relation_id(iri: str) -> str:
        """The id of a relation IRI: the inverse of :meth:`relation_iri`."""
        if iri.startswith(rdf.CG_REL):
            return unquote(iri[len(rdf.CG_REL) :])
        if iri.startswith(rdf.WDT) and _PID.fullmatch(iri[len(rdf.WDT) :]):
            return iri[len(rdf.WDT) :]
        return iri

    def _entity(self, entity_id: str) -> NamedNode | None:
        node = rdf.entity_node(entity_id)
        return node if isinstance(node, NamedNode) else None

    def _relation(self, relation_id: str) -> NamedNode:
        return NamedNode(self.relation_iri(relation_id))

    def _rid(self, node: NamedNode) -> str:
        found = self._relation_ids.get(node)
        if found is None:
            found = self._relation_ids[node] = self.relation_id(node.value)
        return found

    # ------------------------------------------------------------------ labels and types
    def label(self, some_id: str) -> str | None:
        """The English (or untagged) label of an entity or relation id; None without one."""
        for node in (self._entity(some_id), self._relation(some_id)):
            if node is None:
                continue
            for quad in self._store.quads_for_pattern(node, rdf.RDFS_LABEL, None, None):
                if isinstance(quad.object, Literal) and rdf.is_label_literal(quad.object):
                    return quad.object.value
        return None

    def types(self, entity_id: str) -> tuple[str, ...]:
        """Ids of the entity's "instance of" (``wdt:P31``) types, from facts or metadata, sorted."""
        node = self._entity(entity_id)
        if node is None:
            return ()
        found = {
            rdf.entity_id(q.object)
            for q in self._store.quads_for_pattern(node, rdf.INSTANCE_OF, None, None)
            if isinstance(q.object, NamedNode)
        }
        return tuple(sorted(found))

    def members(self, type_id: str) -> tuple[str, ...]:
        """Entities that are an instance of ``type_id``, sorted."""
        node = self._entity(type_id)
        if node is None:
            return ()
        quads = self._store.quads_for_pattern(None, rdf.INSTANCE_OF, node, None)
        found = {rdf.entity_id(q.subject) for q in quads if isinstance(q.subject, NamedNode)}
        return tuple(sorted(found))

    def namesakes(self, entity_id: str) -> list[str]:
        """Other entities whose label equals this entity's case-insensitively, sorted."""
        node = self._entity(entity_id)
        if node is None:
            return []
        out: set[str] = set()
        for quad in self._store.quads_for_pattern(node, rdf.FOLDED_LABEL, None, None):
            for other in self._store.quads_for_pattern(None, rdf.FOLDED_LABEL, quad.object, None):
                if isinstance(other.subject, NamedNode) and other.subject != node:
                    out.add(rdf.entity_id(other.subject))
        return sorted(out)

    # ------------------------------------------------------------------ edges
    def edges(
        self,
        entity_id: str,
        *,
        outgoing: bool = True,
        relation: str | None = None,
        scan: int | None = None,
    ) -> Iterator[tuple[str, str, str]]:
        """The entity's edges one way as ``(subject id, relation id, object id)``, lazily, in
        store order: the facts it is the subject of when ``outgoing``, else those whose value it
        is; optionally of one relation only, and among the first ``scan`` facts read (literal
        values count) to bound the work on hub entities."""
        node = self._entity(entity_id)
        if node is None:
            return
        pred = None if relation is None else self._relation(relation)
        quads = self._store.quads_for_pattern(
            node if outgoing else None, pred, None if outgoing else node, rdf.FACT_GRAPH
        )
        own = rdf.entity_id(node)
        for quad in quads if scan is None else islice(quads, scan):
            other = quad.object if outgoing else quad.subject
            if isinstance(other, NamedNode):
                other_id = rdf.entity_id(other)
                relation_id = self._rid(quad.predicate)
                yield (own, relation_id, other_id) if outgoing else (other_id, relation_id, own)

    def all_edges(self) -> Iterator[tuple[str, str, str]]:
        """Every edge of the fact graph as ``(subject id, relation id, object id)``."""
        for quad in self._store.quads_for_pattern(None, None, None, rdf.FACT_GRAPH):
            s, o = quad.subject, quad.object
            if isinstance(s, NamedNode) and isinstance(o, NamedNode):
                yield rdf.entity_id(s), self._rid(quad.predicate), rdf.entity_id(o)

    def relations_between(self, subject: str, obj: str) -> list[str]:
        """Relations of the facts ``(subject, r, obj)``, in store order."""
        s, o = self._entity(subject), self._entity(obj)
        if s is None or o is None:
            return []
        return [
            self._rid(q.predicate)
            for q in self._store.quads_for_pattern(s, None, o, rdf.FACT_GRAPH)
        ]

    def has_edge(self, subject: str, relation: str, obj: str) -> bool:
        """Whether the fact graph holds ``(subject, relation, obj)``."""
        s, o = self._entity(subject), self._entity(obj)
        if s is None or o is None:
            return False
        quads = self._store.quads_for_pattern(s, self._relation(relation), o, rdf.FACT_GRAPH)
        return next(iter(quads), None) is not None

    def has_relation(self, entity_id: str, relation: str, *, outgoing: bool = True) -> bool:
        """Whether the entity has a fact of ``relation`` (as subject, or as the value if not
        ``outgoing``), whatever the other end is; one index lookup."""
        node = self._entity(entity_id)
        if node is None:
            return False
        pred = self._relation(relation)
        if outgoing:
            quads = self._store.quads_for_pattern(node, pred, None, rdf.FACT_GRAPH)
        else:
            quads = self._store.quads_for_pattern(None, pred, node, rdf.FACT_GRAPH)
        return next(iter(quads), None) is not None

    def relation_ends(self, relation: str, *, objects: bool) -> set[str]:
        """The entities at one end (values if ``objects``, else subjects) of the facts of
        ``relation``."""
        found: set[str] = set()
        for quad in self._store.quads_for_pattern(
            None, self._relation(relation), None, rdf.FACT_GRAPH
        ):
            term = quad.object if objects else quad.subject
            if isinstance(term, NamedNode):
                found.add(rdf.entity_id(term))
        return found

    # ------------------------------------------------------------------ SPARQL
    def select(self, sparql: str, variables: Sequence[str]) -> list[dict[str, str] | None]:
        """Run a SELECT query on the store; one item per solution, in order.

        Args:
            sparql: The query text. Bind ids as IRIs (:meth:`entity_iri`, :meth:`relation_iri`);
                never splice user text into it.
            variables: The variables to read (``?a`` or ``a``); they key the result.

        Returns:
            Per solution ``{variable: entity id}`` over its bound variables, or None when it
            binds one to a literal or blank node (not an entity).

        Raises:
            KGQueryError: the store rejects the query.
        """
        try:
            solutions = self._store.query(sparql)
            rows = list(solutions) if isinstance(solutions, QuerySolutions) else None
        except (SyntaxError, OSError, ValueError) as exc:
            raise KGQueryError(str(exc)) from exc
        if rows is None:
            raise KGQueryError("not a SELECT query")
        out: list[dict[str, str] | None] = []
        for row in rows:
            binding: dict[str, str] = {}
            for var in variables:
                term = row[var.removeprefix("?")]
                if term is None:
                    continue
                if not isinstance(term, NamedNode):
                    break
                binding[var] = rdf.entity_id(term)
            else:
                out.append(binding)
                continue
            out.append(None)
        return out
