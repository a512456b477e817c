"""SparqlEndpointKG end to end through HTTP against a local pyoxigraph-backed SPARQL server, and
the audited literal serialiser proven against pyoxigraph's own SPARQL parser."""

from __future__ import annotations

import asyncio
import json
import random
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from _sparql_server import SparqlServer
from citegraph.errors import KGQueryError
from citegraph.kg import (
    KALMA_RELATION_NAMES,
    Entity,
    KnowledgeGraph,
    SparqlClient,
    SparqlClientConfig,
    SparqlEndpointKG,
    Triple,
    sparql_string,
)
from citegraph.kg._sparql_literal import item_id, language_tag, property_id, sparql_int
from citegraph.kg._sparql_queries import find_entities_query

WD = "http://www.wikidata.org/entity/"
RDFS_LABEL = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")

# A tiny Wikidata-shaped graph. Q20 has an "unknown value" place of death (a genid IRI) and
# P9999 has no English label: both must be skipped. Q18127 (Newark) has a label and no claims.
TURTLE = """
@prefix wd: <http://www.wikidata.org/entity/> .
@prefix wdt: <http://www.wikidata.org/prop/direct/> .
@prefix p: <http://www.wikidata.org/prop/> .
@prefix wikibase: <http://wikiba.se/ontology#> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix schema: <http://schema.org/> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .

wd:Q206534 rdfs:label "Stephen Crane"@en, "Stephen Crane"@de ;
    schema:description "American writer"@en, "US-amerikanischer Schriftsteller"@de ;
    wdt:P31 wd:Q5 ;
    wdt:P19 wd:Q18127 ;
    wdt:P20 <http://www.wikidata.org/.well-known/genid/0f3c> ;
    wdt:P569 "1871-11-01T00:00:00Z"^^xsd:dateTime ;
    wdt:P106 wd:Q36180, wd:Q49757 ;
    wdt:P18 <http://commons.wikimedia.org/wiki/Special:FilePath/Stephen%20Crane.jpg> ;
    wdt:P1412 wd:Q1860 ;
    wdt:P1477 "Stephen Townley Crane"@en ;
    wdt:P9999 "ignored" ;
    p:P19 wd:statement-1 .
wd:Q7609 rdfs:label "Stephen Crane"@en ; wdt:P31 wd:Q11446 .
wd:Q100 rdfs:label "stephen crane"@en ; wdt:P31 wd:Q5 .
wd:Q2599 rdfs:label "Paul McCartney"@en ; wdt:P31 wd:Q5 .
wd:Q18127 rdfs:label "Newark"@en .
wd:Q5 rdfs:label "human"@en .
wd:Q11446 rdfs:label "ship"@en .
wd:Q36180 rdfs:label "writer"@en .
wd:Q49757 rdfs:label "poet"@en .
wd:P31 wikibase:directClaim wdt:P31 ; rdfs:label "instance of"@en .
wd:P19 wikibase:directClaim wdt:P19 ; rdfs:label "place of birth"@en, "Geburtsort"@de .
wd:P20 wikibase:directClaim wdt:P20 ; rdfs:label "place of death"@en .
wd:P569 wikibase:directClaim wdt:P569 ; rdfs:label "date of birth"@en .
wd:P106 wikibase:directClaim wdt:P106 ; rdfs:label "occupation"@en .
wd:P18 wikibase:directClaim wdt:P18 ; rdfs:label "image"@en .
wd:P1412 wikibase:directClaim wdt:P1412 ; rdfs:label "languages spoken, written or signed"@en .
wd:P1477 wikibase:directClaim wdt:P1477 ; rdfs:label "birth name"@en .
wd:P9999 wikibase:directClaim wdt:P9999 ; rdfs:label "Testeigenschaft"@de .
"""

INJECTIONS = [
    'x" } DROP ALL #',
    '\\"; DELETE WHERE { ?s ?p ?o } #',
    "x' } . ?e ?p ?o . #",
    "line one\nline two\r\n} #",
    "tab\tbackspace\bformfeed\f",
    "back\\slash\\",
    "\\",
    '"',
    "\\u0022 } DROP ALL #",  # a literal backslash-u: must not become a quote
    "Zoë Ünïcödé ☃ 𝄞 \u2028 \x7f",
    "}} LIMIT 1000 } UNION { ?e ?p ?o",
    "",
]
INJECTION_QIDS = {s: f"Q{900001 + i}" for i, s in enumerate(INJECTIONS)}


def build_store() -> ox.Store:
    store = ox.Store()
    store.load(input=TURTLE, format=ox.RdfFormat.TURTLE)
    human = ox.NamedNode(WD + "Q5")
    instance_of = ox.NamedNode("http://www.wikidata.org/prop/direct/P31")
    for text, qid in INJECTION_QIDS.items():
        node = ox.NamedNode(WD + qid)
        store.add(ox.Quad(node, RDFS_LABEL, ox.Literal(text, language="en")))
        store.add(ox.Quad(node, instance_of, human))
    return store


