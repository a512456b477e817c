"""Names from rdfs:label, skos:prefLabel, skos:altLabel, schema:name, foaf:name and
``--label-predicate``: the same over the file (embedded store) and over SPARQL.

The KG below is read by hand first. Facts (default-graph triples whose predicate is not a label
predicate): Warsaw has 4 (located on river Vistula, country Poland, population 1860000,
officialName "Capital City of Warsaw"), Berlin 2 (located on river Spree, country Germany),
Germany 1 (officialName "Federal Republic of Germany"): 7. With ``--label-predicate
ex:officialName`` the two officialName triples are names: 5 facts. Display names (the first
label predicate with an English or untagged label; else another language):

=========  ==============================  =============================================
entity     default predicates              with ex:officialName first
=========  ==============================  =============================================
Warsaw     Warsaw (rdfs:label@en beats     Capital City of Warsaw (the user's predicate
           skos:prefLabel "Warszawa"@pl)   comes first)
Vistula    Vistula (skos:prefLabel)        Vistula
Poland     Poland (http schema:name;       Poland
           foaf:name "Polska"@pl)
Berlin     Berlin (https schema:name)      Berlin
Spree      Spree (foaf:name)               Spree
Germany    Deutschland (only a @de label)  Federal Republic of Germany
=========  ==============================  =============================================

Relation names: ``located on river`` (rdfs:label), ``country`` (skos:prefLabel), ``population``
and ``officialName`` (no label: the IRI's last segment).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from _sparql_server import SparqlServer, serving
from citegraph.kg import (
    OxigraphKG,
    SparqlClient,
    SparqlClientConfig,
    SparqlRdfKG,
    load_rdf_kg,
)

GEO = "https://data.example.net/geo#"
OFFICIAL = "https://data.example.net/vocab#officialName"

KG_TTL = """\
@prefix geo: <https://data.example.net/geo#> .
@prefix ex: <https://data.example.net/vocab#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix skos: <http://www.w3.org/2004/02/skos/core#> .
@prefix schema: <http://schema.org/> .
@prefix schemas: <https://schema.org/> .
@prefix foaf: <http://xmlns.com/foaf/0.1/> .

geo:river rdfs:label "located on river"@en .
geo:country skos:prefLabel "country" .

geo:Warsaw rdfs:label "Warsaw"@en ;
    skos:prefLabel "Warszawa"@pl ;
    skos:altLabel "Varsovie" ;
    ex:officialName "Capital City of Warsaw" ;
    geo:river geo:Vistula ;
    geo:country geo:Poland ;
    geo:population "1860000" .
geo:Vistula skos:prefLabel "Vistula" ; skos:altLabel "Wisła" .
geo:Poland schema:name "Poland" ; foaf:name "Polska"@pl .
geo:Berlin schemas:name "Berlin" ; geo:river geo:Spree ; geo:country geo:Germany .
geo:Spree foaf:name "Spree" .
geo:Germany rdfs:label "Deutschland"@de ;
    ex:officialName "Federal Republic of Germany" .
