"""CONNER relevance (Eq. 2): ``S_rel(k, q) = Matching(k, q)``, a query-knowledge matching model.

The paper's Matching model is the BERT ranking model monoBERT (Nogueira et al., 2019); the
authors' ``relevance.py`` loads ``castorini/monobert-large-msmarco`` and takes
``softmax(logits)[:, 1]`` = P(relevant) of the pair (query, knowledge), max length 512. Use
:func:`~citegraph.models.reranker_model` (``"hf:castorini/monobert-large-msmarco"``) for that.

**Embedding fallback** (not Eq. 2): when no cross-encoder can be loaded,
:class:`EmbeddingRelevance` scores a pair by the cosine similarity of the query and knowledge
embeddings (e.g. all-MiniLM-L6-v2), rescaled to [0, 1] as ``(cos + 1) / 2`` so it lives on the
paper's range; the raw cosine is in ``details["cosine"]``. Its ``model`` is
``"embedding-fallback:<embedding model>"``, so no one mistakes it for the paper's metric. It is
not a probability: unrelated texts sit near 0.5, not near 0, and it ranks rather than decides.

**The query** (:func:`metric_query`): NQ: the question. WoW: the dialogue history joined with
``" [SEP] "`` (the whole second column of CONNER's test files, which the authors' relevance and
informativeness scripts use as the query; the paper does not say what q is for WoW), or only the
last utterance with ``wow_query="last"``.

**Empty knowledge**: the reference code skips empty knowledge lines, which shifts every later
score onto the wrong example. citegraph keeps one value per input: ``None`` with a reason.
"""

from __future__ import annotations

import asyncio
import inspect
import math
from collections.abc import Sequence
from typing import Any, Literal, Protocol, Unpack, runtime_checkable

from citegraph.conner._types import DetailValue, MetricValue
from citegraph.datasets import ConnerSample
from citegraph.errors import ConfigError, DataError, ModelError
from citegraph.models import (
    ModelOptions,
    RerankerOptions,
    embedding_model,
    parse_spec,
    reranker_model,
)
from citegraph.runs import blocking

__all__ = [
    "EMBEDDING_FALLBACK_PREFIX",
    "WOW_SEPARATOR",
    "EmbeddingRelevance",
    "RelevanceScorer",
    "metric_query",
    "relevance",
    "relevance_scorer",
]

#: How WoW dialogue turns are joined into one query (as in CONNER's test files).
WOW_SEPARATOR = " [SEP] "
#: The ``model`` prefix of embedding-similarity relevance values.
EMBEDDING_FALLBACK_PREFIX = "embedding-fallback:"

WowQuery = Literal["history", "last"]


