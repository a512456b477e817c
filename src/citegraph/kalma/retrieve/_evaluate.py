"""Retrieval accuracy of the KaLMA baseline over a benchmark split (``kalma retrieve``).

Runs :class:`Retriever` on every question and compares the retrieved entity ids with the ids of
the graphs the dataset ships for the question. For the shipped BioKaLMA files those graphs are the
authors' *retrieval output* (both phrasings carry the same graphs; 98 questions have none, some
have 3 or 4 people), not the pair of people each question was generated from, which the authors
scored against (``round1.csv``, unreleased). So on BioKaLMA this measures agreement with the
authors' retrieval, not the paper's 75.9 retrieval accuracy (see
:mod:`citegraph.kalma.retrieve._accuracy` for how the authors counted).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from citegraph.datasets import BioKaLMASample
from citegraph.kalma._rules import KalmaRules, Mode
from citegraph.kalma.retrieve._accuracy import RetrievalAccuracy, retrieval_accuracy
from citegraph.kalma.retrieve._config import RetrievalConfig
from citegraph.kalma.retrieve._retrieve import Retrieval, Retriever
from citegraph.kg import KnowledgeGraph
from citegraph.runs import blocking


async def evaluate_retrieval_async(
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
        mode: ``paper`` or ``reference`` (the authors' counting: recall over 2 per question,
            every question counted, those without graphs included).
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


evaluate_retrieval = blocking(evaluate_retrieval_async)
