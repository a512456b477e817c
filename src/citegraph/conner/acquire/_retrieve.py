"""Retrieval-based knowledge acquisition: a dense retriever over an in-memory passage corpus.

CONNER compares LLM-generated knowledge with retrieved knowledge (paper Appendix A: the passage
with the highest ``sim(q, d)``, cosine similarity of embeddings; the paper's baseline is DPR over
Wikipedia). :class:`DenseRetriever` embeds the passages once with an
:class:`~citegraph.models.EmbeddingModel` and ranks them by cosine similarity to each query
(vectors are re-normalised, so any embedding model works). The matrix is a numpy array when numpy
is installed (it comes with torch), else plain Python lists; both give the same ranking. Ties
are broken by the lower passage index, so results are deterministic.

A corpus file is JSONL (one ``{"id": ..., "text": ...}`` per line) or TSV (``id<TAB>text``,
an optional third column such as DPR's ``title`` is ignored; a first row ``id<TAB>text...`` is a
header). Its fingerprint, recorded in every knowledge source as
``retrieval:<model>:<sha256[:12]>``, is the SHA-256 of the canonical JSON list of
``[id, text]`` pairs, so the same passages give the same fingerprint whatever the file format.
"""

from __future__ import annotations

import hashlib
import heapq
import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from citegraph.conner._types import Knowledge
from citegraph.datasets import NO_PASSAGE, ConnerSample
from citegraph.errors import ConfigError, DataError, DataNotFoundError
from citegraph.io import iter_jsonl, iter_lines, json_text
from citegraph.models import EmbeddingModel

__all__ = [
    "TASK_CORPUS",
    "Corpus",
    "DenseRetriever",
    "corpus_fingerprint",
    "load_corpus",
    "read_corpus",
    "retrieve_knowledge",
    "task_corpus",
]

Backend = Literal["auto", "numpy", "python"]


def corpus_fingerprint(ids: Sequence[str], texts: Sequence[str]) -> str:
    """SHA-256 (hex) of the canonical JSON list of ``[id, text]`` pairs."""
    pairs = [[i, t] for i, t in zip(ids, texts, strict=True)]
    canonical = json_text(pairs, separators=(",", ":"))
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class Corpus:
    """Passages with their ids."""

    ids: tuple[str, ...]
    texts: tuple[str, ...]

    @property
    def sha256(self) -> str:
        """See :func:`corpus_fingerprint`."""
        return corpus_fingerprint(self.ids, self.texts)

    def __len__(self) -> int:
        return len(self.texts)


def read_corpus(path: str | Path) -> Corpus:
    """Read a JSONL (``.jsonl``, ``.json``) or TSV (``.tsv``, ``.txt``) passage corpus.

    Raises:
        DataNotFoundError: The file does not exist.
        ConfigError: Unknown file extension.
        DataError: A row lacks an id or text, or an id repeats (names the file and line).
    """
    path = Path(path)
    if not path.is_file():
        raise DataNotFoundError("corpus file not found", path=path)
    suffix = path.suffix.lower()
    if suffix in (".jsonl", ".json"):
        rows = list(_jsonl_rows(path))
    elif suffix in (".tsv", ".txt"):
        rows = list(_tsv_rows(path))
    else:
        raise ConfigError(f"corpus {path}: expected a .jsonl or .tsv file, got {suffix!r}")
    seen: dict[str, int] = {}
    for lineno, pid, _text in rows:
        if pid in seen:
            raise DataError(
                f"id {pid!r} repeats (first on line {seen[pid]})", path=path, line=lineno
            )
        seen[pid] = lineno
    return Corpus(ids=tuple(r[1] for r in rows), texts=tuple(r[2] for r in rows))


#: The corpus spec meaning "the task's own gold knowledge texts" (offline evidence, not Wikipedia).
TASK_CORPUS = "task"


def task_corpus(samples: Sequence[ConnerSample]) -> Corpus:
    """The distinct gold knowledge texts of ``samples`` as a corpus (ids: the first sample id
    with each text); WoW's ``no_passages_used`` and empty golds are left out."""
    first: dict[str, str] = {}
    for s in samples:
        text = s.gold_knowledge.strip()
        if text and text != NO_PASSAGE:
            first.setdefault(text, s.id)
    return Corpus(ids=tuple(first.values()), texts=tuple(first))


def load_corpus(spec: str, samples: Sequence[ConnerSample]) -> Corpus:
    """``"task"`` (:func:`task_corpus` of ``samples``) or a corpus file (:func:`read_corpus`)."""
    return task_corpus(samples) if spec == TASK_CORPUS else read_corpus(spec)


def _jsonl_rows(path: Path) -> Any:
    for lineno, obj in iter_jsonl(path):
        pid, text = obj.get("id"), obj.get("text")
        if not isinstance(pid, str | int) or isinstance(pid, bool) or str(pid) == "":
            raise DataError("missing id (a string or integer)", path=path, line=lineno, field="id")
        if not isinstance(text, str) or not text.strip():
            raise DataError("missing or empty text", path=path, line=lineno, field="text")
        yield lineno, str(pid), text


def _tsv_rows(path: Path) -> Any:
    for lineno, line in iter_lines(path):
        if not line.strip():
            continue
        parts = line.split("\t")
        if lineno == 1 and [p.strip().lower() for p in parts[:2]] == ["id", "text"]:
            continue
        if len(parts) < 2 or not parts[0].strip():
            raise DataError("expected id<TAB>text", path=path, line=lineno)
        if not parts[1].strip():
            raise DataError("empty text", path=path, line=lineno, field="text")
        yield lineno, parts[0].strip(), parts[1]


