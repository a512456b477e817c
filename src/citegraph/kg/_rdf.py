"""How citegraph writes a knowledge graph as RDF: the IRI scheme and small term helpers.

The embedded store (:class:`citegraph.kg.OxigraphKG`) keeps two graphs:

* the **default graph** holds the facts, and only the facts: ``entity --property--> value``.
  Its size is the KG's size (``len(kg)``), and a one-hop subgraph is the default-graph quads whose
  subject is the centre entity.
* the **metadata graph** ``<https://citegraph.dev/graph/meta>`` holds what describes the terms:
  labels, case-folded labels, descriptions, the property markers, and entity types that came from
  a side file rather than from the facts (CoDEx-S ``entity2types``).

Terms:

* **Entities** with a Wikidata id get Wikidata's IRI, ``http://www.wikidata.org/entity/Q206534``;
  their id is ``Q206534``. An entity from an RDF file keeps its IRI, which is also its id. Any
  other id (``e1`` in a hand-built test KG) is minted as
  ``https://citegraph.dev/entity/<percent-encoded id>``, so every string is a valid id that maps to
  exactly one IRI and back.
* **Properties** with a Wikidata id get the direct-claim IRI,
  ``http://www.wikidata.org/prop/direct/P19`` (``wdt:P19``); their id is ``P19``. BioKaLMA gives
  only relation labels, so their IRI is minted from the label,
  ``https://citegraph.dev/rel/place%20of%20birth``, and they have no id.
* **Values** that are entities are IRIs as above; values without an id (every BioKaLMA value) are
  plain string literals, stored verbatim so that the value label is the literal's text.
* **Names** (labels) of RDF files come from ``rdfs:label``, ``skos:prefLabel``, ``skos:altLabel``,
  ``schema:name`` (``http://`` and ``https://schema.org/``) and ``foaf:name``, after any label
  predicates the user gives (:func:`label_predicates`). They stay under their own predicate in
  the metadata graph, and the store records the order as ``<predicate>
  <https://citegraph.dev/schema#labelPredicate> rank`` there; a store without that record (the
  dataset loaders) names by ``rdfs:label`` alone. An entity's display name is the English, else
  untagged, label of the first predicate in that order that has one; else a label in another
  language (first predicate first). Every English or untagged label is matched by lookups.
* Every entity and property has ``rdfs:label`` (language ``en``). Entities also have
  ``<https://citegraph.dev/schema#foldedLabel>``, the label passed through :func:`fold`
  (``str.casefold``), so a case-insensitive lookup is an indexed exact match, never a scan.
  Descriptions use ``schema:description`` (``en``). Properties are marked
  ``?p rdf:type rdf:Property`` in the metadata graph.
* **Prefixes** declared by RDF files (``@prefix ex: <http://example.org/kg/> .``) are kept as
  ``<namespace IRI> <https://citegraph.dev/schema#prefix> "ex"`` in the metadata graph, so a
  cached store still knows them (they give entities their short ids, :mod:`._short_ids`).
* **Types** come from an "instance of" relation: ``wdt:P31`` when ids are known, or the BioKaLMA
  relation labelled ``instance of`` (value ``"human"``).

Every helper that turns a user string into a term validates it and returns ``None`` when the
string cannot be a term, so a bad id or name is simply "no match", never a pyoxigraph error.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import TypeAlias
from urllib.parse import quote, unquote

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, Store
from pyoxigraph import Triple as QuotedTriple

#: Bump when the IRI scheme changes: on-disk caches built with another version are not reused.
SCHEMA_VERSION = 1

WD = "http://www.wikidata.org/entity/"
WDT = "http://www.wikidata.org/prop/direct/"
CG = "https://citegraph.dev/"
CG_ENTITY = CG + "entity/"
CG_REL = CG + "rel/"

RDF_TYPE = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#type")
RDF_PROPERTY = NamedNode("http://www.w3.org/1999/02/22-rdf-syntax-ns#Property")
RDFS_LABEL = NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
SKOS = "http://www.w3.org/2004/02/skos/core#"
SCHEMA_DESCRIPTION = NamedNode("http://schema.org/description")
FOLDED_LABEL = NamedNode(CG + "schema#foldedLabel")
PREFIX = NamedNode(CG + "schema#prefix")
LABEL_PREDICATE = NamedNode(CG + "schema#labelPredicate")
XSD_INTEGER = NamedNode("http://www.w3.org/2001/XMLSchema#integer")
#: The predicates whose literals name a term, in order of preference for its display name.
DEFAULT_LABEL_PREDICATES: tuple[NamedNode, ...] = (
    RDFS_LABEL,
    NamedNode(SKOS + "prefLabel"),
    NamedNode(SKOS + "altLabel"),
    NamedNode("http://schema.org/name"),
    NamedNode("https://schema.org/name"),
    NamedNode("http://xmlns.com/foaf/0.1/name"),
)
INSTANCE_OF = NamedNode(WDT + "P31")
INSTANCE_OF_LABEL = "instance of"
META_GRAPH = NamedNode(CG + "graph/meta")
FACT_GRAPH = DefaultGraph()

#: Predicates whose quads describe terms rather than state facts (routed to the metadata graph).
META_PREDICATES = frozenset({RDFS_LABEL, SCHEMA_DESCRIPTION, FOLDED_LABEL, PREFIX, LABEL_PREDICATE})
#: Classes whose ``rdf:type`` marks a property (also routed to the metadata graph).
PROPERTY_CLASSES = frozenset(
    {
        RDF_PROPERTY,
        NamedNode("http://www.w3.org/2002/07/owl#ObjectProperty"),
        NamedNode("http://www.w3.org/2002/07/owl#DatatypeProperty"),
        NamedNode("http://wikiba.se/ontology#Property"),
    }
)

Node: TypeAlias = NamedNode | BlankNode
#: Any object term; RDF-star quoted triples only appear in hand-made stores.
Term: TypeAlias = NamedNode | BlankNode | Literal | QuotedTriple

_QID = re.compile(r"Q[1-9][0-9]*")
_PID = re.compile(r"P[1-9][0-9]*")
_SCHEME = re.compile(r"[A-Za-z][A-Za-z0-9+.\-]*:")


def is_qid(text: str) -> bool:
    """Whether ``text`` is a Wikidata item id such as ``Q5``."""
    return _QID.fullmatch(text) is not None


def fold(text: str) -> str:
    """The case-folded form used for case-insensitive label lookup."""
    return text.casefold()


def _named_node(iri: str) -> NamedNode | None:
    try:
        return NamedNode(iri)
    except (ValueError, TypeError):
        return None


def entity_node(entity_id: str) -> Node | None:
    """The IRI (or blank node) of an entity id, or ``None`` when ``entity_id`` cannot be one."""
    if not isinstance(entity_id, str) or not entity_id:
        return None
    if _QID.fullmatch(entity_id):
        return NamedNode(WD + entity_id)
    if entity_id.startswith("_:"):
        try:
            return BlankNode(entity_id[2:])
        except (ValueError, TypeError):
            return None
    if _SCHEME.match(entity_id):
        return _named_node(entity_id)
    try:
        return NamedNode(CG_ENTITY + quote(entity_id, safe=""))
    except (ValueError, UnicodeEncodeError):
        return None


def entity_id(node: Node | QuotedTriple) -> str:
    """The id of an entity term: the inverse of :func:`entity_node`."""
    if isinstance(node, QuotedTriple):
        return str(node)
    if isinstance(node, BlankNode):
        return "_:" + node.value
    iri = node.value
    if iri.startswith(WD) and _QID.fullmatch(iri[len(WD) :]):
        return iri[len(WD) :]
    if iri.startswith(CG_ENTITY):
        return unquote(iri[len(CG_ENTITY) :])
    return iri


def relation_node(label: str, relation_id: str | None = None) -> NamedNode | None:
    """The IRI of a relation: ``wdt:P..`` for a Wikidata id, the IRI itself for an IRI id, else
    a citegraph IRI minted from the label. ``None`` when neither can make a valid IRI."""
    if relation_id:
        if _PID.fullmatch(relation_id):
            return NamedNode(WDT + relation_id)
        if _SCHEME.match(relation_id):
            return _named_node(relation_id)
        return None
    if not isinstance(label, str) or not label:
        return None
    try:
        return NamedNode(CG_REL + quote(label, safe=""))
    except (ValueError, UnicodeEncodeError):
        return None


def relation_id_of(node: NamedNode) -> str | None:
    """``P19`` for ``wdt:P19``; ``None`` for a relation minted from its label; else the IRI."""
    iri = node.value
    if iri.startswith(WDT) and _PID.fullmatch(iri[len(WDT) :]):
        return iri[len(WDT) :]
    if iri.startswith(CG_REL):
        return None
    return iri


def local_name(node: NamedNode) -> str:
    """A readable fallback label: the decoded text after the last ``#`` or ``/``."""
    iri = node.value
    if iri.startswith(CG_REL):
        return unquote(iri[len(CG_REL) :])
    cut = max(iri.rfind("#"), iri.rfind("/"))
    return unquote(iri[cut + 1 :]) or iri


