"""Closing / AsyncClosing: a ``with`` block gives the object and closes it, errors included."""

from __future__ import annotations

import asyncio

import pytest

from citegraph.io import AsyncClosing, Closing, SQLiteCache
from citegraph.kg import SparqlClient, SparqlClientConfig


class _Pool(Closing):
    def __init__(self) -> None:
        self.closed = 0

    def close(self) -> None:
        self.closed += 1


class _AsyncPool(AsyncClosing):
    def __init__(self) -> None:
        self.closed = 0

    async def aclose(self) -> None:
        self.closed += 1


def test_with_gives_the_object_and_closes_it_once() -> None:
    pool = _Pool()
    with pool as entered:
        assert entered is pool
        assert pool.closed == 0
    assert pool.closed == 1


def test_with_closes_on_an_error_and_does_not_swallow_it() -> None:
    pool = _Pool()
    with pytest.raises(KeyError), pool:
        raise KeyError("boom")
    assert pool.closed == 1


def test_async_with_gives_the_object_and_closes_it_on_an_error() -> None:
    async def main() -> _AsyncPool:
        pool = _AsyncPool()
        async with pool as entered:
            assert entered is pool
        assert pool.closed == 1
        with pytest.raises(ValueError):
            async with pool:
                raise ValueError("boom")
        return pool

    assert asyncio.run(main()).closed == 2


def test_a_subclass_must_say_how_it_closes() -> None:
    with pytest.raises(NotImplementedError), Closing():
        pass


def test_sqlite_cache_closes_its_connection_at_the_end_of_the_block(tmp_path) -> None:
    with SQLiteCache(tmp_path / "c.sqlite") as cache:
        cache.set("k", [1])
        assert cache._conn is not None
    assert cache._conn is None
    assert SQLiteCache(tmp_path / "c.sqlite").get("k") == [1]


def test_sparql_client_closes_its_cache_at_the_end_of_the_block(tmp_path) -> None:
    config = SparqlClientConfig(endpoint="https://example.org/sparql")
    cache = SQLiteCache(tmp_path / "answers.sqlite")
    cache.set("k", [1])
    assert cache._conn is not None

    async def main() -> None:
        async with SparqlClient(config, cache=cache) as client:
            assert isinstance(client, SparqlClient)

    asyncio.run(main())
    assert cache._conn is None