@pytest.fixture
def endpoint() -> Iterator[SparqlServer]:
    server = SparqlServer(build_store())
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def kg_for(server: SparqlServer, **kg_options: Any) -> SparqlEndpointKG:
    cache_path = kg_options.pop("cache_path", None)
    method = kg_options.pop("method", "POST")
    config = SparqlClientConfig(
        endpoint=server.url,
        user_agent="citegraph-tests/1.0 (tests@example.org)",
        method=method,
        max_retries=0,
        cache_path=cache_path,
    )
    return SparqlEndpointKG(SparqlClient(config), **kg_options)


def run(kg: SparqlEndpointKG, method: str, *args: Any, **kwargs: Any) -> Any:
    async def go() -> Any:
        try:
            return await getattr(kg, method)(*args, **kwargs)
        finally:
            await kg.aclose()

    return asyncio.run(go())


def ids(entities: list[Entity]) -> list[str]:
    return [e.id for e in entities]


# ---------------------------------------------------------------- find_entities
def test_find_entities_exact_with_types_and_descriptions(endpoint: SparqlServer) -> None:
    kg = kg_for(endpoint)
    assert isinstance(kg, KnowledgeGraph)
    found = run(kg, "find_entities", "Stephen Crane")
    # Q100's label is lower case, so the exact lookup finds the writer and the ship only,
    # sorted by QID number (7609 < 206534).
    assert found == [
        Entity(id="Q7609", name="Stephen Crane", types=("ship",)),
        Entity(id="Q206534", name="Stephen Crane", types=("human",), description="American writer"),
    ]
    assert 'rdfs:label "Stephen Crane"@en' in endpoint.queries[0]
    assert len(endpoint.queries) == 1


@pytest.mark.parametrize(
    ("type_", "expected"),
    [
        ("Q5", ["Q206534"]),
        ("human", ["Q206534"]),
        ("ship", ["Q7609"]),
        ("Q11446", ["Q7609"]),
        ("Q36180", []),
        ("Human", []),
    ],
)
def test_find_entities_type_filter(endpoint: SparqlServer, type_: str, expected: list[str]) -> None:
    assert ids(run(kg_for(endpoint), "find_entities", "Stephen Crane", type=type_)) == expected


def test_find_entities_limit_and_items_only(endpoint: SparqlServer) -> None:
    # The limit applies in IRI order: ".../Q206534" sorts before ".../Q7609" as a string.
    assert ids(run(kg_for(endpoint), "find_entities", "Stephen Crane", limit=1)) == ["Q206534"]
    assert run(kg_for(endpoint), "find_entities", "Stephen Crane", limit=0) == []
    # Property entities have labels too, but only items (Q…) are entities.
    assert run(kg_for(endpoint), "find_entities", "place of birth") == []


def test_find_entities_case_insensitive_variants(endpoint: SparqlServer) -> None:
    assert run(kg_for(endpoint), "find_entities", "STEPHEN CRANE") == []
    found = run(kg_for(endpoint), "find_entities", "STEPHEN CRANE", case_sensitive=False)
    # Variants "Stephen Crane" (title) and "stephen crane" (lower) both match.
    assert ids(found) == ["Q100", "Q7609", "Q206534"]
    assert [e.name for e in found] == ["stephen crane", "Stephen Crane", "Stephen Crane"]
    typed = run(kg_for(endpoint), "find_entities", "stephen CRANE", case_sensitive=False, type="Q5")
    assert ids(typed) == ["Q100", "Q206534"]
    # Documented limit of the variants mode: inner capitals are not among the variants.
    assert run(kg_for(endpoint), "find_entities", "paul mccartney", case_sensitive=False) == []


def test_find_entities_case_insensitive_scan(endpoint: SparqlServer) -> None:
    kg = kg_for(endpoint, case_insensitive="scan")
    assert ids(run(kg, "find_entities", "paul mccartney", case_sensitive=False)) == ["Q2599"]
    kg = kg_for(endpoint, case_insensitive="scan")
    found = run(kg, "find_entities", "sTePhEn CrAnE", case_sensitive=False)
    assert ids(found) == ["Q100", "Q7609", "Q206534"]


