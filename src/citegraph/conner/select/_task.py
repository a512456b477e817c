"""``conner select``: CONNER-guided knowledge selection (§5), as an engine task.

For each item, ``r`` candidate knowledge texts are sampled from the same prompt (the paper:
r = 5, top-p 0.9; the demonstrations stay fixed, the sampling seed is ``seed + i``), each is
scored on the intrinsic metrics whose weight in γ is non-zero, and the candidate with the
highest ``Q_know = γ · [fact, rel, coh_para, info]`` (Eq. 9) is kept. One work call covers
all the candidates of a batch of items (generated, then scored, then compared), so the run
resumes, shards and merges item by item like any other. The output is itself a knowledge run
(``conner score`` reads it): per item the chosen knowledge, its candidate ``index``, its
``quality`` and every candidate's ``qualities``; an item none of whose candidates has knowledge
is recorded as failed (its reasons in ``error``) and tried again on resume. A candidate whose
generation failed is left out of the choice.

The values that decide do not depend on the batch: the intrinsic metrics are per item and
paragraph coherence enters Eq. 9 raw (choose γ for its scale).
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Sequence
from contextlib import AbstractAsyncContextManager, asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from citegraph.conner._types import Knowledge, MetricValue
from citegraph.conner.acquire import (
    AcquireResult,
    ConnerGenerateConfig,
    KnowledgeInput,
    KnowledgeTask,
    cached_chat,
    generate_with,
    knowledge_record,
    requests_in_flight,
)
from citegraph.conner.score import ConnerScoreConfig, ScoreModels, load_score_models, score_batch
from citegraph.conner.select._config import ConnerSelectConfig, check_select, scored_metrics
from citegraph.conner.select._selection import select_knowledge
from citegraph.datasets import ConnerSample
from citegraph.models import ChatModel
from citegraph.runs import (
    FAILED,
    Record,
    Runtime,
    blocking,
    given_or_loaded,
    register_task,
    run_task,
)

__all__ = ["SelectModels", "SelectTask", "select_run", "select_run_async"]

#: Per candidate: each item's knowledge (or why it has none), and its metric values.
Candidate = tuple[KnowledgeInput, dict[str, dict[str, MetricValue]]]


@dataclass(frozen=True)
class SelectModels:
    """What a selection run uses: the sampling model, the scoring models and how many
    requests may be in flight."""

    chat: ChatModel
    score: ScoreModels
    in_flight: int


@register_task
class SelectTask(KnowledgeTask[SelectModels]):
    """``conner select``: sample ``r`` candidates per item, score them, keep the best (Eq. 9)."""

    name = "conner.select"
    batch_size = 16
    config: ConnerSelectConfig

    def __init__(
        self,
        config: ConnerSelectConfig,
        generate: ConnerGenerateConfig,
        score: ConnerScoreConfig,
        *,
        data_dir: str | Path | None = None,
        model: ChatModel | None = None,
        score_models: ScoreModels | None = None,
    ) -> None:
        check_select(config, generate, score)
        super().__init__(config, generate, data_dir)
        self.generate = generate
        self.score_given = score
        self.score = score.model_copy(
            update={
                "task": generate.task,
                "split": generate.split,
                "metrics": scored_metrics(config),
            }
        )
        self.rules = self.score.rules()
        self.model = model
        self.score_models = score_models

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[SelectModels]:
        """The caller's models, or the chat model and the scoring models the configs name."""
        return self._opened(runtime)

    @asynccontextmanager
    async def _opened(self, runtime: Runtime) -> AsyncIterator[SelectModels]:
        load_chat = functools.partial(
            cached_chat, self.generate.model, self.generate.base_url, runtime.cache
        )
        load_scoring = functools.partial(
            load_score_models, self.score, self.samples, cache=runtime.cache
        )
        async with (
            given_or_loaded(self.score_models, load_scoring) as scoring,
            given_or_loaded(self.model, load_chat) as chat,
        ):
            yield SelectModels(chat, scoring, requests_in_flight(chat, runtime))

    def run_config(self, models: SelectModels) -> dict[str, Any]:
        """The three configs as given (the score config without knowledge and metrics)."""
        return {
            "task_name": self.name,
            "select": self.config.model_dump(mode="json"),
            "generate": self.generate.model_dump(mode="json"),
            "score": self.score_given.model_dump(mode="json", exclude={"knowledge", "metrics"}),
        }

    def concurrency(self, models: SelectModels, runtime: Runtime) -> int:
        """One batch at a time (``runtime.concurrency`` bounds the requests inside it)."""
        return 1

    async def work(self, batch: Sequence[ConnerSample], models: SelectModels) -> list[Record]:
        """Generate and score every candidate of the batch's items, then choose."""
        candidates = [
            await self._candidate(i, batch, models) for i in range(self.config.candidates)
        ]
        return _choices(batch, self.config, candidates)

    async def _candidate(
        self, i: int, batch: Sequence[ConnerSample], models: SelectModels
    ) -> Candidate:
        sampled = self.generate.model_copy(
            update={"seed": self.generate.seed + i, "demo_seed": self.generate.seed}
        )
        generated = await generate_with(
            sampled, batch, models.chat, pool=self.samples, concurrency=models.in_flight
        )
        inputs: KnowledgeInput = {
            g.id: g.knowledge
            if g.knowledge is not None
            else f"knowledge generation failed: {g.error or 'unknown error'}"
            for g in generated
        }
        records = await score_batch(
            batch, inputs, self.samples, models.score, self.score, self.rules
        )
        values: dict[str, dict[str, MetricValue]] = {}
        for record in records:
            for metric, raw in record["metrics"].items():
                values.setdefault(metric, {})[record["id"]] = MetricValue(**raw)
        return inputs, values


