"""``citegraph ask``: one question -> retrieval -> attributed answer -> citations checked.

The main job on a single question: spaCy NER on the question, entity lookup in the KG, one-hop
subgraphs re-ranked by exact matches with the question (§3.1-3.2), the Table 13 prompt, the
model's answer parsed into sentences and citations, and each citation checked against the KG the
model was given. A local model reports its progress token by token to ``on_progress``.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from citegraph.kalma.constrain import CitationsMode
from citegraph.kalma.generate import DEFAULT_PROMPT, AttributedAnswer, generate_answer_async
from citegraph.kalma.parse import ParsedAnswer, parse_answer
from citegraph.kalma.retrieve import Retrieval, Retriever
from citegraph.kalma.score import AnswerCitationScores, score_citations
from citegraph.kg import KnowledgeGraph
from citegraph.models import ChatModel, GenerateConfig, ProgressCallback
from citegraph.models.grammar import grammar_mode_of
from citegraph.runs import blocking


class AskResult(BaseModel):
    """An attributed answer to one question, with its evidence and checks."""

    model_config = ConfigDict(frozen=True, extra="forbid", arbitrary_types_allowed=True)

    question: str
    retrieval: Retrieval = Field(description="Mentions, candidates and the graphs chosen.")
    answer: AttributedAnswer
    parsed: ParsedAnswer
    citations: AnswerCitationScores = Field(
        description="Each citation checked against the retrieved graphs (correctness)."
    )
    model: str


async def ask_async(
    question: str,
    kg: KnowledgeGraph,
    model: ChatModel,
    *,
    retriever: Retriever | None = None,
    config: GenerateConfig | None = None,
    prompt_version: str = DEFAULT_PROMPT,
    on_progress: ProgressCallback | None = None,
    citations: CitationsMode = "constrained",
) -> AskResult:
    """Answer ``question`` with citations to facts of ``kg``.

    Args:
        question: The question.
        kg: Any :class:`~citegraph.kg.KnowledgeGraph` (embedded store or SPARQL endpoint).
        model: The answering model.
        retriever: NER + lookup + rerank (default: spaCy, the paper's settings).
        config: Sampling parameters (default: the model's, as ``citegraph ask`` uses them:
            :func:`~citegraph.models.generate_config_for`).
        prompt_version: The prompt template version.
        on_progress: Called after each generated token, for models that report it (local
            transformers models have a ``progress`` attribute); ignored by the others.
        citations: ``"constrained"`` (default, as ``citegraph ask``): citations can name only
            the retrieved triples or [NA] (:mod:`citegraph.kalma.constrain`); ``"free"``: the
            model cites as it likes, as in the paper's experiments.

    Raises:
        ConfigError: ``citations="constrained"`` with a model that cannot constrain its output.
    """
    if citations == "constrained":
        grammar_mode_of(model)  # a model that cannot constrain fails before the retrieval
    retriever = retriever or Retriever()
    retrieval = await retriever(question, kg)
    with _reporting(model, on_progress):
        answer = await generate_answer_async(
            question,
            retrieval.graphs,
            model,
            config=config,
            prompt_version=prompt_version,
            citations=citations,
        )
    parsed = parse_answer(answer.text, retrieval.graphs)
    return AskResult(
        question=question,
        retrieval=retrieval,
        answer=answer,
        parsed=parsed,
        citations=score_citations(parsed, retrieval.graphs, None),
        model=model.name,
    )


ask = blocking(ask_async)


@contextlib.contextmanager
def _reporting(model: ChatModel, callback: ProgressCallback | None) -> Iterator[None]:
    """Set ``model.progress`` to ``callback`` for the block, where the model has one."""
    if callback is None or not hasattr(model, "progress"):
        yield
        return
    reporter: Any = model  # HFChat and kin; the ChatModel protocol has no progress attribute
    before = reporter.progress
    reporter.progress = callback
    try:
        yield
    finally:
        reporter.progress = before