def text_literal(text: str, language: str | None = None) -> Literal | None:
    """A string literal, or ``None`` when ``text`` cannot be one (not a str, lone surrogates)."""
    if not isinstance(text, str):
        return None
    try:
        return Literal(text, language=language) if language else Literal(text)
    except (ValueError, TypeError, UnicodeEncodeError):
        return None


def term_text(term: Term) -> str:
    """The text of a literal, or the id of an entity term (used when a label is missing)."""
    if isinstance(term, Literal):
        return term.value
    return entity_id(term)


def is_label_literal(term: Term) -> bool:
    """Whether a label literal is English or has no language tag (both are looked up)."""
    if not isinstance(term, Literal):
        return False
    lang = term.language
    return lang is None or lang == "en" or lang.startswith("en-")


def label_quads(node: Node, label: str) -> list[Quad]:
    """``rdfs:label`` (en) and the folded label of an entity, in the metadata graph."""
    lit = text_literal(label, "en")
    folded = text_literal(fold(label))
    if lit is None or folded is None:
        return []
    return [Quad(node, RDFS_LABEL, lit, META_GRAPH), Quad(node, FOLDED_LABEL, folded, META_GRAPH)]


def property_quads(node: NamedNode, label: str) -> list[Quad]:
    """The property marker and ``rdfs:label`` (en) of a property, in the metadata graph."""
    quads = [Quad(node, RDF_TYPE, RDF_PROPERTY, META_GRAPH)]
    lit = text_literal(label, "en")
    if lit is not None:
        quads.append(Quad(node, RDFS_LABEL, lit, META_GRAPH))
    return quads


