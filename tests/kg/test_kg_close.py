"""``KnowledgeGraph.aclose``: every KG closes; whoever opens one closes it.

An embedded store's ``aclose`` is a no-op (it stays usable); a SPARQL KG's closes its client, which
closes its HTTP transport (recorded by :class:`RecordingTransport`). ``async with open_kg(spec)``
and :func:`kg_with_identity` close the KG a spec opened, also when the block raises, and leave a
KG the caller gave open.
"""

from __future__ import annotations

import asyncio

import pyoxigraph as ox
import pytest

from _kg_helpers import GEO, GEO_KG
from _sparql_server import RecordingTransport, record_opened_clients
from citegraph.kg import (
    KnowledgeGraph,
    OxigraphKG,
    SparqlClient,
    SparqlRdfKG,
    kg_with_identity,
    open_kg,
    virtuoso,
)

SPEC = "sparql+http://kg.test/sparql"


@pytest.fixture
def store() -> ox.Store:
    store = ox.Store()
    store.load(GEO_KG.encode(), format=ox.RdfFormat.TURTLE)
    return store


async def _warsaw(kg: KnowledgeGraph) -> list[str]:
    return [e.id for e in await kg.find_entities("Warsaw")]


def test_every_backend_has_aclose_and_the_protocol_asks_for_it(store: ox.Store) -> None:
    assert "aclose" in dir(KnowledgeGraph)
    kg = OxigraphKG.in_memory()
    asyncio.run(kg.aclose())  # nothing to close; the store stays usable
    assert isinstance(kg, KnowledgeGraph) and len(kg) == 0


def test_a_sparql_kg_closes_its_client(store: ox.Store) -> None:
    transport = RecordingTransport(store)
    kg = SparqlRdfKG(SparqlClient(virtuoso("http://kg.test/sparql"), transport=transport))

    async def use() -> list[str]:
        found = await _warsaw(kg)
        assert not transport.closed
        await kg.aclose()
        return found

    assert asyncio.run(use()) == [f"{GEO}Warsaw"]
    assert transport.closed and transport.queries


def test_open_kg_as_a_context_closes_the_kg(
    store: ox.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = record_opened_clients(monkeypatch, store)

    async def use() -> list[str]:
        async with open_kg(SPEC) as opened:
            return await _warsaw(opened.kg)

    assert asyncio.run(use()) == [f"{GEO}Warsaw"]
    assert len(made) == 1 and made[0].closed


def test_kg_with_identity_closes_a_spec_kg_also_after_an_error(
    store: ox.Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    made = record_opened_clients(monkeypatch, store)

    async def fail() -> None:
        async with kg_with_identity(SPEC) as (kg, identity):
            assert identity == "http://kg.test/sparql"
            assert await _warsaw(kg) == [f"{GEO}Warsaw"]
            raise RuntimeError("the task failed")

    with pytest.raises(RuntimeError, match="the task failed"):
        asyncio.run(fail())
    assert len(made) == 1 and made[0].queries and made[0].closed


def test_kg_with_identity_leaves_a_given_kg_to_its_owner(store: ox.Store) -> None:
    transport = RecordingTransport(store)
    given = SparqlRdfKG(SparqlClient(virtuoso("http://kg.test/sparql"), transport=transport))

    async def use() -> str:
        async with kg_with_identity(given) as (kg, identity):
            assert kg is given
            await _warsaw(kg)
        assert not transport.closed  # still the caller's to use
        assert await _warsaw(given) == [f"{GEO}Warsaw"]
        await given.aclose()
        return identity

    assert asyncio.run(use()) == "SparqlRdfKG given by caller"
    assert transport.closed
