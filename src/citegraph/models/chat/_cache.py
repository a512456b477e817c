"""A response cache in front of any chat model.

The key is the SHA-256 of the canonical JSON of the endpoint, the model name, the messages, the
full sampling config (seed included) and, when set, the ``response_format``, so an equal request
hits and any change misses. Values are the :class:`Generation` as JSON. Only successful
generations are stored; errors are never cached, and a caller that finds a generation unusable
drops it with :meth:`CachedChatModel.forget`. Concurrent identical requests may both reach the
model (the last answer stored wins); the :class:`~citegraph.io.SQLiteCache` lock keeps
the file consistent.

A reply served from the cache is marked ``cached`` and carries no ``batch_size`` in its ``raw``
extras: it shared no ``generate`` call, so the size of the local model's call that first produced
it would be false (a run's record of it says ``cached: true`` and has no ``batch_size``; its
``latency_s`` stays that first call's).
"""

from __future__ import annotations

import asyncio
import functools
from typing import Any

from pydantic import ValidationError

from citegraph.io import SQLiteCache, cache_key
from citegraph.models.chat._record import BATCH_SIZE
from citegraph.models.chat._types import ChatModel, ChatRequest, GenerateConfig, Generation
from citegraph.models.chat._usage import report_usage

__all__ = ["CachedChatModel", "chat_cache_key", "forget_cached"]


def chat_cache_key(endpoint: str, model: str, request: ChatRequest) -> str:
    """The cache key of ``request`` sent to ``model`` at ``endpoint``.

    ``response_format``, ``grammar`` and ``config.repetition_penalty`` join the key only when
    set, so
    requests without them keep the keys they had before the fields existed.
    """
    config = request.config.model_dump(mode="json")
    if config.get("repetition_penalty") is None:
        config.pop("repetition_penalty", None)
    identity: dict[str, Any] = {
        "endpoint": endpoint,
        "model": model,
        "messages": [m.model_dump(mode="json") for m in request.messages],
        "config": config,
    }
    if request.response_format is not None:
        identity["response_format"] = request.response_format
    if request.grammar is not None:
        identity["grammar"] = request.grammar.digest()
    return cache_key(identity)


class CachedChatModel:
    """Wraps a :class:`~citegraph.models.ChatModel`, answering repeated requests from a cache.

    Args:
        inner: The model that answers cache misses.
        cache: Where generations are stored (``SQLiteCache(None)`` disables caching).
        owns_cache: Close ``cache`` in :meth:`aclose` (set when the cache was made for this
            wrapper).

    Attributes:
        hits: Requests answered from the cache.
        misses: Requests passed to ``inner``.

    Example:
        >>> from citegraph.models.chat._mock import MockChat
        >>> model = CachedChatModel(MockChat(["an answer"]), SQLiteCache(":memory:"))
        >>> request = ChatRequest.of([{"role": "user", "content": "Q?"}])
        >>> import asyncio
        >>> first = asyncio.run(model.generate(request))
        >>> again = asyncio.run(model.generate(request))  # the mock has no second output
        >>> (again.text, again.cached, model.hits, model.misses)
        ('an answer', True, 1, 1)
    """

    def __init__(self, inner: ChatModel, cache: SQLiteCache, *, owns_cache: bool = False) -> None:
        self.inner = inner
        self.cache = cache
        self.owns_cache = owns_cache
        self.name = inner.name
        self.endpoint = inner.endpoint
        #: The wrapped model's sampling defaults (see ``generate_config_for``).
        self.default_config: GenerateConfig | None = getattr(inner, "default_config", None)
        self.hits = 0
        self.misses = 0

    @property
    def concurrency(self) -> int | None:
        """The inner model's request limit (``None`` when it has none): the wrapper is
        transparent to callers that size their work by it."""
        limit = getattr(self.inner, "concurrency", None)
        return int(limit) if limit else None

    @property
    def grammar_mode(self) -> str | None:
        """How the inner model applies a grammar (None: it cannot)."""
        return getattr(self.inner, "grammar_mode", None)

    def request_key(self, request: ChatRequest) -> str:
        """The cache key of ``request`` for this model."""
        return chat_cache_key(self.inner.endpoint, self.inner.name, request)

    def lookup(self, request: ChatRequest) -> Generation | None:
        """The cached generation for ``request`` (``cached=True``, no ``batch_size`` in its
        ``raw``: it shared no call), or ``None``."""
        stored: Any = self.cache.get(self.request_key(request))
        if stored is None:
            return None
        try:
            generation = Generation.model_validate(stored)
        except ValidationError:  # an entry from an incompatible version: a miss, overwritten
            return None
        update: dict[str, Any] = {"cached": True}
        if generation.raw is not None and BATCH_SIZE in generation.raw:
            update["raw"] = {k: v for k, v in generation.raw.items() if k != BATCH_SIZE}
        return generation.model_copy(update=update)

    async def generate(self, request: ChatRequest) -> Generation:
        """The cached generation for ``request``, or the inner model's (then stored).

        Raises:
            Whatever ``inner.generate`` raises on a miss (nothing is stored then).
        """
        hit = self.lookup(request)
        if hit is not None:
            self.hits += 1
            report_usage(self, hit)  # counted apart (cached); a miss is counted by ``inner``
            return hit
        self.misses += 1
        call = asyncio.ensure_future(self.inner.generate(request))
        call.add_done_callback(functools.partial(self._store, self.request_key(request)))
        return await call

    def forget(self, request: ChatRequest) -> None:
        """Drop the stored generation of ``request``, if any: a reply the caller found unusable
        (a constrained JSON reply outside its schema, say) is asked for again next time rather
        than answered from the cache for ever."""
        self.cache.delete(self.request_key(request))

    def _store(self, key: str, call: asyncio.Future[Generation]) -> None:
        """Store a finished call's generation, even when its caller was cancelled the moment
        it finished (a Ctrl-C): a resumed run then finds it."""
        if call.cancelled() or call.exception() is not None:
            return
        stored = call.result().model_dump(mode="json")
        stored["cached"] = False
        self.cache.set(key, stored)

    async def aclose(self) -> None:
        """Close the inner model (and the cache when this wrapper owns it)."""
        await self.inner.aclose()
        if self.owns_cache:
            self.cache.close()

    def __repr__(self) -> str:
        return f"CachedChatModel({self.inner!r}, {self.cache!r})"


def forget_cached(model: object, request: ChatRequest) -> None:
    """Drop ``request``'s stored reply when ``model`` answers through a response cache
    (:meth:`CachedChatModel.forget`); any other model has nothing to forget."""
    if isinstance(model, CachedChatModel):
        model.forget(request)
