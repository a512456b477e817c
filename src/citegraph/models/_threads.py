"""Running a model's blocking work off the event loop (shared by the local backends)."""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from typing import TypeVar

__all__ = ["in_worker_thread"]

_In = TypeVar("_In")
_Out = TypeVar("_Out")


async def in_worker_thread(
    blocking: Callable[[list[_In]], list[_Out]], items: Sequence[_In]
) -> list[_Out]:
    """``blocking(items)`` in a worker thread, so the event loop keeps serving other requests
    while a model runs; no thread for no items."""
    items = list(items)
    if not items:
        return []
    return await asyncio.to_thread(blocking, items)
