"""SPARQL query texts for a Wikidata-shaped graph, portable across WDQS, QLever and Virtuoso.

Every query declares its PREFIXes and uses ``rdfs:label`` with a language filter (never the
WDQS-only label service). Values enter the text only through :mod:`._sparql_literal`:
strings via :func:`sparql_string`, ids via :func:`item_id` / :func:`property_id`, the limit via
:func:`sparql_int`. Nothing else is ever interpolated.

Case-insensitive lookup (``find_entities(..., case_sensitive=False)``) has two modes:

- ``"variants"`` (default): look up the exact label for a few case variants of the name
  (as given, lower, upper, title, capitalised, first letter of each word upper) with
  ``VALUES``; one index lookup per variant, as fast as an exact lookup, but it misses labels with
  other mixed case (``"mccartney"`` does not find ``"McCartney"``).
- ``"scan"``: ``FILTER(LCASE(STR(?label)) = ...)`` over every label in the language. Complete,
  but a full scan of all labels: fine on a small private endpoint, times out on Wikidata.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Literal

from citegraph.kg._sparql_literal import (
    item_id,
    language_tag,
    property_id,
    sparql_int,
    sparql_string,
)

__all__ = [
    "ENTITY_PREFIX",
    "PREFIXES",
    "PROP_DIRECT_PREFIX",
    "case_variants",
    "claims_query",
    "entity_info_query",
    "find_entities_query",
]

ENTITY_PREFIX = "http://www.wikidata.org/entity/"
PROP_DIRECT_PREFIX = "http://www.wikidata.org/prop/direct/"

PREFIXES = f"""PREFIX wd: <{ENTITY_PREFIX}>
PREFIX wdt: <{PROP_DIRECT_PREFIX}>
PREFIX wikibase: <http://wikiba.se/ontology#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
PREFIX schema: <http://schema.org/>
"""

CaseMode = Literal["exact", "variants", "scan"]


def case_variants(name: str) -> list[str]:
    """Case variants of ``name`` tried by the ``"variants"`` mode, without duplicates."""
    words = " ".join(w[:1].upper() + w[1:] for w in name.split(" "))
    candidates = [name, name.lower(), name.upper(), name.title(), name.capitalize(), words]
    return list(dict.fromkeys(candidates))


def _type_pattern(type_: str | None, lang: str) -> str:
    if type_ is None:
        return ""
    if type_[:1] == "Q" and type_[1:].isdigit():
        return f"      ?e wdt:P31 wd:{item_id(type_)} .\n"
    return (
        "      ?e wdt:P31 ?filterType .\n"
        f"      ?filterType rdfs:label {sparql_string(type_, lang=lang)} .\n"
    )


def _label_pattern(name: str, mode: CaseMode, lang: str) -> str:
    if mode == "exact":
        return f"      ?e rdfs:label {sparql_string(name, lang=lang)} .\n"
    if mode == "variants":
        values = " ".join(sparql_string(v, lang=lang) for v in case_variants(name))
        return f"      VALUES ?label {{ {values} }}\n      ?e rdfs:label ?label .\n"
    return (
        "      ?e rdfs:label ?label .\n"
        f"      FILTER(LANG(?label) = {sparql_string(lang)} && "
        f"LCASE(STR(?label)) = LCASE({sparql_string(name)}))\n"
    )


def _info_patterns(lang: str) -> str:
    lit = sparql_string(language_tag(lang))
    return (
        "  OPTIONAL { ?e rdfs:label ?name . FILTER(LANG(?name) = " + lit + ") }\n"
        "  OPTIONAL {\n"
        "    ?e wdt:P31 ?type .\n"
        "    OPTIONAL { ?type rdfs:label ?typeLabel . FILTER(LANG(?typeLabel) = " + lit + ") }\n"
        "  }\n"
        "  OPTIONAL { ?e schema:description ?description . "
        "FILTER(LANG(?description) = " + lit + ") }\n"
    )


def find_entities_query(
    name: str, *, type_: str | None, mode: CaseMode, limit: int, lang: str = "en"
) -> str:
    """Items whose ``lang`` label is ``name``, with their name, types and description.

    Rows: ``?e ?name ?type ?typeLabel ?description`` (one row per type). The label match and
    the limit are in a subquery, so the limit counts entities, not rows.
    """
    return (
        PREFIXES
        + "SELECT ?e ?name ?type ?typeLabel ?description WHERE {\n"
        + "  {\n    SELECT DISTINCT ?e WHERE {\n"
        + _label_pattern(name, mode, lang)
        + _type_pattern(type_, lang)
        + f"      FILTER(STRSTARTS(STR(?e), {sparql_string(ENTITY_PREFIX + 'Q')}))\n"
        + f"    }}\n    ORDER BY ?e\n    LIMIT {sparql_int(limit)}\n  }}\n"
        + _info_patterns(lang)
        + "}\n"
    )


def entity_info_query(entity_ids: Iterable[str], *, lang: str = "en") -> str:
    """Name, types and description of the given items (same rows as find_entities_query)."""
    values = " ".join(f"wd:{item_id(q)}" for q in entity_ids)
    return (
        PREFIXES
        + "SELECT ?e ?name ?type ?typeLabel ?description WHERE {\n"
        + f"  VALUES ?e {{ {values} }}\n"
        + _info_patterns(lang)
        + "}\n"
    )


def claims_query(
    entity_id: str,
    *,
    relation_label: str | None = None,
    relation_ids: Iterable[str] = (),
    lang: str = "en",
) -> str:
    """The item's direct (``wdt:``) claims with property and value labels.

    Rows: ``?p ?propLabel ?v ?valueLabel ?subjectLabel ?description``.

    Args:
        entity_id: The subject item.
        relation_label: Keep only properties with this label.
        relation_ids: Keep only these properties (combined with ``relation_label`` by OR).
        lang: Label language.
    """
    subject = f"wd:{item_id(entity_id)}"
    lit = sparql_string(language_tag(lang))
    ids = [f"wdt:{property_id(p)}" for p in relation_ids]
    if relation_label is None and not ids:
        restrict = ""
    else:
        options = [f"?p IN ({', '.join(ids)})"] if ids else []
        if relation_label is not None:
            options.append(f"?propLabel = {sparql_string(relation_label, lang=lang)}")
        restrict = f"  FILTER({' || '.join(options)})\n"
    return (
        PREFIXES
        + "SELECT ?p ?propLabel ?v ?valueLabel ?subjectLabel ?description WHERE {\n"
        + f"  {subject} ?p ?v .\n"
        + "  ?prop wikibase:directClaim ?p ;\n        rdfs:label ?propLabel .\n"
        + f"  FILTER(LANG(?propLabel) = {lit})\n"
        + restrict
        + f"  OPTIONAL {{ ?v rdfs:label ?valueLabel . FILTER(LANG(?valueLabel) = {lit}) }}\n"
        + f"  OPTIONAL {{ {subject} rdfs:label ?subjectLabel . "
        + f"FILTER(LANG(?subjectLabel) = {lit}) }}\n"
        + f"  OPTIONAL {{ {subject} schema:description ?description . "
        + f"FILTER(LANG(?description) = {lit}) }}\n"
        + "}\n"
    )
