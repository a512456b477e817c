"""Test helpers for knowledge-graph objects."""

from __future__ import annotations

from citegraph.kg import Entity, Subgraph, Triple


def subgraph(qid: str, name: str, *facts: tuple[str, str]) -> Subgraph:
    """A subgraph centred on ``qid`` (named ``name``) holding ``(relation, value)`` facts."""
    triples = tuple(Triple(subject=qid, relation=r, value=v) for r, v in facts)
    return Subgraph(center=Entity(id=qid, name=name), triples=triples)


#: The namespace of :data:`GEO_KG`.
GEO = "https://data.example.net/geo#"
#: A small Turtle KG of our own with a ``#`` namespace: Warsaw on the Vistula (Poland), Berlin on
#: the Spree (Germany), everything labelled with ``rdfs:label``.
GEO_KG = f"""@prefix geo: <{GEO}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
geo:locatedOnRiver rdfs:label "located on river" .
geo:country rdfs:label "country" .
geo:Warsaw rdfs:label "Warsaw" ; geo:locatedOnRiver geo:Vistula ; geo:country geo:Poland .
geo:Berlin rdfs:label "Berlin" ; geo:locatedOnRiver geo:Spree ; geo:country geo:Germany .
geo:Vistula rdfs:label "Vistula" .
geo:Spree rdfs:label "Spree" .
geo:Poland rdfs:label "Poland" .
geo:Germany rdfs:label "Germany" .
"""
