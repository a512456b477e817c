"""Per-item results from a model server: the response cache, batches, refusals kept per item.

The server-backed scorers (:mod:`._lm_server`, :mod:`._rerank_server`, :mod:`._nli_server`) send
many small items (a text, a pair). :class:`ServerItems` answers each item from the cache when it
can (the key is the SHA-256 of the canonical JSON of the URL, the model, the request parameters
and the item itself, so an item hits whatever batch it came in), sends the misses in batches of
at most ``batch_size`` items (items of one batch share a group, e.g. a rerank query), and stores
every item's result as JSON. Only results are stored; errors never are.

A batch the server refuses with a 4xx other than 404 / 405 (an input too long for the model, a
bad character...) is retried one item at a time, so that only the offending items come back as
:class:`Refused` (with the server's message) and the others are measured. 404 and 405 mean the
route itself is missing (the server is not running the model with the needed task): that is an
error for the whole call, with a hint saying how to start the server.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citegraph.errors import ClientError, ConfigError, ResponseFormatError
from citegraph.io import SQLiteCache, cache_key, cache_root, snippet
from citegraph.models.server._endpoint import Endpoint
from citegraph.models.server._http import PRESETS, ProviderPreset, ServerClient

__all__ = ["CACHE_NAMESPACE", "Refused", "ServerItems", "json_object", "open_cache"]

#: The namespace of server scores in a response cache file given by path.
CACHE_NAMESPACE = "scores"

#: Builds the JSON body of a batch of items.
BodyFn = Callable[[list[dict[str, Any]]], dict[str, Any]]
#: Turns a response (its JSON object) into one JSON-able result per item of the batch.
ParseFn = Callable[[dict[str, Any], list[dict[str, Any]]], list[Any]]


@dataclass(frozen=True)
class Refused:
    """An item the server refused (a 4xx for that item alone): ``reason`` is its message."""

    reason: str


def open_cache(cache: SQLiteCache | str | Path | None) -> tuple[SQLiteCache, bool]:
    """The cache to use and whether the caller owns it (made here from a path).

    ``None`` gives a disabled cache; a path opens one in namespace :data:`CACHE_NAMESPACE`.
    """
    if isinstance(cache, SQLiteCache):
        return cache, False
    if cache is None:
        return SQLiteCache(None), False
    return SQLiteCache(cache, namespace=CACHE_NAMESPACE), True


def json_object(content: bytes, status: int, where: str) -> dict[str, Any]:
    """The JSON object of a 2xx body (a JSON array is wrapped as ``{"results": [...]}``).

    Raises:
        ResponseFormatError: The body is not JSON, or neither an object nor an array.
    """
    try:
        data = json.loads(content)
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise ResponseFormatError(
            f"{where} answered HTTP {status} with a body that is not JSON ({exc}); "
            f"body starts {snippet(content)!r}",
            status=status,
            url=where,
        ) from exc
    if isinstance(data, list):
        return {"results": data}
    if not isinstance(data, dict):
        raise ResponseFormatError(
            f"{where} answered HTTP {status} with a JSON {type(data).__name__}, not an object",
            status=status,
            url=where,
        )
    return data


class ServerItems:
    """Cached, batched per-item requests to one route of one model server.

    Args:
        client: The server connection (limits and retries).
        cache: Where item results are stored (``SQLiteCache(None)`` disables caching).
        batch_size: Most items per request.
        missing_hint: Added to the error when the route is missing (HTTP 404 / 405): how to
            start a server that has it.
        owns_cache: Close ``cache`` in :meth:`aclose`.

    Attributes:
        hits: Items answered from the cache.
        misses: Items sent to the server.
    """

    def __init__(
        self,
        client: ServerClient,
        cache: SQLiteCache,
        *,
        batch_size: int,
        missing_hint: str,
        owns_cache: bool = False,
    ) -> None:
        self.client = client
        self.cache = cache
        self.batch_size = batch_size
        self.missing_hint = missing_hint
        self.owns_cache = owns_cache
        self.hits = 0
        self.misses = 0

    @classmethod
    def connect(
        cls,
        model: str,
        *,
        provider: str,
        endpoint: Endpoint,
        batch_size: int,
        missing_hint: str,
        presets: dict[str, ProviderPreset] = PRESETS,
    ) -> ServerItems:
        """The items of ``provider``/``model`` at ``endpoint``: a :class:`ServerClient` with its
        options and its cache (opened here from a path, and then closed with the items).

        Raises:
            ConfigError: ``batch_size`` below 1, or a bad provider or option.
        """
        if batch_size < 1:
            raise ConfigError(f"batch_size must be >= 1, got {batch_size}")
        client = ServerClient(
            model, provider=provider, presets=presets, **endpoint.client_options()
        )
        store, owns = open_cache(endpoint.cache)
        return cls(client, store, batch_size=batch_size, missing_hint=missing_hint, owns_cache=owns)

    def where(self, url: str) -> str:
        """How errors name the endpoint: the URL and the model spec."""
        return f"{url} ({self.client.name})"

    def key(self, url: str, params: dict[str, Any], item: dict[str, Any]) -> str:
        """The cache key of one item."""
        identity = {"url": url, "model": self.client.model, "params": params, "item": item}
        return cache_key(identity)

    async def results(
        self,
        path: str,
        items: Sequence[dict[str, Any]],
        *,
        params: dict[str, Any],
        body: BodyFn,
        parse: ParseFn,
        group: Callable[[dict[str, Any]], Hashable] | None = None,
    ) -> list[Any]:
        """One result (or :class:`Refused`) per item, in order.

        Args:
            path: The route (``/completions``) or a full URL.
            items: The items, each a JSON object (its part of the request).
            params: The request's other parameters (part of every item's cache key).
            body: Builds a batch's body from its items.
            parse: Turns a response into one result per item of the batch.
            group: Items with different groups never share a batch.

        Raises:
            ClientError: The route is missing (404 / 405).
            RateLimited, ServerError, EndpointUnavailable: As :meth:`ServerClient.post`.
            ResponseFormatError: A response ``parse`` cannot read.
        """
        url = self.client.url(path)
        keys = [self.key(url, params, item) for item in items]
        out: list[Any] = [None] * len(items)
        todo: dict[Hashable, list[int]] = {}
        for i, key in enumerate(keys):
            stored = self.cache.get(key)
            if stored is not None:
                out[i] = stored
                self.hits += 1
            else:
                todo.setdefault(group(items[i]) if group else None, []).append(i)
        batches = [
            members[start : start + self.batch_size]
            for members in todo.values()
            for start in range(0, len(members), self.batch_size)
        ]
        self.misses += sum(len(b) for b in batches)

        async def run(batch: list[int]) -> None:
            results = await self._batch(url, [items[i] for i in batch], body, parse)
            for i, result in zip(batch, results, strict=True):
                out[i] = result
                if not isinstance(result, Refused):
                    self.cache.set(keys[i], result)

        await asyncio.gather(*(run(batch) for batch in batches))
        return out

    async def _batch(
        self, url: str, batch: list[dict[str, Any]], body: BodyFn, parse: ParseFn
    ) -> list[Any]:
        where = self.where(url)
        try:
            content, status, _ = await self.client.post(url, body(batch), where=where)
        except ClientError as exc:
            if exc.status in (404, 405):
                raise ClientError(
                    f"{exc}; the server does not serve this route for {self.client.model!r}: "
                    f"{self.missing_hint}",
                    status=exc.status,
                    url=exc.url,
                ) from exc
            if len(batch) == 1:
                return [Refused(str(exc))]
            # find the item(s) the server refuses; the others are measured
            parts = await asyncio.gather(*(self._batch(url, [i], body, parse) for i in batch))
            return [result for part in parts for result in part]
        results = parse(json_object(content, status, where), batch)
        if len(results) != len(batch):
            raise ResponseFormatError(
                f"{where} answered {len(results)} result(s) for {len(batch)} input(s)",
                status=status,
                url=url,
            )
        return results

    async def aclose(self) -> None:
        """Close the connection pool (and the cache when owned)."""
        await self.client.aclose()
        if self.owns_cache:
            self.cache.close()


RESPONSE_CACHE_FILE = "responses.sqlite"


def default_response_cache() -> Path:
    """The shared response cache of runs and builds: ``$CITEGRAPH_CACHE/responses.sqlite``."""
    return cache_root() / RESPONSE_CACHE_FILE
