"""Short ids of entities whose ids are IRIs: CURIEs from the RDF file's prefixes, compact local
names, the way back, and the prefixes surviving the on-disk cache."""

from __future__ import annotations

from pathlib import Path

import pytest

from citegraph.kg import (
    Entity,
    OxigraphKG,
    ShortIds,
    SparqlClient,
    SparqlClientConfig,
    SparqlEndpointKG,
    Subgraph,
    compact_ids,
    load_rdf_kg,
    with_short_ids,
)
from citegraph.kg._load_rdf import RDF_LOADER_VERSION

EX = "http://example.org/kg/"

WITH_PREFIXES = """\
@prefix ex: <http://example.org/kg/> .
@prefix prop: <http://example.org/kg/prop/> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:MarieCurie rdfs:label "Marie Curie"@en ;
    prop:awardReceived ex:NobelPhysics ;
    prop:spouse ex:PierreCurie .
ex:PierreCurie rdfs:label "Pierre Curie"@en ; prop:awardReceived ex:NobelPhysics .
ex:NobelPhysics rdfs:label "Nobel Prize in Physics"@en .
prop:awardReceived rdfs:label "award received"@en .
prop:spouse rdfs:label "spouse"@en .
"""

# The same kind of KG without any prefix: every IRI written in full; two entities share the
# local name "Curie" (people/ and places/), one has a unique local name.
WITHOUT_PREFIXES = """\
<http://example.org/people/Curie> <http://example.org/p/field> "physics" .
<http://example.org/places/Curie> <http://example.org/p/country> "France" .
<http://example.org/people/Einstein> <http://example.org/p/field> "physics" .
<http://example.org/people/Einstein> <http://www.w3.org/2000/01/rdf-schema#label> "Albert Einstein"@en .
"""  # noqa: E501


@pytest.fixture
def ttl(tmp_path: Path) -> Path:
    path = tmp_path / "people.ttl"
    path.write_text(WITH_PREFIXES, encoding="utf-8")
    return path


