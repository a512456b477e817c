"""Cross-encoder rerankers served by vLLM or text-embeddings-inference (TEI).

Pairs are grouped by query; each group (at most ``batch_size`` documents) is one request:

- ``vllm/<model>``: ``POST <base_url>/rerank`` (``/v1/rerank``) with ``{"model", "query",
  "documents", "top_n"}``; the answer's ``results[i] = {"index", "relevance_score"}`` (sorted by
  score; ``index`` gives the document);
- ``tei/<model>``: ``POST <server root>/rerank`` with ``{"query", "texts", "raw_scores": false}``;
  the answer is a JSON array of ``{"index", "score"}``.

Both servers apply the model's activation (sigmoid for a single-logit cross-encoder), so the
scores are those of :class:`~citegraph.models.CrossEncoderReranker`'s ``sigmoid`` readout. Both
rerank endpoints take single-logit models only: a 2-class reranker such as CONNER's
``castorini/monobert-large-msmarco`` (``softmax[:, 1]``) is not served this way.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from citegraph.errors import ConfigError, ModelError, ResponseFormatError
from citegraph.models.server import Endpoint, Refused, ServedModel, server_root

__all__ = ["SERVER_RERANK_PROVIDERS", "ServerReranker"]

#: Providers whose rerank endpoint :class:`ServerReranker` speaks.
SERVER_RERANK_PROVIDERS = ("vllm", "tei")

_HINTS = {
    "vllm": "serve a cross-encoder with 'vllm serve <model> --runner pooling' (older vLLM: "
    "--task score), and check --base-url",
    "tei": "serve it with 'text-embeddings-router --model-id <model>', and check --base-url",
}


class ServerReranker(ServedModel):
    """Relevance of ``(query, passage)`` pairs from a served cross-encoder.

    Args:
        model: The model name the server knows.
        provider: ``"vllm"`` or ``"tei"``.
        endpoint: The server (default URL: ``http://localhost:8000/v1`` for vLLM,
            ``http://localhost:8080`` for TEI), its client's limits and the response cache.
        batch_size: Most documents per request.

    Raises:
        ConfigError: Bad options or provider.
    """

    def __init__(
        self,
        model: str,
        *,
        provider: str = "vllm",
        endpoint: Endpoint | None = None,
        batch_size: int = 32,
    ) -> None:
        if provider not in SERVER_RERANK_PROVIDERS:
            raise ConfigError(f"reranking by server needs one of {SERVER_RERANK_PROVIDERS}")
        super().__init__(
            model,
            provider=provider,
            endpoint=endpoint,
            batch_size=batch_size,
            missing_hint=_HINTS[provider],
        )

    @property
    def settings(self) -> dict[str, Any]:
        """What determines the numbers besides the weights, for run records."""
        return {"name": self.name, "endpoint": self._items.client.endpoint, "readout": "server"}

    async def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The relevance of each ``(query, passage)``, in order.

        Raises:
            ModelError: The server refused a pair.
            ClientError: The server has no rerank route (404).
            ResponseFormatError: An answer without one score per document.
        """
        if not pairs:
            return []
        client = self._items.client
        tei = client.provider == "tei"
        url = f"{server_root(client.base_url)}/rerank" if tei else "/rerank"
        params: dict[str, Any] = {"raw_scores": False} if tei else {"model": client.model}
        found = await self._items.results(
            url,
            [{"query": q, "document": d} for q, d in pairs],
            params=params,
            body=lambda batch: self._body(params, batch, tei),
            parse=lambda data, batch: self._parse(data, batch, tei, url),
            group=lambda item: item["query"],
        )
        for i, result in enumerate(found):
            if isinstance(result, Refused):
                raise ModelError(f"{self.name} refused pair {i}: {result.reason}")
        return [float(v) for v in found]

    @staticmethod
    def _body(params: dict[str, Any], batch: list[dict[str, Any]], tei: bool) -> dict[str, Any]:
        documents = [item["document"] for item in batch]
        if tei:
            return {"query": batch[0]["query"], "texts": documents, **params}
        return {**params, "query": batch[0]["query"], "documents": documents, "top_n": len(batch)}

    def _parse(
        self, data: dict[str, Any], batch: list[dict[str, Any]], tei: bool, url: str
    ) -> list[Any]:
        field = "score" if tei else "relevance_score"
        rows = data.get("results")
        scores: dict[int, float] = {}
        for row in rows if isinstance(rows, list) else []:
            if isinstance(row, dict) and isinstance(row.get(field), int | float):
                scores[int(row.get("index", -1))] = float(row[field])
        if sorted(scores) != list(range(len(batch))):
            raise ResponseFormatError(
                f"{self._items.where(self._items.client.url(url))} answered no {field!r} for "
                f"each of the {len(batch)} documents",
                url=url,
            )
        return [scores[i] for i in range(len(batch))]
