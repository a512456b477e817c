"""Turning :class:`~citegraph.kg.Triple` records into quads for :meth:`OxigraphKG.add_triples`
(the store is read through its :class:`StoreView`, to add only the labels it lacks)."""

from __future__ import annotations

from collections.abc import Iterable

from pyoxigraph import NamedNode, Quad

from citegraph.errors import KGError
from citegraph.kg import _rdf as rdf
from citegraph.kg._oxigraph_view import StoreView
from citegraph.kg._rdf import Node, Term
from citegraph.kg._types import Triple


def triples_to_quads(
    kg: StoreView, triples: Iterable[Triple]
) -> tuple[list[Quad], list[tuple[NamedNode, str]]]:
    """The fact quads of ``triples`` plus the label and property quads the store still lacks.

    Returns:
        The quads to add, and the ``(property IRI, label)`` pairs that are new to the store.

    Raises:
        KGError: an id or label cannot become an RDF term.
    """
    quads: list[Quad] = []
    new_relations: list[tuple[NamedNode, str]] = []
    has_label: dict[Node, bool] = {}

    def label(node: Node, text: str | None) -> None:
        if not text:
            return
        if node not in has_label:
            has_label[node] = kg._has_label(node)
        if not has_label[node]:
            quads.extend(rdf.label_quads(node, text))
            has_label[node] = True

    known_relations: set[NamedNode] = set()
    for triple in triples:
        subject = rdf.entity_node(triple.subject)
        if subject is None:
            raise KGError(f"entity id {triple.subject!r} cannot be an IRI")
        pred = rdf.relation_node(triple.relation, triple.relation_id)
        if pred is None:
            raise KGError(f"relation {triple.relation!r} ({triple.relation_id}) cannot be an IRI")
        obj: Term | None
        if triple.value_id:
            obj = rdf.entity_node(triple.value_id)
            if obj is None:
                raise KGError(f"value id {triple.value_id!r} cannot be an IRI")
            label(obj, triple.value)
        else:
            obj = rdf.text_literal(triple.value)
            if obj is None:
                raise KGError(f"value {triple.value!r} cannot be a literal")
        label(subject, triple.subject_label)
        if kg._relation_label(pred) is None and pred not in known_relations:
            quads.extend(rdf.property_quads(pred, triple.relation))
            new_relations.append((pred, triple.relation))
            known_relations.add(pred)
        quads.append(Quad(subject, pred, obj, rdf.FACT_GRAPH))
    return quads, new_relations