# ---------------------------------------------------------------- subgraph, facts, has_fact
CRANE = "Q206534"
IMAGE = "http://commons.wikimedia.org/wiki/Special:FilePath/Stephen%20Crane.jpg"
# By hand from TURTLE: the name fact first, then by property number (18, 19, 31, 106, 569, 1412,
# 1477) and value; P20 (unknown value) and P9999 (no English label) are skipped, the date is cut
# to YYYY-MM-DD and Q1860 has no label, so its id is the value.
EXPECTED = [
    ("name", "Stephen Crane", None, None),
    ("image", IMAGE, "P18", None),
    ("place of birth", "Newark", "P19", "Q18127"),
    ("instance of", "human", "P31", "Q5"),
    ("occupation", "poet", "P106", "Q49757"),
    ("occupation", "writer", "P106", "Q36180"),
    ("date of birth", "1871-11-01", "P569", None),
    ("languages spoken, written or signed", "Q1860", "P1412", "Q1860"),
    ("birth name", "Stephen Townley Crane", "P1477", None),
]


def test_subgraph_has_labels_dates_and_ids(endpoint: SparqlServer) -> None:
    sub = run(kg_for(endpoint), "subgraph", CRANE)
    assert sub.center == Entity(
        id=CRANE, name="Stephen Crane", types=("human",), description="American writer"
    )
    got = [(t.relation, t.value, t.relation_id, t.value_id) for t in sub.triples]
    assert got == EXPECTED
    assert all(t.subject == CRANE and t.subject_label == "Stephen Crane" for t in sub.triples)
    assert sub.as_dict()["place of birth"] == "Newark"


def test_subgraph_unknown_and_label_only_entities(endpoint: SparqlServer) -> None:
    with pytest.raises(KGQueryError, match="unknown entity Q404"):
        run(kg_for(endpoint), "subgraph", "Q404")
    newark = run(kg_for(endpoint), "subgraph", "Q18127")
    assert newark.center.name == "Newark"
    assert [t.as_list() for t in newark.triples] == [["Q18127", "name", "Newark"]]
    kg = kg_for(endpoint, include_name=False)
    assert run(kg, "subgraph", CRANE).triples[0].relation == "image"


def test_facts(endpoint: SparqlServer) -> None:
    occupations = run(kg_for(endpoint), "facts", CRANE, "occupation")
    assert [t.as_list() for t in occupations] == [
        [CRANE, "occupation", "poet"],
        [CRANE, "occupation", "writer"],
    ]
    assert [t.value for t in run(kg_for(endpoint), "facts", CRANE, "name")] == ["Stephen Crane"]
    everything = run(kg_for(endpoint), "facts", CRANE)
    assert [(t.relation, t.value) for t in everything] == [(r, v) for r, v, _, _ in EXPECTED]
    assert run(kg_for(endpoint), "facts", "Q404") == []
    assert run(kg_for(endpoint), "facts", CRANE, "Geburtsort") == []  # German label: not 'en'


def test_kalma_relation_names(endpoint: SparqlServer) -> None:
    kg = kg_for(endpoint, relation_names=KALMA_RELATION_NAMES)
    assert run(kg, "subgraph", CRANE).as_dict()["date_of_birth"] == "1871-11-01"
    kg = kg_for(endpoint, relation_names=KALMA_RELATION_NAMES)
    assert [t.value for t in run(kg, "facts", CRANE, "date_of_birth")] == ["1871-11-01"]
    kg = kg_for(endpoint, relation_names=KALMA_RELATION_NAMES)
    assert run(kg, "facts", CRANE, "date of birth") == []  # renamed away


def test_subgraph_matches_the_biokalma_format(endpoint: SparqlServer, data_dir: Path) -> None:
    entries = json.loads((data_dir / "biokalma" / "simple_question_graph.json").read_text())
    crane = next(e for _, ents in entries for e in ents if e["qid"] == CRANE)
    kg = kg_for(endpoint, relation_names=KALMA_RELATION_NAMES)
    ours = run(kg, "subgraph", CRANE).as_dict()
    for key in ("name", "qid", "place of birth", "instance of", "date_of_birth"):
        assert ours[key] == crane[key], key


@pytest.mark.parametrize(
    ("triple", "expected"),
    [
        ((CRANE, "place of birth", "Newark"), True),
        ((CRANE, "place of birth", "Boston"), False),
        ((CRANE, "date of birth", "1871-11-01"), True),
        ((CRANE, "date of birth", "1871-11-01T00:00:00Z"), False),
        ((CRANE, "occupation", "poet"), True),
        ((CRANE, "name", "Stephen Crane"), True),
        (("Q7609", "place of birth", "Newark"), False),
    ],
)
def test_has_fact(endpoint: SparqlServer, triple: tuple[str, str, str], expected: bool) -> None:
    assert run(kg_for(endpoint), "has_fact", Triple.from_list(triple)) is expected