def _choices(
    samples: Sequence[ConnerSample], config: ConnerSelectConfig, candidates: Sequence[Candidate]
) -> list[Record]:
    """One record per item: the chosen candidate, or failed when no candidate has knowledge."""
    records: list[Record] = []
    for sample in samples:
        found = [
            (i, k)
            for i, (per_run, _) in enumerate(candidates)
            if isinstance(k := per_run[sample.id], Knowledge)
        ]
        if not found:
            why = "; ".join(sorted({str(per_run[sample.id]) for per_run, _ in candidates}))
            records.append(
                {"id": sample.id, "status": FAILED, "text": None, "error": f"no candidate: {why}"}
            )
            continue
        scores = [
            {
                m: v
                for m, by_id in candidates[i][1].items()
                if (v := by_id.get(sample.id)) is not None
            }
            for i, _ in found
        ]
        [choice] = select_knowledge(
            [[k for _, k in found]], [scores], config.weights, missing=config.missing
        )
        extra = {
            "candidate": found[choice.index][0],
            "quality": choice.quality,
            "qualities": {found[j][0]: q for j, q in enumerate(choice.qualities)},
            "reason": choice.reason,
        }
        records.append(knowledge_record(choice.knowledge, extra))
    return records


async def select_run_async(
    out: str | Path,
    config: ConnerSelectConfig,
    *,
    generate: ConnerGenerateConfig,
    score: ConnerScoreConfig,
    data_dir: str | Path | None = None,
    model: ChatModel | None = None,
    score_models: ScoreModels | None = None,
    runtime: Runtime | None = None,
) -> AcquireResult:
    """Sample, score and select knowledge into the run ``out`` (see the module docstring).

    Args:
        out: The run directory.
        config: Candidates, γ and the missing-metric rule.
        generate: How candidates are generated (its ``seed`` is the first candidate's and
            the seed of every candidate's demonstrations).
        score: How candidates are scored (``knowledge`` and ``metrics`` are set here).
        data_dir: Where the CONNER test sets are.
        model: A ready chat model instead of building ``generate.model`` (not closed here).
        score_models: Ready scoring models instead of loading those ``score`` names.
        runtime: limit, shard, batch size (items per work call, default 16), concurrency
            (model requests in flight), cache, overwrite, command, progress.

    Raises:
        ConfigError: Greedy decoding with several candidates, all-zero γ, a weighted
            paragraph coherence without a model, or ``out`` holds a different run.
    """
    task = SelectTask(
        config,
        generate,
        score,
        data_dir=data_dir,
        model=model,
        score_models=score_models,
    )
    return AcquireResult.of(await run_task(task, out, runtime))


select_run = blocking(select_run_async)
