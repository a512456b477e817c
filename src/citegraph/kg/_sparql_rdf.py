"""A :class:`~citegraph.kg.KnowledgeGraph` over any RDF graph behind a SPARQL 1.1 endpoint.

:class:`SparqlRdfKG` reads the graph as the embedded store's RDF loader does
(:mod:`citegraph.kg._load_rdf`, :mod:`citegraph.kg._oxigraph_view`), so that a Turtle file served
by an endpoint and the same file loaded with ``--kg kg.ttl`` give the same entities and facts:

- entities are IRI subjects; their id is :func:`citegraph.kg._rdf.entity_id` of the IRI (the
  full IRI; a Wikidata item IRI gives its QID);
- names come from the label predicates (the given ones, then ``rdfs:label``,
  ``skos:prefLabel``, ``skos:altLabel``, ``schema:name``, ``foaf:name``:
  :func:`citegraph.kg._rdf.label_predicates`); an entity's name is the English, else untagged,
  label of the first of them that has one, else a label in another language, else its id; its
  description is ``schema:description`` (English preferred); its types are the values of
  ``wdt:P31`` and of the predicates labelled ``instance of``;
- a fact is any triple except those describing terms: the label predicates,
  ``schema:description`` and ``?p rdf:type rdf:Property`` (or an OWL / Wikibase property class);
- a relation's label is the predicate's English label, else an untagged one, else another
  English one (``en-GB``), of the first label predicate that has one, else the last segment of
  its IRI;
- a value is a literal's lexical form, or an IRI's label (else its id) with ``value_id``.

Triples are sorted by (relation, value). Queries are in :mod:`._sparql_rdf_queries`; user text
reaches them only through :mod:`._sparql_literal`. Ids are shown as CURIEs of the prefixes given
to the KG (and :data:`WELL_KNOWN_PREFIXES`), and read back from them without a request.

Differences from the embedded store: blank-node subjects are not entities (an endpoint's blank
node labels are not stable across queries), a unique local name (``MarieCurie``) is not read
back as an id (that needs every id of the KG), and the case-insensitive lookup compares
``LCASE`` at the endpoint before :meth:`str.casefold` here (labels whose case folding differs
from lower-casing, such as ``ß``, may be missed).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pyoxigraph import NamedNode

from citegraph.errors import KGQueryError
from citegraph.kg import _rdf as rdf
from citegraph.kg._short_ids import WELL_KNOWN_PREFIXES, ShortIds, iri_text, is_iri
from citegraph.kg._sparql_client import SparqlClient
from citegraph.kg._sparql_literal import sparql_iri
from citegraph.kg._sparql_rdf_queries import (
    PROPERTY_CLASS_IRIS,
    describe_query,
    label_matches_query,
)
from citegraph.kg._types import Entity, Subgraph, Triple

__all__ = ["SparqlRdfKG"]

Binding = Mapping[str, Mapping[str, str]]
#: A label: the rank of the label predicate it was read from (0: the most preferred), its term.
Label = tuple[int, Mapping[str, str]]

_RDF_TYPE = rdf.RDF_TYPE.value
_META = {p.value for p in rdf.META_PREDICATES}
_DESCRIPTION = rdf.SCHEMA_DESCRIPTION.value
_INSTANCE_OF = rdf.INSTANCE_OF.value
#: Candidates fetched per label lookup, before the type filter and the limit.
_CANDIDATES = 200


def _label_rank(term: Mapping[str, str]) -> int:
    """0 for English, 1 untagged, 2 other English (``en-GB``), 3 any other language."""
    lang = term.get("xml:lang")
    if lang == "en":
        return 0
    if not lang:
        return 1
    return 2 if lang.lower().startswith("en-") else 3


def _best(labels: Sequence[Label], *, worst: int = 3) -> str | None:
    """The preferred label, ``None`` when none has a language rank up to ``worst``: English or
    untagged labels first, by label predicate (English before untagged within one); then the
    others by label predicate and language rank; then the smallest text."""
    ranked = sorted(
        (_label_rank(t) > 1, by, _label_rank(t), t.get("value", ""))
        for by, t in labels
        if _label_rank(t) <= worst
    )
    return ranked[0][3] if ranked else None


def _term_id(term: Mapping[str, str]) -> str:
    if term.get("type") == "bnode":
        return "_:" + term.get("value", "")
    return rdf.entity_id(NamedNode(term["value"]))


def _local_name(iri: str) -> str:
    return rdf.local_name(NamedNode(iri))


@dataclass
class _Description:
    """What one describe query says about a subject."""

    labels: list[Label] = field(default_factory=list)
    descriptions: list[Mapping[str, str]] = field(default_factory=list)
    # (predicate IRI, value term) -> labels of the predicate and of the value
    facts: dict[tuple[str, tuple[tuple[str, str], ...]], tuple[list[Label], list[Label]]] = field(
        default_factory=dict
    )
    n_rows: int = 0


class SparqlRdfKG:
    """The KnowledgeGraph protocol over a plain RDF graph on a remote SPARQL endpoint.

    Args:
        client: The client (endpoint, limits, cache).
        prefixes: Prefix name -> namespace IRI (``{"ex": "http://example.org/kg/"}``): ids are
            shown as CURIEs of them and CURIEs are read back, with :data:`WELL_KNOWN_PREFIXES`.
        label_predicates: IRIs of more label predicates, preferred to the default ones for
            display names (:func:`citegraph.kg._rdf.label_predicates`).

    Raises:
        ValueError: a label predicate is not an IRI.

    Example:
        >>> kg = SparqlRdfKG(SparqlClient(virtuoso("http://localhost:7878/query")),
        ...                  prefixes={"ex": "http://example.org/kg/"})  # doctest: +SKIP
        >>> await kg.find_entities("Marie Curie")  # doctest: +SKIP
    """

    def __init__(
        self,
        client: SparqlClient,
        *,
        prefixes: Mapping[str, str] | None = None,
        label_predicates: Sequence[str] = (),
    ) -> None:
        self.client = client
        self._prefixes = {**WELL_KNOWN_PREFIXES, **dict(prefixes or {})}
        self._short = ShortIds((), self._prefixes)
        preds = [node.value for node in rdf.label_predicates(label_predicates)]
        #: The label predicates, in order of preference.
        self.label_predicates: tuple[str, ...] = tuple(preds)
        self._label_rank = {iri: rank for rank, iri in enumerate(preds)}

    # ------------------------------------------------------------------ reading
    async def _describe(self, entity_id: str) -> _Description | None:
        """The subject's rows, or ``None`` when ``entity_id`` cannot be an IRI we may send."""
        node = rdf.entity_node(entity_id) if isinstance(entity_id, str) else None
        if not isinstance(node, NamedNode):
            return None
        try:
            query = describe_query(node.value, label_predicates=self.label_predicates)
        except KGQueryError:
            return None
        out = _Description()
        for row in await self.client.select(query):
            out.n_rows += 1
            pred, value = row["p"]["value"], row["v"]
            if pred in self._label_rank:
                label = (self._label_rank[pred], value)
                if value.get("type") == "literal" and label not in out.labels:
                    out.labels.append(label)
                continue
            if pred == _DESCRIPTION:
                if value.get("type") == "literal" and value not in out.descriptions:
                    out.descriptions.append(value)
                continue
            if pred in _META or (pred == _RDF_TYPE and value.get("value") in PROPERTY_CLASS_IRIS):
                continue
            if value.get("type") not in ("uri", "literal", "bnode", "typed-literal"):
                continue  # RDF-star quoted triples are not facts citegraph can cite
            key = (pred, tuple(sorted(value.items())))
            p_labels, v_labels = out.facts.setdefault(key, ([], []))
            for name, labels in (("pLabel", p_labels), ("vLabel", v_labels)):
                by = self._label_rank.get(row.get(name + "By", {}).get("value", ""))
                if name in row and by is not None and (by, row[name]) not in labels:
                    labels.append((by, row[name]))
        return out

    @staticmethod
    def _relation(pred: str, labels: Sequence[Label]) -> str:
        return _best(labels, worst=2) or _local_name(pred)

    @staticmethod
    def _value(term: Mapping[str, str], labels: Sequence[Label]) -> tuple[str, str | None]:
        if term.get("type") in ("literal", "typed-literal"):
            return term.get("value", ""), None
        value_id = _term_id(term)
        return _best(labels) or value_id, value_id

    def _triples(self, entity_id: str, info: _Description) -> list[Triple]:
        name = _best(info.labels) or entity_id
        triples = []
        for (pred, value_items), (p_labels, v_labels) in info.facts.items():
            value, value_id = self._value(dict(value_items), v_labels)
            triples.append(
                Triple(
                    subject=entity_id,
                    relation=self._relation(pred, p_labels),
                    value=value,
                    subject_label=name,
                    relation_id=rdf.relation_id_of(NamedNode(pred)),
                    value_id=value_id,
                )
            )
        triples.sort(key=lambda t: (t.relation, t.value))
        return triples

    def _entity(self, entity_id: str, info: _Description) -> Entity:
        types: list[str] = []
        for (pred, value_items), (p_labels, v_labels) in sorted(info.facts.items()):
            relation = self._relation(pred, p_labels)
            if pred == _INSTANCE_OF or relation == rdf.INSTANCE_OF_LABEL:
                value, _ = self._value(dict(value_items), v_labels)
                if value not in types:
                    types.append(value)
        english = [d for d in info.descriptions if d.get("xml:lang") == "en"]
        described = english or sorted(info.descriptions, key=lambda d: d.get("value", ""))
        short = self.short_id_of(entity_id)
        return Entity(
            id=entity_id,
            name=_best(info.labels) or entity_id,
            types=tuple(types),
            description=described[0]["value"] if described else None,
            short_id=None if short == entity_id else short,
        )

    # ------------------------------------------------------------------ the protocol
    async def find_entities(
        self, name: str, *, type: str | None = None, case_sensitive: bool = True, limit: int = 50
    ) -> list[Entity]:
        """Entities with an English or untagged label ``name`` (of any label predicate),
        ordered by id; see
        :meth:`KnowledgeGraph.find_entities`. ``type`` is a type label or id (compared
        case-insensitively when ``case_sensitive`` is ``False``)."""
        if limit <= 0 or not isinstance(name, str):
            return []
        query = label_matches_query(
            name,
            case_sensitive=case_sensitive,
            limit=_CANDIDATES,
            label_predicates=self.label_predicates,
        )
        rows = await self.client.select(query)
        ids = sorted({_term_id(r["e"]) for r in rows if r.get("e", {}).get("type") == "uri"})
        entities: list[Entity] = []
        for entity_id in sorted(ids, key=_id_sort_key):
            info = await self._describe(entity_id)
            if info is None:
                continue
            if not case_sensitive and not _has_folded_label(info.labels, name):
                continue
            if type is not None and not self._type_matches(info, type, case_sensitive):
                continue
            entities.append(self._entity(entity_id, info))
            if len(entities) >= limit:
                break
        return entities

    def _type_matches(self, info: _Description, wanted: str, case_sensitive: bool) -> bool:
        for (pred, value_items), (p_labels, v_labels) in info.facts.items():
            if pred != _INSTANCE_OF and self._relation(pred, p_labels) != rdf.INSTANCE_OF_LABEL:
                continue
            label, type_id = self._value(dict(value_items), v_labels)
            if wanted in (type_id, label):
                return True
            if not case_sensitive and rdf.fold(label) == rdf.fold(wanted):
                return True
        return False

    async def subgraph(self, entity_id: str) -> Subgraph:
        """One-hop subgraph, triples sorted by (relation, value).

        Raises:
            KGQueryError: the endpoint has no triple whose subject is ``entity_id``.
        """
        info = await self._describe(entity_id)
        if info is None or info.n_rows == 0:
            raise KGQueryError(f"unknown entity {entity_id!r} at {self.client.url}")
        return Subgraph(
            center=self._entity(entity_id, info), triples=tuple(self._triples(entity_id, info))
        )

    async def facts(self, entity_id: str, relation: str | None = None) -> list[Triple]:
        """Facts of ``entity_id``, optionally of one relation label; an unknown entity has none."""
        info = await self._describe(entity_id)
        if info is None:
            return []
        triples = self._triples(entity_id, info)
        return triples if relation is None else [t for t in triples if t.relation == relation]

    async def has_fact(self, triple: Triple) -> bool:
        """Whether the KG holds ``triple`` (subject id, relation label, value label)."""
        return any(
            t.value == triple.value for t in await self.facts(triple.subject, triple.relation)
        )

    # ------------------------------------------------------------------ short ids
    @property
    def prefixes(self) -> dict[str, str]:
        """The prefixes ids are shortened with: the given ones and the well-known ones."""
        return dict(self._prefixes)

    def short_id_of(self, entity_id: str) -> str:
        """How prompts show ``entity_id``: a CURIE of :attr:`prefixes` (``ex:MarieCurie``), else
        the id itself (a QID, or an IRI in full). Needs no request."""
        return self._short.short(entity_id)

    def resolve_id(self, text: str) -> str | None:
        """The id ``text`` names without asking the endpoint: a QID, a CURIE of
        :attr:`prefixes`, or a full IRI (also ``<...>``); ``None`` otherwise (labels and local
        names are not looked at: use :meth:`find_entities`)."""
        text = text.strip()
        if rdf.is_qid(text):
            return text
        name, colon, local = text.partition(":")
        if colon and name in self._prefixes and local and not local.startswith("//"):
            text = self._prefixes[name] + local
        iri = iri_text(text)
        if iri is None or not is_iri(iri):
            return None
        try:
            sparql_iri(iri)
        except KGQueryError:
            return None
        return rdf.entity_id(NamedNode(iri))

    async def aclose(self) -> None:
        """Close the client: its HTTP connections and its answer cache."""
        await self.client.aclose()

    def __repr__(self) -> str:
        return f"SparqlRdfKG({self.client!r})"


def _has_folded_label(labels: Sequence[Label], name: str) -> bool:
    folded = rdf.fold(name)
    return any(_label_rank(t) <= 2 and rdf.fold(t.get("value", "")) == folded for _, t in labels)


def _id_sort_key(entity_id: str) -> tuple[int, int, str]:
    if rdf.is_qid(entity_id):
        return (0, int(entity_id[1:]), "")
    return (1, 0, entity_id)
