"""Test helpers for chat models."""

from __future__ import annotations

import asyncio

from citegraph.models import ChatModel, ChatRequest, Generation


def generate_all(model: ChatModel, *requests: ChatRequest) -> list[Generation]:
    """Send the requests concurrently, close the model, return the generations in order."""

    async def go() -> list[Generation]:
        try:
            return list(await asyncio.gather(*(model.generate(r) for r in requests)))
        finally:
            await model.aclose()

    return asyncio.run(go())
