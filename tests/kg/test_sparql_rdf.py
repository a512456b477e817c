"""SparqlRdfKG: your own RDF KG behind a SPARQL endpoint reads as the same file loaded locally.

The README's example KG (examples/own-kg/people.ttl) is served by a pyoxigraph store over HTTP
and compared, entity by entity, with ``load_rdf_kg`` of the same file.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyoxigraph as ox
import pytest

from _sparql_server import SparqlServer
from citegraph.errors import KGQueryError
from citegraph.kalma import score_answers
from citegraph.kg import (
    KnowledgeGraph,
    OxigraphKG,
    SparqlClient,
    SparqlClientConfig,
    SparqlRdfKG,
    Triple,
    load_rdf_kg,
)
from citegraph.kg._sparql_literal import sparql_iri

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "own-kg"
PEOPLE = EXAMPLE / "people.ttl"
EX = "http://example.org/kg/"


def _serve(store: ox.Store) -> Iterator[SparqlServer]:
    server = SparqlServer(store)
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


@pytest.fixture
def endpoint() -> Iterator[SparqlServer]:
    store = ox.Store()
    store.load(path=str(PEOPLE), format=ox.RdfFormat.TURTLE)
    yield from _serve(store)


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> OxigraphKG:
    return load_rdf_kg([PEOPLE], cache_dir=tmp_path_factory.mktemp("kg"))


def remote(server: SparqlServer, **options: Any) -> SparqlRdfKG:
    config = SparqlClientConfig(
        endpoint=server.url,
        user_agent="citegraph-tests/1.0 (tests@example.org)",
        max_retries=0,
        cache_path=None,
    )
    return SparqlRdfKG(SparqlClient(config), **options)


def run(kg: SparqlRdfKG, calls: Any) -> Any:
    async def go() -> Any:
        try:
            return await calls(kg)
        finally:
            await kg.aclose()

    return asyncio.run(go())


def keys(triples: Any) -> set[tuple[str, str, str, str | None, str | None, str | None]]:
    return {
        (t.subject, t.relation, t.value, t.subject_label, t.relation_id, t.value_id)
        for t in triples
    }


def test_every_entity_reads_as_the_embedded_store_reads_it(
    endpoint: SparqlServer, local: OxigraphKG
) -> None:
    kg = remote(endpoint)
    assert isinstance(kg, KnowledgeGraph)
    entity_ids = local.entity_ids_sync()
    assert len(entity_ids) == 7
    values = {t.value_id for i in entity_ids for t in local.facts_sync(i) if t.value_id}

    async def calls(kg: SparqlRdfKG) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for entity_id in [*entity_ids, *sorted(values)]:
            graph = await kg.subgraph(entity_id)
            name = graph.center.name
            out[entity_id] = {
                "graph": graph,
                "facts": await kg.facts(entity_id),
                "exact": await kg.find_entities(name),
                "folded": await kg.find_entities(name.upper(), case_sensitive=False),
                "by_relation": {
                    t.relation: await kg.facts(entity_id, t.relation) for t in graph.triples
                },
                "held": [await kg.has_fact(t) for t in graph.triples],
            }
        return out

    got = run(kg, calls)
    for entity_id, seen in got.items():
        want = local.subgraph_sync(entity_id)
        graph = seen["graph"]
        assert keys(graph.triples) == keys(want.triples), entity_id
        assert [t.relation for t in graph.triples] == [t.relation for t in want.triples]
        assert (graph.center.id, graph.center.name) == (want.center.id, want.center.name)
        assert set(graph.center.types) == set(want.center.types)
        assert graph.center.description == want.center.description
        assert keys(seen["facts"]) == keys(local.facts_sync(entity_id))
        name = want.center.name
        assert [e.id for e in seen["exact"]] == [e.id for e in local.find_entities_sync(name)]
        folded = local.find_entities_sync(name.upper(), case_sensitive=False)
        assert [e.id for e in seen["folded"]] == [e.id for e in folded]
        for relation, facts in seen["by_relation"].items():
            assert keys(facts) == keys(local.facts_sync(entity_id, relation))
        assert all(seen["held"])
    # Both William Thomsons, ordered by id, as the embedded store orders them.
    thomsons = got[EX + "WilliamThomson"]["exact"]
    assert [e.id for e in thomsons] == [EX + "WilliamThomson", EX + "WilliamThomsonArchbishop"]


def test_misses_and_wrong_facts(endpoint: SparqlServer) -> None:
    async def calls(kg: SparqlRdfKG) -> list[Any]:
        wrong = Triple(subject=EX + "PierreCurie", relation="place of birth", value="Lyon")
        right = wrong.model_copy(update={"value": "Paris"})
        return [
            await kg.find_entities("marie curie"),  # exact lookup is case-sensitive
            await kg.find_entities("place of birth"),  # a property, not an entity
            await kg.find_entities("Marie Curie", limit=0),
            await kg.has_fact(wrong),
            await kg.has_fact(right),
            await kg.facts(EX + "Nobody"),
            await kg.facts("not an iri"),
        ]

    assert run(remote(endpoint), calls) == [[], [], [], False, True, [], []]
    with pytest.raises(KGQueryError, match="unknown entity"):
        run(remote(endpoint), lambda kg: kg.subgraph(EX + "Nobody"))


def test_short_ids_from_the_given_prefixes(endpoint: SparqlServer) -> None:
    kg = remote(endpoint, prefixes={"ex": EX})
    assert kg.short_id_of(EX + "MarieCurie") == "ex:MarieCurie"
    assert kg.resolve_id("ex:MarieCurie") == EX + "MarieCurie"
    assert kg.resolve_id(f"<{EX}MarieCurie>") == EX + "MarieCurie"
    assert kg.resolve_id("wd:Q7186") == "Q7186"
    assert kg.resolve_id("Marie Curie") is None
    assert kg.resolve_id("http://example.org/a>b") is None
    found = run(kg, lambda kg: kg.find_entities("Marie Curie"))
    assert [e.short_id for e in found] == ["ex:MarieCurie"]
    # Without prefixes an IRI outside the well-known namespaces is shown in full.
    assert remote(endpoint).short_id_of(EX + "MarieCurie") == EX + "MarieCurie"


HOSTILE = 'Mr "Quote" \\ back\nslash\'s } ; DROP ALL #'


@pytest.fixture
def hostile_endpoint() -> Iterator[SparqlServer]:
    store = ox.Store()
    person, pred = ox.NamedNode(EX + "Odd"), ox.NamedNode(EX + "motto")
    label = ox.NamedNode("http://www.w3.org/2000/01/rdf-schema#label")
    store.add(ox.Quad(person, label, ox.Literal(HOSTILE)))
    store.add(ox.Quad(person, pred, ox.Literal(HOSTILE + " too", language="en")))
    yield from _serve(store)


def test_hostile_labels_round_trip(hostile_endpoint: SparqlServer) -> None:
    async def calls(kg: SparqlRdfKG) -> list[Any]:
        return [
            await kg.find_entities(HOSTILE),
            await kg.find_entities(HOSTILE.upper(), case_sensitive=False),
            await kg.facts(EX + "Odd", "motto"),
        ]

    exact, folded, facts = run(remote(hostile_endpoint), calls)
    assert [(e.id, e.name) for e in exact] == [(EX + "Odd", HOSTILE)]
    assert [e.id for e in folded] == [EX + "Odd"]
    assert [(t.relation, t.value, t.subject_label) for t in facts] == [
        ("motto", HOSTILE + " too", HOSTILE)
    ]
    store = hostile_endpoint.store
    assert len(store) == 2  # no query changed the store


@pytest.mark.parametrize(
    "bad", ["http://x> } DROP ALL #", "http://x\\u003e", "no scheme", "http://x y", "http://x\n"]
)
def test_iris_that_could_leave_the_brackets_are_refused(bad: str) -> None:
    with pytest.raises(KGQueryError, match="not an IRI"):
        sparql_iri(bad)


def _full_iris(text: str) -> str:
    return text.replace("ex:", EX).replace('"NielsBohr"', f'"{EX}NielsBohr"')


@pytest.mark.needs("spacy")
def test_scores_over_the_endpoint_equal_the_scores_over_the_file(
    endpoint: SparqlServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("CITEGRAPH_CACHE", str(tmp_path / "cache"))
    # The endpoint KG reads no prefixes from the file: ids are written as full IRIs, and the
    # gold's local name (NielsBohr) too, which only the embedded store can read back.
    answers = tmp_path / "answers.jsonl"
    answers.write_text(_full_iris((EXAMPLE / "answers.jsonl").read_text()), encoding="utf-8")
    gold = tmp_path / "gold.jsonl"
    gold.write_text(_full_iris((EXAMPLE / "gold.jsonl").read_text()), encoding="utf-8")
    over_file = score_answers(answers, tmp_path / "file", kg=str(PEOPLE), gold_path=gold)
    over_endpoint = score_answers(
        answers, tmp_path / "sparql", kg="sparql+" + endpoint.url, gold_path=gold
    )
    metrics = over_endpoint.metrics
    assert metrics["correctness"]["micro"] == pytest.approx(8 / 9)
    assert metrics["precision"]["micro"] == pytest.approx(7 / 9)
    assert metrics["recall"]["micro"] == pytest.approx(7 / 9)
    for name in ("correctness", "precision", "recall", "f1", "alignment", "na_precision"):
        assert metrics[name] == over_file.metrics[name], name
    assert metrics["n_citations"] == 9
    assert metrics["config"]["kg"] == "sparql+" + endpoint.url
