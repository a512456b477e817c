"""Sentence embeddings (all-MiniLM-L6-v2 and other encoders)."""

from citegraph.models.embed._embeddings import (
    MINILM_NAME,
    EmbeddingModel,
    HFEmbeddingModel,
    embedding_model,
    locate_minilm,
)

__all__ = [
    "MINILM_NAME",
    "EmbeddingModel",
    "HFEmbeddingModel",
    "embedding_model",
    "locate_minilm",
]
