"""given_or_loaded: a passed-in model stays open; a model loaded here is closed, even on error."""

from __future__ import annotations

import asyncio

import pytest

from citegraph.runs import given_or_loaded


class Model:
    def __init__(self) -> None:
        self.closed = False

    async def aclose(self) -> None:
        self.closed = True


def test_a_given_model_is_used_and_left_open() -> None:
    given = Model()

    async def use() -> Model:
        async with given_or_loaded(given, Model) as model:
            return model

    assert asyncio.run(use()) is given and not given.closed


def test_a_loaded_model_is_closed_even_when_the_work_fails() -> None:
    seen: list[Model] = []

    async def fail() -> None:
        async with given_or_loaded(None, Model) as model:
            seen.append(model)
            raise RuntimeError("work failed")

    with pytest.raises(RuntimeError, match="work failed"):
        asyncio.run(fail())
    assert len(seen) == 1 and seen[0].closed