"""

NAMES = {
    "Warsaw": "Warsaw",
    "Vistula": "Vistula",
    "Poland": "Poland",
    "Berlin": "Berlin",
    "Spree": "Spree",
    "Germany": "Deutschland",
}
NAMES_OFFICIAL = NAMES | {
    "Warsaw": "Capital City of Warsaw",
    "Germany": "Federal Republic of Germany",
}
WARSAW_FACTS = [
    ("country", "Poland"),
    ("located on river", "Vistula"),
    ("officialName", "Capital City of Warsaw"),
    ("population", "1860000"),
]
#: A label (any case) -> the entities it names.
LOOKUPS = {
    "varsovie": ["Warsaw"],  # skos:altLabel
    "WISŁA": ["Vistula"],  # skos:altLabel, case-insensitive
    "poland": ["Poland"],  # schema:name
    "berlin": ["Berlin"],  # https schema:name
    "spree": ["Spree"],  # foaf:name
    "Located on river": [],  # a property's name, not an entity's
}


@pytest.fixture(scope="module")
def kg_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("geo") / "geo.ttl"
    path.write_text(KG_TTL, encoding="utf-8")
    return path


def _load(path: Path, tmp: Path, *preds: str) -> OxigraphKG:
    return load_rdf_kg([path], label_predicates=preds, cache_dir=tmp / "cache")


@pytest.fixture
def endpoint(kg_file: Path) -> Iterator[SparqlServer]:
    with serving(kg_file) as server:
        yield server


def _remote(server: SparqlServer, *preds: str) -> SparqlRdfKG:
    config = SparqlClientConfig(
        endpoint=server.url, user_agent="citegraph-tests/1.0 (tests@example.org)", max_retries=0
    )
    return SparqlRdfKG(SparqlClient(config), label_predicates=preds)


async def _read(kg: Any) -> dict[str, Any]:
    """Names, Warsaw's facts and the label lookups, through the async protocol."""
    names = {local: (await kg.subgraph(GEO + local)).center.name for local in NAMES}
    facts = [(t.relation, t.value) for t in await kg.facts(GEO + "Warsaw")]
    lookups = {}
    for text in LOOKUPS:
        found = await kg.find_entities(text, case_sensitive=False)
        lookups[text] = [e.id.removeprefix(GEO) for e in found]
    exact = [e.id for e in await kg.find_entities("Varsovie")]
    return {"names": names, "facts": facts, "lookups": lookups, "exact": exact}


def test_every_label_predicate_names_and_none_is_a_fact(kg_file: Path, tmp_path: Path) -> None:
    kg = _load(kg_file, tmp_path)
    assert len(kg) == 7
    got = asyncio.run(_read(kg))
    assert got["names"] == NAMES
    assert got["facts"] == WARSAW_FACTS
    assert got["lookups"] == LOOKUPS
    assert got["exact"] == [GEO + "Warsaw"]
    berlin = [(t.relation, t.value) for t in kg.facts_sync(GEO + "Berlin")]
    assert berlin == [("country", "Deutschland"), ("located on river", "Spree")]


def test_a_given_label_predicate_comes_first_and_is_no_fact(kg_file: Path, tmp_path: Path) -> None:
    default = _load(kg_file, tmp_path)
    official = _load(kg_file, tmp_path, OFFICIAL)
    assert official.source_hash != default.source_hash  # its own cached store
    assert len(official) == 5
    got = asyncio.run(_read(official))
    assert got["names"] == NAMES_OFFICIAL
    assert got["facts"] == [f for f in WARSAW_FACTS if f[0] != "officialName"]
    found = official.find_entities_sync("federal republic of germany", case_sensitive=False)
    assert [e.id for e in found] == [GEO + "Germany"]
    # the cached store (opened again, not imported) still knows the order of its predicates
    again = _load(kg_file, tmp_path, OFFICIAL)
    assert not again.imported
    assert again.subgraph_sync(GEO + "Warsaw").center.name == "Capital City of Warsaw"


def test_over_sparql_the_same_names_facts_and_lookups(endpoint: SparqlServer) -> None:
    async def both() -> tuple[dict[str, Any], dict[str, Any]]:
        plain, official = _remote(endpoint), _remote(endpoint, OFFICIAL)
        try:
            return await _read(plain), await _read(official)
        finally:
            await plain.aclose()
            await official.aclose()

    plain, official = asyncio.run(both())
    assert plain["names"] == NAMES
    assert plain["facts"] == WARSAW_FACTS
    assert plain["lookups"] == LOOKUPS
    assert plain["exact"] == [GEO + "Warsaw"]
    assert official["names"] == NAMES_OFFICIAL
    assert official["facts"] == [f for f in WARSAW_FACTS if f[0] != "officialName"]
