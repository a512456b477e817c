"""An async client for remote SPARQL endpoints (WDQS, QLever, Virtuoso) on httpx2.

One :class:`SparqlClient` sends ``query=`` requests (POST form or GET) with
``Accept: application/sparql-results+json`` and the configured User-Agent, at most
``max_concurrency`` at a time, and

- retries HTTP 429, HTTP 5xx and transport failures (connection errors, timeouts) up to
  ``max_retries`` times, waiting for the server's Retry-After (capped at ``max_retry_wait``) or
  else an exponential backoff with jitter; a 429's Retry-After also holds back the client's
  other requests until it has passed. Retries key off exception types only;
- never retries other 4xx (:class:`~citegraph.errors.ClientError`) or a body that is not
  SPARQL JSON results (:class:`~citegraph.errors.ResponseFormatError`);
- caches results in SQLite (key: SHA-256 of the canonical JSON of endpoint, method and query).

After the last retry a transport failure is raised as :class:`~citegraph.errors.EndpointError`
(``status=None``) whose ``__cause__`` is the httpx2 exception (e.g. ``httpx2.ReadTimeout``).

The client binds to the event loop it is first used in; used from a new loop it opens a new
connection pool. Use one client per loop, and close it (``async with`` or :meth:`aclose`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import httpx2

from citegraph.errors import EndpointError, EndpointUnavailable, RateLimited, ServerError
from citegraph.io import AsyncClosing, RetryHold, SQLiteCache, cache_key, retry_wait
from citegraph.kg._sparql_config import SparqlClientConfig
from citegraph.kg._sparql_response import check_response

__all__ = ["SPARQL_JSON", "SparqlClient"]

SPARQL_JSON = "application/sparql-results+json"

#: Exception types that trigger a retry.
RETRYABLE: tuple[type[Exception], ...] = (RateLimited, ServerError, httpx2.TransportError)

Sleep = Callable[[float], Awaitable[None]]


class SparqlClient(AsyncClosing):
    """Sends SPARQL queries to one endpoint; see the module docstring for the behaviour.

    Args:
        config: Endpoint, User-Agent, limits, retries and cache settings.
        transport: An httpx2 transport to use instead of the network (e.g. ``MockTransport``).
        cache: A cache to use instead of the one ``config.cache_path`` names.
        sleep: Coroutine used to wait between attempts (default :func:`asyncio.sleep`).

    Raises:
        ConfigError: the config requires a contact in the User-Agent and has none.

    Example:
        >>> config = wikidata(contact="me@example.org", cache_path="cache/wdqs.sqlite")
        >>> async with SparqlClient(config) as client:  # doctest: +SKIP
        ...     rows = await client.select("SELECT ?x WHERE { ?x ?p ?o } LIMIT 1")
    """

    def __init__(
        self,
        config: SparqlClientConfig,
        *,
        transport: httpx2.AsyncBaseTransport | None = None,
        cache: SQLiteCache | None = None,
        sleep: Sleep | None = None,
    ) -> None:
        config.check_contact()
        self.config = config
        if cache is None:
            cache = SQLiteCache(config.cache_path, namespace="sparql", max_age=config.cache_max_age)
        self.cache = cache
        self._transport = transport
        self._sleep: Sleep = sleep or asyncio.sleep
        self._loop: asyncio.AbstractEventLoop | None = None
        self._http: httpx2.AsyncClient | None = None
        self._semaphore: asyncio.Semaphore | None = None
        self._hold = RetryHold()  # after a 429, no request of this client starts before it ends
        self.requests_sent = 0
        """HTTP requests sent (attempts, including retries)."""
        self.cache_hits = 0
        """Queries answered from the cache."""

    def _bind(self) -> tuple[httpx2.AsyncClient, asyncio.Semaphore]:
        loop = asyncio.get_running_loop()
        if self._http is None or self._semaphore is None or self._loop is not loop:
            timeout = httpx2.Timeout(self.config.read_timeout, connect=self.config.connect_timeout)
            self._http = httpx2.AsyncClient(
                timeout=timeout,
                transport=self._transport,
                follow_redirects=True,
                headers={"User-Agent": self.config.user_agent, "Accept": SPARQL_JSON},
                limits=httpx2.Limits(max_connections=self.config.max_concurrency),
            )
            self._semaphore = asyncio.Semaphore(self.config.max_concurrency)
            self._loop = loop
        return self._http, self._semaphore

    def request_key(self, query: str) -> str:
        """The cache key of ``query`` on this endpoint with this method."""
        return cache_key(
            {"endpoint": self.config.endpoint, "method": self.config.method, "query": query}
        )

    async def query(self, query: str) -> dict[str, Any]:
        """Run ``query`` and return the SPARQL JSON results (from the cache when present).

        Raises:
            RateLimited, ServerError: still failing after ``max_retries`` retries.
            ClientError: the endpoint refused the request (e.g. a syntax error), not retried.
            ResponseFormatError: the body is not SPARQL JSON results, not retried.
            EndpointError: connection failures or timeouts after ``max_retries`` retries.
        """
        key = self.request_key(query)
        cached = self.cache.get(key)
        if cached is not None:
            self.cache_hits += 1
            return cached  # type: ignore[no-any-return]
        result = await self._with_retries(query)
        self.cache.set(key, result)
        return result

    async def select(self, query: str) -> list[dict[str, dict[str, str]]]:
        """Run a SELECT query and return its bindings (variable -> SPARQL JSON term)."""
        data = await self.query(query)
        if "results" not in data:
            raise EndpointError(f"expected SELECT results, got {sorted(data)}", url=self.url)
        return data["results"]["bindings"]  # type: ignore[no-any-return]

    async def ask(self, query: str) -> bool:
        """Run an ASK query and return its answer."""
        data = await self.query(query)
        if "boolean" not in data:
            raise EndpointError(f"expected an ASK result, got {sorted(data)}", url=self.url)
        return bool(data["boolean"])

    @property
    def url(self) -> str:
        """The endpoint URL."""
        return self.config.endpoint

    def retry_wait(self, exc: Exception, retry: int) -> float:
        """Seconds to wait before retry number ``retry`` (0-based) after ``exc``."""
        return retry_wait(
            getattr(exc, "retry_after", None),
            retry,
            base=self.config.backoff_base,
            cap=self.config.max_retry_wait,
        )

    async def _with_retries(self, query: str) -> dict[str, Any]:
        retry = 0
        while True:
            try:
                return await self._send_once(query)
            except RETRYABLE as exc:
                if retry >= self.config.max_retries:
                    if isinstance(exc, httpx2.TransportError):
                        raise EndpointUnavailable(
                            f"{self.url}: {type(exc).__name__} after {retry + 1} attempt(s): "
                            f"{exc or 'no detail'}",
                            url=self.url,
                        ) from exc
                    raise
                wait = self.retry_wait(exc, retry)
                retry += 1
                if isinstance(exc, RateLimited):
                    # Every request of this client (this one too) waits in _send_once.
                    self._hold.block(wait)
                else:
                    await self._sleep(wait)

    async def _send_once(self, query: str) -> dict[str, Any]:
        http, semaphore = self._bind()
        async with semaphore:
            hold = self._hold.remaining()
            if hold > 0:
                await self._sleep(hold)
            self.requests_sent += 1
            if self.config.method == "GET":  # keep parameters already in the endpoint URL
                url = httpx2.URL(self.url).copy_merge_params({"query": query})
                response = await http.get(url)
            else:
                response = await http.post(self.url, data={"query": query})
        return check_response(response.status_code, response.headers, response.content, self.url)

    async def aclose(self) -> None:
        """Close the connection pool and the cache."""
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        self.cache.close()

    def __repr__(self) -> str:
        return f"SparqlClient({self.url!r}, max_concurrency={self.config.max_concurrency})"