def test_turtle_prefixes_give_curies(ttl: Path) -> None:
    kg = load_rdf_kg([ttl], use_cache=False)
    assert kg.prefixes == {
        "ex": EX,
        "prop": EX + "prop/",
        "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    }
    graph = kg.subgraph_sync(EX + "MarieCurie")
    # The internal id stays the full IRI; only the display id is short.
    assert graph.center.id == EX + "MarieCurie"
    assert graph.center.short_id == "ex:MarieCurie"
    assert graph.center.display_id == "ex:MarieCurie"
    assert {t.subject for t in graph.triples} == {EX + "MarieCurie"}
    assert kg.short_id_of(EX + "PierreCurie") == "ex:PierreCurie"
    assert kg.find_entities_sync("Pierre Curie")[0].short_id == "ex:PierreCurie"


def test_prefixes_and_short_ids_survive_the_disk_cache(ttl: Path, tmp_path: Path) -> None:
    first = load_rdf_kg([ttl], cache_dir=tmp_path / "cache")
    again = load_rdf_kg([ttl], cache_dir=tmp_path / "cache")
    assert first.imported and not again.imported  # the second one is the cached store
    assert again.prefixes == first.prefixes
    assert again.prefixes["ex"] == EX
    assert again.subgraph_sync(EX + "MarieCurie").center.short_id == "ex:MarieCurie"
    assert RDF_LOADER_VERSION == 3  # caches written before prefixes (2), label predicates (3)


def test_reverse_lookup_of_every_form(ttl: Path) -> None:
    kg = load_rdf_kg([ttl], use_cache=False)
    full = EX + "MarieCurie"
    for text in ("ex:MarieCurie", "MarieCurie", full, f"<{full}>", " ex:MarieCurie "):
        assert kg.resolve_id(text) == full, text
    assert kg.resolve_id("ex:Nobody") is None
    assert kg.resolve_id("Marie Curie") is None  # a label, not an id
    # The prize is only a value (no facts of its own), so it is not an entity to resolve.
    assert kg.resolve_id("ex:NobelPhysics") is None


def test_without_prefixes_local_names_when_unique(tmp_path: Path) -> None:
    path = tmp_path / "plain.nt"
    path.write_text(WITHOUT_PREFIXES, encoding="utf-8")
    kg = load_rdf_kg([path], use_cache=False)
    assert kg.prefixes == {}
    einstein = "http://example.org/people/Einstein"
    assert kg.subgraph_sync(einstein).center.short_id == "Einstein"
    # "Curie" names two entities: both keep their full IRI, and no short id is set.
    people_curie = kg.subgraph_sync("http://example.org/people/Curie").center
    assert people_curie.short_id is None
    assert people_curie.display_id == "http://example.org/people/Curie"
    assert kg.resolve_id("Einstein") == einstein
    assert kg.resolve_id("Curie") is None


def test_stable_short_id_whatever_the_order() -> None:
    ids = [EX + "A", "http://other.org/A", "http://other.org/B", "Q42"]
    assert compact_ids(ids) == compact_ids(list(reversed(ids)))
    assert compact_ids(ids) == {
        EX + "A": EX + "A",  # local name A is shared: full IRI
        "http://other.org/A": "http://other.org/A",
        "http://other.org/B": "B",
        "Q42": "Q42",  # QIDs are their own short id
    }


def test_compact_ids_prefix_rules() -> None:
    prefixes = {"ex": EX, "exp": EX + "people/", "": EX, "zz": EX}
    out = compact_ids([EX + "people/Curie", EX + "Curie", EX + "a/b", "urn:isbn:1", "e1"], prefixes)
    assert out == {
        EX + "people/Curie": "exp:Curie",  # the longest namespace wins
        EX + "Curie": "ex:Curie",  # on a tie ex < zz; the empty prefix is never used
        EX + "a/b": "b",  # 'a/b' is no plain local part, so the unique local name
        "urn:isbn:1": "urn:isbn:1",  # no '/' or '#': stays in full
        "e1": "e1",  # not an IRI
    }
    # A local name that reads as a QID is never used (it would be taken for Wikidata's).
    assert compact_ids(["http://x.org/Q5"]) == {"http://x.org/Q5": "http://x.org/Q5"}


def test_short_ids_resolve_curies_of_declared_prefixes() -> None:
    table = ShortIds([EX + "people/Curie"], {"ex": EX, "exp": EX + "people/"})
    assert table.short(EX + "people/Curie") == "exp:Curie"
    assert table.resolve("exp:Curie") == EX + "people/Curie"
    assert table.resolve("Curie") == EX + "people/Curie"
    # The CURIE of the shorter namespace expands to the same IRI.
    assert table.resolve("ex:people/Curie") is None  # not a plain local part
    assert table.resolve("nope:Curie") is None


def test_with_short_ids_fills_graphs_from_json() -> None:
    # Graphs read from a dataset file (entity dicts whose qid is a full IRI) have no short id.
    graphs = [
        Subgraph.from_entity_dict({"qid": EX + "MarieCurie", "name": "Marie Curie", "x": "y"}),
        Subgraph.from_entity_dict({"qid": "Q7186", "name": "Marie Curie", "x": "y"}),
    ]
    filled = with_short_ids(graphs)
    assert filled[0].center.short_id == "MarieCurie"
    assert filled[1].center.short_id is None
    assert filled[1] is graphs[1]
    kept = with_short_ids([Subgraph(center=Entity(id=EX + "A", name="A", short_id="ex:A"))])
    assert kept[0].center.short_id == "ex:A"


def test_sparql_endpoint_well_known_prefixes() -> None:
    config = SparqlClientConfig(
        endpoint="http://localhost:9/sparql",
        user_agent="citegraph-tests/1.0 (tests@example.org)",
        max_retries=0,
    )
    kg = SparqlEndpointKG(SparqlClient(config))  # no request is made
    assert kg.short_id_of("Q7186") == "Q7186"
    assert kg.short_id_of("http://dbpedia.org/resource/Marie_Curie") == "dbr:Marie_Curie"
    assert kg.short_id_of("http://example.org/kg/X") == "http://example.org/kg/X"
    assert kg.resolve_id("wd:Q7186") == "Q7186"
    assert kg.resolve_id("http://www.wikidata.org/entity/Q7186") == "Q7186"
    assert kg.resolve_id("dbr:Marie_Curie") == "http://dbpedia.org/resource/Marie_Curie"
    assert kg.resolve_id("Marie Curie") is None
    assert isinstance(kg.prefixes, dict) and kg.prefixes["wd"].endswith("/entity/")


def test_in_memory_kg_without_rdf_has_no_prefixes() -> None:
    kg = OxigraphKG.in_memory()
    assert kg.prefixes == {}
    assert kg.short_id_of("Q1") == "Q1"
