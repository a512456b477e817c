"""Retrieval accuracy of the KaLMA baseline over a benchmark split (``kalma retrieve``).

Runs :class:`Retriever` on every question and compares the retrieved entity ids with the ids of
the graphs the dataset ships for the question (the paper reports 75.9 retrieval accuracy for its
own retrieval; REFERENCE_NOTES describes how the authors counted).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from citegraph.datasets import BioKaLMASample
from citegraph.kalma._rules import KalmaRules, Mode
from citegraph.kalma.retrieve._accuracy import RetrievalAccuracy, retrieval_accuracy
from citegraph.kalma.retrieve._config import RetrievalConfig
from citegraph.kalma.retrieve._retrieve import Retrieval, Retriever
from citegraph.kg import KnowledgeGraph


async def evaluate_retrieval(
    samples: Sequence[BioKaLMASample],
    kg: KnowledgeGraph,
    config: RetrievalConfig | None = None,
    *,
    mode: Mode | KalmaRules = "paper",
    concurrency: int = 8,
    progress: Callable[[int, int], None] | None = None,
) -> tuple[RetrievalAccuracy, list[Retrieval]]:
    """Retrieve for every sample and score the retrieved ids against the dataset's graphs.

    Args:
        samples: The questions (with their dataset graphs as gold).
        kg: The KG to retrieve from.
        config: Retrieval options (default: the paper's).
        mode: ``paper`` or ``reference`` (the authors' recall denominator of 2 per question).
        concurrency: Questions retrieved at once.
        progress: Optional ``(done, total)`` callback.
    """
    retriever = Retriever(config)
    results = await retriever.retrieve_many(
        [s.question for s in samples], kg, concurrency=concurrency, progress=progress
    )
    gold = [[g.center.id for g in s.graphs] for s in samples]
    report = retrieval_accuracy([r.qids for r in results], gold, mode=mode)
    return report, results