@runtime_checkable
class RelevanceScorer(Protocol):
    """Scores ``(query, knowledge)`` pairs in [0, 1]; results in input order, one per pair."""

    @property
    def name(self) -> str:
        """The model behind the scores, recorded in every :class:`MetricValue`."""
        ...

    async def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The relevance of each pair."""
        ...


def metric_query(sample: ConnerSample, *, wow_query: WowQuery = "history") -> str:
    """The query CONNER's relevance and informativeness score knowledge against.

    Args:
        sample: The test item.
        wow_query: WoW only: ``"history"`` (the turns joined with ``" [SEP] "``, as the
            reference code) or ``"last"`` (the partner's last utterance, ``sample.query``).

    Returns:
        NQ: the question. WoW: see ``wow_query`` (the query itself when there is no history).
        The loader strips each turn, so the 13 WoW test rows whose file has a double space after
        a ``[SEP]`` come back with a single one.
    """
    if wow_query not in ("history", "last"):
        raise ConfigError(f"wow_query must be 'history' or 'last', got {wow_query!r}")
    if sample.task == "wow" and wow_query == "history" and sample.history:
        return WOW_SEPARATOR.join(sample.history)
    return sample.query


class EmbeddingRelevance:
    """Relevance fallback: ``(cos(e(query), e(knowledge)) + 1) / 2`` (not CONNER's Eq. 2).

    Args:
        embedder: An embedding model with ``name`` and ``encode(texts) -> list[list[float]]``
            (sync, run in a worker thread, or async), e.g. ``embedding_model("minilm")``.

    Attributes:
        name: ``"embedding-fallback:<embedder name>"``.
    """

    def __init__(self, embedder: Any) -> None:
        self._embedder = embedder
        self.name = f"{EMBEDDING_FALLBACK_PREFIX}{embedder.name}"

    @property
    def placement(self) -> Any:
        """Where the embedding model runs (None when it does not say)."""
        return getattr(self._embedder, "placement", None)

    async def cosines(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """The cosine similarity of each pair's two embeddings (each text encoded once)."""
        texts = list(dict.fromkeys(t for pair in pairs for t in pair))
        if not texts:
            return []
        vectors = await self._encode(texts)
        if len(vectors) != len(texts):
            raise ModelError(f"{self.name}: {len(vectors)} embeddings for {len(texts)} texts")
        by_text = dict(zip(texts, vectors, strict=True))
        return [_cosine(by_text[q], by_text[k]) for q, k in pairs]

    async def score(self, pairs: Sequence[tuple[str, str]]) -> list[float]:
        """``(cos + 1) / 2`` of each pair, in [0, 1]."""
        return [(c + 1.0) / 2.0 for c in await self.cosines(pairs)]

    async def _encode(self, texts: list[str]) -> list[list[float]]:
        encode = self._embedder.encode
        if inspect.iscoroutinefunction(encode):
            result = await encode(texts)
        else:
            result = await asyncio.to_thread(encode, texts)
        return [list(map(float, v)) for v in result]


def _cosine(a: Sequence[float], b: Sequence[float]) -> float:
    if len(a) != len(b):
        raise ModelError(f"embeddings of different sizes: {len(a)} and {len(b)}")
    dot = math.fsum(x * y for x, y in zip(a, b, strict=True))
    norm = math.sqrt(math.fsum(x * x for x in a)) * math.sqrt(math.fsum(y * y for y in b))
    if norm == 0.0:
        raise ModelError("a zero embedding vector has no cosine similarity")
    return max(-1.0, min(1.0, dot / norm))


def relevance_scorer(
    spec: str, options: ModelOptions | None = None, **backend: Unpack[RerankerOptions]
) -> RelevanceScorer:
    """Build a relevance scorer from a spec.

    Args:
        spec: ``"hf/<path or hub id>"`` (a cross-encoder, Eq. 2), ``"vllm/<model>"`` or
            ``"tei/<model>"`` (a served cross-encoder), or ``"embedding/<embedding spec>"`` (the
            fallback, e.g. ``"embedding/minilm"``); the ``relevance`` role of
            :data:`~citegraph.models.ROLES`.
        options: Where a local model runs and how a server is reached.
        **backend: Options of :func:`~citegraph.models.reranker_model` (``batch_size``,
            ``device``, ``dtype``, ``max_length``, ``label_index``; ``hf:`` only, but for
            ``device`` and ``dtype``, which place the embedding fallback's model too).

    Raises:
        ConfigError: An unknown spec, or options given to the embedding fallback.
        MissingDependency, ModelError: The model cannot be loaded.
    """
    parsed = parse_spec("relevance", spec)
    if parsed.provider != "embedding" or parsed.inner is None or parsed.inner.role != "embedding":
        return reranker_model(spec.strip(), options, **backend)
    others = sorted(set(backend) - {"device", "dtype"})
    if others:
        raise ConfigError(f"options {others} do not apply to {spec!r}")
    if options is not None and options.base_url is not None:
        raise ConfigError(f"a base URL applies to a served model (vllm/<model>...), not {spec!r}")
    embedder = embedding_model(
        parsed.inner.canonical, options, device=backend.get("device"), dtype=backend.get("dtype")
    )
    return EmbeddingRelevance(embedder)


async def relevance_async(
    queries: Sequence[str], knowledge: Sequence[str], scorer: RelevanceScorer
) -> list[MetricValue]:
    """CONNER relevance (Eq. 2) of each knowledge text for its query.

    Args:
        queries: One query per knowledge text (see :func:`metric_query`).
        knowledge: The knowledge texts.
        scorer: A cross-encoder (:class:`~citegraph.models.CrossEncoderReranker`) or the
            :class:`EmbeddingRelevance` fallback.

    Returns:
        One :class:`MetricValue` per text, in order: the score, or ``None`` for an empty query or
        knowledge (with the reason). ``model`` is ``scorer.name``; the fallback also records
        ``details["cosine"]``.

    Raises:
        DataError: ``queries`` and ``knowledge`` differ in length.
        ModelError: The scorer returned the wrong number of scores.
    """
    if len(queries) != len(knowledge):
        raise DataError(
            f"{len(queries)} queries for {len(knowledge)} knowledge texts", field="queries"
        )
    values: list[MetricValue | None] = [None] * len(queries)
    todo: list[int] = []
    for i, (query, text) in enumerate(zip(queries, knowledge, strict=True)):
        reason = "empty knowledge" if not text.strip() else None
        reason = reason or ("empty query" if not query.strip() else None)
        if reason is None:
            todo.append(i)
        else:
            values[i] = MetricValue(value=None, reason=reason, model=scorer.name)
    pairs = [(queries[i], knowledge[i]) for i in todo]
    cosines: list[float] | None = None
    if not pairs:
        scores: list[float] = []
    elif isinstance(scorer, EmbeddingRelevance):
        cosines = await scorer.cosines(pairs)
        scores = [(c + 1.0) / 2.0 for c in cosines]
    else:
        scores = list(await scorer.score(pairs))
    if len(scores) != len(todo):
        raise ModelError(f"{scorer.name}: {len(scores)} scores for {len(todo)} pairs")
    for n, (i, score) in enumerate(zip(todo, scores, strict=True)):
        if not math.isfinite(score):
            values[i] = MetricValue(value=None, reason="non-finite score", model=scorer.name)
            continue
        details: dict[str, DetailValue] = {} if cosines is None else {"cosine": cosines[n]}
        values[i] = MetricValue(value=float(score), model=scorer.name, details=details)
    return [v for v in values if v is not None]


relevance = blocking(relevance_async)
