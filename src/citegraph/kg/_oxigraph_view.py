"""The read side of :class:`~citegraph.kg.OxigraphKG`: labels, types and triples of RDF terms.

:class:`StoreView` wraps a pyoxigraph store laid out as :mod:`citegraph.kg._rdf` describes and
keeps the property registry (property IRI <-> label) in memory, so that a relation label becomes
its predicate IRIs without a query. Every lookup is an indexed ``quads_for_pattern``.
"""

from __future__ import annotations

from collections.abc import Iterable

from pyoxigraph import Literal, NamedNode, Quad, Store
from pyoxigraph import Triple as QuotedTriple

from citegraph.kg import _rdf as rdf
from citegraph.kg._rdf import FACT_GRAPH, META_GRAPH, Node, Term
from citegraph.kg._types import Entity, Triple


class StoreView:
    """Term-level reads over a citegraph-layout pyoxigraph store."""

    def __init__(self, store: Store) -> None:
        self._store = store
        #: The label predicates, in order of preference (:mod:`citegraph.kg._rdf`).
        self._label_preds = rdf.stored_label_predicates(store)
        self._rel_label: dict[NamedNode, str] = {}
        self._rels_by_label: dict[str, list[NamedNode]] = {}
        self._type_preds: list[NamedNode] | None = None
        for quad in store.quads_for_pattern(None, rdf.RDF_TYPE, rdf.RDF_PROPERTY, META_GRAPH):
            if isinstance(quad.subject, NamedNode):
                self._register(quad.subject, None)

    def _register(self, node: NamedNode, label: str | None) -> None:
        if node in self._rel_label:
            return
        label = label or self._label_of(node) or rdf.local_name(node)
        self._rel_label[node] = label
        self._rels_by_label.setdefault(label, []).append(node)
        self._type_preds = None

    def _label_of(self, node: Node) -> str | None:
        """The display name: the English, else untagged, label of the first label predicate
        that has one; else the first label in another language; ``None`` without a label."""
        other: str | None = None
        for pred in self._label_preds:
            plain: str | None = None
            for quad in self._store.quads_for_pattern(node, pred, None, None):
                term = quad.object
                if not isinstance(term, Literal):
                    continue
                if term.language == "en":
                    return term.value
                if term.language is None:
                    plain = plain or term.value
                else:
                    other = other or term.value
            if plain is not None:
                return plain
        return other

    def _value_text(self, term: Term) -> str:
        if isinstance(term, Literal):
            return term.value
        if isinstance(term, QuotedTriple):
            return str(term)
        return self._label_of(term) or rdf.entity_id(term)

    def _is_known(self, node: Node) -> bool:
        return next(iter(self._store.quads_for_pattern(node, None, None, None)), None) is not None

    def _type_predicates(self) -> list[NamedNode]:
        """``wdt:P31`` and every property labelled 'instance of' (BioKaLMA's minted one)."""
        if self._type_preds is None:
            preds = self._rels_by_label.get(rdf.INSTANCE_OF_LABEL, [])
            self._type_preds = preds if rdf.INSTANCE_OF in preds else [rdf.INSTANCE_OF, *preds]
        return self._type_preds

    def _types(self, node: Node) -> list[tuple[str, str | None]]:
        """``(label, id or None)`` of each 'instance of' value, from facts and metadata."""
        out: list[tuple[str, str | None]] = []
        for pred in self._type_predicates():
            for quad in self._store.quads_for_pattern(node, pred, None, None):
                term = quad.object
                type_id = None if isinstance(term, Literal) else rdf.entity_id(term)
                item = (self._value_text(term), type_id)
                if item not in out:
                    out.append(item)
        return out

    def _entity(self, node: Node, types: list[tuple[str, str | None]] | None = None) -> Entity:
        if types is None:
            types = self._types(node)
        description = None
        for quad in self._store.quads_for_pattern(node, rdf.SCHEMA_DESCRIPTION, None, None):
            if isinstance(quad.object, Literal):
                description = quad.object.value
                if quad.object.language == "en":
                    break
        entity_id = rdf.entity_id(node)
        return Entity(
            id=entity_id,
            name=self._label_of(node) or entity_id,
            types=tuple(label for label, _ in types),
            description=description,
            short_id=self._short_id(entity_id),
        )

    def _short_id(self, entity_id: str) -> str | None:
        """The short id an entity carries (``None`` here; the KG overrides it)."""
        return None

    def _triple(self, quad: Quad, subject_id: str, subject_label: str) -> Triple:
        pred = quad.predicate
        relation = self._rel_label.get(pred)
        if relation is None:  # a fact whose predicate was never registered (hand-made store)
            relation = self._label_of(pred) or rdf.local_name(pred)
        obj = quad.object
        return Triple(
            subject=subject_id,
            relation=relation,
            value=self._value_text(obj),
            subject_label=subject_label,
            relation_id=rdf.relation_id_of(pred),
            value_id=None if isinstance(obj, Literal) else rdf.entity_id(obj),
        )

    def _fact_quads(self, node: Node, relation: str | None) -> Iterable[Quad]:
        if relation is None:
            yield from self._store.quads_for_pattern(node, None, None, FACT_GRAPH)
            return
        for pred in self._rels_by_label.get(relation, ()):
            yield from self._store.quads_for_pattern(node, pred, None, FACT_GRAPH)

    def _triples(self, node: Node, relation: str | None = None) -> list[Triple]:
        subject_id = rdf.entity_id(node)
        subject_label = self._label_of(node) or subject_id
        triples = [
            self._triple(q, subject_id, subject_label) for q in self._fact_quads(node, relation)
        ]
        triples.sort(key=lambda t: (t.relation, t.value))
        return triples

    def _has_label(self, node: Node) -> bool:
        for pred in self._label_preds:
            if next(iter(self._store.quads_for_pattern(node, pred, None, None)), None) is not None:
                return True
        return False

    def _relation_label(self, node: NamedNode) -> str | None:
        return self._rel_label.get(node)
