"""A :class:`~citegraph.kg.KnowledgeGraph` over a remote Wikidata-shaped SPARQL endpoint.

The graph is read as Wikidata models it: items ``wd:Q…`` with ``rdfs:label``, direct claims
``wdt:P…`` (the "truthy" values), property entities linked to their direct-claim predicate by
``wikibase:directClaim`` and labelled with ``rdfs:label``. The same queries run on WDQS, QLever
and Virtuoso (see :mod:`._sparql_queries`).

Triples are ``(subject QID, relation label, value label)``, as in BioKaLMA:

- an item value is its English label (its QID when it has none), with ``value_id`` set;
- ``xsd:dateTime`` / ``xsd:date`` values are cut to ``YYYY-MM-DD`` (KaLMA splits on ``T``);
- other literals keep their lexical form, other IRIs their IRI;
- "unknown value" claims (blank nodes, ``/.well-known/genid/`` IRIs) are skipped;
- like the BioKaLMA entity dicts, the subgraph also holds ``(qid, "name", label)``
  (KaLMA answers cite ``[Q…, name: …]``); ``include_name=False`` leaves it out.

Triples are sorted by property number, then value, so results are deterministic.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Literal

from citegraph.errors import KGQueryError
from citegraph.kg._short_ids import WELL_KNOWN_PREFIXES, ShortIds, iri_text
from citegraph.kg._sparql_client import SparqlClient
from citegraph.kg._sparql_literal import is_item_id, item_id, language_tag, property_id
from citegraph.kg._sparql_queries import (
    ENTITY_PREFIX,
    PROP_DIRECT_PREFIX,
    claims_query,
    entity_info_query,
    find_entities_query,
)
from citegraph.kg._types import Entity, Subgraph, Triple

__all__ = ["KALMA_RELATION_NAMES", "NAME_RELATION", "SparqlEndpointKG"]

#: The relation of the ``(qid, "name", label)`` fact.
NAME_RELATION = "name"

#: Relation names the BioKaLMA data uses instead of the Wikidata labels (by property id).
KALMA_RELATION_NAMES: Mapping[str, str] = {"P569": "date_of_birth", "P570": "date_of_death"}

_XSD = "http://www.w3.org/2001/XMLSchema#"
_DATE_TYPES = {_XSD + "dateTime", _XSD + "date"}
_GENID = "/.well-known/genid/"

Binding = Mapping[str, Mapping[str, str]]


def _local_id(iri: str, prefix: str) -> str | None:
    return iri[len(prefix) :] if iri.startswith(prefix) else None


def render_value(term: Mapping[str, str], label: str | None) -> tuple[str, str | None] | None:
    """``(value, value_id)`` for a SPARQL JSON term, or ``None`` for an unknown value."""
    kind, raw = term.get("type"), term.get("value", "")
    if kind == "bnode" or (kind == "uri" and _GENID in raw):
        return None
    if kind == "uri":
        local = _local_id(raw, ENTITY_PREFIX)
        if local is not None:
            return (label or local, local)
        return (raw, None)
    if term.get("datatype") in _DATE_TYPES:
        return (raw.split("T", 1)[0], None)
    return (raw, None)


class SparqlEndpointKG:
    """The KnowledgeGraph protocol on a remote endpoint reached through a :class:`SparqlClient`.

    Args:
        client: The client (endpoint, limits, cache).
        language: Label language (``"en"``, as in KaLMA).
        case_insensitive: How ``case_sensitive=False`` lookups run: ``"variants"`` (fast, tries
            common case variants) or ``"scan"`` (complete, scans all labels: small endpoints
            only). See :mod:`citegraph.kg._sparql_queries`.
        relation_names: Relation names to use instead of property labels, by property id, e.g.
            :data:`KALMA_RELATION_NAMES` to match the BioKaLMA data.
        include_name: Add the ``(qid, "name", label)`` fact to subgraphs and facts.
    """

    def __init__(
        self,
        client: SparqlClient,
        *,
        language: str = "en",
        case_insensitive: Literal["variants", "scan"] = "variants",
        relation_names: Mapping[str, str] | None = None,
        include_name: bool = True,
    ) -> None:
        if case_insensitive not in ("variants", "scan"):
            raise KGQueryError(f"case_insensitive must be 'variants' or 'scan': {case_insensitive}")
        self.client = client
        self.language = language_tag(language)
        self.case_insensitive = case_insensitive
        self.relation_names = {property_id(k): v for k, v in (relation_names or {}).items()}
        self.include_name = include_name
        self._short = ShortIds((), WELL_KNOWN_PREFIXES)

    async def find_entities(
        self, name: str, *, type: str | None = None, case_sensitive: bool = True, limit: int = 50
    ) -> list[Entity]:
        """Items whose label is ``name``; see :meth:`KnowledgeGraph.find_entities`.

        ``type`` is an id (``"Q5"``: ``?e wdt:P31 wd:Q5``) or an exact type label (``"human"``);
        only direct ``instance of`` (P31) counts, as in KaLMA. Results are sorted by QID number.
        """
        if limit == 0:
            return []
        mode = "exact" if case_sensitive else self.case_insensitive
        query = find_entities_query(name, type_=type, mode=mode, limit=limit, lang=self.language)
        entities = self._entities(await self.client.select(query))
        if not case_sensitive:  # the variants/scan filters may be looser or stricter than casefold
            entities = [e for e in entities if e.name.casefold() == name.casefold()]
        return entities

    def _entities(self, rows: Sequence[Binding]) -> list[Entity]:
        found: dict[str, dict[str, Any]] = {}
        for row in rows:
            qid = _local_id(row["e"]["value"], ENTITY_PREFIX) if "e" in row else None
            if qid is None or not is_item_id(qid):
                continue
            info = found.setdefault(qid, {"name": qid, "types": [], "description": None})
            if "name" in row:
                info["name"] = row["name"]["value"]
            if "description" in row:
                info["description"] = row["description"]["value"]
            if "type" in row:
                type_label = row["typeLabel"]["value"] if "typeLabel" in row else None
                rendered = render_value(row["type"], type_label)
                if rendered is not None and rendered[0] not in info["types"]:
                    info["types"].append(rendered[0])
        return [
            Entity(
                id=qid,
                name=i["name"],
                types=tuple(sorted(i["types"])),
                description=i["description"],
            )
            for qid, i in sorted(found.items(), key=lambda kv: int(kv[0][1:]))
        ]

    async def subgraph(self, entity_id: str) -> Subgraph:
        """The item's direct claims with labels; see :meth:`KnowledgeGraph.subgraph`.

        Raises:
            KGQueryError: ``entity_id`` is not a QID, or the item has no label and no claims.
        """
        rows = await self.client.select(claims_query(item_id(entity_id), lang=self.language))
        if rows:
            center = self._center(entity_id, rows)
        else:
            info = self._entities(await self.client.select(entity_info_query([entity_id])))
            if not info or info[0].name == entity_id:
                raise KGQueryError(f"unknown entity {entity_id} at {self.client.url}")
            center = info[0]
        return Subgraph(center=center, triples=tuple(self._triples(entity_id, rows, center.name)))

    def _center(self, qid: str, rows: Sequence[Binding]) -> Entity:
        first = rows[0]
        name = first["subjectLabel"]["value"] if "subjectLabel" in first else qid
        description = first["description"]["value"] if "description" in first else None
        types = {
            rendered[0]
            for row in rows
            if row["p"]["value"] == PROP_DIRECT_PREFIX + "P31"
            and (rendered := render_value(row["v"], row.get("valueLabel", {}).get("value")))
        }
        return Entity(id=qid, name=name, types=tuple(sorted(types)), description=description)

    def _triples(self, qid: str, rows: Sequence[Binding], name: str | None) -> list[Triple]:
        keyed: dict[tuple[int, str, str], Triple] = {}
        for row in rows:
            pid = _local_id(row["p"]["value"], PROP_DIRECT_PREFIX)
            rendered = render_value(row["v"], row.get("valueLabel", {}).get("value"))
            if pid is None or rendered is None:
                continue
            relation = self.relation_names.get(pid, row["propLabel"]["value"])
            value, value_id = rendered
            triple = Triple(
                subject=qid,
                relation=relation,
                value=value,
                subject_label=name,
                relation_id=pid,
                value_id=value_id,
            )
            keyed.setdefault((int(pid[1:]), relation, value), triple)
        triples = [keyed[k] for k in sorted(keyed)]
        if self.include_name and name is not None and name != qid:
            name_fact = Triple(subject=qid, relation=NAME_RELATION, value=name, subject_label=name)
            triples.insert(0, name_fact)
        return triples

    async def facts(self, entity_id: str, relation: str | None = None) -> list[Triple]:
        """Facts of ``entity_id``, optionally of one relation; unknown items give ``[]``.

        Raises:
            KGQueryError: ``entity_id`` is not a QID.
        """
        qid = item_id(entity_id)
        if relation is None:
            rows = await self.client.select(claims_query(qid, lang=self.language))
        elif relation == NAME_RELATION and self.include_name:
            info = self._entities(await self.client.select(entity_info_query([qid])))
            return self._triples(qid, [], info[0].name if info else qid)
        else:
            ids = [pid for pid, alias in self.relation_names.items() if alias == relation]
            query = claims_query(qid, relation_label=relation, relation_ids=ids, lang=self.language)
            rows = await self.client.select(query)
        label = rows[0]["subjectLabel"]["value"] if rows and "subjectLabel" in rows[0] else None
        triples = self._triples(qid, rows, label)
        return triples if relation is None else [t for t in triples if t.relation == relation]

    async def has_fact(self, triple: Triple) -> bool:
        """Whether the endpoint holds ``triple`` (same subject QID, relation and value labels).

        A subject that is not a QID gives ``False`` without a request.
        """
        if not is_item_id(triple.subject):
            return False
        return triple in await self.facts(triple.subject, triple.relation)

    @property
    def prefixes(self) -> dict[str, str]:
        """The well-known prefixes ids are shortened with (``wd:`` items are QIDs already)."""
        return dict(WELL_KNOWN_PREFIXES)

    def short_id_of(self, entity_id: str) -> str:
        """How prompts show ``entity_id``: a QID as it is, an IRI under a well-known namespace
        as a CURIE (``dbr:Marie_Curie``), any other IRI in full. Needs no request."""
        return self._short.short(entity_id)

    def resolve_id(self, text: str) -> str | None:
        """The id ``text`` names without asking the endpoint: a QID (also ``wd:Q1`` or its
        entity IRI), or the IRI a well-known CURIE or a full IRI writes; ``None`` otherwise."""
        text = text.strip()
        if is_item_id(text):
            return text
        name, colon, local = text.partition(":")
        if colon and name in WELL_KNOWN_PREFIXES and local and " " not in local:
            text = WELL_KNOWN_PREFIXES[name] + local
        iri = iri_text(text)
        if iri is None:
            return None
        qid = _local_id(iri, ENTITY_PREFIX)
        return qid if qid is not None and is_item_id(qid) else iri

    async def aclose(self) -> None:
        """Close the client: its HTTP connections and its answer cache."""
        await self.client.aclose()

    def __repr__(self) -> str:
        return f"SparqlEndpointKG({self.client!r})"
