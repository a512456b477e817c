"""Rerankers: (query, passage) relevance from a cross-encoder or a server."""

from citegraph.models.rerank._reranker import (
    CrossEncoderReranker,
    HFTextScorer,
    reranker_model,
)
from citegraph.models.rerank._server import (
    ServerReranker,
)

__all__ = [
    "CrossEncoderReranker",
    "HFTextScorer",
    "ServerReranker",
    "reranker_model",
]
