"""Where a served model is and how to reach it: one object for every server-backed scorer."""

from __future__ import annotations

from dataclasses import dataclass, fields
from pathlib import Path
from typing import Any

from citegraph.io import SQLiteCache

__all__ = ["ENDPOINT_OPTIONS", "Endpoint"]


@dataclass(frozen=True)
class Endpoint:
    """A model server's address and the client's limits, shared by the server-backed NLI,
    three-way NLI, reranker and LM scorers (:class:`~citegraph.models.ServerNLI`...).

    Attributes:
        base_url: The server's URL (``None``: the provider's default, e.g.
            ``http://localhost:8000/v1`` for vLLM).
        api_key_env: The environment variable holding the API key (``None``: the provider's).
        concurrency: Most requests in flight (``None``: the provider's).
        timeout: Seconds one HTTP attempt may take (``None``: 120).
        total_timeout: Seconds one call may take, every attempt and wait included (``None``:
            no bound).
        max_response_bytes: Most bytes of one answer's body (``None``: 32 MiB).
        max_retries: Retries of 429, 5xx, connection errors and timeouts.
        cache: A response cache, or a path for one; ``None``: no cache.
    """

    base_url: str | None = None
    api_key_env: str | None = None
    concurrency: int | None = None
    timeout: float | None = None
    total_timeout: float | None = None
    max_response_bytes: int | None = None
    max_retries: int = 5
    cache: SQLiteCache | str | Path | None = None

    def options(self) -> dict[str, Any]:
        """Every field, as keyword options (:data:`ENDPOINT_OPTIONS`)."""
        return {f.name: getattr(self, f.name) for f in fields(self)}

    def client_options(self) -> dict[str, Any]:
        """The options of :class:`~citegraph.models.server.ServerClient` (all but the cache)."""
        return {k: v for k, v in self.options().items() if k != "cache"}


#: The keyword options an :class:`Endpoint` gathers.
ENDPOINT_OPTIONS = frozenset(f.name for f in fields(Endpoint))
