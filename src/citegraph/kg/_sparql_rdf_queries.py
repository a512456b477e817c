"""SPARQL query texts for a plain RDF graph (any vocabulary) behind a SPARQL 1.1 endpoint.

Used by :class:`citegraph.kg._sparql_rdf.SparqlRdfKG`. Two queries, both with constant template
text: user strings enter only through :func:`sparql_string`, IRIs through :func:`sparql_iri`,
the limit through :func:`sparql_int`.

- :func:`label_matches_query`: the IRI subjects with an English (``@en``) or untagged label
  (of any of the label predicates given, e.g. ``rdfs:label``, ``skos:prefLabel``) equal to a
  name (exact), or equal after ``LCASE`` with an English (``en``, ``en-*``) or untagged language
  (case-insensitive: a scan of the labels, fine on your own KG, slow on a Wikidata-sized one).
  Terms used as predicates, or typed as properties, are left out.
- :func:`describe_query`: every triple of one subject, with the labels of its predicates and
  values and the label predicate of each (one row per combination of labels), from which names,
  types and facts are read.
"""

from __future__ import annotations

from collections.abc import Sequence

from citegraph.kg._sparql_literal import sparql_int, sparql_iri, sparql_string

__all__ = ["PROPERTY_CLASS_IRIS", "describe_query", "label_matches_query"]

#: Classes whose ``rdf:type`` marks a property (as in :data:`citegraph.kg._rdf.PROPERTY_CLASSES`).
PROPERTY_CLASS_IRIS = (
    "http://www.w3.org/1999/02/22-rdf-syntax-ns#Property",
    "http://www.w3.org/2002/07/owl#ObjectProperty",
    "http://www.w3.org/2002/07/owl#DatatypeProperty",
    "http://wikiba.se/ontology#Property",
)

PREFIXES = """PREFIX rdf: <http://www.w3.org/1999/02/22-rdf-syntax-ns#>
PREFIX rdfs: <http://www.w3.org/2000/01/rdf-schema#>
"""


def _values(variable: str, iris: Sequence[str]) -> str:
    return f"VALUES {variable} {{ {' '.join(sparql_iri(iri) for iri in iris)} }}"


def label_matches_query(
    name: str,
    *,
    case_sensitive: bool,
    limit: int,
    label_predicates: Sequence[str],
) -> str:
    """IRI subjects (``?e``) labelled ``name`` by one of ``label_predicates``, not properties,
    ordered by IRI, at most ``limit``.

    Exact: ``"name"@en`` or ``"name"``. Case-insensitive: ``LCASE`` equality over labels in
    English or without a language (the caller re-checks with :meth:`str.casefold`).
    """
    by = f"  {_values('?labelBy', label_predicates)}\n"
    if case_sensitive:
        values = f"{sparql_string(name, lang='en')} {sparql_string(name)}"
        match = f"  VALUES ?label {{ {values} }}\n{by}  ?e ?labelBy ?label .\n"
    else:
        match = (
            f"{by}  ?e ?labelBy ?label .\n"
            '  FILTER((LANG(?label) = "" || LANGMATCHES(LANG(?label), "en")) && '
            f"LCASE(STR(?label)) = LCASE({sparql_string(name)}))\n"
        )
    classes = " ".join(sparql_iri(iri) for iri in PROPERTY_CLASS_IRIS)
    return (
        PREFIXES
        + "SELECT DISTINCT ?e WHERE {\n"
        + match
        + "  FILTER(isIRI(?e))\n"
        + "  FILTER NOT EXISTS { ?anyS ?e ?anyO }\n"
        + f"  FILTER NOT EXISTS {{ VALUES ?cls {{ {classes} }} ?e rdf:type ?cls }}\n"
        + f"}}\nORDER BY ?e\nLIMIT {sparql_int(limit)}\n"
    )


def describe_query(iri: str, *, label_predicates: Sequence[str]) -> str:
    """Every triple of the subject ``iri``: rows ``?p ?v ?pLabel ?pLabelBy ?vLabel ?vLabelBy``
    (labels optional; ``?…By`` is the label predicate each label was read from)."""
    subject = sparql_iri(iri)
    p_by, v_by = _values("?pLabelBy", label_predicates), _values("?vLabelBy", label_predicates)
    return (
        PREFIXES
        + "SELECT ?p ?v ?pLabel ?pLabelBy ?vLabel ?vLabelBy WHERE {\n"
        + f"  {subject} ?p ?v .\n"
        + f"  OPTIONAL {{ {p_by} ?p ?pLabelBy ?pLabel . FILTER(isLiteral(?pLabel)) }}\n"
        + f"  OPTIONAL {{ {v_by} ?v ?vLabelBy ?vLabel . FILTER(isLiteral(?vLabel)) }}\n"
        + "}\n"
    )
