"""``kalma score --text-quality``: the G-Eval judge on answers made elsewhere, as ``kalma run``.

Which answers are judged is chosen once over the whole answers file (so ``--limit`` and
``--shard`` judge the same answers as the whole run would): all of them without
``text_quality_sample``; with it, a sample of the answers whose question has a KG, seeded
(``random.Random(f"{seed}:text-quality")``, as ``kalma run`` draws it) or, in reference mode,
the first N (``GPT_EVAL.py``). Over your own KG the graphs are retrieved only when an answer is
scored, so the sample is drawn over all answers. The judge sees the question, the answer's KG
context flattened as the default prompt shows it (:func:`flatten_kg`) and the answer.
"""

from __future__ import annotations

import asyncio
import random
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from citegraph.kalma._rules import KalmaRules
from citegraph.kalma.generate import flatten_kg
from citegraph.kalma.score._config import KalmaScoreConfig
from citegraph.kalma.score._item import ScoreItem
from citegraph.kalma.score._text_quality import judge_text_quality_async, reference_subset
from citegraph.kg import Subgraph
from citegraph.models import ChatModel


class JudgeSampling(Protocol):
    """What draws the judged answers: ``kalma score``'s and ``kalma run``'s configs."""

    @property
    def text_quality(self) -> str | None: ...
    @property
    def text_quality_sample(self) -> int | None: ...
    @property
    def seed(self) -> int: ...
    @property
    def rules(self) -> KalmaRules: ...


def judged_ids(
    config: JudgeSampling, ids: Sequence[str], has_graph: Callable[[str], bool] | None
) -> set[str] | None:
    """The answers the judge sees (None: all), chosen over the whole answers file or split
    (``kalma score`` and ``kalma run`` draw them alike).

    Args:
        config: The options (``text_quality_sample``, ``seed``, ``mode``).
        ids: Every answer id, in file order.
        has_graph: Whether an answer's question has a KG; None over your own KG (all count).
    """
    n = config.text_quality_sample
    if not config.text_quality or n is None:
        return None
    flags = [True if has_graph is None else has_graph(i) for i in ids]
    if config.rules.judge_first_n:
        return set(reference_subset(ids, flags, n))
    with_graph = [i for i, keep in zip(ids, flags, strict=True) if keep]
    rng = random.Random(f"{config.seed}:text-quality")
    return set(rng.sample(with_graph, min(n, len(with_graph))))


async def judge_answer(
    question: str,
    graphs: Sequence[Subgraph],
    answer: str,
    judge: ChatModel,
    config: KalmaScoreConfig,
) -> dict[str, Any]:
    """One answer's ``text_quality`` record field (four criteria, the run's mode)."""
    quality = await judge_text_quality_async(
        question,
        flatten_kg(graphs),
        answer,
        judge,
        mode=config.rules,
        replies=config.resolved_judge_replies(config.text_quality),
    )
    return quality.model_dump(mode="json")


async def judge_records(
    scored: Sequence[dict[str, Any]],
    items: Sequence[ScoreItem],
    judge: ChatModel,
    judged: set[str] | None,
    config: KalmaScoreConfig,
) -> None:
    """Add the judge's ``text_quality`` to the records of the judged answers (in place):
    those with an answer and, with a sample, in ``judged``."""
    chosen = [
        (record, item)
        for record, item in zip(scored, items, strict=True)
        if item.answer is not None and (judged is None or item.id in judged)
    ]
    verdicts = await asyncio.gather(
        *(
            judge_answer(item.question, item.graphs, item.answer or "", judge, config)
            for _, item in chosen
        )
    )
    for (record, _), verdict in zip(chosen, verdicts, strict=True):
        record["text_quality"] = verdict
