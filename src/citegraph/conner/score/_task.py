"""``conner score``: the six perspectives over one task's knowledge, as an engine task.

Input: the knowledge of each test item (``gold``, a knowledge run directory or a JSONL file, see
:func:`~citegraph.conner.acquire.read_knowledge`). Output, a run directory: ``run.json``
(configuration, input hashes, versions), ``samples.jsonl`` (per item: the query, the knowledge text
and its source, each metric's :class:`MetricValue`, factuality's with each sentence's verdict and
evidence, and, with an answer model, the answer) and ``metrics.json``
(per metric: mean, how many were unmeasured and why, the models; factuality and validity as the
paper's three-way label shares; and ``notes`` on every stand-in model).

Items are scored in batches (default 16; each LM, NLI and embedding call takes the whole batch)
and each batch's records are written at once, so an interrupted run resumes where it stopped.
An item whose answer-model call failed is recorded as failed and tried again on resume.
Nothing an item's record holds depends on the other items of its batch or shard: helpfulness
draws its ``u`` negatives from the knowledge of *all* the task's items (seeded per item), answer
demonstrations come from all items, and paragraph coherence is recorded raw and min-max
normalised over the whole run in ``metrics.json``. So ``limit``, batching and ``--shard`` +
``runs merge`` give the same values as one run over everything.
"""

from __future__ import annotations

import functools
import time
from collections.abc import Sequence
from contextlib import AbstractAsyncContextManager
from functools import cached_property
from pathlib import Path
from typing import Any

from citegraph.conner._types import METRICS, ConnerResult, Knowledge, in_item_order
from citegraph.conner.acquire import KnowledgeInput, load_task, read_knowledge
from citegraph.conner.metrics import max_negatives, too_few_negatives
from citegraph.conner.score._config import ConnerScoreConfig, model_notes
from citegraph.conner.score._models import ScoreModels, load_score_models
from citegraph.conner.score._summary import score_summary
from citegraph.conner.score._view import ConnerScorePresenter
from citegraph.conner.score._work import score_batch_async
from citegraph.datasets import ConnerSample
from citegraph.errors import ConfigError
from citegraph.runs import (
    Record,
    Runtime,
    Task,
    TaskMetrics,
    blocking,
    given_or_loaded,
    recorded_config,
    register_task,
    run_task_async,
)

__all__ = ["ConnerScoreResult", "ConnerScoreTask", "score_knowledge", "score_knowledge_async"]


class ConnerScoreResult(ConnerResult):
    """What :func:`score_knowledge` produced."""


@register_task
class ConnerScoreTask(Task[ConnerSample, ScoreModels]):
    """``conner score``: every chosen metric over the knowledge of a task's items."""

    name = "conner.score"
    # coherence_para is no fraction: reference mode keeps the model's raw, unbounded scores
    gate_metrics = TaskMetrics(
        fractions=tuple(m for m in METRICS if m != "coherence_para"),
        others=("coherence_para", "n_samples", "n_failed", "n_knowledge_missing", "seconds"),
    )
    batch_size = 16
    presenter = ConnerScorePresenter
    config: ConnerScoreConfig

    def __init__(
        self,
        config: ConnerScoreConfig,
        *,
        data_dir: str | Path | None = None,
        models: ScoreModels | None = None,
    ) -> None:
        self.config = config
        self.data_dir = data_dir
        self.models = models
        self.rules = config.rules()
        self._started = time.perf_counter()

    @cached_property
    def samples(self) -> list[ConnerSample]:
        """All the task's items (negatives and demonstrations are drawn from all of them)."""
        return load_task(self.config.task, self.config.split, self.data_dir)

    @cached_property
    def inputs(self) -> tuple[KnowledgeInput, str]:
        """Each item's knowledge (or why it has none), and the knowledge input's fingerprint."""
        return read_knowledge(self.config.knowledge, self.samples)

    def items(self) -> list[tuple[str, ConnerSample]]:
        """The task's items (their knowledge is read first, so a bad input fails early: also a
        ``u`` larger than the knowledge allows helpfulness to draw, with the ``u`` it allows).

        Raises:
            ConfigError: helpfulness is asked for and ``u`` exceeds :func:`max_negatives`.
        """
        inputs, _ = self.inputs
        if "helpfulness" in self.config.metrics:
            pool = [k for k in inputs.values() if isinstance(k, Knowledge)]
            most = max_negatives(pool, (k.id for k in pool))
            if self.config.u > most:
                raise ConfigError(too_few_negatives(self.config.u, most, self.config.knowledge))
        return [(s.id, s) for s in self.samples]

    def open(self, runtime: Runtime) -> AbstractAsyncContextManager[ScoreModels]:
        """The caller's models, or those ``config`` names (loaded once, closed at the end)."""
        load = functools.partial(
            load_score_models, self.config, self.samples, runtime.model_options()
        )
        return given_or_loaded(self.models, load)

    def run_config(self, models: ScoreModels) -> dict[str, Any]:
        """The config, the task's name and the names of the models used."""
        return self.config.identity() | {"task_name": self.name, "models": models.names()}

    def run_data(self, models: ScoreModels) -> dict[str, str]:
        """The knowledge input's fingerprint and the evidence corpus's."""
        return {"knowledge": self.inputs[1], **models.data_hashes}

    async def work(self, batch: Sequence[ConnerSample], models: ScoreModels) -> list[Record]:
        """The records of one batch (see :func:`~citegraph.conner.score._work.score_batch`)."""
        inputs, _ = self.inputs
        return await score_batch_async(batch, inputs, self.samples, models, self.config, self.rules)

    @classmethod
    def summarize(cls, records: Sequence[Record], info: dict[str, Any]) -> dict[str, Any]:
        """The score summary, the models and their notes, and the items without knowledge."""
        config = recorded_config(ConnerScoreConfig, info)
        return score_summary(records, config) | {
            "setup": {"models": info["config"].get("models", {}), "notes": model_notes(config)},
            "n_knowledge_missing": sum(1 for r in records if "knowledge_missing" in r),
        }

    def metrics(
        self, records: Sequence[Record], info: dict[str, Any], models: ScoreModels
    ) -> dict[str, Any]:
        """:meth:`summarize` and the seconds the call took (live runs only)."""
        seconds = round(time.perf_counter() - self._started, 1)
        return self.summarize(records, info) | {"seconds": seconds}

    @classmethod
    def order(cls, records: Sequence[Record]) -> Sequence[Record]:
        """Dataset order (``nq:0``, ``nq:1``...)."""
        return in_item_order(records)


async def score_knowledge_async(
    out: str | Path,
    config: ConnerScoreConfig,
    *,
    data_dir: str | Path | None = None,
    models: ScoreModels | None = None,
    runtime: Runtime | None = None,
) -> ConnerScoreResult:
    """Score the knowledge ``config.knowledge`` for ``config.task`` into the run ``out``.

    Args:
        out: The run directory.
        config: What to compute.
        data_dir: Where the CONNER test sets are.
        models: Ready models instead of loading those ``config`` names (not closed here).
        runtime: limit, shard, batch size (default 16 items per model call), cache (of the
            answer model), overwrite, command, progress.

    Raises:
        ConfigError: Bad options (e.g. retrieved evidence without a corpus), or ``out`` holds a
            different run.
        DataError, DataNotFoundError: Bad or missing knowledge or corpus files.
        MissingDependency, ModelError: A model cannot be loaded.
    """
    task = ConnerScoreTask(config, data_dir=data_dir, models=models)
    return ConnerScoreResult.of(await run_task_async(task, out, runtime))


score_knowledge = blocking(score_knowledge_async)
