"""Where factuality (and open-ended validity) evidence comes from, per knowledge sentence.

An :class:`EvidenceSource` gives each sentence its evidence passages: fixed passages
(:class:`FixedEvidence`; the gold passage as CONNER builds it: :func:`gold_evidence`), passages a
retriever finds in a corpus (:class:`RetrievedEvidence`, per sentence as the paper does, or once
for the whole knowledge as CONNER's precomputed files), several sources concatenated
(:class:`CombinedEvidence`), or CONNER's own pool (:func:`reference_evidence`).
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Literal, Protocol, runtime_checkable

from citegraph.conner.metrics._sentences import punkt_sentences
from citegraph.errors import ConfigError, DataError

__all__ = [
    "CombinedEvidence",
    "EvidenceSource",
    "FixedEvidence",
    "RetrievedEvidence",
    "Searcher",
    "gold_evidence",
    "reference_evidence",
]


@runtime_checkable
class EvidenceSource(Protocol):
    """Evidence passages for each sentence of a knowledge text."""

    @property
    def name(self) -> str:
        """What the evidence is, recorded with the value (e.g. ``"gold+retrieved"``)."""
        ...

    async def evidence_for(self, knowledge: str, sentences: Sequence[str]) -> list[list[str]]:
        """One list of passages per sentence, in order (at most the source's ``l`` each)."""
        ...


@runtime_checkable
class Searcher(Protocol):
    """A retriever over a passage corpus (e.g. ``conner.DenseRetriever``)."""

    def search(self, queries: Sequence[str], k: int) -> Sequence[Sequence[tuple[int, float]]]:
        """For each query, up to ``k`` ``(passage index, score)`` hits, best first."""
        ...


class FixedEvidence:
    """The same passages for every sentence (e.g. a gold passage, precomputed retrieval).

    Args:
        passages: The evidence passages, in order.
        name: Recorded with the value.
    """

    def __init__(self, passages: Sequence[str], *, name: str = "fixed") -> None:
        self._passages = list(passages)
        self._name = name

    @property
    def name(self) -> str:
        """The name given at construction."""
        return self._name

    async def evidence_for(self, knowledge: str, sentences: Sequence[str]) -> list[list[str]]:
        """A copy of the passages for each sentence."""
        return [list(self._passages) for _ in sentences]


def gold_evidence(passage: str) -> FixedEvidence:
    """The gold passage as evidence, as CONNER's code builds it: its sentences, then itself.

    Args:
        passage: The gold passage (empty gives no evidence).

    Returns:
        A :class:`FixedEvidence` named ``"gold"``.
    """
    passages = [*punkt_sentences(passage), passage.strip()] if passage.strip() else []
    return FixedEvidence(passages, name="gold")


class RetrievedEvidence:
    """Passages retrieved from a corpus by a :class:`Searcher`.

    Args:
        retriever: Any object with ``search(queries, k) -> [[(index, score), ...], ...]``.
        passages: The corpus texts, indexed as the retriever indexes them.
        k: Passages per sentence (the paper's ``l``).
        query: ``"sentence"`` (the paper: one search per sentence) or ``"knowledge"`` (one
            search with the whole knowledge text, the same passages for every sentence, as
            CONNER's precomputed ``_IR_docs`` files).
        name: Recorded with the value; default ``"retrieved(k=<k>)"``.
    """

    def __init__(
        self,
        retriever: Searcher,
        passages: Sequence[str],
        *,
        k: int = 10,
        query: Literal["sentence", "knowledge"] = "sentence",
        name: str | None = None,
    ) -> None:
        if k < 1:
            raise ConfigError(f"k must be >= 1, got {k}")
        if query not in ("sentence", "knowledge"):
            raise ConfigError(f"query must be 'sentence' or 'knowledge', got {query!r}")
        self._retriever = retriever
        self._passages = passages
        self._k = k
        self._query = query
        self._name = name or f"retrieved(k={k})"

    @property
    def name(self) -> str:
        """The name given at construction, or ``"retrieved(k=<k>)"``."""
        return self._name

    async def evidence_for(self, knowledge: str, sentences: Sequence[str]) -> list[list[str]]:
        """Search in a worker thread; map hit indices to passage texts.

        Raises:
            DataError: If the retriever answers for the wrong number of queries or returns an
                index outside the passages (they are not the corpus it indexed).
        """
        if not sentences:
            return []
        queries = list(sentences) if self._query == "sentence" else [knowledge]
        hits = await asyncio.to_thread(self._retriever.search, queries, self._k)
        if len(hits) != len(queries):
            raise DataError(f"{self._name}: {len(hits)} hit lists for {len(queries)} queries")
        texts = [[self._text(int(index)) for index, _ in row[: self._k]] for row in hits]
        if self._query == "knowledge":
            return [list(texts[0]) for _ in sentences]
        return texts

    def _text(self, index: int) -> str:
        if not 0 <= index < len(self._passages):
            raise DataError(
                f"{self._name}: the retriever returned passage {index}, outside the "
                f"{len(self._passages)} passages given (not the corpus it indexed?)"
            )
        return self._passages[index]


class CombinedEvidence:
    """Several sources' passages for each sentence, concatenated in the order given."""

    def __init__(self, *sources: EvidenceSource) -> None:
        if not sources:
            raise ConfigError("CombinedEvidence needs at least one source")
        self._sources = sources

    @property
    def name(self) -> str:
        """The sources' names joined by ``+``."""
        return "+".join(source.name for source in self._sources)

    async def evidence_for(self, knowledge: str, sentences: Sequence[str]) -> list[list[str]]:
        """Per sentence, the first source's passages, then the second's, ..."""
        parts = [await source.evidence_for(knowledge, sentences) for source in self._sources]
        return [[p for part in parts for p in part[i]] for i in range(len(sentences))]


def reference_evidence(
    gold_passage: str, retrieved: Sequence[str], *, retrieved_num: int = 10
) -> CombinedEvidence:
    """CONNER's evidence pool: gold sentences + gold passage + the first ``retrieved_num`` passages.

    Args:
        gold_passage: The sample's gold passage.
        retrieved: Passages retrieved for the knowledge text (CONNER: ColBERTv2, top 10).
        retrieved_num: How many retrieved passages to keep (``--retrieved_num``).
    """
    fixed = FixedEvidence(list(retrieved)[:retrieved_num], name="retrieved")
    return CombinedEvidence(gold_evidence(gold_passage), fixed)
