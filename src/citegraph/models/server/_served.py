"""The base of the server-backed scorers: one model on one server, its items cached and batched."""

from __future__ import annotations

from citegraph.models.server._endpoint import Endpoint
from citegraph.models.server._http import SCORE_PRESETS, ProviderPreset
from citegraph.models.server._items import ServerItems

__all__ = ["ServedModel"]


class ServedModel:
    """A model a server runs, reached at an :class:`Endpoint` (the server-backed NLI, three-way
    NLI, reranker and LM scorers build on it).

    Args:
        model: The model name the server knows.
        provider: The provider (a key of ``presets``).
        endpoint: The server, its client's limits and the response cache (default: the
            provider's URL, no cache).
        batch_size: Most items per request.
        missing_hint: How to start a server that has the route, said when it is missing.
        presets: The provider presets (:data:`SCORE_PRESETS`, or the chat ones).

    Raises:
        ConfigError: Bad options or provider.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str,
        endpoint: Endpoint | None,
        batch_size: int,
        missing_hint: str,
        presets: dict[str, ProviderPreset] = SCORE_PRESETS,
    ) -> None:
        self._items = ServerItems.connect(
            model,
            provider=provider,
            endpoint=endpoint or Endpoint(),
            batch_size=batch_size,
            missing_hint=missing_hint,
            presets=presets,
        )

    @property
    def name(self) -> str:
        """``"<provider>/<model>"``."""
        return self._items.client.name

    async def aclose(self) -> None:
        """Close the connection pool (and a cache opened from a path)."""
        await self._items.aclose()
