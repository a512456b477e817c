"""What every knowledge run shares (generate, retrieve, select): its items (a CONNER test set),
its ``metrics.json`` (:func:`acquired_metrics`), the order of its records, and its result.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

from pydantic import BaseModel

from citegraph.conner._types import ConnerResult, in_item_order
from citegraph.conner.acquire._knowledge_io import TaskChoice, load_task
from citegraph.conner.acquire._view import KnowledgePresenter
from citegraph.datasets import ConnerSample
from citegraph.models import ChatModel, ModelOptions, chat_model
from citegraph.runs import FAILED, Record, RunDir, Task, TaskMetrics

__all__ = [
    "ConnerKnowledgeResult",
    "ConnerKnowledgeTask",
    "acquired_metrics",
    "cached_chat",
    "finish_acquired",
]

ModelsT = TypeVar("ModelsT")


class ConnerKnowledgeResult(ConnerResult):
    """What a generation, retrieval or selection run produced."""


def cached_chat(spec: str, base_url: str | None, options: ModelOptions) -> ChatModel:
    """The chat model ``spec`` names at ``base_url``, placed and reached as ``options`` says
    (behind its response cache, when it has one)."""
    return chat_model(spec, options.serving(base_url))


def acquired_metrics(records: Sequence[Record]) -> dict[str, Any]:
    """A knowledge run's ``metrics.json``: counts, mean words, sources, the first errors."""
    ok = [r for r in records if r.get("status") != FAILED]
    words = [len(r["text"].split()) for r in ok]
    return {
        "n_samples": len(records),
        "n_knowledge": len(ok),
        "n_failed": len(records) - len(ok),
        "n_empty": sum(1 for w in words if w == 0),
        "mean_words": sum(words) / len(words) if words else None,
        "sources": sorted({r["source"] for r in ok}),
        "errors": sorted({str(r.get("error")) for r in records if r.get("status") == FAILED})[:5],
    }


def finish_acquired(
    run: RunDir, chosen: Sequence[ConnerSample], n_resumed: int
) -> ConnerKnowledgeResult:
    """Write ``metrics.json`` of a knowledge run filled by hand (the records of ``chosen``)."""
    wanted = {s.id for s in chosen}
    records = [r for r in run.records if r["id"] in wanted]
    metrics = acquired_metrics(records)
    run.write_metrics(metrics)
    n_failed = metrics["n_failed"]
    return ConnerKnowledgeResult(
        out=run.path,
        metrics=metrics,
        n_samples=len(records),
        n_failed=n_failed,
        n_resumed=n_resumed,
    )


class ConnerKnowledgeTask(Task[ConnerSample, ModelsT]):
    """A task whose items are a CONNER test set and whose records are knowledge (generate,
    retrieve, select): the items, the metrics (:func:`acquired_metrics`), the item order and
    how its runs are shown (:class:`~citegraph.conner.acquire._view.KnowledgePresenter`)."""

    presenter = KnowledgePresenter
    gate_metrics = TaskMetrics(
        others=(
            "n_samples",
            "n_knowledge",
            "n_failed",
            "n_empty",
            "mean_words",
            "sources",
            "errors",
        )
    )

    def __init__(self, config: BaseModel, choice: TaskChoice, data_dir: str | Path | None) -> None:
        self.config = config
        self.choice = choice
        self.data_dir = data_dir

    @cached_property
    def samples(self) -> list[ConnerSample]:
        """Every item of the task (demonstrations, negatives and corpora draw on all of them)."""
        return load_task(self.choice.task, self.choice.split, self.data_dir)

    def items(self) -> list[tuple[str, ConnerSample]]:
        """The task's items by id, in file order."""
        return [(s.id, s) for s in self.samples]

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        """See :func:`acquired_metrics`."""
        return acquired_metrics(records)

    @classmethod
    def order(cls, records: Sequence[Record]) -> Sequence[Record]:
        """Dataset order (``nq:0``, ``nq:1``...)."""
        return in_item_order(records)