def _unit(vector: Sequence[float]) -> list[float]:
    norm = math.sqrt(math.fsum(x * x for x in vector))
    return [x / norm for x in vector] if norm > 0 else [0.0 for _ in vector]


class DenseRetriever:
    """Cosine-similarity search over passages embedded once, in memory.

    Args:
        model: The embedding model (its ``name`` is recorded in knowledge sources).
        passages: The passage texts.
        ids: Passage ids (default ``"0"``, ``"1"``, ...); used in the fingerprint.
        batch_size: Most texts per encoder batch; ``None``: the model's choice (for the
            transformers models, its device's plan: 32 on a CPU).
        backend: ``"numpy"``, ``"python"`` or ``"auto"`` (numpy when installed).

    Raises:
        ConfigError: No passages, ids of the wrong length, or numpy asked for but missing.
    """

    def __init__(
        self,
        model: EmbeddingModel,
        passages: Sequence[str],
        *,
        ids: Sequence[str] | None = None,
        batch_size: int | None = None,
        backend: Backend = "auto",
    ) -> None:
        self.passages = tuple(passages)
        if not self.passages:
            raise ConfigError("a retriever needs at least one passage")
        self.ids = tuple(ids) if ids is not None else tuple(str(i) for i in range(len(passages)))
        if len(self.ids) != len(self.passages):
            raise ConfigError(f"{len(self.ids)} ids for {len(self.passages)} passages")
        self.model = model
        self.batch_size = batch_size
        self.sha256 = corpus_fingerprint(self.ids, self.passages)
        self._np = _numpy(backend)
        vectors = [_unit(v) for v in model.encode(self.passages, batch_size=batch_size)]
        self._matrix: Any = self._np.asarray(vectors, dtype="float32") if self._np else vectors

    @classmethod
    def from_corpus(
        cls,
        model: EmbeddingModel,
        corpus: Corpus,
        *,
        batch_size: int | None = None,
        backend: Backend = "auto",
    ) -> DenseRetriever:
        """A retriever over a :class:`Corpus` (e.g. from :func:`read_corpus`)."""
        return cls(model, corpus.texts, ids=corpus.ids, batch_size=batch_size, backend=backend)

    async def aclose(self) -> None:
        """Release the embedding model, if it holds anything to release."""
        close = getattr(self.model, "aclose", None)
        if close is not None:
            await close()

    @property
    def source(self) -> str:
        """``retrieval:<model name>:<corpus sha256[:12]>``, the source of retrieved knowledge."""
        return f"retrieval:{self.model.name}:{self.sha256[:12]}"

    def search(self, queries: Sequence[str], k: int = 1) -> list[list[tuple[int, float]]]:
        """The ``k`` best passages of each query as ``(passage index, cosine)``, best first.

        Raises:
            ConfigError: ``k`` < 1.
        """
        if k < 1:
            raise ConfigError(f"k must be >= 1, got {k}")
        queries = list(queries)
        if not queries:
            return []
        k = min(k, len(self.passages))
        vectors = [_unit(v) for v in self.model.encode(queries, batch_size=self.batch_size)]
        if self._np is not None:
            return self._search_numpy(vectors, k)
        return [self._search_python(v, k) for v in vectors]

    def _search_numpy(self, vectors: list[list[float]], k: int) -> list[list[tuple[int, float]]]:
        np = self._np
        scores = np.asarray(vectors, dtype="float32") @ self._matrix.T
        out = []
        for row in scores:
            # stable sort on -score keeps the lower index first among ties
            best = np.argsort(-row, kind="stable")[:k]
            out.append([(int(i), float(row[i])) for i in best])
        return out

    def _search_python(self, vector: list[float], k: int) -> list[tuple[int, float]]:
        scored = (
            (math.fsum(a * b for a, b in zip(vector, row, strict=True)), -i)
            for i, row in enumerate(self._matrix)
        )
        return [(-neg, score) for score, neg in heapq.nlargest(k, scored)]


def _numpy(backend: Backend) -> Any:
    if backend not in ("auto", "numpy", "python"):
        raise ConfigError(f"backend must be 'auto', 'numpy' or 'python', got {backend!r}")
    if backend == "python":
        return None
    try:
        import numpy
    except ImportError as exc:
        if backend == "numpy":
            raise ConfigError("backend='numpy' but numpy is not installed") from exc
        return None
    return numpy


def retrieve_knowledge(
    samples: Sequence[ConnerSample],
    retriever: DenseRetriever,
    k: int = 1,
    *,
    query: Literal["query", "history"] = "query",
    separator: str = "\n",
) -> list[Knowledge]:
    """Retrieved knowledge for each sample: its top ``k`` passages joined by ``separator``.

    Args:
        samples: The test items.
        retriever: The retriever; its :attr:`~DenseRetriever.source` is recorded.
        k: Passages per sample.
        query: What is searched: the question / last utterance (``"query"``), or for WoW the
            whole dialogue history joined by ``" [SEP] "`` (``"history"``).
        separator: What joins the passages.

    Raises:
        ConfigError: ``k`` < 1 or an unknown ``query`` mode.
    """
    if query not in ("query", "history"):
        raise ConfigError(f"query must be 'query' or 'history', got {query!r}")
    texts = [
        " [SEP] ".join(s.history) if query == "history" and s.history else s.query for s in samples
    ]
    hits = retriever.search(texts, k)
    return [
        Knowledge(
            id=s.id,
            text=separator.join(retriever.passages[i] for i, _ in row),
            source=retriever.source,
        )
        for s, row in zip(samples, hits, strict=True)
    ]
