"""Who closes a model: the caller that passed it in, or the function that loaded it."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from typing import Protocol, TypeVar


class _Closable(Protocol):
    async def aclose(self) -> None: ...


T = TypeVar("T", bound=_Closable)


@asynccontextmanager
async def given_or_loaded(given: T | None, load: Callable[[], T]) -> AsyncIterator[T]:
    """``given`` as it is (its owner closes it), or ``load()``'s result, closed on exit."""
    if given is not None:
        yield given
        return
    loaded = load()
    try:
        yield loaded
    finally:
        await loaded.aclose()