def test_bad_ids_never_reach_the_endpoint(endpoint: SparqlServer) -> None:
    bad = Triple(subject='Q1" } DROP ALL #', relation="x", value="y")
    assert run(kg_for(endpoint), "has_fact", bad) is False
    for call, arg in [("subgraph", "Q5} DROP ALL #"), ("facts", "Q5\n"), ("subgraph", "Q05")]:
        with pytest.raises(KGQueryError):
            run(kg_for(endpoint), call, arg)
    with pytest.raises(KGQueryError):
        run(kg_for(endpoint), "find_entities", "x", type="Q05")
    assert endpoint.queries == []


def test_cache_means_one_request(endpoint: SparqlServer, tmp_path: Path) -> None:
    cache = tmp_path / "sparql.sqlite"
    first = run(kg_for(endpoint, cache_path=cache), "subgraph", CRANE)
    second = run(kg_for(endpoint, cache_path=cache), "subgraph", CRANE)
    assert first == second and list(first.triples) == list(second.triples)
    assert len(endpoint.queries) == 1


# ---------------------------------------------------------------- injection
@pytest.mark.parametrize("method", ["POST", "GET"])
def test_injection_strings_round_trip_through_http(endpoint: SparqlServer, method: str) -> None:
    size = len(endpoint.store)
    for text, qid in INJECTION_QIDS.items():
        found = run(kg_for(endpoint, method=method), "find_entities", text)
        assert [(e.id, e.name) for e in found] == [(qid, text)], text
        typed = run(kg_for(endpoint, method=method), "find_entities", text, type="human")
        assert ids(typed) == [qid]
    assert len(endpoint.store) == size  # nothing was deleted or added


def test_sparql_string_escapes_by_hand() -> None:
    # ECHARs per SPARQL 1.1 [160]: \\ \" \' \n \r \t \b \f.
    assert sparql_string('a"b\\c\n') == '"a\\"b\\\\c\\n"'
    assert sparql_string("it's\r\t\b\f") == '"it\\\'s\\r\\t\\b\\f"'
    assert sparql_string("Newark", lang="en") == '"Newark"@en'
    assert sparql_string("\\u0022") == '"\\\\u0022"'  # never emits a bare \u


def literal_value(store: ox.Store, text: str, lang: str | None = None) -> ox.Literal:
    results = store.query(f"SELECT ?x WHERE {{ BIND({sparql_string(text, lang=lang)} AS ?x) }}")
    assert isinstance(results, ox.QuerySolutions)
    (row,) = list(results)
    value = row["x"]
    assert isinstance(value, ox.Literal)
    return value


def test_literals_round_trip_through_pyoxigraph() -> None:
    store = ox.Store()
    for text in INJECTIONS:
        lit = literal_value(store, text, lang="en")
        assert (lit.value, lit.language) == (text, "en")
    rng = random.Random(20240607)
    alphabet = [*"\"'\\{}<>#.;,?$@ uUnrtbf0123456789\n\r\t\b\féß☃𝄞\u2028\x7f", "\\u0022"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 12)))
        assert literal_value(store, text).value == text, repr(text)


@pytest.mark.parametrize("mode", ["exact", "variants", "scan"])
def test_generated_queries_select_exactly_the_injected_label(mode: str) -> None:
    store = build_store()
    size = len(store)
    for text, qid in INJECTION_QIDS.items():
        for type_ in (None, "Q5", "human"):
            query = find_entities_query(text, type_=type_, mode=mode, limit=50)  # type: ignore[arg-type]
            results = store.query(query)
            assert isinstance(results, ox.QuerySolutions)
            found = {row["e"].value for row in results}
            # Case variants of these strings label no other entity ("" excepted: no variants).
            assert found == {WD + qid}, (mode, text)
    assert len(store) == size


@pytest.mark.parametrize("text", ["nul\x00", "esc\x1b[0m", "vt\x0b", "lone \ud800 surrogate"])
def test_unescapable_characters_are_refused(text: str) -> None:
    with pytest.raises(KGQueryError, match="U\\+"):
        sparql_string(text)


def test_id_and_token_validation() -> None:
    assert item_id("Q206534") == "Q206534" and property_id("P19") == "P19"
    for bad in ["Q0", "Q05", "Q5\n", "Q5 ", "q5", "Q", "Q5} DROP ALL", "P19", "Q١"]:
        with pytest.raises(KGQueryError):
            item_id(bad)
    for bad in ["P0", "Q1", "P19\n", "P1.5"]:
        with pytest.raises(KGQueryError):
            property_id(bad)
    assert language_tag("en-GB") == "en-GB"
    for bad_tag in ['en"', "en fr", "", "en\n"]:
        with pytest.raises(KGQueryError):
            language_tag(bad_tag)
    assert sparql_int(50) == "50"
    for bad_int in [True, -1, 1.5, "5"]:
        with pytest.raises(KGQueryError):
            sparql_int(bad_int)  # type: ignore[arg-type]
    with pytest.raises(KGQueryError):
        sparql_string(b"bytes")  # type: ignore[arg-type]