def description_quad(node: Node, description: str) -> Quad | None:
    """``schema:description`` (en) of an entity, in the metadata graph."""
    lit = text_literal(description, "en")
    return None if lit is None else Quad(node, SCHEMA_DESCRIPTION, lit, META_GRAPH)


def prefix_quads(prefixes: dict[str, str]) -> list[Quad]:
    """One metadata quad per declared prefix (name -> namespace IRI) that can be stored."""
    quads: list[Quad] = []
    for name, namespace in sorted(prefixes.items()):
        node = _named_node(namespace)
        lit = text_literal(name)
        if node is not None and lit is not None:
            quads.append(Quad(node, PREFIX, lit, META_GRAPH))
    return quads


def label_predicates(given: Iterable[str] = ()) -> tuple[NamedNode, ...]:
    """The label predicates in order of preference: the ``given`` IRIs first (in their order),
    then :data:`DEFAULT_LABEL_PREDICATES`; each once.

    Raises:
        ValueError: a given IRI is not a valid IRI.
    """
    nodes = [NamedNode(iri) for iri in given]
    return tuple(dict.fromkeys([*nodes, *DEFAULT_LABEL_PREDICATES]))


def label_predicate_quads(predicates: Sequence[NamedNode]) -> list[Quad]:
    """The metadata quads that record the label predicates and their order (rank 0 first)."""
    return [
        Quad(pred, LABEL_PREDICATE, Literal(str(rank), datatype=XSD_INTEGER), META_GRAPH)
        for rank, pred in enumerate(predicates)
    ]


def stored_label_predicates(store: Store) -> tuple[NamedNode, ...]:
    """The label predicates a store records (:func:`label_predicate_quads`), in order;
    ``(rdfs:label,)`` for a store that records none (the dataset loaders')."""
    ranked: list[tuple[int, str, NamedNode]] = []
    for quad in store.quads_for_pattern(None, LABEL_PREDICATE, None, META_GRAPH):
        pred, rank = quad.subject, quad.object
        if isinstance(pred, NamedNode) and isinstance(rank, Literal) and rank.value.isdigit():
            ranked.append((int(rank.value), pred.value, pred))
    return tuple(pred for _, _, pred in sorted(ranked)) or (RDFS_LABEL,)
