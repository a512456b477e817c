"""SPARQL query texts for a plain RDF graph (any vocabulary) behind a SPARQL 1.1 endpoint.

Used by :class:`citegraph.kg._sparql_rdf.SparqlRdfKG`. Two queries, both with constant template
text: user strings enter only through :func:`sparql_string`, IRIs through :func:`sparql_iri`,
the limit through :func:`sparql_int`.

- :func:`label_matches_query`: the IRI subjects with an English (``@en``) or untagged
  ``rdfs:label`` equal to a name (exact), or equal after ``LCASE`` with an English (``en``,
  ``en-*``) or untagged language (case-insensitive: a scan of the labels, fine on your own KG,
  slow on a Wikidata-sized one). Terms used as predicates, or typed as properties, are left out.
- :func:`describe_query`: every triple of one subject, with the labels of its predicates and
  values (one row per combination of labels), from which names, types and facts are read.
"""

from __future__ import annotations

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


def label_matches_query(name: str, *, case_sensitive: bool, limit: int) -> str:
    """IRI subjects (``?e``) labelled ``name``, not properties, ordered by IRI, at most ``limit``.

    Exact: ``"name"@en`` or ``"name"``. Case-insensitive: ``LCASE`` equality over labels in
    English or without a language (the caller re-checks with :meth:`str.casefold`).
    """
    if case_sensitive:
        values = f"{sparql_string(name, lang='en')} {sparql_string(name)}"
        match = f"  VALUES ?label {{ {values} }}\n  ?e rdfs:label ?label .\n"
    else:
        match = (
            "  ?e rdfs:label ?label .\n"
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


def describe_query(iri: str) -> str:
    """Every triple of the subject ``iri``: rows ``?p ?v ?pLabel ?vLabel`` (labels optional)."""
    subject = sparql_iri(iri)
    return (
        PREFIXES
        + "SELECT ?p ?v ?pLabel ?vLabel WHERE {\n"
        + f"  {subject} ?p ?v .\n"
        + "  OPTIONAL { ?p rdfs:label ?pLabel . FILTER(isLiteral(?pLabel)) }\n"
        + "  OPTIONAL { ?v rdfs:label ?vLabel . FILTER(isLiteral(?vLabel)) }\n"
        + "}\n"
    )
